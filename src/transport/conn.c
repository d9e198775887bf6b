/* conn: dv_tp_conn_t (transport.h) for every kind: the state, bytes and TLS they share; what
 * differs is the kind's row of the table (kinds.c) and its operations (tcp.c, doh.c). */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_MAX_DEFAULT ((size_t)256 << 10)

void dv_tp_config_init(dv_tp_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = DV_TP_TCP;
}

/* The TLS context of a kind with TLS: the descriptor's ALPN, the options. */
static int shared_tls(dv_tp_shared_t *s, dv_err_t *err)
{
	const dv_tp_config_t *cfg = s->cfg;
	dv_tls_ctx_config_t tc = {0};
	size_t n;

	tc.ca_file = cfg->ca_file;
	tc.no_resume = cfg->no_resume;
	tc.min_version = cfg->tls_min;
	tc.max_version = cfg->tls_max;
	if (s->d->alpn != NULL) {
		n = strlen(s->d->alpn);
		if (n + 1 > sizeof(s->alpn))
			return dv_err_set(err, -EINVAL, "ALPN '%s' is too long", s->d->alpn);
		s->alpn[0] = (uint8_t)n;
		memcpy(s->alpn + 1, s->d->alpn, n);
		tc.alpn = (const char *)s->alpn;
		tc.alpn_len = n + 1;
		tc.keep_buffers = true; /* an application protocol: many small records each way */
	}
	return dv_tls_ctx_new(&s->tls, &tc, err);
}

int dv_tp_shared_new(dv_tp_shared_t **out, const dv_tp_config_t *cfg, dv_err_t *err)
{
	dv_tp_shared_t *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (s == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	s->cfg = cfg;
	s->d = dv_tp_config_desc(cfg);
	s->out_max = cfg->out_max ? cfg->out_max : OUT_MAX_DEFAULT;
	rc = s->d->ops->shared_init(s, err);
	if (rc == 0 && s->d->tls && !s->d->own_tls)
		rc = shared_tls(s, err);
	if (rc != 0) {
		dv_tp_shared_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void dv_tp_shared_free(dv_tp_shared_t *s)
{
	if (s == NULL)
		return;
	dv_tls_ctx_free(s->tls);
	free(s->session);
	free(s);
}

void dv_tp_shared_handshakes(const dv_tp_shared_t *s, uint64_t *full, uint64_t *resumed)
{
	*full = s->own_full;
	*resumed = s->own_resumed;
	if (s->tls != NULL)
		dv_tls_ctx_counts(s->tls, full, resumed);
}

int dv_tp_conn_new(dv_tp_conn_t **out, dv_tp_shared_t *s, dv_tp_event_fn fn, void *ctx)
{
	dv_tp_conn_t *c = calloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (c == NULL)
		return -ENOMEM;
	c->s = s;
	c->ops = s->d->ops;
	c->fn = fn;
	c->ctx = ctx;
	c->dgram = s->d->sock_type == SOCK_DGRAM;
	dv_frame_reader_init(&c->rd);
	dv_bq_init(&c->out, s->out_max);
	if (s->tls != NULL && !s->cfg->doh_cleartext)
		rc = dv_tls_new(&c->tls, s->tls, s->cfg->sni, DV_TP_UNBOUNDED);
	if (rc == 0)
		rc = c->ops->attach(c);
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
	c->ops->detach(c);
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
	return c->ops->capacity(c);
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
	return c->ops->full_why(c);
}

int dv_tp_cancel(dv_tp_conn_t *c, uint64_t id)
{
	if (c->dead)
		return 0;
	return c->ops->cancel(c, id);
}

size_t dv_tp_in_flight(const dv_tp_conn_t *c)
{
	return c->ops->in_flight(c);
}

int dv_tp_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	if (c->closed || c->dead)
		return -EPIPE;
	if (len == 0 || len > DV_FRAME_MAX)
		return -EMSGSIZE;
	return c->ops->submit(c, msg, len, id);
}

/* After TLS input: the handshake event, the ALPN check, close_notify. */
static int tls_events(dv_tp_conn_t *c)
{
	const dv_tp_desc_t *d = c->s->d;
	dv_tp_event_t ev = {.kind = DV_TP_EV_HANDSHAKE};
	int rc;

	if (!c->hs_reported && dv_tls_handshake_done(c->tls)) {
		c->hs_reported = true;
		ev.resumed = dv_tls_resumed(c->tls);
		if (d->alpn != NULL && !dv_tls_alpn_is(c->tls, d->alpn)) {
			snprintf(c->what, sizeof(c->what),
			         "the server did not agree to %s (ALPN %s)", d->alpn_label,
			         d->alpn);
			return dv_tp_proto_error(c, c->what);
		}
		rc = dv_tp_emit(c, &ev);
		if (rc < 0)
			return rc;
	}
	if (dv_tls_peer_closed(c->tls))
		return dv_tp_emit_closed(c);
	return 0;
}

int dv_tp_input(dv_tp_conn_t *c, const uint8_t *data, size_t len)
{
	int rc;

	if (c->dead)
		return -EPROTO;
	c->cb_rc = 0;
	if (c->tls == NULL)
		return c->ops->input(c, data, len);
	rc = dv_tls_feed(c->tls, data, len, c->ops->input, c);
	if (rc == -EPROTO && !c->dead)
		return dv_tp_proto_error(c, dv_tls_error(c->tls));
	if (rc < 0)
		return c->cb_rc < 0 ? c->cb_rc : rc;
	return tls_events(c);
}

int dv_tp_eof(dv_tp_conn_t *c)
{
	const char *cut;

	if (c->dead || c->closed)
		return 0;
	if (c->tls != NULL && !dv_tls_handshake_done(c->tls))
		return dv_tp_proto_error(c, "the server closed the connection during the TLS "
		                            "handshake");
	cut = c->ops->eof_cut(c);
	if (cut != NULL)
		return dv_tp_proto_error(c, cut);
	return dv_tp_emit_closed(c);
}

/* Move what the protocol has to send into c->out, then (with TLS, once its handshake is
 * done) c->out into the TLS machine. */
static int pump(dv_tp_conn_t *c)
{
	int rc;

	if (c->dead || (c->tls != NULL && !dv_tls_handshake_done(c->tls)))
		return 0;
	rc = c->ops->pump(c);
	if (rc < 0 || c->tls == NULL || dv_bq_len(&c->out) == 0)
		return rc;
	rc = dv_tls_write(c->tls, dv_bq_data(&c->out), dv_bq_len(&c->out));
	if (rc == 0)
		dv_bq_consume(&c->out, dv_bq_len(&c->out));
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
	if (c->dgram)
		return dv_frame_iov(q, iov, max);
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

void dv_tp_consume_dgrams(dv_tp_conn_t *c, size_t n)
{
	dv_frame_drop(&c->out, n);
}

void dv_tp_close(dv_tp_conn_t *c)
{
	c->ops->close(c);
	pump(c);
	if (c->tls != NULL)
		dv_tls_close(c->tls);
	c->closed = true;
}

bool dv_tp_ready(const dv_tp_conn_t *c)
{
	return (c->tls == NULL || dv_tls_handshake_done(c->tls)) && c->ops->settled(c);
}

uint64_t dv_tp_next_deadline(const dv_tp_conn_t *c)
{
	return c->ops->next_deadline(c);
}

int dv_tp_on_deadline(dv_tp_conn_t *c, uint64_t now_ns)
{
	if (c->dead)
		return 0;
	c->cb_rc = 0;
	return c->ops->on_deadline(c, now_ns);
}
