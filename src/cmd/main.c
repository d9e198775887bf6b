/* main: the dnsvolley command: parse, load lists, run the study, write results, apply gates. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "engine/run.h"
#include "input/input.h"
#include "input/replay.h"
#include "results/gates.h"
#include "results/csv.h"
#include "results/metrics.h"
#include "results/report.h"
#include "results/results_json.h"
#include "study/study.h"
#include "results/summary.h"

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

/* The time a list is signed at (TSIG): now; tests skew it with DNSVOLLEY_TEST_TSIG_SKEW
 * (seconds, signed) to see a server's BADTIME. */
/*
 * Tests: DNSVOLLEY_TEST_TSIG_SKEW moves every TSIG clock (the list's signing and every
 * re-signing) by that many seconds; DNSVOLLEY_TEST_TSIG_AGE signs the list that many
 * seconds in the past only, as if the pass had been running that long.
 */
static long long tsig_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? atoll(v) : 0;
}

/*
 * Before sending: a capture's clock that jumped (its gaps over an hour were cut), and with
 * --timing original how long the schedule is, so a wrong one shows before it runs.
 */
static void say_schedule(const dv_study_t *st, const dv_list_t *l)
{
	const dv_replay_info_t *ri = &l->replay;
	char a[32], b[32];

	if (ri->gaps_cut > 0) {
		dv_replay_duration_text(ri->longest_gap_ns, a, sizeof(a));
		dv_replay_duration_text(ri->gap_kept_ns, b, sizeof(b));
		fprintf(stderr,
		        "dnsvolley: %s: %" PRIu64 " gap%s of more than 1 h between captured "
		        "queries (the longest %s: a capture clock that jumped?) cut to %s, the "
		        "mean of the others\n",
		        l->path, ri->gaps_cut, ri->gaps_cut == 1 ? "" : "s", a, b);
	}
	if (ri->timed && st->replay.timing == DV_TIMING_ORIGINAL) {
		dv_replay_duration_text((uint64_t)((double)l->ql.period_ns / st->replay.speed), a,
		                        sizeof(a));
		fprintf(stderr,
		        "dnsvolley: %s: --timing original: %zu queries, the schedule spans %s "
		        "per pass\n",
		        l->path, l->ql.count, a);
	}
}

/* One list: read (any input kind), then prepared for replay (src/input/replay.h). */
static int load_list(dv_study_t *st, dv_list_t *l, dv_err_t *err)
{
	dv_input_options_t io;
	dv_input_stats_t is;
	int rc;

	dv_input_options_init(&io);
	io.ql = st->ql;
	if (st->replay.capture_server != NULL &&
	    (rc = dv_input_set_server(&io, st->replay.capture_server, err)) != 0)
		return rc;
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
	if (st->replay.tsig_on &&
	    (rc = dv_tsig_sign_list(&l->ql, &st->replay.tsig,
	                            (uint64_t)((long long)time(NULL) +
	                                       tsig_env("DNSVOLLEY_TEST_TSIG_SKEW") -
	                                       tsig_env("DNSVOLLEY_TEST_TSIG_AGE")),
	                            err)) != 0)
		return rc;
	l->ql.tsig_skew_s = tsig_env("DNSVOLLEY_TEST_TSIG_SKEW");
	say_schedule(st, l);
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

/* What the study's observer needs: where the report goes, the rank's own passes. */
typedef struct run_ctx {
	FILE *report;
	bool quiet;
	bool latency_histogram; /* -O latency-histogram */
	dv_study_t own; /* --rank-json: this rank's own passes (shallow copy of the study) */
	size_t cap_own;
	const dv_capacity_cli_t *capacity; /* dnsvolley capacity; NULL for a run */
} run_ctx_t;

/* Rank 0's lines about each rank of a multi-rank pass (doc/scale-out.md). */
static void print_ranks(FILE *out, const dv_pass_record_t *p)
{
	for (size_t i = 0; i < p->n_ranks; i++) {
		const dv_rank_pass_t *r = &p->ranks[i];
		if (!r->reported) {
			fprintf(out, "  Rank %u (%s): LOST, sent no result (partial run)\n",
			        r->rank, r->host);
			continue;
		}
		if (r->error != 0) {
			fprintf(out, "  Rank %u (%s): FAILED: %s\n", r->rank, r->host,
			        r->error_msg);
			continue;
		}
		fprintf(out,
		        "  Rank %u (%s): sent %llu, completed %llu, lost %llu, %.0f q/s, %.2f us "
		        "CPU/query, kernel drops %llu, clock offset %+.3f s%s%s\n",
		        r->rank, r->host, (unsigned long long)r->sent,
		        (unsigned long long)r->completed, (unsigned long long)r->lost, r->qps,
		        r->cpu_per_query_us, (unsigned long long)r->kernel_drops, r->clock_offset_s,
		        r->generator_bound ? "; WARNING: generator-bound (its CPU limited the rate)"
		                           : "",
		        r->clock_off ? "; WARNING: its clock is off" : "");
	}
}

/* The study's observer: the report's head when a pass starts ("Started at" then)... */
static void print_pass_head(void *ctx, const dv_study_t *s, const dv_pass_record_t *p)
{
	run_ctx_t *rc = ctx;

	if (rc->quiet)
		return;
	if (s->capacity != NULL) /* the pass head's load and length are the steps' */
		fprintf(rc->report, "[Status] Capacity search: target %s (%s), list %s\n",
		        s->targets[p->target].label, s->targets[p->target].addr_text,
		        s->lists[p->list].label);
	else
		dv_report_pass_head(rc->report, s, p);
	fflush(rc->report);
}

/* ...and its statistics when it ends (with each rank's line after a multi-rank pass). */
static void print_pass(void *ctx, const dv_study_t *s, const dv_pass_record_t *p)
{
	run_ctx_t *rc = ctx;

	if (rc->quiet)
		return;
	/* A capacity search printed its steps and result as it ran. */
	if (!p->cap.searched)
		dv_report_pass_body(rc->report, s, p);
	if (rc->latency_histogram)
		dv_report_latency_histogram(rc->report, &p->res.stats.latency);
	if (p->n_ranks > 0)
		print_ranks(rc->report, p);
	fflush(rc->report);
}

/* --rank-json: keep this rank's own pass (before the merge); intervals and their cells copied. */
static void keep_own(void *ctx, const dv_study_t *s, const dv_pass_record_t *p)
{
	run_ctx_t *rc = ctx;
	dv_pass_record_t *n;

	(void)s;
	if (rc->own.n_passes == rc->cap_own) {
		size_t cap = rc->cap_own ? rc->cap_own * 2 : 8;
		n = realloc(rc->own.passes, cap * sizeof(*n));
		if (n == NULL)
			return;
		rc->own.passes = n;
		rc->cap_own = cap;
	}
	n = &rc->own.passes[rc->own.n_passes];
	*n = *p;
	n->ranks = NULL;
	n->n_ranks = 0;
	n->res.intervals = NULL;
	n->res.lat_cells = NULL;
	if (p->res.n_intervals > 0) {
		n->res.intervals = malloc(p->res.n_intervals * sizeof(*n->res.intervals));
		if (n->res.intervals == NULL)
			return;
		memcpy(n->res.intervals, p->res.intervals,
		       p->res.n_intervals * sizeof(*n->res.intervals));
	}
	if (p->res.n_lat_cells > 0) {
		n->res.lat_cells = malloc(p->res.n_lat_cells * sizeof(*n->res.lat_cells));
		if (n->res.lat_cells == NULL) {
			free(n->res.intervals);
			return;
		}
		memcpy(n->res.lat_cells, p->res.lat_cells,
		       p->res.n_lat_cells * sizeof(*n->res.lat_cells));
	}
	rc->own.n_passes++;
}

/* --rank-json PREFIX: PREFIX.RANK.json with this rank's own passes; frees them. */
static int write_own(run_ctx_t *rc, const dv_study_t *st, const char *prefix, int rank,
                     dv_err_t *err)
{
	char path[4096];
	dv_study_t own = *st;
	int r;

	own.passes = rc->own.passes;
	own.n_passes = rc->own.n_passes;
	snprintf(path, sizeof(path), "%s.%d.json", prefix, rank);
	r = dv_results_write_json(&own, path, err);
	for (size_t i = 0; i < rc->own.n_passes; i++)
		dv_pass_result_free(&rc->own.passes[i].res);
	free(rc->own.passes);
	rc->own.passes = NULL;
	rc->own.n_passes = 0;
	return r;
}

/*
 * After an append to a history file of an earlier header version (its layout
 * kept, doc/nightly.md): one line saying which columns its rows lack.
 */
static void csv_old_version_note(const char *path)
{
	dv_err_t err = {{0}};
	int v = dv_csv_file_version(path, &err);
	size_t from = v > 0 ? dv_csv_version_columns((unsigned)v) : dv_csv_ncolumns;
	const char *h = dv_csv_header();

	if (v <= 0 || v >= DV_CSV_VERSION)
		return;
	for (size_t i = 0; i < from && h != NULL; i++)
		h = strchr(h, ',') ? strchr(h, ',') + 1 : NULL;
	fprintf(stderr,
	        "dnsvolley: --csv: %s has the version %d header: rows appended without %s "
	        "(to record them from now on: dnsvolley history-upgrade %s)\n",
	        path, v, h ? h : "the new columns", path);
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
 * A reported pass, not interrupted, that sent no query at all: its figures say nothing. A
 * capacity search is judged by its steps (its figures are those of the last passing step,
 * zero when none passed: the search's verdict says why).
 */
static bool any_pass_sent_nothing(const dv_study_t *st)
{
	size_t i;

	for (i = 0; i < st->n_passes; i++) {
		const dv_counters_t *c = &st->passes[i].res.stats.c;
		if (st->passes[i].kind != DV_PASS_WARMUP && !st->passes[i].res.interrupted &&
		    !st->passes[i].cap.searched && c->sent + c->not_sent == 0)
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
	return status ? status : DV_EXIT_USAGE;
}

/* FNV-1a 64 of what every rank must agree on: the command line and the lists' contents. */
static uint64_t plan_fingerprint(const dv_study_t *st)
{
	uint64_t h = 1469598103934665603ULL;
	const char *parts[2];

	for (size_t i = 0; i <= st->n_lists; i++) {
		parts[0] = i == 0 ? st->cmdline : st->lists[i - 1].sha256;
		parts[1] = i == 0 ? "" : st->lists[i - 1].path;
		for (int k = 0; k < 2; k++)
			for (const char *c = parts[k]; c != NULL && *c; c++)
				h = (h ^ (uint8_t)*c) * 1099511628211ULL;
		if (i > 0)
			h = (h ^ st->lists[i - 1].queries) * 1099511628211ULL;
	}
	return h;
}

/*
 * Several ranks: rank 0's plan (its fingerprint, or 0 when its command line or
 * lists failed) goes to every rank, which refuses to run another plan; then each
 * rank takes its share of the load and of the lists. Returns 0, or an exit status;
 * *alone is set when this rank alone fails (its plan differs from rank 0's): it must
 * end the others, which would wait for it.
 */
static int dist_setup(dv_dist_t *d, dv_config_t *cfg, int parse_rc, bool *alone, dv_err_t *err)
{
	uint64_t mine = parse_rc == 0 ? plan_fingerprint(&cfg->study) : 0, plan = mine;

	if (d->bcast(d, &plan, sizeof(plan), 120 * DV_NS_PER_S, err) != 0) {
		fprintf(stderr, "dnsvolley: %s\n", err->msg);
		return DV_EXIT_RUN_FAILED;
	}
	if (plan == 0)
		return DV_EXIT_USAGE; /* rank 0 said why */
	if (mine != plan) {
		fprintf(stderr,
		        "dnsvolley: rank %d (%s): %s differ from rank 0's (%s): every rank must "
		        "run the same command line on the same lists\n",
		        d->rank, d->hosts[d->rank],
		        parse_rc != 0 ? "its command line or lists fail, they"
		                      : "its command line "
		                        "or lists",
		        d->hosts[0]);
		*alone = true;
		return DV_EXIT_USAGE;
	}
	if (dv_dist_share_config(&cfg->study.run, d->rank, d->size, err) != 0)
		goto bad;
	for (size_t i = 0; !cfg->replicate && i < cfg->study.n_lists; i++)
		if (dv_dist_shard_list(&cfg->study.lists[i].ql, d->rank, d->size, err) != 0)
			goto bad;
	if (d->rank != 0) {
		cfg->quiet = true;
		cfg->study.run.progress = false;
		cfg->study.run.interval_print = false;
	}
	cfg->study.dist = d;
	return 0;
bad:
	if (d->rank == 0)
		fprintf(stderr, "dnsvolley: %s\n", err->msg);
	return DV_EXIT_USAGE;
}

/* Parse and load; 0, or the exit status (the error printed). */
static int prepare(int argc, char **argv, dv_config_t *cfg, bool speak, dv_err_t *err)
{
	int rc = dv_cli_parse(argc, argv, cfg, err);

	if (rc == 1)
		return -1; /* --help, --version: done, exit 0 */
	if (rc != 0) {
		if (speak)
			fprintf(cfg->warnings_stdout ? stdout : stderr,
			        "dnsvolley: %s\nTry 'dnsvolley --help' for more information.\n",
			        err->msg);
		return DV_EXIT_USAGE;
	}
	/* -W: warnings and errors (all of standard error) on standard output, as dnsperf. */
	if (cfg->warnings_stdout)
		dup2(STDOUT_FILENO, STDERR_FILENO);
	if (cfg->note[0] != '\0' && speak)
		fprintf(stderr, "dnsvolley: note: %s\n", cfg->note);
	/* SIGINT/SIGTERM counted from here on (an inherited SIG_IGN is replaced): a signal
	 * while the lists load ends the run as interrupted (3), not killed (130/143). */
	dv_run_catch_signals();
	fill_metadata(&cfg->study);
	rc = load_lists(&cfg->study, err);
	if (dv_run_stop_requested()) {
		if (speak)
			fprintf(stderr, "dnsvolley: interrupted while loading the query lists: "
			                "nothing measured, no results file written\n");
		return DV_EXIT_RUN_FAILED;
	}
	if (rc != 0) {
		if (speak)
			fprintf(stderr, "dnsvolley: %s\n", err->msg);
		return DV_EXIT_USAGE;
	}
	return 0;
}

static int run_study(dv_config_t *cfg, run_ctx_t *ctx, dv_dist_t *d);

/* Capacity: the study's every reported pass is a search; one process only. 0 or exit status. */
static int capacity_setup(dv_config_t *cfg, const dv_dist_t *dist, run_ctx_t *ctx,
                          const dv_capacity_cli_t *cap)
{
	char **args, *line;

	if (dist->size > 1) {
		if (dist->rank == 0)
			fprintf(stderr, "dnsvolley capacity: runs in one process, not on several "
			                "MPI ranks\n");
		return DV_EXIT_USAGE;
	}
	/* The command line as given, capacity's own options too (results files keep it). */
	args = calloc((size_t)cap->argc + 1, sizeof(*args));
	if (args != NULL && cap->argc > 0) {
		memcpy(args, cap->argv, (size_t)cap->argc * sizeof(*args));
		args[0] = "dnsvolley"; /* as dv_cli_parse records a run's */
		if ((line = dv_argv_quote(cap->argc, args)) != NULL) {
			free(cfg->study.cmdline);
			cfg->study.cmdline = line;
		}
	}
	free(args);
	cfg->study.capacity = &cap->opts;
	dv_capacity_cli_defaults(&cfg->study.run);
	ctx->capacity = cap;
	return 0;
}

/* A run, or dnsvolley capacity (cap not NULL, its options already taken out of argv). */
static int run_main(int argc, char **argv, const dv_capacity_cli_t *cap)
{
	dv_config_t cfg;
	dv_dist_t dist;
	dv_err_t err = {{0}};
	run_ctx_t ctx;
	int rc, status;

	memset(&cfg, 0, sizeof(cfg));
	memset(&ctx, 0, sizeof(ctx));
	if (dv_dist_init(&dist, &argc, &argv, &err) != 0) {
		fprintf(stderr, "dnsvolley: %s\n", err.msg);
		return DV_EXIT_RUN_FAILED;
	}
	rc = prepare(argc, argv, &cfg, dist.rank == 0, &err);
	if (rc == 0 && cap != NULL)
		rc = capacity_setup(&cfg, &dist, &ctx, cap);
	if (dist.size > 1) {
		bool alone = false;
		status = dist_setup(&dist, &cfg, rc, &alone, &err);
		if (status != 0 && alone) {
			dv_config_free(&cfg);
			dist.abort(&dist, status);
			return status;
		}
		if (status != 0 && rc == 0)
			rc = status; /* every rank stops alike */
	}
	if (rc != 0) {
		/* rank 0 said why, and its exit status is the run's */
		status = rc < 0 || dist.rank != 0 ? 0 : rc;
		dv_config_free(&cfg);
		dist.finish(&dist, status);
		return status;
	}
	status = run_study(&cfg, &ctx, &dist);
	if (dist.size > 1 && cfg.study.failed != 0 && !dist.lead_stopped)
		dist.abort(&dist, status); /* a rank is lost or stuck: end them all */
	if (dist.rank != 0)
		status = 0; /* rank 0 reports the run, and its status is the run's */
	dv_config_free(&cfg);
	dist.finish(&dist, status);
	return status;
}

static int run_study(dv_config_t *cfg, run_ctx_t *ctx, dv_dist_t *dist)
{
	dv_study_t baseline;
	dv_err_t err = {{0}};
	FILE *report = stdout;
	bool have_baseline = false;
	int rc, status = 0;

	memset(&baseline, 0, sizeof(baseline));
	if (cfg->gates.baseline_path != NULL) {
		if (dv_results_read_json(cfg->gates.baseline_path, &baseline, &err) != 0) {
			fprintf(stderr, "dnsvolley: --baseline: %s\n", err.msg);
			return DV_EXIT_USAGE; /* every rank reads it: all stop alike */
		}
		have_baseline = true;
	}
	/* A results file on standard output keeps it clean: the report goes to stderr. */
	if ((cfg->json_path != NULL && strcmp(cfg->json_path, "-") == 0) ||
	    (cfg->metrics_path != NULL && strcmp(cfg->metrics_path, "-") == 0))
		report = stderr;
	cfg->study.run.out = report; /* -S and -v lines with the report, never in the JSON */
	if (!cfg->quiet) {
		fprintf(report, "dnsvolley %s: DNS query-replay performance tester\n\n",
		        PACKAGE_VERSION);
		fprintf(report, "[Status] Command line: %s\n", cfg->study.cmdline);
		fflush(report);
	}

	ctx->report = report;
	ctx->quiet = cfg->quiet;
	ctx->latency_histogram = cfg->latency_histogram;
	dv_study_observer_t obs = {.pass_start = print_pass_head,
	                           .pass_done = print_pass,
	                           .own_pass = cfg->rank_json != NULL ? keep_own : NULL,
	                           .ctx = ctx};
	if (cfg->start_at_ns != 0 && dv_dist_wait_until(cfg->start_at_ns) != 0)
		cfg->study.interrupted = true;
	rc = cfg->study.interrupted ? 0 : dv_study_run(&cfg->study, report, cfg->quiet, &obs);
	if (rc != 0 || cfg->study.failed != 0) {
		fprintf(stderr, "dnsvolley: %s\n",
		        cfg->study.fail_msg[0] ? cfg->study.fail_msg : "the run failed");
		status = cfg->study.failed == DV_RUN_NOTHING_SENT ? DV_EXIT_NOTHING_SENT
		                                                  : DV_EXIT_RUN_FAILED;
	}
	if (cfg->rank_json != NULL &&
	    write_own(ctx, &cfg->study, cfg->rank_json, dist->rank, &err) != 0) {
		fprintf(stderr, "dnsvolley: --rank-json: %s\n", err.msg);
		status = status ? status : DV_EXIT_USAGE;
	}
	if (dist->rank != 0) /* rank 0 reports the run */
		return status;
	if (reported_passes(&cfg->study) > 1 || cfg->study.n_plan > 1 ||
	    cfg->study.plan[0] != DV_PASS_PLAIN) {
		dv_study_print_table(&cfg->study, report);
		dv_study_print_summary(&cfg->study, report);
	}
	if (ctx->capacity != NULL && ctx->capacity->plot_dir != NULL &&
	    (rc = dv_capacity_cli_plot(ctx->capacity, &cfg->study)) != 0)
		status = status ? status : rc;
	/* Every result measured is written, also after a failure or an interruption. */
	if (cfg->json_path != NULL &&
	    dv_results_write_json(&cfg->study, cfg->json_path, &err) != 0) {
		fprintf(stderr, "dnsvolley: --json: %s\n", err.msg);
		status = status ? status : DV_EXIT_USAGE;
	}
	if (cfg->csv_path != NULL && dv_csv_append(&cfg->study, cfg->csv_path, &err) != 0) {
		fprintf(stderr, "dnsvolley: --csv: %s\n", err.msg);
		status = status ? status : DV_EXIT_USAGE;
	} else if (cfg->csv_path != NULL && !cfg->quiet) {
		csv_old_version_note(cfg->csv_path);
	}
	if (cfg->metrics_path != NULL &&
	    dv_metrics_write(&cfg->study, cfg->metrics_path, &err) != 0) {
		fprintf(stderr, "dnsvolley: --dns-metrics: %s\n", err.msg);
		status = status ? status : DV_EXIT_USAGE;
	}
	if (cfg->study.interrupted && status == 0)
		status = DV_EXIT_RUN_FAILED;
	if (status == 0 && any_pass_sent_nothing(&cfg->study)) {
		fprintf(stderr, "dnsvolley: a pass sent no query: nothing was measured\n");
		status = DV_EXIT_NOTHING_SENT;
	}
	if (status == 0 && any_pass_unanswered(&cfg->study))
		status = DV_EXIT_NO_ANSWERS;
	if (status == 0 && dv_gates_any(&cfg->gates)) {
		rc = dv_gates_eval(&cfg->gates, &cfg->study, have_baseline ? &baseline : NULL,
		                   report, &err);
		if (rc < 0) {
			fprintf(stderr, "dnsvolley: %s\n", err.msg);
			status = DV_EXIT_USAGE;
		} else if (rc > 0) {
			status = DV_EXIT_GATE_FAILED;
		}
	}
	status = check_stdout(status);
	fflush(stderr);
	if (have_baseline)
		dv_study_free(&baseline);
	return status;
}

/* dnsvolley capacity ARGS: its own options out of argv, then a run of searches. */
static int capacity_main(int argc, char **argv)
{
	dv_capacity_cli_t cap;
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc, n = argc;

	if (args == NULL)
		return DV_EXIT_RUN_FAILED;
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	rc = dv_capacity_cli_split(&n, args, &cap);
	cap.argc = argc + 1; /* "dnsvolley capacity ...": main's argv */
	cap.argv = argv - 1;
	if (rc == 0)
		rc = run_main(n, args, &cap);
	free(args);
	return rc < 0 ? 0 : rc;
}

int main(int argc, char **argv)
{
	/* A closed stdout gives EPIPE on write, not death: results files are still written. */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return dv_cmd_compare(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "capacity") == 0)
		return capacity_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "resperf") == 0)
		return dv_cmd_resperf(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "plot") == 0)
		return dv_cmd_plot(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return dv_cmd_report(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return dv_cmd_merge(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "history-upgrade") == 0)
		return dv_cmd_history_upgrade(argc - 1, argv + 1);
	return run_main(argc, argv, NULL);
}
