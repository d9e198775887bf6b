/* probe: readiness probe (is the target answering again after a flush?) and version.bind CH TXT. */
#include "config.h"

#include "study/probe.h"

#include "base/sockaddr.h"
#include "base/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_MAX_IDS     64     /* IDs remembered per probe: answers to older tries still count */
#define PROBE_MAX_SENDS   100000 /* a hard bound on the loop, whatever the timeouts */
#define PROBE_MAX_STEP_NS DV_NS_PER_S

size_t dv_probe_build_query(uint8_t *buf, size_t cap, const char *name, uint16_t qtype,
                            uint16_t qclass, bool rd)
{
	ldns_rdf *dn = NULL;
	dv_wire_writer_t w;

	if (ldns_str2rdf_dname(&dn, name) != LDNS_STATUS_OK || dn == NULL)
		return 0;
	dv_wire_writer_init(&w, buf, cap);
	dv_wire_put_query_header(&w, rd);
	dv_wire_put(&w, ldns_rdf_data(dn), ldns_rdf_size(dn));
	dv_wire_put16(&w, qtype);
	dv_wire_put16(&w, qclass);
	ldns_rdf_deep_free(dn);
	return w.ok ? w.len : 0;
}

/* Does message b (blen octets) ask the question of query a, whose question is qlen octets? */
static bool same_question(const uint8_t *a, size_t qlen, const uint8_t *b, size_t blen)
{
	return dv_wire_single_question_len(b, blen) == qlen &&
	       dv_wire_question_equal(a + DV_DNS_HEADER_LEN, qlen, b + DV_DNS_HEADER_LEN, qlen);
}

bool dv_probe_same_question(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t qlen = dv_wire_single_question_len(a, alen);
	return qlen > 0 && same_question(a, qlen, b, blen);
}

size_t dv_probe_parse(const char *text, bool rd, uint8_t *buf, size_t cap, dv_err_t *err)
{
	char name[300], tok[2][32], extra[2];
	ldns_rr_type t = LDNS_RR_TYPE_A;
	ldns_rr_class c = LDNS_RR_CLASS_IN;
	size_t len;
	int n = sscanf(text, "%299s %31s %31s %1s", name, tok[0], tok[1], extra);

	if (n < 1 || n > 3) {
		dv_err_set(err, -EINVAL, "'%s' is not NAME [TYPE] [CLASS]", text);
		return 0;
	}
	/* TYPE and CLASS in either order ("version.bind CH TXT", "x.test A IN"). */
	for (int i = 0; i + 1 < n; i++) {
		ldns_rr_class k = ldns_get_rr_class_by_name(tok[i]);
		ldns_rr_type y = ldns_get_rr_type_by_name(tok[i]);
		if (k != 0)
			c = k;
		else if (y != 0)
			t = y;
		else {
			dv_err_set(err, -EINVAL, "'%s': '%s' is neither a query type nor a class",
			           text, tok[i]);
			return 0;
		}
	}
	len = dv_probe_build_query(buf, cap, name, (uint16_t)t, (uint16_t)c, rd);
	if (len == 0)
		dv_err_set(err, -EINVAL, "'%s': '%s' is not a domain name", text, name);
	return len;
}

static int open_connected(const struct sockaddr *sa, socklen_t sa_len, dv_err_t *err)
{
	char at[DV_SOCKADDR_TEXT_MAX];
	int fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	dv_sockaddr_text(sa, at, sizeof(at));
	if (fd < 0)
		return dv_err_set(err, -errno, "%s: socket: %s", at, strerror(errno));
	if (connect(fd, sa, sa_len) != 0) {
		int rc = -errno;
		close(fd);
		return dv_err_set(err, rc, "%s: connect: %s", at, strerror(-rc));
	}
	return fd;
}

int dv_probe_wait_ms(int ms, bool (*stop)(void))
{
	return stop != NULL && (ms < 0 || ms > DV_PROBE_STOP_CHECK_MS) ? DV_PROBE_STOP_CHECK_MS
	                                                               : ms;
}

uint64_t dv_probe_id_seed(void)
{
	return dv_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ULL;
}

uint16_t dv_probe_next_id(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return (uint16_t)(x >> 24);
}

/*
 * The shared loop: send q (ID rewritten per try), wait for a matching answer.
 * On success copies the answer into ans (cap bytes) and returns its length.
 */
static ssize_t exchange(int fd, uint8_t *q, size_t qlen, uint64_t timeout_ns, uint64_t step_ns,
                        unsigned max_sends, bool (*stop)(void), uint8_t *ans, size_t cap,
                        dv_probe_result_t *res)
{
	uint16_t ids[PROBE_MAX_IDS];
	unsigned n_ids = 0;
	uint64_t seed = dv_probe_id_seed();
	uint64_t start = dv_now_ns(), deadline = start + timeout_ns, next_send = start;
	size_t question = dv_wire_single_question_len(q, qlen);

	res->attempts = 0;
	res->rcode = -1;
	if (question == 0)
		return -EINVAL;
	if (step_ns == 0)
		step_ns = 100 * DV_NS_PER_MS;
	for (unsigned turns = 0; turns < 4 * PROBE_MAX_SENDS; turns++) {
		uint64_t now = dv_now_ns();
		if (now >= deadline)
			break;
		if (stop != NULL && stop())
			return -EINTR;
		if (now >= next_send && res->attempts < max_sends) {
			uint16_t id = dv_probe_next_id(&seed);
			dv_wire_set16(q, id); /* the ID */
			ids[n_ids++ % PROBE_MAX_IDS] = id;
			/* A failed send (ECONNREFUSED from an earlier ICMP) is a try too. */
			(void)send(fd, q, qlen, 0);
			res->attempts++;
			next_send = now + step_ns;
			step_ns = DV_MIN(step_ns * 2, PROBE_MAX_STEP_NS);
			if (res->attempts >= max_sends)
				next_send = deadline;
		}
		uint64_t until = DV_MIN(next_send, deadline);
		int wait_ms = (int)((until - now + DV_NS_PER_MS - 1) / DV_NS_PER_MS);
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, dv_probe_wait_ms(wait_ms > 0 ? wait_ms : 1, stop));
		if (pr < 0 && errno != EINTR)
			return -errno;
		if (pr <= 0)
			continue;
		/* Read everything queued; stop at the first match. */
		for (int k = 0; k < 256; k++) {
			ssize_t n = recv(fd, ans, cap, MSG_DONTWAIT);
			if (n < 0) {
				if (errno == ECONNREFUSED) {
					/* Nobody listens yet (a restart): wait for the next try. */
					continue;
				}
				break;
			}
			if (n < DV_DNS_HEADER_LEN || !DV_WIRE_QR(ans))
				continue;
			uint16_t id = DV_WIRE_ID(ans);
			bool known = false;
			for (unsigned j = 0; j < DV_MIN(n_ids, PROBE_MAX_IDS); j++)
				known |= ids[j] == id;
			if (!known || !same_question(q, question, ans, (size_t)n))
				continue;
			res->rcode = DV_WIRE_RCODE(ans);
			res->wait_s = (double)(dv_now_ns() - start) / 1e9;
			return n;
		}
	}
	res->wait_s = (double)(dv_now_ns() - start) / 1e9;
	return -ETIMEDOUT;
}

/* The exchange over UDP (tp NULL) or tp's connection kind. A failure but -ETIMEDOUT is
 * said in err: "ADDR: WHAT: why". */
static ssize_t ask(const struct sockaddr *sa, socklen_t sa_len, const dv_tp_config_t *tp,
                   const char *what, uint8_t *q, size_t qlen, uint64_t timeout_ns, uint64_t step_ns,
                   unsigned max_sends, bool (*stop)(void), uint8_t *ans, size_t cap,
                   dv_probe_result_t *res, dv_err_t *err)
{
	char at[DV_SOCKADDR_TEXT_MAX];
	ssize_t n;
	int fd;

	res->why[0] = '\0';
	res->connections = 0;
	if (tp != NULL) {
		n = dv_probe_stream_exchange(sa, sa_len, tp, q, qlen, timeout_ns, step_ns,
		                             max_sends, stop, ans, cap, res);
	} else {
		fd = open_connected(sa, sa_len, err);
		if (fd < 0)
			return fd;
		n = exchange(fd, q, qlen, timeout_ns, step_ns, max_sends, stop, ans, cap, res);
		close(fd);
	}
	if (n == -EINTR) {
		dv_sockaddr_text(sa, at, sizeof(at));
		dv_err_set(err, (int)n, "%s: %s: interrupted", at, what);
	} else if (n < 0 && n != -ETIMEDOUT) {
		dv_sockaddr_text(sa, at, sizeof(at));
		dv_err_set(err, (int)n, "%s: %s: %s", at, what,
		           res->why[0] != '\0' ? res->why : strerror((int)-n));
	}
	return n;
}

/* " over 3 connections; the last: connection refused" for a connection kind, else "". */
static const char *over_conns(const dv_tp_config_t *tp, const dv_probe_result_t *res, char *buf,
                              size_t cap)
{
	buf[0] = '\0';
	if (tp != NULL)
		snprintf(buf, cap, " over %u connection%s%s%s", res->connections,
		         res->connections == 1 ? "" : "s", res->why[0] ? "; the last: " : "",
		         res->why);
	return buf;
}

int dv_probe_ready(const struct sockaddr *sa, socklen_t sa_len, const dv_tp_config_t *tp,
                   const uint8_t *query, size_t query_len, uint64_t timeout_ns, uint64_t attempt_ns,
                   bool (*stop)(void), dv_probe_result_t *res, dv_err_t *err)
{
	uint8_t q[65535], ans[65535];
	char at[DV_SOCKADDR_TEXT_MAX], conns[256];
	ssize_t n;

	memset(res, 0, sizeof(*res));
	res->rcode = -1;
	dv_sockaddr_text(sa, at, sizeof(at));
	if (query_len > sizeof(q) || dv_wire_single_question_len(query, query_len) == 0)
		return dv_err_set(err, -EINVAL, "%s: readiness probe: not a valid query", at);
	memcpy(q, query, query_len);
	n = ask(sa, sa_len, tp, "readiness probe", q, query_len, timeout_ns, attempt_ns,
	        PROBE_MAX_SENDS, stop, ans, sizeof(ans), res, err);
	if (n == -ETIMEDOUT)
		return dv_err_set(err, -ETIMEDOUT,
		                  "%s: target not ready: no answer to the readiness probe after "
		                  "%.1f s (%u quer%s%s)",
		                  at, res->wait_s, res->attempts, res->attempts == 1 ? "y" : "ies",
		                  over_conns(tp, res, conns, sizeof(conns)));
	return n < 0 ? (int)n : 0;
}

/* TXT rdata (length-prefixed strings) -> printable text joined by spaces. */
static char *txt_text(const uint8_t *d, size_t len)
{
	char *out = malloc(len * 4 + 2), *o = out;
	size_t p = 0;

	if (out == NULL)
		return NULL;
	while (p < len) {
		size_t l = d[p++];
		if (p + l > len)
			l = len - p;
		if (o != out)
			*o++ = ' ';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = d[p + i];
			if (c >= 0x20 && c < 0x7f && c != '\\')
				*o++ = (char)c;
			else
				o += sprintf(o, "\\%03u", c);
		}
		p += l;
	}
	*o = '\0';
	return out;
}

int dv_probe_version(const struct sockaddr *sa, socklen_t sa_len, const dv_tp_config_t *tp,
                     unsigned attempts, uint64_t attempt_ns, char **version, dv_err_t *err)
{
	uint8_t q[512], ans[65535];
	dv_probe_result_t res;
	ldns_pkt *pkt = NULL;
	char at[DV_SOCKADDR_TEXT_MAX];
	ssize_t n;
	size_t qlen;
	int rc = -ENOENT;

	*version = NULL;
	dv_sockaddr_text(sa, at, sizeof(at));
	qlen = dv_probe_build_query(q, sizeof(q), "version.bind.", LDNS_RR_TYPE_TXT,
	                            LDNS_RR_CLASS_CH, false);
	if (qlen == 0)
		return dv_err_set(err, -EINVAL, "version.bind: cannot build the query");
	if (attempts == 0)
		attempts = 1;
	/* Fixed step: the exchange doubles it, so give the whole budget as the total. */
	n = ask(sa, sa_len, tp, "version.bind", q, qlen, attempt_ns * attempts, attempt_ns,
	        attempts, NULL, ans, sizeof(ans), &res, err);
	if (n == -ETIMEDOUT)
		return dv_err_set(err, -ETIMEDOUT, "%s: no answer to version.bind", at);
	if (n < 0)
		return (int)n;
	if (ldns_wire2pkt(&pkt, ans, (size_t)n) != LDNS_STATUS_OK)
		return dv_err_set(err, -EBADMSG, "%s: version.bind: malformed answer", at);
	ldns_rr_list *an = ldns_pkt_answer(pkt);
	for (size_t i = 0; an != NULL && i < ldns_rr_list_rr_count(an); i++) {
		ldns_rr *rr = ldns_rr_list_rr(an, i);
		if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_TXT)
			continue;
		/* Rebuild the raw rdata: each rdf is one character-string. */
		uint8_t raw[65535];
		size_t rl = 0;
		for (size_t j = 0; j < ldns_rr_rd_count(rr); j++) {
			ldns_rdf *f = ldns_rr_rdf(rr, j);
			size_t fl = ldns_rdf_size(f);
			if (rl + fl > sizeof(raw))
				break;
			memcpy(raw + rl, ldns_rdf_data(f), fl);
			rl += fl;
		}
		*version = txt_text(raw, rl);
		rc = *version != NULL ? 0 : -ENOMEM;
		break;
	}
	ldns_pkt_free(pkt);
	if (rc == -ENOENT)
		dv_err_set(err, rc, "%s: version.bind: no TXT answer (rcode %d)", at, res.rcode);
	return rc;
}
