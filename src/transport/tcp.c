/* tcp: DNS over TCP (RFC 7766): each message after its two-byte length. The framing as
 * operations is DoT's too (dot.c), inside TLS. */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>

static int framed_shared_init(dv_tp_shared_t *s, dv_err_t *err)
{
	(void)s;
	(void)err;
	return 0;
}

static int framed_attach(dv_tp_conn_t *c)
{
	(void)c;
	return 0;
}

static void framed_detach(dv_tp_conn_t *c)
{
	(void)c;
}

static int framed_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	size_t queued = dv_bq_len(&c->out) + (c->tls ? dv_bq_len(dv_tls_out(c->tls)) : 0);

	(void)id;
	if (queued + len + 2 > c->s->out_max)
		return -EAGAIN;
	return dv_frame_put(&c->out, msg, len) == 0 ? 0 : -EAGAIN;
}

static int on_message(void *ctx, const uint8_t *msg, size_t len)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_ANSWER, .msg = msg, .len = len};
	return dv_tp_emit(ctx, &ev);
}

static int framed_input(void *ctx, const uint8_t *data, size_t len)
{
	dv_tp_conn_t *c = ctx;
	int rc = dv_frame_read(&c->rd, data, len, on_message, c);
	if (rc == -EPROTO)
		return dv_tp_proto_error(c, "an answer with a zero length prefix");
	return rc;
}

/* The frames are in c->out from submit on. */
static int framed_pump(dv_tp_conn_t *c)
{
	(void)c;
	return 0;
}

static size_t framed_capacity(const dv_tp_conn_t *c)
{
	(void)c;
	return SIZE_MAX;
}

static const char *framed_full_why(const dv_tp_conn_t *c)
{
	(void)c;
	return NULL;
}

/* A query on the wire cannot be taken back: the engine's window forgets it. */
static int framed_cancel(dv_tp_conn_t *c, uint64_t id)
{
	(void)c;
	(void)id;
	return 0;
}

/* The engine's window counts them. */
static size_t framed_in_flight(const dv_tp_conn_t *c)
{
	(void)c;
	return 0;
}

static bool framed_settled(const dv_tp_conn_t *c)
{
	(void)c;
	return true;
}

static const char *framed_eof_cut(const dv_tp_conn_t *c)
{
	return dv_frame_reader_idle(&c->rd) ? NULL
	                                    : "the server closed the connection inside a message";
}

static void framed_close(dv_tp_conn_t *c)
{
	(void)c;
}

const dv_tp_ops_t dv_tp_framed_ops = {
    .shared_init = framed_shared_init,
    .attach = framed_attach,
    .detach = framed_detach,
    .submit = framed_submit,
    .input = framed_input,
    .pump = framed_pump,
    .capacity = framed_capacity,
    .full_why = framed_full_why,
    .cancel = framed_cancel,
    .in_flight = framed_in_flight,
    .settled = framed_settled,
    .eof_cut = framed_eof_cut,
    .close = framed_close,
    .next_deadline = dv_tp_no_deadline,
    .on_deadline = dv_tp_no_expiry,
};

const dv_tp_desc_t dv_tp_tcp_desc = {
    .kind = DV_TP_TCP,
    .name = "tcp",
    .long_name = "TCP",
    .default_port = 53,
    .sock_type = SOCK_STREAM,
    .ops = &dv_tp_framed_ops,
};
