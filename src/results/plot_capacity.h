/* plot_capacity: the capacity hockey-stick chart and the resperf-style ramp chart (gnuplot). */
#ifndef DV_PLOT_CAPACITY_H
#define DV_PLOT_CAPACITY_H

#include <stddef.h>

#include "study/capacity.h"
#include "base/util.h"

typedef struct dv_plot_cap_series {
	const char *label; /* "target / list" */
	const dv_capacity_result_t *r;
} dv_plot_cap_series_t;

/*
 * Into dir (created if missing): capacity-N.dat per series (offered qps, loss %, p50,
 * p99, the SLO's latency, verdict, sorted by offered rate), capacity.gp and, drawn by
 * gnuplot (NULL = "gnuplot"), capacity.png: loss % (top) and p50/p99 latency (bottom,
 * log scale) against offered qps, every series on one chart, the SLO lines dashed red
 * and each series' capacity a dashed vertical line. Returns 0 or a negative code with
 * err filled (gnuplot missing or failing: see dir/gnuplot.log).
 */
int dv_plot_capacity(const char *dir, const char *gnuplot, const dv_capacity_opts_t *o,
                     const dv_plot_cap_series_t *s, size_t n, dv_err_t *err);

/*
 * resperf-report's chart from a resperf-mode plot data file (time, target qps, sent
 * qps, responses/s, not answered/s, average latency): dir/resperf.gp and resperf.png,
 * rates over the ramp (top) and latency (bottom). -ENODATA (err says why) when the
 * plot file has no row: nothing to draw.
 */
int dv_plot_resperf(const char *dir, const char *gnuplot, const char *data, dv_err_t *err);

#endif
