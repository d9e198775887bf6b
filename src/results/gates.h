/* gates: pass/fail thresholds for scripted runs and compare (exit status 1 when one fails). */
#ifndef DV_GATES_H
#define DV_GATES_H

#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"
#include "study/study.h"

/* Unset thresholds are negative. Units: percent, nanoseconds, queries per second. */
typedef struct dv_gates {
	double max_loss_pct;     /* --max-loss 0.1% */
	double max_p99_ns;       /* --max-p99 5ms */
	double min_qps;          /* --min-qps N */
	double max_qps_drop_pct; /* --max-qps-drop 5%   (needs a baseline) */
	double max_p99_rise_pct; /* --max-p99-rise 10%  (needs a baseline) */
	double max_cap_drop_pct; /* --max-capacity-drop 5% (capacity studies; needs a baseline) */
	double max_hs_p99_ns;    /* --max-handshake-p99 50ms (TLS transports) */
	double max_conn_fail;    /* --max-conn-failures N (stream transports) */
	double max_srv_cpu_rise_pct; /* --max-server-cpu-rise 10% (server µs/answer; baseline) */
	double max_srv_rss_rise_pct; /* --max-server-rss-rise 10% (server peak RSS; baseline) */
	char *baseline_path;         /* --baseline FILE */
	char *junit_path;            /* --junit FILE */
} dv_gates_t;

void dv_gates_init(dv_gates_t *g);
bool dv_gates_any(const dv_gates_t *g);
void dv_gates_free(dv_gates_t *g);

/*
 * Parse one gate option of the command line into g. opt is the long option
 * name with or without its leading "--": "max-loss" (percent: "0.1%" or "0.1"),
 * "max-p99" (a latency with its unit: "5ms", "800us", "2.5s", "100000ns"),
 * "min-qps" (a number), "max-qps-drop", "max-p99-rise" and "max-capacity-drop"
 * (percent), "max-handshake-p99" (a latency with its unit, as max-p99),
 * "max-conn-failures" (a whole number of connections), "baseline"
 * and "junit" (file names, copied). Returns 0, -EINVAL with err filled for a
 * bad value ("--max-p99: ..."), or -ENOENT (err untouched) when opt is not a
 * gate option.
 */
int dv_gates_parse_opt(dv_gates_t *g, const char *opt, const char *val, dv_err_t *err);
/* "0.1%" / "0.1" -> 0.1; 0 or -EINVAL. */
int dv_parse_percent(const char *s, double *out);
/* "5ms", "800us", "2.5s", "10ns" (unit required) -> nanoseconds; 0 or -EINVAL. */
int dv_parse_latency_ns(const char *s, double *out_ns);

/* One gate checked on one group. */
typedef struct dv_gate_check {
	char gate[24];   /* "max-loss", "max-p99", "min-qps", "max-qps-drop", "max-p99-rise",
	                  * "max-capacity-drop", "max-handshake-p99", "max-conn-failures" */
	char group[384]; /* "[FILE: ]target/list/kind" */
	bool failed;
	bool skipped; /* relative gate with no baseline figure to compare with */
	double value; /* the figure checked (percent, ms, qps) */
	double limit;
	char msg[1024]; /* the sentence printed and put in the JUnit failure */
} dv_gate_check_t;

typedef struct dv_gate_report {
	dv_gate_check_t *c;
	size_t n;
	size_t failed, skipped;
} dv_gate_report_t;

/*
 * Check every gate of g on every group of s (absolute gates on the group's
 * mean over its repeats; relative gates against the same target/list/kind
 * group of baseline). max-handshake-p99 is skipped for a study whose transport
 * has no TLS (udp, tcp) and fails for a group of a TLS transport with a pass
 * that completed no handshake (no figure is no pass); max-conn-failures is
 * skipped for a UDP group that tried no connection. Appends to rep; prefix (may be NULL) starts
 * each group name. Returns 0, or a negative code with err filled: a relative gate without a
 * baseline, a study with no reported pass, a baseline with no matching pass.
 */
int dv_gates_collect(const dv_gates_t *g, const dv_study_t *s, const dv_study_t *baseline,
                     const char *prefix, dv_gate_report_t *rep, dv_err_t *err);
/* One line per check, then a summary line. Returns 1 when a gate failed, else 0. */
int dv_gates_print(const dv_gate_report_t *rep, FILE *out);
/* JUnit XML: one testcase per check. 0 or a negative errno with err filled. */
int dv_gates_write_junit(const dv_gate_report_t *rep, const char *path, dv_err_t *err);
void dv_gate_report_free(dv_gate_report_t *rep);

/*
 * All of the above for a run: collect, print to out, write g->junit_path when
 * set. Returns 0 all gates hold, 1 a gate failed, < 0 error (err filled; exit
 * status 2). baseline may be NULL when no relative gate is set.
 */
int dv_gates_eval(const dv_gates_t *g, const dv_study_t *s, const dv_study_t *baseline, FILE *out,
                  dv_err_t *err);

#endif
