/* plot: charts of a results file or a history CSV with gnuplot (PNG + SVG) and one index.html. */
#ifndef DV_PLOT_H
#define DV_PLOT_H

#include "results/compare.h"
#include "results/csv.h"
#include "study/study.h"
#include "base/util.h"

/*
 * Write into dir (created if missing; its parent must exist) the data files
 * (*.dat), the gnuplot scripts (*.gp), the charts as PNG and SVG, and
 * index.html showing them with the summary table. Charts of a results file:
 * latency (percentile curves, log-log, a colour per target, cold passes
 * dashed), qps-time and loss-time (one level per interval snapshot, a line per
 * pass), bars-qps and bars-p99 (the targets side by side in a cluster per list
 * and pass kind, min-max error bars over the repeats when there are several);
 * bars-server the same of the server's CPU us per answer (when some pass measured it);
 * connect (studies with stream connections: connect and TLS handshake time
 * percentile curves, p99 marked) and a connections table; every title ends
 * with the study's transport ("[dot]"); of a history file: trend-qps and
 * trend-p99 (the time axis fitted to the rows; a line per target, list, pass
 * kind and transport). Ranges are set so that gnuplot warns of no empty range. gnuplot is the
 * program to run
 * ("gnuplot"). 0, or a negative errno with err filled (gnuplot failing too).
 */
int dv_plot_study(const dv_study_t *s, const char *src_name, const char *dir, const char *gnuplot,
                  dv_err_t *err);
int dv_plot_history(const dv_csv_table_t *t, const char *src_name, const char *dir,
                    const char *gnuplot, dv_err_t *err);

#endif
