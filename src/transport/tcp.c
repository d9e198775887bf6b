/* tcp: DNS over TCP (RFC 7766): each message after its two-byte length. The framing as
 * operations is DoT's too (dot.c), inside TLS. */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>

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

const dv_tp_ops_t dv_tp_framed_ops = {
    .shared_init = dv_tp_no_shared_init,
    .attach = dv_tp_no_attach,
    .detach = dv_tp_no_detach,
    .submit = framed_submit,
    .input = framed_input,
    .pump = dv_tp_no_pump, /* the frames are in c->out from submit on */
    .capacity = dv_tp_no_limit,
    .full_why = dv_tp_no_why,
    .cancel = dv_tp_no_cancel, /* a query on the wire cannot be taken back */
    .in_flight = dv_tp_no_in_flight,
    .settled = framed_settled,
    .eof_cut = framed_eof_cut,
    .close = dv_tp_no_close,
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
