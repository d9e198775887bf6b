/* hostile-stream: a misbehaving loopback DNS server over TCP, DoT and DoH for the stream
 * robustness tests: silence, closes, GOAWAY, no streams, dropped streams, lies, 1-byte
 * frames, duplicates, wrong IDs, QR=0, a peer that never reads, close_notify mid-run. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "responder/answer.h"
#include "base/util.h"
#include "base/wire.h"

/*
 * One thread, one listener, poll() over at most MAXC connections. Every answer is built
 * by the bundled responder's dv_answer_build and then spoiled as the mode says, so the
 * client's counts can be asserted exactly against the counts printed here at exit
 * (SIGINT/SIGTERM or --max-seconds) as "key value" lines (lib.sh's resp_count format):
 *   connections  accepted;        queries   DNS queries read (TCP/DoT frames, DoH streams)
 *   answered     answers written; dropped   queries never answered (silent, drop)
 *   spoiled      answers written wrong (wrong-id, qr0, length-lie: one each)
 *   extra        duplicate answers; closes   connections this server ended (close mode)
 *   goaways      GOAWAYs sent;    cancelled  DoH streams the client reset (RST_STREAM
 *                CANCEL)
 *
 * Modes (--mode):
 *   answer        correct answers (the control)
 *   silent        read every query, answer none
 *   accept-close  close each connection as soon as it is accepted
 *   goaway        DoH: SETTINGS, then GOAWAY (last stream 0) at once, on every connection
 *   zero-streams  DoH: SETTINGS_MAX_CONCURRENT_STREAMS 0
 * --streams N: the DoH stream limit (default 100).
 *   drop          every --every'th query is never answered (DoH: its stream stays open)
 *   length-lie    TCP/DoT: the first answer's length prefix says 100 bytes more, then the
 *                 server ends its side; DoH: content-length says 100 bytes more
 *   one-byte      answers in 1-byte writes (DoT: 1-byte TLS records; DoH: 1-byte DATA)
 *   duplicate     TCP/DoT: every answer twice
 *   wrong-id      the answer's ID is the query's + 1
 *   qr0           the answer with QR clear
 *   never-read    accept (TLS: and handshake; DoH: and send SETTINGS), then never read
 *   close         after --after answers on a connection, end it: TLS close_notify (TCP:
 *                 FIN), reading on until the client closes
 */

#define MAXC   512
#define IBUF   (65536 + 2)
#define LIE_BY 100

typedef enum mode {
	M_ANSWER,
	M_SILENT,
	M_ACCEPT_CLOSE,
	M_GOAWAY,
	M_ZERO,
	M_DROP,
	M_LIE,
	M_ONE,
	M_DUP,
	M_WRONG_ID,
	M_QR0,
	M_NEVER_READ,
	M_CLOSE,
} mode_t_;

static const char *const mode_names[] = {
    "answer",   "silent",    "accept-close", "goaway", "zero-streams", "drop",  "length-lie",
    "one-byte", "duplicate", "wrong-id",     "qr0",    "never-read",   "close",
};

enum kind { K_TCP, K_DOT, K_DOH };

typedef struct counts {
	unsigned long long connections, queries, answered, dropped, spoiled, extra, closes, goaways,
	    cancelled;
} counts_t;

typedef struct conn {
	int fd;
	SSL *ssl;
	nghttp2_session *h2;
	bool hs;        /* TLS done (TCP: at once) */
	bool no_read;   /* never-read: reads stopped */
	bool ended;     /* our side ended: only reads (discarded) until the client closes */
	bool end_after; /* end our side once the output is written */
	uint8_t *ib;
	size_t il;
	uint8_t *ob;
	size_t ol, oc;
	unsigned long long nq, nans;
} conn_t;

typedef struct doh_st {
	uint8_t q[512];
	size_t qlen;
	uint8_t a[DV_ANSWER_MAX + 2];
	size_t alen, aoff;
} doh_st_t;

static struct {
	enum kind kind;
	mode_t_ mode;
	unsigned every, after;
	unsigned streams; /* DoH: SETTINGS_MAX_CONCURRENT_STREAMS (zero-streams: 0) */
	SSL_CTX *ctx;
	counts_t n;
	conn_t c[MAXC];
} g;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void out_put(conn_t *c, const void *p, size_t len)
{
	if (c->ol + len > c->oc) {
		size_t cap = c->oc ? c->oc : 4096;
		while (cap < c->ol + len)
			cap *= 2;
		c->ob = realloc(c->ob, cap);
		if (c->ob == NULL)
			abort();
		c->oc = cap;
	}
	memcpy(c->ob + c->ol, p, len);
	c->ol += len;
}

/* The answer to q as the mode spoils it; 0 = none (silent, drop, not a query). */
static size_t make_answer(conn_t *c, const uint8_t *q, size_t qlen, uint8_t *a)
{
	dv_answer_opts_t o;
	int len;

	g.n.queries++;
	c->nq++;
	if (g.mode == M_SILENT || (g.mode == M_DROP && g.every > 0 && c->nq % g.every == 0) ||
	    c->ended || c->end_after) { /* end_after: TCP/DoT's one lie, or close's last */
		g.n.dropped++;
		return 0;
	}
	dv_answer_opts_init(&o);
	len = dv_answer_build(q, qlen, a, DV_ANSWER_MAX, &o);
	if (len <= 0) {
		g.n.dropped++;
		return 0;
	}
	if (g.mode == M_WRONG_ID || g.mode == M_QR0 || g.mode == M_LIE)
		g.n.spoiled++;
	else
		g.n.answered++;
	if (g.mode == M_WRONG_ID)
		dv_wire_set16(a, (uint16_t)(dv_wire_get16(a) + 1));
	if (g.mode == M_QR0)
		a[2] &= 0x7f;
	c->nans++;
	return (size_t)len;
}

/* TCP/DoT: one framed query read. */
static void stream_query(conn_t *c, const uint8_t *q, size_t qlen)
{
	uint8_t a[DV_ANSWER_MAX], pre[2];
	size_t len = make_answer(c, q, qlen, a);

	if (len == 0)
		return;
	dv_wire_set16(pre, (uint16_t)(len + (g.mode == M_LIE ? LIE_BY : 0)));
	out_put(c, pre, 2);
	out_put(c, a, len);
	if (g.mode == M_DUP) {
		out_put(c, pre, 2);
		out_put(c, a, len);
		g.n.extra++;
	}
	if (g.mode == M_LIE || (g.mode == M_CLOSE && c->nans >= g.after))
		c->end_after = true;
}

static void stream_input(conn_t *c, const uint8_t *d, size_t len)
{
	size_t off = 0;

	while (off < len) {
		size_t take = DV_MIN(len - off, (size_t)IBUF - c->il), need;
		memcpy(c->ib + c->il, d + off, take);
		c->il += take;
		off += take;
		while (c->il >= 2 && c->il >= 2 + (need = dv_wire_get16(c->ib))) {
			if (need > 0)
				stream_query(c, c->ib + 2, need);
			memmove(c->ib, c->ib + 2 + need, c->il - 2 - need);
			c->il -= 2 + need;
		}
	}
}

/* ---- DoH: an nghttp2 server session ---- */

static ssize_t doh_read(nghttp2_session *h, int32_t sid, uint8_t *buf, size_t length,
                        uint32_t *flags, nghttp2_data_source *src, void *user)
{
	doh_st_t *st = src->ptr;
	size_t n = DV_MIN(length, st->alen - st->aoff);

	(void)h;
	(void)sid;
	(void)user;
	if (g.mode == M_ONE && n > 1)
		n = 1;
	memcpy(buf, st->a + st->aoff, n);
	st->aoff += n;
	if (st->aoff == st->alen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int doh_request(nghttp2_session *h, conn_t *c, int32_t sid, doh_st_t *st)
{
	char clen[16];
	nghttp2_data_provider prd = {.source.ptr = st, .read_callback = doh_read};

	st->alen = make_answer(c, st->q, st->qlen, st->a);
	if (st->alen == 0)
		return 0;
	snprintf(clen, sizeof(clen), "%zu", st->alen + (g.mode == M_LIE ? LIE_BY : 0));
	nghttp2_nv nv[] = {
	    {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
	    {(uint8_t *)"content-type", (uint8_t *)"application/dns-message", 12, 23,
	     NGHTTP2_NV_FLAG_NONE},
	    {(uint8_t *)"content-length", (uint8_t *)clen, 14, strlen(clen), NGHTTP2_NV_FLAG_NONE},
	};
	if (g.mode == M_CLOSE && c->nans >= g.after)
		c->end_after = true;
	return nghttp2_submit_response(h, sid, nv, 3, &prd);
}

static int doh_begin(nghttp2_session *h, const nghttp2_frame *f, void *user)
{
	doh_st_t *st;

	(void)user;
	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(h, f->hd.stream_id, st);
	return 0;
}

static int doh_chunk(nghttp2_session *h, uint8_t flags, int32_t sid, const uint8_t *d, size_t len,
                     void *user)
{
	doh_st_t *st = nghttp2_session_get_stream_user_data(h, sid);

	(void)flags;
	(void)user;
	if (st != NULL && st->qlen + len <= sizeof(st->q)) {
		memcpy(st->q + st->qlen, d, len);
		st->qlen += len;
	}
	return 0;
}

static int doh_frame(nghttp2_session *h, const nghttp2_frame *f, void *user)
{
	doh_st_t *st;

	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(h, f->hd.stream_id);
	if (st == NULL)
		return 0;
	return doh_request(h, user, f->hd.stream_id, st) == 0 ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int doh_close(nghttp2_session *h, int32_t sid, uint32_t code, void *user)
{
	(void)user;
	if (code == NGHTTP2_CANCEL)
		g.n.cancelled++;
	free(nghttp2_session_get_stream_user_data(h, sid));
	nghttp2_session_set_stream_user_data(h, sid, NULL);
	return 0;
}

static int doh_new(conn_t *c)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	int rc;
	nghttp2_settings_entry set[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, g.mode == M_ZERO ? 0 : g.streams}};

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return -1;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, doh_begin);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, doh_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, doh_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, doh_close);
	/* No rapid-reset limit (a GOAWAY after 1000 client resets): the counts stay exact. */
	if (nghttp2_option_new(&opt) != 0) {
		nghttp2_session_callbacks_del(cb);
		return -1;
	}
	nghttp2_option_set_stream_reset_rate_limit(opt, UINT64_MAX, UINT64_MAX);
	rc = nghttp2_session_server_new2(&c->h2, cb, c, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	if (rc != 0)
		return -1;
	nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, set, 1);
	if (g.mode == M_GOAWAY) {
		nghttp2_submit_goaway(c->h2, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0);
		g.n.goaways++;
		c->end_after = true;
	}
	return 0;
}

/* nghttp2's frames into the output. */
static void doh_pump(conn_t *c)
{
	const uint8_t *d;
	ssize_t n;

	while (c->h2 != NULL && (n = nghttp2_session_mem_send(c->h2, &d)) > 0)
		out_put(c, d, (size_t)n);
}

/* ---- connections ---- */

static void conn_close(conn_t *c)
{
	if (c->h2 != NULL)
		nghttp2_session_del(c->h2);
	SSL_free(c->ssl);
	close(c->fd);
	free(c->ib);
	free(c->ob);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* End our side (close_notify for TLS, FIN), then read on until the client closes. */
static void conn_end(conn_t *c)
{
	if (c->ended)
		return;
	c->ended = true;
	if (g.mode == M_CLOSE)
		g.n.closes++;
	if (c->ssl != NULL && g.mode != M_LIE) /* a lie ends with a cut, not close_notify */
		SSL_shutdown(c->ssl);
	shutdown(c->fd, SHUT_WR);
}

/* Write what is queued; false when the connection is gone. */
static bool conn_flush(conn_t *c)
{
	while (c->ol > 0) {
		size_t want = g.mode == M_ONE && g.kind != K_DOH ? 1 : c->ol; /* DoH: 1-byte DATA */
		ssize_t r;
		if (c->ssl != NULL) {
			int w = SSL_write(c->ssl, c->ob, (int)want);
			if (w <= 0) {
				int e = SSL_get_error(c->ssl, w);
				if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
					return true;
				return false;
			}
			r = w;
		} else {
			r = send(c->fd, c->ob, want, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (r < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		}
		memmove(c->ob, c->ob + r, c->ol - (size_t)r);
		c->ol -= (size_t)r;
	}
	if (c->end_after)
		conn_end(c);
	return true;
}

static bool conn_handshake(conn_t *c)
{
	int r = SSL_accept(c->ssl), e;

	if (r == 1) {
		c->hs = true;
		if (g.kind == K_DOH) {
			if (doh_new(c) != 0)
				return false;
			doh_pump(c);
		}
		if (g.mode == M_NEVER_READ)
			c->no_read = true;
		return conn_flush(c);
	}
	e = SSL_get_error(c->ssl, r);
	return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
}

/* Bytes read from the client. False when the connection is gone. */
static bool conn_input(conn_t *c, const uint8_t *d, size_t len)
{
	if (c->ended)
		return true; /* discarded */
	if (c->h2 != NULL) {
		ssize_t r = nghttp2_session_mem_recv(c->h2, d, len);
		if (r < 0) {
			fprintf(stderr, "hostile-stream: HTTP/2: %s\n", nghttp2_strerror((int)r));
			return false;
		}
		doh_pump(c);
		return true;
	}
	stream_input(c, d, len);
	return true;
}

static bool conn_read(conn_t *c)
{
	uint8_t buf[16384];

	if (c->ssl != NULL && !c->hs)
		return conn_handshake(c);
	/* Ended: the client's bytes are drained raw (no TLS read after close_notify, no
	 * close with unread bytes: an RST would discard answers not yet read there). */
	while (c->ended) {
		ssize_t r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r == 0)
			return false;
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
	}
	for (int round = 0; round < 16; round++) {
		ssize_t r;
		if (c->ssl != NULL) {
			int n = SSL_read(c->ssl, buf, sizeof(buf));
			if (n <= 0) {
				int e = SSL_get_error(c->ssl, n);
				return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
			}
			r = n;
		} else {
			r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (r == 0)
				return false;
			if (r < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		}
		if (!conn_input(c, buf, (size_t)r))
			return false;
	}
	return true;
}

static void conn_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
	conn_t *c = NULL;

	if (fd < 0)
		return;
	g.n.connections++;
	if (g.mode == M_ACCEPT_CLOSE) {
		close(fd);
		return;
	}
	for (int i = 0; i < MAXC && c == NULL; i++)
		if (g.c[i].fd < 0)
			c = &g.c[i];
	if (c == NULL) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->ib = malloc(IBUF);
	if (c->ib == NULL)
		abort();
	if (g.kind == K_TCP) {
		c->hs = true;
		c->no_read = g.mode == M_NEVER_READ;
		return;
	}
	c->ssl = SSL_new(g.ctx);
	SSL_set_fd(c->ssl, fd);
	SSL_set_mode(c->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

static int alpn_h2(SSL *s, const unsigned char **out, unsigned char *outlen,
                   const unsigned char *in, unsigned inlen, void *arg)
{
	(void)s;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, (const unsigned char *)"\x02h2", 3,
	                          in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	return SSL_TLSEXT_ERR_OK;
}

static int tls_setup(const char *cert, const char *key)
{
	g.ctx = SSL_CTX_new(TLS_server_method());
	if (g.ctx == NULL || cert == NULL || key == NULL ||
	    SSL_CTX_use_certificate_chain_file(g.ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(g.ctx, key, SSL_FILETYPE_PEM) != 1) {
		fprintf(stderr, "hostile-stream: TLS needs --cert and --key that load\n");
		return -1;
	}
	if (g.kind == K_DOH)
		SSL_CTX_set_alpn_select_cb(g.ctx, alpn_h2, NULL);
	return 0;
}

static int listen_on(const char *addr, uint16_t port, const char *port_file)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
	FILE *f;

	if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1024) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	if (port_file != NULL) { /* written whole, then renamed: a reader never sees half */
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		f = fopen(tmp, "w");
		if (f == NULL || fprintf(f, "%u\n", ntohs(sa.sin_port)) < 0 || fclose(f) != 0 ||
		    rename(tmp, port_file) != 0)
			return -1;
	}
	return fd;
}

static void serve(int lfd, double max_seconds)
{
	struct pollfd p[MAXC + 1];
	int map[MAXC + 1];
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop_flag) {
		int n = 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
		    max_seconds)
			break;
		p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (int i = 0; i < MAXC; i++) {
			conn_t *c = &g.c[i];
			if (c->fd < 0)
				continue;
			p[n] = (struct pollfd){.fd = c->fd, .events = c->no_read ? 0 : POLLIN};
			if (c->ol > 0 || (c->ssl != NULL && SSL_want_write(c->ssl)))
				p[n].events |= POLLOUT;
			map[n++] = i;
		}
		if (poll(p, (nfds_t)n, 100) <= 0)
			continue;
		if (p[0].revents & POLLIN)
			conn_accept(lfd);
		for (int k = 1; k < n; k++) {
			conn_t *c = &g.c[map[k]];
			bool ok = true;
			if (p[k].revents == 0)
				continue;
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
				ok = c->no_read ? !(p[k].revents & POLLERR) : conn_read(c);
			if (ok)
				ok = conn_flush(c);
			if (!ok)
				conn_close(c);
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: hostile-stream --kind tcp|dot|doh --mode MODE [-a ADDR] [-p PORT] "
	                "[--port-file F] [--cert F --key F] [--every N] [--after N] "
	                "[--streams N] [--max-seconds S]\n");
	exit(2);
}

static void parse_mode(const char *s)
{
	for (size_t i = 0; i < DV_ARRAY_SIZE(mode_names); i++)
		if (strcmp(s, mode_names[i]) == 0) {
			g.mode = (mode_t_)i;
			return;
		}
	usage();
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"kind", 1, NULL, 'k'},  {"mode", 1, NULL, 'm'},        {"port-file", 1, NULL, 'f'},
	    {"cert", 1, NULL, 'C'},  {"key", 1, NULL, 'K'},         {"every", 1, NULL, 'e'},
	    {"after", 1, NULL, 'A'}, {"max-seconds", 1, NULL, 'S'}, {"streams", 1, NULL, 's'},
	    {NULL, 0, NULL, 0}};
	const char *addr = "127.0.0.1", *port_file = NULL, *cert = NULL, *key = NULL;
	unsigned port = 0;
	double max_seconds = 120;
	int o, lfd;

	g.every = 50;
	g.after = 10;
	g.streams = 100;
	while ((o = getopt_long(argc, argv, "a:p:", lo, NULL)) != -1) {
		switch (o) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = (unsigned)atoi(optarg);
			break;
		case 'f':
			port_file = optarg;
			break;
		case 'C':
			cert = optarg;
			break;
		case 'K':
			key = optarg;
			break;
		case 'e':
			g.every = (unsigned)atoi(optarg);
			break;
		case 'A':
			g.after = (unsigned)atoi(optarg);
			break;
		case 's':
			g.streams = (unsigned)atoi(optarg);
			break;
		case 'S':
			max_seconds = atof(optarg);
			break;
		case 'm':
			parse_mode(optarg);
			break;
		case 'k':
			g.kind = strcmp(optarg, "dot") == 0   ? K_DOT
			         : strcmp(optarg, "doh") == 0 ? K_DOH
			         : strcmp(optarg, "tcp") == 0 ? K_TCP
			                                      : (usage(), K_TCP);
			break;
		default:
			usage();
		}
	}
	for (int i = 0; i < MAXC; i++)
		g.c[i].fd = -1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (g.kind != K_TCP && tls_setup(cert, key) != 0)
		return 1;
	lfd = listen_on(addr, (uint16_t)port, port_file);
	if (lfd < 0) {
		fprintf(stderr, "hostile-stream: cannot listen on %s:%u: %s\n", addr, port,
		        strerror(errno));
		return 1;
	}
	serve(lfd, max_seconds);
	printf("connections %llu\nqueries %llu\nanswered %llu\ndropped %llu\nspoiled %llu\n"
	       "extra %llu\ncloses %llu\ngoaways %llu\ncancelled %llu\n",
	       g.n.connections, g.n.queries, g.n.answered, g.n.dropped, g.n.spoiled, g.n.extra,
	       g.n.closes, g.n.goaways, g.n.cancelled);
	for (int i = 0; i < MAXC; i++)
		if (g.c[i].fd >= 0)
			conn_close(&g.c[i]);
	close(lfd);
	SSL_CTX_free(g.ctx);
	return 0;
}
