/* summary: a study's comparison table and its summary (mean, spread, hot/cold, change) as text. */
#include "config.h"

#include "study/summary.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/groups.h"

/* ---------------------------------------------------------------- text grids */

typedef struct grid {
	char **cell; /* rows * cols, owned strings (NULL = empty) */
	size_t rows, cols;
	size_t left; /* the first `left` columns are left-aligned, the rest right-aligned */
} grid_t;

static int grid_init(grid_t *g, size_t rows, size_t cols, size_t left)
{
	g->rows = rows;
	g->cols = cols;
	g->left = left;
	g->cell = calloc((rows * cols) != 0 ? rows * cols : 1, sizeof(char *));
	return g->cell != NULL ? 0 : -ENOMEM;
}

static void grid_set(grid_t *g, size_t r, size_t c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void grid_set(grid_t *g, size_t r, size_t c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	free(g->cell[r * g->cols + c]);
	g->cell[r * g->cols + c] = s;
}

static void grid_print(const grid_t *g, FILE *out)
{
	size_t *w = calloc(g->cols ? g->cols : 1, sizeof(size_t));

	if (w == NULL)
		return;
	for (size_t r = 0; r < g->rows; r++)
		for (size_t c = 0; c < g->cols; c++) {
			const char *s = g->cell[r * g->cols + c];
			if (s != NULL && strlen(s) > w[c])
				w[c] = strlen(s);
		}
	for (size_t r = 0; r < g->rows; r++) {
		size_t pending = 0; /* spaces owed before the next non-empty text */
		for (size_t c = 0; c < g->cols; c++) {
			const char *s = g->cell[r * g->cols + c];
			size_t len = s ? strlen(s) : 0;
			if (c > 0)
				pending += 2;
			if (c < g->left) {
				if (len > 0) {
					fprintf(out, "%*s%s", (int)pending, "", s);
					pending = 0;
				}
				pending += w[c] - len;
			} else {
				pending += w[c] - len;
				if (len > 0) {
					fprintf(out, "%*s%s", (int)pending, "", s);
					pending = 0;
				}
			}
		}
		fputc('\n', out);
	}
	free(w);
}

static void grid_free(grid_t *g)
{
	if (g->cell != NULL)
		for (size_t i = 0; i < g->rows * g->cols; i++)
			free(g->cell[i]);
	free(g->cell);
	g->cell = NULL;
}

/* ---------------------------------------------------------------- table */

/*
 * The plan as seen by the table: the kinds in order. Column names get a number
 * when a kind appears more than once ("hot", "hot2").
 */
static void plan_of(const dv_study_t *s, const dv_pass_kind_t **plan, size_t *n)
{
	static const dv_pass_kind_t plain = DV_PASS_PLAIN;
	*plan = s->n_plan ? s->plan : &plain;
	*n = s->n_plan ? s->n_plan : 1;
}

static void plan_col_name(const dv_pass_kind_t *plan, size_t j, char *buf, size_t cap)
{
	unsigned same = 0, before = 0;
	for (size_t i = 0; plan != NULL; i++) {
		if (plan[i] == plan[j]) {
			same++;
			if (i < j)
				before++;
		}
		if (i == j)
			break;
	}
	(void)same;
	if (before == 0)
		snprintf(buf, cap, "%s", dv_pass_kind_name(plan[j]));
	else
		snprintf(buf, cap, "%s%u", dv_pass_kind_name(plan[j]), before + 1);
}

/*
 * Index the reported passes: idx[((t * n_lists + l) * reps + r) * n_plan + j] is the
 * record of target t, list l, repeat r, plan position j, or SIZE_MAX. Position j
 * is the record's rank among the records of the same (t, l, r), in the order run.
 */
static size_t *index_passes(const dv_study_t *s, size_t n_plan, unsigned reps)
{
	size_t n = s->n_targets * s->n_lists * reps * n_plan;
	size_t *idx = malloc((n ? n : 1) * sizeof(size_t));

	if (idx == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		idx[i] = SIZE_MAX;
	for (size_t p = 0; p < s->n_passes; p++) {
		const dv_pass_record_t *rec = &s->passes[p];
		if (rec->kind == DV_PASS_WARMUP || rec->target >= s->n_targets ||
		    rec->list >= s->n_lists || rec->repeat >= reps)
			continue;
		size_t base =
		    ((rec->target * s->n_lists + rec->list) * reps + rec->repeat) * n_plan;
		for (size_t j = 0; j < n_plan; j++) {
			if (idx[base + j] == SIZE_MAX) {
				idx[base + j] = p;
				break;
			}
		}
	}
	return idx;
}

static unsigned study_reps(const dv_study_t *s)
{
	unsigned reps = s->repeat ? s->repeat : 1;
	/* A file may hold repeats beyond what the plan says (never from dv_study_run). */
	for (size_t p = 0; p < s->n_passes; p++)
		if (s->passes[p].repeat + 1 > reps && s->passes[p].repeat < 100000)
			reps = s->passes[p].repeat + 1;
	return reps;
}

void dv_study_print_table(const dv_study_t *s, FILE *out)
{
	const dv_pass_kind_t *plan;
	size_t n_plan;
	unsigned reps = study_reps(s);
	bool any_interrupted = false;
	grid_t g;

	plan_of(s, &plan, &n_plan);
	size_t *idx = index_passes(s, n_plan, reps);
	if (idx == NULL ||
	    grid_init(&g, 1 + s->n_targets * s->n_lists, 2 + reps * n_plan, 2) != 0) {
		free(idx);
		return;
	}
	grid_set(&g, 0, 0, "Target");
	grid_set(&g, 0, 1, "List");
	for (unsigned r = 0; r < reps; r++)
		for (size_t j = 0; j < n_plan; j++) {
			char name[32];
			plan_col_name(plan, j, name, sizeof(name));
			grid_set(&g, 0, 2 + r * n_plan + j, "Run%u %s", r + 1, name);
		}
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++) {
			size_t row = 1 + t * s->n_lists + l;
			grid_set(&g, row, 0, "%s", s->targets[t].label ? s->targets[t].label : "?");
			grid_set(&g, row, 1, "%s", s->lists[l].label ? s->lists[l].label : "?");
			for (unsigned r = 0; r < reps; r++)
				for (size_t j = 0; j < n_plan; j++) {
					size_t p =
					    idx[((t * s->n_lists + l) * reps + r) * n_plan + j];
					size_t col = 2 + r * n_plan + j;
					if (p == SIZE_MAX) {
						grid_set(&g, row, col, "-");
						continue;
					}
					const dv_pass_result_t *res = &s->passes[p].res;
					any_interrupted |= res->interrupted;
					grid_set(&g, row, col, "%.0f (lost%llu)%s", res->qps,
					         (unsigned long long)res->stats.c.lost,
					         res->interrupted ? "*" : "");
				}
		}
	fprintf(out, "\nComparison table (queries per second, lost queries in brackets):\n");
	grid_print(&g, out);
	if (any_interrupted)
		fprintf(out, "* interrupted pass: partial figures\n");
	if (s->failed)
		fprintf(out, "The study stopped early: %s\n", s->fail_msg);
	else if (s->interrupted)
		fprintf(out, "The study was interrupted; '-' marks passes not run.\n");
	grid_free(&g);
	free(idx);
}

/* ---------------------------------------------------------------- summary */

enum { M_QPS = 0, M_P50, M_P99, M_COUNT };

/* The occurrence of plan[j]'s kind at position j (0 = first): "hot2" is 1. */
static unsigned plan_nth(const dv_pass_kind_t *plan, size_t j)
{
	unsigned nth = 0;
	for (size_t i = 0; i < j; i++)
		nth += plan[i] == plan[j];
	return nth;
}

/* The three series of one (target, list, plan position) over the repeats (study/groups.h). */
static void cell_series(const dv_groups_t *gs, const dv_pass_kind_t *plan, size_t t, size_t l,
                        size_t j, dv_series_t out[M_COUNT])
{
	const dv_group_t *g = dv_groups_at(gs, t, l, plan[j], plan_nth(plan, j));

	out[M_QPS] = dv_group_series(g, DV_M_QPS);
	out[M_P50] = dv_group_series(g, DV_M_P50_MS);
	out[M_P99] = dv_group_series(g, DV_M_P99_MS);
}

static void fmt_series(char *buf, size_t cap, const dv_series_t *st, double scale, int decimals)
{
	if (st->n == 0)
		snprintf(buf, cap, "-");
	else if (st->n == 1)
		snprintf(buf, cap, "%.*f", decimals, st->mean / scale);
	else
		snprintf(buf, cap, "%.*f +- %.*f (%.*f..%.*f)", decimals, st->mean / scale,
		         decimals, st->sd / scale, decimals, st->min / scale, decimals,
		         st->max / scale);
}

/*
 * The change of b against a (the first target), documented in doc/methodology.md:
 * delta = (mean_b - mean_a) / mean_a; significance by the spread rule of
 * study/groups.h (the one compare uses).
 */
static void fmt_change(char *buf, size_t cap, const dv_series_t *a, const dv_series_t *b)
{
	if (a->n == 0 || b->n == 0) {
		snprintf(buf, cap, "-");
		return;
	}
	double diff = b->mean - a->mean;
	char pct[32];
	if (a->mean != 0)
		snprintf(pct, sizeof(pct), "%+.1f%%", 100.0 * diff / a->mean);
	else
		snprintf(pct, sizeof(pct), "%s", diff == 0 ? "+0.0%" : "n/a");
	if (dv_spread_significant(a, b) < 0) {
		snprintf(buf, cap, "%s (one repeat: spread unknown)", pct);
		return;
	}
	snprintf(buf, cap, "%s (%s)", pct,
	         dv_spread_significant(a, b) ? "significant" : "within noise");
}

void dv_study_print_summary(const dv_study_t *s, FILE *out)
{
	const dv_pass_kind_t *plan;
	size_t n_plan, n_rows = s->n_targets * s->n_lists;
	dv_series_t *ser = NULL; /* [(t * n_lists + l) * n_plan + j][M_COUNT] */
	dv_groups_t gs = {0};
	grid_t g = {0};
	char a[160], b[160], c[160];

	plan_of(s, &plan, &n_plan);
	ser = calloc(n_rows * n_plan * M_COUNT + 1, sizeof(dv_series_t));
	if (ser == NULL || dv_groups_build(s, DV_GROUP_BY_POSITION, &gs) != 0)
		goto out;
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < n_plan; j++)
				cell_series(&gs, plan, t, l, j,
				            &ser[((t * s->n_lists + l) * n_plan + j) * M_COUNT]);
#define SER(t, l, j) (&ser[(((t)*s->n_lists + (l)) * n_plan + (j)) * M_COUNT])

	fprintf(out, "\nSummary per target, list and pass (mean +- sample stddev (min..max) over "
	             "the repeats; latency in ms):\n");
	if (grid_init(&g, 1 + n_rows * n_plan, 7, 3) != 0)
		goto out;
	grid_set(&g, 0, 0, "Target");
	grid_set(&g, 0, 1, "List");
	grid_set(&g, 0, 2, "Pass");
	grid_set(&g, 0, 3, "N");
	grid_set(&g, 0, 4, "qps");
	grid_set(&g, 0, 5, "p50 ms");
	grid_set(&g, 0, 6, "p99 ms");
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < n_plan; j++) {
				size_t row = 1 + (t * s->n_lists + l) * n_plan + j;
				dv_series_t *m = SER(t, l, j);
				grid_set(&g, row, 0, "%s",
				         s->targets[t].label ? s->targets[t].label : "?");
				grid_set(&g, row, 1, "%s",
				         s->lists[l].label ? s->lists[l].label : "?");
				plan_col_name(plan, j, a, sizeof(a));
				grid_set(&g, row, 2, "%s", a);
				grid_set(&g, row, 3, "%zu", m[M_QPS].n);
				fmt_series(a, sizeof(a), &m[M_QPS], 1, 0);
				grid_set(&g, row, 4, "%s", a);
				fmt_series(a, sizeof(a), &m[M_P50], 1, 3);
				grid_set(&g, row, 5, "%s", a);
				fmt_series(a, sizeof(a), &m[M_P99], 1, 3);
				grid_set(&g, row, 6, "%s", a);
			}
	grid_print(&g, out);
	grid_free(&g);

	/* Hot/cold: the first hot position against the first cold position. */
	size_t jc = SIZE_MAX, jh = SIZE_MAX;
	for (size_t j = 0; j < n_plan; j++) {
		if (plan[j] == DV_PASS_COLD && jc == SIZE_MAX)
			jc = j;
		if (plan[j] == DV_PASS_HOT && jh == SIZE_MAX)
			jh = j;
	}
	if (jc != SIZE_MAX && jh != SIZE_MAX) {
		fprintf(out, "\nHot/cold ratio (mean hot qps / mean cold qps; mean cold p50 / mean "
		             "hot p50):\n");
		if (grid_init(&g, 1 + n_rows, 4, 2) != 0)
			goto out;
		grid_set(&g, 0, 0, "Target");
		grid_set(&g, 0, 1, "List");
		grid_set(&g, 0, 2, "qps hot/cold");
		grid_set(&g, 0, 3, "p50 cold/hot");
		for (size_t t = 0; t < s->n_targets; t++)
			for (size_t l = 0; l < s->n_lists; l++) {
				size_t row = 1 + t * s->n_lists + l;
				dv_series_t *mc = SER(t, l, jc), *mh = SER(t, l, jh);
				grid_set(&g, row, 0, "%s",
				         s->targets[t].label ? s->targets[t].label : "?");
				grid_set(&g, row, 1, "%s",
				         s->lists[l].label ? s->lists[l].label : "?");
				if (mc[M_QPS].n && mh[M_QPS].n && mc[M_QPS].mean > 0)
					grid_set(&g, row, 2, "%.2f",
					         mh[M_QPS].mean / mc[M_QPS].mean);
				else
					grid_set(&g, row, 2, "-");
				if (mc[M_P50].n && mh[M_P50].n && mh[M_P50].mean > 0)
					grid_set(&g, row, 3, "%.2f",
					         mc[M_P50].mean / mh[M_P50].mean);
				else
					grid_set(&g, row, 3, "-");
			}
		grid_print(&g, out);
		grid_free(&g);
	}

	if (s->n_targets > 1) {
		fprintf(out,
		        "\nChange against the first target, %s (significant: |difference of "
		        "means| > 2 x pooled sample stddev; see doc/methodology.md):\n",
		        s->targets[0].label ? s->targets[0].label : "?");
		if (grid_init(&g, 1 + (s->n_targets - 1) * s->n_lists * n_plan, 6, 6) != 0)
			goto out;
		grid_set(&g, 0, 0, "Target");
		grid_set(&g, 0, 1, "List");
		grid_set(&g, 0, 2, "Pass");
		grid_set(&g, 0, 3, "qps");
		grid_set(&g, 0, 4, "p50");
		grid_set(&g, 0, 5, "p99");
		for (size_t t = 1; t < s->n_targets; t++)
			for (size_t l = 0; l < s->n_lists; l++)
				for (size_t j = 0; j < n_plan; j++) {
					size_t row = 1 + ((t - 1) * s->n_lists + l) * n_plan + j;
					dv_series_t *m0 = SER(0, l, j), *m = SER(t, l, j);
					grid_set(&g, row, 0, "%s",
					         s->targets[t].label ? s->targets[t].label : "?");
					grid_set(&g, row, 1, "%s",
					         s->lists[l].label ? s->lists[l].label : "?");
					plan_col_name(plan, j, a, sizeof(a));
					grid_set(&g, row, 2, "%s", a);
					fmt_change(a, sizeof(a), &m0[M_QPS], &m[M_QPS]);
					fmt_change(b, sizeof(b), &m0[M_P50], &m[M_P50]);
					fmt_change(c, sizeof(c), &m0[M_P99], &m[M_P99]);
					grid_set(&g, row, 3, "%s", a);
					grid_set(&g, row, 4, "%s", b);
					grid_set(&g, row, 5, "%s", c);
				}
		grid_print(&g, out);
		grid_free(&g);
	}
#undef SER
out:
	grid_free(&g);
	dv_groups_free(&gs);
	free(ser);
}
