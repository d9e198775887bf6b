/* test_doh: the DoH client machine against an nghttp2 server session over TLS in memory. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <nghttp2/nghttp2.h>

#include "base/b64url.h"
#include "transport/tls.h"
#include "transport/transport.h"
#include "selfsigned.h"

#define MAXS 256

static selfsigned_t cert;

/* One request as the server saw it. */
typedef struct sreq {
	int32_t sid;
	char method[8];
	char path[8192];
	char clen[16]; /* content-length as sent */
	uint8_t body[4096];
	size_t body_len;
	uint8_t resp[4096];
	size_t resp_len, resp_off;
} sreq_t;

typedef struct server {
	dv_tls_ctx_t *ctx;
	dv_tls_t *t;
	nghttp2_session *h2;
	bool hold; /* keep complete requests waiting until release() */
	bool mute; /* send no HTTP/2 frames (its SETTINGS) until cleared */
	sreq_t *req[MAXS];
	unsigned nreq, ndone, open, max_open;
	int32_t waiting[MAXS];
	unsigned nwaiting;
} server_t;

static ssize_t resp_read(nghttp2_session *h2, int32_t sid, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
	sreq_t *r = src->ptr;
	size_t n = r->resp_len - r->resp_off;
	if (n > len)
		n = len;
	memcpy(buf, r->resp + r->resp_off, n);
	r->resp_off += n;
	if (r->resp_off == r->resp_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* Answer: the query with QR set, or 404 for any path but /dns-query. */
static void respond(server_t *s, int32_t sid)
{
	sreq_t *r = nghttp2_session_get_stream_user_data(s->h2, sid);
	const char *q;
	long n;
	nghttp2_nv ok[] = {
	    {(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
	    {(uint8_t *)"content-type", (uint8_t *)"application/dns-message", 12, 23, 0},
	};
	nghttp2_nv nf[] = {{(uint8_t *)":status", (uint8_t *)"404", 7, 3, 0}};
	nghttp2_data_provider prd = {.source.ptr = r, .read_callback = resp_read};

	assert_non_null(r);
	if (strncmp(r->path, "/dns-query", 10) != 0) {
		assert_int_equal(nghttp2_submit_response(s->h2, sid, nf, 1, NULL), 0);
		return;
	}
	if (strcmp(r->method, "GET") == 0) {
		q = strstr(r->path, "?dns=");
		assert_non_null(q);
		assert_int_equal(r->body_len, 0);
		n = dv_b64url_decode(q + 5, strcspn(q + 5, "&"), r->resp);
		assert_true(n > 0);
		r->resp_len = (size_t)n;
	} else {
		assert_string_equal(r->method, "POST");
		memcpy(r->resp, r->body, r->body_len);
		r->resp_len = r->body_len;
	}
	assert_true(r->resp_len >= 12);
	r->resp[2] |= 0x80;
	assert_int_equal(nghttp2_submit_response(s->h2, sid, ok, 2, &prd), 0);
}

static int s_begin(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	server_t *s = user;
	sreq_t *r = calloc(1, sizeof(*r));
	assert_true(s->nreq < MAXS);
	r->sid = f->hd.stream_id;
	s->req[s->nreq++] = r;
	nghttp2_session_set_stream_user_data(h2, r->sid, r);
	if (++s->open > s->max_open)
		s->max_open = s->open;
	return 0;
}

static int s_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *n, size_t nl,
                    const uint8_t *v, size_t vl, uint8_t flags, void *user)
{
	sreq_t *r = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	if (nl == 7 && memcmp(n, ":method", 7) == 0 && vl < sizeof(r->method))
		memcpy(r->method, v, vl);
	if (nl == 5 && memcmp(n, ":path", 5) == 0 && vl < sizeof(r->path))
		memcpy(r->path, v, vl);
	if (nl == 14 && memcmp(n, "content-length", 14) == 0 && vl < sizeof(r->clen))
		memcpy(r->clen, v, vl);
	return 0;
}

static int s_data(nghttp2_session *h2, uint8_t flags, int32_t sid, const uint8_t *d, size_t len,
                  void *user)
{
	sreq_t *r = nghttp2_session_get_stream_user_data(h2, sid);
	assert_true(r->body_len + len <= sizeof(r->body));
	memcpy(r->body + r->body_len, d, len);
	r->body_len += len;
	return 0;
}

static int s_frame(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	server_t *s = user;
	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	if (s->hold)
		s->waiting[s->nwaiting++] = f->hd.stream_id;
	else
		respond(s, f->hd.stream_id);
	return 0;
}

static int s_close(nghttp2_session *h2, int32_t sid, uint32_t err, void *user)
{
	server_t *s = user;
	s->open--;
	s->ndone++;
	return 0;
}

static void server_init(server_t *s, uint32_t max_streams, bool alpn)
{
	dv_tls_ctx_config_t tc = {.server = true,
	                          .cert_file = cert.cert,
	                          .key_file = cert.key,
	                          .alpn = alpn ? "\x02h2" : NULL,
	                          .alpn_len = alpn ? 3 : 0};
	nghttp2_session_callbacks *cb;
	nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams}};

	memset(s, 0, sizeof(*s));
	assert_int_equal(dv_tls_ctx_new(&s->ctx, &tc, NULL), 0);
	assert_int_equal(dv_tls_new(&s->t, s->ctx, NULL, 1 << 20), 0);
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, s_begin);
	nghttp2_session_callbacks_set_on_header_callback(cb, s_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, s_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, s_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, s_close);
	assert_int_equal(nghttp2_session_server_new(&s->h2, cb, s), 0);
	nghttp2_session_callbacks_del(cb);
	assert_int_equal(nghttp2_submit_settings(s->h2, NGHTTP2_FLAG_NONE, set, 1), 0);
}

static void server_free(server_t *s)
{
	nghttp2_session_del(s->h2);
	dv_tls_free(s->t);
	dv_tls_ctx_free(s->ctx);
	for (unsigned i = 0; i < s->nreq; i++)
		free(s->req[i]);
}

static int s_plain(void *ctx, const uint8_t *d, size_t len)
{
	server_t *s = ctx;
	assert_int_equal(nghttp2_session_mem_recv(s->h2, d, len), (ssize_t)len);
	return 0;
}

static void release(server_t *s)
{
	for (unsigned i = 0; i < s->nwaiting; i++)
		respond(s, s->waiting[i]);
	s->nwaiting = 0;
}

/* Client events, by id. */
typedef struct log {
	unsigned answers, statuses, errors, closed, handshakes, goaways, settings;
	bool proto_ok; /* a PROTO_ERROR is expected (counted in proto), not a failure */
	unsigned proto;
	int status[MAXS];
	uint8_t answered[MAXS];
	uint8_t query_byte[MAXS];   /* byte 12 of the query sent with this id */
	const uint8_t *query[MAXS]; /* or the whole query (the answer is it with QR set) */
	size_t query_len[MAXS];
} log_t;

static int on_ev(void *ctx, const dv_tp_event_t *ev)
{
	log_t *l = ctx;
	switch (ev->kind) {
	case DV_TP_EV_ANSWER:
		assert_true(ev->id < MAXS);
		if (l->query[ev->id] != NULL) {
			const uint8_t *q = l->query[ev->id];
			assert_int_equal(ev->len, l->query_len[ev->id]);
			assert_memory_equal(ev->msg, q, 2);
			assert_int_equal(ev->msg[2], q[2] | 0x80);
			assert_memory_equal(ev->msg + 3, q + 3, ev->len - 3);
			l->answered[ev->id]++;
			l->answers++;
			break;
		}
		assert_int_equal(ev->len, 13);
		assert_true(ev->msg[2] & 0x80);
		assert_int_equal(ev->msg[12], l->query_byte[ev->id]);
		l->answered[ev->id]++;
		l->answers++;
		break;
	case DV_TP_EV_HTTP_STATUS:
		l->status[ev->id] = ev->status;
		l->statuses++;
		break;
	case DV_TP_EV_STREAM_ERROR:
		l->errors++;
		break;
	case DV_TP_EV_CLOSED:
		l->closed++;
		l->goaways += ev->goaway;
		break;
	case DV_TP_EV_HANDSHAKE:
		l->handshakes++;
		break;
	case DV_TP_EV_SETTINGS:
		l->settings++;
		break;
	case DV_TP_EV_PROTO_ERROR:
		if (!l->proto_ok)
			fail_msg("unexpected protocol error: %s", ev->what ? ev->what : "");
		l->proto++;
		break;
	default:
		fail_msg("unexpected event %d: %s", ev->kind, ev->what ? ev->what : "");
	}
	return 0;
}

/* Shuttle bytes until both sides are quiet. */
static void pump(dv_tp_conn_t *c, server_t *s)
{
	for (int round = 0; round < 100; round++) {
		struct iovec iov;
		const uint8_t *d;
		ssize_t n;
		dv_bq_t *so;
		bool moved = false;
		if (dv_tp_output(c, &iov, 1) == 1) {
			assert_int_equal(dv_tls_feed(s->t, iov.iov_base, iov.iov_len, s_plain, s),
			                 0);
			dv_tp_consume(c, iov.iov_len);
			moved = true;
		}
		if (dv_tls_handshake_done(s->t) && !s->mute)
			while ((n = nghttp2_session_mem_send(s->h2, &d)) > 0)
				assert_int_equal(dv_tls_write(s->t, d, (size_t)n), 0);
		so = dv_tls_out(s->t);
		if (dv_bq_len(so) > 0) {
			assert_int_equal(dv_tp_input(c, dv_bq_data(so), dv_bq_len(so)), 0);
			dv_bq_consume(so, dv_bq_len(so));
			moved = true;
		}
		if (!moved)
			return;
	}
	fail_msg("DoH exchange did not settle");
}

typedef struct rig {
	dv_tp_config_t cfg;
	dv_tp_shared_t *sh;
	dv_tp_conn_t *c;
	server_t s;
	log_t log;
} rig_t;

static rig_t *rig_new(bool get, const char *path, uint32_t max_streams)
{
	rig_t *r = calloc(1, sizeof(*r));
	dv_tp_config_init(&r->cfg);
	r->cfg.kind = DV_TP_DOH;
	r->cfg.sni = "dnsvolley.test";
	r->cfg.doh_get = get;
	r->cfg.doh_path = path;
	assert_int_equal(dv_tp_shared_new(&r->sh, &r->cfg, NULL), 0);
	server_init(&r->s, max_streams, true);
	assert_int_equal(dv_tp_conn_new(&r->c, r->sh, on_ev, &r->log), 0);
	pump(r->c, &r->s);
	assert_int_equal(r->log.handshakes, 1);
	assert_int_equal(r->log.settings, 1);
	return r;
}

static void rig_free(rig_t *r)
{
	dv_tp_conn_free(r->c);
	dv_tp_shared_free(r->sh);
	server_free(&r->s);
	free(r);
}

static int submit(rig_t *r, uint64_t id)
{
	uint8_t q[13] = {(uint8_t)(id >> 8), (uint8_t)id, 0x01, 0, 0, 1};
	q[12] = (uint8_t)(id * 37 + 1);
	r->log.query_byte[id] = q[12];
	return dv_tp_submit(r->c, q, sizeof(q), id);
}

static void post_or_get(bool get)
{
	rig_t *r = rig_new(get, NULL, 100);

	for (uint64_t id = 0; id < 5; id++)
		assert_int_equal(submit(r, id), 0);
	assert_int_equal(dv_tp_in_flight(r->c), 5);
	pump(r->c, &r->s);
	assert_int_equal(r->log.answers, 5);
	for (unsigned id = 0; id < 5; id++)
		assert_int_equal(r->log.answered[id], 1);
	assert_int_equal(dv_tp_in_flight(r->c), 0);
	assert_string_equal(r->s.req[0]->method, get ? "GET" : "POST");
	if (get)
		/* 13 bytes: 18 base64url characters, no padding. */
		assert_int_equal(strlen(r->s.req[0]->path), strlen("/dns-query?dns=") + 18);
	else
		assert_string_equal(r->s.req[0]->path, "/dns-query");
	rig_free(r);
}

static void test_post(void **st)
{
	post_or_get(false);
}

/* The client opens its connection window to 1 GiB at once: answers never wait for a
 * WINDOW_UPDATE. */
static void test_window(void **st)
{
	rig_t *r = rig_new(false, NULL, 100);

	assert_int_equal(nghttp2_session_get_remote_window_size(r->s.h2), 1 << 30);
	rig_free(r);
}

static void test_get(void **st)
{
	post_or_get(true);
}

/* Queries and answers of many sizes, around and past the bytes a stream keeps inline,
 * twice (the second time on reused stream records, sizes in the other order): every
 * answer is exactly its query with QR set; POST's content-length is the body's. */
static void sizes(bool get)
{
	static const size_t len[] = {12, 13, 200, 511, 512, 513, 1024, 2900, 40, 12};
	enum { N = sizeof(len) / sizeof(len[0]) };
	static uint8_t q[2 * N][2900];
	rig_t *r = rig_new(get, NULL, 100);
	uint64_t id;

	for (id = 0; id < 2 * N; id++) {
		size_t n = len[id < N ? id : 2 * N - 1 - id];
		for (size_t i = 0; i < n; i++)
			q[id][i] = (uint8_t)(i * 7 + id);
		q[id][0] = 0;
		q[id][1] = (uint8_t)id;
		q[id][2] = 0x01;
		r->log.query[id] = q[id];
		r->log.query_len[id] = n;
	}
	for (unsigned round = 0; round < 2; round++) {
		for (id = round * N; id < (round + 1) * N; id++)
			assert_int_equal(dv_tp_submit(r->c, q[id], r->log.query_len[id], id), 0);
		pump(r->c, &r->s);
		assert_int_equal(r->log.answers, (round + 1) * N);
		assert_int_equal(dv_tp_in_flight(r->c), 0);
	}
	for (id = 0; id < 2 * N; id++) {
		sreq_t *sr = r->s.req[id];
		assert_int_equal(r->log.answered[id], 1);
		if (!get) {
			assert_string_equal(sr->method, "POST");
			assert_int_equal(strtoul(sr->clen, NULL, 10), sr->body_len);
		}
	}
	assert_int_equal(r->s.req[7]->resp_len, 2900);
	rig_free(r);
}

static void test_sizes_post(void **st)
{
	sizes(false);
}

static void test_sizes_get(void **st)
{
	sizes(true);
}

/* 100 streams at once, exactly the server's limit; one more waits. */
static void test_concurrent(void **st)
{
	rig_t *r = rig_new(false, NULL, 100);
	uint64_t id;

	r->s.hold = true;
	assert_int_equal(dv_tp_capacity(r->c), 100);
	for (id = 0; id < 100; id++)
		assert_int_equal(submit(r, id), 0);
	assert_int_equal(dv_tp_capacity(r->c), 0);
	assert_int_equal(submit(r, 100), -EAGAIN);
	pump(r->c, &r->s);
	assert_int_equal(r->s.max_open, 100);
	assert_int_equal(r->s.nwaiting, 100);
	assert_int_equal(r->log.answers, 0);
	release(&r->s);
	pump(r->c, &r->s);
	assert_int_equal(r->log.answers, 100);
	assert_int_equal(dv_tp_capacity(r->c), 100);
	assert_int_equal(dv_tp_in_flight(r->c), 0);
	rig_free(r);
}

/*
 * Nothing is sent before the server's SETTINGS: with TLS done and no SETTINGS yet the
 * connection is not ready and takes no query (nghttp2 would assume 100 streams, and a
 * server allowing fewer would refuse the rest); its SETTINGS make it ready, once.
 */
static void test_ready_after_settings(void **st)
{
	rig_t *r = calloc(1, sizeof(*r));

	dv_tp_config_init(&r->cfg);
	r->cfg.kind = DV_TP_DOH;
	r->cfg.sni = "dnsvolley.test";
	assert_int_equal(dv_tp_shared_new(&r->sh, &r->cfg, NULL), 0);
	server_init(&r->s, 2, true);
	r->s.mute = true;
	assert_int_equal(dv_tp_conn_new(&r->c, r->sh, on_ev, &r->log), 0);
	pump(r->c, &r->s);
	assert_int_equal(r->log.handshakes, 1);
	assert_int_equal(r->log.settings, 0);
	assert_false(dv_tp_ready(r->c));
	assert_int_equal(dv_tp_capacity(r->c), 0);
	assert_int_equal(submit(r, 0), -EAGAIN);
	r->s.mute = false;
	pump(r->c, &r->s);
	assert_int_equal(r->log.settings, 1);
	assert_true(dv_tp_ready(r->c));
	assert_int_equal(dv_tp_capacity(r->c), 2);
	r->s.hold = true;
	assert_int_equal(submit(r, 0), 0);
	assert_int_equal(submit(r, 1), 0);
	assert_int_equal(submit(r, 2), -EAGAIN);
	pump(r->c, &r->s);
	release(&r->s);
	pump(r->c, &r->s);
	assert_int_equal(r->log.answers, 2);
	assert_int_equal(r->log.errors, 0);
	assert_int_equal(r->log.settings, 1); /* the SETTINGS ACK and later ones: not again */
	rig_free(r);
}

/* A server that allows 10 streams: capacity follows its SETTINGS. */
static void test_server_limit(void **st)
{
	rig_t *r = rig_new(false, NULL, 10);

	r->s.hold = true;
	assert_int_equal(dv_tp_capacity(r->c), 10);
	for (uint64_t id = 0; id < 10; id++)
		assert_int_equal(submit(r, id), 0);
	assert_int_equal(submit(r, 10), -EAGAIN);
	pump(r->c, &r->s);
	assert_int_equal(r->s.max_open, 10);
	release(&r->s);
	pump(r->c, &r->s);
	assert_int_equal(r->log.answers, 10);
	rig_free(r);
}

static void test_404(void **st)
{
	rig_t *r = rig_new(false, "/nope", 100);

	assert_int_equal(submit(r, 7), 0);
	assert_int_equal(submit(r, 8), 0);
	pump(r->c, &r->s);
	assert_int_equal(r->log.answers, 0);
	assert_int_equal(r->log.statuses, 2);
	assert_int_equal(r->log.status[7], 404);
	assert_int_equal(r->log.status[8], 404);
	assert_int_equal(dv_tp_in_flight(r->c), 0);
	rig_free(r);
}

/* GOAWAY after the first of three streams: CLOSED (goaway), the first still answered,
 * the two past the last stream id refused, no more submits. */
static void test_goaway(void **st)
{
	rig_t *r = rig_new(false, NULL, 100);

	r->s.hold = true;
	for (uint64_t id = 0; id < 3; id++)
		assert_int_equal(submit(r, id), 0);
	pump(r->c, &r->s);
	assert_int_equal(r->s.nwaiting, 3);
	assert_int_equal(nghttp2_submit_goaway(r->s.h2, NGHTTP2_FLAG_NONE, r->s.waiting[0],
	                                       NGHTTP2_NO_ERROR, NULL, 0),
	                 0);
	r->s.nwaiting = 1;
	release(&r->s);
	pump(r->c, &r->s);
	assert_int_equal(r->log.closed, 1);
	assert_int_equal(r->log.goaways, 1);
	assert_int_equal(r->log.answers, 1);
	assert_int_equal(r->log.answered[0], 1);
	assert_int_equal(r->log.errors, 2);
	assert_int_equal(dv_tp_in_flight(r->c), 0);
	assert_int_equal(dv_tp_capacity(r->c), 0);
	assert_int_equal(submit(r, 3), -EPIPE);
	rig_free(r);
}

/*
 * GOAWAY that leaves all three streams open (last stream id: the third), one of them then
 * cancelled, then a frame nghttp2 cannot take (a length over SETTINGS_MAX_FRAME_SIZE): the
 * session reads no more and would never close the streams nor send the reset, so the
 * connection ends as a protocol error, once, with nothing after it (fuzz_stream's
 * doh-goaway-then-broken-cancel; before, the input was taken without an error and the
 * three queries waited for -t).
 */
static void test_goaway_then_broken(void **st)
{
	rig_t *r = rig_new(false, NULL, 100);
	static const uint8_t bad[9] = {0xff, 0x7f, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff};
	dv_bq_t *so;

	r->s.hold = true;
	for (uint64_t id = 0; id < 3; id++)
		assert_int_equal(submit(r, id), 0);
	pump(r->c, &r->s);
	assert_int_equal(r->s.nwaiting, 3);
	assert_int_equal(nghttp2_submit_goaway(r->s.h2, NGHTTP2_FLAG_NONE, r->s.waiting[2],
	                                       NGHTTP2_NO_ERROR, NULL, 0),
	                 0);
	pump(r->c, &r->s);
	assert_int_equal(r->log.goaways, 1);
	assert_int_equal(dv_tp_in_flight(r->c), 3);
	assert_int_equal(dv_tp_cancel(r->c, 0), 1);
	r->log.proto_ok = true;
	assert_int_equal(dv_tls_write(r->s.t, bad, sizeof(bad)), 0);
	so = dv_tls_out(r->s.t);
	assert_true(dv_tp_input(r->c, dv_bq_data(so), dv_bq_len(so)) < 0);
	dv_bq_consume(so, dv_bq_len(so));
	assert_int_equal(r->log.proto, 1);
	assert_int_equal(r->log.answers + r->log.errors + r->log.statuses, 0);
	assert_int_equal(r->log.closed, 1);
	rig_free(r);
}

static int alpn_ev(void *ctx, const dv_tp_event_t *ev)
{
	assert_int_equal(ev->kind, DV_TP_EV_PROTO_ERROR);
	assert_non_null(strstr(ev->what, "ALPN h2"));
	(*(unsigned *)ctx)++;
	return 0;
}

/* A TLS server that does not choose h2: a protocol error, no handshake event. */
static void test_no_alpn(void **st)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *sh;
	dv_tp_conn_t *c;
	server_t s;
	unsigned errors = 0;
	struct iovec iov;

	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOH;
	assert_int_equal(dv_tp_shared_new(&sh, &cfg, NULL), 0);
	server_init(&s, 100, false);
	assert_int_equal(dv_tp_conn_new(&c, sh, alpn_ev, &errors), 0);
	for (int round = 0; round < 10 && errors == 0; round++) {
		dv_bq_t *so = dv_tls_out(s.t);
		if (dv_tp_output(c, &iov, 1) == 1) {
			assert_int_equal(dv_tls_feed(s.t, iov.iov_base, iov.iov_len, s_plain, &s),
			                 0);
			dv_tp_consume(c, iov.iov_len);
		}
		if (dv_bq_len(so) > 0) {
			int rc = dv_tp_input(c, dv_bq_data(so), dv_bq_len(so));
			assert_true(rc == 0 || rc == -EPROTO);
			dv_bq_consume(so, dv_bq_len(so));
		}
	}
	assert_int_equal(errors, 1);
	assert_int_equal(dv_tp_submit(c, (const uint8_t *)"123456789012", 12, 1), -EPIPE);
	dv_tp_conn_free(c);
	dv_tp_shared_free(sh);
	server_free(&s);
}

static void test_bad_path(void **st)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *sh;
	dv_err_t err;

	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOH;
	cfg.doh_path = "dns-query";
	assert_int_equal(dv_tp_shared_new(&sh, &cfg, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dns-query"));
}

static int setup(void **s)
{
	return selfsigned_make(&cert);
}

static int teardown(void **s)
{
	selfsigned_remove(&cert);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_post),
	    cmocka_unit_test(test_get),
	    cmocka_unit_test(test_concurrent),
	    cmocka_unit_test(test_server_limit),
	    cmocka_unit_test(test_ready_after_settings),
	    cmocka_unit_test(test_404),
	    cmocka_unit_test(test_goaway),
	    cmocka_unit_test(test_goaway_then_broken),
	    cmocka_unit_test(test_bad_path),
	    cmocka_unit_test(test_no_alpn),
	    cmocka_unit_test(test_sizes_post),
	    cmocka_unit_test(test_sizes_get),
	    cmocka_unit_test(test_window),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
