/* fuzz_querylist: libFuzzer target for the query-list parser and compiler
 * (dv_querylist_load_buffer) and the -u update reader (dv_update_load_buffer). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "input/querylist.h"
#include "input/update.h"
#include "base/dns.h"
#include "base/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The first byte picks the options (RD, EDNS, DO, skip-bad, buffer size) and the
 * reader (0x20: -u updates), the rest is the list text. Whatever loads must satisfy the
 * compiled-list contract the engine relies on: offsets increase, every query is a complete message
 * the wire module can walk, and no query is longer than the engine's send buffer.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dv_querylist_t ql;
	dv_querylist_options_t o;
	dv_err_t err;
	size_t i;

	if (size == 0)
		return 0;
	dv_querylist_options_init(&o);
	o.rd = (data[0] & 1) == 0;
	o.edns = (data[0] & 2) != 0;
	o.dnssec_ok = (data[0] & 4) != 0;
	o.skip_bad = (data[0] & 8) != 0;
	o.edns_bufsize = (data[0] & 16) ? 512 : 0;
	memset(&ql, 0, sizeof(ql));
	bool update = (data[0] & 32) != 0;
	int rc =
	    update
	        ? dv_update_load_buffer(&ql, (const char *)data + 1, size - 1, "fuzz", &o, &err)
	        : dv_querylist_load_buffer(&ql, (const char *)data + 1, size - 1, "fuzz", &o, &err);
	if (rc != 0) {
		if (err.msg[0] == '\0' || memchr(err.msg, '\0', sizeof(err.msg)) == NULL)
			abort(); /* an error must come with a message */
		if (ql.count != 0 || ql.arena != NULL)
			abort(); /* "ql is left empty on error" */
		return 0;
	}
	if (ql.count == 0 || ql.off[0] != 0 || ql.off[ql.count] != ql.arena_len)
		abort();
	for (i = 0; i < ql.count; i++) {
		size_t len, qlen;
		const uint8_t *q = dv_querylist_get(&ql, i, &len);
		if (ql.off[i + 1] <= ql.off[i] || len > DV_MAX_QUERY_LEN ||
		    len < DV_DNS_HEADER_LEN + 5)
			abort();
		qlen = dv_wire_question_len(q, len);
		if (qlen < 5 || DV_WIRE_QDCOUNT(q) != 1 || DV_WIRE_QR(q))
			abort();
		/* The engine matches answers on this many octets after the header. */
		if (dv_querylist_question_len(&ql, i) != qlen)
			abort();
		if (update &&
		    (q[2] & DV_DNS_OPCODE_MASK) >> DV_DNS_OPCODE_SHIFT != DV_DNS_OPCODE_UPDATE)
			abort();
	}
	dv_querylist_free(&ql);
	return 0;
}
