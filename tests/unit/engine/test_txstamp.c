/* test_txstamp: the wire clock's sample (uniform, independent of batch position, exact
 * with 1/1) and its stamp keys (each stamp lands on its own query, never on another). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "engine/txstamp.h"
#include "engine/window.h"

#define BATCH 64 /* DV_BATCH: positions in a sendmmsg */

/* 1/1 takes every query without drawing; the same seed gives the same sample. */
static void test_every_one_and_seed(void **state)
{
	dv_sampler_t a, b;
	unsigned i, same = 0;

	(void)state;
	dv_sampler_init(&a, 7, 1);
	for (i = 0; i < 1000; i++)
		assert_true(dv_sampler_take(&a));
	assert_int_equal(a.state, 7); /* no draw */
	dv_sampler_init(&a, 0, 0);    /* 0 means 1 */
	assert_int_equal(a.every, 1);
	dv_sampler_init(&a, 99, 16);
	dv_sampler_init(&b, 99, 16);
	for (i = 0; i < 10000; i++)
		same += dv_sampler_take(&a) == dv_sampler_take(&b);
	assert_int_equal(same, 10000);
	dv_sampler_init(&a, 0, 2);
	assert_true(a.below == (1ULL << 63)); /* P = exactly 1/2 */
}

/*
 * Uniform and blind to the batch position: over 64 * 40,000 draws at 1/16 the total and
 * each batch position's share lie within 6 standard deviations of the binomial mean (a
 * fixed seed: the counts are the same on every run; every-16th sampling puts all its picks
 * on 4 positions and fails), and the picks are independent: pairs of consecutive picks
 * come at p^2.
 */
static void test_uniform_by_position(void **state)
{
	const unsigned every = 16, batches = 40000;
	const double p = 1.0 / every;
	uint64_t pos[BATCH] = {0}, total = 0, pairs = 0, n = (uint64_t)BATCH * batches;
	dv_sampler_t s;
	unsigned b, i;
	bool prev = false;
	double sd_pos = sqrt(batches * p * (1 - p)), sd_all = sqrt((double)n * p * (1 - p));

	(void)state;
	dv_sampler_init(&s, 0x1234, every);
	for (b = 0; b < batches; b++)
		for (i = 0; i < BATCH; i++) {
			bool t = dv_sampler_take(&s);
			pos[i] += t;
			total += t;
			pairs += t && prev;
			prev = t;
		}
	assert_true(fabs((double)total - (double)n * p) < 6 * sd_all);
	for (i = 0; i < BATCH; i++)
		assert_true(fabs((double)pos[i] - batches * p) < 6 * sd_pos);
	/* pairs ~ Binomial-ish(n - 1, p^2): within 6 sd */
	assert_true(fabs((double)pairs - (double)n * p * p) < 6 * sqrt((double)n * p * p));
}

/* The key map: twice the window, a power of two from 64; keys in sequence; pending counts
 * stamps still to read and never goes below zero. */
static void test_txmap_keys(void **state)
{
	dv_window_t win;
	dv_txmap_t m;
	uint16_t a, b;

	(void)state;
	assert_int_equal(dv_window_init(&win, 100), 0);
	assert_int_equal(dv_txmap_init(&m, 100), 0);
	assert_int_equal(m.mask, 255);
	a = dv_window_acquire(&win, 0, 0, 10);
	b = dv_window_acquire(&win, 1, 0, 10);
	assert_int_equal(win.slot[a].tx_asked, 0);
	dv_txmap_sent(&m, &win, b);
	dv_txmap_sent(&m, &win, a);
	assert_int_equal(win.slot[b].tx_key, 0);
	assert_int_equal(win.slot[a].tx_key, 1);
	assert_int_equal(m.pending, 2);
	assert_int_equal(dv_txmap_take(&m, 1), a);
	assert_int_equal(dv_txmap_take(&m, 0), b);
	assert_int_equal(dv_txmap_take(&m, 0), b);
	assert_int_equal(m.pending, 0);
	dv_txmap_restart(&m);
	assert_int_equal(m.next_key, 0);
	dv_txmap_free(&m);
	dv_txmap_free(&m); /* twice: harmless */
	assert_int_equal(dv_txmap_init(&m, 60000), 0);
	assert_int_equal(m.mask, DV_WINDOW_IDS - 1);
	dv_txmap_free(&m);
	dv_window_free(&win);
}

/* A recycled slot starts unsampled: its next occupant must ask again before a stamp lands. */
static void test_recycled_slot_unasked(void **state)
{
	dv_window_t win;
	dv_txmap_t m;
	uint16_t first, id = 0;
	uint32_t i;

	(void)state;
	assert_int_equal(dv_window_init(&win, 1), 0);
	assert_int_equal(dv_txmap_init(&m, 1), 0);
	first = dv_window_acquire(&win, 0, 0, 1);
	dv_txmap_sent(&m, &win, first);
	dv_window_complete(&win, first);
	for (i = 0; i < DV_WINDOW_IDS; i++) {
		id = dv_window_acquire(&win, 0, 0, 2);
		if (id == first)
			break;
		dv_window_complete(&win, id);
	}
	assert_int_equal(id, first);
	assert_int_equal(win.slot[id].tx_asked, 0);
	assert_int_equal(win.slot[id].wire_off_ns, DV_SLOT_NO_STAMP);
	dv_txmap_free(&m);
	dv_window_free(&win);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_one_and_seed),
	    cmocka_unit_test(test_uniform_by_position),
	    cmocka_unit_test(test_txmap_keys),
	    cmocka_unit_test(test_recycled_slot_unasked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
