/* merge: results files of several generators of one run merged into one (dnsvolley merge). */
#include "config.h"

#include "results/merge.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "study/dist.h"

static int differs(dv_err_t *err, const char *from_name, const char *into_name, const char *what,
                   const char *a, const char *b)
{
	return dv_err_set(err, -EINVAL,
	                  "%s: its %s differs from %s's (%s, not %s): not the same run", from_name,
	                  what, into_name, b, a);
}

static int same_str(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* Lists and targets: the same, in the same order. */
static int check_inputs(const dv_study_t *a, const char *an, const dv_study_t *b, const char *bn,
                        dv_err_t *err)
{
	char x[64], y[64];

	snprintf(x, sizeof(x), "%zu", a->n_lists);
	snprintf(y, sizeof(y), "%zu", b->n_lists);
	if (a->n_lists != b->n_lists)
		return differs(err, bn, an, "number of lists", x, y);
	for (size_t i = 0; i < a->n_lists; i++) {
		const dv_list_t *la = &a->lists[i], *lb = &b->lists[i];
		if (!same_str(la->sha256, lb->sha256) || la->queries != lb->queries)
			return differs(err, bn, an, "list (sha256, queries)", la->sha256,
			               lb->sha256);
	}
	snprintf(x, sizeof(x), "%zu", a->n_targets);
	snprintf(y, sizeof(y), "%zu", b->n_targets);
	if (a->n_targets != b->n_targets)
		return differs(err, bn, an, "number of targets", x, y);
	for (size_t i = 0; i < a->n_targets; i++)
		if (!same_str(a->targets[i].addr_text, b->targets[i].addr_text))
			return differs(err, bn, an, "target", a->targets[i].addr_text,
			               b->targets[i].addr_text);
	return 0;
}

/* The flags that change what a pass means (not the load, which adds up). */
static int check_flags(const dv_study_t *a, const char *an, const dv_study_t *b, const char *bn,
                       dv_err_t *err)
{
	const dv_run_config_t *ra = &a->run, *rb = &b->run;
	const dv_querylist_options_t *qa = &a->ql, *qb = &b->ql;
	char x[96], y[96];

	snprintf(x, sizeof(x), "-t %.3f -l %.3f -n %llu -S %.3f", (double)ra->timeout_ns / 1e9,
	         (double)ra->time_limit_ns / 1e9, (unsigned long long)ra->passes,
	         (double)ra->interval_ns / 1e9);
	snprintf(y, sizeof(y), "-t %.3f -l %.3f -n %llu -S %.3f", (double)rb->timeout_ns / 1e9,
	         (double)rb->time_limit_ns / 1e9, (unsigned long long)rb->passes,
	         (double)rb->interval_ns / 1e9);
	if (strcmp(x, y) != 0)
		return differs(err, bn, an, "flags", x, y);
	/* A UDP run and a TCP run measure different things: the sum would be neither. */
	snprintf(x, sizeof(x), "%s, %llu queries per connection", dv_run_transport(ra),
	         (unsigned long long)ra->queries_per_conn);
	snprintf(y, sizeof(y), "%s, %llu queries per connection", dv_run_transport(rb),
	         (unsigned long long)rb->queries_per_conn);
	if (strcmp(dv_run_transport(ra), dv_run_transport(rb)) != 0 ||
	    ra->queries_per_conn != rb->queries_per_conn)
		return differs(err, bn, an, "transport (-m, --queries-per-conn)", x, y);
	snprintf(x, sizeof(x), "rd %d edns %d bufsize %u do %d options %u", qa->rd, qa->edns,
	         qa->edns_bufsize, qa->dnssec_ok, qa->edns_opts_len);
	snprintf(y, sizeof(y), "rd %d edns %d bufsize %u do %d options %u", qb->rd, qb->edns,
	         qb->edns_bufsize, qb->dnssec_ok, qb->edns_opts_len);
	if (strcmp(x, y) != 0 || memcmp(qa->edns_opts, qb->edns_opts, qa->edns_opts_len) != 0)
		return differs(err, bn, an, "query flags", x, y);
	return 0;
}

static int check_passes(const dv_study_t *a, const char *an, const dv_study_t *b, const char *bn,
                        dv_err_t *err)
{
	char x[96], y[96];

	snprintf(x, sizeof(x), "%zu", a->n_passes);
	snprintf(y, sizeof(y), "%zu", b->n_passes);
	if (a->n_passes != b->n_passes)
		return differs(err, bn, an, "number of passes", x, y);
	for (size_t i = 0; i < a->n_passes; i++) {
		const dv_pass_record_t *pa = &a->passes[i], *pb = &b->passes[i];
		snprintf(x, sizeof(x), "pass %zu: target %zu list %zu repeat %u %s", i + 1,
		         pa->target, pa->list, pa->repeat + 1, dv_pass_kind_name(pa->kind));
		snprintf(y, sizeof(y), "pass %zu: target %zu list %zu repeat %u %s", i + 1,
		         pb->target, pb->list, pb->repeat + 1, dv_pass_kind_name(pb->kind));
		if (strcmp(x, y) != 0)
			return differs(err, bn, an, "passes", x, y);
		/* Latencies on two clocks measure different things: their sum would be neither
		 * (a file from before the clock was recorded cannot say; it merges). */
		if (pa->res.clock != DV_PASS_CLOCK_UNKNOWN &&
		    pb->res.clock != DV_PASS_CLOCK_UNKNOWN && pa->res.clock != pb->res.clock) {
			snprintf(x, sizeof(x), "pass %zu: %s", i + 1,
			         dv_pass_clock_name(pa->res.clock));
			snprintf(y, sizeof(y), "pass %zu: %s", i + 1,
			         dv_pass_clock_name(pb->res.clock));
			return differs(err, bn, an, "latency clock (--clock, --xdp)", x, y);
		}
	}
	return 0;
}

/* One generator's run: the same host, the same start of the run and of its first pass. */
static bool same_run(const dv_study_t *a, const dv_study_t *b)
{
	return same_str(a->hostname, b->hostname) && a->start_wall_ns == b->start_wall_ns &&
	       a->n_passes == b->n_passes &&
	       (a->n_passes == 0 ||
	        a->passes[0].res.start_wall_ns == b->passes[0].res.start_wall_ns);
}

int dv_merge_check_distinct(const dv_study_t *const *studies, const char *const *names, size_t n,
                            dv_err_t *err)
{
	for (size_t j = 1; j < n; j++)
		for (size_t i = 0; i < j; i++)
			if (same_run(studies[i], studies[j]))
				return dv_err_set(
				    err, -EINVAL,
				    "%s: the same generator's run as %s (host %s, the same start): "
				    "a file given twice, or a copy; give each generator's file "
				    "once",
				    names[j], names[i],
				    studies[j]->hostname ? studies[j]->hostname : "?");
	return 0;
}

int dv_merge_study(dv_study_t *into, const char *into_name, const dv_study_t *from,
                   const char *from_name, dv_err_t *err)
{
	int rc;

	if ((rc = check_inputs(into, into_name, from, from_name, err)) != 0 ||
	    (rc = check_flags(into, into_name, from, from_name, err)) != 0 ||
	    (rc = check_passes(into, into_name, from, from_name, err)) != 0)
		return rc;
	for (size_t i = 0; i < into->n_passes; i++)
		if (dv_dist_merge_pass(&into->passes[i].res, &from->passes[i].res) != 0)
			return dv_err_set(err, -ENOMEM, "out of memory");
	into->run.sockets += from->run.sockets;
	into->run.max_outstanding += from->run.max_outstanding;
	into->run.threads += from->run.threads;
	into->run.max_qps += from->run.max_qps;
	into->interrupted = into->interrupted || from->interrupted;
	if (into->failed == 0 && from->failed != 0) {
		into->failed = from->failed;
		snprintf(into->fail_msg, sizeof(into->fail_msg), "%s: %s", from_name,
		         from->fail_msg);
	}
	return 0;
}

int dv_merge_ranks(dv_study_t *merged, const dv_study_t *const *studies, size_t n)
{
	for (size_t p = 0; p < merged->n_passes; p++) {
		dv_pass_record_t *rec = &merged->passes[p];
		dv_rank_pass_t *r = calloc(n, sizeof(*r));
		if (r == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			dv_rank_pass_fill(&r[i], (int)i, studies[i]->hostname,
			                  &studies[i]->passes[p].res);
			r[i].reported = true;
		}
		dv_rank_pass_classify(r, n);
		free(rec->ranks);
		rec->ranks = r;
		rec->n_ranks = n;
	}
	return 0;
}
