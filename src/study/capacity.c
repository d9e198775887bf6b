/* capacity: geometric growth, bisection and confirmation of the highest rate within an SLO. */
#include "config.h"

#include "study/capacity.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DV_CAP_BEHIND   0.005 /* more than 0.5% behind the schedule: generator-bound */
#define DV_CAP_CPU      0.95  /* share of the threads' CPU that counts as saturated */
#define DV_CAP_MIN_QPS  1.0
#define DV_CAP_MAX_STEP 200 /* steps at most: every search ends */
#define DV_CAP_RETRIES  2   /* a generator-bound step is tried this many more times */
#define DV_CAP_SETTLE_T (200 * DV_NS_PER_MS) /* settle pass: its timeout at most */

void dv_capacity_opts_init(dv_capacity_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->max_loss = 0.001;
	o->lat_q = 0.99;
	o->lat_intended = true;
	o->step_ns = 2 * DV_NS_PER_S;
	o->settle_ns = DV_NS_PER_S / 2;
	o->from = 1000;
	o->factor = 2;
	o->precision = 0.02;
}

const char *dv_cap_verdict_name(dv_cap_verdict_t v)
{
	switch (v) {
	case DV_CAP_PASS:
		return "pass";
	case DV_CAP_FAIL:
		return "FAIL";
	case DV_CAP_GENBOUND:
		return "generator-bound";
	default:
		return "error";
	}
}

int dv_cap_verdict_parse(const char *name, dv_cap_verdict_t *v)
{
	for (int i = DV_CAP_PASS; i <= DV_CAP_ERROR; i++)
		if (name != NULL && strcmp(name, dv_cap_verdict_name((dv_cap_verdict_t)i)) == 0) {
			*v = (dv_cap_verdict_t)i;
			return 0;
		}
	return -EINVAL;
}

void dv_capacity_judge(const dv_capacity_opts_t *o, double offered_qps, uint32_t threads,
                       const dv_pass_result_t *res, dv_capacity_step_t *st)
{
	const dv_counters_t *c = &res->stats.c;
	const dv_hist_t *lat = o->lat_intended && res->stats.latency_intended.count > 0
	                           ? &res->stats.latency_intended
	                           : &res->stats.latency;
	double step_s = (double)o->step_ns / 1e9, due;
	bool short_of, behind, held, slo_loss, slo_lat, window_full;

	memset(st, 0, sizeof(*st));
	st->offered_qps = offered_qps;
	st->sent = c->sent;
	st->completed = c->completed;
	st->lost = c->lost;
	st->sent_qps = (double)(c->sent + c->not_sent) / step_s;
	st->answered_qps = (double)c->completed / step_s;
	st->loss = c->sent ? (double)c->lost / (double)c->sent : 0;
	st->p50_ns = dv_hist_quantile_ns(&res->stats.latency, 0.50);
	st->p99_ns = dv_hist_quantile_ns(&res->stats.latency, 0.99);
	st->p99_intended_ns = dv_hist_quantile_ns(&res->stats.latency_intended, 0.99);
	st->p999_intended_ns = dv_hist_quantile_ns(&res->stats.latency_intended, 0.999);
	st->lat_ns = dv_hist_quantile_ns(lat, o->lat_q);
	st->cpu_share = res->elapsed_s > 0 && threads > 0
	                    ? (res->cpu_user_s + res->cpu_sys_s) / (res->elapsed_s * threads)
	                    : 0;
	/* The schedule has floor(T x R) + 1 queries due in T (pacer.h). */
	due = floor(step_s * offered_qps) + 1;
	short_of = (double)(c->sent + c->not_sent) < due * (1 - DV_CAP_BEHIND) || c->forfeited > 0;
	behind = short_of || (double)c->sent_behind > DV_CAP_BEHIND * (double)c->sent;
	/* Stream transports: the server held sends back (stream limit, undrained buffer). */
	held = c->server_holds > 0;
	slo_loss = st->loss <= o->max_loss;
	slo_lat = o->max_lat_ns <= 0 || (double)st->lat_ns <= o->max_lat_ns;
	window_full = c->inflight_peak >= res->max_outstanding;
	if (res->interrupted) {
		st->verdict = DV_CAP_ERROR;
		snprintf(st->why, sizeof(st->why), "interrupted");
	} else if (st->cpu_share >= DV_CAP_CPU) {
		st->verdict = DV_CAP_GENBOUND;
		snprintf(st->why, sizeof(st->why), "generator CPU %.0f%% of %u thread%s",
		         st->cpu_share * 100, threads, threads == 1 ? "" : "s");
	} else if (c->client_drops > 0) {
		/* Answers the server sent and our own sockets dropped (SO_MEMINFO): the loss
		 * and latency are the generator's, not the server's. */
		st->verdict = DV_CAP_GENBOUND;
		snprintf(st->why, sizeof(st->why),
		         "its own sockets dropped %" PRIu64 " answer%s (raise -b, or -c)",
		         c->client_drops, c->client_drops == 1 ? "" : "s");
	} else if (short_of && held) {
		/* The connections had room in -q's share and the server would take no more:
		 * its limit. (Sends it only delayed count in the intended-time latency.) */
		st->verdict = DV_CAP_FAIL;
		snprintf(st->why, sizeof(st->why),
		         "sent %.0f of %.0f due: server held sends back %" PRIu64
		         "x (stream limit or full send buffer; more -c offer more)",
		         (double)(c->sent + c->not_sent), due, c->server_holds);
	} else if (behind && !held && !window_full) {
		st->verdict = DV_CAP_GENBOUND;
		snprintf(st->why, sizeof(st->why), "sent %.0f of %.0f due, %.2f%% over 2 ms late%s",
		         (double)(c->sent + c->not_sent), due,
		         c->sent ? 100.0 * (double)c->sent_behind / (double)c->sent : 0.0,
		         c->forfeited ? ", queries forfeited" : "");
	} else if (!slo_loss) {
		st->verdict = DV_CAP_FAIL;
		snprintf(st->why, sizeof(st->why), "loss %.3f%% > %.3f%%", st->loss * 100,
		         o->max_loss * 100);
	} else if (!slo_lat) {
		st->verdict = DV_CAP_FAIL;
		snprintf(st->why, sizeof(st->why), "p%g %.3f ms > %.3f ms", o->lat_q * 100,
		         (double)st->lat_ns / 1e6, o->max_lat_ns / 1e6);
	} else if (behind && !held) {
		st->verdict = DV_CAP_GENBOUND;
		snprintf(st->why, sizeof(st->why),
		         "behind schedule with the window (-q %u) full and the SLO kept: raise -q",
		         res->max_outstanding);
	} else {
		st->verdict = DV_CAP_PASS;
		snprintf(st->why, sizeof(st->why), "within the SLO");
	}
}

void dv_capacity_search_init(dv_capacity_search_t *s, const dv_capacity_opts_t *o)
{
	memset(s, 0, sizeof(*s));
	s->next = o->to > 0 && o->from > o->to ? o->to : o->from;
}

/* Both ends known: bisect, or confirm when the bracket is narrow enough. */
static void narrow(dv_capacity_search_t *s, const dv_capacity_opts_t *o)
{
	if (s->hi / s->lo <= 1 + o->precision) {
		s->confirming = true;
		s->next = s->lo;
	} else {
		s->next = round(sqrt(s->lo * s->hi));
	}
}

void dv_capacity_search_step(dv_capacity_search_t *s, const dv_capacity_opts_t *o,
                             dv_cap_verdict_t v)
{
	double r = s->next;

	if (v == DV_CAP_GENBOUND || v == DV_CAP_ERROR) {
		s->generator_bound = v == DV_CAP_GENBOUND;
		s->next = 0;
		return;
	}
	if (s->confirming) {
		s->confirmed = v == DV_CAP_PASS;
		s->next = 0;
		return;
	}
	if (v == DV_CAP_PASS) {
		s->lo = r;
		if (s->hi > 0)
			return narrow(s, o);
		if (o->to > 0 && r >= o->to) {
			s->hit_to = true;
			s->next = 0;
			return;
		}
		s->next = round(r * o->factor);
		if (o->to > 0 && s->next > o->to)
			s->next = o->to;
		return;
	}
	s->hi = r;
	if (s->lo > 0)
		return narrow(s, o);
	s->next = floor(r / o->factor);
	if (s->next < DV_CAP_MIN_QPS)
		s->next = 0; /* fails at any rate: no capacity */
}

/* One paced pass at rate qps for dur_ns; res is the caller's to free. */
static int run_at(const dv_run_config_t *base, const dv_querylist_t *ql, double qps,
                  uint64_t dur_ns, uint64_t timeout_ns, dv_pass_result_t *res, dv_err_t *err)
{
	dv_run_config_t cfg = *base;

	cfg.max_qps = qps;
	cfg.time_limit_ns = dur_ns;
	cfg.passes = 0;
	cfg.timeout_ns = timeout_ns;
	cfg.interval_ns = 0;
	cfg.interval_print = false;
	cfg.progress = false;
	cfg.verbose = false;
	return dv_run_pass(&cfg, ql, res, err);
}

static void print_step(FILE *out, size_t n, const dv_capacity_opts_t *o,
                       const dv_capacity_step_t *st)
{
	if (out == NULL)
		return;
	fprintf(out,
	        "[Capacity] step %zu: offered %.0f qps, sent %.0f qps, answered %.0f qps, "
	        "loss %.3f%%, p50 %.3f ms, p99 %.3f ms, p%g%s %.3f ms: %s (%s)\n",
	        n, st->offered_qps, st->sent_qps, st->answered_qps, st->loss * 100,
	        (double)st->p50_ns / 1e6, (double)st->p99_ns / 1e6, o->lat_q * 100,
	        o->lat_intended ? " intended" : "", (double)st->lat_ns / 1e6,
	        dv_cap_verdict_name(st->verdict), st->why);
	fflush(out);
}

/* Settle pass (not judged), then the judged step pass at s->next. */
/* One step at qps: settle, then the judged pass into *res (the caller frees it). */
static int one_step(const dv_capacity_opts_t *o, const dv_run_config_t *cfg,
                    const dv_querylist_t *ql, double qps, dv_capacity_step_t *st,
                    dv_pass_result_t *res, dv_err_t *err)
{
	int rc;

	if (o->before_step != NULL && (rc = o->before_step(o->before_ctx)) != 0)
		return dv_err_set(err, rc < 0 ? rc : -EINTR, "the step's preparation failed");
	if (o->settle_ns > 0) {
		rc = run_at(cfg, ql, qps, o->settle_ns, DV_MIN(cfg->timeout_ns, DV_CAP_SETTLE_T),
		            res, err);
		if (rc != 0)
			return rc;
		dv_pass_result_free(res);
	}
	rc = run_at(cfg, ql, qps, o->step_ns, cfg->timeout_ns, res, err);
	if (rc != 0)
		return rc;
	dv_capacity_judge(o, qps, cfg->threads, res, st);
	return 0;
}

/* Keep the judged pass of a passing step at the highest passing rate (the latest such). */
static void keep_best(dv_capacity_result_t *r, double *best_qps, const dv_capacity_step_t *st,
                      dv_pass_result_t *pass)
{
	if (st->verdict == DV_CAP_PASS && st->offered_qps >= *best_qps) {
		if (r->have_best)
			dv_pass_result_free(&r->best);
		r->best = *pass;
		r->have_best = true;
		*best_qps = st->offered_qps;
	} else {
		dv_pass_result_free(pass);
	}
}

int dv_capacity_run(const dv_capacity_opts_t *o, const dv_run_config_t *cfg,
                    const dv_querylist_t *ql, FILE *out, dv_capacity_result_t *res, dv_err_t *err)
{
	dv_capacity_search_t s;
	dv_pass_result_t pass;
	double best_qps = 0;
	unsigned retried = 0;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->steps = calloc(DV_CAP_MAX_STEP, sizeof(*res->steps));
	if (res->steps == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	dv_capacity_search_init(&s, o);
	while (s.next > 0 && res->n_steps < DV_CAP_MAX_STEP) {
		dv_capacity_step_t *st = &res->steps[res->n_steps];
		memset(&pass, 0, sizeof(pass));
		rc = one_step(o, cfg, ql, s.next, st, &pass, err);
		if (rc != 0) {
			dv_pass_result_free(&pass);
			res->interrupted = true;
			break;
		}
		keep_best(res, &best_qps, st, &pass);
		res->n_steps++;
		print_step(out, res->n_steps, o, st);
		if (st->verdict == DV_CAP_ERROR || dv_run_stop_requested()) {
			res->interrupted = true;
			break;
		}
		/* A generator-bound step is run again (twice at most) before it ends the
		 * search: a busy machine can stall the generator for a moment. */
		if (st->verdict == DV_CAP_GENBOUND && retried < DV_CAP_RETRIES) {
			retried++;
			continue;
		}
		retried = 0;
		dv_capacity_search_step(&s, o, st->verdict);
	}
	res->capacity_qps = s.lo;
	res->generator_bound = s.generator_bound;
	res->confirmed = s.confirmed;
	res->hit_to = s.hit_to;
	return rc;
}

void dv_capacity_result_free(dv_capacity_result_t *r)
{
	if (r == NULL)
		return;
	free(r->steps);
	r->steps = NULL;
	r->n_steps = 0;
	if (r->have_best)
		dv_pass_result_free(&r->best);
	r->have_best = false;
}

dv_capacity_figure_t dv_capacity_figure_of(const dv_capacity_result_t *r)
{
	dv_capacity_figure_t f = {.searched = true,
	                          .capacity_qps = r->capacity_qps,
	                          .generator_bound = r->generator_bound,
	                          .confirmed = r->confirmed,
	                          .hit_to = r->hit_to,
	                          .steps = (uint32_t)r->n_steps};
	return f;
}

bool dv_capacity_is_lower_bound(const dv_capacity_figure_t *f)
{
	return f->generator_bound || f->hit_to;
}

const char *dv_capacity_figure_verdict(const dv_capacity_figure_t *f)
{
	if (!f->searched)
		return "";
	if (f->generator_bound)
		return "generator-bound";
	if (f->capacity_qps <= 0)
		return "none";
	if (f->hit_to)
		return "to-reached";
	return f->confirmed ? "confirmed" : "unconfirmed";
}

void dv_capacity_print(const dv_capacity_opts_t *o, const dv_capacity_result_t *r, FILE *out)
{
	char slo[96];

	if (o->max_lat_ns > 0)
		snprintf(slo, sizeof(slo), "loss <= %g%%, p%g%s <= %g ms", o->max_loss * 100,
		         o->lat_q * 100, o->lat_intended ? " (from intended send)" : "",
		         o->max_lat_ns / 1e6);
	else
		snprintf(slo, sizeof(slo), "loss <= %g%%", o->max_loss * 100);
	if (r->interrupted) {
		fprintf(out, "Capacity: not found (the search was interrupted or a pass failed)\n");
	} else if (r->generator_bound && r->capacity_qps <= 0) {
		fprintf(out,
		        "Capacity: generator-bound at the first rate tried: no server figure (%s); "
		        "add threads (-T) or lower --from\n",
		        slo);
	} else if (r->generator_bound) {
		fprintf(out,
		        "Capacity: generator-bound: at least %.0f qps (%s); the generator could "
		        "not offer more, so this is not the server's capacity\n",
		        r->capacity_qps, slo);
	} else if (r->capacity_qps <= 0) {
		fprintf(out, "Capacity: none: the SLO (%s) broke at every rate tried\n", slo);
	} else if (r->hit_to) {
		fprintf(out, "Capacity: at least %.0f qps (%s): --to reached\n", r->capacity_qps,
		        slo);
	} else {
		fprintf(out, "Capacity: %.0f qps (%s), bracket within %g%%, %s\n", r->capacity_qps,
		        slo, o->precision * 100,
		        r->confirmed ? "confirmed" : "NOT confirmed by the final step");
	}
}
