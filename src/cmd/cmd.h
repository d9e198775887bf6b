/* cmd: the subcommands beside a run: compare, plot, report, merge, capacity, resperf. */
#ifndef DV_CMD_H
#define DV_CMD_H

#include "engine/run_config.h"
#include "study/capacity.h"
#include "study/study.h"

/*
 * Each takes the subcommand's argv (argv[0] is its name, e.g. "compare"),
 * prints to stdout, errors ("FILE: why") to stderr, and returns the process
 * exit status.
 */

/*
 * dnsvolley compare [gates] [--junit FILE] BASE.json NEW.json [NEW2.json ...]
 * Each NEW is compared with BASE; gates are evaluated on each NEW with BASE as
 * the baseline. 0 all gates hold, 1 a gate failed, 2 usage or input error.
 */
int dv_cmd_compare(int argc, char **argv);

/*
 * dnsvolley plot RESULTS.json|HISTORY.csv -o DIR [--gnuplot PROG]
 * Draws the charts and index.html into DIR (results/plot.h). 0 done, 2 usage
 * or input error (including gnuplot missing or failing).
 */
int dv_cmd_plot(int argc, char **argv);

/*
 * dnsvolley report [--table|--summary] FILE.json  (default: both)
 * The comparison table and summary of a results file again. A leading
 * "dnsvolley" before "report" is skipped too, so either main's whole argv or
 * argv + 1 may be passed. 0 printed, 2 usage or input error.
 */
int dv_cmd_report(int argc, char **argv);

/*
 * dnsvolley capacity [capacity options] [run and study options]: main.c runs it as a
 * study whose every reported pass is a capacity search (study.h, capacity.h); a line
 * per step and a "Capacity:" line per search, the capacity table and summary, results
 * files and gates (--max-capacity-drop) as for a study. Exit statuses as a run's.
 */
typedef struct dv_capacity_cli {
	dv_capacity_opts_t opts; /* the search: --max-loss, --max-p99, --step, --from... */
	const char *plot_dir;    /* --plot DIR (borrowed from argv), NULL = none */
	int argc;                /* the whole command line (borrowed), for the results */
	char **argv;
} dv_capacity_cli_t;

/*
 * Take capacity's own options out of argv (in place; argv[0] becomes "dnsvolley"), the
 * rest is for dv_cli_parse. 0, -1 (--help printed: exit 0), or exit status 2 (said why):
 * a bad value, --to below --from, or a --plot directory that cannot take the charts
 * (checked here, before anything is measured).
 */
int dv_capacity_cli_split(int *argc, char **argv, dv_capacity_cli_t *cc);
/* Capacity's defaults where the run kept a plain run's: -q 65536 per thread, -t 1 s. */
void dv_capacity_cli_defaults(dv_run_config_t *run);
/* --plot DIR: the hockey stick of every search of s on one chart. 0, or exit status 3. */
int dv_capacity_cli_plot(const dv_capacity_cli_t *cc, const dv_study_t *s);

/*
 * dnsvolley resperf [-s -p -d -m -r -c -L -q -t -C -T -i -P]
 * resperf's linear ramp in one paced pass; prints resperf's "Maximum throughput"
 * and "Lost at that point" and writes its plot data (-P). 0 done, 2 usage, 3 the
 * pass failed or was interrupted.
 */
int dv_cmd_resperf(int argc, char **argv);

/*
 * dnsvolley merge A.json B.json [...] -o ALL.json
 * The results files of one run's generators merged into one (results/merge.h).
 * 0 written, 2 usage or input error (files of different runs included).
 */
int dv_cmd_merge(int argc, char **argv);

/*
 * dnsvolley history-upgrade FILE.csv
 * A --csv history of an earlier header version rewritten under the current one
 * (results/csv.h, dv_csv_upgrade). 0 upgraded or already current, 2 usage or not a
 * history file, 3 the new file could not be written.
 */
int dv_cmd_history_upgrade(int argc, char **argv);

#endif
