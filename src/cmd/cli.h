/* cli: command line -> dv_config_t. dnsperf's short flags where they overlap. */
#ifndef DV_CLI_H
#define DV_CLI_H

#include <stdbool.h>

#include "results/gates.h"
#include "study/study.h"
#include "base/util.h"

typedef struct dv_config {
	dv_study_t study;   /* targets, lists (paths, not yet loaded), plan, run and ql options */
	char *flush_all;    /* --flush CMD without a label */
	char *json_path;    /* --json FILE|- */
	char *csv_path;     /* --csv FILE */
	char *metrics_path; /* --dns-metrics FILE|- (DNS-OARC dns-metrics JSON lines) */
	dv_gates_t gates;
	bool quiet;             /* no per-pass text report */
	bool latency_histogram; /* --latency-histogram, -O latency-histogram */
	bool warnings_stdout;   /* -W: warnings and errors on standard output */
	char note[512];         /* automatic values chosen (e.g. -T over -c), "" when none */
	/* Several generators (doc/scale-out.md) */
	bool replicate;       /* --replicate: every MPI rank sends the whole list */
	uint64_t start_at_ns; /* --start-at: wall clock of the first pass's start, 0 = now */
	char *rank_json;      /* --rank-json PREFIX: each rank's own results, PREFIX.RANK.json */
} dv_config_t;

/*
 * Parse argv. Returns 0 to run (cfg->note, when not empty, says which values were
 * chosen automatically: the caller prints it), 1 when --help/--version was printed (exit 0),
 * or a negative code with err filled ("-q: ...") for a usage error (exit 2).
 * Besides parsing it resolves target names and checks that output files can be
 * written and are not inputs; it reads no list and sends nothing.
 */
int dv_cli_parse(int argc, char **argv, dv_config_t *cfg, dv_err_t *err);
void dv_config_free(dv_config_t *cfg);
void dv_cli_usage(FILE *out);
/* -O suppress=TYPE[,TYPE...] (dnsperf's, resperf's): 0, or -EINVAL naming the bad type. */
int dv_cli_parse_suppress(const char *val, dv_err_t *err);

#endif
