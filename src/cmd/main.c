/* main: the dnsvolley command: parse, load lists, run the study, write results, apply gates. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "results/gates.h"
#include "results/csv.h"
#include "results/metrics.h"
#include "results/report.h"
#include "results/results_json.h"
#include "study/study.h"
#include "study/summary.h"

/* Exit statuses (doc/dnsvolley.1, doc/nightly.md). */
#define EXIT_GATE_FAILED 1
#define EXIT_USAGE       2
#define EXIT_RUN_FAILED  3

static void fill_metadata(dv_study_t *st)
{
	char host[256];
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		st->hostname = strdup(host);
	}
	if (uname(&u) == 0) {
		char buf[sizeof(u.sysname) + sizeof(u.release) + sizeof(u.machine) + 3];
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		st->kernel = strdup(buf);
	}
	st->ncpu = n > 0 ? (unsigned)n : 0;
	st->start_wall_ns = dv_wall_ns();
}

static int load_lists(dv_study_t *st, dv_err_t *err)
{
	size_t i;
	int rc;

	for (i = 0; i < st->n_lists; i++) {
		dv_list_t *l = &st->lists[i];
		if (strcmp(l->path, "-") == 0 && isatty(STDIN_FILENO))
			fprintf(stderr, "dnsvolley: reading the query list from the terminal "
			                "(NAME TYPE per line, end with Ctrl-D; -d FILE to read a "
			                "file)\n");
		rc = dv_querylist_load(&l->ql, l->path, &st->ql, err);
		if (rc != 0)
			return rc;
		l->queries = l->ql.count;
		l->lines = l->ql.lines;
		if (strcmp(l->path, "-") != 0) {
			rc = dv_sha256_file(l->path, l->sha256, err);
			if (rc != 0)
				return rc;
		}
		if (l->ql.skipped > 0)
			fprintf(stderr,
			        "dnsvolley: %s: %zu malformed line%s skipped (--skip-bad)\n",
			        l->path, l->ql.skipped, l->ql.skipped == 1 ? "" : "s");
	}
	return 0;
}

static size_t reported_passes(const dv_study_t *st)
{
	size_t i, n = 0;

	for (i = 0; i < st->n_passes; i++)
		if (st->passes[i].kind != DV_PASS_WARMUP)
			n++;
	return n;
}

/* The study's observer: each reported pass as it ends, in the text report. */
static void print_pass(void *ctx, const dv_study_t *s, const dv_pass_record_t *p)
{
	FILE *out = ctx;

	dv_report_pass_text(out, s, p);
	fflush(out);
}

static int run_main(int argc, char **argv)
{
	dv_config_t cfg;
	dv_study_t baseline;
	dv_err_t err = {{0}};
	FILE *report = stdout;
	bool have_baseline = false;
	int rc, status = 0;

	rc = dv_cli_parse(argc, argv, &cfg, &err);
	if (rc == 1) {
		dv_config_free(&cfg);
		return 0;
	}
	if (rc != 0) {
		fprintf(stderr, "dnsvolley: %s\nTry 'dnsvolley --help' for more information.\n",
		        err.msg);
		dv_config_free(&cfg);
		return EXIT_USAGE;
	}
	fill_metadata(&cfg.study);
	if (load_lists(&cfg.study, &err) != 0) {
		fprintf(stderr, "dnsvolley: %s\n", err.msg);
		dv_config_free(&cfg);
		return EXIT_USAGE;
	}
	memset(&baseline, 0, sizeof(baseline));
	if (cfg.gates.baseline_path != NULL) {
		if (dv_results_read_json(cfg.gates.baseline_path, &baseline, &err) != 0) {
			fprintf(stderr, "dnsvolley: --baseline: %s\n", err.msg);
			dv_config_free(&cfg);
			return EXIT_USAGE;
		}
		have_baseline = true;
	}
	/* A results file on standard output keeps it clean: the report goes to stderr. */
	if ((cfg.json_path != NULL && strcmp(cfg.json_path, "-") == 0) ||
	    (cfg.metrics_path != NULL && strcmp(cfg.metrics_path, "-") == 0))
		report = stderr;
	if (!cfg.quiet) {
		fprintf(report, "dnsvolley %s: DNS query-replay performance tester\n\n",
		        PACKAGE_VERSION);
		fprintf(report, "[Status] Command line: %s\n", cfg.study.cmdline);
		fflush(report);
	}

	dv_study_observer_t obs = {.pass_done = print_pass, .ctx = report};
	rc = dv_study_run(&cfg.study, report, cfg.quiet, cfg.quiet ? NULL : &obs);
	if (rc != 0 || cfg.study.failed != 0) {
		fprintf(stderr, "dnsvolley: %s\n",
		        cfg.study.fail_msg[0] ? cfg.study.fail_msg : "the run failed");
		status = EXIT_RUN_FAILED;
	}
	if (reported_passes(&cfg.study) > 1 || cfg.study.n_plan > 1 ||
	    cfg.study.plan[0] != DV_PASS_PLAIN) {
		dv_study_print_table(&cfg.study, report);
		dv_study_print_summary(&cfg.study, report);
	}
	/* Every result measured is written, also after a failure or an interruption. */
	if (cfg.json_path != NULL && dv_results_write_json(&cfg.study, cfg.json_path, &err) != 0) {
		fprintf(stderr, "dnsvolley: --json: %s\n", err.msg);
		status = status ? status : EXIT_USAGE;
	}
	if (cfg.csv_path != NULL && dv_csv_append(&cfg.study, cfg.csv_path, &err) != 0) {
		fprintf(stderr, "dnsvolley: --csv: %s\n", err.msg);
		status = status ? status : EXIT_USAGE;
	}
	if (cfg.metrics_path != NULL && dv_metrics_write(&cfg.study, cfg.metrics_path, &err) != 0) {
		fprintf(stderr, "dnsvolley: --dns-metrics: %s\n", err.msg);
		status = status ? status : EXIT_USAGE;
	}
	if (cfg.study.interrupted && status == 0)
		status = EXIT_RUN_FAILED;
	if (status == 0 && dv_gates_any(&cfg.gates)) {
		rc = dv_gates_eval(&cfg.gates, &cfg.study, have_baseline ? &baseline : NULL, report,
		                   &err);
		if (rc < 0) {
			fprintf(stderr, "dnsvolley: %s\n", err.msg);
			status = EXIT_USAGE;
		} else if (rc > 0) {
			status = EXIT_GATE_FAILED;
		}
	}
	fflush(stdout);
	fflush(stderr);
	if (have_baseline)
		dv_study_free(&baseline);
	dv_config_free(&cfg);
	return status;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return dv_cmd_compare(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "capacity") == 0)
		return dv_cmd_capacity(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "resperf") == 0)
		return dv_cmd_resperf(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "plot") == 0)
		return dv_cmd_plot(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return dv_cmd_report(argc - 1, argv + 1);
	return run_main(argc, argv);
}
