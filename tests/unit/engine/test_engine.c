/* test_engine: sending, matching and expiry of one worker's engine, driven with hand-made
 * datagrams. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "base/wire.h"
#include "engine/txstamp.h"

static const char LIST[] = "a.example SOA\n"
                           "b.example A\n"
                           "c.example AAAA\n";

typedef struct fixture {
	dv_querylist_t ql;
	dv_engine_t e;
	uint8_t bufs[8][DV_MAX_QUERY_LEN];
	unsigned lens[8];
} fixture_t;

static int setup_cap(void **state, uint32_t cap, uint64_t end_seq)
{
	fixture_t *f = calloc(1, sizeof(*f));
	dv_querylist_options_t o;
	dv_err_t err;

	assert_non_null(f);
	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_load_buffer(&f->ql, LIST, strlen(LIST), "t", &o, &err), 0);
	assert_int_equal(dv_engine_init(&f->e, &f->ql, cap, 1000, 0, 1, end_seq), 0);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_cap(state, 4, 6); /* window 4, two passes through 3 queries */
}

static int teardown(void **state)
{
	fixture_t *f = *state;
	dv_engine_free(&f->e);
	dv_querylist_free(&f->ql);
	free(f);
	return 0;
}

/* The answer a well-behaved server would give to prepared query i. */
static size_t answer(const fixture_t *f, unsigned i, uint8_t *out, uint8_t rcode)
{
	memcpy(out, f->bufs[i], f->lens[i]);
	out[2] |= 0x80; /* QR */
	out[3] = (uint8_t)((out[3] & 0xf0) | rcode);
	return f->lens[i];
}

static void send_all(fixture_t *f, unsigned n, uint64_t now)
{
	unsigned k = dv_engine_prepare(&f->e, 0, now, n, f->bufs, f->lens);
	assert_int_equal(k, n);
	assert_false(dv_engine_sent(&f->e, f->bufs, k, k, 0, now));
}

static void test_prepare_sets_ids_and_bounds(void **state)
{
	fixture_t *f = *state;
	unsigned k;

	assert_int_equal(dv_engine_sendable(&f->e), 4);
	k = dv_engine_prepare(&f->e, 0, 10, 8, f->bufs, f->lens);
	assert_int_equal(k, 4); /* the window is the bound */
	assert_int_equal(dv_wire_get16(f->bufs[0]), 0);
	assert_int_equal(dv_wire_get16(f->bufs[3]), 3);
	/* query 3 is the list's first again (second pass) */
	assert_memory_equal(f->bufs[3] + 2, f->bufs[0] + 2, f->lens[0] - 2);
	assert_false(dv_engine_sent(&f->e, f->bufs, k, k, 0, 10));
	assert_int_equal(f->e.stats.c.sent, 4);
	assert_int_equal(dv_engine_sendable(&f->e), 0);
}

static void test_match_completes(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	send_all(f, 3, 100);
	n = answer(f, 1, r, 3);
	dv_engine_receive(&f->e, 0, r, n, true, 150);
	assert_int_equal(f->e.stats.c.completed, 1);
	assert_int_equal(f->e.stats.c.rcode[3], 1);
	assert_int_equal(f->e.stats.latency.count, 1);
	assert_int_equal(f->e.stats.latency.min_ns, 50);
	/* The same answer again is a duplicate: unexpected, never a second completion. */
	dv_engine_receive(&f->e, 0, r, n, true, 160);
	assert_int_equal(f->e.stats.c.completed, 1);
	assert_int_equal(f->e.stats.c.unexpected, 1);
}

static void test_wrong_socket_source_question(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	send_all(f, 2, 100);
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 1, r, n, true, 110);  /* another socket */
	dv_engine_receive(&f->e, 0, r, n, false, 110); /* another source */
	r[13] ^= 0x01;                                 /* another name */
	dv_engine_receive(&f->e, 0, r, n, true, 110);
	assert_int_equal(f->e.stats.c.unexpected, 3);
	assert_int_equal(f->e.stats.c.completed, 0);
	/* the query is still waiting for its real answer */
	r[13] ^= 0x01;
	dv_engine_receive(&f->e, 0, r, n, true, 120);
	assert_int_equal(f->e.stats.c.completed, 1);
}

static void test_case_insensitive_question(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	send_all(f, 1, 100);
	n = answer(f, 0, r, 0);
	r[13] = 'A'; /* "a.example" -> "A.example": same name (0x20 randomisation) */
	dv_engine_receive(&f->e, 0, r, n, true, 110);
	assert_int_equal(f->e.stats.c.completed, 1);
}

static void test_malformed(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	send_all(f, 1, 100);
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 0, r, 0, true, 110);          /* empty */
	dv_engine_receive(&f->e, 0, r, 11, true, 110);         /* short header */
	dv_engine_receive(&f->e, 0, r, n - 1, true, 110);      /* question cut */
	dv_engine_receive(&f->e, 0, f->bufs[0], n, true, 110); /* QR clear: a query */
	r[7] = 1; /* claims an answer RR that is not there */
	dv_engine_receive(&f->e, 0, r, n, true, 110);
	assert_int_equal(f->e.stats.c.malformed, 5);
	assert_int_equal(f->e.stats.c.completed, 0);
}

static void test_timeout_then_late(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	send_all(f, 2, 100);
	assert_int_equal(dv_engine_next_deadline(&f->e), 1100);
	dv_engine_expire(&f->e, 1099);
	assert_int_equal(f->e.stats.c.lost, 0);
	dv_engine_expire(&f->e, 1100);
	assert_int_equal(f->e.stats.c.lost, 2);
	assert_int_equal(dv_engine_next_deadline(&f->e), UINT64_MAX);
	n = answer(f, 1, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 1200);
	assert_int_equal(f->e.stats.c.late, 1);
	assert_int_equal(f->e.stats.c.completed, 0);
	/* a second late copy is unexpected */
	dv_engine_receive(&f->e, 0, r, n, true, 1300);
	assert_int_equal(f->e.stats.c.late, 1);
	assert_int_equal(f->e.stats.c.unexpected, 1);
}

static void test_after_deadline_before_expiry(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	/* Answers read late (coalesced receiving) are judged by their arrival time. */
	send_all(f, 2, 100);
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 1100); /* arrived at the deadline: in time */
	assert_int_equal(f->e.stats.c.completed, 1);
	n = answer(f, 1, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 1101); /* 1 ns past it: lost, late */
	assert_int_equal(f->e.stats.c.completed, 1);
	assert_int_equal(f->e.stats.c.lost, 1);
	assert_int_equal(f->e.stats.c.late, 1);
	assert_int_equal(f->e.win.inflight, 0);
	/* an arrival time before the send (a stepped clock) counts as latency 0 */
	send_all(f, 1, 5000);
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 4000);
	assert_int_equal(f->e.stats.c.completed, 2);
	assert_int_equal(f->e.stats.latency.min_ns, 0);
}

static void test_ids_not_reused_early(void **state)
{
	fixture_t *f = *state;

	send_all(f, 1, 100); /* id 0 */
	dv_engine_expire(&f->e, 5000);
	send_all(f, 1, 5000);
	/* the timed-out id 0 goes to the back of the free queue (65536 ids): next is 1 */
	assert_int_equal(dv_wire_get16(f->bufs[0]), 1);
}

static void test_send_failures(void **state)
{
	fixture_t *f = *state;
	unsigned k;

	/* EAGAIN after one: nothing counted for the rest, they are prepared again. */
	k = dv_engine_prepare(&f->e, 0, 10, 3, f->bufs, f->lens);
	assert_int_equal(k, 3);
	assert_true(dv_engine_sent(&f->e, f->bufs, k, 1, EAGAIN, 10));
	assert_int_equal(f->e.stats.c.sent, 1);
	assert_int_equal(f->e.win.inflight, 1);
	assert_int_equal(dv_engine_sendable(&f->e), 3);
	/* A hard error: the first refused query is not sent and skipped. */
	k = dv_engine_prepare(&f->e, 0, 10, 2, f->bufs, f->lens);
	assert_false(dv_engine_sent(&f->e, f->bufs, k, 0, ECONNREFUSED, 10));
	assert_int_equal(f->e.stats.c.not_sent, 1);
	assert_int_equal(f->e.stats.c.icmp_errors, 1);
	assert_int_equal(f->e.win.inflight, 1);
	/* 6 in the plan: 1 sent, 1 not sent, 4 left */
	assert_int_equal(dv_engine_sendable(&f->e), 3); /* window room 3 of 4 */
	send_all(f, 3, 20);
	assert_int_equal(dv_engine_sendable(&f->e), 0);
	assert_false(dv_engine_list_done(&f->e));
}

static void test_finish_counts(void **state)
{
	fixture_t *f = *state;

	send_all(f, 3, 100);
	dv_engine_finish(&f->e, true);
	assert_int_equal(f->e.stats.c.interrupted, 3);
	assert_int_equal(f->e.stats.c.lost, 0);
	assert_int_equal(f->e.stats.c.inflight_peak, 3);
	assert_int_equal(f->e.stats.c.sent,
	                 f->e.stats.c.completed + f->e.stats.c.lost + f->e.stats.c.interrupted);
}

static void test_striping(void **state)
{
	fixture_t *f = *state;
	dv_engine_t w1;

	/* worker 1 of 2 over two passes of 3 queries: sequences 1, 3, 5 */
	assert_int_equal(dv_engine_init(&w1, &f->ql, 8, 1000, 1, 2, 6), 0);
	assert_int_equal(dv_engine_sendable(&w1), 3);
	assert_int_equal(dv_engine_prepare(&w1, 0, 0, 8, f->bufs, f->lens), 3);
	assert_true(dv_engine_list_done(&w1));
	dv_engine_free(&w1);
	/* Unbounded (time-limited runs): worker 0 of 2 still has work. */
	assert_int_equal(dv_engine_init(&w1, &f->ql, 8, 1000, 0, 2, UINT64_MAX), 0);
	assert_int_equal(dv_engine_sendable(&w1), 8);
	dv_engine_free(&w1);
}

/* Wire clock: two queries sent at 100 ns holding transmit-stamp keys key and key + 1. */
static void wire_pair(fixture_t *f, uint32_t key, uint16_t *id0, uint16_t *id1)
{
	f->e.wire = true;
	send_all(f, 2, 100);
	*id0 = dv_wire_get16(f->bufs[0]);
	*id1 = dv_wire_get16(f->bufs[1]);
	f->e.win.slot[*id0].tx_key = key;
	f->e.win.slot[*id1].tx_key = key + 1;
}

/* Wire clock: a transmit stamp is kept only for its own slot, socket and key; latency runs from it.
 */
static void test_wire_stamps(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	uint16_t id0, id1;
	size_t n;

	wire_pair(f, 7, &id0, &id1);
	dv_engine_tx_stamp(&f->e, 0, id0, 7, 120); /* not asked for (tx_asked 0): ignored */
	assert_int_equal(f->e.win.slot[id0].wire_off_ns, DV_SLOT_NO_STAMP);
	f->e.win.slot[id0].tx_asked = f->e.win.slot[id1].tx_asked = 1;
	dv_engine_tx_stamp(&f->e, 1, id0, 7, 120); /* another socket: ignored */
	dv_engine_tx_stamp(&f->e, 0, id0, 8, 120); /* another key: ignored */
	assert_int_equal(f->e.win.slot[id0].wire_off_ns, DV_SLOT_NO_STAMP);
	dv_engine_tx_stamp(&f->e, 0, id0, 7, 130);
	dv_engine_tx_stamp(&f->e, 0, id0, 7, 140); /* a second stamp changes nothing */
	assert_int_equal(f->e.win.slot[id0].wire_off_ns, 30);
	f->e.rx_stamped = true;
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 150);
	assert_int_equal(f->e.stats.latency.min_ns, 20); /* 150 - 130, not 150 - 100 */
	assert_int_equal(f->e.stats.c.wire_timed, 1);
	/* No stamp for the second: completed, but outside the wire clock's latency sample. */
	n = answer(f, 1, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 170);
	assert_int_equal(f->e.stats.latency.count, 1);
	assert_int_equal(f->e.stats.latency.max_ns, 20);
	assert_int_equal(f->e.stats.c.wire_timed, 1);
	assert_int_equal(f->e.stats.c.completed, 2);
	assert_int_equal(f->e.stats.c.untimed_no_tx, 1); /* asked, its stamp never came */
	assert_int_equal(f->e.stats.c.untimed_no_rx + f->e.stats.c.untimed_order, 0);
	/* A stamp for a slot no longer in flight is ignored. */
	dv_engine_tx_stamp(&f->e, 0, id1, 8, 120);
	assert_int_equal(f->e.win.slot[id1].wire_off_ns, DV_SLOT_NO_STAMP);
}

/* Wire clock: an answer whose receive stamp is not after its transmit stamp is completed
 * and left untimed, never timed as 0 (a stamp put on the monotonic clock with a wrong
 * offset did that under load). */
static void test_wire_stamp_order(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	uint16_t id0, id1;
	size_t n;

	wire_pair(f, 0, &id0, &id1);
	f->e.win.slot[id0].tx_asked = f->e.win.slot[id1].tx_asked = 1;
	dv_engine_tx_stamp(&f->e, 0, id0, 0, 130);
	dv_engine_tx_stamp(&f->e, 0, id1, 1, 130);
	f->e.rx_stamped = true;
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 125); /* before its query left */
	n = answer(f, 1, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 130); /* the same nanosecond */
	assert_int_equal(f->e.stats.c.completed, 2);
	assert_int_equal(f->e.stats.c.wire_timed, 0);
	assert_int_equal(f->e.stats.c.untimed_order, 2);
	assert_int_equal(f->e.stats.c.untimed_no_rx + f->e.stats.c.untimed_no_tx, 0);
	assert_int_equal(f->e.stats.latency.count, 0);
}

/*
 * The sampled wire clock's bookkeeping, as the worker does it (engine/txstamp.h): of four
 * queries in flight the 2nd and 4th asked for stamps (keys 0 and 1). Each stamp lands on
 * its own query; a stamp with a key nobody holds, or a second one, lands nowhere; the
 * queries that did not ask never get one. Counts stay exact: 4 completed, 2 timed.
 */
static void test_sampled_stamps(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	uint16_t id[4];
	dv_txmap_t m;
	unsigned i;
	size_t n;

	f->e.wire = true;
	f->e.rx_stamped = true;
	assert_int_equal(dv_txmap_init(&m, 4), 0);
	send_all(f, 4, 100);
	for (i = 0; i < 4; i++)
		id[i] = dv_wire_get16(f->bufs[i]);
	dv_txmap_sent(&m, &f->e.win, id[1]);
	dv_txmap_sent(&m, &f->e.win, id[3]);
	/* the kernel's stamps come back out of order */
	dv_engine_tx_stamp(&f->e, 0, dv_txmap_take(&m, 1), 1, 140);
	dv_engine_tx_stamp(&f->e, 0, dv_txmap_take(&m, 0), 0, 110);
	dv_engine_tx_stamp(&f->e, 0, dv_txmap_take(&m, 7), 7, 105); /* no such key */
	dv_engine_tx_stamp(&f->e, 0, dv_txmap_take(&m, 0), 0, 101); /* a second: ignored */
	assert_int_equal(m.pending, 0);
	assert_int_equal(f->e.win.slot[id[1]].wire_off_ns, 10);
	assert_int_equal(f->e.win.slot[id[3]].wire_off_ns, 40);
	/* unsampled slots refuse any key, even one a sampled slot holds */
	for (i = 0; i < 4; i += 2) {
		dv_engine_tx_stamp(&f->e, 0, id[i], f->e.win.slot[id[i]].tx_key, 120);
		assert_int_equal(f->e.win.slot[id[i]].wire_off_ns, DV_SLOT_NO_STAMP);
	}
	for (i = 0; i < 4; i++) {
		n = answer(f, i, r, 0);
		dv_engine_receive(&f->e, 0, r, n, true, 200);
	}
	assert_int_equal(f->e.stats.c.completed, 4);
	assert_int_equal(f->e.stats.c.wire_timed, 2);
	assert_int_equal(f->e.stats.latency.count, 2);
	assert_int_equal(f->e.stats.latency.min_ns, 60); /* 200 - 140 */
	assert_int_equal(f->e.stats.latency.max_ns, 90); /* 200 - 110 */
	/* a stamp after the answer: the slot is no longer in flight */
	dv_engine_tx_stamp(&f->e, 0, id[1], 0, 150);
	assert_int_equal(f->e.win.slot[id[1]].wire_off_ns, 10);
	dv_txmap_free(&m);
}

/* Intervals by send time: each query's fate counts in the interval it was sent in. */
static void test_send_time_buckets(void **state)
{
	fixture_t *f = *state;
	uint8_t r[DV_MAX_QUERY_LEN];
	size_t n;

	dv_engine_track_intervals(&f->e, 100, 50); /* [100,150) [150,200) ... */
	send_all(f, 1, 120);                       /* interval 0 */
	send_all(f, 2, 260);                       /* interval 3 */
	assert_true(f->e.nbucket >= 4);
	assert_int_equal(f->e.bucket[0].sent, 1);
	assert_int_equal(f->e.bucket[3].sent, 2);
	/* The first query expires at 1120: lost in interval 0, where it was sent. */
	dv_engine_expire(&f->e, 1120);
	assert_int_equal(f->e.stats.c.lost, 1);
	assert_int_equal(f->e.bucket[0].lost, 1);
	assert_int_equal(f->e.bucket[3].lost, 0);
	n = answer(f, 0, r, 0);
	dv_engine_receive(&f->e, 0, r, n, true, 400);
	assert_int_equal(f->e.bucket[3].completed, 1);
	dv_engine_finish(&f->e, false);
	assert_int_equal(f->e.bucket[3].lost, 1);
	assert_int_equal(f->e.bucket[1].sent + f->e.bucket[2].sent, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_prepare_sets_ids_and_bounds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_match_completes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wrong_socket_source_question, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_case_insensitive_question, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timeout_then_late, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_after_deadline_before_expiry, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ids_not_reused_early, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_send_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_counts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_striping, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wire_stamp_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wire_stamps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampled_stamps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_send_time_buckets, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
