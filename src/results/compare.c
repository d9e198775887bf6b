/* compare: groups of repeats, the run-to-run spread rule, and the side-by-side table.
 */
#include "config.h"

#include "results/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static bool same_group(const dv_group_t *g, const char *target, const char *list,
                       dv_pass_kind_t kind)
{
	return g->kind == kind && strcmp(g->target, target) == 0 && strcmp(g->list, list) == 0;
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
}

static void mean_sd(const double *v, size_t n, double *mean, double *sd)
{
	double sum = 0, ss = 0;

	*mean = 0;
	*sd = 0;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	*mean = sum / (double)n;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = sqrt(ss / (double)(n - 1));
}

static const char *target_label(const dv_study_t *s, size_t i)
{
	if (i >= s->n_targets)
		return "?";
	return s->targets[i].label  ? s->targets[i].label
	       : s->targets[i].spec ? s->targets[i].spec
	                            : "?";
}

static const char *list_label(const dv_study_t *s, size_t i)
{
	if (i >= s->n_lists)
		return "?";
	return s->lists[i].label ? s->lists[i].label : s->lists[i].path ? s->lists[i].path : "?";
}

int dv_groups_build(const dv_study_t *s, dv_groups_t *out)
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
		const char *t = target_label(s, p->target), *l = list_label(s, p->list);
		dv_group_t *g = NULL;

		if (p->kind == DV_PASS_WARMUP)
			continue;
		for (size_t k = 0; k < gs.n; k++)
			if (same_group(&gs.g[k], t, l, p->kind)) {
				g = &gs.g[k];
				break;
			}
		if (g == NULL) {
			g = &gs.g[gs.n++];
			g->target = t;
			g->list = l;
			g->kind = p->kind;
			g->latency = malloc(sizeof(*g->latency));
			g->passes = calloc(np, sizeof(*g->passes));
			for (int m = 0; m < DV_M_COUNT; m++)
				g->val[m] = calloc(np, sizeof(double));
			bool ok = g->latency && g->passes;
			for (int m = 0; m < DV_M_COUNT; m++)
				ok = ok && g->val[m];
			if (!ok) {
				dv_groups_free(&gs);
				return -ENOMEM;
			}
			dv_hist_init(g->latency);
		}
		for (int m = 0; m < DV_M_COUNT; m++)
			g->val[m][g->n] = dv_pass_metric(&p->res, (dv_metric_t)m);
		g->passes[g->n] = p;
		g->n++;
		g->sent += p->res.stats.c.sent;
		g->completed += p->res.stats.c.completed;
		g->lost += p->res.stats.c.lost;
		dv_hist_merge(g->latency, &p->res.stats.latency);
	}
	for (size_t k = 0; k < gs.n; k++)
		for (int m = 0; m < DV_M_COUNT; m++)
			mean_sd(gs.g[k].val[m], gs.g[k].n, &gs.g[k].mean[m], &gs.g[k].sd[m]);
	*out = gs;
	return 0;
}

const dv_group_t *dv_groups_find(const dv_groups_t *gs, const dv_group_t *key)
{
	for (size_t i = 0; i < gs->n; i++)
		if (same_group(&gs->g[i], key->target, key->list, key->kind))
			return &gs->g[i];
	return NULL;
}

const char *dv_group_name(const dv_group_t *g, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s", g->target, g->list, dv_pass_kind_name(g->kind));
	return buf;
}

double dv_pooled_sd(const double *a, size_t na, const double *b, size_t nb)
{
	double ma, sa, mb, sb;

	if (na < 2 || nb < 2)
		return 0;
	mean_sd(a, na, &ma, &sa);
	mean_sd(b, nb, &mb, &sb);
	return sqrt(((double)(na - 1) * sa * sa + (double)(nb - 1) * sb * sb) /
	            (double)(na + nb - 2));
}

int dv_compare_significant(const double *a, size_t na, const double *b, size_t nb)
{
	double ma, sa, mb, sb;

	if (na < 2 || nb < 2)
		return -1;
	mean_sd(a, na, &ma, &sa);
	mean_sd(b, nb, &mb, &sb);
	return fabs(mb - ma) > 2.0 * dv_pooled_sd(a, na, b, nb) ? 1 : 0;
}

/* Figures are printed with a precision that suits their size. */
static void fmt_num(char *buf, size_t len, dv_metric_t m, double v, bool sign)
{
	const char *f;

	if (m == DV_M_QPS)
		f = sign ? "%+.1f" : "%.1f";
	else if (m == DV_M_LOST_PCT)
		f = sign ? "%+.3f" : "%.3f";
	else
		f = sign ? "%+.4f" : "%.4f";
	snprintf(buf, len, f, v);
}

static void print_group_rows(const dv_group_t *b, const dv_group_t *c, FILE *out)
{
	static const dv_metric_t shown[] = {DV_M_QPS, DV_M_LOST_PCT, DV_M_P50_MS, DV_M_P90_MS,
	                                    DV_M_P99_MS};

	fprintf(out, "  %-9s %14s %14s %14s %9s  %s\n", "metric", "base", "new", "delta", "delta %",
	        "beyond spread");
	for (size_t i = 0; i < DV_ARRAY_SIZE(shown); i++) {
		dv_metric_t m = shown[i];
		char sb[32], sc[32], sd[32], sr[32];
		const char *sig;
		double d = c->mean[m] - b->mean[m];

		fmt_num(sb, sizeof(sb), m, b->mean[m], false);
		fmt_num(sc, sizeof(sc), m, c->mean[m], false);
		fmt_num(sd, sizeof(sd), m, d, true);
		if (b->mean[m] != 0)
			snprintf(sr, sizeof(sr), "%+.2f%%", 100.0 * d / fabs(b->mean[m]));
		else
			snprintf(sr, sizeof(sr), "n/a");
		switch (dv_compare_significant(b->val[m], b->n, c->val[m], c->n)) {
		case 1:
			sig = "YES";
			break;
		case 0:
			sig = "no";
			break;
		default:
			sig = "n/a (< 2 repeats)";
			break;
		}
		fprintf(out, "  %-9s %14s %14s %14s %9s  %s\n", dv_metric_label(m), sb, sc, sd, sr,
		        sig);
	}
}

size_t dv_compare_print(const dv_study_t *base, const char *base_name, const dv_study_t *cur,
                        const char *cur_name, FILE *out)
{
	dv_groups_t gb = {0}, gc = {0};
	size_t matched = 0;
	char name[512];

	if (dv_groups_build(base, &gb) != 0 || dv_groups_build(cur, &gc) != 0) {
		dv_groups_free(&gb);
		dv_groups_free(&gc);
		fprintf(out, "compare: out of memory\n");
		return 0;
	}
	fprintf(out, "Comparison: base %s, new %s\n", base_name, cur_name);
	for (size_t i = 0; i < gc.n; i++) {
		const dv_group_t *c = &gc.g[i], *b = dv_groups_find(&gb, c);

		dv_group_name(c, name, sizeof(name));
		if (b == NULL) {
			fprintf(out, "\n%s: only in %s\n", name, cur_name);
			continue;
		}
		matched++;
		fprintf(out, "\n%s (repeats: base %zu, new %zu)\n", name, b->n, c->n);
		print_group_rows(b, c, out);
	}
	for (size_t i = 0; i < gb.n; i++)
		if (dv_groups_find(&gc, &gb.g[i]) == NULL)
			fprintf(out, "\n%s: only in %s\n",
			        dv_group_name(&gb.g[i], name, sizeof(name)), base_name);
	if (gb.n > 0 || gc.n > 0)
		fprintf(out, "\nbeyond spread: |delta of means| > 2 x pooled sample standard "
		             "deviation of the repeats (doc/nightly.md)\n");
	dv_groups_free(&gb);
	dv_groups_free(&gc);
	return matched;
}
