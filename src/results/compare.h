/* compare: group the passes of results files by target x list x kind, set two studies side by side.
 */
#ifndef DV_COMPARE_H
#define DV_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/histogram.h"
#include "study/study.h"

/* The figures compared, gated and plotted (per pass; a group keeps one value per repeat). */
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
 * One target x list x pass kind of a study: all its reported repeats (warmup
 * passes are never grouped). Strings are borrowed from the study; the group is
 * valid while the study is.
 */
typedef struct dv_group {
	const char *target; /* target label */
	const char *list;   /* list label */
	dv_pass_kind_t kind;
	size_t n;                /* repeats */
	double *val[DV_M_COUNT]; /* val[m][i]: figure m of the i-th repeat (owned) */
	double mean[DV_M_COUNT];
	double sd[DV_M_COUNT];           /* sample standard deviation (n - 1); 0 when n < 2 */
	uint64_t sent, completed, lost;  /* summed over the repeats */
	dv_hist_t *latency;              /* merged over the repeats (owned) */
	const dv_pass_record_t **passes; /* the repeats in run order (owned array) */
} dv_group_t;

typedef struct dv_groups {
	dv_group_t *g;
	size_t n;
} dv_groups_t;

/* Group the reported passes of s, in order of first appearance. 0 or -ENOMEM. */
int dv_groups_build(const dv_study_t *s, dv_groups_t *out);
void dv_groups_free(dv_groups_t *gs);
/* The group of gs with the same target label, list label and kind as key; NULL if none. */
const dv_group_t *dv_groups_find(const dv_groups_t *gs, const dv_group_t *key);
/* "host1/SOA/hot" into buf. */
const char *dv_group_name(const dv_group_t *g, char *buf, size_t len);

/*
 * Run-to-run spread rule (doc/nightly.md, "Significance"): the change between
 * two sets of repeats is beyond the spread when |mean(b) - mean(a)| exceeds
 * twice the pooled sample standard deviation. Returns 1 beyond, 0 within, -1
 * when either side has fewer than two repeats (no spread to compare with).
 * Two sets with no spread at all (pooled sd 0) differ significantly as soon as
 * their means differ.
 */
int dv_compare_significant(const double *a, size_t na, const double *b, size_t nb);
double dv_pooled_sd(const double *a, size_t na, const double *b, size_t nb);

/*
 * Print the side-by-side table of base and cur (cur's groups in order, then the
 * groups only base has). base_name/cur_name label the columns (file names).
 * Returns the number of groups found in both.
 */
size_t dv_compare_print(const dv_study_t *base, const char *base_name, const dv_study_t *cur,
                        const char *cur_name, FILE *out);

#endif
