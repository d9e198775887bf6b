/* conn: dv_tp_conn_t (transport.h): TCP and DoT here (framing, TLS), DoH in doh.c. */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OUT_MAX_DEFAULT ((size_t)256 << 10)
#define TLS_UNBOUNDED   ((size_t)1 << 30) /* the connection enforces out_max itself */

void dv_tp_config_init(dv_tp_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = DV_TP_TCP;
}

int dv_tp_kind_parse(const char *s, dv_tp_kind_t *out)
{
	if (strcasecmp(s, "tcp") == 0)
		*out = DV_TP_TCP;
	else if (strcasecmp(s, "dot") == 0 || strcasecmp(s, "tls") == 0)
		*out = DV_TP_DOT;
	else if (strcasecmp(s, "doh") == 0 || strcasecmp(s, "https") == 0)
		*out = DV_TP_DOH;
	else
		return -EINVAL;
	return 0;
}

const char *dv_tp_kind_name(dv_tp_kind_t k)
{
	return k == DV_TP_DOT ? "dot" : k == DV_TP_DOH ? "doh" : "tcp";
}

int dv_tp_shared_new(dv_tp_shared_t **out, const dv_tp_config_t *cfg, dv_err_t *err)
{
	dv_tp_shared_t *s = calloc(1, sizeof(*s));
	dv_tls_ctx_config_t tc = {0};
	int rc = 0;

	*out = NULL;
	if (s == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	s->cfg = cfg;
	s->out_max = cfg->out_max ? cfg->out_max : OUT_MAX_DEFAULT;
	s->path = cfg->doh_path ? cfg->doh_path : "/dns-query";
	if (cfg->kind == DV_TP_DOH && s->path[0] != '/') {
		rc = dv_err_set(err, -EINVAL, "DoH path '%s' does not start with '/'", s->path);
		goto out;
	}
	if (cfg->kind != DV_TP_TCP) {
		tc.ca_file = cfg->ca_file;
		tc.no_resume = cfg->no_resume;
		tc.min_version = cfg->tls_min;
		tc.max_version = cfg->tls_max;
		if (cfg->kind == DV_TP_DOH) {
			tc.alpn = "\x02h2";
			tc.alpn_len = 3;
			tc.keep_buffers = true; /* many small records each way */
		}
		rc = dv_tls_ctx_new(&s->tls, &tc, err);
	}
out:
	if (rc == 0)
		*out = s;
	else
		dv_tp_shared_free(s);
	return rc;
}

void dv_tp_shared_free(dv_tp_shared_t *s)
{
	if (s == NULL)
		return;
	dv_tls_ctx_free(s->tls);
	free(s);
}

void dv_tp_shared_handshakes(const dv_tp_shared_t *s, uint64_t *full, uint64_t *resumed)
{
	*full = *resumed = 0;
	if (s->tls != NULL)
		dv_tls_ctx_counts(s->tls, full, resumed);
}

int dv_tp_emit(dv_tp_conn_t *c, const dv_tp_event_t *ev)
{
	int rc = c->fn(c->ctx, ev);
	if (rc < 0 && c->cb_rc == 0)
		c->cb_rc = rc;
	return rc;
}

int dv_tp_proto_error(dv_tp_conn_t *c, const char *what)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_PROTO_ERROR, .what = what};
	int rc;

	if (c->dead)
		return -EPROTO;
	c->dead = true;
	rc = dv_tp_emit(c, &ev);
	return rc < 0 ? rc : -EPROTO;
}

static int emit_closed(dv_tp_conn_t *c)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_CLOSED};

	if (c->closed || c->dead)
		return 0;
	c->closed = true;
	return dv_tp_emit(c, &ev);
}

int dv_tp_conn_new(dv_tp_conn_t **out, dv_tp_shared_t *s, dv_tp_event_fn fn, void *ctx)
{
	dv_tp_conn_t *c = calloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (c == NULL)
		return -ENOMEM;
	c->s = s;
	c->fn = fn;
	c->ctx = ctx;
	dv_frame_reader_init(&c->rd);
	dv_bq_init(&c->out, s->cfg->kind == DV_TP_DOH ? TLS_UNBOUNDED : s->out_max);
	if (s->cfg->kind == DV_TP_DOT || (s->cfg->kind == DV_TP_DOH && !s->cfg->doh_cleartext))
		rc = dv_tls_new(&c->tls, s->tls, s->cfg->sni, TLS_UNBOUNDED);
	if (rc == 0 && s->cfg->kind == DV_TP_DOH)
		rc = dv_doh_new(c);
	if (rc != 0) {
		dv_tp_conn_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void dv_tp_conn_free(dv_tp_conn_t *c)
{
	if (c == NULL)
		return;
	dv_doh_free(c->doh);
	dv_tls_free(c->tls);
	dv_frame_reader_free(&c->rd);
	dv_bq_free(&c->out);
	free(c);
}

static size_t queued(const dv_tp_conn_t *c)
{
	return dv_bq_len(&c->out) + (c->tls ? dv_bq_len(dv_tls_out(c->tls)) : 0);
}

size_t dv_tp_capacity(const dv_tp_conn_t *c)
{
	if (c->closed || c->dead)
		return 0;
	/* Room for one more message of the largest size a query can have in practice (DoH:
	 * a server that does not read stops the queries as a TCP one does). */
	if (queued(c) + 2 + 512 > c->s->out_max)
		return 0;
	if (c->doh != NULL)
		return dv_doh_capacity(c);
	return SIZE_MAX;
}

const char *dv_tp_full_why(const dv_tp_conn_t *c)
{
	if (dv_tp_capacity(c) > 0)
		return NULL;
	if (c->closed || c->dead)
		return "the connection is closed";
	if (queued(c) + 2 + 512 > c->s->out_max)
		return "the server does not read its queries (the bytes queued for it are at the "
		       "limit)";
	return c->doh != NULL ? dv_doh_full_why(c) : NULL;
}

int dv_tp_cancel(dv_tp_conn_t *c, uint64_t id)
{
	if (c->doh == NULL || c->dead)
		return 0;
	return dv_doh_cancel(c, id);
}

size_t dv_tp_in_flight(const dv_tp_conn_t *c)
{
	return c->doh != NULL ? dv_doh_in_flight(c) : 0;
}

int dv_tp_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	if (c->closed || c->dead)
		return -EPIPE;
	if (len == 0 || len > DV_FRAME_MAX)
		return -EMSGSIZE;
	if (c->doh != NULL)
		return dv_doh_submit(c, msg, len, id);
	if (queued(c) + len + 2 > c->s->out_max)
		return -EAGAIN;
	return dv_frame_put(&c->out, msg, len) == 0 ? 0 : -EAGAIN;
}

static int on_message(void *ctx, const uint8_t *msg, size_t len)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_ANSWER, .msg = msg, .len = len};
	return dv_tp_emit(ctx, &ev);
}

static int on_plain(void *ctx, const uint8_t *data, size_t len)
{
	dv_tp_conn_t *c = ctx;
	int rc = dv_frame_read(&c->rd, data, len, on_message, c);
	if (rc == -EPROTO)
		return dv_tp_proto_error(c, "an answer with a zero length prefix");
	return rc;
}

/* After TLS input: the handshake event, the ALPN check, close_notify. */
static int tls_events(dv_tp_conn_t *c)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_HANDSHAKE};
	int rc;

	if (!c->hs_reported && dv_tls_handshake_done(c->tls)) {
		c->hs_reported = true;
		ev.resumed = dv_tls_resumed(c->tls);
		if (c->doh != NULL && !dv_tls_alpn_is(c->tls, "h2"))
			return dv_tp_proto_error(c, "the server did not agree to HTTP/2 (ALPN h2)");
		rc = dv_tp_emit(c, &ev);
		if (rc < 0)
			return rc;
	}
	if (dv_tls_peer_closed(c->tls))
		return emit_closed(c);
	return 0;
}

int dv_tp_input(dv_tp_conn_t *c, const uint8_t *data, size_t len)
{
	int rc;

	if (c->dead)
		return -EPROTO;
	c->cb_rc = 0;
	if (c->tls == NULL) {
		rc = c->doh ? dv_doh_plain(c, data, len) : on_plain(c, data, len);
		return rc;
	}
	rc = dv_tls_feed(c->tls, data, len, c->doh ? dv_doh_plain : on_plain, c);
	if (rc == -EPROTO && !c->dead)
		return dv_tp_proto_error(c, dv_tls_error(c->tls));
	if (rc < 0)
		return c->cb_rc < 0 ? c->cb_rc : rc;
	return tls_events(c);
}

int dv_tp_eof(dv_tp_conn_t *c)
{
	if (c->dead || c->closed)
		return 0;
	if (c->tls != NULL && !dv_tls_handshake_done(c->tls))
		return dv_tp_proto_error(c, "the server closed the connection during the TLS "
		                            "handshake");
	if (c->doh == NULL && !dv_frame_reader_idle(&c->rd))
		return dv_tp_proto_error(c, "the server closed the connection inside a message");
	return emit_closed(c);
}

/* Move what the layers above TLS queued into the TLS machine. */
static int pump(dv_tp_conn_t *c)
{
	int rc = 0;

	if (c->dead)
		return 0;
	if (c->doh != NULL)
		return dv_doh_pump(c);
	if (c->tls == NULL)
		return 0;
	if (dv_bq_len(&c->out) > 0 && dv_tls_handshake_done(c->tls)) {
		rc = dv_tls_write(c->tls, dv_bq_data(&c->out), dv_bq_len(&c->out));
		if (rc == 0)
			dv_bq_consume(&c->out, dv_bq_len(&c->out));
	}
	return rc;
}

static dv_bq_t *wire(dv_tp_conn_t *c)
{
	pump(c);
	return c->tls != NULL ? dv_tls_out(c->tls) : &c->out;
}

int dv_tp_output(dv_tp_conn_t *c, struct iovec *iov, int max)
{
	dv_bq_t *q = wire(c);

	if (max < 1 || dv_bq_len(q) == 0)
		return 0;
	iov[0].iov_base = (void *)dv_bq_data(q);
	iov[0].iov_len = dv_bq_len(q);
	return 1;
}

size_t dv_tp_output_len(dv_tp_conn_t *c)
{
	return dv_bq_len(wire(c));
}

void dv_tp_consume(dv_tp_conn_t *c, size_t n)
{
	dv_bq_consume(c->tls != NULL ? dv_tls_out(c->tls) : &c->out, n);
}

void dv_tp_close(dv_tp_conn_t *c)
{
	if (c->doh != NULL)
		dv_doh_close(c);
	pump(c);
	if (c->tls != NULL)
		dv_tls_close(c->tls);
	c->closed = true;
}

bool dv_tp_ready(const dv_tp_conn_t *c)
{
	return (c->tls == NULL || dv_tls_handshake_done(c->tls)) &&
	       (c->doh == NULL || dv_doh_settled(c));
}
