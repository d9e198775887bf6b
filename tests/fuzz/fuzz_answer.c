/* fuzz_answer: libFuzzer target for the responder's answer builder (dv_answer_build). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "responder/answer.h"
#include "base/util.h"
#include "base/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Byte 0 picks the options (fault modes, rcode, output room), the rest is the
 * query datagram. Checked: the builder's return contract, that it is
 * deterministic, and that every response carrying a question is one the
 * engine's own checker (dv_wire_check_response) accepts: the responder must
 * never emit what dnsvolley would call malformed, or the tests' counts lie.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536 + 64], out2[65536 + 64];
	dv_answer_opts_t o;
	size_t cap, full, qlen;
	uint8_t f;
	int r, r2;

	if (size == 0)
		return 0;
	f = data[0];
	dv_answer_opts_init(&o);
	o.tc = (f & 1) != 0;
	o.reflect = (f & 2) != 0;
	o.wrong_id = (f & 4) != 0;
	o.wrong_question = (f & 8) != 0;
	o.rcode = (f & 16) ? (f >> 5) : -1;
	data++;
	size--;
	/*
	 * DV_ANSWER_MAX suffices for built answers; a reflected query is as long as the
	 * query plus the "x" label of wrong_question, so the responder gives it
	 * RBUF_LEN + 16 (found by this target: a 596-byte query gave -ENOSPC with
	 * DV_ANSWER_MAX, corpus/answer/reflect-long-query).
	 */
	full = o.reflect ? DV_MAX(size + 16, (size_t)DV_ANSWER_MAX) : DV_ANSWER_MAX;
	cap = (f & 0x80) && (f & 0x40) ? 40 : full;
	memset(out, 0, sizeof(out));
	r = dv_answer_build(data, size, out, cap, &o);
	if (r == 0 || r > (int)cap)
		abort();
	if (r < 0) {
		if (r != -EBADMSG && r != -ENOSPC)
			abort();
		if (size >= 12 && cap == full && !DV_WIRE_QR(data))
			abort(); /* a readable query header always gets a response */
		if (size >= 12 && DV_WIRE_QR(data) && r != -EBADMSG)
			abort(); /* a response (QR set) never gets one */
		return 0;
	}
	if (r < 12 || !DV_WIRE_QR(out))
		abort();
	r2 = dv_answer_build(data, size, out2, cap, &o);
	if (r2 != r || memcmp(out, out2, (size_t)r) != 0)
		abort();
	if (!o.reflect && DV_WIRE_QDCOUNT(out) == 1 &&
	    !dv_wire_check_response(out, (size_t)r, &qlen))
		abort();
	return 0;
}
