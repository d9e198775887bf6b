/* histogram: log-linear latency histogram (HdrHistogram-like): O(1) add, mergeable. */
#include "config.h"

#include "base/histogram.h"
#include "base/util.h"

#include <math.h>
#include <string.h>

/*
 * Index arithmetic. For v < 2^SUB_BITS the bucket is v itself. Above, with
 * k = floor(log2 v) and shift = k - (SUB_BITS - 1), the top SUB_BITS bits of v
 * (v >> shift, in [2^(SUB_BITS-1), 2^SUB_BITS)) pick one of the 2^(SUB_BITS-1)
 * buckets of the octave, and the octaves follow each other:
 *
 *   index = shift * 2^(SUB_BITS-1) + (v >> shift)
 *
 * (for k = SUB_BITS this gives 2^SUB_BITS + 0 .. 2^SUB_BITS + 127, just after
 * the exact buckets). The bucket width is 2^shift and its lower bound is at
 * least 2^(SUB_BITS-1) * 2^shift, hence the 1/128 bound on the width.
 */
#define HALF (1u << (DV_HIST_SUB_BITS - 1))

int dv_hist_bucket_of(uint64_t ns)
{
	if (ns > DV_HIST_MAX_NS)
		ns = DV_HIST_MAX_NS;
	if (ns < (1u << DV_HIST_SUB_BITS))
		return (int)ns;
	int k = 63 - __builtin_clzll(ns);
	int shift = k - (DV_HIST_SUB_BITS - 1);
	return shift * (int)HALF + (int)(ns >> shift);
}

uint64_t dv_hist_bucket_low(int i)
{
	if (i < (1 << DV_HIST_SUB_BITS))
		return (uint64_t)i;
	int shift = i / (int)HALF - 1;
	return (uint64_t)(HALF + (unsigned)i % HALF) << shift;
}

uint64_t dv_hist_bucket_high(int i)
{
	if (i < (1 << DV_HIST_SUB_BITS))
		return (uint64_t)i + 1;
	int shift = i / (int)HALF - 1;
	return dv_hist_bucket_low(i) + (1ULL << shift);
}

void dv_hist_init(dv_hist_t *h)
{
	memset(h, 0, sizeof(*h));
	h->min_ns = UINT64_MAX;
}

void dv_hist_add(dv_hist_t *h, uint64_t ns)
{
	h->bucket[dv_hist_bucket_of(ns)]++;
	h->count++;
	if (ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	double d = (double)ns;
	h->sum_ns += d;
	h->sumsq_ns += d * d;
}

void dv_hist_merge(dv_hist_t *into, const dv_hist_t *from)
{
	if (from->count == 0)
		return;
	for (int i = 0; i < DV_HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
	into->min_ns = DV_MIN(into->min_ns, from->min_ns);
	into->max_ns = DV_MAX(into->max_ns, from->max_ns);
	into->sum_ns += from->sum_ns;
	into->sumsq_ns += from->sumsq_ns;
}

void dv_hist_diff(dv_hist_t *out, const dv_hist_t *now, const dv_hist_t *before)
{
	for (int i = 0; i < DV_HIST_BUCKETS; i++)
		out->bucket[i] = now->bucket[i] - before->bucket[i];
	out->count = now->count - before->count;
	out->sum_ns = now->sum_ns - before->sum_ns;
	out->sumsq_ns = now->sumsq_ns - before->sumsq_ns;
	out->min_ns = now->min_ns;
	out->max_ns = now->max_ns;
	if (out->count == 0) {
		/* Keep the "empty" convention so a later merge is not polluted. */
		out->min_ns = UINT64_MAX;
		out->max_ns = 0;
		out->sum_ns = 0;
		out->sumsq_ns = 0;
	}
}

double dv_hist_mean_ns(const dv_hist_t *h)
{
	if (h->count == 0)
		return 0;
	return h->sum_ns / (double)h->count;
}

double dv_hist_stddev_ns(const dv_hist_t *h)
{
	if (h->count == 0)
		return 0;
	double n = (double)h->count;
	double mean = h->sum_ns / n;
	double var = h->sumsq_ns / n - mean * mean;
	/* Cancellation can leave a tiny negative number for a constant sample. */
	return var > 0 ? sqrt(var) : 0;
}

/* ceil(q * count) in [1, count], without letting 0.9 * 10 = 9.000000000000002 become 10. */
static uint64_t rank_of(double q, uint64_t count)
{
	double x = q * (double)count;
	double r = nearbyint(x);
	uint64_t rank;
	if (fabs(x - r) <= 1e-9 * (x > 1 ? x : 1))
		rank = (uint64_t)r;
	else
		rank = (uint64_t)ceil(x);
	if (rank < 1)
		rank = 1;
	if (rank > count)
		rank = count;
	return rank;
}

/* The value reported for the rank-th smallest (1 <= rank <= count): its bucket's midpoint
 * clamped to [min, max]. */
static uint64_t value_at_rank(const dv_hist_t *h, uint64_t rank)
{
	uint64_t cum = 0;
	int i;
	for (i = 0; i < DV_HIST_BUCKETS - 1; i++) {
		cum += h->bucket[i];
		if (cum >= rank)
			break;
	}
	uint64_t low = dv_hist_bucket_low(i);
	uint64_t mid = low + (dv_hist_bucket_high(i) - low) / 2;
	if (mid < h->min_ns)
		mid = h->min_ns;
	if (mid > h->max_ns)
		mid = h->max_ns;
	return mid;
}

uint64_t dv_hist_quantile_ns(const dv_hist_t *h, double q)
{
	if (h->count == 0)
		return 0;
	return value_at_rank(h, rank_of(q, h->count));
}

void dv_hist_quantile_ci95(const dv_hist_t *h, double q, uint64_t *lo_ns, uint64_t *hi_ns)
{
	double n = (double)h->count, half = 1.96 * sqrt(n * q * (1 - q));
	double lo = floor(n * q - half), hi = ceil(n * q + half) + 1;

	if (h->count == 0) {
		*lo_ns = *hi_ns = 0;
		return;
	}
	*lo_ns = value_at_rank(h, lo < 1 ? 1 : (uint64_t)lo);
	*hi_ns = value_at_rank(h, hi > n ? h->count : (uint64_t)hi);
}

size_t dv_hist_to_cells(const dv_hist_t *h, dv_hist_cell_t *out)
{
	size_t n = 0;

	for (int i = 0; h->count > 0 && i < DV_HIST_BUCKETS; i++) {
		if (h->bucket[i] == 0)
			continue;
		out[n].bucket = (uint32_t)i;
		out[n].zero = 0;
		out[n].count = h->bucket[i];
		n++;
	}
	return n;
}

size_t dv_hist_cells_merge(const dv_hist_cell_t *a, size_t na, const dv_hist_cell_t *b, size_t nb,
                           dv_hist_cell_t *out)
{
	size_t i = 0, j = 0, n = 0;

	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].bucket < b[j].bucket)) {
			out[n++] = a[i++];
		} else if (i == na || b[j].bucket < a[i].bucket) {
			out[n++] = b[j++];
		} else {
			out[n] = a[i++];
			out[n++].count += b[j++].count;
		}
	}
	return n;
}

uint64_t dv_hist_cells_quantile_ns(const dv_hist_cell_t *cells, size_t n, uint64_t count,
                                   uint64_t min_ns, uint64_t max_ns, double q)
{
	if (count == 0 || n == 0)
		return 0;
	uint64_t rank = rank_of(q, count), cum = 0;
	size_t k;
	for (k = 0; k < n - 1; k++) {
		cum += cells[k].count;
		if (cum >= rank)
			break;
	}
	int i = (int)cells[k].bucket;
	uint64_t low = dv_hist_bucket_low(i);
	uint64_t mid = low + (dv_hist_bucket_high(i) - low) / 2;
	if (mid < min_ns)
		mid = min_ns;
	if (mid > max_ns)
		mid = max_ns;
	return mid;
}
