/* test_dist: the split of -c/-q/-T/-Q over ranks, list sharding, the exact merge of passes. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "study/dist.h"

static void test_share_config(void **state)
{
	uint32_t sockets = 0, outstanding = 0, threads = 0;
	double qps = 0;
	dv_err_t err;

	(void)state;
	for (int r = 0; r < 3; r++) {
		dv_run_config_t cfg;
		dv_run_config_init(&cfg);
		cfg.sockets = 16;
		cfg.max_outstanding = 100;
		cfg.threads = 4;
		cfg.max_qps = 30000;
		cfg.local_port = 20000;
		assert_int_equal(dv_dist_share_config(&cfg, r, 3, &err), 0);
		/* 16 = 6 + 5 + 5, 100 = 34 + 33 + 33, 4 = 2 + 1 + 1 */
		assert_int_equal(cfg.sockets, r == 0 ? 6 : 5);
		assert_int_equal(cfg.max_outstanding, r == 0 ? 34 : 33);
		assert_int_equal(cfg.threads, r == 0 ? 2 : 1);
		assert_int_equal(cfg.local_port, 20000 + (r == 0 ? 0 : r == 1 ? 6 : 11));
		sockets += cfg.sockets;
		outstanding += cfg.max_outstanding;
		threads += cfg.threads;
		qps += cfg.max_qps;
	}
	assert_int_equal(sockets, 16);
	assert_int_equal(outstanding, 100);
	assert_int_equal(threads, 4);
	assert_true(qps > 29999.999 && qps < 30000.001);
}

static void test_share_refuses(void **state)
{
	dv_run_config_t cfg;
	dv_err_t err;

	(void)state;
	dv_run_config_init(&cfg);
	cfg.sockets = 2;
	assert_int_equal(dv_dist_share_config(&cfg, 0, 3, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "-c 2"));
	dv_run_config_init(&cfg);
	cfg.threads = 1; /* fewer threads than ranks: one each */
	assert_int_equal(dv_dist_share_config(&cfg, 2, 3, &err), 0);
	assert_int_equal(cfg.threads, 1);
}

static void test_shard(void **state)
{
	const char *text = "a. A\nb. A\nc. A\nd. A\ne. A\nf. A\ng. A\n";
	dv_querylist_options_t o;
	dv_err_t err;
	size_t total = 0;

	(void)state;
	dv_querylist_options_init(&o);
	for (int r = 0; r < 3; r++) {
		dv_querylist_t full, part;
		size_t lf, lp;
		assert_int_equal(dv_querylist_load_buffer(&full, text, strlen(text), "t", &o, &err),
		                 0);
		assert_int_equal(dv_querylist_load_buffer(&part, text, strlen(text), "t", &o, &err),
		                 0);
		assert_int_equal(dv_dist_shard_list(&part, r, 3, &err), 0);
		assert_int_equal(part.count, r == 0 ? 3 : 2);
		for (size_t i = 0; i < part.count; i++) {
			const uint8_t *a = dv_querylist_get(&part, i, &lp);
			const uint8_t *b = dv_querylist_get(&full, (size_t)r + 3 * i, &lf);
			assert_int_equal(lp, lf);
			assert_memory_equal(a, b, lp);
		}
		total += part.count;
		dv_querylist_free(&full);
		dv_querylist_free(&part);
	}
	assert_int_equal(total, 7);
}

/* Two known histograms merged: the percentiles are those of all the values in one. */
static void test_merge_histograms(void **state)
{
	dv_pass_result_t a, b;
	dv_hist_t all;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	dv_stats_init(&a.stats);
	dv_stats_init(&b.stats);
	dv_hist_init(&all);
	for (uint64_t v = 1; v <= 100; v++) { /* a: 1..100 us; b: 101..200 us */
		dv_hist_add(&a.stats.latency, v * 1000);
		dv_hist_add(&b.stats.latency, (v + 100) * 1000);
		dv_hist_add(&all, v * 1000);
		dv_hist_add(&all, (v + 100) * 1000);
	}
	a.stats.c.sent = a.stats.c.completed = 100;
	b.stats.c.sent = b.stats.c.completed = 100;
	a.run_time_s = 1.0;
	b.run_time_s = 2.0;
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(a.stats.c.sent, 200);
	assert_int_equal(a.stats.latency.count, 200);
	assert_memory_equal(a.stats.latency.bucket, all.bucket, sizeof(all.bucket));
	assert_int_equal(dv_hist_quantile_ns(&a.stats.latency, 0.5),
	                 dv_hist_quantile_ns(&all, 0.5));
	assert_int_equal(dv_hist_quantile_ns(&a.stats.latency, 0.99),
	                 dv_hist_quantile_ns(&all, 0.99));
	/* 100th of 200 values is 100 us, the 198th 198 us: within a bucket (<= 0.8%) */
	assert_true(dv_hist_quantile_ns(&a.stats.latency, 0.5) >= 99200 &&
	            dv_hist_quantile_ns(&a.stats.latency, 0.5) <= 100800);
	assert_true(dv_hist_quantile_ns(&a.stats.latency, 0.99) >= 196400 &&
	            dv_hist_quantile_ns(&a.stats.latency, 0.99) <= 199600);
	assert_int_equal(a.stats.latency.min_ns, 1000);
	assert_int_equal(a.stats.latency.max_ns, 200000);
	assert_true(a.qps > 99.99 && a.qps < 100.01); /* 200 completed over the longer 2 s */
}

/* --xdp ranks merged: the queues add up; native and zero-copy only when every rank was;
 * a rank without --xdp adds nothing, and takes the first --xdp rank's figures. */
static void test_merge_xdp(void **state)
{
	dv_pass_result_t a, b, c;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	dv_stats_init(&a.stats);
	dv_stats_init(&b.stats);
	dv_stats_init(&c.stats);
	a.xdp = (dv_xdp_info_t){
	    .used = true, .native = true, .zerocopy = true, .queues = 2, .rx_queues = 4};
	b.xdp = (dv_xdp_info_t){
	    .used = true, .native = true, .zerocopy = false, .queues = 1, .rx_queues = 1};
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_true(a.xdp.used && a.xdp.native && !a.xdp.zerocopy);
	assert_int_equal(a.xdp.queues, 3);
	assert_int_equal(a.xdp.rx_queues, 5);
	assert_int_equal(dv_dist_merge_pass(&a, &c), 0); /* no --xdp: unchanged */
	assert_int_equal(a.xdp.queues, 3);
	assert_int_equal(dv_dist_merge_pass(&c, &b), 0);
	assert_true(c.xdp.used && !c.xdp.zerocopy);
	assert_int_equal(c.xdp.queues, 1);
}

/* The clock of merged ranks (or results files): kept when all agree, mixed when they do not,
 * not recorded when one's was not; the sample rate kept only when all had the same; receive
 * stamps by the socket filter only when every one's were. */
static void test_merge_clock(void **state)
{
	dv_pass_result_t a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	dv_stats_init(&a.stats);
	dv_stats_init(&b.stats);
	a.clock = b.clock = DV_PASS_CLOCK_WIRE;
	a.stamp_every = b.stamp_every = 16;
	a.rx_filter = b.rx_filter = true;
	a.wire_workers = a.rx_filter_workers = b.wire_workers = b.rx_filter_workers = 2;
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(a.clock, DV_PASS_CLOCK_WIRE);
	assert_int_equal(a.stamp_every, 16);
	assert_true(a.rx_filter);
	assert_int_equal(a.wire_workers, 4);
	assert_int_equal(a.rx_filter_workers, 4);
	b.stamp_every = 1;
	b.rx_filter = false; /* a rank whose stamps came from control messages: counted apart */
	b.rx_filter_workers = 0;
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(a.clock, DV_PASS_CLOCK_WIRE);
	assert_int_equal(a.stamp_every, 0);
	assert_false(a.rx_filter);
	assert_int_equal(a.wire_workers, 6);
	assert_int_equal(a.rx_filter_workers, 4);
	b.clock = DV_PASS_CLOCK_APP;
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(a.clock, DV_PASS_CLOCK_MIXED);
	b.clock = DV_PASS_CLOCK_UNKNOWN;
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(a.clock, DV_PASS_CLOCK_UNKNOWN);
	b.clock = DV_PASS_CLOCK_APP;
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(a.clock, DV_PASS_CLOCK_UNKNOWN);
}

/* Append an interval whose histogram is h (as the engine keeps it) to res. */
static void add_interval(dv_pass_result_t *res, const dv_hist_t *h, bool kept)
{
	dv_interval_t *iv;
	size_t n;

	res->intervals = realloc(res->intervals, (res->n_intervals + 1) * sizeof(*iv));
	res->lat_cells =
	    realloc(res->lat_cells, (res->n_lat_cells + DV_HIST_BUCKETS) * sizeof(*res->lat_cells));
	assert_non_null(res->intervals);
	assert_non_null(res->lat_cells);
	iv = &res->intervals[res->n_intervals];
	memset(iv, 0, sizeof(*iv));
	iv->t_s = (double)++res->n_intervals;
	iv->completed = iv->sent = h->count;
	iv->lat_mean_ns = dv_hist_mean_ns(h);
	iv->lat_p50_ns = (double)dv_hist_quantile_ns(h, 0.50);
	iv->lat_p99_ns = (double)dv_hist_quantile_ns(h, 0.99);
	if (!kept)
		return;
	n = dv_hist_to_cells(h, res->lat_cells + res->n_lat_cells);
	iv->lat_kept = true;
	iv->lat_first = res->n_lat_cells;
	iv->lat_n = (uint32_t)n;
	iv->lat_count = h->count;
	iv->lat_min_ns = h->min_ns;
	iv->lat_max_ns = h->max_ns;
	res->n_lat_cells += n;
}

/*
 * Interval snapshots merge exactly: the histograms of the same interval of two
 * ranks added bucket by bucket, p50/p99 those of the sum; an interval one rank
 * lacks counts as empty; an interval without a histogram gives the upper bound.
 */
static void test_merge_intervals(void **state)
{
	dv_pass_result_t a, b;
	dv_hist_t *ha = malloc(3 * sizeof(*ha)), *hb = malloc(3 * sizeof(*hb)), *sum;
	dv_hist_cell_t *want = malloc(DV_HIST_BUCKETS * sizeof(*want));

	(void)state;
	assert_non_null(ha);
	assert_non_null(hb);
	assert_non_null(want);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < 3; i++) {
		dv_hist_init(&ha[i]);
		dv_hist_init(&hb[i]);
		/* a: 90 fast answers (10..99 us); b: 10 slow ones (1..10 ms) in interval i */
		for (uint64_t v = 10; v < 100; v++)
			dv_hist_add(&ha[i], v * 1000 + (uint64_t)i);
		for (uint64_t v = 1; v <= 10; v++)
			dv_hist_add(&hb[i], v * 1000000 * (uint64_t)(i + 1));
	}
	add_interval(&a, &ha[0], true);
	add_interval(&a, &ha[1], true); /* a's pass ended before its third interval */
	for (int i = 0; i < 3; i++)
		add_interval(&b, &hb[i], true);
	assert_int_equal(dv_dist_merge_intervals(&a, &b), 0);
	assert_int_equal(a.n_intervals, 3);
	for (int i = 0; i < 3; i++) {
		const dv_interval_t *iv = &a.intervals[i];
		sum = &ha[i];
		if (i < 2)
			dv_hist_merge(sum, &hb[i]);
		else
			sum = &hb[i];
		size_t n = dv_hist_to_cells(sum, want);
		assert_true(iv->lat_kept);
		assert_int_equal(iv->lat_count, sum->count);
		assert_int_equal(iv->lat_n, n);
		assert_memory_equal(a.lat_cells + iv->lat_first, want, n * sizeof(*want));
		assert_int_equal(iv->lat_min_ns, sum->min_ns);
		assert_int_equal(iv->lat_max_ns, sum->max_ns);
		assert_int_equal((uint64_t)iv->lat_p50_ns, dv_hist_quantile_ns(sum, 0.50));
		assert_int_equal((uint64_t)iv->lat_p99_ns, dv_hist_quantile_ns(sum, 0.99));
		assert_true(fabs(iv->lat_mean_ns - dv_hist_mean_ns(sum)) < 1e-6 * iv->lat_mean_ns);
		assert_int_equal(iv->sent, sum->count);
	}
	/* 100 answers: the 50th is a's 59 us (+0), the 99th b's 9 ms: not the larger p50 */
	assert_true(a.intervals[0].lat_p50_ns >= 58500 && a.intervals[0].lat_p50_ns <= 59500);
	assert_true(a.intervals[0].lat_p99_ns >= 8.93e6 && a.intervals[0].lat_p99_ns <= 9.07e6);
	dv_pass_result_free(&a);
	dv_pass_result_free(&b);

	/* One side without a histogram (an older file): the upper bound, no histogram. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	dv_hist_init(&ha[0]);
	for (uint64_t v = 10; v < 100; v++)
		dv_hist_add(&ha[0], v * 1000);
	add_interval(&a, &ha[0], false);
	add_interval(&b, &hb[0], true);
	assert_int_equal(dv_dist_merge_intervals(&a, &b), 0);
	assert_false(a.intervals[0].lat_kept);
	assert_int_equal(a.intervals[0].lat_n, 0);
	assert_true(a.intervals[0].lat_p50_ns == b.intervals[0].lat_p50_ns); /* b's 5 ms > a's */
	assert_int_equal(a.n_lat_cells, 0);
	dv_pass_result_free(&a);
	dv_pass_result_free(&b);
	free(ha);
	free(hb);
	free(want);
}

static void test_start_at(void **state)
{
	uint64_t ns = 0;
	dv_err_t err;

	(void)state;
	assert_int_equal(dv_dist_parse_start_at("2026-01-02T03:04:05Z", &ns, &err), 0);
	assert_int_equal(ns, 1767323045ULL * 1000000000ULL);
	assert_int_equal(dv_dist_parse_start_at("1767323045.5", &ns, &err), 0);
	assert_int_equal(ns, 1767323045500000000ULL);
	assert_int_equal(dv_dist_parse_start_at("soon", &ns, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--start-at"));
	assert_int_equal(dv_dist_parse_start_at("2026-01-02T03:04:05", &ns, &err), -EINVAL);
}

/* A pass result of `completed` answers whose server reading is *sv (answers: its own). */
static void server_pass(dv_pass_result_t *r, uint64_t completed, const dv_server_cost_t *sv)
{
	memset(r, 0, sizeof(*r));
	dv_stats_init(&r->stats);
	r->stats.c.sent = r->stats.c.completed = completed;
	r->run_time_s = 1.0;
	r->server = *sv;
	if (r->server.ok)
		r->server.answers = completed;
}

/*
 * The server is one, whatever the number of ranks: its figures are taken once (rank 0's,
 * else the first rank that read it), never added, and divided by the merged answers; its
 * counters likewise, apart from the process's figures.
 */
static void test_merge_server(void **state)
{
	const dv_server_cost_t seen = {.measured = true,
	                               .ok = true,
	                               .proc = true,
	                               .pid = 42,
	                               .cpu_user_s = 0.3,
	                               .cpu_sys_s = 0.1,
	                               .vcsw = 1000,
	                               .stats = true,
	                               .stats_ok = true,
	                               .stats_cache = true,
	                               .stats_queries = 300,
	                               .stats_hits = 100,
	                               .stats_misses = 200};
	dv_server_cost_t other = seen, gone = {.measured = true}, none = {0};
	dv_pass_result_t a, b, c;

	(void)state;
	other.pid = 43;
	other.cpu_user_s = 0.31; /* the same server read by another rank: never added */
	other.shares_cpu = true;
	other.stats_queries = 301;
	server_pass(&a, 100, &seen);
	server_pass(&b, 200, &other);
	server_pass(&c, 100, &none);
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_int_equal(dv_dist_merge_pass(&a, &c), 0);
	assert_int_equal(a.server.pid, 42);
	assert_true(a.server.cpu_user_s == 0.3 && a.server.cpu_sys_s == 0.1);
	assert_int_equal(a.server.vcsw, 1000);
	assert_int_equal(a.server.answers, 400); /* every rank's answers */
	assert_true(fabs(dv_server_us_per_answer(&a.server) - 1000.0) < 1e-9);
	assert_true(a.server.shares_cpu); /* a rank beside the server */
	assert_int_equal(a.server.stats_queries, 300);
	assert_int_equal(a.server.stats_misses, 200);

	/* rank 0 could not read it (another host), rank 1 could: rank 1's figures */
	gone.stats = true; /* and its control tool failed there */
	snprintf(gone.error, sizeof(gone.error), "not on this host");
	snprintf(gone.stats_error, sizeof(gone.stats_error), "refused");
	server_pass(&a, 100, &gone);
	server_pass(&b, 300, &other);
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_true(a.server.ok);
	assert_int_equal(a.server.pid, 43);
	assert_true(a.server.cpu_user_s == 0.31);
	assert_int_equal(a.server.answers, 400);
	assert_true(a.server.stats_ok);
	assert_int_equal(a.server.stats_queries, 301);

	/* counters only on rank 0 (--server-pid none there), the process on rank 1 */
	dv_server_cost_t counters = {
	    .measured = true, .stats = true, .stats_ok = true, .stats_queries = 500};
	other.stats = other.stats_ok = false;
	server_pass(&a, 250, &counters);
	server_pass(&b, 250, &other);
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_true(a.server.ok);
	assert_int_equal(a.server.pid, 43);
	assert_int_equal(a.server.answers, 500);
	assert_true(a.server.stats_ok);
	assert_int_equal(a.server.stats_queries, 500);

	/* nobody measured anything: nothing measured after the merge */
	server_pass(&a, 10, &none);
	server_pass(&b, 10, &none);
	assert_int_equal(dv_dist_merge_pass(&a, &b), 0);
	assert_false(a.server.measured);
	assert_int_equal(a.server.answers, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_share_config),    cmocka_unit_test(test_share_refuses),
	    cmocka_unit_test(test_shard),           cmocka_unit_test(test_merge_histograms),
	    cmocka_unit_test(test_merge_xdp),       cmocka_unit_test(test_merge_clock),
	    cmocka_unit_test(test_merge_intervals), cmocka_unit_test(test_start_at),
	    cmocka_unit_test(test_merge_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
