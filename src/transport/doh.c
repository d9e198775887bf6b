/* doh: DNS over HTTPS (RFC 8484) on HTTP/2: an nghttp2 client session over the TLS machine. */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#define DOH_BODY_MAX     DV_FRAME_MAX
#define DOH_DEFAULT_PEER 100 /* streams assumed before the server's SETTINGS arrive */

/* One query in flight: its id, POST body (inline), HTTP status, response body. */
typedef struct doh_stream {
	struct doh_stream *prev, *next; /* the connection's open streams */
	uint64_t id;
	int status;
	bool oversize, bad_type;
	uint8_t *body;
	size_t body_len, body_cap;
	size_t req_len, req_off;
	uint8_t req[];
} doh_stream_t;

struct dv_doh {
	nghttp2_session *h2;
	doh_stream_t *streams;
	size_t in_flight;
	bool goaway;
};

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
	free(st->body);
	free(st);
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
		cap = st->body_cap ? st->body_cap : 512;
		while (cap < st->body_len + len)
			cap *= 2;
		nb = realloc(st->body, cap);
		if (nb == NULL)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
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
	stream_unlink(c->doh, st);
	stream_event(c, st, error_code, &ev);
	rc = dv_tp_emit(c, &ev);
	stream_free(st);
	return rc < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_frame(nghttp2_session *h2, const nghttp2_frame *frame, void *user)
{
	dv_tp_conn_t *c = user;
	dv_tp_event_t ev = {.kind = DV_TP_EV_CLOSED, .goaway = true};

	if (frame->hd.type != NGHTTP2_GOAWAY || c->closed)
		return 0;
	c->doh->goaway = true;
	c->closed = true;
	ev.status = (int)frame->goaway.error_code;
	return dv_tp_emit(c, &ev) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static ssize_t read_body(nghttp2_session *h2, int32_t sid, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
	doh_stream_t *st = src->ptr;
	size_t n = st->req_len - st->req_off;

	if (n > length)
		n = length;
	memcpy(buf, st->req + st->req_off, n);
	st->req_off += n;
	if (st->req_off == st->req_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

int dv_doh_new(dv_tp_conn_t *c)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
	dv_doh_t *d = calloc(1, sizeof(*d));
	int rc = -ENOMEM;

	if (d == NULL || nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto out;
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_option_set_peer_max_concurrent_streams(opt, DOH_DEFAULT_PEER);
	if (nghttp2_session_client_new2(&d->h2, cb, c, opt) != 0)
		goto out;
	if (nghttp2_submit_settings(d->h2, NGHTTP2_FLAG_NONE, set, DV_ARRAY_SIZE(set)) != 0)
		goto out;
	c->doh = d;
	d = NULL;
	rc = 0;
out:
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	dv_doh_free(d);
	return rc;
}

void dv_doh_free(dv_doh_t *d)
{
	if (d == NULL)
		return;
	while (d->streams != NULL) {
		doh_stream_t *st = d->streams;
		stream_unlink(d, st);
		stream_free(st);
	}
	nghttp2_session_del(d->h2);
	free(d);
}

size_t dv_doh_capacity(const dv_tp_conn_t *c)
{
	const dv_doh_t *d = c->doh;
	uint32_t max =
	    nghttp2_session_get_remote_settings(d->h2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);

	if (d->goaway || nghttp2_session_get_next_stream_id(d->h2) > INT32_MAX - 1)
		return 0;
	return d->in_flight >= max ? 0 : max - d->in_flight;
}

size_t dv_doh_in_flight(const dv_tp_conn_t *c)
{
	return c->doh->in_flight;
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url without padding (RFC 4648 section 5, RFC 8484 section 4.1); returns the length. */
static size_t base64url(const uint8_t *in, size_t len, char *out)
{
	size_t i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
		out[o++] = b64url[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[(v >> 12) & 63];
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64url[v >> 18];
		out[o++] = b64url[(v >> 12) & 63];
		out[o++] = b64url[(v >> 6) & 63];
	}
	out[o] = '\0';
	return o;
}

#define NV(n, v, vl)                                                                               \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl), NGHTTP2_NV_FLAG_NONE          \
	}

/* The request headers; get_path is the GET path (NULL for POST). */
static int32_t request(dv_tp_conn_t *c, doh_stream_t *st, const char *get_path)
{
	const char *auth = c->s->cfg->sni ? c->s->cfg->sni : "localhost";
	const char *path = get_path ? get_path : c->s->path;
	char clen[16];
	int n = snprintf(clen, sizeof(clen), "%zu", st->req_len);
	nghttp2_nv nv[] = {
	    NV(":method", get_path ? "GET" : "POST", get_path ? 3 : 4),
	    NV(":scheme", "https", 5),
	    NV(":authority", auth, strlen(auth)),
	    NV(":path", path, strlen(path)),
	    NV("accept", "application/dns-message", 23),
	    NV("content-type", "application/dns-message", 23),
	    NV("content-length", clen, (size_t)n),
	};
	nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_body};

	if (get_path != NULL)
		return nghttp2_submit_request(c->doh->h2, NULL, nv, 5, NULL, st);
	return nghttp2_submit_request(c->doh->h2, NULL, nv, DV_ARRAY_SIZE(nv), &prd, st);
}

int dv_doh_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	bool get = c->s->cfg->doh_get;
	size_t plen = strlen(c->s->path);
	doh_stream_t *st;
	char *gp = NULL;
	int32_t sid;

	if (dv_doh_capacity(c) == 0)
		return c->doh->goaway ? -EPIPE : -EAGAIN;
	st = calloc(1, sizeof(*st) + (get ? 0 : len));
	if (get)
		gp = malloc(plen + 5 + (len + 2) / 3 * 4 + 1);
	if (st == NULL || (get && gp == NULL)) {
		free(st);
		free(gp);
		return -ENOMEM;
	}
	st->id = id;
	if (get) {
		memcpy(gp, c->s->path, plen);
		memcpy(gp + plen, strchr(c->s->path, '?') ? "&dns=" : "?dns=", 5);
		base64url(msg, len, gp + plen + 5);
	} else {
		memcpy(st->req, msg, len);
		st->req_len = len;
	}
	sid = request(c, st, gp);
	free(gp);
	if (sid < 0) {
		stream_free(st);
		return sid == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE ? -EPIPE : -ENOMEM;
	}
	stream_link(c->doh, st);
	return 0;
}

int dv_doh_plain(void *conn, const uint8_t *data, size_t len)
{
	dv_tp_conn_t *c = conn;
	ssize_t n = nghttp2_session_mem_recv(c->doh->h2, data, len);

	if (n >= 0)
		return 0;
	if (c->cb_rc < 0)
		return c->cb_rc;
	snprintf(c->what, sizeof(c->what), "HTTP/2: %s", nghttp2_strerror((int)n));
	return dv_tp_proto_error(c, c->what);
}

int dv_doh_pump(dv_tp_conn_t *c)
{
	const uint8_t *data;
	ssize_t n;
	int rc;

	if (!dv_tls_handshake_done(c->tls))
		return 0;
	/* Gathered first, so that one pump makes as few TLS records as it can. */
	while ((n = nghttp2_session_mem_send(c->doh->h2, &data)) > 0) {
		rc = dv_bq_put(&c->out, data, (size_t)n);
		if (rc < 0)
			return rc;
	}
	if (n < 0)
		return -EPROTO;
	if (dv_bq_len(&c->out) == 0)
		return 0;
	rc = dv_tls_write(c->tls, dv_bq_data(&c->out), dv_bq_len(&c->out));
	dv_bq_consume(&c->out, dv_bq_len(&c->out));
	return rc;
}

void dv_doh_close(dv_tp_conn_t *c)
{
	nghttp2_session_terminate_session(c->doh->h2, NGHTTP2_NO_ERROR);
}
