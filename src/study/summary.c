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

/* What the summary's grids are built from: the plan and three series per cell. */
typedef struct summary {
	const dv_study_t *s;
	const dv_pass_kind_t *plan;
	size_t n_plan;
	dv_series_t *ser; /* [(t * n_lists + l) * n_plan + j][M_COUNT] */
} summary_t;

static dv_series_t *ser_at(const summary_t *sm, size_t t, size_t l, size_t j)
{
	return &sm->ser[((t * sm->s->n_lists + l) * sm->n_plan + j) * M_COUNT];
}

/* The three series of every (target, list, plan position), from the groups of study/groups.h. */
static int summary_init(summary_t *sm, const dv_study_t *s)
{
	size_t n_rows = s->n_targets * s->n_lists;
	dv_groups_t gs = {0};

	memset(sm, 0, sizeof(*sm));
	sm->s = s;
	plan_of(s, &sm->plan, &sm->n_plan);
	sm->ser = calloc(n_rows * sm->n_plan * M_COUNT + 1, sizeof(dv_series_t));
	if (sm->ser == NULL || dv_groups_build(s, DV_GROUP_BY_POSITION, &gs) != 0) {
		free(sm->ser);
		sm->ser = NULL;
		return -ENOMEM;
	}
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < sm->n_plan; j++) {
				const dv_group_t *g =
				    dv_groups_at(&gs, t, l, sm->plan[j], plan_nth(sm->plan, j));
				dv_series_t *m = ser_at(sm, t, l, j);
				m[M_QPS] = dv_group_series(g, DV_M_QPS);
				m[M_P50] = dv_group_series(g, DV_M_P50_MS);
				m[M_P99] = dv_group_series(g, DV_M_P99_MS);
			}
	dv_groups_free(&gs);
	return 0;
}

/* Fills the figure columns (from col) of the row of target t, list l, plan position j. */
typedef void (*row_fill_fn)(const summary_t *sm, size_t t, size_t l, size_t j, grid_t *g,
                            size_t row, size_t col);

/*
 * One grid with a row per target (from t0), list and plan position: Target,
 * List and Pass, then the columns heads[] filled by fill. The first `left`
 * columns are left-aligned.
 */
static void print_position_grid(const summary_t *sm, size_t t0, const char *const *heads,
                                size_t n_heads, size_t left, row_fill_fn fill, FILE *out)
{
	const dv_study_t *s = sm->s;
	size_t n_rows = (s->n_targets - t0) * s->n_lists * sm->n_plan;
	grid_t g;
	char name[32];

	if (grid_init(&g, 1 + n_rows, 3 + n_heads, left) != 0)
		return;
	grid_set(&g, 0, 0, "Target");
	grid_set(&g, 0, 1, "List");
	grid_set(&g, 0, 2, "Pass");
	for (size_t k = 0; k < n_heads; k++)
		grid_set(&g, 0, 3 + k, "%s", heads[k]);
	for (size_t t = t0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < sm->n_plan; j++) {
				size_t row = 1 + ((t - t0) * s->n_lists + l) * sm->n_plan + j;
				grid_set(&g, row, 0, "%s",
				         s->targets[t].label ? s->targets[t].label : "?");
				grid_set(&g, row, 1, "%s",
				         s->lists[l].label ? s->lists[l].label : "?");
				plan_col_name(sm->plan, j, name, sizeof(name));
				grid_set(&g, row, 2, "%s", name);
				fill(sm, t, l, j, &g, row, 3);
			}
	grid_print(&g, out);
	grid_free(&g);
}

/* Summary row: N, then qps, p50 and p99 as mean +- sd (min..max). */
static void fill_series(const summary_t *sm, size_t t, size_t l, size_t j, grid_t *g, size_t row,
                        size_t col)
{
	const dv_series_t *m = ser_at(sm, t, l, j);
	char a[160];

	grid_set(g, row, col, "%zu", m[M_QPS].n);
	fmt_series(a, sizeof(a), &m[M_QPS], 1, 0);
	grid_set(g, row, col + 1, "%s", a);
	fmt_series(a, sizeof(a), &m[M_P50], 1, 3);
	grid_set(g, row, col + 2, "%s", a);
	fmt_series(a, sizeof(a), &m[M_P99], 1, 3);
	grid_set(g, row, col + 3, "%s", a);
}

/* Change row: qps, p50 and p99 of target t against the first target. */
static void fill_change(const summary_t *sm, size_t t, size_t l, size_t j, grid_t *g, size_t row,
                        size_t col)
{
	const dv_series_t *m0 = ser_at(sm, 0, l, j), *m = ser_at(sm, t, l, j);
	char a[160];

	for (int k = 0; k < M_COUNT; k++) {
		fmt_change(a, sizeof(a), &m0[k], &m[k]);
		grid_set(g, row, col + (size_t)k, "%s", a);
	}
}

/* Hot/cold: the first hot position against the first cold position, per target and list. */
static void print_hot_cold(const summary_t *sm, FILE *out)
{
	const dv_study_t *s = sm->s;
	size_t jc = SIZE_MAX, jh = SIZE_MAX;
	grid_t g;

	for (size_t j = 0; j < sm->n_plan; j++) {
		if (sm->plan[j] == DV_PASS_COLD && jc == SIZE_MAX)
			jc = j;
		if (sm->plan[j] == DV_PASS_HOT && jh == SIZE_MAX)
			jh = j;
	}
	if (jc == SIZE_MAX || jh == SIZE_MAX)
		return;
	fprintf(out, "\nHot/cold ratio (mean hot qps / mean cold qps; mean cold p50 / mean "
	             "hot p50):\n");
	if (grid_init(&g, 1 + s->n_targets * s->n_lists, 4, 2) != 0)
		return;
	grid_set(&g, 0, 0, "Target");
	grid_set(&g, 0, 1, "List");
	grid_set(&g, 0, 2, "qps hot/cold");
	grid_set(&g, 0, 3, "p50 cold/hot");
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++) {
			size_t row = 1 + t * s->n_lists + l;
			const dv_series_t *mc = ser_at(sm, t, l, jc), *mh = ser_at(sm, t, l, jh);
			grid_set(&g, row, 0, "%s", s->targets[t].label ? s->targets[t].label : "?");
			grid_set(&g, row, 1, "%s", s->lists[l].label ? s->lists[l].label : "?");
			if (mc[M_QPS].n && mh[M_QPS].n && mc[M_QPS].mean > 0)
				grid_set(&g, row, 2, "%.2f", mh[M_QPS].mean / mc[M_QPS].mean);
			else
				grid_set(&g, row, 2, "-");
			if (mc[M_P50].n && mh[M_P50].n && mh[M_P50].mean > 0)
				grid_set(&g, row, 3, "%.2f", mc[M_P50].mean / mh[M_P50].mean);
			else
				grid_set(&g, row, 3, "-");
		}
	grid_print(&g, out);
	grid_free(&g);
}

void dv_study_print_summary(const dv_study_t *s, FILE *out)
{
	static const char *const series_heads[] = {"N", "qps", "p50 ms", "p99 ms"};
	static const char *const change_heads[] = {"qps", "p50", "p99"};
	summary_t sm;

	if (summary_init(&sm, s) != 0)
		return;
	fprintf(out, "\nSummary per target, list and pass (mean +- sample stddev (min..max) over "
	             "the repeats; latency in ms):\n");
	print_position_grid(&sm, 0, series_heads, DV_ARRAY_SIZE(series_heads), 3, fill_series, out);
	print_hot_cold(&sm, out);
	if (s->n_targets > 1) {
		fprintf(out,
		        "\nChange against the first target, %s (significant: |difference of "
		        "means| > 2 x pooled sample stddev; see doc/methodology.md):\n",
		        s->targets[0].label ? s->targets[0].label : "?");
		print_position_grid(&sm, 1, change_heads, DV_ARRAY_SIZE(change_heads), 6,
		                    fill_change, out);
	}
	free(sm.ser);
}
