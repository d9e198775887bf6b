/* fuzz_input_common: the compiled-list contract every captured-input reader must keep (fuzz_pcap,
 * fuzz_dnstap). */
#ifndef DV_FUZZ_INPUT_COMMON_H
#define DV_FUZZ_INPUT_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "base/wire.h"
#include "input/input.h"

/*
 * Load data as kind with options from the first byte, then check: an error has
 * a message and leaves the list empty; a list has increasing offsets, every
 * query is QR = 0 with one uncompressed question of the stored length, ID 0, at
 * most DV_QUERYLIST_WIRE_MAX octets; times and clients are present as the kind says,
 * clients dense; the stats add up.
 */
static inline int dv_fuzz_input(const uint8_t *data, size_t size, dv_input_kind_t kind)
{
	dv_input_options_t o;
	dv_input_stats_t st;
	dv_querylist_t ql;
	dv_err_t err;
	size_t i;
	uint32_t maxc = 0;

	if (size == 0)
		return 0;
	dv_input_options_init(&o);
	o.strict = (data[0] & 1) != 0;
	o.client_addr_only = (data[0] & 2) != 0;
	o.dnstap_want = (data[0] & 4) ? DV_DNSTAP_AUTH_QUERY : DV_DNSTAP_CLIENT_QUERY;
	if (data[0] & 16)
		o.server_port = 5353;
	memset(&err, 0, sizeof(err));
	if (dv_input_load_buffer(&ql, data + 1, size - 1, "fuzz", kind, &o, &st, &err) != 0) {
		if (err.msg[0] == '\0' || memchr(err.msg, '\0', sizeof(err.msg)) == NULL)
			abort();
		if (ql.count != 0 || ql.arena != NULL || ql.qlen != NULL)
			abort();
		return 0;
	}
	if (ql.count == 0 || ql.count != st.queries || ql.off[0] != 0 ||
	    ql.off[ql.count] != ql.arena_len || ql.qlen == NULL ||
	    st.bad_kept > DV_INPUT_BAD_KEPT || (kind == DV_INPUT_BINARY) != (ql.ts_ns == NULL) ||
	    (ql.ts_ns == NULL) != (ql.client == NULL))
		abort();
	for (i = 0; i < ql.count; i++) {
		size_t len;
		const uint8_t *q = dv_querylist_get(&ql, i, &len);
		if (ql.off[i + 1] <= ql.off[i] || len > DV_QUERYLIST_WIRE_MAX || q[0] != 0 ||
		    q[1] != 0 || DV_WIRE_QR(q) || DV_WIRE_QDCOUNT(q) != 1 ||
		    dv_wire_question_len(q, len) != dv_querylist_question_len(&ql, i) ||
		    dv_querylist_question_len(&ql, i) < 5)
			abort();
		if (ql.client != NULL) {
			if (ql.client[i] > maxc + 1 || ql.client[i] >= ql.clients)
				abort(); /* dense, in order of first appearance */
			maxc = ql.client[i] > maxc ? ql.client[i] : maxc;
		}
	}
	dv_querylist_free(&ql);
	return 0;
}

#endif
