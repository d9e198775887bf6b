/* doh: DNS over HTTPS (RFC 8484) on HTTP/2: an nghttp2 client session over the TLS machine. */
#include "config.h"

#include "transport/conn.h"

#include "base/b64url.h"
#include "base/h2.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#define DOH_BODY_MAX    DV_FRAME_MAX
#define DOH_INLINE      512 /* query and answer bytes kept inside the stream record */
#define DOH_SPARE_MAX   256 /* finished stream records kept for reuse per connection */
#define DOH_CONN_WINDOW ((int32_t)1 << 30) /* connection receive window: never a stall */

/* One query in flight: its id, POST body, HTTP status, response body. The bodies live in
 * inl/req_inl up to DOH_INLINE bytes, on the heap past that; records are reused. */
typedef struct doh_stream {
	struct doh_stream *prev, *next; /* the connection's open streams, or its spares */
	uint64_t id;
	int32_t sid; /* its HTTP/2 stream */
	int status;
	bool oversize, bad_type;
	bool cancelled; /* reset by us (dv_tp_cancel): its close reports nothing */
	uint8_t *body;  /* inl, or a heap block of body_cap bytes */
	size_t body_len, body_cap;
	const uint8_t *req; /* req_inl, or req_heap */
	uint8_t *req_heap;
	size_t req_len, req_off;
	char clen[8]; /* the content-length value (nghttp2 does not copy it) */
	uint8_t req_inl[DOH_INLINE];
	uint8_t inl[DOH_INLINE];
} doh_stream_t;

typedef struct dv_doh {
	nghttp2_session *h2;
	doh_stream_t *streams;
	doh_stream_t *spare; /* singly linked by next */
	size_t in_flight, nspare;
	bool goaway;
	bool settled;     /* the server's first SETTINGS came: its stream limit is known */
	nghttp2_nv nv[7]; /* the request headers, built once; content-length set per request */
	size_t path_len;
} dv_doh_t;

/* The connection's HTTP/2 state (its attach set it). */
static inline dv_doh_t *doh(const dv_tp_conn_t *c)
{
	return c->proto;
}

static void stream_link(dv_doh_t *d, doh_stream_t *st)
{
	st->prev = NULL;
	st->next = d->streams;
	if (d->streams != NULL)
		d->streams->prev = st;
	d->streams = st;
	d->in_flight++;
}

static void stream_unlink(dv_doh_t *d, doh_stream_t *st)
{
	if (st->prev != NULL)
		st->prev->next = st->next;
	else
		d->streams = st->next;
	if (st->next != NULL)
		st->next->prev = st->prev;
	d->in_flight--;
}

static void stream_free(doh_stream_t *st)
{
	if (st == NULL)
		return;
	if (st->body != st->inl)
		free(st->body);
	free(st->req_heap);
	free(st);
}

/* A clean stream record: a spare one, or a new one. NULL when out of memory. */
static doh_stream_t *stream_get(dv_doh_t *d)
{
	doh_stream_t *st = d->spare;

	if (st == NULL) {
		st = malloc(sizeof(*st));
		if (st == NULL)
			return NULL;
	} else {
		d->spare = st->next;
		d->nspare--;
	}
	st->status = 0;
	st->sid = 0;
	st->oversize = st->bad_type = st->cancelled = false;
	st->body = st->inl;
	st->body_len = 0;
	st->body_cap = sizeof(st->inl);
	st->req = st->req_inl;
	st->req_heap = NULL;
	st->req_len = st->req_off = 0;
	return st;
}

/* Give a finished stream record back (kept for reuse up to DOH_SPARE_MAX). */
static void stream_put(dv_doh_t *d, doh_stream_t *st)
{
	if (d->nspare >= DOH_SPARE_MAX) {
		stream_free(st);
		return;
	}
	if (st->body != st->inl)
		free(st->body);
	free(st->req_heap);
	st->body = st->inl;
	st->req_heap = NULL;
	st->next = d->spare;
	d->spare = st;
	d->nspare++;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
	doh_stream_t *st;

	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	st = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);
	if (st == NULL)
		return 0;
	if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
		int v = 0;
		for (size_t i = 0; i < valuelen && i < 3; i++)
			v = v * 10 + (value[i] - '0');
		if (v >= 200) /* a 1xx is informational; the final status follows */
			st->status = v;
	} else if (namelen == 12 && memcmp(name, "content-type", 12) == 0) {
		st->bad_type =
		    !(valuelen == 23 && memcmp(value, "application/dns-message", 23) == 0);
	}
	return 0;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t sid, const uint8_t *data, size_t len,
                   void *user)
{
	doh_stream_t *st = nghttp2_session_get_stream_user_data(h2, sid);
	uint8_t *nb;
	size_t cap;

	if (st == NULL || st->oversize)
		return 0;
	if (st->body_len + len > DOH_BODY_MAX) {
		st->oversize = true;
		nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, sid, NGHTTP2_CANCEL);
		return 0;
	}
	if (st->body_len + len > st->body_cap) {
		cap = st->body_cap;
		while (cap < st->body_len + len)
			cap *= 2;
		nb = malloc(cap);
		if (nb == NULL)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		memcpy(nb, st->body, st->body_len);
		if (st->body != st->inl)
			free(st->body);
		st->body = nb;
		st->body_cap = cap;
	}
	memcpy(st->body + st->body_len, data, len);
	st->body_len += len;
	return 0;
}

/* The event a finished stream gives. */
static void stream_event(dv_tp_conn_t *c, const doh_stream_t *st, uint32_t error_code,
                         dv_tp_event_t *ev)
{
	char *what = c->what;

	ev->id = st->id;
	ev->status = st->status;
	if (error_code != 0 || st->status == 0) {
		ev->kind = DV_TP_EV_STREAM_ERROR;
		snprintf(what, sizeof(c->what), "stream closed with HTTP/2 error %s",
		         nghttp2_http2_strerror(error_code));
		ev->what = what;
	} else if (st->oversize) {
		ev->kind = DV_TP_EV_STREAM_ERROR;
		ev->what = "response body over 65535 bytes";
	} else if (st->status != 200) {
		ev->kind = DV_TP_EV_HTTP_STATUS;
	} else if (st->bad_type || st->body_len == 0) {
		ev->kind = DV_TP_EV_STREAM_ERROR;
		ev->what = st->bad_type ? "response is not application/dns-message"
		                        : "empty response body";
	} else {
		ev->kind = DV_TP_EV_ANSWER;
		ev->msg = st->body;
		ev->len = st->body_len;
	}
}

static int on_close(nghttp2_session *h2, int32_t sid, uint32_t error_code, void *user)
{
	dv_tp_conn_t *c = user;
	doh_stream_t *st = nghttp2_session_get_stream_user_data(h2, sid);
	dv_tp_event_t ev = {0};
	int rc;

	if (st == NULL)
		return 0;
	nghttp2_session_set_stream_user_data(h2, sid, NULL);
	stream_unlink(doh(c), st);
	if (st->cancelled) { /* its query already counted: the stream's slot is free again */
		stream_put(doh(c), st);
		return 0;
	}
	stream_event(c, st, error_code, &ev);
	rc = dv_tp_emit(c, &ev);
	stream_put(doh(c), st);
	return rc < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_frame(nghttp2_session *h2, const nghttp2_frame *frame, void *user)
{
	dv_tp_conn_t *c = user;
	dv_tp_event_t ev = {.kind = DV_TP_EV_CLOSED, .goaway = true};

	if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK) &&
	    !doh(c)->settled) {
		dv_tp_event_t set = {.kind = DV_TP_EV_SETTINGS};
		doh(c)->settled = true;
		return dv_tp_emit(c, &set) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
	}
	if (frame->hd.type != NGHTTP2_GOAWAY || c->closed)
		return 0;
	doh(c)->goaway = true;
	c->closed = true;
	ev.status = (int)frame->goaway.error_code;
	return dv_tp_emit(c, &ev) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static ssize_t read_body(nghttp2_session *h2, int32_t sid, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
	doh_stream_t *st = src->ptr;

	return dv_h2_read_body(buf, length, st->req, st->req_len, &st->req_off, flags);
}

/* The request headers of every request on c, built once: POST's order (GET sends the
 * first five). Names and values outlive the session, so nghttp2 need not copy them. */
static void request_template(dv_tp_conn_t *c)
{
	dv_doh_t *d = doh(c);
	const char *auth = c->s->cfg->sni ? c->s->cfg->sni : "localhost";
	bool get = c->s->cfg->doh_get;

	d->path_len = strlen(c->s->path);
	d->nv[0] = DV_H2_NV(":method", get ? "GET" : "POST", get ? 3 : 4);
	d->nv[1] = DV_H2_NV(":scheme", "https", 5);
	d->nv[2] = DV_H2_NV(":authority", auth, strlen(auth));
	d->nv[3] = DV_H2_NV(":path", c->s->path, d->path_len);
	d->nv[4] = DV_H2_NV("accept", "application/dns-message", 23);
	d->nv[5] = DV_H2_NV("content-type", "application/dns-message", 23);
	d->nv[6] = DV_H2_NV("content-length", "", 0);
}

static void doh_free(dv_doh_t *d);

static int doh_attach(dv_tp_conn_t *c)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
	dv_doh_t *d = calloc(1, sizeof(*d));
	int rc = -ENOMEM;

	if (d == NULL || nghttp2_session_callbacks_new(&cb) != 0)
		goto out;
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	/* No query goes out before the server's SETTINGS (doh_capacity), so nghttp2's
	 * assumed limit until then (100) never applies. */
	if (nghttp2_session_client_new(&d->h2, cb, c) != 0)
		goto out;
	if (nghttp2_submit_settings(d->h2, NGHTTP2_FLAG_NONE, set, DV_ARRAY_SIZE(set)) != 0 ||
	    nghttp2_session_set_local_window_size(d->h2, NGHTTP2_FLAG_NONE, 0, DOH_CONN_WINDOW) !=
	        0)
		goto out;
	c->proto = d;
	/* nghttp2's frames wait in c->out only until the TLS machine takes them (or, in
	 * cleartext, the socket): capacity bounds the bytes queued, as for TCP. */
	dv_bq_init(&c->out, DV_TP_UNBOUNDED);
	request_template(c);
	d = NULL;
	rc = 0;
out:
	nghttp2_session_callbacks_del(cb);
	doh_free(d);
	return rc;
}

static void doh_free(dv_doh_t *d)
{
	if (d == NULL)
		return;
	while (d->streams != NULL) {
		doh_stream_t *st = d->streams;
		stream_unlink(d, st);
		stream_free(st);
	}
	while (d->spare != NULL) {
		doh_stream_t *st = d->spare;
		d->spare = st->next;
		stream_free(st);
	}
	nghttp2_session_del(d->h2);
	free(d);
}

static size_t doh_capacity(const dv_tp_conn_t *c)
{
	const dv_doh_t *d = doh(c);
	uint32_t max =
	    nghttp2_session_get_remote_settings(d->h2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);

	if (!d->settled || d->goaway || nghttp2_session_get_next_stream_id(d->h2) > INT32_MAX - 1)
		return 0;
	return d->in_flight >= max ? 0 : max - d->in_flight;
}

static const char *doh_full_why(const dv_tp_conn_t *c)
{
	const dv_doh_t *d = doh(c);

	if (!d->settled)
		return "no SETTINGS from the server yet";
	if (d->goaway)
		return "the server sent GOAWAY";
	if (nghttp2_session_get_next_stream_id(d->h2) > INT32_MAX - 1)
		return "the connection's stream ids are used up";
	if (nghttp2_session_get_remote_settings(d->h2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) ==
	    0)
		return "the server allows no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0)";
	return "every stream the server allows (SETTINGS_MAX_CONCURRENT_STREAMS) is in use";
}

static bool doh_settled(const dv_tp_conn_t *c)
{
	return doh(c)->settled;
}

static size_t doh_in_flight(const dv_tp_conn_t *c)
{
	return doh(c)->in_flight;
}

/* n (below 10^7) in decimal into out; returns the length. */
static size_t decimal(size_t n, char *out)
{
	char tmp[8];
	size_t k = 0, i;

	do {
		tmp[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0 && k < sizeof(tmp));
	for (i = 0; i < k; i++)
		out[i] = tmp[k - 1 - i];
	return k;
}

/* Submit st's POST request; its body is st->req. */
static int32_t request_post(dv_doh_t *d, doh_stream_t *st)
{
	nghttp2_nv nv[DV_ARRAY_SIZE(d->nv)];
	nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_body};

	memcpy(nv, d->nv, sizeof(nv));
	nv[6].value = (uint8_t *)st->clen;
	nv[6].valuelen = decimal(st->req_len, st->clen);
	return nghttp2_submit_request(d->h2, NULL, nv, DV_ARRAY_SIZE(nv), &prd, st);
}

/* Submit a GET request for msg (path?dns=<base64url>); nghttp2 copies the path. */
static int32_t request_get(dv_tp_conn_t *c, doh_stream_t *st, const uint8_t *msg, size_t len)
{
	dv_doh_t *d = doh(c);
	size_t plen = d->path_len;
	nghttp2_nv nv[5];
	char *gp = malloc(plen + 5 + DV_B64URL_ENC_LEN(len) + 1);
	int32_t sid;

	if (gp == NULL)
		return NGHTTP2_ERR_NOMEM;
	memcpy(gp, c->s->path, plen);
	memcpy(gp + plen, strchr(c->s->path, '?') ? "&dns=" : "?dns=", 5);
	memcpy(nv, d->nv, sizeof(nv));
	nv[3].value = (uint8_t *)gp;
	nv[3].valuelen = plen + 5 + dv_b64url_encode(msg, len, gp + plen + 5);
	nv[3].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME;
	sid = nghttp2_submit_request(d->h2, NULL, nv, DV_ARRAY_SIZE(nv), NULL, st);
	free(gp);
	return sid;
}

/* Keep msg as st's POST body. */
static int keep_body(doh_stream_t *st, const uint8_t *msg, size_t len)
{
	if (len > sizeof(st->req_inl)) {
		st->req_heap = malloc(len);
		if (st->req_heap == NULL)
			return -ENOMEM;
		st->req = st->req_heap;
	}
	memcpy(st->req_heap != NULL ? st->req_heap : st->req_inl, msg, len);
	st->req_len = len;
	return 0;
}

static int doh_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	dv_doh_t *d = doh(c);
	bool get = c->s->cfg->doh_get;
	doh_stream_t *st;
	int32_t sid;

	if (doh_capacity(c) == 0)
		return d->goaway ? -EPIPE : -EAGAIN;
	st = stream_get(d);
	if (st == NULL)
		return -ENOMEM;
	st->id = id;
	if (!get && keep_body(st, msg, len) != 0) {
		stream_put(d, st);
		return -ENOMEM;
	}
	sid = get ? request_get(c, st, msg, len) : request_post(d, st);
	if (sid < 0) {
		stream_put(d, st);
		return sid == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE ? -EPIPE : -ENOMEM;
	}
	st->sid = sid;
	stream_link(d, st);
	return 0;
}

static int doh_cancel(dv_tp_conn_t *c, uint64_t id)
{
	dv_doh_t *d = doh(c);
	doh_stream_t *st;

	for (st = d->streams; st != NULL; st = st->next)
		if (st->id == id && !st->cancelled)
			break;
	if (st == NULL)
		return 0;
	st->cancelled = true;
	/* Its close (once the RST_STREAM is written) frees the record and the stream. */
	if (nghttp2_submit_rst_stream(d->h2, NGHTTP2_FLAG_NONE, st->sid, NGHTTP2_CANCEL) != 0)
		return 0;
	return 1;
}

static int doh_pump(dv_tp_conn_t *c);

static int doh_input(void *conn, const uint8_t *data, size_t len)
{
	dv_tp_conn_t *c = conn;
	ssize_t n = nghttp2_session_mem_recv(doh(c)->h2, data, len);

	/* nghttp2 ends a session the server broke (a connection error: it queues GOAWAY and
	 * reads no more) without an error here: the connection is dead, its streams lost. So
	 * too after the server's GOAWAY while streams it left open are still ours: nghttp2
	 * closes none of them (nor sends their resets) once it reads no more. It says so
	 * (want_read) once its GOAWAY is out: queue what it has to send first (the next
	 * output would; a server that sent nothing more would leave them waiting for -t). */
	if (n >= 0 && nghttp2_session_want_write(doh(c)->h2) && doh_pump(c) < 0)
		return dv_tp_proto_error(c, "HTTP/2: cannot queue the session's frames");
	if (n >= 0 && (!doh(c)->goaway || doh(c)->in_flight > 0) &&
	    !nghttp2_session_want_read(doh(c)->h2))
		return dv_tp_proto_error(c,
		                         "HTTP/2: the server broke the protocol (session ended)");
	if (n >= 0)
		return 0;
	if (c->cb_rc < 0)
		return c->cb_rc;
	snprintf(c->what, sizeof(c->what), "HTTP/2: %s", nghttp2_strerror((int)n));
	return dv_tp_proto_error(c, c->what);
}

/* nghttp2's frames into c->out (conn.c hands them to TLS), gathered so that one pump makes
 * as few TLS records as it can. */
static int doh_pump(dv_tp_conn_t *c)
{
	const uint8_t *data;
	ssize_t n;
	int rc;

	while ((n = nghttp2_session_mem_send(doh(c)->h2, &data)) > 0) {
		rc = dv_bq_put(&c->out, data, (size_t)n);
		if (rc < 0)
			return rc;
	}
	return n < 0 ? -EPROTO : 0;
}

static void doh_close(dv_tp_conn_t *c)
{
	nghttp2_session_terminate_session(doh(c)->h2, NGHTTP2_NO_ERROR);
}

static int doh_shared_init(dv_tp_shared_t *s, dv_err_t *err)
{
	s->path = s->cfg->doh_path ? s->cfg->doh_path : "/dns-query";
	if (s->path[0] != '/')
		return dv_err_set(err, -EINVAL, "DoH path '%s' does not start with '/'", s->path);
	return 0;
}

static void doh_detach(dv_tp_conn_t *c)
{
	doh_free(doh(c));
	c->proto = NULL;
}

/* HTTP/2 has no message cut by a close that matters here: the streams still open are lost,
 * which CLOSED says. */
static const char *doh_eof_cut(const dv_tp_conn_t *c)
{
	(void)c;
	return NULL;
}

static const dv_tp_ops_t doh_ops = {
    .shared_init = doh_shared_init,
    .attach = doh_attach,
    .detach = doh_detach,
    .submit = doh_submit,
    .input = doh_input,
    .pump = doh_pump,
    .capacity = doh_capacity,
    .full_why = doh_full_why,
    .cancel = doh_cancel,
    .in_flight = doh_in_flight,
    .settled = doh_settled,
    .eof_cut = doh_eof_cut,
    .close = doh_close,
    .next_deadline = dv_tp_no_deadline,
    .on_deadline = dv_tp_no_expiry,
};

const dv_tp_desc_t dv_tp_doh_desc = {
    .kind = DV_TP_DOH,
    .name = "doh",
    .alias = "https",
    .long_name = "DNS over HTTPS",
    .default_port = 443,
    .tls = true,
    .alpn = "h2",
    .alpn_label = "HTTP/2",
    .setup_what = "TLS handshake and HTTP/2 SETTINGS",
    .sock_type = SOCK_STREAM,
    .answer_ids = true,
    .ops = &doh_ops,
};
