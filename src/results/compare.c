/* compare: the side-by-side table of two studies, group by group, with the spread verdict. */
#include "config.h"

#include "results/compare.h"

#include "results/connfig.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
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

/*
 * The verdict column, in the study summary's words: the direction ("better",
 * "worse", "same"), and with enough repeats whether Welch's interval excludes 0
 * ("significant") or not ("within noise"). Too few repeats: the direction only
 * (said once, above the groups).
 */
static void fmt_verdict(char *buf, size_t len, double diff, bool higher_better, dv_diff_verdict_t v)
{
	const char *dir = diff == 0 ? "same" : (diff > 0) == higher_better ? "better" : "worse";

	if (v == DV_DIFF_TOO_FEW || diff == 0)
		snprintf(buf, len, "%s", dir);
	else
		snprintf(buf, len, "%s, %s", dir,
		         v == DV_DIFF_SIGNIFICANT ? "significant" : "within noise");
}

/* Welch's verdict of a figure: latency on the log scale (a ratio), the others as they are. */
static dv_diff_verdict_t metric_verdict(const dv_group_t *b, const dv_group_t *c, dv_metric_t m)
{
	dv_series_t ab = dv_group_series(b, m), ac = dv_group_series(c, m);

	if (m >= DV_M_P50_MS && m <= DV_M_MEAN_MS) {
		dv_series_t lb = dv_group_log_series(b, m), lc = dv_group_log_series(c, m);
		return dv_diff_log(&lb, &lc,
		                   ab.mean > 0 ? dv_metric_floor(m, ab.mean) / ab.mean : 0,
		                   ac.mean > 0 ? dv_metric_floor(m, ac.mean) / ac.mean : 0)
		    .verdict;
	}
	return dv_diff_welch(&ab, &ac, dv_metric_floor(m, ab.mean), dv_metric_floor(m, ac.mean))
	    .verdict;
}

/* Why a group's qps gets no verdict, or NULL when both sides measured it. */
static const char *qps_no_verdict(const dv_study_t *bs, const dv_group_t *b, const dv_study_t *cs,
                                  const dv_group_t *c)
{
	dv_qps_status_t st = dv_group_qps_status(bs, b);

	if (st == DV_QPS_MEASURED)
		st = dv_group_qps_status(cs, c);
	switch (st) {
	case DV_QPS_OFFERED:
		return "no verdict: the rate was set (-Q), not measured";
	case DV_QPS_SHORT:
		return "no verdict: passes under 0.5 s are too short";
	case DV_QPS_FILL:
		return "no verdict: under 10 windows (-q) sent";
	default:
		return NULL;
	}
}

static void print_group_rows(const dv_study_t *bs, const dv_group_t *b, const dv_study_t *cs,
                             const dv_group_t *c, FILE *out)
{
	static const dv_metric_t shown[] = {DV_M_QPS, DV_M_LOST_PCT, DV_M_P50_MS, DV_M_P90_MS,
	                                    DV_M_P99_MS};

	fprintf(out, "  %-9s %14s %14s %14s %9s  %s\n", "metric", "base", "new", "delta", "delta %",
	        "verdict");
	for (size_t i = 0; i < DV_ARRAY_SIZE(shown); i++) {
		dv_metric_t m = shown[i];
		char sb[32], sc[32], sd[32], sr[32], verdict[64];
		const char *why = m == DV_M_QPS ? qps_no_verdict(bs, b, cs, c) : NULL;
		double d = c->mean[m] - b->mean[m];

		fmt_num(sb, sizeof(sb), m, b->mean[m], false);
		fmt_num(sc, sizeof(sc), m, c->mean[m], false);
		fmt_num(sd, sizeof(sd), m, d, true);
		if (b->mean[m] != 0)
			snprintf(sr, sizeof(sr), "%+.2f%%", 100.0 * d / fabs(b->mean[m]));
		else
			snprintf(sr, sizeof(sr), "n/a");
		/* The study summary's rule (study/groups.h): Welch's t, latency floored. */
		fmt_verdict(verdict, sizeof(verdict), d, dv_metric_higher_is_better(m),
		            metric_verdict(b, c, m));
		fprintf(out, "  %-9s %14s %14s %14s %9s  %s\n", dv_metric_label(m), sb, sc, sd, sr,
		        why != NULL ? why : verdict);
	}
}

/* Capacity studies: the capacity row (mean over the repeats; ">=" a lower bound), with the
 * same spread rule as the other figures (qps: no floor). */
static void print_capacity_row(const dv_group_t *b, const dv_group_t *c, FILE *out)
{
	bool lb, lc;
	dv_series_t sb = dv_group_capacity(b, &lb), sc = dv_group_capacity(c, &lc);
	char vb[40], vc[40], rel[32], verdict[64];

	if (sb.n == 0 && sc.n == 0)
		return;
	snprintf(vb, sizeof(vb), sb.n ? "%s%.1f" : "-", lb ? ">=" : "", sb.mean);
	snprintf(vc, sizeof(vc), sc.n ? "%s%.1f" : "-", lc ? ">=" : "", sc.mean);
	if (sb.n && sc.n && sb.mean > 0)
		snprintf(rel, sizeof(rel), "%+.2f%%", 100.0 * (sc.mean - sb.mean) / sb.mean);
	else
		snprintf(rel, sizeof(rel), "n/a");
	fmt_verdict(verdict, sizeof(verdict), sb.n && sc.n ? sc.mean - sb.mean : 0, true,
	            dv_diff_welch(&sb, &sc, 0, 0).verdict);
	fprintf(out, "  %-9s %14s %14s %+14.1f %9s  %s\n", "capacity", vb, vc,
	        sb.n && sc.n ? sc.mean - sb.mean : 0.0, rel,
	        lb || lc ? "no verdict: a lower bound (generator-bound or --to)" : verdict);
}

/*
 * One row of figures: the means of both sides (fmt), their difference and relative
 * difference, and the verdict of Welch's test with each side's floor; "-" and "n/a"
 * where a side has no such figure. Values end at column 24 whatever the label's length.
 */
static void print_fig_row(FILE *out, const char *label, const char *fmt, const dv_series_t *sb,
                          const dv_series_t *sc, bool higher_better, double floor_b, double floor_c)
{
	char vb[32] = "-", vc[32] = "-", vd[32] = "-", rel[32] = "n/a";
	char sig[64] = "n/a (no such figure on a side)";
	int pad = 24 - (int)strlen(label);

	if (sb->n > 0)
		snprintf(vb, sizeof(vb), fmt, sb->mean);
	if (sc->n > 0)
		snprintf(vc, sizeof(vc), fmt, sc->mean);
	if (sb->n > 0 && sc->n > 0) {
		char pf[8];
		snprintf(pf, sizeof(pf), "%%+%s", fmt + 1);
		snprintf(vd, sizeof(vd), pf, sc->mean - sb->mean);
		if (sb->mean != 0)
			snprintf(rel, sizeof(rel), "%+.2f%%",
			         100.0 * (sc->mean - sb->mean) / fabs(sb->mean));
		fmt_verdict(sig, sizeof(sig), sc->mean - sb->mean, higher_better,
		            dv_diff_welch(sb, sc, floor_b, floor_c).verdict);
	}
	fprintf(out, "  %s%*s %14s %14s %9s  %s\n", label, pad > 1 ? pad : 1, vb, vc, vd, rel, sig);
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

		print_fig_row(out, dv_conn_fig_label(f), fmt, &sb, &sc, f == DV_CF_RESUMED_PCT,
		              dv_conn_fig_floor(f, sb.mean), dv_conn_fig_floor(f, sc.mean));
	}
}

/*
 * The server's figures, when either side has them: CPU µs per answer, peak RSS (its
 * process), queries it counted and cache misses per query (its own counters), each the
 * mean over the repeats that have it, with the spread rule of the other rows (no floor).
 */
static void print_server_rows(const dv_group_t *b, const dv_group_t *c, FILE *out)
{
	static const char *const label[4] = {"server us/answer", "server peak RSS kB",
	                                     "server misses/query", "server queries"};
	static const int order[4] = {0, 1, 3, 2};

	for (size_t i = 0; i < 4; i++) {
		int w = order[i];
		dv_series_t sb = dv_group_server(b, w), sc = dv_group_server(c, w);

		if (sb.n > 0 || sc.n > 0)
			print_fig_row(out, label[w],
			              w == 2   ? "%.4f"
			              : w == 0 ? "%.3f"
			                       : "%.0f",
			              &sb, &sc, w == 3, 0, 0);
	}
}

/* The server version a study recorded for the target labelled label, or NULL. */
static const char *version_of(const dv_study_t *s, const char *label)
{
	for (size_t i = 0; i < s->n_targets; i++)
		if (s->targets[i].label != NULL && strcmp(s->targets[i].label, label) == 0)
			return s->targets[i].server_version;
	return NULL;
}

/* The list labelled label in s, or NULL. */
static const dv_list_t *list_of(const dv_study_t *s, const char *label)
{
	for (size_t i = 0; i < s->n_lists; i++)
		if (s->lists[i].label != NULL && strcmp(s->lists[i].label, label) == 0)
			return &s->lists[i];
	return NULL;
}

/*
 * Warnings when the two sides ran under different settings: a difference in
 * -Q, -c, -q or the transport changes what the figures mean; a list of the
 * same label with other contents, or another server version, changes what was
 * asked of whom (that may be the point of the comparison: said, not refused).
 */
static void print_setting_warnings(const dv_study_t *b, const dv_study_t *c, FILE *out)
{
	const dv_run_config_t *rb = &b->run, *rc = &c->run;

	if (rb->max_qps != rc->max_qps)
		fprintf(out, "Warning: -Q differs: base %.0f, new %.0f (0 = unlimited)\n",
		        rb->max_qps, rc->max_qps);
	if (rb->sockets != rc->sockets)
		fprintf(out, "Warning: -c differs: base %u, new %u\n", rb->sockets, rc->sockets);
	if (rb->max_outstanding != rc->max_outstanding)
		fprintf(out, "Warning: -q differs: base %u, new %u\n", rb->max_outstanding,
		        rc->max_outstanding);
	if (strcmp(dv_study_transport(b), dv_study_transport(c)) != 0)
		fprintf(out, "Warning: transport differs: base %s, new %s\n", dv_study_transport(b),
		        dv_study_transport(c));
	for (size_t i = 0; i < c->n_lists; i++) {
		const dv_list_t *lc = &c->lists[i], *lb;
		if (lc->label == NULL || (lb = list_of(b, lc->label)) == NULL)
			continue;
		if ((lb->sha256[0] && lc->sha256[0] && strcmp(lb->sha256, lc->sha256) != 0) ||
		    lb->queries != lc->queries)
			fprintf(
			    out,
			    "Warning: list %s differs: base %llu queries (sha256 %.12s), new %llu "
			    "(sha256 %.12s)\n",
			    lc->label, (unsigned long long)lb->queries,
			    lb->sha256[0] ? lb->sha256 : "-", (unsigned long long)lc->queries,
			    lc->sha256[0] ? lc->sha256 : "-");
	}
	for (size_t i = 0; i < c->n_targets; i++) {
		const char *vc = c->targets[i].server_version, *vb;
		if (c->targets[i].label == NULL || vc == NULL ||
		    (vb = version_of(b, c->targets[i].label)) == NULL || strcmp(vb, vc) == 0)
			continue;
		fprintf(out, "Note: target %s: server version differs: base \"%s\", new \"%s\"\n",
		        c->targets[i].label, vb, vc);
	}
}

/* Once, above the groups: too few repeats on a side for any verdict. */
static void print_repeats_note(const dv_groups_t *gb, const dv_groups_t *gc, FILE *out)
{
	size_t fewest_b = SIZE_MAX, fewest_c = SIZE_MAX;

	for (size_t i = 0; i < gb->n; i++)
		fewest_b = DV_MIN(fewest_b, gb->g[i].n);
	for (size_t i = 0; i < gc->n; i++)
		fewest_c = DV_MIN(fewest_c, gc->g[i].n);
	if (gb->n == 0 || gc->n == 0 || (fewest_b >= DV_DIFF_MIN_N && fewest_c >= DV_DIFF_MIN_N))
		return;
	fprintf(out,
	        "Too few repeats for a verdict (fewest: base %zu, new %zu; needs --repeat %d): "
	        "directions only where a side has fewer\n",
	        fewest_b, fewest_c, DV_DIFF_MIN_N);
}

/* A group whose repeats include passes that were not what their kind says, on its own line. */
static void print_contra_note(const dv_group_t *b, const dv_group_t *c, FILE *out)
{
	size_t nb = dv_group_cache_contradicts(b), nc = dv_group_cache_contradicts(c);

	if (nb + nc > 0)
		fprintf(out,
		        "  ! the server's cache counters contradict the pass kind in %zu of base's "
		        "and %zu of new's repeats (a cold pass with hits, a hot one with misses); "
		        "they are in the figures below\n",
		        nb, nc);
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
	print_setting_warnings(base, cur, out);
	print_repeats_note(&gb, &gc, out);
	for (size_t i = 0; i < gc.n; i++) {
		const dv_group_t *c = &gc.g[i], *b = dv_groups_find(&gb, c);

		dv_group_name(c, name, sizeof(name));
		if (b == NULL) {
			fprintf(out, "\n%s: only in %s\n", name, cur_name);
			continue;
		}
		matched++;
		fprintf(out, "\n%s (repeats: base %zu, new %zu)\n", name, b->n, c->n);
		print_contra_note(b, c, out);
		print_group_rows(base, b, cur, c, out);
		print_capacity_row(b, c, out);
		print_server_rows(b, c, out);
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
		fprintf(out,
		        "\nsignificant: Welch's 95%% confidence interval of the delta excludes 0 "
		        "(3 repeats or more a side; latency as a ratio, on the log scale, its "
		        "spread floored at the histogram's bucket width; doc/methodology.md)\n");
	dv_groups_free(&gb);
	dv_groups_free(&gc);
	return matched;
}
