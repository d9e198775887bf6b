/* fuzz_stream: libFuzzer target for the client's stream response path: the TCP framing, the DoH
 * HTTP/2 session (cleartext: the bytes past TLS) and the DoT handshake, bytes in, events out. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/wire.h"
#include "transport/transport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: byte 0 = flags, byte 1 = chunking, then the server's bytes.
 *   flags bits 0-1: 0 TCP, 1 DoH (cleartext HTTP/2), 2 DoT (the TLS handshake), 3 DoH
 *                   with GET
 *   bit 2: cancel (dv_tp_cancel) the even query ids halfway through the input
 *   bit 3: no EOF at the end
 * The connection first takes NQ queries (ids 0..NQ-1; DoH after the input's first chunk,
 * which should hold the server's SETTINGS); its output is drained after every step. The
 * server's bytes are fed in chunks of 1 + (byte 1 % 64) bytes, TURNS_MAX of them; then each
 * chunk twice the last (so an input of N bytes takes at most TURNS_MAX + log2(N) turns:
 * inputs fed byte by byte took thousands, the most of the target's time).
 * Invariants: every event is one the transport may give; an answer is 1..65535 bytes;
 * a DoH id is one submitted, reported at most once, and never after it was cancelled;
 * the DoH queries in flight are the ones submitted and neither reported nor cancelled
 * (once the cancels are written); nothing after PROTO_ERROR.
 */

#define NQ        8
#define TURNS_MAX 128

static struct {
	unsigned kind;
	bool doh;
	bool dead;
	uint8_t reported[NQ];
	uint8_t cancelled[NQ];
	unsigned nrep, ncancel, nsub;
} st;

static int on_event(void *ctx, const dv_tp_event_t *ev)
{
	(void)ctx;
	if (st.dead)
		abort(); /* nothing after a protocol error */
	switch (ev->kind) {
	case DV_TP_EV_ANSWER:
		if (ev->len == 0 || ev->len > 65535 || ev->msg == NULL)
			abort();
		if (!st.doh)
			break;
		/* fall through */
	case DV_TP_EV_HTTP_STATUS:
	case DV_TP_EV_STREAM_ERROR:
		if (!st.doh || ev->id >= st.nsub || st.reported[ev->id] || st.cancelled[ev->id])
			abort();
		st.reported[ev->id] = 1;
		st.nrep++;
		break;
	case DV_TP_EV_PROTO_ERROR:
		if (ev->what == NULL)
			abort();
		st.dead = true;
		break;
	case DV_TP_EV_SETTINGS:
		if (!st.doh)
			abort();
		break;
	case DV_TP_EV_HANDSHAKE:
	case DV_TP_EV_CLOSED:
		break;
	default:
		abort();
	}
	return 0;
}

static void drain(dv_tp_conn_t *c)
{
	struct iovec iov[4];
	int m, guard = 0;

	while ((m = dv_tp_output(c, iov, 4)) > 0 && guard++ < 64)
		for (int i = 0; i < m; i++)
			dv_tp_consume(c, iov[i].iov_len);
}

static void submit_all(dv_tp_conn_t *c)
{
	/* example.com A, RD, with ID i */
	static const uint8_t q[] = {0,   0,   1,   0,   0,   1, 0,   0,   0,   0, 0, 0, 7, 'e', 'x',
	                            'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
	uint8_t m[sizeof(q)];

	for (unsigned i = st.nsub; i < NQ; i++) {
		memcpy(m, q, sizeof(q));
		dv_wire_set16(m, (uint16_t)i);
		if (dv_tp_submit(c, m, sizeof(m), i) != 0)
			break;
		st.nsub++;
	}
	drain(c);
}

static void cancel_even(dv_tp_conn_t *c)
{
	for (unsigned i = 0; i < st.nsub; i += 2)
		if (!st.reported[i] && !st.cancelled[i] && dv_tp_cancel(c, i) > 0) {
			st.cancelled[i] = 1;
			st.ncancel++;
		}
	drain(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static dv_tp_shared_t *sh[4];
	static dv_tp_config_t cfg[4];
	dv_tp_conn_t *c;
	dv_err_t err;
	size_t off = 2, chunk, half;
	unsigned k, turn = 0;

	if (size < 2)
		return 0;
	k = data[0] & 3;
	if (sh[k] == NULL) {
		dv_tp_config_init(&cfg[k]);
		cfg[k].kind = k == 0 ? DV_TP_TCP : k == 2 ? DV_TP_DOT : DV_TP_DOH;
		cfg[k].doh_cleartext = true;
		cfg[k].doh_get = k == 3;
		cfg[k].sni = "dnsvolley.test";
		if (dv_tp_shared_new(&sh[k], &cfg[k], &err) != 0)
			abort();
	}
	memset(&st, 0, sizeof(st));
	st.kind = k;
	st.doh = k == 1 || k == 3;
	if (dv_tp_conn_new(&c, sh[k], on_event, NULL) != 0)
		abort();
	drain(c); /* the preface / ClientHello */
	if (!st.doh)
		submit_all(c);
	chunk = 1 + data[1] % 64;
	half = off + (size - off) / 2;
	while (off < size) {
		size_t n = DV_MIN(chunk, size - off);
		int rc = dv_tp_input(c, data + off, n);
		bool before_half = off < half;
		off += n;
		if (rc < 0 && !st.dead && rc != -EPROTO)
			abort();
		if (st.dead)
			break;
		if (st.doh && dv_tp_ready(c))
			submit_all(c);
		drain(c);
		if ((data[0] & 4) && before_half && off >= half)
			cancel_even(c);
		if (++turn >= TURNS_MAX)
			chunk *= 2;
	}
	if (!st.dead && !(data[0] & 8))
		(void)dv_tp_eof(c);
	drain(c);
	/* every query in flight, reported or cancelled (and a cancelled one freed) */
	if (st.doh && !st.dead && dv_tp_in_flight(c) + st.nrep + st.ncancel != st.nsub)
		abort();
	dv_tp_conn_free(c);
	return 0;
}
