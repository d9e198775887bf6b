/* capacity: the highest open-loop rate a server takes within an SLO (loss, a latency percentile).
 */
#ifndef DV_CAPACITY_H
#define DV_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input/querylist.h"
#include "engine/run.h"
#include "base/util.h"

/*
 * A search is a series of steps; a step is one paced pass (dv_run_pass) of step_ns
 * at an offered rate, after a settle pass of settle_ns at the same rate whose figures
 * are not judged. The search grows the rate geometrically (x factor) from `from`
 * until the SLO breaks, then bisects (geometric midpoints) until hi / lo <= 1 +
 * precision, then repeats the highest passing rate once to confirm it.
 * doc/methodology.md ("Capacity") explains the choices; doc/numbers.md defines the
 * figures.
 */
typedef struct dv_capacity_opts {
	double max_loss;    /* fraction, e.g. 0.001 for 0.1% (--max-loss) */
	double max_lat_ns;  /* latency limit, 0 = none (--max-p99 / --max-latency) */
	double lat_q;       /* its quantile, e.g. 0.99 */
	bool lat_intended;  /* judge latency from the intended send time (default true) */
	uint64_t step_ns;   /* judged time per step (--step) */
	uint64_t settle_ns; /* unjudged time before it (--settle), 0 = none */
	double from, to;    /* offered qps bounds (--from, --to) */
	double factor;      /* geometric growth (2) */
	double precision;   /* stop bisecting when hi / lo <= 1 + precision (0.02) */
	/* Called before each step (before its settle pass), e.g. a flush for a cold
	 * search; non-zero stops the search (res->interrupted). NULL = none. */
	int (*before_step)(void *ctx);
	void *before_ctx;
} dv_capacity_opts_t;

void dv_capacity_opts_init(dv_capacity_opts_t *o);

typedef enum dv_cap_verdict {
	DV_CAP_PASS = 0, /* within the SLO */
	DV_CAP_FAIL,     /* the server broke the SLO */
	DV_CAP_GENBOUND, /* the generator could not keep the offered rate: no server figure */
	DV_CAP_ERROR,    /* the pass did not run (or was interrupted) */
} dv_cap_verdict_t;

const char *dv_cap_verdict_name(dv_cap_verdict_t v); /* "pass", "FAIL", "generator-bound"... */

typedef struct dv_capacity_step {
	double offered_qps;  /* the schedule's rate */
	double sent_qps;     /* achieved: (sent + not_sent) / step time */
	double answered_qps; /* completed / step time */
	double loss;         /* lost / sent (fraction); 0 when nothing was sent */
	uint64_t sent, completed, lost;
	uint64_t p50_ns, p99_ns, lat_ns; /* lat_ns: the SLO's quantile (intended or actual) */
	uint64_t p99_intended_ns;        /* from the intended send time; 0 when not paced */
	uint64_t p999_intended_ns;
	double cpu_share; /* generator CPU / (elapsed x threads) */
	dv_cap_verdict_t verdict;
	char why[128]; /* what decided the verdict */
} dv_capacity_step_t;

/*
 * Judge one finished step pass (pure): fills st from res. Generator-bound when the
 * generator used >= 95% of its threads' CPU, or its own sockets dropped answers
 * (client_drops, SO_MEMINFO), or when it sent more than 0.5% fewer
 * queries than the schedule had due in step_ns (or forfeited any), or sent over 0.5%
 * of them more than 2 ms late (sent_behind), with room left in its window. Behind schedule with the
 * window full is the server's doing (answers not coming back) when the SLO broke, and a too small
 * -q (generator-bound) when not. Where a stream server held sends back (server_holds:
 * its stream limit, a send buffer it did not drain), sending short of the schedule fails
 * the step, and sends it only delayed are judged by the SLO (the intended-time latency),
 * never as generator-bound. A generator-bound step is tried twice more before the search
 * stops on it.
 */
void dv_capacity_judge(const dv_capacity_opts_t *o, double offered_qps, uint32_t threads,
                       const dv_pass_result_t *res, dv_capacity_step_t *st);

/* The search's bracket (pure state machine, unit-tested with a simulated server). */
typedef struct dv_capacity_search {
	double lo;   /* highest passing rate, 0 = none yet */
	double hi;   /* lowest failing rate, 0 = none yet */
	double next; /* rate of the next step, 0 = done */
	bool confirming;
	bool generator_bound; /* stopped: the result is "at least lo" */
	bool confirmed;       /* the confirmation step passed */
	bool hit_to;          /* passed at --to: the result is "at least to" */
} dv_capacity_search_t;

void dv_capacity_search_init(dv_capacity_search_t *s, const dv_capacity_opts_t *o);
/* Record the verdict of the step at s->next and choose the next rate (0 = done). */
void dv_capacity_search_step(dv_capacity_search_t *s, const dv_capacity_opts_t *o,
                             dv_cap_verdict_t v);

typedef struct dv_capacity_result {
	dv_capacity_step_t *steps; /* owned, n_steps entries, in the order run */
	size_t n_steps;
	double capacity_qps;  /* highest passing offered rate, 0 = none passed */
	bool generator_bound; /* capacity_qps is a lower bound ("at least") */
	bool confirmed;       /* the final repeat at capacity_qps passed */
	bool hit_to;          /* passed at --to: a lower bound too */
	bool interrupted;
	/* The judged pass of the last passing step at capacity_qps (the confirmation when
	 * there was one): what a study records for the search. Owned; have_best false and
	 * best zeroed when no step passed. */
	dv_pass_result_t best;
	bool have_best;
} dv_capacity_result_t;

/*
 * A search as a study records it (study.h: dv_pass_record_t.cap; results files key
 * "capacity"). searched false: the pass is an ordinary pass.
 */
typedef struct dv_capacity_figure {
	bool searched;
	double capacity_qps;  /* highest passing offered rate, 0 = none passed */
	bool generator_bound; /* a lower bound: the generator could not offer more */
	bool confirmed;       /* the final repeat at capacity_qps passed */
	bool hit_to;          /* passed at --to: a lower bound too */
	uint32_t steps;       /* steps run (judged passes) */
} dv_capacity_figure_t;

/* The figure of a finished search. */
dv_capacity_figure_t dv_capacity_figure_of(const dv_capacity_result_t *r);
/* Whether the figure is only a lower bound ("at least"): generator-bound or --to reached. */
bool dv_capacity_is_lower_bound(const dv_capacity_figure_t *f);
/*
 * The figure's verdict in one word, for the CSV history and tables: "generator-bound"
 * (a lower bound: the generator could not offer more), "to-reached" (a lower bound:
 * passed at --to), "none" (the SLO broke at every rate tried), "confirmed" or
 * "unconfirmed" (the final repeat at the capacity failed). "" when f is not a search.
 */
const char *dv_capacity_figure_verdict(const dv_capacity_figure_t *f);
/* dv_cap_verdict_name's inverse: 0 with *v set, or -EINVAL for another name. */
int dv_cap_verdict_parse(const char *name, dv_cap_verdict_t *v);

/*
 * Run a search against cfg->server with list ql: cfg is copied; its max_qps and
 * time_limit_ns are set per step. Prints a line per step to out (NULL = silent).
 * Returns 0 or a negative code with err filled when a pass could not run.
 */
int dv_capacity_run(const dv_capacity_opts_t *o, const dv_run_config_t *cfg,
                    const dv_querylist_t *ql, FILE *out, dv_capacity_result_t *res, dv_err_t *err);
void dv_capacity_result_free(dv_capacity_result_t *r);

/* Print the result's summary line(s): "Capacity: N qps ..." or "at least N qps". */
void dv_capacity_print(const dv_capacity_opts_t *o, const dv_capacity_result_t *r, FILE *out);

#endif
