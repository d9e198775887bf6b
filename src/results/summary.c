/* summary: a study's comparison table and its summary (mean, spread, hot/cold, change) as text. */
#include "config.h"

#include "results/summary.h"

#include <errno.h>
#include <math.h>
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

/* ---------------------------------------------------------------- labels */

#define LABEL_MAX 24 /* longer labels are shortened in tables, with a legend below */

/* label, or its first LABEL_MAX - 3 characters and "..." (marked in *shortened). */
static const char *short_label(const char *label, char *buf, size_t cap, bool *shortened)
{
	if (label == NULL)
		return "?";
	if (strlen(label) <= LABEL_MAX)
		return label;
	snprintf(buf, cap, "%.*s...", LABEL_MAX - 3, label);
	*shortened = true;
	return buf;
}

static void set_labels(grid_t *g, size_t row, const dv_study_t *s, size_t t, size_t l,
                       bool *shortened)
{
	char buf[LABEL_MAX + 1];

	grid_set(g, row, 0, "%s", short_label(s->targets[t].label, buf, sizeof(buf), shortened));
	grid_set(g, row, 1, "%s", short_label(s->lists[l].label, buf, sizeof(buf), shortened));
}

/* Under a grid with shortened labels: each shortened label and the label in full. */
static void print_legend(const dv_study_t *s, bool shortened, FILE *out)
{
	char buf[LABEL_MAX + 1];
	bool dummy = false;

	if (!shortened)
		return;
	for (size_t t = 0; t < s->n_targets; t++)
		if (s->targets[t].label != NULL && strlen(s->targets[t].label) > LABEL_MAX)
			fprintf(out, "  target %s = %s\n",
			        short_label(s->targets[t].label, buf, sizeof(buf), &dummy),
			        s->targets[t].label);
	for (size_t l = 0; l < s->n_lists; l++)
		if (s->lists[l].label != NULL && strlen(s->lists[l].label) > LABEL_MAX)
			fprintf(out, "  list %s = %s\n",
			        short_label(s->lists[l].label, buf, sizeof(buf), &dummy),
			        s->lists[l].label);
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
	unsigned before = 0;
	for (size_t i = 0; i < j; i++)
		before += plan[i] == plan[j];
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

/* "100%", "51.9%" (rounded down: a list not covered never shows 100%). */
static void fmt_coverage(char *buf, size_t cap, uint64_t asked, uint64_t size)
{
	if (size == 0)
		snprintf(buf, cap, "-");
	else if (asked >= size)
		snprintf(buf, cap, "100%%");
	else
		snprintf(buf, cap, "%.1f%%", floor(1000.0 * (double)asked / (double)size) / 10);
}

/* A table cell of pass p: "243633 (lost 0)"; the coverage table's "100% (3.4 runs)". */
typedef void (*cell_fn)(const dv_study_t *s, const dv_pass_record_t *p, grid_t *g, size_t row,
                        size_t col);

static void cell_qps(const dv_study_t *s, const dv_pass_record_t *p, grid_t *g, size_t row,
                     size_t col)
{
	dv_qps_status_t st = dv_pass_qps_status(s, p);

	const char *mark = p->res.interrupted ? "*" : dv_pass_cache_contradicts(p) ? "!" : "";

	if (st == DV_QPS_SHORT || st == DV_QPS_FILL)
		grid_set(g, row, col, "%s (lost %llu)%s", dv_qps_status_word(st),
		         (unsigned long long)p->res.stats.c.lost, mark);
	else
		grid_set(g, row, col, "%.0f (lost %llu)%s", p->res.qps,
		         (unsigned long long)p->res.stats.c.lost, mark);
}

/*
 * --server-table: the qps cell and the server's CPU per answer, "243633 (lost 0), 12.3 us";
 * "-" in its place when the server was not measured in that pass.
 */
static void cell_qps_server(const dv_study_t *s, const dv_pass_record_t *p, grid_t *g, size_t row,
                            size_t col)
{
	const dv_server_cost_t *sv = &p->res.server;
	char *qps;

	cell_qps(s, p, g, row, col);
	qps = g->cell[row * g->cols + col];
	g->cell[row * g->cols + col] = NULL;
	if (sv->measured && sv->ok && sv->proc && sv->answers > 0)
		grid_set(g, row, col, "%s, %.1f us", qps ? qps : "?", dv_server_us_per_answer(sv));
	else
		grid_set(g, row, col, "%s, -", qps ? qps : "?");
	free(qps);
}

/* Which statuses the reported passes' qps have (bit 1 << dv_qps_status_t). */
static unsigned qps_statuses(const dv_study_t *s)
{
	unsigned bits = 0;

	for (size_t i = 0; i < s->n_passes; i++)
		if (dv_pass_is_sample(&s->passes[i]))
			bits |= 1u << dv_pass_qps_status(s, &s->passes[i]);
	return bits;
}

/* What the qps of a table or summary is when it is not a measured throughput (once). */
static void print_qps_notes(const dv_study_t *s, FILE *out)
{
	unsigned bits = qps_statuses(s);

	if (bits & (1u << DV_QPS_OFFERED))
		fprintf(out, "qps: the rate was set (-Q, a replayed schedule or a capacity step), "
		             "so it is the offered rate, not a measurement: no qps verdicts\n");
	if (bits & (1u << DV_QPS_SHORT))
		fprintf(out,
		        "too short: the pass ran under %.1f s, too short for a throughput figure "
		        "(latency and loss still count); use a longer list or --hot-time "
		        "(doc/methodology.md)\n",
		        DV_QPS_MIN_RUN_S);
	if (bits & (1u << DV_QPS_FILL))
		fprintf(
		    out,
		    "window fill: the pass sent under %d windows (-q) of queries, so filling and "
		    "draining the window dominate it: no throughput figure; use a longer list "
		    "or --hot-time (doc/methodology.md)\n",
		    DV_QPS_MIN_WINDOWS);
}

static void cell_coverage(const dv_study_t *s, const dv_pass_record_t *p, grid_t *g, size_t row,
                          size_t col)
{
	uint64_t size = s->lists[p->list].queries, sent = p->res.stats.c.sent;
	char cov[32];

	fmt_coverage(cov, sizeof(cov), dv_pass_names_asked(p, size), size);
	if (p->kind == DV_PASS_COLD || size == 0 || sent <= size)
		grid_set(g, row, col, "%s%s", cov, p->res.interrupted ? "*" : "");
	else
		grid_set(g, row, col, "%s (%.1f runs)%s", cov, (double)sent / (double)size,
		         p->res.interrupted ? "*" : "");
}

/* A capacity search's cell: "20000", ">=16000" (a lower bound), "none", "-" (no search). */
static void cell_capacity(const dv_study_t *s, const dv_pass_record_t *p, grid_t *g, size_t row,
                          size_t col)
{
	const dv_capacity_figure_t *f = &p->cap;

	(void)s;
	if (!f->searched)
		grid_set(g, row, col, "-");
	else if (f->capacity_qps <= 0)
		grid_set(g, row, col, "none%s", f->generator_bound ? " (gen-bound)" : "");
	else
		grid_set(g, row, col, "%s%.0f%s%s", dv_capacity_is_lower_bound(f) ? ">=" : "",
		         f->capacity_qps, f->generator_bound ? " (gen-bound)" : "",
		         p->res.interrupted ? "*" : "");
}

static bool capacity_study(const dv_study_t *s)
{
	for (size_t i = 0; i < s->n_passes; i++)
		if (s->passes[i].cap.searched)
			return true;
	return false;
}

/* One grid: a row per target and list, a cell per repeat and plan position filled by cell. */
static bool print_pass_grid(const dv_study_t *s, cell_fn cell, FILE *out)
{
	const dv_pass_kind_t *plan;
	size_t n_plan;
	unsigned reps = study_reps(s);
	bool any_interrupted = false, shortened = false;
	grid_t g;

	plan_of(s, &plan, &n_plan);
	size_t *idx = index_passes(s, n_plan, reps);
	if (idx == NULL ||
	    grid_init(&g, 1 + s->n_targets * s->n_lists, 2 + reps * n_plan, 2) != 0) {
		free(idx);
		return false;
	}
	grid_set(&g, 0, 0, "Target");
	grid_set(&g, 0, 1, "List");
	for (unsigned r = 0; r < reps; r++)
		for (size_t j = 0; j < n_plan; j++) {
			char name[32];
			plan_col_name(plan, j, name, sizeof(name));
			grid_set(&g, 0, 2 + r * n_plan + j, "rep%u %s", r + 1, name);
		}
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++) {
			size_t row = 1 + t * s->n_lists + l;
			set_labels(&g, row, s, t, l, &shortened);
			for (unsigned r = 0; r < reps; r++)
				for (size_t j = 0; j < n_plan; j++) {
					size_t p =
					    idx[((t * s->n_lists + l) * reps + r) * n_plan + j];
					size_t col = 2 + r * n_plan + j;
					if (p == SIZE_MAX) {
						grid_set(&g, row, col, "-");
						continue;
					}
					any_interrupted |= s->passes[p].res.interrupted;
					cell(s, &s->passes[p], &g, row, col);
				}
		}
	grid_print(&g, out);
	print_legend(s, shortened, out);
	grid_free(&g);
	free(idx);
	return any_interrupted;
}

void dv_study_print_table(const dv_study_t *s, FILE *out)
{
	bool any_interrupted;

	if (capacity_study(s)) {
		fprintf(out, "\nCapacity table (highest offered qps within the SLO; >=: at least, "
		             "the generator or --to was the limit; repN = repeat N):\n");
		print_pass_grid(s, cell_capacity, out);
		fprintf(out, "\nAt capacity (the last passing step of each search):\n");
	}
	fprintf(out,
	        "\nComparison table (queries per second, lost queries in brackets%s; repN = "
	        "repeat N of --repeat):\n",
	        s->table_server ? ", then the server's CPU us per answer (user + system)" : "");
	any_interrupted = print_pass_grid(s, s->table_server ? cell_qps_server : cell_qps, out);
	fprintf(out, "\nCoverage (list entries asked / list size; runs through the list in "
	             "brackets):\n");
	print_pass_grid(s, cell_coverage, out);
	if (any_interrupted)
		fprintf(out, "* interrupted pass: partial figures\n");
	for (size_t i = 0; i < s->n_passes; i++)
		if (dv_pass_is_sample(&s->passes[i]) && dv_pass_cache_contradicts(&s->passes[i])) {
			fprintf(out,
			        "! the server's own cache counters (--server-stats) say the pass "
			        "was not what its column says: a cold pass with cache hits (check "
			        "--flush) or a hot pass with misses (the cache did not hold the "
			        "list); the pass's warning gives the counts\n");
			break;
		}
	print_qps_notes(s, out);
	if (s->failed)
		fprintf(out, "The study stopped early: %s\n", s->fail_msg);
	else if (s->interrupted)
		fprintf(out, "The study was interrupted; '-' marks passes not run.\n");
}

/* ---------------------------------------------------------------- summary */

enum { M_QPS = 0, M_P50, M_P99, M_LOST, M_COUNT };
static const dv_metric_t summary_metric[M_COUNT] = {DV_M_QPS, DV_M_P50_MS, DV_M_P99_MS,
                                                    DV_M_LOST_PCT};

/* The occurrence of plan[j]'s kind at position j (0 = first): "hot2" is 1. */
static unsigned plan_nth(const dv_pass_kind_t *plan, size_t j)
{
	unsigned nth = 0;
	for (size_t i = 0; i < j; i++)
		nth += plan[i] == plan[j];
	return nth;
}

/* "0%", "0.03%", "1.2%". */
static void fmt_pct(char *buf, size_t cap, double v)
{
	if (v == 0)
		snprintf(buf, cap, "0%%");
	else if (fabs(v) >= 1)
		snprintf(buf, cap, "%.1f%%", v);
	else
		snprintf(buf, cap, "%.2g%%", v);
}

/* mean +- sd (min..max); a latency spread under the histogram's resolution is "< width". */
static void fmt_series(char *buf, size_t cap, const dv_series_t *st, dv_metric_t m, int decimals)
{
	double res = dv_metric_floor(m, st->mean);

	if (st->n == 0)
		snprintf(buf, cap, "-");
	else if (st->n == 1)
		snprintf(buf, cap, "%.*f", decimals, st->mean);
	else if (st->sd < res)
		snprintf(buf, cap, "%.*f +- <%.*f (%.*f..%.*f)", decimals, st->mean, decimals, res,
		         decimals, st->min, decimals, st->max);
	else
		snprintf(buf, cap, "%.*f +- %.*f (%.*f..%.*f)", decimals, st->mean, decimals,
		         st->sd, decimals, st->min, decimals, st->max);
}

/* What the summary's grids are built from: the plan, the series and coverage per cell. */
typedef struct summary {
	const dv_study_t *s;
	const dv_pass_kind_t *plan;
	size_t n_plan;
	dv_series_t *ser;     /* [(t * n_lists + l) * n_plan + j][M_COUNT] */
	dv_series_t *lser;    /* the same, of ln x (latency changes are ratios: dv_diff_log) */
	dv_qps_status_t *qst; /* [(t * n_lists + l) * n_plan + j]: what its qps is */
	uint64_t *asked; /* [(t * n_lists + l) * n_plan + j]: fewest list entries a sample asked */
	size_t *contra;  /* the same: its samples the server's cache counters contradict */
	bool shortened;  /* a label was shortened */
	FILE *out;
} summary_t;

static size_t cell_at(const summary_t *sm, size_t t, size_t l, size_t j)
{
	return (t * sm->s->n_lists + l) * sm->n_plan + j;
}

static dv_series_t *ser_at(const summary_t *sm, size_t t, size_t l, size_t j)
{
	return &sm->ser[cell_at(sm, t, l, j) * M_COUNT];
}

static void summary_cell(summary_t *sm, const dv_groups_t *gs, size_t t, size_t l, size_t j)
{
	const dv_group_t *g = dv_groups_at(gs, t, l, sm->plan[j], plan_nth(sm->plan, j));
	dv_series_t *m = ser_at(sm, t, l, j), *lm = &sm->lser[cell_at(sm, t, l, j) * M_COUNT];
	uint64_t size = sm->s->lists[l].queries, fewest = size;

	for (int k = 0; k < M_COUNT; k++) {
		m[k] = dv_group_series(g, summary_metric[k]);
		lm[k] = dv_group_log_series(g, summary_metric[k]);
	}
	sm->qst[cell_at(sm, t, l, j)] = dv_group_qps_status(sm->s, g);
	for (size_t i = 0; g != NULL && i < g->n; i++)
		fewest = DV_MIN(fewest, dv_pass_names_asked(g->passes[i], size));
	sm->asked[cell_at(sm, t, l, j)] = fewest;
	sm->contra[cell_at(sm, t, l, j)] = dv_group_cache_contradicts(g);
}

static void summary_free(summary_t *sm)
{
	free(sm->ser);
	free(sm->lser);
	free(sm->qst);
	free(sm->asked);
	free(sm->contra);
	sm->ser = sm->lser = NULL;
	sm->qst = NULL;
	sm->asked = NULL;
	sm->contra = NULL;
}

/* The series of every (target, list, plan position), from the groups of study/groups.h. */
static int summary_init(summary_t *sm, const dv_study_t *s)
{
	size_t n_rows = s->n_targets * s->n_lists;
	dv_groups_t gs = {0};

	memset(sm, 0, sizeof(*sm));
	sm->s = s;
	plan_of(s, &sm->plan, &sm->n_plan);
	sm->ser = calloc(n_rows * sm->n_plan * M_COUNT + 1, sizeof(dv_series_t));
	sm->lser = calloc(n_rows * sm->n_plan * M_COUNT + 1, sizeof(dv_series_t));
	sm->qst = calloc(n_rows * sm->n_plan + 1, sizeof(dv_qps_status_t));
	sm->asked = calloc(n_rows * sm->n_plan + 1, sizeof(uint64_t));
	sm->contra = calloc(n_rows * sm->n_plan + 1, sizeof(size_t));
	if (sm->ser == NULL || sm->lser == NULL || sm->qst == NULL || sm->asked == NULL ||
	    sm->contra == NULL || dv_groups_build(s, DV_GROUP_BY_POSITION, &gs) != 0) {
		summary_free(sm);
		return -ENOMEM;
	}
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < sm->n_plan; j++)
				summary_cell(sm, &gs, t, l, j);
	dv_groups_free(&gs);
	return 0;
}

/* Summary row: N, coverage, then qps, p50 and p99 as mean +- sd (min..max), and loss. */
static void fill_series(const summary_t *sm, size_t t, size_t l, size_t j, grid_t *g, size_t row,
                        size_t col)
{
	const dv_series_t *m = ser_at(sm, t, l, j);
	char a[160];

	grid_set(g, row, col, "%zu", m[M_QPS].n);
	if (m[M_QPS].n > 0)
		fmt_coverage(a, sizeof(a), sm->asked[cell_at(sm, t, l, j)],
		             sm->s->lists[l].queries);
	else
		snprintf(a, sizeof(a), "-");
	grid_set(g, row, col + 1, "%s", a);
	dv_qps_status_t st = sm->qst[cell_at(sm, t, l, j)];
	if (m[M_QPS].n > 0 && (st == DV_QPS_SHORT || st == DV_QPS_FILL))
		snprintf(a, sizeof(a), "%s", dv_qps_status_word(st));
	else
		fmt_series(a, sizeof(a), &m[M_QPS], DV_M_QPS, 0);
	grid_set(g, row, col + 2, "%s", a);
	fmt_series(a, sizeof(a), &m[M_P50], DV_M_P50_MS, 3);
	grid_set(g, row, col + 3, "%s", a);
	fmt_series(a, sizeof(a), &m[M_P99], DV_M_P99_MS, 3);
	grid_set(g, row, col + 4, "%s", a);
	if (m[M_LOST].n > 0)
		fmt_pct(a, sizeof(a), m[M_LOST].mean);
	else
		snprintf(a, sizeof(a), "-");
	grid_set(g, row, col + 5, "%s", a);
}

static void print_series(summary_t *sm, FILE *out)
{
	static const char *const heads[] = {"N", "asked", "qps", "p50 ms", "p99 ms", "lost"};
	const dv_study_t *s = sm->s;
	size_t n_rows = s->n_targets * s->n_lists * sm->n_plan;
	grid_t g;
	char name[32];
	bool contra = false;

	if (grid_init(&g, 1 + n_rows, 3 + DV_ARRAY_SIZE(heads), 3) != 0)
		return;
	grid_set(&g, 0, 0, "Target");
	grid_set(&g, 0, 1, "List");
	grid_set(&g, 0, 2, "Pass");
	for (size_t k = 0; k < DV_ARRAY_SIZE(heads); k++)
		grid_set(&g, 0, 3 + k, "%s", heads[k]);
	for (size_t t = 0; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < sm->n_plan; j++) {
				size_t row = 1 + cell_at(sm, t, l, j);
				set_labels(&g, row, s, t, l, &sm->shortened);
				plan_col_name(sm->plan, j, name, sizeof(name));
				contra |= sm->contra[row - 1] > 0;
				grid_set(&g, row, 2, "%s%s", name, sm->contra[row - 1] ? "!" : "");
				fill_series(sm, t, l, j, &g, row, 3);
			}
	grid_print(&g, out);
	print_legend(s, sm->shortened, out);
	if (contra)
		fprintf(out,
		        "! the server's own cache counters contradict at least one repeat of "
		        "this pass, and its figures are in the row (the comparison table's '!' "
		        "cells say which)\n");
	grid_free(&g);
}

/* Hot/cold: the first hot position against the first cold position, per target and list. */
static void print_hot_cold(const summary_t *sm, FILE *out)
{
	const dv_study_t *s = sm->s;
	size_t jc = SIZE_MAX, jh = SIZE_MAX;
	bool shortened = false, any_contra = false;
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
	             "hot p50; - where a qps is not a measured throughput):\n");
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
			bool contra =
			    sm->contra[cell_at(sm, t, l, jc)] + sm->contra[cell_at(sm, t, l, jh)];
			const char *mark = contra ? "!" : "";
			any_contra |= contra;
			set_labels(&g, row, s, t, l, &shortened);
			if (mc[M_QPS].n && mh[M_QPS].n && mc[M_QPS].mean > 0 &&
			    sm->qst[cell_at(sm, t, l, jc)] == DV_QPS_MEASURED &&
			    sm->qst[cell_at(sm, t, l, jh)] == DV_QPS_MEASURED)
				grid_set(&g, row, 2, "%.2f%s", mh[M_QPS].mean / mc[M_QPS].mean,
				         mark);
			else
				grid_set(&g, row, 2, "-");
			if (mc[M_P50].n && mh[M_P50].n && mh[M_P50].mean > 0)
				grid_set(&g, row, 3, "%.2f%s", mc[M_P50].mean / mh[M_P50].mean,
				         mark);
			else
				grid_set(&g, row, 3, "-");
		}
	grid_print(&g, out);
	grid_free(&g);
	if (any_contra)
		fprintf(out, "! a ratio of means that include passes the server's cache counters "
		             "contradict (the rows above marked cold! or hot!)\n");
}

/* ---------------------------------------------------------------- change */

/* "+10.0%" of b against a, or the absolute difference when a is 0. */
static void fmt_rel(char *buf, size_t cap, double diff, double base, int decimals)
{
	if (base != 0)
		snprintf(buf, cap, "%+.1f%%", 100.0 * diff / base);
	else
		snprintf(buf, cap, "%+.*f", decimals, diff);
}

/* A change's side: its series, and for latency the series of ln x. */
typedef struct side {
	const dv_series_t *v, *lv;
} side_t;

/* Welch's interval of b against a: on the log scale for latency (a ratio), else as is. */
static dv_diff_t change_diff(dv_metric_t m, side_t a, side_t b)
{
	if (m >= DV_M_P50_MS && m <= DV_M_MEAN_MS)
		return dv_diff_log(a.lv, b.lv,
		                   a.v->mean > 0 ? dv_metric_floor(m, a.v->mean) / a.v->mean : 0,
		                   b.v->mean > 0 ? dv_metric_floor(m, b.v->mean) / b.v->mean : 0);
	return dv_diff_welch(a.v, b.v, dv_metric_floor(m, a.v->mean),
	                     dv_metric_floor(m, b.v->mean));
}

/* The interval's bounds as text: relative for latency and qps, points for loss. */
static void fmt_bounds(char *lo, char *hi, size_t cap, dv_metric_t m, const dv_diff_t *d,
                       double base)
{
	if (m >= DV_M_P50_MS && m <= DV_M_MEAN_MS) {
		snprintf(lo, cap, "%+.1f%%", 100.0 * d->lo);
		snprintf(hi, cap, "%+.1f%%", 100.0 * d->hi);
	} else if (m == DV_M_LOST_PCT || base == 0) {
		snprintf(lo, cap, "%+.3f", d->lo);
		snprintf(hi, cap, "%+.3f", d->hi);
	} else {
		fmt_rel(lo, cap, d->lo, base, 0);
		fmt_rel(hi, cap, d->hi, base, 0);
	}
}

/*
 * One figure's change line of b against a (doc/methodology.md): the difference,
 * its direction, and with enough repeats the verdict with its 95% interval
 * (latency: computed on the log scale, so bounded below by -100%).
 */
static void print_change(FILE *out, const char *name, dv_metric_t m, side_t a, side_t b,
                         bool note_few)
{
	dv_diff_t d = change_diff(m, a, b);
	double diff = b.v->mean - a.v->mean;
	bool higher = dv_metric_higher_is_better(m);
	const char *dir = diff == 0 ? "same" : (diff > 0) == higher ? "better" : "worse";
	int dec = m == DV_M_QPS ? 0 : 3;
	char sdiff[48], lo[48], hi[48], va[32], vb[32];

	if (m == DV_M_LOST_PCT) {
		fmt_pct(vb, sizeof(vb), b.v->mean);
		fmt_pct(va, sizeof(va), a.v->mean);
		snprintf(sdiff, sizeof(sdiff), "%s vs %s", vb, va);
	} else {
		fmt_rel(sdiff, sizeof(sdiff), diff, a.v->mean, dec);
	}
	fprintf(out, "    %-5s %-14s %s", name, sdiff, dir);
	if (d.verdict == DV_DIFF_TOO_FEW || fabs(diff) <= 1e-9 * fabs(a.v->mean)) {
		if (note_few && d.verdict == DV_DIFF_TOO_FEW)
			fprintf(out, " (no verdict: %zu and %zu repeats; needs --repeat %d)",
			        a.v->n, b.v->n, DV_DIFF_MIN_N);
		fputc('\n', out);
		return;
	}
	fmt_bounds(lo, hi, sizeof(lo), m, &d, a.v->mean);
	fprintf(out, ", %s (95%% CI %s .. %s%s)\n",
	        d.verdict == DV_DIFF_SIGNIFICANT ? "significant" : "within noise", lo, hi,
	        m == DV_M_LOST_PCT ? " points" : "");
}

/* The qps line when a side's qps is not a measured throughput: why, and no verdict. */
static bool print_qps_unmeasured(FILE *out, dv_qps_status_t a, dv_qps_status_t b)
{
	dv_qps_status_t st = a != DV_QPS_MEASURED ? a : b;

	switch (st) {
	case DV_QPS_OFFERED:
		fprintf(out, "    qps   -              no verdict: the rate was set (-Q), not "
		             "measured\n");
		return true;
	case DV_QPS_SHORT:
		fprintf(out,
		        "    qps   -              no verdict: passes under %.1f s are too short "
		        "(longer list or --hot-time)\n",
		        DV_QPS_MIN_RUN_S);
		return true;
	case DV_QPS_FILL:
		fprintf(out,
		        "    qps   -              no verdict: under %d windows (-q) sent, filling "
		        "the window dominates (longer list or --hot-time)\n",
		        DV_QPS_MIN_WINDOWS);
		return true;
	default:
		return false;
	}
}

/* The change lines of target t against the first, list l, plan position j. */
static void print_change_block(const summary_t *sm, size_t t, size_t l, size_t j, bool verdicts)
{
	static const char *const names[M_COUNT] = {"qps", "p50", "p99", "lost"};
	size_t c0 = cell_at(sm, 0, l, j), c = cell_at(sm, t, l, j);
	FILE *out = sm->out;

	for (int k = 0; k < M_COUNT; k++) {
		side_t a = {&sm->ser[c0 * M_COUNT + k], &sm->lser[c0 * M_COUNT + k]};
		side_t b = {&sm->ser[c * M_COUNT + k], &sm->lser[c * M_COUNT + k]};
		if (k == M_QPS && print_qps_unmeasured(out, sm->qst[c0], sm->qst[c]))
			continue;
		print_change(out, names[k], summary_metric[k], a, b, verdicts);
	}
}

/* The change of every other target against the first, per list and plan position. */
static void print_changes(const summary_t *sm, FILE *out)
{
	const dv_study_t *s = sm->s;
	unsigned reps = study_reps(s);
	char name[32];

	fprintf(out,
	        "\nChange against the first target, %s (mean of the other minus its mean; with "
	        "%d repeats or more, Welch's 95%% confidence interval and whether it excludes "
	        "0; latency on the log scale; see doc/methodology.md):\n",
	        s->targets[0].label ? s->targets[0].label : "?", DV_DIFF_MIN_N);
	if (reps == 1)
		fprintf(out, "  (one repeat: spread unknown; no verdicts, needs --repeat %d)\n",
		        DV_DIFF_MIN_N);
	else if (reps < DV_DIFF_MIN_N)
		fprintf(out, "  (%u repeats: too few for a verdict, needs --repeat %d)\n", reps,
		        DV_DIFF_MIN_N);
	for (size_t t = 1; t < s->n_targets; t++)
		for (size_t l = 0; l < s->n_lists; l++)
			for (size_t j = 0; j < sm->n_plan; j++) {
				const dv_series_t *m0 = ser_at(sm, 0, l, j),
				                  *m = ser_at(sm, t, l, j);
				plan_col_name(sm->plan, j, name, sizeof(name));
				fprintf(out, "  %s vs %s, list %s, %s%s:", s->targets[t].label,
				        s->targets[0].label, s->lists[l].label, name,
				        sm->contra[cell_at(sm, 0, l, j)] +
				                sm->contra[cell_at(sm, t, l, j)]
				            ? " (! passes the server's cache counters contradict "
				              "are in it)"
				            : "");
				if (m0[M_QPS].n == 0 || m[M_QPS].n == 0) {
					fprintf(out, " - (not measured)\n");
					continue;
				}
				fputc('\n', out);
				print_change_block(sm, t, l, j, reps >= DV_DIFF_MIN_N);
			}
}

/* Capacity studies: a line per target/list/kind with the capacity over the repeats. */
static void print_capacity(const dv_study_t *s, FILE *out)
{
	dv_groups_t gs;
	char name[320];

	if (!capacity_study(s) || dv_groups_build(s, DV_GROUP_BY_KIND, &gs) != 0)
		return;
	fprintf(out, "\nCapacity per target, list and pass (qps; mean +- sample stddev "
	             "(min..max) over the repeats; spread = (max - min) / mean):\n");
	for (size_t i = 0; i < gs.n; i++) {
		bool lower;
		dv_series_t st = dv_group_capacity(&gs.g[i], &lower);
		if (st.n == 0)
			continue;
		fprintf(out, "  %-32s %s%.0f +- %.0f (%.0f..%.0f), spread %.1f%%, %zu search%s%s\n",
		        dv_group_name(&gs.g[i], name, sizeof(name)), lower ? ">=" : "", st.mean,
		        st.sd, st.min, st.max,
		        st.mean > 0 ? 100 * (st.max - st.min) / st.mean : 0.0, st.n,
		        st.n == 1 ? "" : "es",
		        lower ? " (at least: a search was generator-bound or reached --to)" : "");
	}
	dv_groups_free(&gs);
}

void dv_study_print_summary(const dv_study_t *s, FILE *out)
{
	summary_t sm;

	print_capacity(s, out);
	if (summary_init(&sm, s) != 0)
		return;
	sm.out = out;
	fprintf(out, "\nSummary per target, list and pass (mean +- sample stddev (min..max) over "
	             "the repeats; latency in ms; asked: list entries asked / list size, the "
	             "fewest of the repeats; lost: mean lost %%):\n");
	print_series(&sm, out);
	print_hot_cold(&sm, out);
	if (s->n_targets > 1)
		print_changes(&sm, out);
	summary_free(&sm);
}
