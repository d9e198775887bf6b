/* fuzz_response: libFuzzer target for the receive path: dv_engine_receive and the wire checks it
 * uses. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "base/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * An engine with queries of a fixed list in flight on two sockets receives the
 * fuzzer's datagrams, exactly as worker.c hands them over.
 *
 * Input: byte 0 = flags, then datagrams separated by the 4-byte marker "DVFZ".
 *   bit 0: the datagram did not come from the server (from_ok false)
 *   bit 1: deliver on socket 1 instead of 0
 *   bit 2: overwrite the datagram's ID with the ID of an in-flight query (byte 1
 *          picks which), so the matcher's deeper paths are reached without the
 *          fuzzer having to guess IDs
 *   bit 3: let every query time out first (answers are then late)
 * Invariants checked after each input: sent == completed + lost once the pass
 * is finished, and every datagram is counted exactly once as completed, late,
 * unexpected or malformed.
 */

static const char list_text[] = "example.com A\n"
                                "www.Example.org AAAA\n"
                                "example.net SOA\n"
                                "_sip._udp.example.com SRV\n"
                                "xn--bcher-kva.example TXT\n"
                                "a.b.c.d.e.f.g.example MX\n";

static dv_querylist_t ql;

static void load_list(void)
{
	dv_querylist_options_t o;
	dv_err_t err;

	if (ql.count != 0)
		return;
	dv_querylist_options_init(&o);
	o.edns = true;
	if (dv_querylist_load_buffer(&ql, list_text, sizeof(list_text) - 1, "fuzz", &o, &err) != 0)
		abort();
}

static const uint8_t *next_datagram(const uint8_t *p, const uint8_t *end, size_t *len)
{
	const uint8_t *q;

	for (q = p; q + 4 <= end; q++)
		if (memcmp(q, "DVFZ", 4) == 0)
			break;
	if (q + 4 > end)
		q = end;
	*len = (size_t)(q - p);
	return q;
}

/*
 * The engine with its 12 queries in flight is built once; each input starts from
 * a copy of it (the window's two ID tables are copied back, 1.6 MB, instead of
 * being allocated and initialised again: 100x faster under ASan).
 */
static dv_engine_t pristine, e;
static dv_slot_t *pristine_slot;
static uint16_t *pristine_freeq;
static uint16_t ids[12];

static void setup(void)
{
	static uint8_t bufs[12][DV_MAX_QUERY_LEN];
	unsigned lens[12], n, i;

	load_list();
	if (dv_engine_init(&pristine, &ql, 16, 100000000ULL, 0, 1, 12) != 0)
		abort();
	/* 12 queries: 6 on socket 0, 6 on socket 1 (two passes through the list). */
	for (i = 0; i < 2; i++) {
		unsigned k;
		n = dv_engine_prepare(&pristine, (uint16_t)i, 1000000000ULL, 6, &bufs[i * 6],
		                      &lens[i * 6]);
		if (n != 6)
			abort();
		dv_engine_sent(&pristine, &bufs[i * 6], n, n, 0, 1000000000ULL);
		for (k = 0; k < 6; k++)
			ids[i * 6 + k] = dv_wire_get16(bufs[i * 6 + k]);
	}
	pristine_slot = malloc(DV_WINDOW_IDS * sizeof(*pristine_slot));
	pristine_freeq = malloc(DV_WINDOW_IDS * sizeof(*pristine_freeq));
	e = pristine;
	e.win.slot = malloc(DV_WINDOW_IDS * sizeof(*e.win.slot));
	e.win.freeq = malloc(DV_WINDOW_IDS * sizeof(*e.win.freeq));
	if (pristine_slot == NULL || pristine_freeq == NULL || e.win.slot == NULL ||
	    e.win.freeq == NULL)
		abort();
	memcpy(pristine_slot, pristine.win.slot, DV_WINDOW_IDS * sizeof(*pristine_slot));
	memcpy(pristine_freeq, pristine.win.freeq, DV_WINDOW_IDS * sizeof(*pristine_freeq));
}

static void reset(void)
{
	dv_slot_t *slot = e.win.slot;
	uint16_t *freeq = e.win.freeq;

	e = pristine;
	e.win.slot = slot;
	e.win.freeq = freeq;
	memcpy(slot, pristine_slot, DV_WINDOW_IDS * sizeof(*slot));
	memcpy(freeq, pristine_freeq, DV_WINDOW_IDS * sizeof(*freeq));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t dgram[65536];
	const uint8_t *p, *end = data + size;
	uint64_t now = 1000000000ULL, datagrams = 0, before;
	uint8_t flags, pick;

	if (size < 2)
		return 0;
	if (pristine_slot == NULL)
		setup();
	reset();
	flags = data[0];
	pick = data[1];
	if (flags & 8) {
		now += 200000000ULL;
		dv_engine_expire(&e, now);
	}
	for (p = data + 2; p <= end;) {
		size_t len;
		const uint8_t *q = next_datagram(p, end, &len);
		size_t qlen;

		if (len > sizeof(dgram))
			len = sizeof(dgram);
		memcpy(dgram, p, len);
		if ((flags & 4) && len >= 2)
			dv_wire_set16(dgram, ids[pick % 12]);
		(void)dv_wire_check_response(dgram, len, &qlen);
		before = e.stats.c.completed + e.stats.c.late + e.stats.c.unexpected +
		         e.stats.c.malformed;
		now += 1000;
		dv_engine_receive(&e, (flags & 2) ? 1 : 0, dgram, len, (flags & 1) == 0, now);
		if (e.stats.c.completed + e.stats.c.late + e.stats.c.unexpected +
		        e.stats.c.malformed !=
		    before + 1)
			abort();
		datagrams++;
		if (q >= end || datagrams >= 64)
			break;
		p = q + 4;
	}
	dv_engine_finish(&e, false);
	if (e.stats.c.sent != 12 || e.stats.c.completed + e.stats.c.lost != e.stats.c.sent ||
	    e.stats.c.late > e.stats.c.lost)
		abort();
	return 0;
}
