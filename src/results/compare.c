/* compare: the side-by-side table of two studies, group by group, with the spread verdict. */
#include "config.h"

#include "results/compare.h"

#include "results/connfig.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
		dv_series_t ab = dv_group_series(b, m), ac = dv_group_series(c, m);

		/* The study summary's rule (study/groups.h): Welch's t, latency floored. */
		dv_diff_t dd = dv_diff_welch(&ab, &ac, dv_metric_floor(m, ab.mean),
		                             dv_metric_floor(m, ac.mean));
		switch (dd.verdict) {
		case DV_DIFF_SIGNIFICANT:
			sig = "YES";
			break;
		case DV_DIFF_NOISE:
			sig = "no";
			break;
		default:
			sig = "n/a (< 3 repeats: needs --repeat 3)";
			break;
		}
		fprintf(out, "  %-9s %14s %14s %14s %9s  %s\n", dv_metric_label(m), sb, sc, sd, sr,
		        sig);
	}
}

/* Capacity studies: the capacity row (mean over the repeats; ">=" a lower bound), with the
 * same spread rule as the other figures (qps: no floor). */
static void print_capacity_row(const dv_group_t *b, const dv_group_t *c, FILE *out)
{
	bool lb, lc;
	dv_series_t sb = dv_group_capacity(b, &lb), sc = dv_group_capacity(c, &lc);
	char vb[40], vc[40], rel[32];
	dv_diff_t dd;

	if (sb.n == 0 && sc.n == 0)
		return;
	snprintf(vb, sizeof(vb), sb.n ? "%s%.1f" : "-", lb ? ">=" : "", sb.mean);
	snprintf(vc, sizeof(vc), sc.n ? "%s%.1f" : "-", lc ? ">=" : "", sc.mean);
	if (sb.n && sc.n && sb.mean > 0)
		snprintf(rel, sizeof(rel), "%+.2f%%", 100.0 * (sc.mean - sb.mean) / sb.mean);
	else
		snprintf(rel, sizeof(rel), "n/a");
	dd = dv_diff_welch(&sb, &sc, 0, 0);
	fprintf(out, "  %-9s %14s %14s %+14.1f %9s  %s\n", "capacity", vb, vc,
	        sb.n && sc.n ? sc.mean - sb.mean : 0.0, rel,
	        lb || lc                            ? "n/a (a lower bound: generator-bound or --to)"
	        : dd.verdict == DV_DIFF_SIGNIFICANT ? "YES"
	        : dd.verdict == DV_DIFF_NOISE       ? "no"
	                                            : "n/a (< 3 repeats: needs --repeat 3)");
}

/* The verdict column of the study summary's rule (study/groups.h). */
static const char *sig_text(dv_diff_verdict_t v)
{
	switch (v) {
	case DV_DIFF_SIGNIFICANT:
		return "YES";
	case DV_DIFF_NOISE:
		return "no";
	default:
		return "n/a (< 3 repeats: needs --repeat 3)";
	}
}

/*
 * Stream transports: connect p99, handshake p99, connections failed and reset, resumed
 * share (connfig.h), mean over the repeats that have the figure, with the same spread rule
 * (latency floored at the bucket width, counts and shares not).
 */
static void print_conn_rows(const dv_group_t *b, const dv_group_t *c, FILE *out)
{
	static const dv_conn_fig_t shown[] = {DV_CF_CONNECT_P99_MS, DV_CF_HANDSHAKE_P99_MS,
	                                      DV_CF_CONN_FAILED, DV_CF_CONN_RESET,
	                                      DV_CF_RESUMED_PCT};

	for (size_t i = 0; i < DV_ARRAY_SIZE(shown); i++) {
		dv_conn_fig_t f = shown[i];
		dv_series_t sb = dv_group_conn_series(b, f), sc = dv_group_conn_series(c, f);
		const char *fmt = dv_conn_fig_is_latency(f) ? "%.4f"
		                  : f == DV_CF_RESUMED_PCT  ? "%.2f"
		                                            : "%.1f";
		char vb[32] = "-", vc[32] = "-", vd[32] = "-", rel[32] = "n/a";
		const char *sig = "n/a (no such figure on a side)";

		if (sb.n > 0)
			snprintf(vb, sizeof(vb), fmt, sb.mean);
		if (sc.n > 0)
			snprintf(vc, sizeof(vc), fmt, sc.mean);
		if (sb.n > 0 && sc.n > 0) {
			char pf[8];
			snprintf(pf, sizeof(pf), "%%+%s", fmt + 1);
			snprintf(vd, sizeof(vd), pf, sc.mean - sb.mean);
			if (sb.mean != 0)
				snprintf(rel, sizeof(rel), "%+.2f%%",
				         100.0 * (sc.mean - sb.mean) / fabs(sb.mean));
			sig = sig_text(dv_diff_welch(&sb, &sc, dv_conn_fig_floor(f, sb.mean),
			                             dv_conn_fig_floor(f, sc.mean))
			                   .verdict);
		}
		fprintf(out, "  %-16s %7s %14s %14s %9s  %s\n", dv_conn_fig_label(f), vb, vc, vd,
		        rel, sig);
	}
}

size_t dv_compare_print(const dv_study_t *base, const char *base_name, const dv_study_t *cur,
                        const char *cur_name, FILE *out)
{
	dv_groups_t gb = {0}, gc = {0};
	size_t matched = 0;
	char name[512];

	if (dv_groups_build(base, DV_GROUP_BY_KIND, &gb) != 0 ||
	    dv_groups_build(cur, DV_GROUP_BY_KIND, &gc) != 0) {
		dv_groups_free(&gb);
		dv_groups_free(&gc);
		fprintf(out, "compare: out of memory\n");
		return 0;
	}
	bool conns = dv_study_has_conns(base) || dv_study_has_conns(cur);

	fprintf(out, "Comparison: base %s, new %s\n", base_name, cur_name);
	if (conns || base->run.stream != cur->run.stream ||
	    (base->run.stream && base->run.tp.kind != cur->run.tp.kind))
		fprintf(out, "Transport: base %s, new %s\n", dv_study_transport(base),
		        dv_study_transport(cur));
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
		print_capacity_row(b, c, out);
		if (conns)
			print_conn_rows(b, c, out);
	}
	for (size_t i = 0; i < gb.n; i++)
		if (dv_groups_find(&gc, &gb.g[i]) == NULL)
			fprintf(out, "\n%s: only in %s\n",
			        dv_group_name(&gb.g[i], name, sizeof(name)), base_name);
	if (gb.left_out > 0 || gc.left_out > 0)
		fprintf(out, "\ninterrupted passes left out: %zu in %s, %zu in %s\n", gb.left_out,
		        base_name, gc.left_out, cur_name);
	if (gb.n > 0 || gc.n > 0)
		fprintf(out, "\nbeyond spread: Welch's 95%% confidence interval of the delta "
		             "excludes 0 (3 repeats or more a side; latency spread floored at the "
		             "histogram's bucket width; doc/methodology.md)\n");
	dv_groups_free(&gb);
	dv_groups_free(&gc);
	return matched;
}
