/* srvstats: runs a server's control tool at a pass's edge and reads the few counters the
 * figures need from its output; one small table per kind says which. */
#include "config.h"

#include "engine/srvstats.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "base/capture.h"
#include "base/util.h"

typedef enum { FIG_QUERIES, FIG_HITS, FIG_MISSES } fig_t;

/* One counter: its key (a prefix when prefix), the figure it adds to. */
typedef struct counter {
	const char *key;
	bool prefix;
	fig_t fig;
} counter_t;

typedef struct kind {
	const char *name, *tool;
	const char *const *tail; /* words after ARGS */
	bool cache;              /* a resolver or packet cache: hits and misses required */
	const char *query_keys;  /* for the "no query counter" message */
	counter_t counters[5];
} kind_t;

static const char *const tail_unbound[] = {"stats_noreset", NULL};
static const char *const tail_knot[] = {"stats", NULL};
static const char *const tail_nsd[] = {"stats_noreset", NULL};
static const char *const tail_rec[] = {"get-all", NULL};
static const char *const tail_pdns[] = {"show", "*", NULL};

static const kind_t kinds[DV_SRVSTATS_KINDS] = {
    [DV_SRVSTATS_UNBOUND] = {"unbound",
                             "unbound-control",
                             tail_unbound,
                             true,
                             "total.num.queries",
                             {{"total.num.queries", false, FIG_QUERIES},
                              {"total.num.cachehits", false, FIG_HITS},
                              {"total.num.cachemiss", false, FIG_MISSES}}},
    [DV_SRVSTATS_KNOT] = {"knot",
                          "knotc",
                          tail_knot,
                          false,
                          "mod-stats.request-protocol[...]: load mod-stats as a global module",
                          {{"mod-stats.request-protocol[", true, FIG_QUERIES}}},
    [DV_SRVSTATS_NSD] = {"nsd",
                         "nsd-control",
                         tail_nsd,
                         false,
                         "num.queries",
                         {{"num.queries", false, FIG_QUERIES}}},
    [DV_SRVSTATS_RECURSOR] = {"recursor",
                              "rec_control",
                              tail_rec,
                              true,
                              "questions",
                              {{"questions", false, FIG_QUERIES},
                               {"packetcache-hits", false, FIG_HITS},
                               {"cache-hits", false, FIG_HITS},
                               {"cache-misses", false, FIG_MISSES}}},
    [DV_SRVSTATS_PDNS] = {"pdns",
                          "pdns_control",
                          tail_pdns,
                          true,
                          "udp-queries, tcp-queries",
                          {{"udp-queries", false, FIG_QUERIES},
                           {"tcp-queries", false, FIG_QUERIES},
                           {"packetcache-hit", false, FIG_HITS},
                           {"packetcache-miss", false, FIG_MISSES}}},
    [DV_SRVSTATS_BIND] = {"bind", "HTTP", NULL, true, "nsstats.Requestv4, Requestv6", {{0}}},
};

const char *dv_srvstats_kind_name(dv_srvstats_kind_t k)
{
	return k < DV_SRVSTATS_KINDS ? kinds[k].name : "?";
}

const char *dv_srvstats_tool(dv_srvstats_kind_t k)
{
	return k < DV_SRVSTATS_KINDS ? kinds[k].tool : "?";
}

void dv_srvstats_cfg_free(dv_srvstats_cfg_t *cfg)
{
	if (cfg == NULL)
		return;
	for (size_t i = 0; i < cfg->n_args; i++)
		free(cfg->args[i]);
	free(cfg->spec);
	memset(cfg, 0, sizeof(*cfg));
}

int dv_srvstats_cfg_parse(const char *spec, dv_srvstats_cfg_t *cfg, char *why, size_t why_len)
{
	size_t nlen = strcspn(spec, ":");
	const char *p;
	int k;

	memset(cfg, 0, sizeof(*cfg));
	for (k = 0; k < DV_SRVSTATS_KINDS; k++)
		if (strlen(kinds[k].name) == nlen && strncmp(spec, kinds[k].name, nlen) == 0)
			break;
	if (k == DV_SRVSTATS_KINDS) {
		snprintf(why, why_len, "'%.*s' is not unbound, knot, nsd, recursor, pdns or bind",
		         (int)nlen, spec);
		return -EINVAL;
	}
	cfg->kind = (dv_srvstats_kind_t)k;
	cfg->spec = strdup(spec);
	if (cfg->spec == NULL) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	for (p = spec[nlen] == ':' ? spec + nlen + 1 : spec + nlen; *p != '\0';) {
		size_t blank = strspn(p, " \t"), len;
		p += blank;
		if ((len = strcspn(p, " \t")) == 0)
			break;
		if (cfg->n_args == DV_SRVSTATS_MAX_ARGS) {
			snprintf(why, why_len, "more than %d words of arguments",
			         DV_SRVSTATS_MAX_ARGS);
			dv_srvstats_cfg_free(cfg);
			return -EINVAL;
		}
		if ((cfg->args[cfg->n_args] = strndup(p, len)) == NULL) {
			snprintf(why, why_len, "out of memory");
			dv_srvstats_cfg_free(cfg);
			return -ENOMEM;
		}
		cfg->n_args++;
		p += len;
	}
	if (cfg->kind == DV_SRVSTATS_BIND && cfg->n_args > 1) {
		snprintf(why, why_len,
		         "bind takes one argument: the statistics channel's ADDRESS:PORT");
		dv_srvstats_cfg_free(cfg);
		return -EINVAL;
	}
	return 0;
}

/* Adds value to the figure of key, when it is one of the kind's counters. */
static void add_counter(const kind_t *kd, const char *key, size_t klen, uint64_t value,
                        dv_srvstats_reading_t *r, unsigned seen[3])
{
	for (size_t i = 0; i < sizeof(kd->counters) / sizeof(kd->counters[0]); i++) {
		const counter_t *c = &kd->counters[i];
		size_t clen;

		if (c->key == NULL)
			break;
		clen = strlen(c->key);
		if (c->prefix ? klen <= clen || strncmp(key, c->key, clen) != 0
		              : klen != clen || strncmp(key, c->key, clen) != 0)
			continue;
		seen[c->fig]++;
		*(c->fig == FIG_QUERIES ? &r->queries
		  : c->fig == FIG_HITS  ? &r->hits
		                        : &r->misses) += value;
	}
}

/* One record "KEY=VALUE", "KEY = VALUE" or "KEY<TAB>VALUE" (VALUE an unsigned integer). */
static void parse_record(const kind_t *kd, const char *rec, size_t len, dv_srvstats_reading_t *r,
                         unsigned seen[3])
{
	char num[32];
	size_t k = 0, v;
	uint64_t value;

	while (k < len && rec[k] != '=' && rec[k] != ' ' && rec[k] != '\t')
		k++;
	if (k == 0 || k == len)
		return;
	for (v = k; v < len && (rec[v] == '=' || rec[v] == ' ' || rec[v] == '\t'); v++)
		;
	while (len > v && (rec[len - 1] == ' ' || rec[len - 1] == '\r' || rec[len - 1] == '\t'))
		len--;
	if (len == v || len - v >= sizeof(num))
		return;
	memcpy(num, rec + v, len - v);
	num[len - v] = '\0';
	if (dv_parse_u64(num, 0, UINT64_MAX, &value) != 0 || strspn(num, "0123456789") != len - v)
		return;
	r->counters++;
	add_counter(kd, rec, k, value, r, seen);
}

static int parse_json(const char *text, dv_srvstats_reading_t *r, char *why, size_t why_len);

int dv_srvstats_parse(dv_srvstats_kind_t k, const char *text, dv_srvstats_reading_t *r, char *why,
                      size_t why_len)
{
	unsigned seen[3] = {0, 0, 0};
	const kind_t *kd;

	memset(r, 0, sizeof(*r));
	if (k >= DV_SRVSTATS_KINDS) {
		snprintf(why, why_len, "unknown kind");
		return -EINVAL;
	}
	if (k == DV_SRVSTATS_BIND)
		return parse_json(text, r, why, why_len);
	kd = &kinds[k];
	/* records end at a newline; pdns_control writes them on one line, comma-separated */
	for (const char *p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n,");
		parse_record(kd, p, len, r, seen);
		p += len;
		if (*p != '\0')
			p++;
	}
	if (seen[FIG_QUERIES] == 0) {
		snprintf(why, why_len, "%s printed no query counter (%s)%s", kd->tool,
		         kd->query_keys, r->counters == 0 ? ": not its statistics output" : "");
		return -EINVAL;
	}
	r->has_cache = kd->cache && seen[FIG_HITS] > 0 && seen[FIG_MISSES] > 0;
	return 0;
}

/* A non-negative integer member of o, added to *sum; 1 when it was there. */
static int add_json(const json_t *o, const char *key, uint64_t *sum)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return 0;
	*sum += (uint64_t)json_integer_value(v);
	return 1;
}

/*
 * BIND's /json/v1/server: queries = nsstats.Requestv4 + Requestv6; cache figures from
 * every view's resolver.cachestats QueryHits and QueryMisses (client queries answered from
 * the cache, or not).
 */
static int parse_json(const char *text, dv_srvstats_reading_t *r, char *why, size_t why_len)
{
	json_t *root = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL), *views, *view;
	const json_t *ns;
	const char *name;
	int q = 0, h = 0, m = 0;

	ns = json_object_get(root, "nsstats");
	if (!json_is_object(ns)) {
		snprintf(why, why_len, "the statistics channel's answer has no nsstats object%s",
		         root == NULL ? " (not JSON)" : "");
		json_decref(root);
		return -EINVAL;
	}
	r->counters = (unsigned)json_object_size(ns);
	q = add_json(ns, "Requestv4", &r->queries) + add_json(ns, "Requestv6", &r->queries);
	views = json_object_get(root, "views");
	json_object_foreach(views, name, view)
	{
		const json_t *cs = json_object_get(json_object_get(view, "resolver"), "cachestats");
		h += add_json(cs, "QueryHits", &r->hits);
		m += add_json(cs, "QueryMisses", &r->misses);
	}
	json_decref(root);
	/* BIND leaves out counters that are zero: a missing one counts 0 */
	(void)q;
	r->has_cache = h > 0 || m > 0;
	return 0;
}

/* The poll-bounded wait for fd to be ready for events; -ETIMEDOUT past deadline_ns. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = dv_now_ns();
		struct pollfd p = {.fd = fd, .events = events};
		int n;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)((deadline_ns - now) / DV_NS_PER_MS + 1));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* "ADDRESS:PORT" or "[V6]:PORT" (numeric) to a socket address. */
static int parse_addr(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(text, ':');
	struct addrinfo hints, *ai = NULL;
	size_t hl;

	if (colon == NULL || colon == text)
		return -EINVAL;
	hl = (size_t)(colon - text);
	if (text[0] == '[' && hl >= 2 && text[hl - 1] == ']')
		text++, hl -= 2;
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || ai == NULL)
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* Send the GET and read the whole answer (HTTP/1.0: the server closes) into buf. */
static int http_exchange(int fd, char *buf, size_t cap, size_t *got, uint64_t deadline)
{
	static const char req[] =
	    "GET /json/v1/server HTTP/1.0\r\nAccept: application/json\r\n\r\n";
	int rc;

	if ((rc = wait_fd(fd, POLLOUT, deadline)) != 0)
		return rc;
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof(req) - 1))
		return -errno ? -errno : -EIO;
	*got = 0;
	for (;;) {
		ssize_t n;
		if ((rc = wait_fd(fd, POLLIN, deadline)) != 0)
			return rc;
		n = recv(fd, buf + *got, cap - *got, 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		*got += (size_t)n;
		if (*got == cap)
			return -EFBIG;
	}
	buf[*got] = '\0';
	return 0;
}

/* BIND: GET /json/v1/server from the statistics channel; the body into *body (owned). */
static int http_get(const dv_srvstats_cfg_t *cfg, char **body, char *why, size_t why_len)
{
	const char *where = cfg->n_args ? cfg->args[0] : "127.0.0.1:8053";
	uint64_t deadline = dv_now_ns() + (uint64_t)DV_SRVSTATS_TIMEOUT_MS * DV_NS_PER_MS;
	struct sockaddr_storage ss;
	socklen_t len;
	size_t got = 0;
	char *buf, *b;
	int fd, rc;

	if (parse_addr(where, &ss, &len) != 0) {
		snprintf(why, why_len, "bind: '%s' is not ADDRESS:PORT", where);
		return -EINVAL;
	}
	if ((buf = malloc(DV_SRVSTATS_MAX_OUT + 1)) == NULL) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	rc = fd < 0 ? -errno : 0;
	if (rc == 0 && connect(fd, (struct sockaddr *)&ss, len) != 0 && errno != EINPROGRESS)
		rc = -errno;
	if (rc == 0 && (rc = wait_fd(fd, POLLOUT, deadline)) == 0) {
		int e = 0;
		socklen_t el = sizeof(e);
		(void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
		rc = e ? -e : http_exchange(fd, buf, DV_SRVSTATS_MAX_OUT, &got, deadline);
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0 && (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0))
		rc = -EPROTO;
	if (rc != 0 || (b = strstr(buf, "\r\n\r\n")) == NULL) {
		snprintf(why, why_len, "bind: the statistics channel at %s: %s", where,
		         rc == -EPROTO      ? "answered without HTTP 200"
		         : rc == -EFBIG     ? "answered more than 4 MiB"
		         : rc == 0          ? "answered no HTTP body"
		         : rc == -ETIMEDOUT ? "no answer in 5 s"
		                            : strerror(-rc));
		free(buf);
		return rc ? rc : -EPROTO;
	}
	memmove(buf, b + 4, strlen(b + 4) + 1);
	*body = buf;
	return 0;
}

/* The tool's output into *out (owned), or a negative errno with why said. */
static int run_tool(const dv_srvstats_cfg_t *cfg, char **out, char *why, size_t why_len)
{
	const kind_t *kd = &kinds[cfg->kind];
	const char *argv[DV_SRVSTATS_MAX_ARGS + 4];
	dv_capture_t c;
	size_t n = 0;
	int rc;

	argv[n++] = kd->tool;
	for (size_t i = 0; i < cfg->n_args; i++)
		argv[n++] = cfg->args[i];
	for (const char *const *t = kd->tail; *t != NULL; t++)
		argv[n++] = *t;
	argv[n] = NULL;
	rc = dv_capture_run(argv, DV_SRVSTATS_MAX_OUT, DV_SRVSTATS_TIMEOUT_MS, &c);
	if (rc != 0) {
		snprintf(why, why_len, "%s: %s", kd->tool,
		         rc == -ENOENT ? "no such program (not installed, or not on PATH)"
		                       : strerror(-rc));
		return rc;
	}
	if (c.res.end == DV_PROC_EXITED && c.res.code == 0 && !c.truncated) {
		*out = c.out;
		return 0;
	}
	if (c.res.end == DV_PROC_TIMED_OUT)
		snprintf(why, why_len, "%s did not end in %d s (killed)", kd->tool,
		         DV_SRVSTATS_TIMEOUT_MS / 1000);
	else if (c.res.end == DV_PROC_SIGNALED)
		snprintf(why, why_len, "%s was killed by signal %d", kd->tool, c.res.code);
	else if (c.truncated)
		snprintf(why, why_len, "%s printed more than %d MiB", kd->tool,
		         DV_SRVSTATS_MAX_OUT >> 20);
	else
		snprintf(why, why_len, "%s exited %d (refused? check its ARGS: %s)", kd->tool,
		         c.res.code, cfg->spec);
	free(c.out);
	return c.res.end == DV_PROC_TIMED_OUT ? -ETIMEDOUT : -EPROTO;
}

int dv_srvstats_read(const dv_srvstats_cfg_t *cfg, dv_srvstats_reading_t *r, char *why,
                     size_t why_len)
{
	char *out = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = cfg->kind == DV_SRVSTATS_BIND ? http_get(cfg, &out, why, why_len)
	                                   : run_tool(cfg, &out, why, why_len);
	if (rc != 0)
		return rc;
	rc = dv_srvstats_parse(cfg->kind, out, r, why, why_len);
	free(out);
	return rc;
}
