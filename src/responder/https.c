/* https: DNS over HTTPS (RFC 8484) for the responder: an nghttp2 server session per connection. */
#include "config.h"

#include "responder/https.h"

#include "base/b64url.h"
#include "base/dns.h"
#include "base/h2.h"
#include "base/dns.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY_MAX    65535u
#define REQ_INLINE  512 /* query and answer bytes kept inside the request record */
#define CONN_WINDOW ((int32_t)1 << 24)

enum method { M_NONE = 0, M_GET, M_POST, M_OTHER };

/* One request: its body (the query, then the answer), reused after the stream closes. */
typedef struct req {
	struct req *next; /* spares */
	struct req *own;  /* every record of the session (freed with it) */
	enum method method;
	bool path_ok, has_dns, bad_type, bad, done, refused;
	uint8_t *body; /* inl, or a heap block of cap bytes (kept on reuse) */
	size_t len, cap, off;
	char clen[8]; /* content-length value (nghttp2 does not copy it) */
	uint8_t inl[REQ_INLINE];
} req_t;

struct dv_https {
	nghttp2_session *h2;
	const dv_https_config_t *cfg;
	dv_https_counts_t *k;
	size_t path_len;
	req_t *spare; /* records free for reuse: at most as many as streams were open at once */
	req_t *own;
	uint64_t nq, nresp; /* requests taken, responses sent */
	size_t held;        /* bytes of this session's open requests (its budget's use) */
};

/* Take n bytes of both budgets (force: even past them): true, or false (none taken). */
static bool charge(dv_https_t *h, size_t n, bool force)
{
	if (!force && (h->held + n > h->cfg->conn_budget || h->k->held + n > h->cfg->total_budget))
		return false;
	h->held += n;
	h->k->held += n;
	if (h->k->held > h->k->held_max)
		h->k->held_max = h->k->held;
	return true;
}

static void uncharge(dv_https_t *h, size_t n)
{
	h->held -= n;
	h->k->held -= n;
}

/* r's heap block (if any) freed and uncharged: back to its inline buffer. */
static void body_shrink(dv_https_t *h, req_t *r)
{
	if (r->body == r->inl)
		return;
	uncharge(h, r->cap);
	free(r->body);
	r->body = r->inl;
	r->cap = sizeof(r->inl);
	r->len = r->off = 0;
}

/* A record for a new request, charged to the budgets: NULL when out of budget (*over) or
 * memory. */
static req_t *req_get(dv_https_t *h, bool *over)
{
	req_t *r = h->spare;

	*over = !charge(h, sizeof(*r), false);
	if (*over)
		return NULL;
	if (r != NULL) {
		h->spare = r->next;
	} else {
		r = malloc(sizeof(*r));
		if (r == NULL) {
			uncharge(h, sizeof(*r));
			return NULL;
		}
		r->body = r->inl;
		r->cap = sizeof(r->inl);
		r->own = h->own;
		h->own = r;
	}
	r->method = M_NONE;
	r->path_ok = r->has_dns = r->bad_type = r->bad = r->done = r->refused = false;
	r->len = r->off = 0;
	return r;
}

static void req_free(req_t *r)
{
	if (r->body != r->inl)
		free(r->body);
	free(r);
}

/* The stream closed: its bytes go back to the budgets (a spare keeps no heap block). */
static void req_put(dv_https_t *h, req_t *r)
{
	body_shrink(h, r);
	uncharge(h, sizeof(*r));
	r->next = h->spare;
	h->spare = r;
}

/* Room for n more body bytes (at most BODY_MAX in all), charged to the budgets unless
 * force: 0, -1 (the request is bad), or -2 (past a budget: nothing taken). */
static int reserve(dv_https_t *h, req_t *r, size_t n, bool force)
{
	size_t cap = r->cap, old;
	uint8_t *nb;

	if (r->len + n > BODY_MAX)
		return -1;
	if (r->len + n <= r->cap)
		return 0;
	while (cap < r->len + n)
		cap *= 2;
	old = r->body != r->inl ? r->cap : 0; /* the block replaced: only the growth is new */
	if (!charge(h, cap - old, force))
		return -2;
	nb = malloc(cap);
	if (nb == NULL) {
		uncharge(h, cap - old);
		return -1;
	}
	memcpy(nb, r->body, r->len);
	if (r->body != r->inl)
		free(r->body);
	r->body = nb;
	r->cap = cap;
	return 0;
}

/* A request past a budget: its stream reset (REFUSED_STREAM: the client may ask again),
 * its body freed, counted once. */
static void refuse(dv_https_t *h, int32_t sid, req_t *r)
{
	h->k->refused++;
	nghttp2_submit_rst_stream(h->h2, NGHTTP2_FLAG_NONE, sid, NGHTTP2_REFUSED_STREAM);
	if (r != NULL) {
		r->refused = r->done = true;
		body_shrink(h, r);
	}
}

/* Decode unpadded base64url s[0..n) into r's body: 0, -1 (bad input) or -2 (budget). */
static int b64url_decode(dv_https_t *h, req_t *r, const uint8_t *s, size_t n)
{
	long got;
	int rc;

	if (n % 4 == 1)
		return -1;
	if ((rc = reserve(h, r, DV_B64URL_DEC_MAX(n) + 1, false)) != 0)
		return rc;
	got = dv_b64url_decode((const char *)s, n, r->body + r->len);
	if (got < 0)
		return -1;
	r->len += (size_t)got;
	return 0;
}

/* The :path value: the path must be cfg->path; a GET takes its query from "dns=". */
static void take_path(dv_https_t *h, req_t *r, const uint8_t *v, size_t n)
{
	const uint8_t *q = memchr(v, '?', n), *p, *end = v + n;
	size_t plen = q != NULL ? (size_t)(q - v) : n;

	r->path_ok = plen == h->path_len && memcmp(v, h->cfg->path, plen) == 0;
	if (q == NULL || !r->path_ok)
		return;
	for (p = q + 1; p < end;) {
		const uint8_t *amp = memchr(p, '&', (size_t)(end - p));
		const uint8_t *e = amp != NULL ? amp : end;
		if (e - p >= 4 && memcmp(p, "dns=", 4) == 0 && !r->has_dns) {
			r->has_dns = true;
			r->len = 0;
			int rc = b64url_decode(h, r, p + 4, (size_t)(e - p - 4));
			r->bad = rc == -1;
			r->refused = rc == -2; /* refused by on_header */
		}
		p = e + 1;
	}
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	dv_https_t *h = user;
	req_t *r;
	bool over;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	r = req_get(h, &over);
	if (r == NULL && over) {
		refuse(h, f->hd.stream_id, NULL);
		return 0;
	}
	if (r == NULL)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets this stream */
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, r);
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
	req_t *r = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);

	(void)flags;
	if (r == NULL || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
		r->method = valuelen == 3 && memcmp(value, "GET", 3) == 0    ? M_GET
		            : valuelen == 4 && memcmp(value, "POST", 4) == 0 ? M_POST
		                                                             : M_OTHER;
	} else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		take_path(user, r, value, valuelen);
		if (r->refused && !r->done)
			refuse(user, f->hd.stream_id, r);
	} else if (namelen == 12 && memcmp(name, "content-type", 12) == 0) {
		r->bad_type =
		    !(valuelen == 23 && memcmp(value, "application/dns-message", 23) == 0);
	}
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data, size_t len,
                   void *user)
{
	req_t *r = nghttp2_session_get_stream_user_data(s, sid);

	(void)flags;
	if (r == NULL || r->method != M_POST || r->done)
		return 0;
	if (r->has_dns) { /* a POST to "?dns=...": its body is the query */
		r->has_dns = r->bad = false;
		r->len = 0;
	}
	if (r->bad)
		return 0;
	switch (reserve(user, r, len, false)) {
	case 0:
		break;
	case -2:
		refuse(user, sid, r);
		return 0;
	default:
		r->bad = true;
		return 0;
	}
	memcpy(r->body + r->len, data, len);
	r->len += len;
	return 0;
}

static ssize_t read_answer(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t length,
                           uint32_t *flags, nghttp2_data_source *src, void *user)
{
	req_t *r = src->ptr;

	(void)s;
	(void)sid;
	(void)user;
	return dv_h2_read_body(buf, length, r->body, r->len, &r->off, flags);
}

/* The status of a whole request; for 200 its answer replaces the query in the body. */
static int decide(dv_https_t *h, req_t *r)
{
	int n;

	if (r->method != M_GET && r->method != M_POST)
		return 405;
	if (!r->path_ok)
		return 404;
	if (r->method == M_POST && r->bad_type)
		return 415;
	if (r->bad || (r->method == M_GET && !r->has_dns) || r->len < DV_DNS_HEADER_LEN)
		return 400;
	n = dv_answer_build(r->body, r->len, h->cfg->scratch, h->cfg->scratch_len, &h->cfg->opts);
	if (n <= 0)
		return 400;
	r->len = 0;
	if (reserve(h, r, (size_t)n, true) != 0) /* the answer: never refused */
		return 400;
	memcpy(r->body, h->cfg->scratch, (size_t)n);
	r->len = (size_t)n;
	return 200;
}

static void tally(dv_https_counts_t *k, int status)
{
	switch (status) {
	case 200:
		k->s200++;
		break;
	case 400:
		k->s400++;
		break;
	case 404:
		k->s404++;
		break;
	case 405:
		k->s405++;
		break;
	default:
		k->s415++;
		break;
	}
}

static int respond(dv_https_t *h, int32_t sid, req_t *r)
{
	static const char *const codes[] = {"200", "400", "404", "405", "415"};
	int status = decide(h, r);
	const char *code = codes[status == 200   ? 0
	                         : status == 400 ? 1
	                         : status == 404 ? 2
	                         : status == 405 ? 3
	                                         : 4];
	nghttp2_nv nv[3];
	nghttp2_data_provider prd = {.source.ptr = r, .read_callback = read_answer};

	r->done = true;
	h->nq++;
	h->k->received++;
	tally(h->k, status);
	nv[0] = DV_H2_NV(":status", code, 3);
	if (status != 200)
		return nghttp2_submit_response(h->h2, sid, nv, 1, NULL);
	snprintf(r->clen, sizeof(r->clen), "%zu", r->len);
	nv[1] = DV_H2_NV("content-type", "application/dns-message", 23);
	nv[2] = DV_H2_NV("content-length", r->clen, strlen(r->clen));
	return nghttp2_submit_response(h->h2, sid, nv, 3, &prd);
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	req_t *r;

	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	r = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
	if (r == NULL || r->done)
		return 0;
	return respond(user, f->hd.stream_id, r) != 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	dv_https_t *h = user;

	(void)s;
	if (!(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	if (f->hd.type == NGHTTP2_DATA) {
		h->k->answered++;
		h->nresp++;
	} else if (f->hd.type == NGHTTP2_HEADERS) {
		h->nresp++;
	}
	return 0;
}

static int on_close(nghttp2_session *s, int32_t sid, uint32_t error_code, void *user)
{
	req_t *r = nghttp2_session_get_stream_user_data(s, sid);

	(void)error_code;
	if (r != NULL) {
		nghttp2_session_set_stream_user_data(s, sid, NULL);
		req_put(user, r);
	}
	return 0;
}

static int session_new(dv_https_t *h)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_settings_entry set[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, h->cfg->max_streams},
	    {NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
	int rc = -ENOMEM;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return -ENOMEM;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	if (nghttp2_session_server_new(&h->h2, cb, h) != 0)
		goto out;
	if (nghttp2_submit_settings(h->h2, NGHTTP2_FLAG_NONE, set, 2) != 0 ||
	    nghttp2_session_set_local_window_size(h->h2, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW) != 0)
		goto out;
	rc = 0;
out:
	nghttp2_session_callbacks_del(cb);
	return rc;
}

int dv_https_new(dv_https_t **out, const dv_https_config_t *cfg, dv_https_counts_t *k)
{
	dv_https_t *h = calloc(1, sizeof(*h));
	int rc;

	*out = NULL;
	if (h == NULL)
		return -ENOMEM;
	h->cfg = cfg;
	h->k = k;
	h->path_len = strlen(cfg->path);
	rc = session_new(h);
	if (rc != 0) {
		dv_https_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

int dv_https_recv(dv_https_t *h, const uint8_t *data, size_t len)
{
	ssize_t n = nghttp2_session_mem_recv(h->h2, data, len);

	return n < 0 ? -EPROTO : 0;
}

ssize_t dv_https_send(dv_https_t *h, const uint8_t **data)
{
	ssize_t n = nghttp2_session_mem_send(h->h2, data);

	return n < 0 ? -EPROTO : n;
}

bool dv_https_done(const dv_https_t *h)
{
	return !nghttp2_session_want_read(h->h2) && !nghttp2_session_want_write(h->h2);
}

uint64_t dv_https_unanswered(const dv_https_t *h)
{
	return h->nq - h->nresp;
}

void dv_https_free(dv_https_t *h)
{
	if (h == NULL)
		return;
	h->k->held -= h->held; /* its open requests' bytes go back to the total budget */
	nghttp2_session_del(h->h2);
	while (h->own != NULL) {
		req_t *r = h->own;
		h->own = r->own;
		req_free(r);
	}
	free(h);
}
