/*
 * probe_stream: the readiness probe and version.bind over the run's connection kind. A
 * study over DoT or DoH names port 853 or 443, which answers no datagram: the probe must
 * ask the way the passes will. One connection at a time, driven by poll(2); the kind's
 * machine (transport.h) frames, does TLS, HTTP/2 or QUIC.
 */
#include "config.h"

#include "study/probe.h"

#include "base/wire.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PATIENCE_MAX_NS (8 * DV_NS_PER_S)
#define STEP_MAX_NS     DV_NS_PER_S
#define OUT_IOV         16
#define READS_PER_TURN  64
#define TURNS_MAX       400000 /* a hard bound on the loop, whatever the timeouts */

/* The one connection and what came on it. */
typedef struct pconn {
	int fd;
	dv_tp_conn_t *tp;
	const dv_tp_desc_t *desc;
	bool connecting; /* a stream's connect() in progress */
	bool sent;       /* the query is submitted */
	bool dead;       /* ended without the answer: reopen after the step */
	bool want_out;   /* the socket took less than the machine had to write */
	uint64_t id;     /* the submit id (kinds that match answers to streams) */
	const uint8_t *q;
	size_t qlen, question;
	uint8_t *ans;
	size_t cap;
	ssize_t got; /* the answer's length once it came */
	char *why;   /* res->why */
	size_t why_cap;
} pconn_t;

static void ended(pconn_t *c, const char *what)
{
	if (!c->dead && c->got == 0)
		snprintf(c->why, c->why_cap, "%s", what);
	c->dead = true;
}

static bool is_answer(const pconn_t *c, const dv_tp_event_t *ev)
{
	if (ev->len < DV_DNS_HEADER_LEN || !DV_WIRE_QR(ev->msg))
		return false;
	if (c->desc->answer_ids ? ev->id != c->id : DV_WIRE_ID(ev->msg) != DV_WIRE_ID(c->q))
		return false;
	return dv_wire_single_question_len(ev->msg, ev->len) == c->question &&
	       dv_wire_question_equal(c->q + DV_DNS_HEADER_LEN, c->question,
	                              ev->msg + DV_DNS_HEADER_LEN, c->question);
}

static int on_event(void *ctx, const dv_tp_event_t *ev)
{
	pconn_t *c = ctx;
	char what[200];

	switch (ev->kind) {
	case DV_TP_EV_ANSWER:
		if (c->got == 0 && c->sent && is_answer(c, ev)) {
			c->got = (ssize_t)DV_MIN(ev->len, c->cap);
			memcpy(c->ans, ev->msg, (size_t)c->got);
		}
		break;
	case DV_TP_EV_HTTP_STATUS:
		snprintf(what, sizeof(what), "HTTP status %d, not a DNS answer", ev->status);
		ended(c, what);
		break;
	case DV_TP_EV_STREAM_ERROR:
	case DV_TP_EV_PROTO_ERROR:
		ended(c, ev->what != NULL ? ev->what : "protocol error");
		break;
	case DV_TP_EV_CLOSED:
		ended(c,
		      ev->goaway ? "the server sent GOAWAY" : "the server closed the connection");
		break;
	case DV_TP_EV_HANDSHAKE:
	case DV_TP_EV_SETTINGS:
		break;
	}
	return 0;
}

/* Write what the machine has; stop at a full socket (want_out). */
static void flush_out(pconn_t *c)
{
	struct iovec iov[OUT_IOV];

	c->want_out = false;
	for (int turns = 0; turns < 64 && !c->dead; turns++) {
		int m = dv_tp_output(c->tp, iov, OUT_IOV), sent = 0;
		if (m <= 0)
			return;
		if (c->desc->sock_type == SOCK_STREAM) {
			struct msghdr h = {.msg_iov = iov, .msg_iovlen = (size_t)m};
			ssize_t r = sendmsg(c->fd, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (r >= 0) {
				dv_tp_consume(c->tp, (size_t)r);
				continue;
			}
		} else {
			while (sent < m && send(c->fd, iov[sent].iov_base, iov[sent].iov_len,
			                        MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
				sent++;
			dv_tp_consume_dgrams(c->tp, (size_t)sent);
			if (sent == m)
				continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			c->want_out = true;
		else
			ended(c, strerror(errno));
		return;
	}
}

/* Once the machine takes queries: the query, with a new ID from seed. */
static void submit(pconn_t *c, uint8_t *q, uint64_t *seed, uint64_t id, unsigned *attempts)
{
	if (c->sent || c->dead || c->connecting || !dv_tp_ready(c->tp))
		return;
	dv_wire_set16(q, dv_probe_next_id(seed));
	c->id = id;
	if (dv_tp_submit(c->tp, q, c->qlen, id) != 0)
		return; /* no room yet (DoH's SETTINGS said 0 streams): the patience ends it */
	c->sent = true;
	(*attempts)++;
}

static void conn_close(pconn_t *c)
{
	if (c->tp != NULL && !c->dead) {
		dv_tp_close(c->tp); /* close_notify, GOAWAY, CONNECTION_CLOSE: best effort */
		flush_out(c);
	}
	dv_tp_conn_free(c->tp);
	c->tp = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* 0 with the connection under way (or already failed: c->dead), or a negative errno
 * that ends the probe (no memory, no sockets). */
static int conn_open(pconn_t *c, const struct sockaddr *sa, socklen_t sa_len, dv_tp_shared_t *sh)
{
	int one = 1;

	c->dead = c->sent = c->connecting = c->want_out = false;
	c->fd = socket(sa->sa_family, c->desc->sock_type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	if (c->desc->sock_type == SOCK_STREAM)
		(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int rc = dv_tp_conn_new(&c->tp, sh, on_event, c);
	if (rc != 0)
		return rc;
	if (connect(c->fd, sa, sa_len) == 0)
		flush_out(c); /* a TLS ClientHello, a QUIC Initial */
	else if (errno == EINPROGRESS)
		c->connecting = true;
	else
		ended(c, strerror(errno));
	return 0;
}

/* The socket is readable: feed the machine. */
static void read_in(pconn_t *c, uint8_t *buf, size_t cap)
{
	for (int k = 0; k < READS_PER_TURN && !c->dead && c->got == 0; k++) {
		ssize_t n = recv(c->fd, buf, cap, MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				ended(c, errno == ECONNREFUSED ? "connection refused"
				                               : strerror(errno));
			return;
		}
		if (n == 0 && c->desc->sock_type == SOCK_STREAM) {
			(void)dv_tp_eof(c->tp);
			ended(c, "the server closed the connection");
			return;
		}
		if (n == 0)
			continue; /* an empty datagram: nothing for QUIC */
		if (dv_tp_input(c->tp, buf, (size_t)n) < 0)
			ended(c, "protocol error");
	}
}

/* A stream's connect() finished: its error, or the machine's first words. */
static void connected(pconn_t *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	c->connecting = false;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err != 0)
		ended(c, err == ECONNREFUSED ? "connection refused" : strerror(err));
	else
		flush_out(c);
}

/* One wait on the connection until `until` (or its machine's own deadline) and what the
 * wait brought. -errno when poll fails. */
static int turn(pconn_t *c, uint64_t until, bool (*stop)(void), uint8_t *buf, size_t cap)
{
	uint64_t now = dv_now_ns(), due = c->desc->timers ? dv_tp_next_deadline(c->tp) : UINT64_MAX;
	uint64_t at = DV_MIN(until, due);
	int wait_ms = at > now ? (int)((at - now + DV_NS_PER_MS - 1) / DV_NS_PER_MS) : 0;
	struct pollfd pfd = {
	    .fd = c->fd,
	    .events = c->connecting ? POLLOUT : (short)(POLLIN | (c->want_out ? POLLOUT : 0))};
	int pr = poll(&pfd, 1, dv_probe_wait_ms(wait_ms, stop));

	if (pr < 0)
		return errno == EINTR ? 0 : -errno;
	if (pr > 0 && c->connecting)
		connected(c);
	else if (pr > 0 && (pfd.revents & (POLLIN | POLLERR | POLLHUP)) != 0)
		read_in(c, buf, cap);
	if (c->desc->timers && !c->dead && dv_tp_next_deadline(c->tp) <= dv_now_ns())
		(void)dv_tp_on_deadline(c->tp, dv_now_ns());
	if (!c->dead && !c->connecting)
		flush_out(c);
	return 0;
}

/* A connection given up after secs: what it was waiting for. */
static void silent(pconn_t *c, double secs)
{
	const char *full = c->sent || c->connecting ? NULL : dv_tp_full_why(c->tp);

	if (c->connecting)
		snprintf(c->why, c->why_cap, "not connected in %.1f s", secs);
	else if (!c->sent && !dv_tp_ready(c->tp))
		snprintf(c->why, c->why_cap, "the %s did not finish in %.1f s",
		         c->desc->setup_what ? c->desc->setup_what : "set-up", secs);
	else if (!c->sent)
		snprintf(c->why, c->why_cap, "no query taken in %.1f s%s%s", secs, full ? ": " : "",
		         full ? full : "");
	else
		snprintf(c->why, c->why_cap, "no answer in %.1f s", secs);
}

ssize_t dv_probe_stream_exchange(const struct sockaddr *sa, socklen_t sa_len,
                                 const dv_tp_config_t *tp, uint8_t *q, size_t qlen,
                                 uint64_t timeout_ns, uint64_t step_ns, unsigned max_sends,
                                 bool (*stop)(void), uint8_t *ans, size_t cap,
                                 dv_probe_result_t *res)
{
	uint8_t rbuf[65536];
	uint64_t seed = dv_probe_id_seed();
	uint64_t start = dv_now_ns(), deadline = start + timeout_ns, next_open = start;
	uint64_t patience = DV_PROBE_STREAM_PATIENCE_NS, give_up = 0, opened = 0;
	pconn_t c = {.fd = -1,
	             .desc = dv_tp_config_desc(tp),
	             .q = q,
	             .qlen = qlen,
	             .question = dv_wire_single_question_len(q, qlen),
	             .ans = ans,
	             .cap = cap,
	             .why = res->why,
	             .why_cap = sizeof(res->why)};
	dv_tp_shared_t *sh = NULL;
	dv_err_t err;
	int rc = 0;

	res->attempts = res->connections = 0;
	res->rcode = -1;
	res->why[0] = '\0';
	if (c.question == 0)
		return -EINVAL;
	rc = dv_tp_shared_new(&sh, tp, &err);
	if (rc != 0) {
		snprintf(res->why, sizeof(res->why), "%s", err.msg);
		return rc;
	}
	step_ns = step_ns ? step_ns : 100 * DV_NS_PER_MS;
	if (max_sends == 1)
		patience = timeout_ns; /* one query to ask: its connection has all the time */
	for (unsigned turns = 0; rc == 0 && c.got == 0 && turns < TURNS_MAX; turns++) {
		uint64_t now = dv_now_ns();
		if (now >= deadline)
			break;
		if (stop != NULL && stop()) {
			rc = -EINTR;
			break;
		}
		if (c.fd >= 0 && (c.dead || now >= give_up)) {
			if (!c.dead)
				silent(&c, (double)(now - opened) / 1e9);
			next_open = c.dead ? now + step_ns : now;
			if (c.dead)
				step_ns = DV_MIN(step_ns * 2, STEP_MAX_NS);
			conn_close(&c);
		}
		if (c.fd < 0) {
			if (res->attempts >= max_sends)
				break;
			if (now < next_open) {
				uint64_t ns = DV_MIN(next_open, deadline) - now;
				if (stop != NULL)
					ns = DV_MIN(ns, DV_PROBE_STOP_CHECK_MS * DV_NS_PER_MS);
				struct timespec ts = {(time_t)(ns / DV_NS_PER_S),
				                      (long)(ns % DV_NS_PER_S)};
				nanosleep(&ts, NULL);
				continue;
			}
			rc = conn_open(&c, sa, sa_len, sh);
			res->connections++;
			opened = now;
			give_up = now + patience;
			patience = DV_MIN(patience * 2, PATIENCE_MAX_NS);
			continue;
		}
		submit(&c, q, &seed, turns + 1, &res->attempts);
		flush_out(&c);
		rc = turn(&c, DV_MIN(deadline, give_up), stop, rbuf, sizeof(rbuf));
	}
	conn_close(&c);
	dv_tp_shared_free(sh);
	res->wait_s = (double)(dv_now_ns() - start) / 1e9;
	if (rc != 0)
		return rc;
	if (c.got == 0)
		return -ETIMEDOUT;
	res->rcode = DV_WIRE_RCODE(ans);
	return c.got;
}
