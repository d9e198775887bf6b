/* histogram: log-linear latency histogram in nanoseconds, mergeable, <= 1% relative error. */
#ifndef DV_HISTOGRAM_H
#define DV_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Layout (HdrHistogram-like): values below 2^DV_HIST_SUB_BITS ns are counted
 * exactly; above, each power of two is split into 2^(DV_HIST_SUB_BITS-1) equal
 * buckets, so a bucket's width is at most 1/128 of its lower bound (0.78%).
 * Values above DV_HIST_MAX_NS land in the last bucket (max is still exact).
 * Bucket i covers [dv_hist_bucket_low(i), dv_hist_bucket_high(i)).
 */
#define DV_HIST_SUB_BITS 8  /* 256 exact values, 128 per octave */
#define DV_HIST_MAX_BITS 40 /* 2^40 ns ~ 1100 s */
#define DV_HIST_MAX_NS   ((1ULL << DV_HIST_MAX_BITS) - 1)
#define DV_HIST_BUCKETS                                                                            \
	((1 << DV_HIST_SUB_BITS) +                                                                 \
	 (DV_HIST_MAX_BITS - DV_HIST_SUB_BITS) * (1 << (DV_HIST_SUB_BITS - 1)))

typedef struct dv_hist {
	uint64_t count;
	uint64_t min_ns; /* UINT64_MAX when empty */
	uint64_t max_ns;
	double sum_ns;   /* for the mean */
	double sumsq_ns; /* for the standard deviation (population) */
	uint64_t bucket[DV_HIST_BUCKETS];
} dv_hist_t;

void dv_hist_init(dv_hist_t *h);
void dv_hist_add(dv_hist_t *h, uint64_t ns);
/* into += from. */
void dv_hist_merge(dv_hist_t *into, const dv_hist_t *from);
/* out = now - before (both cumulative snapshots of one histogram; min/max are those of now). */
void dv_hist_diff(dv_hist_t *out, const dv_hist_t *now, const dv_hist_t *before);

/* Mean and population standard deviation in ns; 0 when empty. */
double dv_hist_mean_ns(const dv_hist_t *h);
double dv_hist_stddev_ns(const dv_hist_t *h);
/*
 * Value at quantile q (0 < q <= 1): the smallest recorded bucket whose cumulative
 * count reaches ceil(q * count), reported as the bucket's midpoint clamped to
 * [min, max]. 0 when empty.
 */
uint64_t dv_hist_quantile_ns(const dv_hist_t *h, double q);
/*
 * A distribution-free 95% confidence interval for the q-quantile of the population the
 * recorded values are a uniform random sample of (the wire clock's sample): the values at
 * ranks floor(nq - 1.96 sqrt(nq(1-q))) and ceil(nq + 1.96 sqrt(nq(1-q))) + 1, clamped to
 * [1, n] (binomial order statistics, normal approximation), each reported as
 * dv_hist_quantile_ns reports a value. Both 0 when empty.
 */
void dv_hist_quantile_ci95(const dv_hist_t *h, double q, uint64_t *lo_ns, uint64_t *hi_ns);

/*
 * Sparse form: the non-empty buckets of a histogram, in increasing bucket order
 * (an interval's histogram delta is kept this way, doc/numbers.md "intervals").
 */
typedef struct dv_hist_cell {
	uint32_t bucket; /* index, < DV_HIST_BUCKETS */
	uint32_t zero;   /* 0 (no padding: cells are compared and sent as bytes) */
	uint64_t count;  /* > 0 */
} dv_hist_cell_t;

/* The non-empty buckets of h into out (room for DV_HIST_BUCKETS cells); returns how many. */
size_t dv_hist_to_cells(const dv_hist_t *h, dv_hist_cell_t *out);
/* out = a + b, bucket by bucket (out has room for na + nb cells); returns how many cells. */
size_t dv_hist_cells_merge(const dv_hist_cell_t *a, size_t na, const dv_hist_cell_t *b, size_t nb,
                           dv_hist_cell_t *out);
/*
 * dv_hist_quantile_ns of the histogram whose non-empty buckets are cells[0 .. n)
 * (count = their sum), clamped to [min_ns, max_ns] as that function does: the
 * same value, without the dense histogram. 0 when empty.
 */
uint64_t dv_hist_cells_quantile_ns(const dv_hist_cell_t *cells, size_t n, uint64_t count,
                                   uint64_t min_ns, uint64_t max_ns, double q);

int dv_hist_bucket_of(uint64_t ns);
uint64_t dv_hist_bucket_low(int i);
uint64_t dv_hist_bucket_high(int i);

#endif
