/* test_histogram: bucket layout, <= 1% quantile error over many magnitudes, merge, diff, moments.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "base/histogram.h"

/* Deterministic PRNG (splitmix64) so a failure is reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static dv_hist_t *new_hist(void)
{
	dv_hist_t *h = malloc(sizeof(*h));
	assert_non_null(h);
	dv_hist_init(h);
	return h;
}

static void test_layout(void **state)
{
	(void)state;
	assert_int_equal(DV_HIST_BUCKETS, 256 + 32 * 128);
	/* Exact region. */
	for (uint64_t v = 0; v < 256; v++) {
		assert_int_equal(dv_hist_bucket_of(v), (int)v);
		assert_int_equal(dv_hist_bucket_low((int)v), v);
		assert_int_equal(dv_hist_bucket_high((int)v), v + 1);
	}
	assert_int_equal(dv_hist_bucket_of(256), 256);
	assert_int_equal(dv_hist_bucket_of(257), 256);
	assert_int_equal(dv_hist_bucket_of(258), 257);
	assert_int_equal(dv_hist_bucket_of(511), 383);
	assert_int_equal(dv_hist_bucket_of(512), 384);
	assert_int_equal(dv_hist_bucket_of(DV_HIST_MAX_NS), DV_HIST_BUCKETS - 1);
	assert_int_equal(dv_hist_bucket_of(UINT64_MAX), DV_HIST_BUCKETS - 1);
	assert_int_equal(dv_hist_bucket_high(DV_HIST_BUCKETS - 1), 1ULL << DV_HIST_MAX_BITS);

	/* Buckets tile [0, 2^40) with no gap or overlap; width <= low / 128. */
	for (int i = 1; i < DV_HIST_BUCKETS; i++) {
		uint64_t lo = dv_hist_bucket_low(i), hi = dv_hist_bucket_high(i);
		assert_int_equal(lo, dv_hist_bucket_high(i - 1));
		assert_true(hi > lo);
		if (i >= 256)
			assert_true((hi - lo) * 128 <= lo);
		assert_int_equal(dv_hist_bucket_of(lo), i);
		assert_int_equal(dv_hist_bucket_of(hi - 1), i);
	}
	/* Random values fall in the bucket that covers them. */
	for (int n = 0; n < 100000; n++) {
		uint64_t v = rng() >> (rng() % 64);
		if (v > DV_HIST_MAX_NS)
			continue;
		int b = dv_hist_bucket_of(v);
		assert_true(dv_hist_bucket_low(b) <= v && v < dv_hist_bucket_high(b));
	}
}

static void test_empty(void **state)
{
	(void)state;
	dv_hist_t *h = new_hist();
	assert_int_equal(h->count, 0);
	assert_int_equal(h->min_ns, UINT64_MAX);
	assert_int_equal(h->max_ns, 0);
	assert_int_equal(dv_hist_quantile_ns(h, 0.5), 0);
	assert_true(dv_hist_mean_ns(h) == 0);
	assert_true(dv_hist_stddev_ns(h) == 0);
	free(h);
}

/* The definition in the header, applied to a sorted sample. */
static uint64_t true_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n - 1e-9);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void check_quantiles(const uint64_t *v, size_t n)
{
	dv_hist_t *h = new_hist();
	uint64_t *s = malloc(n * sizeof(*s));
	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		dv_hist_add(h, v[i]);
		s[i] = v[i];
	}
	qsort(s, n, sizeof(*s), cmp_u64);
	assert_int_equal(h->count, n);
	assert_int_equal(h->min_ns, s[0]);
	assert_int_equal(h->max_ns, s[n - 1]);
	static const double qs[] = {0.001, 0.01, 0.1,   0.25,   0.5, 0.75,
	                            0.9,   0.99, 0.999, 0.9999, 1.0};
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		uint64_t want = true_quantile(s, n, qs[k]);
		uint64_t got = dv_hist_quantile_ns(h, qs[k]);
		double err = want ? fabs((double)got - (double)want) / (double)want : (double)got;
		if (err > 0.01)
			fail_msg("q=%g: got %llu, true %llu, error %.4f", qs[k],
			         (unsigned long long)got, (unsigned long long)want, err);
	}
	/* The extremes stay inside [min, max] (the midpoint is clamped). */
	assert_true(dv_hist_quantile_ns(h, 1.0) <= s[n - 1]);
	assert_true(dv_hist_quantile_ns(h, 1e-12) >= s[0]);
	free(s);
	free(h);
}

static void test_quantile_error_many_magnitudes(void **state)
{
	(void)state;
	const size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	/* Log-uniform over 1 ns .. 2^40 ns. */
	for (size_t i = 0; i < n; i++) {
		double e = (double)(rng() % 4000000) / 100000.0; /* 0 .. 40 */
		v[i] = (uint64_t)pow(2.0, e);
		if (v[i] == 0)
			v[i] = 1;
	}
	check_quantiles(v, n);
	/* Narrow distributions at several magnitudes (where bucket edges matter most). */
	for (int mag = 3; mag <= 39; mag += 3) {
		uint64_t base = 1ULL << mag;
		for (size_t i = 0; i < 20000; i++)
			v[i] = base + rng() % (base / 2 + 1);
		check_quantiles(v, 20000);
	}
	/* Small sample counts: rank arithmetic at the edges. */
	for (size_t m = 1; m <= 12; m++) {
		for (size_t i = 0; i < m; i++)
			v[i] = 1000 + 997 * i * i;
		check_quantiles(v, m);
	}
	free(v);
}

static void test_quantile_definition(void **state)
{
	(void)state;
	dv_hist_t *h = new_hist();
	/* 10 exact values 1..10: q=0.9 -> rank 9 -> 9 (not 10, despite 0.9*10 rounding). */
	for (uint64_t i = 1; i <= 10; i++)
		dv_hist_add(h, i);
	assert_int_equal(dv_hist_quantile_ns(h, 0.9), 9);
	assert_int_equal(dv_hist_quantile_ns(h, 0.5), 5);
	assert_int_equal(dv_hist_quantile_ns(h, 0.51), 6);
	assert_int_equal(dv_hist_quantile_ns(h, 0.1), 1);
	assert_int_equal(dv_hist_quantile_ns(h, 1.0), 10);
	/* One value in a wide bucket: midpoint clamped to [min, max] gives the value. */
	dv_hist_init(h);
	dv_hist_add(h, 1000003);
	assert_int_equal(dv_hist_quantile_ns(h, 0.5), 1000003);
	/* Two values in one bucket: midpoint of the bucket, inside [min, max]. */
	dv_hist_init(h);
	int b = dv_hist_bucket_of(1 << 20);
	uint64_t lo = dv_hist_bucket_low(b), hi = dv_hist_bucket_high(b);
	dv_hist_add(h, lo);
	dv_hist_add(h, hi - 1);
	assert_int_equal(dv_hist_quantile_ns(h, 0.5), lo + (hi - lo) / 2);
	/* Beyond the range: counted in the last bucket, max still exact; the quantile
	 * is that bucket's midpoint (the histogram cannot tell more). */
	dv_hist_init(h);
	dv_hist_add(h, 5000);
	dv_hist_add(h, (1ULL << 45) + 7);
	assert_int_equal(h->bucket[DV_HIST_BUCKETS - 1], 1);
	assert_int_equal(h->max_ns, (1ULL << 45) + 7);
	lo = dv_hist_bucket_low(DV_HIST_BUCKETS - 1);
	hi = dv_hist_bucket_high(DV_HIST_BUCKETS - 1);
	assert_int_equal(dv_hist_quantile_ns(h, 1.0), lo + (hi - lo) / 2);
	b = dv_hist_bucket_of(5000);
	lo = dv_hist_bucket_low(b);
	hi = dv_hist_bucket_high(b);
	assert_int_equal(dv_hist_quantile_ns(h, 0.5), lo + (hi - lo) / 2);
	free(h);
}

/* The 95% interval of a quantile (the wire clock's sampling error): the values at ranks
 * floor(nq - 1.96 sqrt(nq(1-q))) and ceil(nq + 1.96 sqrt(nq(1-q))) + 1, clamped to [1, n]. */
static void test_quantile_ci95(void **state)
{
	(void)state;
	dv_hist_t *h = new_hist();
	uint64_t lo, hi;

	dv_hist_quantile_ci95(h, 0.5, &lo, &hi); /* empty */
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 0);
	for (uint64_t i = 1; i <= 100; i++) /* exact buckets: the value is the rank */
		dv_hist_add(h, i);
	dv_hist_quantile_ci95(h, 0.5, &lo, &hi); /* 50 -+ 9.8: ranks 40 and 61 */
	assert_int_equal(lo, 40);
	assert_int_equal(hi, 61);
	dv_hist_quantile_ci95(h, 0.99, &lo, &hi); /* 99 -+ 1.95: ranks 97 and 102, clamped */
	assert_int_equal(lo, 97);
	assert_int_equal(hi, 100);
	dv_hist_quantile_ci95(h, 0.01, &lo, &hi); /* 1 -+ 1.95: ranks -1 (clamped) and 4 */
	assert_int_equal(lo, 1);
	assert_int_equal(hi, 4);
	free(h);
}

static void test_mean_stddev(void **state)
{
	(void)state;
	dv_hist_t *h = new_hist();
	/* 2,4,4,4,5,5,7,9: mean 5, population stddev 2. */
	static const uint64_t v[] = {2, 4, 4, 4, 5, 5, 7, 9};
	for (size_t i = 0; i < 8; i++)
		dv_hist_add(h, v[i] * 1000000);
	assert_true(fabs(dv_hist_mean_ns(h) - 5e6) < 1e-3);
	assert_true(fabs(dv_hist_stddev_ns(h) - 2e6) < 1e-3);
	/* Constant sample: stddev exactly 0, never NaN. */
	dv_hist_init(h);
	for (int i = 0; i < 1000; i++)
		dv_hist_add(h, 123456789);
	assert_true(dv_hist_stddev_ns(h) == 0);
	assert_true(fabs(dv_hist_mean_ns(h) - 123456789.0) < 1e-6);
	free(h);
}

static void test_merge_diff(void **state)
{
	(void)state;
	dv_hist_t *a = new_hist(), *b = new_hist(), *all = new_hist();
	dv_hist_t *snap = new_hist(), *d = new_hist();
	for (int i = 0; i < 5000; i++) {
		uint64_t x = 100 + rng() % 1000000;
		dv_hist_add(i % 3 ? a : b, x);
		dv_hist_add(all, x);
	}
	dv_hist_t *m = new_hist();
	dv_hist_merge(m, a);
	dv_hist_merge(m, b);
	dv_hist_t *empty = new_hist();
	dv_hist_merge(m, empty); /* merging an empty one changes nothing */
	assert_int_equal(m->count, all->count);
	assert_int_equal(m->min_ns, all->min_ns);
	assert_int_equal(m->max_ns, all->max_ns);
	assert_memory_equal(m->bucket, all->bucket, sizeof(m->bucket));
	assert_true(fabs(m->sum_ns - all->sum_ns) <= 1e-9 * all->sum_ns);
	assert_int_equal(dv_hist_quantile_ns(m, 0.99), dv_hist_quantile_ns(all, 0.99));

	/* diff of two cumulative snapshots = what was added in between. */
	memcpy(snap, all, sizeof(*all));
	dv_hist_t *interval = new_hist();
	for (int i = 0; i < 777; i++) {
		uint64_t x = 5000 + rng() % 100;
		dv_hist_add(all, x);
		dv_hist_add(interval, x);
	}
	dv_hist_diff(d, all, snap);
	assert_int_equal(d->count, 777);
	assert_memory_equal(d->bucket, interval->bucket, sizeof(d->bucket));
	assert_true(fabs(dv_hist_mean_ns(d) - dv_hist_mean_ns(interval)) < 1e-3);
	assert_int_equal(d->min_ns, all->min_ns);
	assert_int_equal(d->max_ns, all->max_ns);
	/* An empty interval is an empty histogram. */
	dv_hist_diff(d, all, all);
	assert_int_equal(d->count, 0);
	assert_int_equal(d->min_ns, UINT64_MAX);
	assert_int_equal(dv_hist_quantile_ns(d, 0.5), 0);
	free(a);
	free(b);
	free(all);
	free(snap);
	free(d);
	free(m);
	free(empty);
	free(interval);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_quantile_error_many_magnitudes),
	    cmocka_unit_test(test_quantile_definition),
	    cmocka_unit_test(test_quantile_ci95),
	    cmocka_unit_test(test_mean_stddev),
	    cmocka_unit_test(test_merge_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
