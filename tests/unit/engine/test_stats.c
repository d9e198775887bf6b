/* test_stats: dv_stats_merge exactly (every counter summed, qtype slots, histograms), the table. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/util.h"
#include "engine/stats.h"

static dv_stats_t *new_stats(void)
{
	dv_stats_t *s = malloc(sizeof(*s));
	assert_non_null(s);
	dv_stats_init(s);
	return s;
}

/* The struct holds the table's counters and the breakdowns, nothing the table misses. */
static void test_table_covers_struct(void **state)
{
	(void)state;
	/* 48 + the five TSIG outcomes (-y) + conn_backoffs, tc_no_conn + tsig_badmac +
	 * conn_syn_retries + xdp_stamped (--xdp) + stamps_asked + rx_stamps_unused +
	 * conn_no_port + the three untimed_* (wire clock) */
	assert_int_equal(dv_counter_nfields, 64);
	assert_int_equal(sizeof(dv_counters_t),
	                 dv_counter_nfields * sizeof(uint64_t) + sizeof(uint64_t) * DV_RCODES +
	                     2 * sizeof(uint64_t) + sizeof(dv_qtype_count_t) * DV_QTYPE_SLOTS);
	for (size_t i = 0; i < dv_counter_nfields; i++) {
		const dv_counter_field_t *f = &dv_counter_fields[i];
		assert_int_equal(f->offset, i * sizeof(uint64_t)); /* in order, no gaps */
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(f->name, dv_counter_fields[k].name);
	}
	assert_string_equal(dv_counter_fields[0].name, "sent");
	assert_int_equal(dv_counter_fields[0].offset, offsetof(dv_counters_t, sent));
	assert_string_equal(dv_counter_fields[15].name, "inflight_peak");
	assert_int_equal(dv_counter_fields[15].offset, offsetof(dv_counters_t, inflight_peak));
	assert_int_equal(dv_counter_fields[14].flags, DV_CTR_OPTIONAL); /* wait_calls */
	assert_string_equal(dv_counter_fields[20].name, "wire_timed");
	assert_string_equal(dv_counter_fields[44].name, "tc_not_sent");
	assert_string_equal(dv_counter_fields[45].name, "forfeited");
	assert_string_equal(dv_counter_fields[46].name, "sent_behind");
	assert_int_equal(dv_counter_fields[45].flags, DV_CTR_OPTIONAL);
	assert_int_equal(dv_counter_fields[46].flags, DV_CTR_OPTIONAL);
	assert_string_equal(dv_counter_fields[47].name, "server_holds");
	assert_int_equal(dv_counter_fields[47].flags, DV_CTR_OPTIONAL);
}

/* Every flat counter and every rcode is added, with values distinct per field. */
static void test_counters_summed(void **state)
{
	dv_stats_t *a = new_stats(), *b = new_stats();
	(void)state;

	for (size_t i = 0; i < dv_counter_nfields; i++) {
		*dv_counter_ptr(&a->c, &dv_counter_fields[i]) = 1000 + i;
		*dv_counter_ptr(&b->c, &dv_counter_fields[i]) = 7 * (i + 1);
	}
	for (int i = 0; i < DV_RCODES; i++) {
		a->c.rcode[i] = 100 + (uint64_t)i;
		b->c.rcode[i] = 3 * (uint64_t)i;
	}
	a->c.qtype_other_sent = 11;
	a->c.qtype_other_completed = 9;
	b->c.qtype_other_sent = 5;
	b->c.qtype_other_completed = 4;
	dv_stats_merge(a, b);
	for (size_t i = 0; i < dv_counter_nfields; i++) {
		/* DV_CTR_MAX fields (a peak on one connection) take the larger value. */
		if (dv_counter_fields[i].flags & DV_CTR_MAX)
			assert_int_equal(dv_counter_get(&a->c, &dv_counter_fields[i]),
			                 DV_MAX(1000 + i, 7 * (i + 1)));
		else
			assert_int_equal(dv_counter_get(&a->c, &dv_counter_fields[i]),
			                 1000 + i + 7 * (i + 1));
		assert_int_equal(dv_counter_get(&b->c, &dv_counter_fields[i]), 7 * (i + 1));
	}
	for (int i = 0; i < DV_RCODES; i++)
		assert_int_equal(a->c.rcode[i], 100 + 4 * (uint64_t)i);
	/* Named, so the semantics show: peaks are summed, not maxed. */
	assert_int_equal(a->c.sent, 1000 + 7);
	assert_int_equal(a->c.inflight_peak, 1015 + 7 * 16);
	assert_int_equal(a->c.conn_inflight_peak, 1000 + 33); /* max(1033, 7 * 34) */
	assert_int_equal(a->c.conn_pending_peak, 1000 + 34);  /* max(1034, 7 * 35) */
	assert_int_equal(a->c.qtype_other_sent, 16);
	assert_int_equal(a->c.qtype_other_completed, 13);
	free(a);
	free(b);
}

/* Slots are matched by qtype, new qtypes take free slots, the rest goes to qtype_other. */
static void test_qtypes(void **state)
{
	dv_stats_t *a = new_stats(), *b = new_stats();
	(void)state;

	dv_stats_qtype_sent(&a->c, 1);
	dv_stats_qtype_sent(&a->c, 1);
	dv_stats_qtype_completed(&a->c, 1);
	dv_stats_qtype_sent(&b->c, 28);
	dv_stats_qtype_sent(&b->c, 1);
	dv_stats_qtype_completed(&b->c, 28);
	dv_stats_merge(a, b);
	assert_int_equal(a->c.qtype[0].qtype, 1);
	assert_int_equal(a->c.qtype[0].sent, 3);
	assert_int_equal(a->c.qtype[0].completed, 1);
	assert_int_equal(a->c.qtype[1].qtype, 28);
	assert_int_equal(a->c.qtype[1].sent, 1);
	assert_int_equal(a->c.qtype[1].completed, 1);
	assert_int_equal(a->c.qtype[2].qtype, 0);
	assert_int_equal(a->c.qtype_other_sent, 0);

	/* a full: qtypes 1..32; b's qtype 100 has no slot in a. */
	dv_stats_init(a);
	dv_stats_init(b);
	for (uint16_t t = 1; t <= DV_QTYPE_SLOTS; t++)
		dv_stats_qtype_sent(&a->c, t);
	dv_stats_qtype_sent(&b->c, 100);
	dv_stats_qtype_sent(&b->c, 100);
	dv_stats_qtype_completed(&b->c, 100);
	dv_stats_qtype_sent(&b->c, 5);
	dv_stats_merge(a, b);
	assert_int_equal(a->c.qtype[4].qtype, 5);
	assert_int_equal(a->c.qtype[4].sent, 2);
	assert_int_equal(a->c.qtype_other_sent, 2);
	assert_int_equal(a->c.qtype_other_completed, 1);
	for (int i = 0; i < DV_QTYPE_SLOTS; i++)
		assert_int_not_equal(a->c.qtype[i].qtype, 100);
	free(a);
	free(b);
}

static void test_latency(void **state)
{
	dv_stats_t *a = new_stats(), *b = new_stats(), *empty = new_stats();
	(void)state;

	dv_hist_add(&a->latency, 1000);
	dv_hist_add(&a->latency, 5000);
	dv_hist_add(&b->latency, 200);
	dv_hist_add(&b->latency, 9000);
	dv_hist_add(&b->latency, 1000);
	dv_stats_merge(a, b);
	assert_int_equal(a->latency.count, 5);
	assert_int_equal(a->latency.min_ns, 200);
	assert_int_equal(a->latency.max_ns, 9000);
	assert_true(a->latency.sum_ns == 16200.0);
	assert_true(a->latency.sumsq_ns == 1e6 + 25e6 + 4e4 + 81e6 + 1e6);
	assert_int_equal(a->latency.bucket[dv_hist_bucket_of(1000)], 2);
	assert_int_equal(a->latency.bucket[dv_hist_bucket_of(200)], 1);
	assert_int_equal(a->latency.bucket[dv_hist_bucket_of(5000)], 1);
	assert_int_equal(a->latency.bucket[dv_hist_bucket_of(9000)], 1);

	/* An empty histogram changes nothing; merged into an empty one it is copied. */
	dv_stats_merge(a, empty);
	assert_int_equal(a->latency.count, 5);
	assert_int_equal(a->latency.min_ns, 200);
	dv_stats_merge(empty, b);
	assert_int_equal(empty->latency.count, 3);
	assert_int_equal(empty->latency.min_ns, 200);
	assert_int_equal(empty->latency.max_ns, 9000);
	free(a);
	free(b);
	free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_covers_struct),
	    cmocka_unit_test(test_counters_summed),
	    cmocka_unit_test(test_qtypes),
	    cmocka_unit_test(test_latency),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
