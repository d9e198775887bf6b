/* main: the dnsvolley command: parse, load lists, run the study, write results, apply gates. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "input/input.h"
#include "input/replay.h"
#include "engine/run.h"
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
#define EXIT_NO_ANSWERS  4 /* queries were sent and not one was answered (doc/dnsvolley.1) */

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

/* One list: read (any input kind), then prepared for replay (src/input/replay.h). */
static int load_list(dv_study_t *st, dv_list_t *l, dv_err_t *err)
{
	dv_input_options_t io;
	dv_input_stats_t is;
	int rc;

	dv_input_options_init(&io);
	io.ql = st->ql;
	rc = dv_input_load(&l->ql, l->path, st->input_kind, &io, &is, err);
	if (rc != 0)
		return rc;
	snprintf(l->input, sizeof(l->input), "%s", dv_input_kind_name(is.kind));
	l->malformed = is.malformed;
	if (is.malformed > 0 && is.bad_kept > 0)
		fprintf(stderr,
		        "dnsvolley: %s: %" PRIu64 " malformed record%s skipped (first: %s %" PRIu64
		        ": %s)\n",
		        l->path, is.malformed, is.malformed == 1 ? "" : "s", is.pos_unit,
		        is.bad[0].pos, is.bad[0].what);
	rc = dv_replay_prepare(&l->ql, &st->replay, &l->replay, err);
	if (rc != 0)
		return rc;
	if (l->ql.client != NULL && st->run.threads > 1)
		return dv_err_set(err, -EINVAL,
		                  "%s has %zu clients: a socket per client replays with one "
		                  "thread (-T 1); --max-clients N merges them into N",
		                  l->path, l->ql.clients);
	l->queries = l->ql.count;
	l->lines = is.kind == DV_INPUT_TEXT ? l->ql.lines : is.records;
	return 0;
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
		rc = load_list(st, l, err);
		if (rc != 0)
			return rc;
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

/* Where the text report goes and what it includes. */
typedef struct report_ctx {
	FILE *out;
	bool latency_histogram; /* -O latency-histogram */
} report_ctx_t;

/* The study's observer: the report's head when a pass starts ("Started at" then)... */
static void print_pass_head(void *ctx, const dv_study_t *s, const dv_pass_record_t *p)
{
	const report_ctx_t *rc = ctx;

	dv_report_pass_head(rc->out, s, p);
	fflush(rc->out);
}

/* ...and its statistics when it ends. */
static void print_pass(void *ctx, const dv_study_t *s, const dv_pass_record_t *p)
{
	const report_ctx_t *rc = ctx;

	dv_report_pass_body(rc->out, s, p);
	if (rc->latency_histogram)
		dv_report_latency_histogram(rc->out, &p->res.stats.latency);
	fflush(rc->out);
}

/* True when a reported pass sent queries and got not one answer back, not even late. */
static bool any_pass_unanswered(const dv_study_t *st)
{
	size_t i;

	for (i = 0; i < st->n_passes; i++) {
		const dv_counters_t *c = &st->passes[i].res.stats.c;
		if (st->passes[i].kind != DV_PASS_WARMUP && c->sent + c->not_sent > 0 &&
		    c->completed == 0 && c->late == 0)
			return true;
	}
	return false;
}

/*
 * A standard output that cannot be written (a closed pipe: `| head -1`; a full disk) does not
 * stop the run: SIGPIPE is ignored, the results files are written as usual, and the exit
 * status becomes 2 (an unwritable output) unless it already says something worse.
 */
static int check_stdout(int status)
{
	int e = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		e = errno;
	if (e == 0 && !ferror(stdout))
		return status;
	fprintf(stderr,
	        "dnsvolley: standard output: write failed%s%s (the report is incomplete; "
	        "results files were written)\n",
	        e ? ": " : "", e ? strerror(e) : "");
	return status ? status : EXIT_USAGE;
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
		fprintf(cfg.warnings_stdout ? stdout : stderr,
		        "dnsvolley: %s\nTry 'dnsvolley --help' for more information.\n", err.msg);
		dv_config_free(&cfg);
		return EXIT_USAGE;
	}
	/* -W: warnings and errors (all of standard error) on standard output, as dnsperf. */
	if (cfg.warnings_stdout)
		dup2(STDOUT_FILENO, STDERR_FILENO);
	if (cfg.note[0] != '\0')
		fprintf(stderr, "dnsvolley: note: %s\n", cfg.note);
	/* SIGINT/SIGTERM counted from here on (an inherited SIG_IGN is replaced): a signal
	 * while the lists load ends the run as interrupted (3), not killed (130/143). */
	dv_run_catch_signals();
	fill_metadata(&cfg.study);
	rc = load_lists(&cfg.study, &err);
	if (dv_run_stop_requested()) {
		fprintf(stderr, "dnsvolley: interrupted while loading the query lists: nothing "
		                "measured, no results file written\n");
		dv_config_free(&cfg);
		return EXIT_RUN_FAILED;
	}
	if (rc != 0) {
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
	cfg.study.run.out = report; /* -S and -v lines with the report, never in the JSON */
	if (!cfg.quiet) {
		fprintf(report, "dnsvolley %s: DNS query-replay performance tester\n\n",
		        PACKAGE_VERSION);
		fprintf(report, "[Status] Command line: %s\n", cfg.study.cmdline);
		fflush(report);
	}

	report_ctx_t rctx = {.out = report, .latency_histogram = cfg.latency_histogram};
	dv_study_observer_t obs = {
	    .pass_start = print_pass_head, .pass_done = print_pass, .ctx = &rctx};
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
	if (status == 0 && any_pass_unanswered(&cfg.study))
		status = EXIT_NO_ANSWERS;
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
	status = check_stdout(status);
	fflush(stderr);
	if (have_baseline)
		dv_study_free(&baseline);
	dv_config_free(&cfg);
	return status;
}

int main(int argc, char **argv)
{
	/* A closed stdout gives EPIPE on write, not death: results files are still written. */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return dv_cmd_compare(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "plot") == 0)
		return dv_cmd_plot(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return dv_cmd_report(argc - 1, argv + 1);
	return run_main(argc, argv);
}
