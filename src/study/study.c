/* study: the pass plan with flush hooks and readiness probes. */
#include "config.h"

#include "study/study.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "engine/probe.h"
#include "base/proc.h"

extern char **environ;

#define DV_FLUSH_TIMEOUT_NS   (600 * DV_NS_PER_S) /* a hung flush command is killed after this */
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

static void sockaddr_split(const struct sockaddr_storage *sa, char *ip, size_t cap, unsigned *port)
{
	*port = 0;
	snprintf(ip, cap, "?");
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, ip, (socklen_t)cap);
		*port = ntohs(s4->sin_port);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, (socklen_t)cap);
		*port = ntohs(s6->sin6_port);
	}
}

static char *xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* Fill what main did not: host, kernel, CPUs, start time, target address text, list facts. */
static void complete_metadata(dv_study_t *s)
{
	char buf[512];
	struct utsname u;

	if (s->start_wall_ns == 0)
		s->start_wall_ns = dv_wall_ns();
	if (s->tool_version == NULL)
		s->tool_version = xstrdup(PACKAGE_VERSION);
	if (s->hostname == NULL && gethostname(buf, sizeof(buf) - 1) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		s->hostname = xstrdup(buf);
	}
	if (s->kernel == NULL && uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s %s", u.sysname, u.release, u.version,
		         u.machine);
		s->kernel = xstrdup(buf);
	}
	if (s->ncpu == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		s->ncpu = n > 0 ? (unsigned)n : 0;
	}
	for (size_t i = 0; i < s->n_targets; i++) {
		dv_target_t *t = &s->targets[i];
		if (t->addr_text == NULL && t->addr.ss_family != AF_UNSPEC) {
			char ip[INET6_ADDRSTRLEN];
			unsigned port;
			sockaddr_split(&t->addr, ip, sizeof(ip), &port);
			snprintf(buf, sizeof(buf),
			         t->addr.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
			t->addr_text = xstrdup(buf);
		}
		if (t->label == NULL)
			t->label = xstrdup(t->addr_text != NULL ? t->addr_text : t->spec);
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
			l->label = xstrdup(b != NULL ? b + 1 : l->path);
		}
	}
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

/* Check what ended the command; 0 when it exited 0, or it was stopped (s->interrupted set). */
static int command_end(dv_study_t *s, const dv_target_t *t, const char *what, const char *cmd,
                       const dv_proc_result_t *pr)
{
	switch (pr->end) {
	case DV_PROC_TIMED_OUT:
		return fail(s, -ETIMEDOUT,
		            "target %s: %s command did not finish within %.0f s (its process "
		            "group was killed): %s",
		            t->label, what, (double)DV_FLUSH_TIMEOUT_NS / 1e9, cmd);
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
	char ip[INET6_ADDRSTRLEN], e_label[600], e_addr[80], e_port[32], e_list[600], e_rep[32];
	char e_kind[32];
	unsigned port;
	size_t n_env = 0, k;
	char **envp;
	dv_proc_opts_t o;
	dv_proc_result_t pr;
	int rc;

	sockaddr_split(&t->addr, ip, sizeof(ip), &port);
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
	o.timeout_ms = DV_FLUSH_TIMEOUT_NS / DV_NS_PER_MS;
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

static int wait_ready(dv_study_t *s, size_t ti, size_t li, dv_probe_result_t *pr)
{
	const dv_target_t *t = &s->targets[ti];
	const dv_list_t *l = &s->lists[li];
	uint8_t root_soa[64];
	const uint8_t *q;
	size_t qlen;
	dv_err_t err;
	int rc;

	/* The list's first query: a name the target serves; ". SOA" when the list is empty. */
	if (l->ql.count > 0) {
		q = dv_querylist_get(&l->ql, 0, &qlen);
	} else {
		qlen = dv_probe_build_query(root_soa, sizeof(root_soa), ".", 6, 1, true);
		q = root_soa;
	}
	rc = dv_probe_ready((const struct sockaddr *)&t->addr, t->addr_len, q, qlen,
	                    s->ready_timeout_ns ? s->ready_timeout_ns : DV_READY_DEFAULT_NS,
	                    DV_PROBE_FIRST_TRY_NS, pr, &err);
	if (rc != 0)
		return fail(s, rc, "target %s: %s", t->label, err.msg);
	return 0;
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

	if (s->after_pass_cmd == NULL || s->interrupted || !commands_here(s))
		return 0;
	return run_command(s, ti, li, r, kind, s->after_pass_cmd, "after-pass", &took_s);
}

/* How long a rank waits for rank 0 between passes: its flush, readiness and merge. */
#define DV_DIST_BETWEEN_NS (DV_FLUSH_TIMEOUT_NS + DV_READY_DEFAULT_NS + 60 * DV_NS_PER_S)

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
	rc = d->start_pass(d, &go, d->rank == 0 ? 120 * DV_NS_PER_S : DV_DIST_BETWEEN_NS, &err);
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

/* Cold pass on rank 0: the flush command, then wait until the target answers. */
static int prepare_cold(dv_study_t *s, FILE *out, bool quiet, size_t ti, size_t li, unsigned r,
                        double *flush_s, double *ready_s)
{
	dv_target_t *t = &s->targets[ti];
	dv_probe_result_t pr = {0};
	int rc;

	if (t->flush_cmd != NULL) {
		rc = run_command(s, ti, li, r, DV_PASS_COLD, t->flush_cmd, "flush", flush_s);
		if (rc != 0 || s->interrupted)
			return rc;
	}
	rc = wait_ready(s, ti, li, &pr);
	if (rc != 0)
		return rc;
	*ready_s = pr.wait_s;
	if (!quiet) {
		if (t->flush_cmd != NULL)
			fprintf(out, "Flush command took %.3f s; ", *flush_s);
		else
			fprintf(out, "No flush command; ");
		fprintf(out, "target ready after %.3f s (%u probe quer%s, rcode %d)\n", *ready_s,
		        pr.attempts, pr.attempts == 1 ? "y" : "ies", pr.rcode);
	}
	return 0;
}

static int one_pass(dv_study_t *s, FILE *out, bool quiet, const dv_study_observer_t *obs, size_t ti,
                    size_t li, unsigned r, dv_pass_kind_t kind)
{
	dv_target_t *t = &s->targets[ti];
	dv_list_t *l = &s->lists[li];
	unsigned reps = s->repeat ? s->repeat : 1;
	double flush_s = 0, ready_s = 0;
	dv_run_config_t cfg = s->run;
	dv_rank_pass_t *ranks = NULL;
	dv_pass_result_t res;
	dv_err_t err = {{0}};
	int rc = 0, prc;

	if (!quiet) {
		fprintf(out, "\n== Run %u/%u, target %s (%s), list %s (%s), pass %s\n", r + 1, reps,
		        t->label, t->addr_text ? t->addr_text : "?", l->label,
		        l->path ? l->path : "?", dv_pass_kind_name(kind));
		fflush(out);
	}
	if (kind == DV_PASS_COLD && commands_here(s))
		rc = prepare_cold(s, out, quiet, ti, li, r, &flush_s, &ready_s);
	rc = dist_go(s, rc);
	if (rc != 0 || s->interrupted)
		return rc;
	memcpy(&cfg.server, &t->addr, sizeof(cfg.server));
	cfg.server_len = t->addr_len;
	memset(&res, 0, sizeof(res));
	prc = dv_run_pass(&cfg, &l->ql, &res, &err);
	if (prc == 0 && kind != DV_PASS_WARMUP && distributed(s) && obs != NULL &&
	    obs->own_pass != NULL) {
		dv_pass_record_t own = {.target = ti,
		                        .list = li,
		                        .repeat = r,
		                        .kind = kind,
		                        .flush_s = flush_s,
		                        .ready_wait_s = ready_s,
		                        .res = res};
		obs->own_pass(obs->ctx, s, &own);
	}
	rc = dist_reduce(s, &cfg, &res, &ranks, prc, err.msg);
	if (prc != 0 && !distributed(s)) {
		dv_pass_result_free(&res);
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
		free(ranks);
		return rc != 0 ? rc : after_pass(s, ti, li, r, kind);
	}
	if (grow_passes(s) != 0) {
		dv_pass_result_free(&res);
		free(ranks);
		return fail(s, -ENOMEM, "out of memory");
	}
	dv_pass_record_t *rec = &s->passes[s->n_passes++];
	rec->target = ti;
	rec->list = li;
	rec->repeat = r;
	rec->kind = kind;
	rec->flush_s = flush_s;
	rec->ready_wait_s = ready_s;
	rec->res = res;
	rec->ranks = ranks;
	rec->n_ranks = ranks != NULL ? (size_t)s->dist->size : 0;
	if (obs != NULL && obs->pass_done != NULL)
		obs->pass_done(obs->ctx, s, rec);
	if (res.interrupted)
		s->interrupted = true;
	return rc != 0 ? rc : after_pass(s, ti, li, r, kind);
}

int dv_study_run(dv_study_t *s, FILE *out, bool quiet, const dv_study_observer_t *obs)
{
	static const dv_pass_kind_t plain = DV_PASS_PLAIN;
	const dv_pass_kind_t *plan = s->n_plan ? s->plan : &plain;
	size_t n_plan = s->n_plan ? s->n_plan : 1;
	unsigned reps = s->repeat ? s->repeat : 1;
	int rc = 0;

	complete_metadata(s);
	/* Ask each target once who it is; silence is fine (many hide their version). */
	for (size_t t = 0; s->query_version && commands_here(s) && t < s->n_targets; t++) {
		dv_target_t *tg = &s->targets[t];
		if (tg->server_version == NULL && tg->addr.ss_family != AF_UNSPEC)
			(void)dv_probe_version((const struct sockaddr *)&tg->addr, tg->addr_len, 2,
			                       250 * DV_NS_PER_MS, &tg->server_version, NULL);
	}
	for (unsigned r = 0; r < reps; r++) {
		for (size_t l = 0; l < s->n_lists; l++) {
			for (size_t t = 0; t < s->n_targets; t++) {
				if (r == 0 && s->warmup) {
					if (dv_run_stop_requested() && !distributed(s))
						goto stopped;
					rc = one_pass(s, out, quiet, obs, t, l, r, DV_PASS_WARMUP);
					if (rc != 0)
						return rc;
					if (s->interrupted)
						return 0;
				}
				for (size_t k = 0; k < n_plan; k++) {
					if (dv_run_stop_requested() && !distributed(s))
						goto stopped;
					rc = one_pass(s, out, quiet, obs, t, l, r, plan[k]);
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
	free(s->hostname);
	free(s->kernel);
	for (size_t i = 0; i < s->n_targets; i++) {
		dv_target_t *t = &s->targets[i];
		free(t->label);
		free(t->spec);
		free(t->addr_text);
		free(t->flush_cmd);
		free(t->server_version);
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
	}
	free(s->passes);
	s->tool_version = s->cmdline = s->hostname = s->kernel = NULL;
	s->targets = NULL;
	s->lists = NULL;
	s->plan = NULL;
	s->passes = NULL;
	s->n_targets = s->n_lists = s->n_plan = s->n_passes = 0;
}
