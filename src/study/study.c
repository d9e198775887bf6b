/* study: the pass plan with flush hooks and readiness probes. */
#include "config.h"

#include "study/study.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "engine/servercost.h"
#include "study/probe.h"
#include "base/proc.h"
#include "base/sockaddr.h"

extern char **environ;

#define DV_FLUSH_TIMEOUT_NS   (600 * DV_NS_PER_S) /* default --flush-timeout */
#define DV_READY_DEFAULT_NS   (30 * DV_NS_PER_S)
#define DV_PROBE_FIRST_TRY_NS (100 * DV_NS_PER_MS)

const char *dv_pass_kind_name(dv_pass_kind_t k)
{
	switch (k) {
	case DV_PASS_PLAIN:
		return "plain";
	case DV_PASS_COLD:
		return "cold";
	case DV_PASS_HOT:
		return "hot";
	case DV_PASS_WARMUP:
		return "warmup";
	}
	return "?";
}

/* ---------------------------------------------------------------- metadata */

/* *dst = a copy of src (NULL for NULL); false when out of memory (doc/architecture.md). */
static bool dup_to(char **dst, const char *src)
{
	*dst = src != NULL ? strdup(src) : NULL;
	return src == NULL || *dst != NULL;
}

/*
 * Fill what main did not: host, kernel, CPUs, start time, target address text, list facts.
 * 0 or -ENOMEM.
 */
static int complete_metadata(dv_study_t *s)
{
	char buf[512];
	struct utsname u;
	bool ok = true;

	if (s->start_wall_ns == 0)
		s->start_wall_ns = dv_wall_ns();
	if (s->tool_version == NULL)
		ok = dup_to(&s->tool_version, PACKAGE_VERSION) && ok;
	if (s->hostname == NULL && gethostname(buf, sizeof(buf) - 1) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		ok = dup_to(&s->hostname, buf) && ok;
	}
	if (s->kernel == NULL && uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s %s", u.sysname, u.release, u.version,
		         u.machine);
		ok = dup_to(&s->kernel, buf) && ok;
	}
	if (s->ncpu == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		s->ncpu = n > 0 ? (unsigned)n : 0;
	}
	for (size_t i = 0; i < s->n_targets; i++) {
		dv_target_t *t = &s->targets[i];
		if (t->addr_text == NULL && t->addr.ss_family != AF_UNSPEC) {
			dv_sockaddr_text((const struct sockaddr *)&t->addr, buf, sizeof(buf));
			ok = dup_to(&t->addr_text, buf) && ok;
		}
		if (t->label == NULL)
			ok = dup_to(&t->label, t->addr_text != NULL ? t->addr_text : t->spec) && ok;
	}
	for (size_t i = 0; i < s->n_lists; i++) {
		dv_list_t *l = &s->lists[i];
		if (l->queries == 0)
			l->queries = l->ql.count;
		if (l->lines == 0)
			l->lines = l->ql.lines;
		if (l->sha256[0] == '\0' && l->path != NULL)
			(void)dv_sha256_file(l->path, l->sha256, NULL);
		if (l->label == NULL && l->path != NULL) {
			const char *b = strrchr(l->path, '/');
			ok = dup_to(&l->label, b != NULL ? b + 1 : l->path) && ok;
		}
	}
	return ok ? 0 : -ENOMEM;
}

/* ---------------------------------------------------------------- flush hook */

static int fail(dv_study_t *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(dv_study_t *s, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->fail_msg, sizeof(s->fail_msg), fmt, ap);
	va_end(ap);
	s->failed = code;
	return code;
}

/* dv_proc_run stop hook: a SIGINT/SIGTERM (counted by the pass handler) ends the command. */
static int stop_requested(void *arg)
{
	(void)arg;
	return dv_run_stop_requested();
}

static uint64_t flush_timeout_ns(const dv_study_t *s)
{
	return s->flush_timeout_ns ? s->flush_timeout_ns : DV_FLUSH_TIMEOUT_NS;
}

/* Check what ended the command; 0 when it exited 0, or it was stopped (s->interrupted set). */
static int command_end(dv_study_t *s, const dv_target_t *t, const char *what, const char *cmd,
                       const dv_proc_result_t *pr)
{
	switch (pr->end) {
	case DV_PROC_TIMED_OUT:
		return fail(s, -ETIMEDOUT,
		            "target %s: %s command did not finish within %g s (its process "
		            "group was killed): %s",
		            t->label, what, (double)flush_timeout_ns(s) / 1e9, cmd);
	case DV_PROC_STOPPED:
		s->interrupted = true;
		return 0;
	case DV_PROC_SIGNALED:
		return fail(s, -ECANCELED, "target %s: %s command killed by signal %d: %s",
		            t->label, what, pr->code, cmd);
	case DV_PROC_EXITED:
		break;
	}
	if (pr->code != 0)
		return fail(s, -ECANCELED, "target %s: %s command failed with exit status %d: %s",
		            t->label, what, pr->code, cmd);
	return 0;
}

/*
 * Run `/bin/sh -c CMD` with DV_TARGET_LABEL, DV_TARGET_ADDR, DV_TARGET_PORT,
 * DV_LIST_LABEL and DV_REPEAT added to the environment; its standard output goes to
 * our standard error so the report on stdout stays clean. It runs in its own process
 * group: a timeout kills the whole group (the command's children too), and so does a
 * SIGINT/SIGTERM (caught from the first command on), which marks the study interrupted
 * (return 0, s->interrupted set).
 */
static int run_command(dv_study_t *s, size_t ti, size_t li, unsigned r, dv_pass_kind_t kind,
                       const char *cmd, const char *what, double *took_s)
{
	const dv_target_t *t = &s->targets[ti];
	char ip[DV_SOCKADDR_TEXT_MAX], e_label[600], e_addr[DV_SOCKADDR_TEXT_MAX + 16], e_port[32],
	    e_list[600], e_rep[32];
	char e_kind[32];
	unsigned port;
	size_t n_env = 0, k;
	char **envp;
	dv_proc_opts_t o;
	dv_proc_result_t pr;
	int rc;

	dv_sockaddr_host((const struct sockaddr *)&t->addr, ip, sizeof(ip));
	port = dv_sockaddr_port((const struct sockaddr *)&t->addr);
	snprintf(e_label, sizeof(e_label), "DV_TARGET_LABEL=%s", t->label ? t->label : "");
	snprintf(e_addr, sizeof(e_addr), "DV_TARGET_ADDR=%s", ip);
	snprintf(e_port, sizeof(e_port), "DV_TARGET_PORT=%u", port);
	snprintf(e_list, sizeof(e_list), "DV_LIST_LABEL=%s",
	         s->lists[li].label ? s->lists[li].label : "");
	snprintf(e_rep, sizeof(e_rep), "DV_REPEAT=%u", r + 1);
	snprintf(e_kind, sizeof(e_kind), "DV_PASS_KIND=%s", dv_pass_kind_name(kind));
	while (environ != NULL && environ[n_env] != NULL)
		n_env++;
	envp = calloc(n_env + 7, sizeof(*envp));
	if (envp == NULL)
		return fail(s, -ENOMEM, "%s command: out of memory", what);
	for (k = 0; k < n_env; k++)
		envp[k] = environ[k];
	envp[k++] = e_label;
	envp[k++] = e_addr;
	envp[k++] = e_port;
	envp[k++] = e_list;
	envp[k++] = e_rep;
	envp[k++] = e_kind;
	envp[k] = NULL;

	dv_proc_opts_init(&o);
	o.shell_cmd = cmd;
	o.envp = envp;
	o.stdout_fd = 2;
	o.timeout_ms = DV_MAX(flush_timeout_ns(s) / DV_NS_PER_MS, 1);
	o.should_stop = stop_requested;
	dv_run_catch_signals(); /* a Ctrl-C during the first flush too */
	rc = dv_proc_run(&o, &pr);
	free(envp);
	*took_s = (double)pr.elapsed_ns / 1e9;
	if (rc != 0)
		return fail(s, rc, "target %s: cannot start the %s command: %s", t->label, what,
		            strerror(-rc));
	return command_end(s, t, what, cmd, &pr);
}

/* ---------------------------------------------------------------- running */

int dv_study_set_probe(dv_study_t *s, const char *text, bool rd, dv_err_t *err)
{
	size_t len = dv_probe_parse(text, rd, s->probe_wire, sizeof(s->probe_wire), err);
	char *copy;

	if (len == 0)
		return -EINVAL;
	copy = strdup(text);
	if (copy == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	free(s->probe_text);
	s->probe_text = copy;
	s->probe_len = len;
	return 0;
}

/* The probe's query: --probe's, else version.bind CH TXT (answered by the server itself,
 * in no list, so it warms nothing a cold pass asks). */
static void probe_query(dv_study_t *s)
{
	dv_err_t err;

	if (s->probe_len > 0)
		return;
	(void)dv_study_set_probe(s, DV_PROBE_DEFAULT, false, &err);
}

/* How the probes reach a target: the passes' connection kind, or NULL for UDP. */
static const dv_tp_config_t *study_tp(const dv_study_t *s)
{
	return s->run.stream ? &s->run.tp : NULL;
}

static int wait_ready(dv_study_t *s, size_t ti, dv_probe_result_t *pr)
{
	const dv_target_t *t = &s->targets[ti];
	dv_err_t err;
	int rc;

	probe_query(s);
	rc = dv_probe_ready((const struct sockaddr *)&t->addr, t->addr_len, study_tp(s),
	                    s->probe_wire, s->probe_len,
	                    s->ready_timeout_ns ? s->ready_timeout_ns : DV_READY_DEFAULT_NS,
	                    DV_PROBE_FIRST_TRY_NS, dv_run_stop_requested, pr, &err);
	if (rc == -EINTR) { /* a SIGINT or SIGTERM while waiting: the study ends as interrupted */
		s->interrupted = true;
		return 0;
	}
	if (rc != 0)
		return fail(s, rc, "target %s: %s", t->label, err.msg);
	return 0;
}

uint64_t dv_pass_names_asked(const dv_pass_record_t *p, uint64_t list_size)
{
	return DV_MIN(p->res.stats.c.sent, list_size);
}

dv_run_config_t dv_study_pass_config(const dv_study_t *s, dv_pass_kind_t kind)
{
	dv_run_config_t cfg = s->run;

	if (kind == DV_PASS_COLD) {
		cfg.time_limit_ns = 0; /* one run through the list: each entry once */
		cfg.passes = 1;
	} else if (kind == DV_PASS_HOT || kind == DV_PASS_WARMUP) {
		cfg.passes = s->hot_runs;
		cfg.time_limit_ns = s->hot_runs      ? 0
		                    : s->hot_time_ns ? s->hot_time_ns
		                                     : DV_HOT_TIME_DEFAULT_NS;
		if (kind == DV_PASS_WARMUP && s->n_plan > 0 && s->plan[0] != DV_PASS_HOT &&
		    s->plan[0] != DV_PASS_COLD) {
			cfg.passes = s->run.passes; /* the warm-up of a plain run: as the run */
			cfg.time_limit_ns = s->run.time_limit_ns;
		}
	}
	return cfg;
}

static int grow_passes(dv_study_t *s)
{
	dv_pass_record_t *p = realloc(s->passes, (s->n_passes + 1) * sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	s->passes = p;
	memset(&s->passes[s->n_passes], 0, sizeof(*p));
	return 0;
}

/* More than one rank runs this study. */
static bool distributed(const dv_study_t *s)
{
	return s->dist != NULL && s->dist->size > 1;
}

/* Only rank 0 runs the flush, readiness and --after-pass commands. */
static bool commands_here(const dv_study_t *s)
{
	return s->dist == NULL || s->dist->rank == 0;
}

/* --after-pass: a user command after every pass (e.g. to read the server's counters). */
static int after_pass(dv_study_t *s, size_t ti, size_t li, unsigned r, dv_pass_kind_t kind)
{
	double took_s;

	const char *cmd =
	    s->targets[ti].after_pass_cmd ? s->targets[ti].after_pass_cmd : s->after_pass_cmd;

	if (cmd == NULL || s->interrupted || !commands_here(s))
		return 0;
	return run_command(s, ti, li, r, kind, cmd, "after-pass", &took_s);
}

/* How long a rank waits for rank 0 between passes: its flush, readiness and merge. */
static uint64_t dist_between_ns(const dv_study_t *s)
{
	return flush_timeout_ns(s) + DV_READY_DEFAULT_NS + 60 * DV_NS_PER_S;
}

/*
 * The ranks agree to start the pass (rank 0 decides: rc from its flush, or a stop)
 * and start together. Returns 0 to run it; otherwise the study ends (s->failed or
 * s->interrupted set).
 */
static int dist_go(dv_study_t *s, int rc)
{
	dv_dist_t *d = s->dist;
	dv_err_t err = {{0}};
	int go = 0;

	if (!distributed(s))
		return rc;
	if (d->rank == 0)
		go = rc != 0 ? rc : (s->interrupted || dv_run_stop_requested()) ? -EINTR : 0;
	rc = d->start_pass(d, &go, d->rank == 0 ? 120 * DV_NS_PER_S : dist_between_ns(s), &err);
	if (rc != 0)
		return fail(s, rc, "%s", err.msg);
	if (go == -EINTR)
		s->interrupted = true;
	else if (go != 0 && d->rank != 0) {
		d->lead_stopped = true;
		return fail(s, go, "rank 0 (%s) stopped the run", d->hosts[0]);
	}
	return go == -EINTR ? 0 : go;
}

/*
 * Merge the ranks' results into rank 0's res and keep the per-rank facts in rec
 * (rank 0); the other ranks send theirs. A lost or failed rank fails the study,
 * the merge of the others kept.
 */
static int dist_reduce(dv_study_t *s, const dv_run_config_t *cfg, dv_pass_result_t *res,
                       dv_rank_pass_t **ranks, int own_rc, const char *own_msg)
{
	dv_dist_t *d = s->dist;
	dv_err_t err = {{0}};
	uint64_t wait;
	int rc;

	if (!distributed(s))
		return own_rc;
	*ranks = calloc((size_t)d->size, sizeof(**ranks));
	if (*ranks == NULL)
		return fail(s, -ENOMEM, "out of memory");
	/* The same bound both ways: rank 0 waiting for a rank's result, a rank waiting for
	 * rank 0 to take it (after its own pass, as long again). */
	wait = cfg->timeout_ns + 5 * DV_NS_PER_S + (uint64_t)(res->elapsed_s * 0.1e9);
	rc = d->reduce_pass(d, res, own_rc, own_msg, *ranks, wait, &err);
	if (d->rank == 0)
		dv_rank_pass_classify(*ranks, (size_t)d->size);
	if (rc != 0)
		return fail(s, rc, "%s", err.msg);
	return own_rc != 0 ? fail(s, own_rc, "%s", own_msg) : 0;
}

/* Where the study is: pass k of N and how long the passes so far took (for the time left). */
typedef struct progress {
	size_t done, total;
	size_t todo[DV_PASS_WARMUP + 1]; /* passes of each kind not run yet */
	size_t ran[DV_PASS_WARMUP + 1];  /* passes of each kind run, and the time they took */
	double took_s[DV_PASS_WARMUP + 1];
} progress_t;

/* Time left: each kind's passes still to run at that kind's mean so far (else all kinds'). */
static void fmt_left(char *buf, size_t cap, const progress_t *pg)
{
	double left = 0, all_s = 0;
	size_t all_n = 0;
	unsigned sec;

	for (int k = 0; k <= DV_PASS_WARMUP; k++) {
		all_s += pg->took_s[k];
		all_n += pg->ran[k];
	}
	if (all_n == 0) {
		snprintf(buf, cap, "time left known after the first pass");
		return;
	}
	for (int k = 0; k <= DV_PASS_WARMUP; k++)
		left += (double)pg->todo[k] *
		        (pg->ran[k] ? pg->took_s[k] / (double)pg->ran[k] : all_s / (double)all_n);
	sec = (unsigned)(left + 0.5);
	if (sec >= 3600)
		snprintf(buf, cap, "about %uh%02um left", sec / 3600, sec / 60 % 60);
	else if (sec >= 60)
		snprintf(buf, cap, "about %um%02us left", sec / 60, sec % 60);
	else
		snprintf(buf, cap, "about %us left", sec);
}

/* "== Pass 3 of 16: ..." on out, or with --quiet one line on stderr when progress is shown. */
static void announce(const dv_study_t *s, FILE *out, bool quiet, const progress_t *pg, size_t ti,
                     size_t li, unsigned r, dv_pass_kind_t kind)
{
	const dv_target_t *t = &s->targets[ti];
	const dv_list_t *l = &s->lists[li];
	unsigned reps = s->repeat ? s->repeat : 1;
	char left[64];

	fmt_left(left, sizeof(left), pg);
	if (!quiet) {
		fprintf(
		    out,
		    "\n== Pass %zu of %zu: repeat %u of %u, target %s (%s), list %s (%s), %s; %s\n",
		    pg->done + 1, pg->total, r + 1, reps, t->label,
		    t->addr_text ? t->addr_text : "?", l->label, l->path ? l->path : "?",
		    dv_pass_kind_name(kind), left);
		fflush(out);
	} else if (s->run.progress) {
		fprintf(stderr,
		        "dnsvolley: pass %zu of %zu: repeat %u of %u, target %s, list %s, %s; %s\n",
		        pg->done + 1, pg->total, r + 1, reps, t->label, l->label,
		        dv_pass_kind_name(kind), left);
	}
}

dv_qps_status_t dv_pass_qps_status(const dv_study_t *s, const dv_pass_record_t *p)
{
	const dv_pass_result_t *r = &p->res;

	if (s->run.max_qps > 0 || r->scheduled || p->cap.searched || s->capacity != NULL)
		return DV_QPS_OFFERED;
	if (r->run_time_s < DV_QPS_MIN_RUN_S)
		return DV_QPS_SHORT;
	if (r->max_outstanding > 0 &&
	    r->stats.c.sent < (uint64_t)DV_QPS_MIN_WINDOWS * r->max_outstanding)
		return DV_QPS_FILL;
	return DV_QPS_MEASURED;
}

const char *dv_qps_status_word(dv_qps_status_t st)
{
	switch (st) {
	case DV_QPS_OFFERED:
		return "offered rate";
	case DV_QPS_SHORT:
		return "too short";
	case DV_QPS_FILL:
		return "window fill";
	default:
		return "measured";
	}
}

bool dv_pass_cache_contradicts(const dv_pass_record_t *p)
{
	const dv_server_cost_t *s = &p->res.server;

	if (!s->stats_ok || !s->stats_cache || p->res.interrupted)
		return false;
	return (p->kind == DV_PASS_COLD && s->stats_hits > 0) ||
	       (p->kind == DV_PASS_HOT && s->stats_misses > 0);
}

/* The server's own cache counters (--server-stats) against the pass's kind: a cold pass with
 * cache hits, or a hot pass with misses, is not what it says. */
static void check_cache(const dv_study_t *st, const dv_pass_record_t *p)
{
	const dv_server_cost_t *s = &p->res.server;
	bool cold = p->kind == DV_PASS_COLD;

	if (dv_pass_cache_contradicts(p))
		fprintf(stderr,
		        "dnsvolley: warning: the %s pass of target %s, list %s, repeat %u: the "
		        "server counted %" PRIu64 " cache hits and %" PRIu64 " misses in %" PRIu64
		        " queries (%s): %s\n",
		        dv_pass_kind_name(p->kind), st->targets[p->target].label,
		        st->lists[p->list].label, p->repeat + 1, s->stats_hits, s->stats_misses,
		        s->stats_queries, s->stats_kind,
		        cold ? "the pass was not cold (check --flush)"
		             : "the pass was not hot (the cache did not hold the list)");
}

/* Say on stderr what would make a figure mislead: a cold pass short of its list, a short hot pass.
 */
static void check_pass(const dv_study_t *s, const dv_pass_record_t *p)
{
	const dv_list_t *l = &s->lists[p->list];
	uint64_t asked = dv_pass_names_asked(p, l->queries);

	if (p->res.interrupted)
		return;
	check_cache(s, p);
	if (p->kind == DV_PASS_COLD && asked < l->queries)
		fprintf(stderr,
		        "dnsvolley: warning: the cold pass of target %s, list %s, repeat %u asked "
		        "%llu of its %llu list entries: the passes after it may ask names it did "
		        "not put in the cache\n",
		        s->targets[p->target].label, l->label, p->repeat + 1,
		        (unsigned long long)asked, (unsigned long long)l->queries);
	dv_qps_status_t st = dv_pass_qps_status(s, p);
	if ((st == DV_QPS_SHORT || st == DV_QPS_FILL) && p->kind != DV_PASS_PLAIN)
		fprintf(stderr,
		        "dnsvolley: note: the %s pass of target %s, list %s, repeat %u lasted "
		        "%.3f s and sent %llu queries: %s, no throughput figure (%s)\n",
		        dv_pass_kind_name(p->kind), s->targets[p->target].label, l->label,
		        p->repeat + 1, p->res.run_time_s, (unsigned long long)p->res.stats.c.sent,
		        st == DV_QPS_SHORT ? "under 0.5 s" : "under 10 windows (-q)",
		        p->kind == DV_PASS_HOT ? "--hot-time S sets its length"
		                               : "use a longer list");
}

/* The flush command and the readiness probe before a cold pass. */
static int empty_cache(dv_study_t *s, size_t ti, size_t li, unsigned r, double *flush_s,
                       dv_probe_result_t *pr)
{
	const dv_target_t *t = &s->targets[ti];
	int rc;

	if (t->flush_cmd != NULL) {
		rc = run_command(s, ti, li, r, DV_PASS_COLD, t->flush_cmd, "flush", flush_s);
		if (rc != 0 || s->interrupted)
			return rc;
	}
	return wait_ready(s, ti, pr);
}

static int record_pass(dv_study_t *s, const dv_study_observer_t *obs, size_t ti, size_t li,
                       unsigned r, dv_pass_kind_t kind, double flush_s, const dv_probe_result_t *pr,
                       dv_pass_result_t *res, dv_rank_pass_t *ranks, dv_capacity_result_t *cr)
{
	dv_pass_record_t *rec;

	if (grow_passes(s) != 0) {
		dv_pass_result_free(res);
		dv_capacity_result_free(cr);
		free(ranks);
		return fail(s, -ENOMEM, "out of memory");
	}
	rec = &s->passes[s->n_passes++];
	rec->target = ti;
	rec->list = li;
	rec->repeat = r;
	rec->kind = kind;
	rec->flush_s = flush_s;
	rec->ready_wait_s = pr->wait_s;
	rec->probe_queries = pr->attempts;
	rec->res = *res;
	rec->ranks = ranks;
	rec->n_ranks = ranks != NULL ? (size_t)s->dist->size : 0;
	rec->names_asked = dv_pass_names_asked(rec, s->lists[li].queries);
	if (cr->steps != NULL) { /* a capacity search: its figure and its steps */
		rec->cap = dv_capacity_figure_of(cr);
		rec->cap_steps = cr->steps;
		rec->n_cap_steps = cr->n_steps;
		cr->steps = NULL;
	} else {
		check_pass(s, rec);
	}
	if (obs != NULL && obs->pass_done != NULL)
		obs->pass_done(obs->ctx, s, rec);
	if (res->interrupted)
		s->interrupted = true;
	return 0;
}

/* A cold capacity search empties the cache before each step after the first (one_pass
 * emptied it before the first). */
typedef struct cold_steps {
	dv_study_t *s;
	size_t ti, li;
	unsigned r, n;
} cold_steps_t;

static int cold_step(void *arg)
{
	cold_steps_t *c = arg;
	double flush_s = 0;
	dv_probe_result_t pr = {0};
	int rc;

	if (c->n++ == 0)
		return 0;
	rc = empty_cache(c->s, c->ti, c->li, c->r, &flush_s, &pr);
	return rc != 0 ? rc : c->s->interrupted ? -EINTR : 0;
}

/*
 * A reported pass of a capacity study: a whole search (capacity.h) at cfg's target;
 * its step lines and result line go to out unless quiet. res gets the judged pass of
 * its last passing step (zeroed when none passed), cap its figure.
 */
static int capacity_search(dv_study_t *s, FILE *out, bool quiet, const dv_run_config_t *cfg,
                           size_t ti, size_t li, unsigned r, dv_pass_kind_t kind,
                           dv_pass_result_t *res, dv_capacity_result_t *cr, dv_err_t *err)
{
	dv_capacity_opts_t o = *s->capacity;
	cold_steps_t cold = {.s = s, .ti = ti, .li = li, .r = r};
	int rc;

	if (kind == DV_PASS_COLD && commands_here(s)) {
		/* Each step from an empty cache: no settle pass to warm it first. */
		o.before_step = cold_step;
		o.before_ctx = &cold;
		o.settle_ns = 0;
	}
	rc = dv_capacity_run(&o, cfg, &s->lists[li].ql, quiet ? NULL : out, cr, err);
	if (!quiet)
		dv_capacity_print(&o, cr, out);
	if (cr->have_best) {
		*res = cr->best;
		cr->have_best = false;
	} else {
		dv_stats_init(&res->stats); /* no step passed: an empty pass */
	}
	res->interrupted = res->interrupted || cr->interrupted;
	return rc; /* cr keeps its steps for the pass record */
}

static int one_pass(dv_study_t *s, FILE *out, bool quiet, const dv_study_observer_t *obs,
                    progress_t *pg, size_t ti, size_t li, unsigned r, dv_pass_kind_t kind)
{
	dv_target_t *t = &s->targets[ti];
	dv_list_t *l = &s->lists[li];
	double flush_s = 0;
	dv_probe_result_t pr = {0};
	dv_run_config_t cfg = dv_study_pass_config(s, kind);
	dv_rank_pass_t *ranks = NULL;
	dv_pass_result_t res;
	dv_capacity_result_t cr = {0};
	dv_err_t err = {{0}};
	int rc = 0, prc;

	uint64_t t0 = dv_now_ns();

	announce(s, out, quiet, pg, ti, li, r, kind);
	if (kind == DV_PASS_COLD && commands_here(s))
		rc = empty_cache(s, ti, li, r, &flush_s, &pr);
	rc = dist_go(s, rc);
	if (rc != 0 || s->interrupted)
		return rc;
	memcpy(&cfg.server, &t->addr, sizeof(cfg.server));
	cfg.server_len = t->addr_len;
	cfg.server_cost = t->cost;
	if (obs != NULL && obs->pass_start != NULL && kind != DV_PASS_WARMUP) {
		dv_pass_record_t pre = {.target = ti,
		                        .list = li,
		                        .repeat = r,
		                        .kind = kind,
		                        .flush_s = flush_s,
		                        .ready_wait_s = pr.wait_s,
		                        .probe_queries = pr.attempts};
		obs->pass_start(obs->ctx, s, &pre);
	}
	memset(&res, 0, sizeof(res));
	if (s->capacity != NULL && kind != DV_PASS_WARMUP)
		prc = capacity_search(s, out, quiet, &cfg, ti, li, r, kind, &res, &cr, &err);
	else
		prc = dv_run_pass(&cfg, &l->ql, &res, &err);
	pg->done++;
	pg->todo[kind] -= pg->todo[kind] > 0;
	pg->ran[kind]++;
	pg->took_s[kind] += (double)(dv_now_ns() - t0) / 1e9;
	if (prc == 0 && kind != DV_PASS_WARMUP && distributed(s) && obs != NULL &&
	    obs->own_pass != NULL) {
		dv_pass_record_t own = {.target = ti,
		                        .list = li,
		                        .repeat = r,
		                        .kind = kind,
		                        .flush_s = flush_s,
		                        .ready_wait_s = pr.wait_s,
		                        .res = res};
		obs->own_pass(obs->ctx, s, &own);
	}
	rc = dist_reduce(s, &cfg, &res, &ranks, prc, err.msg);
	if (prc != 0 && !distributed(s)) {
		dv_pass_result_free(&res);
		dv_capacity_result_free(&cr);
		return fail(s, rc, "target %s, list %s: %s", t->label, l->label, err.msg);
	}
	if (kind == DV_PASS_WARMUP || !commands_here(s)) {
		if (kind == DV_PASS_WARMUP && !quiet)
			fprintf(out, "Warm-up pass (not reported): %llu sent, %llu completed\n",
			        (unsigned long long)res.stats.c.sent,
			        (unsigned long long)res.stats.c.completed);
		if (res.interrupted)
			s->interrupted = true;
		dv_pass_result_free(&res);
		dv_capacity_result_free(&cr);
		free(ranks);
		return rc != 0 ? rc : after_pass(s, ti, li, r, kind);
	}
	prc = record_pass(s, obs, ti, li, r, kind, flush_s, &pr, &res, ranks, &cr);
	if (prc != 0)
		return prc;
	return rc != 0 ? rc : after_pass(s, ti, li, r, kind);
}

/* Warn when --probe asks a question one of the lists asks: its cold passes would find it
 * cached. Only a plan with a cold pass probes: a plain or hot-only run hears nothing of it. */
static void check_probe(const dv_study_t *s)
{
	bool cold = false;

	for (size_t i = 0; i < s->n_plan; i++)
		cold = cold || s->plan[i] == DV_PASS_COLD;
	for (size_t li = 0; cold && s->probe_text != NULL && li < s->n_lists; li++) {
		const dv_list_t *l = &s->lists[li];
		for (size_t i = 0; i < l->ql.count; i++) {
			size_t len;
			const uint8_t *q = dv_querylist_get(&l->ql, i, &len);
			if (dv_probe_same_question(s->probe_wire, s->probe_len, q, len)) {
				fprintf(stderr,
				        "dnsvolley: warning: --probe '%s' is entry %zu of list %s: "
				        "each cold pass of that list finds it cached (probe a name "
				        "in no list)\n",
				        s->probe_text, i + 1, l->label);
				break;
			}
		}
	}
}

static void ask_versions(dv_study_t *s)
{
	/* Ask each target once who it is, the way the passes ask (a DoT or DoH port answers
	 * no datagram); silence is fine (many hide their version). Over a connection kind one
	 * query in up to 2 s: a TLS handshake on a loaded machine takes more than UDP's
	 * 2 x 250 ms. */
	const dv_tp_config_t *tp = study_tp(s);
	for (size_t t = 0; s->query_version && commands_here(s) && t < s->n_targets; t++) {
		dv_target_t *tg = &s->targets[t];
		if (tg->server_version == NULL && tg->addr.ss_family != AF_UNSPEC)
			(void)dv_probe_version(
			    (const struct sockaddr *)&tg->addr, tg->addr_len, tp, tp ? 1 : 2,
			    tp ? 2 * DV_NS_PER_S : 250 * DV_NS_PER_MS, &tg->server_version, NULL);
	}
}

int dv_study_run(dv_study_t *s, FILE *out, bool quiet, const dv_study_observer_t *obs)
{
	static const dv_pass_kind_t plain = DV_PASS_PLAIN;
	const dv_pass_kind_t *plan = s->n_plan ? s->plan : &plain;
	size_t n_plan = s->n_plan ? s->n_plan : 1;
	unsigned reps = s->repeat ? s->repeat : 1;
	progress_t pg = {0};
	int rc = 0;

	if ((rc = complete_metadata(s)) != 0)
		return fail(s, rc, "out of memory");
	probe_query(s);
	for (size_t k = 0; k < n_plan; k++)
		pg.todo[plan[k]] += (size_t)reps * s->n_lists * s->n_targets;
	pg.todo[DV_PASS_WARMUP] += s->warmup ? s->n_lists * s->n_targets : 0;
	for (int k = 0; k <= DV_PASS_WARMUP; k++)
		pg.total += pg.todo[k];
	if (!quiet && (pg.total > 1 || plan[0] != DV_PASS_PLAIN))
		dv_study_print_plan(s, out);
	check_probe(s);
	ask_versions(s);
	for (unsigned r = 0; r < reps; r++) {
		for (size_t l = 0; l < s->n_lists; l++) {
			for (size_t t = 0; t < s->n_targets; t++) {
				for (size_t k = (r == 0 && s->warmup) ? 0 : 1; k <= n_plan; k++) {
					dv_pass_kind_t kind = k == 0 ? DV_PASS_WARMUP : plan[k - 1];
					if (dv_run_stop_requested() && !distributed(s))
						goto stopped;
					rc = one_pass(s, out, quiet, obs, &pg, t, l, r, kind);
					if (rc != 0)
						return rc;
					if (s->interrupted)
						return 0;
				}
			}
		}
	}
	return 0;
stopped:
	s->interrupted = true;
	return 0;
}

/* ---------------------------------------------------------------- the plan */

/* "one run through the list", "3 runs through the list", "2.0 s" for a pass of this kind. */
static void fmt_length(const dv_study_t *s, dv_pass_kind_t kind, char *buf, size_t cap)
{
	dv_run_config_t cfg = dv_study_pass_config(s, kind);

	if (cfg.passes > 0 && cfg.time_limit_ns > 0)
		snprintf(buf, cap, "%llu run%s through the list or %.3g s, whichever comes first",
		         (unsigned long long)cfg.passes, cfg.passes == 1 ? "" : "s",
		         (double)cfg.time_limit_ns / 1e9);
	else if (cfg.time_limit_ns > 0)
		snprintf(buf, cap, "%.3g s, round the list as often as it takes",
		         (double)cfg.time_limit_ns / 1e9);
	else if (cfg.passes > 1)
		snprintf(buf, cap, "%llu runs through the list", (unsigned long long)cfg.passes);
	else
		snprintf(buf, cap, "one run through the list");
}

void dv_study_print_plan(const dv_study_t *s, FILE *out)
{
	static const dv_pass_kind_t plain = DV_PASS_PLAIN;
	const dv_pass_kind_t *plan = s->n_plan ? s->plan : &plain;
	size_t n_plan = s->n_plan ? s->n_plan : 1;
	unsigned reps = s->repeat ? s->repeat : 1;
	bool cold = false, hot = false;
	char len[128];

	fprintf(out, "[Plan] %zu target%s x %zu list%s x (", s->n_targets,
	        s->n_targets == 1 ? "" : "s", s->n_lists, s->n_lists == 1 ? "" : "s");
	for (size_t k = 0; k < n_plan; k++) {
		fprintf(out, "%s%s", k ? ", " : "", dv_pass_kind_name(plan[k]));
		cold |= plan[k] == DV_PASS_COLD;
		hot |= plan[k] == DV_PASS_HOT;
	}
	size_t n_passes = (size_t)reps * s->n_targets * s->n_lists * n_plan;
	fprintf(out, ") x %u repeat%s = %zu pass%s%s\n", reps, reps == 1 ? "" : "s", n_passes,
	        n_passes == 1 ? "" : "es",
	        s->warmup ? " (and an unreported warm-up pass per target and list)" : "");
	for (size_t i = 0; i < s->n_targets; i++) {
		const dv_target_t *t = &s->targets[i];
		fprintf(out, "[Plan] target %s (%s): ", t->label,
		        t->addr_text ? t->addr_text : "?");
		if (t->flush_cmd != NULL)
			fprintf(out, "cache emptied by: %s\n", t->flush_cmd);
		else
			fprintf(out, "no flush command%s\n",
			        cold ? " (cold passes are not cold)" : "");
		if (t->after_pass_cmd != NULL)
			fprintf(out, "[Plan] target %s: after every pass: %s\n", t->label,
			        t->after_pass_cmd);
	}
	if (s->after_pass_cmd != NULL)
		fprintf(out, "[Plan] after every pass: %s\n", s->after_pass_cmd);
	for (size_t i = 0; i < s->n_lists; i++)
		fprintf(out, "[Plan] list %s (%s): %llu quer%s\n", s->lists[i].label,
		        s->lists[i].path ? s->lists[i].path : "?",
		        (unsigned long long)s->lists[i].queries,
		        s->lists[i].queries == 1 ? "y" : "ies");
	if (cold) {
		fprintf(out, "[Plan] cold pass: one run through the list (each entry asked once), "
		             "after the flush command\n");
		fprintf(out, "[Plan] readiness probe after each flush: %s\n",
		        s->probe_text ? s->probe_text : DV_PROBE_DEFAULT);
	}
	if (hot) {
		fmt_length(s, DV_PASS_HOT, len, sizeof(len));
		fprintf(out, "[Plan] hot pass: %s\n", len);
	}
	fflush(out);
}

/* ---------------------------------------------------------------- free */

void dv_study_free(dv_study_t *s)
{
	if (s == NULL)
		return;
	free(s->tool_version);
	free(s->cmdline);
	dv_argv_free(s->argv);
	s->argv = NULL;
	free(s->after_pass_cmd);
	free(s->probe_text);
	s->probe_text = NULL;
	s->probe_len = 0;
	free(s->hostname);
	free(s->kernel);
	for (size_t i = 0; i < s->n_targets; i++) {
		dv_target_t *t = &s->targets[i];
		free(t->label);
		free(t->spec);
		free(t->addr_text);
		free(t->flush_cmd);
		free(t->after_pass_cmd);
		free(t->server_version);
		dv_srvcost_free(t->cost);
		free(t->cost);
	}
	free(s->targets);
	for (size_t i = 0; i < s->n_lists; i++) {
		dv_list_t *l = &s->lists[i];
		free(l->label);
		free(l->path);
		dv_querylist_free(&l->ql);
	}
	free(s->lists);
	free(s->plan);
	for (size_t i = 0; i < s->n_passes; i++) {
		dv_pass_result_free(&s->passes[i].res);
		free(s->passes[i].ranks);
		free(s->passes[i].cap_steps);
	}
	free(s->passes);
	s->tool_version = s->cmdline = s->hostname = s->kernel = NULL;
	s->targets = NULL;
	s->lists = NULL;
	s->plan = NULL;
	s->passes = NULL;
	s->n_targets = s->n_lists = s->n_plan = s->n_passes = 0;
}

const char *dv_study_target_label(const dv_study_t *s, size_t i)
{
	const dv_target_t *t = i < s->n_targets ? &s->targets[i] : NULL;

	return t == NULL ? "?" : t->label != NULL ? t->label : t->spec != NULL ? t->spec : "?";
}

const char *dv_study_list_label(const dv_study_t *s, size_t i)
{
	const dv_list_t *l = i < s->n_lists ? &s->lists[i] : NULL;

	return l == NULL ? "?" : l->label != NULL ? l->label : l->path != NULL ? l->path : "?";
}
