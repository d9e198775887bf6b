/* groups: the passes of a study grouped over the repeats; mean, spread and the significance rule.
 */
#include "config.h"

#include "study/groups.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_CAP0 8 /* samples a new group has room for before it grows */

static const char *const metric_labels[DV_M_COUNT] = {
    [DV_M_QPS] = "qps",         [DV_M_LOST_PCT] = "lost %", [DV_M_P50_MS] = "p50 ms",
    [DV_M_P90_MS] = "p90 ms",   [DV_M_P99_MS] = "p99 ms",   [DV_M_P999_MS] = "p99.9 ms",
    [DV_M_MEAN_MS] = "mean ms",
};

const char *dv_metric_label(dv_metric_t m)
{
	return (unsigned)m < DV_M_COUNT ? metric_labels[m] : "?";
}

double dv_pass_metric(const dv_pass_result_t *r, dv_metric_t m)
{
	const dv_hist_t *h = &r->stats.latency;

	switch (m) {
	case DV_M_QPS:
		return r->qps;
	case DV_M_LOST_PCT:
		return r->stats.c.sent ? 100.0 * (double)r->stats.c.lost / (double)r->stats.c.sent
		                       : 0;
	case DV_M_P50_MS:
		return (double)dv_hist_quantile_ns(h, 0.50) / 1e6;
	case DV_M_P90_MS:
		return (double)dv_hist_quantile_ns(h, 0.90) / 1e6;
	case DV_M_P99_MS:
		return (double)dv_hist_quantile_ns(h, 0.99) / 1e6;
	case DV_M_P999_MS:
		return (double)dv_hist_quantile_ns(h, 0.999) / 1e6;
	case DV_M_MEAN_MS:
		return dv_hist_mean_ns(h) / 1e6;
	default:
		return 0;
	}
}

bool dv_pass_is_sample(const dv_pass_record_t *p)
{
	return p->kind != DV_PASS_WARMUP && !p->res.interrupted;
}

/* ---------------------------------------------------------------- series */

dv_series_t dv_series_of(const double *v, size_t n)
{
	dv_series_t st = {.n = n};

	if (n == 0)
		return st;
	st.min = st.max = v[0];
	for (size_t i = 0; i < n; i++) {
		st.mean += v[i];
		st.min = DV_MIN(st.min, v[i]);
		st.max = DV_MAX(st.max, v[i]);
	}
	st.mean /= (double)n;
	if (n >= 2) {
		double ss = 0;
		for (size_t i = 0; i < n; i++)
			ss += (v[i] - st.mean) * (v[i] - st.mean);
		st.sd = sqrt(ss / (double)(n - 1));
	}
	return st;
}

/* ---------------------------------------------------------------- Welch's t */

/* Continued fraction of the regularised incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = fabs(d) < tiny ? tiny : d;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2)), del;
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* I_x(a, b), the regularised incomplete beta function. */
static double beta_inc(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* P(T <= t) for Student's t with df degrees of freedom. */
static double t_cdf(double t, double df)
{
	double tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));
	return t >= 0 ? 1 - tail : tail;
}

double dv_t_quantile(double p, double df)
{
	double lo = -1e6, hi = 1e6;

	if (!(p > 0 && p < 1 && df > 0))
		return NAN;
	for (int i = 0; i < 200; i++) { /* bounded: 2e6 / 2^200 is far below any double step */
		double mid = (lo + hi) / 2;
		if (t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

dv_diff_t dv_diff_welch(const dv_series_t *a, const dv_series_t *b, double floor_a, double floor_b)
{
	dv_diff_t d = {.diff = b->mean - a->mean, .lo = NAN, .hi = NAN, .verdict = DV_DIFF_TOO_FEW};
	double sa, sb, va, vb, se, t;

	if (a->n < DV_DIFF_MIN_N || b->n < DV_DIFF_MIN_N)
		return d;
	sa = DV_MAX(a->sd, floor_a);
	sb = DV_MAX(b->sd, floor_b);
	va = sa * sa / (double)a->n;
	vb = sb * sb / (double)b->n;
	se = sqrt(va + vb);
	if (se > 0)
		d.df = (va + vb) * (va + vb) /
		       (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	else
		d.df = (double)(a->n + b->n - 2);
	t = dv_t_quantile(0.975, d.df);
	d.lo = d.diff - t * se;
	d.hi = d.diff + t * se;
	if (se > 0)
		d.verdict = d.lo > 0 || d.hi < 0 ? DV_DIFF_SIGNIFICANT : DV_DIFF_NOISE;
	else
		d.verdict = d.diff != 0 ? DV_DIFF_SIGNIFICANT : DV_DIFF_NOISE;
	return d;
}

double dv_metric_floor(dv_metric_t m, double v)
{
	uint64_t ns;
	int i;

	if (m < DV_M_P50_MS || m > DV_M_MEAN_MS || !(v > 0))
		return 0;
	ns = v * 1e6 >= (double)DV_HIST_MAX_NS ? DV_HIST_MAX_NS : (uint64_t)(v * 1e6);
	i = dv_hist_bucket_of(ns);
	return (double)(dv_hist_bucket_high(i) - dv_hist_bucket_low(i)) / 1e6;
}

dv_diff_t dv_diff_log(const dv_series_t *la, const dv_series_t *lb, double rel_floor_a,
                      double rel_floor_b)
{
	dv_diff_t d =
	    dv_diff_welch(la, lb, log1p(DV_MAX(rel_floor_a, 0.0)), log1p(DV_MAX(rel_floor_b, 0.0)));

	d.diff = expm1(d.diff);
	if (d.verdict != DV_DIFF_TOO_FEW) {
		d.lo = expm1(d.lo);
		d.hi = expm1(d.hi);
	}
	return d;
}

dv_qps_status_t dv_group_qps_status(const dv_study_t *s, const struct dv_group *g)
{
	for (size_t i = 0; g != NULL && i < g->n; i++) {
		dv_qps_status_t st = dv_pass_qps_status(s, g->passes[i]);
		if (st != DV_QPS_MEASURED)
			return st;
	}
	return DV_QPS_MEASURED;
}

size_t dv_group_cache_contradicts(const struct dv_group *g)
{
	size_t n = 0;

	for (size_t i = 0; g != NULL && i < g->n; i++)
		n += dv_pass_cache_contradicts(g->passes[i]);
	return n;
}

bool dv_metric_higher_is_better(dv_metric_t m)
{
	return m == DV_M_QPS;
}

/* ---------------------------------------------------------------- groups */

/* Which occurrence of its kind pass i is within its target, list and repeat (0 = first). */
static unsigned nth_of_kind(const dv_study_t *s, size_t i)
{
	const dv_pass_record_t *p = &s->passes[i];
	unsigned nth = 0;

	for (size_t k = 0; k < i; k++) {
		const dv_pass_record_t *q = &s->passes[k];
		nth += q->target == p->target && q->list == p->list && q->repeat == p->repeat &&
		       q->kind == p->kind;
	}
	return nth;
}

static bool same_labels(const dv_group_t *g, const char *target, const char *list,
                        dv_pass_kind_t kind, unsigned nth)
{
	return g->kind == kind && g->nth == nth && strcmp(g->target, target) == 0 &&
	       strcmp(g->list, list) == 0;
}

static void group_free(dv_group_t *g)
{
	for (int m = 0; m < DV_M_COUNT; m++)
		free(g->val[m]);
	free(g->latency);
	free(g->passes);
}

void dv_groups_free(dv_groups_t *gs)
{
	if (gs == NULL)
		return;
	for (size_t i = 0; i < gs->n; i++)
		group_free(&gs->g[i]);
	free(gs->g);
	gs->g = NULL;
	gs->n = 0;
	gs->left_out = 0;
}

/* A new group in gs for pass p, with room for cap samples. 0 or -ENOMEM. */
static int group_new(dv_groups_t *gs, const dv_study_t *s, const dv_pass_record_t *p, unsigned nth,
                     size_t cap)
{
	dv_group_t *g = &gs->g[gs->n++];
	bool ok;

	g->target = dv_study_target_label(s, p->target);
	g->list = dv_study_list_label(s, p->list);
	g->ti = p->target;
	g->li = p->list;
	g->kind = p->kind;
	g->nth = nth;
	cap =
	    DV_MIN(cap, GROUP_CAP0); /* grown by group_add: one group per pass must not cost n^2 */
	g->latency = malloc(sizeof(*g->latency));
	g->passes = calloc(cap, sizeof(*g->passes));
	ok = g->latency != NULL && g->passes != NULL;
	for (int m = 0; m < DV_M_COUNT; m++) {
		g->val[m] = calloc(cap, sizeof(double));
		ok = ok && g->val[m] != NULL;
	}
	if (!ok)
		return -ENOMEM;
	dv_hist_init(g->latency);
	return 0;
}

/* Room for one more sample: the arrays hold GROUP_CAP0, then the next power of two. */
static int group_grow(dv_group_t *g)
{
	size_t n = g->n;

	if (n < GROUP_CAP0 || (n & (n - 1)) != 0)
		return 0;
	const dv_pass_record_t **pp = realloc(g->passes, 2 * n * sizeof(*pp));
	if (pp == NULL)
		return -ENOMEM;
	g->passes = pp;
	for (int m = 0; m < DV_M_COUNT; m++) {
		double *v = realloc(g->val[m], 2 * n * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		g->val[m] = v;
	}
	return 0;
}

static int group_add(dv_group_t *g, const dv_pass_record_t *p)
{
	if (group_grow(g) != 0)
		return -ENOMEM;
	for (int m = 0; m < DV_M_COUNT; m++)
		g->val[m][g->n] = dv_pass_metric(&p->res, (dv_metric_t)m);
	g->passes[g->n] = p;
	g->n++;
	g->sent += p->res.stats.c.sent;
	g->completed += p->res.stats.c.completed;
	g->lost += p->res.stats.c.lost;
	dv_hist_merge(g->latency, &p->res.stats.latency);
	return 0;
}

static dv_group_t *group_of(dv_groups_t *gs, const dv_study_t *s, const dv_pass_record_t *p,
                            dv_group_by_t by, unsigned nth)
{
	for (size_t k = 0; k < gs->n; k++) {
		dv_group_t *g = &gs->g[k];
		if (by == DV_GROUP_BY_POSITION
		        ? g->ti == p->target && g->li == p->list && g->kind == p->kind &&
		              g->nth == nth
		        : same_labels(g, dv_study_target_label(s, p->target),
		                      dv_study_list_label(s, p->list), p->kind, nth))
			return g;
	}
	return NULL;
}

int dv_groups_build(const dv_study_t *s, dv_group_by_t by, dv_groups_t *out)
{
	dv_groups_t gs = {0};
	size_t np = s->n_passes;

	/* At most one group per pass: allocate that once, trim nothing. */
	if (np > 0) {
		gs.g = calloc(np, sizeof(*gs.g));
		if (gs.g == NULL)
			return -ENOMEM;
	}
	for (size_t i = 0; i < np; i++) {
		const dv_pass_record_t *p = &s->passes[i];
		unsigned nth = by == DV_GROUP_BY_POSITION ? nth_of_kind(s, i) : 0;
		dv_group_t *g;

		if (p->kind == DV_PASS_WARMUP)
			continue;
		if (!dv_pass_is_sample(p)) {
			gs.left_out++;
			continue;
		}
		g = group_of(&gs, s, p, by, nth);
		if (g == NULL) {
			if (group_new(&gs, s, p, nth, np) != 0) {
				dv_groups_free(&gs);
				return -ENOMEM;
			}
			g = &gs.g[gs.n - 1];
		}
		if (group_add(g, p) != 0) {
			dv_groups_free(&gs);
			return -ENOMEM;
		}
	}
	for (size_t k = 0; k < gs.n; k++)
		for (int m = 0; m < DV_M_COUNT; m++) {
			dv_series_t st = dv_series_of(gs.g[k].val[m], gs.g[k].n);
			gs.g[k].mean[m] = st.mean;
			gs.g[k].sd[m] = st.sd;
		}
	*out = gs;
	return 0;
}

const dv_group_t *dv_groups_find(const dv_groups_t *gs, const dv_group_t *key)
{
	for (size_t i = 0; i < gs->n; i++)
		if (same_labels(&gs->g[i], key->target, key->list, key->kind, key->nth))
			return &gs->g[i];
	return NULL;
}

const dv_group_t *dv_groups_at(const dv_groups_t *gs, size_t ti, size_t li, dv_pass_kind_t kind,
                               unsigned nth)
{
	for (size_t i = 0; i < gs->n; i++) {
		const dv_group_t *g = &gs->g[i];
		if (g->ti == ti && g->li == li && g->kind == kind && g->nth == nth)
			return g;
	}
	return NULL;
}

dv_series_t dv_group_series(const dv_group_t *g, dv_metric_t m)
{
	if (g == NULL || (unsigned)m >= DV_M_COUNT)
		return (dv_series_t){0};
	return dv_series_of(g->val[m], g->n);
}

dv_series_t dv_group_log_series(const dv_group_t *g, dv_metric_t m)
{
	double v[64], *lv = v;
	dv_series_t st = {0};

	if (g == NULL || (unsigned)m >= DV_M_COUNT || g->n == 0)
		return st;
	if (g->n > DV_ARRAY_SIZE(v) && (lv = malloc(g->n * sizeof(*lv))) == NULL)
		return st;
	for (size_t i = 0; i < g->n; i++) {
		if (!(g->val[m][i] > 0))
			goto out;
		lv[i] = log(g->val[m][i]);
	}
	st = dv_series_of(lv, g->n);
out:
	if (lv != v)
		free(lv);
	return st;
}

const char *dv_group_name(const dv_group_t *g, char *buf, size_t len)
{
	if (g->nth > 0)
		snprintf(buf, len, "%s/%s/%s%u", g->target, g->list, dv_pass_kind_name(g->kind),
		         g->nth + 1);
	else
		snprintf(buf, len, "%s/%s/%s", g->target, g->list, dv_pass_kind_name(g->kind));
	return buf;
}

dv_series_t dv_group_capacity(const dv_group_t *g, bool *lower_bound)
{
	double v[64], *vals = v;
	size_t n = 0;
	dv_series_t st;

	*lower_bound = false;
	if (g == NULL || g->n == 0)
		return dv_series_of(NULL, 0);
	if (g->n > DV_ARRAY_SIZE(v) && (vals = malloc(g->n * sizeof(*vals))) == NULL)
		return dv_series_of(NULL, 0);
	for (size_t i = 0; i < g->n; i++) {
		const dv_capacity_figure_t *f = &g->passes[i]->cap;
		if (!f->searched)
			continue;
		vals[n++] = f->capacity_qps;
		*lower_bound = *lower_bound || dv_capacity_is_lower_bound(f);
	}
	st = dv_series_of(vals, n);
	if (vals != v)
		free(vals);
	return st;
}
