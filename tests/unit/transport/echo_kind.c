/* echo_kind: a fourth transport kind that lives in the tests: DNS over a connected UDP socket
 * with a handshake and timers of its own, the shape a QUIC kind has. It is the one file a new
 * kind is (doc/transports.md, "Adding a kind"): it includes transport/conn.h (and base/), the
 * engine runs it through its row with no change (in the program the row would be a line of
 * transport.h's DV_TP_KINDS; the test hands it over as dv_tp_config_t.desc).
 *
 * Its protocol, one datagram each: the client sends "HELO" at once and again every
 * echo_rto_ns until the peer's "HELO" comes (its handshake: then it takes queries), giving up
 * after echo_max_retransmits; a DNS message (12 bytes or more) is a query or an answer; the
 * peer's "PING" asks for a "PONG" echo_ack_delay_ns later (an ACK delay). Anything else is a
 * protocol error. */
#include "config.h"

#include "echo_kind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/dns.h"
#include "transport/conn.h"

#define CTRL_LEN 4 /* "HELO", "PING", "PONG" */

uint64_t echo_rto_ns = 2 * DV_NS_PER_S, echo_ack_delay_ns = DV_NS_PER_MS;
unsigned echo_max_retransmits = 3;
echo_counts_t echo_counts;

typedef struct echo {
	bool settled;       /* the peer's HELO came */
	unsigned resent;    /* HELO retransmissions so far */
	uint64_t hello_due; /* the next retransmission (UINT64_MAX: none) */
	uint64_t pong_due;  /* a PONG to send (UINT64_MAX: none) */
} echo_t;

static int hello(dv_tp_conn_t *c, uint64_t now)
{
	echo_t *e = c->proto;

	echo_counts.hellos++;
	e->hello_due = now + echo_rto_ns;
	return dv_frame_put(&c->out, (const uint8_t *)"HELO", CTRL_LEN);
}

static int echo_attach(dv_tp_conn_t *c)
{
	echo_t *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return -ENOMEM;
	e->pong_due = UINT64_MAX;
	c->proto = e;
	echo_counts.attached++;
	return hello(c, dv_now_ns());
}

static void echo_detach(dv_tp_conn_t *c)
{
	free(c->proto);
	c->proto = NULL;
}

static int echo_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	(void)id;
	return dv_frame_put(&c->out, msg, len) == 0 ? 0 : -EAGAIN;
}

/* One datagram from the peer. */
static int echo_input(void *ctx, const uint8_t *data, size_t len)
{
	dv_tp_conn_t *c = ctx;
	echo_t *e = c->proto;
	dv_tp_event_t ev = {.kind = DV_TP_EV_ANSWER, .msg = data, .len = len};

	if (len >= DV_DNS_HEADER_LEN) {
		echo_counts.answers++;
		return dv_tp_emit(c, &ev);
	}
	if (len == CTRL_LEN && memcmp(data, "HELO", CTRL_LEN) == 0) {
		if (e->settled)
			return 0;
		e->settled = true;
		e->hello_due = UINT64_MAX;
		return dv_tp_emit_handshake(c, false);
	}
	if (len == CTRL_LEN && memcmp(data, "PING", CTRL_LEN) == 0) {
		e->pong_due = dv_now_ns() + echo_ack_delay_ns;
		return 0;
	}
	return dv_tp_proto_error(c, "not a datagram of the echo kind");
}

static uint64_t echo_next_deadline(const dv_tp_conn_t *c)
{
	const echo_t *e = c->proto;

	return DV_MIN(e->hello_due, e->pong_due);
}

static int echo_on_deadline(dv_tp_conn_t *c, uint64_t now)
{
	echo_t *e = c->proto;
	int rc = 0;

	echo_counts.deadlines++;
	if (e->pong_due <= now) {
		e->pong_due = UINT64_MAX;
		echo_counts.pongs++;
		rc = dv_frame_put(&c->out, (const uint8_t *)"PONG", CTRL_LEN);
	}
	if (rc == 0 && e->hello_due <= now) {
		if (e->resent == echo_max_retransmits)
			return dv_tp_proto_error(c, "no answer to the hello");
		e->resent++;
		rc = hello(c, now);
	}
	return rc;
}

static bool echo_settled(const dv_tp_conn_t *c)
{
	return ((const echo_t *)c->proto)->settled;
}

/* Datagrams have no end of stream: never called. */
static const char *echo_eof_cut(const dv_tp_conn_t *c)
{
	(void)c;
	return NULL;
}

static const dv_tp_ops_t echo_ops = {
    .shared_init = dv_tp_no_shared_init,
    .attach = echo_attach,
    .detach = echo_detach,
    .submit = echo_submit,
    .input = echo_input,
    .pump = dv_tp_no_pump,
    .capacity = dv_tp_no_limit,
    .full_why = dv_tp_no_why,
    .cancel = dv_tp_no_cancel,
    .in_flight = dv_tp_no_in_flight,
    .settled = echo_settled,
    .eof_cut = echo_eof_cut,
    .close = dv_tp_no_close,
    .next_deadline = echo_next_deadline,
    .on_deadline = echo_on_deadline,
};

const dv_tp_desc_t echo_desc = {
    .kind = DV_TP_NKINDS, /* not in the table */
    .name = "echo",
    .long_name = "datagram echo",
    .default_port = 5353,
    .tls = true, /* its HELO stands for QUIC's handshake: counted as one */
    .own_tls = true,
    .setup_what = "hello",
    .sock_type = SOCK_DGRAM,
    .timers = true,
    .ops = &echo_ops,
};
