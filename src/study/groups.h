/* groups: a study's passes grouped over the repeats, and the significance rule (one place). */
#ifndef DV_GROUPS_H
#define DV_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"
#include "study/study.h"

/* The figures summarised, compared, gated and plotted (per pass). */
typedef enum dv_metric {
	DV_M_QPS = 0,  /* completed / run time */
	DV_M_LOST_PCT, /* lost / sent * 100 (0 when nothing was sent) */
	DV_M_P50_MS,   /* latency percentiles from the pass's histogram, milliseconds */
	DV_M_P90_MS,
	DV_M_P99_MS,
	DV_M_P999_MS,
	DV_M_MEAN_MS,
	DV_M_COUNT
} dv_metric_t;

/* "qps", "lost %", "p50 ms", ... for tables. */
const char *dv_metric_label(dv_metric_t m);
/* The figure m of one pass. */
double dv_pass_metric(const dv_pass_result_t *r, dv_metric_t m);

/*
 * Whether a pass is a sample of its group: reported (not a warm-up) and run to
 * its end. An interrupted pass is not a full sample (its figures cover part of
 * the list), so it is left out of every group, mean, spread and significance
 * verdict (doc/methodology.md, "The summary, precisely").
 */
bool dv_pass_is_sample(const dv_pass_record_t *p);

/* Values x1..xn of one figure over the repeats. */
typedef struct dv_series {
	size_t n;
	double mean;
	double sd; /* sample standard deviation (n - 1); 0 when n < 2 */
	double min, max;
} dv_series_t;

dv_series_t dv_series_of(const double *v, size_t n);

/*
 * The difference between two targets (doc/methodology.md, "Comparing targets"):
 * diff = mean b - mean a with the 95% confidence interval of Welch's t,
 *   se = sqrt(sa'^2/na + sb'^2/nb),  df = se^4 / ((sa'^2/na)^2/(na-1) + (sb'^2/nb)^2/(nb-1)),
 *   diff +- t(0.975, df) x se,
 * where s' = max(s, floor) (floor: the figure's resolution, dv_metric_floor). The
 * verdict needs DV_DIFF_MIN_N repeats on each side: fewer give DV_DIFF_TOO_FEW and
 * no interval (lo = hi = NAN). Significant: the interval excludes 0 (with se 0:
 * the means differ).
 */
#define DV_DIFF_MIN_N 3

typedef enum dv_diff_verdict {
	DV_DIFF_TOO_FEW = -1, /* fewer than DV_DIFF_MIN_N values on a side */
	DV_DIFF_NOISE = 0,    /* the interval contains 0 */
	DV_DIFF_SIGNIFICANT = 1,
} dv_diff_verdict_t;

typedef struct dv_diff {
	double diff;   /* mean b - mean a */
	double lo, hi; /* 95% confidence interval of diff; NAN when too few values */
	double df;     /* Welch-Satterthwaite degrees of freedom; 0 when too few */
	dv_diff_verdict_t verdict;
} dv_diff_t;

dv_diff_t dv_diff_welch(const dv_series_t *a, const dv_series_t *b, double floor_a, double floor_b);

/* Quantile p (0 < p < 1) of Student's t with df > 0 degrees of freedom (bisection on the CDF). */
double dv_t_quantile(double p, double df);

/*
 * The resolution of figure m at value v (same unit as the figure): for latency
 * (ms) the width of the histogram bucket holding v (src/base/histogram.h): two
 * values within it may be one value rounded apart. 0 for qps and loss.
 */
double dv_metric_floor(dv_metric_t m, double v);

/*
 * Latency changes are ratios (doc/methodology.md, "Comparing targets"): Welch's
 * interval is computed on the logarithms of the samples (la, lb: series of ln x,
 * dv_group_log_series) and returned as relative changes of b against a: diff,
 * lo and hi are exp(.) - 1, so the interval never reaches below -100%. rel_floor_*
 * is the resolution relative to the mean (bucket width / mean), floored on the
 * log scale as ln(1 + rel_floor).
 */
dv_diff_t dv_diff_log(const dv_series_t *la, const dv_series_t *lb, double rel_floor_a,
                      double rel_floor_b);

/* The group's: DV_QPS_MEASURED only when every sample is; else the first other status. */
struct dv_group;
dv_qps_status_t dv_group_qps_status(const dv_study_t *s, const struct dv_group *g);

/* The group's samples the server's own cache counters contradict (dv_pass_cache_contradicts);
 * 0 for NULL. */
size_t dv_group_cache_contradicts(const struct dv_group *g);

/* Whether a larger value of m is better (qps) or worse (latency, loss). */
bool dv_metric_higher_is_better(dv_metric_t m);

/*
 * One group: the sample passes of one target x list x pass kind (and, grouped
 * by position, the same occurrence of that kind in each repeat: the first
 * "hot", the second "hot2", ...). Strings are borrowed from the study; the
 * group is valid while the study is.
 */
typedef struct dv_group {
	const char *target; /* target label */
	const char *list;   /* list label */
	size_t ti, li;      /* indexes into the study's targets and lists */
	dv_pass_kind_t kind;
	unsigned nth;            /* 0-based occurrence of kind in a repeat; 0 grouped by kind */
	size_t n;                /* samples (repeats) */
	double *val[DV_M_COUNT]; /* val[m][i]: figure m of the i-th sample (owned) */
	double mean[DV_M_COUNT];
	double sd[DV_M_COUNT];           /* sample standard deviation (n - 1); 0 when n < 2 */
	uint64_t sent, completed, lost;  /* summed over the samples */
	dv_hist_t *latency;              /* merged over the samples (owned) */
	const dv_pass_record_t **passes; /* the samples in run order (owned array) */
} dv_group_t;

typedef struct dv_groups {
	dv_group_t *g;
	size_t n;
	size_t left_out; /* interrupted passes, in no group */
} dv_groups_t;

/* How passes are keyed into groups. */
typedef enum dv_group_by {
	DV_GROUP_BY_KIND = 0, /* target label x list label x kind (compare, gates, plot) */
	DV_GROUP_BY_POSITION, /* target x list x plan position (the study summary) */
} dv_group_by_t;

/*
 * Group the sample passes (dv_pass_is_sample) of s, in order of first
 * appearance. 0 or -ENOMEM.
 */
int dv_groups_build(const dv_study_t *s, dv_group_by_t by, dv_groups_t *out);
void dv_groups_free(dv_groups_t *gs);
/* The group of gs with the same target label, list label, kind and nth as key; NULL if none. */
const dv_group_t *dv_groups_find(const dv_groups_t *gs, const dv_group_t *key);
/* The group of target ti, list li, kind and nth in gs; NULL if none. */
const dv_group_t *dv_groups_at(const dv_groups_t *gs, size_t ti, size_t li, dv_pass_kind_t kind,
                               unsigned nth);
/* ln of figure m of g as a series; n 0 for a NULL group or when a value is not > 0. */
dv_series_t dv_group_log_series(const dv_group_t *g, dv_metric_t m);
/* Figure m of g as a series (n, mean, sd, min, max); n 0 for a NULL group. */
dv_series_t dv_group_series(const dv_group_t *g, dv_metric_t m);
/*
 * Capacity studies: the capacities (qps) of g's searches as a series, and in
 * *lower_bound whether any of them is only "at least" (generator-bound, --to
 * reached). n 0 when g's passes are not capacity searches (or g is NULL).
 */
dv_series_t dv_group_capacity(const dv_group_t *g, bool *lower_bound);
/*
 * The server's figures (engine/servercost.h) of g's samples whose server was measured:
 * which 0 = CPU µs per answer, 1 = peak RSS in kB (groups_server.c); from its own
 * counters (--server-stats), 2 = cache misses per query it counted, 3 = queries it counted.
 */
dv_series_t dv_group_server(const dv_group_t *g, int which);

/* "host1/SOA/hot" into buf. */
const char *dv_group_name(const dv_group_t *g, char *buf, size_t len);

#endif
