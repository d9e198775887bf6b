/* plot: data files + gnuplot scripts into a directory, gnuplot run on each, index.html over them
 * all. */
#include "config.h"

#include "results/plot.h"

#include "results/summary.h"

#include "base/atomicfile.h"
#include "base/escape.h"
#include "results/connfig.h"
#include "results/gnuplot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHARTS 9

typedef struct chart {
	char name[32]; /* file stem: NAME.gp, NAME.png, NAME.svg */
	char title[128];
	bool made;
	int width, height; /* pixels; 0: 960 x 560 */
	char note[256];    /* why it was not drawn */
} chart_t;

typedef struct plot_ctx {
	const char *dir;
	const char *gnuplot;
	dv_err_t *err;
	chart_t charts[MAX_CHARTS];
	size_t n_charts;
	const char *transport; /* a results file's: "udp", "tcp"...; shown in every title */
} plot_ctx_t;

static int out_open(plot_ctx_t *p, const char *name, dv_atomicfile_t *f)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->dir, name) >= sizeof(path))
		return dv_err_set(p->err, -ENAMETOOLONG, "%s: name too long", p->dir);
	return dv_atomicfile_open(f, path, false, p->err);
}

/* A gnuplot single-quoted string: no escapes but '' for a quote; control characters dropped. */
static void gp_str(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; s && *s; s++) {
		if (*s == '\'')
			fputs("''", fp);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, fp);
	}
	fputc('\'', fp);
}

/* A label as one double-quoted column of a gnuplot data file. */
static void dat_label(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++)
		fputc(*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 ? '_' : *s, fp);
	fputc('"', fp);
}

/* " [dot]": the transport at the end of a results file's chart titles (once). */
static void title_transport(const plot_ctx_t *p, chart_t *c)
{
	char tail[24];
	size_t n = strlen(c->title), k;

	if (p->transport == NULL)
		return;
	k = (size_t)snprintf(tail, sizeof(tail), " [%s]", p->transport);
	if (n >= k && strcmp(c->title + n - k, tail) == 0)
		return;
	snprintf(c->title + n, sizeof(c->title) - n, "%s", tail);
}

static chart_t *chart_new(plot_ctx_t *p, const char *name, const char *title)
{
	chart_t *c = &p->charts[p->n_charts++];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->title, sizeof(c->title), "%s", title);
	title_transport(p, c);
	return c;
}

/* First lines of every script: the title, a grid, the legend under the chart. */
static void gp_begin(FILE *fp, const chart_t *c)
{
	fprintf(fp, "# %s: written by dnsvolley plot; run with: gnuplot %s.gp\n", c->title,
	        c->name);
	fputs("set title ", fp);
	gp_str(fp, c->title);
	/* The legend under the chart, in columns: the plot keeps the width. */
	fputs("\nset grid\nset key below horizontal reverse Left samplen 3 width 2 height 1\n", fp);
}

/*
 * The terminal of one image: PNG (cairo when this gnuplot has it) or SVG, no
 * enhanced text, the chart's size. The body is drawn once per image (a multiplot
 * cannot be replotted).
 */
static void gp_term(FILE *fp, const chart_t *c, bool svg)
{
	int w = c->width ? c->width : 960, h = c->height ? c->height : 560;

	if (svg)
		fprintf(fp, "set terminal svg size %d,%d noenhanced\nset output '%s.svg'\n", w, h,
		        c->name);
	else
		fprintf(fp,
		        "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		        "\tset terminal pngcairo size %d,%d noenhanced\n"
		        "} else {\n"
		        "\tset terminal png size %d,%d noenhanced\n"
		        "}\nset output '%s.png'\n",
		        w, h, w, h, c->name);
}

/* Run gnuplot NAME.gp in the directory (gnuplot.h: bounded, stdin /dev/null, whole images). */
static int run_gnuplot(plot_ctx_t *p, chart_t *c)
{
	char script[64], png[64], svg[64];
	const char *const images[] = {png, svg, NULL};
	int rc;

	snprintf(script, sizeof(script), "%s.gp", c->name);
	snprintf(png, sizeof(png), "%s.png", c->name);
	snprintf(svg, sizeof(svg), "%s.svg", c->name);
	if ((rc = dv_gnuplot_run(p->dir, p->gnuplot, script, images, 0, p->err)) != 0)
		return rc;
	c->made = true;
	return 0;
}

/* Write NAME.gp from a body callback, then draw it. */
typedef void (*gp_body_fn)(FILE *fp, const void *arg);

static int draw(plot_ctx_t *p, chart_t *c, gp_body_fn body, const void *arg)
{
	dv_atomicfile_t f;
	char name[64];
	int rc;

	title_transport(p, c); /* also for a title set after chart_new */
	snprintf(name, sizeof(name), "%s.gp", c->name);
	if ((rc = out_open(p, name, &f)) != 0)
		return rc;
	gp_begin(f.fp, c);
	gp_term(f.fp, c, false);
	body(f.fp, arg);
	gp_term(f.fp, c, true);
	body(f.fp, arg);
	fputs("unset output\n", f.fp);
	if ((rc = dv_atomicfile_commit(&f, p->err)) != 0)
		return rc;
	return run_gnuplot(p, c);
}

/* ---- results file charts ---- */

typedef struct series {
	const char *file; /* data file */
	char title[320];
	int ycol;
	int lc;        /* line colour index (1...): one per target or group; 0 = gnuplot's turn */
	int dt;        /* dash type (1 solid, 2 dashed...): one per list; 0 = solid */
	int pt;        /* point type marking the pass kind (latency curves), 0 = none */
	double lw;     /* line width: thin cold, thick hot; 0 = 2 */
	bool notitle;  /* a later repeat of a series already in the legend */
	size_t panel;  /* small multiples: its panel (lines_arg_t.npanels) */
	size_t ti, li; /* its target's and list's index in the study */
} series_t;

typedef struct lines_arg {
	const char *xlabel, *ylabel;
	const char *extra; /* more settings, may be NULL */
	const series_t *s;
	size_t n;
	const char *style; /* "lines", "linespoints", or "intervals" (a level per interval) */
	size_t npanels;    /* > 1: small multiples, series s[i] in panel s[i].panel */
	const char *title; /* the figure's title over the panels */
} lines_arg_t;

/* One series of a plot command; first: the command's first. */
static void plot_series(FILE *fp, const lines_arg_t *a, const series_t *s, bool first)
{
	const char *sep = first ? "" : ", \\\n     ";

	/* "intervals": each value held over its interval, column 7 to column 1. */
	if (strcmp(a->style, "intervals") == 0)
		fprintf(fp, "%s'%s' using 7:%d:($1-$7):(0) with vectors nohead", sep, s->file,
		        s->ycol);
	else if (s->pt > 0)
		fprintf(fp, "%s'%s' using 1:%d with linespoints pt %d ps 0.8 pi -8", sep, s->file,
		        s->ycol, s->pt);
	else
		fprintf(fp, "%s'%s' using 1:%d with %s", sep, s->file, s->ycol, a->style);
	fprintf(fp, " lw %g", s->lw > 0 ? s->lw : 2);
	if (s->lc > 0)
		fprintf(fp, " lc %d", s->lc);
	fprintf(fp, " dt %d ", s->dt > 0 ? s->dt : 1);
	if (s->notitle)
		fputs("notitle", fp);
	else {
		fputs("title ", fp);
		gp_str(fp, s->title);
	}
}

/* The panels' grid: up to 2 columns for 4 panels, 3 beyond. */
static size_t panel_cols(size_t n)
{
	return n <= 2 ? n : n <= 4 ? 2 : 3;
}

/*
 * Small multiples (issue 26): one panel per target/list, the figure's title over
 * them, each panel's legend in its top margin (never over the data or a label),
 * the same ranges in every panel, the y label in the first column only.
 */
static void panels_body(FILE *fp, const lines_arg_t *a)
{
	size_t cols = panel_cols(a->npanels), rows = (a->npanels + cols - 1) / cols;

	fprintf(fp, "set multiplot layout %zu,%zu title ", rows, cols);
	gp_str(fp, a->title);
	fputs("\nunset title\nset key tmargin center horizontal maxrows 1 noreverse Right samplen "
	      "2 width 1\n"
	      "set lmargin 10\nset rmargin 3\nset tmargin 4\n",
	      fp);
	for (size_t p = 0; p < a->npanels; p++) {
		bool first = true;
		fputs("set ylabel ", fp);
		gp_str(fp, p % cols == 0 ? a->ylabel : "");
		fputs("\nplot ", fp);
		for (size_t i = 0; i < a->n; i++)
			if (a->s[i].panel == p) {
				plot_series(fp, a, &a->s[i], first);
				first = false;
			}
		fputs("\n", fp);
	}
	fputs("unset multiplot\n", fp);
}

static void lines_body(FILE *fp, const void *argp)
{
	const lines_arg_t *a = argp;

	fputs("set xlabel ", fp);
	gp_str(fp, a->xlabel);
	fputs("\nset ylabel ", fp);
	gp_str(fp, a->ylabel);
	fputs("\n", fp);
	if (a->extra)
		fputs(a->extra, fp);
	if (a->npanels > 1) {
		panels_body(fp, a);
		return;
	}
	fputs("plot ", fp);
	for (size_t i = 0; i < a->n; i++)
		plot_series(fp, a, &a->s[i], i == 0);
	fputs("\n", fp);
}

/*
 * Line styles (issue 26): colour = target, dash type = list, and the pass kind by
 * width (thin cold, thick hot) and, on the percentile curves, by marker (open
 * circle cold, filled hot).
 */
static void style_of(series_t *s, size_t target, size_t list, dv_pass_kind_t k)
{
	s->lc = (int)(target % 8) + 1;
	s->dt = (int)(list % 5) + 1;
	s->lw = k == DV_PASS_COLD ? 1.2 : 2.5;
}

/*
 * Small multiples (issue 26): a chart with more than PANEL_LEGEND legend entries
 * draws overlapping lines under a legend half its height, so its series go into
 * panels: one per list when by_list (targets compared within a panel), else one per
 * target and list, else one per target, else one per list; at most PANEL_MAX
 * panels, one chart beyond. Sets each series' panel; returns the panel count.
 */
#define PANEL_LEGEND 4
#define PANEL_MAX    9

static size_t set_panels(series_t *s, size_t ns, size_t nt, size_t nl, bool by_list)
{
	size_t entries = 0, raw[PANEL_MAX], np = 0;
	int by = 0; /* 1 list, 2 target and list, 3 target */

	for (size_t i = 0; i < ns; i++)
		entries += !s[i].notitle;
	if (entries <= PANEL_LEGEND)
		by = 0;
	else if (by_list && nl > 1 && nl <= PANEL_MAX)
		by = 1;
	else if (nt * nl > 1 && nt * nl <= PANEL_MAX)
		by = 2;
	else if (nt > 1 && nt <= PANEL_MAX)
		by = 3;
	else if (nl > 1 && nl <= PANEL_MAX)
		by = 1;
	for (size_t i = 0; i < ns; i++) {
		size_t r = by == 1   ? s[i].li
		           : by == 2 ? s[i].ti * nl + s[i].li
		           : by == 3 ? s[i].ti
		                     : 0;
		size_t k = 0;
		while (k < np && raw[k] != r)
			k++;
		if (k == np)
			raw[np++] = r;
		s[i].panel = k;
	}
	return np > 1 ? np : 1;
}

/* A figure of n panels: 400 pixels a row under the title, wider for 3 columns. */
static void panels_size(chart_t *c, size_t n)
{
	size_t cols = panel_cols(n);

	if (n <= 1)
		return;
	c->width = cols > 2 ? 1200 : 960;
	c->height = 60 + 400 * (int)((n + cols - 1) / cols);
}

static int kind_point(dv_pass_kind_t k)
{
	return k == DV_PASS_COLD ? 6 : 7;
}

/* An upper bound for a linear axis from 0 that keeps the top point inside: 1 when all are 0. */
static double y_top(double max)
{
	return max > 0 ? max * 1.1 : 1;
}

/*
 * One percentile curve into FILE, DNS Shotgun's way: x = share of the values at least
 * this large (%), y = the value (ms); the smallest share into *xmin. h has values.
 */
static int pctl_file(plot_ctx_t *p, const char *file, const dv_hist_t *h, const char *what,
                     double *xmin, double yr[2])
{
	dv_atomicfile_t f;
	uint64_t before = 0;
	double n = (double)h->count;
	int rc;

	if ((rc = out_open(p, file, &f)) != 0)
		return rc;
	fprintf(f.fp, "# slowest_pct %s_ms: this share of them took at least this long\n", what);
	for (int b = 0; b < DV_HIST_BUCKETS; b++) {
		if (h->bucket[b] == 0)
			continue;
		uint64_t low = dv_hist_bucket_low(b);
		if (low < h->min_ns && h->min_ns != UINT64_MAX)
			low = h->min_ns;
		if (low == 0) /* the first bucket: its top, not a point at 1 ns (issue 26) */
			low = DV_MAX(dv_hist_bucket_high(b), 1);
		fprintf(f.fp, "%.9g %.9g\n", 100.0 * (n - (double)before) / n, (double)low / 1e6);
		yr[0] = DV_MIN(yr[0], (double)low / 1e6);
		yr[1] = DV_MAX(yr[1], (double)low / 1e6);
		before += h->bucket[b];
	}
	fprintf(f.fp, "%.9g %.9g\n", 100.0 / n, DV_MAX((double)h->max_ns, 1.0) / 1e6);
	yr[0] = DV_MIN(yr[0], DV_MAX((double)h->max_ns, 1.0) / 1e6);
	yr[1] = DV_MAX(yr[1], DV_MAX((double)h->max_ns, 1.0) / 1e6);
	*xmin = DV_MIN(*xmin, 100.0 / n);
	return dv_atomicfile_commit(&f, p->err);
}

/*
 * The percentile charts' axes: log-log, 100% on the left down to the smallest share; with
 * mark_p99 a line at p99 when the axis reaches it (a series of 100 samples or more).
 * Returns whether the line is drawn.
 */
static bool pctl_extra(char *extra, size_t len, double xmin, const double yr[2], bool mark_p99)
{
	double lo = xmin / 1.25; /* just past the slowest share: no empty decade (issue 26) */
	/* The y axis fits the data: from just under the fastest to just over the slowest. */
	double ylo = yr[0] > 0 && yr[0] <= yr[1] ? yr[0] / 1.25 : 0.001;
	double yhi = yr[0] > 0 && yr[0] <= yr[1] ? yr[1] * 1.25 : 1000;

	mark_p99 = mark_p99 && lo <= 1;
	snprintf(extra, len,
	         "set logscale x\nset logscale y\nset xrange [100:%g]\nset yrange [%g:%g]\n"
	         "set format x '%%g'\nset format y '%%g'\n%s",
	         lo < 100 ? lo : 1, ylo, yhi,
	         mark_p99 ? "set arrow from 1, graph 0 to 1, graph 1 nohead dt 3 lc rgb 'gray40'\n"
	                    "set label 'p99' at 1, graph 0.95 offset 0.5, 0\n"
	                  : "");
	return mark_p99;
}

/* Series ns of a percentile chart: h's curve in file (pctl_file), its y in column 2. */
static int pctl_series(plot_ctx_t *p, series_t *s, char (*files)[48], size_t ns, const char *file,
                       const dv_hist_t *h, const char *what, double *xmin, double yr[2])
{
	int rc;

	snprintf(files[ns], sizeof(files[ns]), "%s", file);
	if ((rc = pctl_file(p, files[ns], h, what, xmin, yr)) != 0)
		return rc;
	s[ns].file = files[ns];
	s[ns].ycol = 2;
	return 0;
}

/* DNS Shotgun's way: x = share of answers at least this slow (log, 100% on the left). */
static int latency_chart(plot_ctx_t *p, const dv_study_t *st, const dv_groups_t *gs)
{
	chart_t *c = chart_new(p, "latency",
	                       "Latency percentiles (colour: target; dash: list; open, thin: "
	                       "cold; filled, thick: hot)");
	series_t *s = calloc(gs->n ? gs->n : 1, sizeof(*s));
	char(*files)[48] = calloc(gs->n ? gs->n : 1, sizeof(*files));
	char name[48];
	double xmin = 100, yr[2] = {INFINITY, 0};
	size_t ns = 0;
	int rc = 0;

	if (s == NULL || files == NULL) {
		rc = dv_err_set(p->err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < gs->n; i++) {
		if (gs->g[i].latency->count == 0)
			continue;
		snprintf(name, sizeof(name), "latency-%zu.dat", i + 1);
		if ((rc = pctl_series(p, s, files, ns, name, gs->g[i].latency, "latency", &xmin,
		                      yr)) != 0)
			goto out;
		style_of(&s[ns], gs->g[i].ti, gs->g[i].li, gs->g[i].kind);
		s[ns].pt = kind_point(gs->g[i].kind);
		s[ns].ti = gs->g[i].ti;
		s[ns].li = gs->g[i].li;
		dv_group_name(&gs->g[i], s[ns].title, sizeof(s[ns].title));
		ns++;
	}
	if (ns == 0) {
		snprintf(c->note, sizeof(c->note), "no answers: no latency to draw");
		goto out;
	}
	{
		char extra[320];
		pctl_extra(extra, sizeof(extra), xmin, yr, false);
		lines_arg_t a = {
		    "slowest percentile (%)", "latency (ms)", extra, s, ns, "lines", 0, NULL};
		a.npanels = set_panels(s, ns, st->n_targets, st->n_lists, true);
		a.title = c->title;
		panels_size(c, a.npanels);
		rc = draw(p, c, lines_body, &a);
	}
out:
	free(s);
	free(files);
	return rc;
}

/* The connect (k 0) or handshake (k 1) times of g's samples, merged into h. */
static void group_conn_hist(const dv_group_t *g, int k, dv_hist_t *h)
{
	dv_hist_init(h);
	for (size_t i = 0; i < g->n; i++)
		dv_hist_merge(h, k == 0 ? &g->passes[i]->res.stats.connect
		                        : &g->passes[i]->res.stats.handshake);
}

/*
 * Stream transports: connect time (solid) and TLS handshake time (dashed) per target, list
 * and pass kind, as percentile curves the latency chart's way (colour: target), the p99
 * marked where the curves reach it (the title says so only then). Made only for a study
 * with connections.
 */
static int conn_chart(plot_ctx_t *p, const dv_study_t *st, const dv_groups_t *gs)
{
	static const char *const what[2] = {"connect", "handshake"};
	chart_t *c = chart_new(p, "connect",
	                       "Connect (solid) and TLS handshake (dashed) time percentiles "
	                       "(colour: target)");
	series_t *s = calloc(2 * gs->n + 1, sizeof(*s));
	char(*files)[48] = calloc(2 * gs->n + 1, sizeof(*files));
	dv_hist_t *h = malloc(sizeof(*h));
	char name[320];
	double xmin = 100, yr[2] = {INFINITY, 0};
	size_t ns = 0;
	int rc = 0;

	if (s == NULL || files == NULL || h == NULL) {
		rc = dv_err_set(p->err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < gs->n; i++)
		for (int k = 0; k < 2; k++) {
			group_conn_hist(&gs->g[i], k, h);
			if (h->count == 0)
				continue;
			snprintf(name, sizeof(name), "%s-%zu.dat", what[k], i + 1);
			if ((rc = pctl_series(p, s, files, ns, name, h, what[k], &xmin, yr)) != 0)
				goto out;
			s[ns].lc = (int)gs->g[i].ti + 1;
			s[ns].dt = k + 1;
			snprintf(s[ns].title, sizeof(s[ns].title), "%s %s (%s)",
			         dv_group_name(&gs->g[i], name, sizeof(name)), what[k],
			         dv_study_transport(st));
			ns++;
		}
	if (ns == 0) {
		snprintf(c->note, sizeof(c->note), "no connection established: no connect time");
		goto out;
	}
	{
		char extra[384];
		if (pctl_extra(extra, sizeof(extra), xmin, yr, true)) {
			snprintf(c->title, sizeof(c->title),
			         "Connect (solid) and TLS handshake (dashed) time percentiles, p99 "
			         "marked (colour: target)");
			title_transport(p, c);
		}
		lines_arg_t a = {
		    "slowest percentile (%)", "time (ms)", extra, s, ns, "lines", 0, NULL};
		rc = draw(p, c, lines_body, &a);
	}
out:
	free(s);
	free(files);
	free(h);
	return rc;
}

/* Whether pass i is the first reported pass of its target, list and kind (its legend entry). */
static bool first_of_group(const dv_study_t *st, size_t i)
{
	const dv_pass_record_t *a = &st->passes[i];

	for (size_t k = 0; k < i; k++)
		if (st->passes[k].target == a->target && st->passes[k].list == a->list &&
		    st->passes[k].kind == a->kind && st->passes[k].res.n_intervals > 0)
			return false;
	return true;
}

/* The interval data of one pass into FILE; the largest t, qps and lost % into *mx. */
static int pass_data(plot_ctx_t *p, const dv_pass_record_t *pr, const char *file, double mx[3])
{
	dv_atomicfile_t f;
	int rc;

	if ((rc = out_open(p, file, &f)) != 0)
		return rc;
	fputs("# t_s qps lost_pct sent completed lost t_start_s: the interval (t_start_s, t_s]\n",
	      f.fp);
	for (size_t k = 0; k < pr->res.n_intervals; k++) {
		const dv_interval_t *iv = &pr->res.intervals[k];
		double lp = iv->sent ? 100.0 * (double)iv->lost / (double)iv->sent : 0.0;
		fprintf(f.fp, "%.6f %.3f %.6f %llu %llu %llu %.6f\n", iv->t_s, iv->qps, lp,
		        (unsigned long long)iv->sent, (unsigned long long)iv->completed,
		        (unsigned long long)iv->lost, k > 0 ? pr->res.intervals[k - 1].t_s : 0.0);
		mx[0] = DV_MAX(mx[0], iv->t_s);
		mx[1] = DV_MAX(mx[1], iv->qps);
		mx[2] = DV_MAX(mx[2], lp);
	}
	return dv_atomicfile_commit(&f, p->err);
}

/*
 * qps and loss over time from the interval snapshots, one line per reported
 * pass: a colour per target/list/kind, a dash type per repeat. The ranges are
 * set (from 0 to the largest value, with room above it), so a pass of one
 * snapshot or without loss draws without gnuplot's "empty range" warnings.
 */
static int time_charts(plot_ctx_t *p, const dv_study_t *st)
{
	chart_t *cq = chart_new(p, "qps-time",
	                        "Answers per second over time (colour: target; dash: list; "
	                        "thin: cold, thick: hot; every repeat drawn)");
	chart_t *cl = chart_new(p, "loss-time",
	                        "Lost queries over time, % of sent (colour: target; dash: list; "
	                        "thin: cold, thick: hot)");
	size_t np = st->n_passes, ns = 0;
	series_t *sq = calloc(np ? np : 1, sizeof(*sq)), *sl = calloc(np ? np : 1, sizeof(*sl));
	char(*files)[48] = calloc(np ? np : 1, sizeof(*files));
	double mx[3] = {0, 0, 0};
	char extra_q[160], extra_l[160];
	unsigned n = 0;
	int rc = 0;

	if (sq == NULL || sl == NULL || files == NULL) {
		rc = dv_err_set(p->err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		const dv_pass_record_t *pr = &st->passes[i];

		if (pr->kind == DV_PASS_WARMUP)
			continue;
		n++;
		if (pr->res.n_intervals == 0)
			continue;
		snprintf(files[ns], sizeof(files[ns]), "pass-%u.dat", n);
		if ((rc = pass_data(p, pr, files[ns], mx)) != 0)
			goto out;
		const char *tl = pr->target < st->n_targets ? st->targets[pr->target].label : "?";
		const char *ll = pr->list < st->n_lists ? st->lists[pr->list].label : "?";
		snprintf(sq[ns].title, sizeof(sq[ns].title), "%s/%s/%s", tl ? tl : "?",
		         ll ? ll : "?", dv_pass_kind_name(pr->kind));
		sq[ns].file = sl[ns].file = files[ns];
		sq[ns].ycol = 2;
		sl[ns].ycol = 3;
		/* One legend entry per target/list/kind: its repeats share the style. */
		style_of(&sq[ns], pr->target, pr->list, pr->kind);
		sq[ns].notitle = !first_of_group(st, i);
		sq[ns].ti = pr->target;
		sq[ns].li = pr->list;
		sl[ns].lc = sq[ns].lc;
		sl[ns].dt = sq[ns].dt;
		sl[ns].lw = sq[ns].lw;
		sl[ns].notitle = sq[ns].notitle;
		sl[ns].ti = sq[ns].ti;
		sl[ns].li = sq[ns].li;
		memcpy(sl[ns].title, sq[ns].title, sizeof(sl[ns].title));
		ns++;
	}
	if (ns == 0) {
		snprintf(cq->note, sizeof(cq->note),
		         "no interval snapshots in this file (they are taken with -S or an "
		         "interval)");
		memcpy(cl->note, cq->note, sizeof(cl->note));
		goto out;
	}
	snprintf(extra_q, sizeof(extra_q), "set xrange [0:%.6g]\nset yrange [0:%.6g]\n",
	         y_top(mx[0]), y_top(mx[1]));
	snprintf(extra_l, sizeof(extra_l), "set xrange [0:%.6g]\nset yrange [0:%.6g]\n",
	         y_top(mx[0]), y_top(mx[2]));
	lines_arg_t aq = {"time since the pass started (s)",
	                  "answers per second",
	                  extra_q,
	                  sq,
	                  ns,
	                  "intervals",
	                  0,
	                  NULL};
	aq.npanels = set_panels(sq, ns, st->n_targets, st->n_lists, false);
	aq.title = cq->title;
	panels_size(cq, aq.npanels);
	if ((rc = draw(p, cq, lines_body, &aq)) != 0)
		goto out;
	lines_arg_t al = {"time since the pass started (s)",
	                  "lost (% of sent)",
	                  extra_l,
	                  sl,
	                  ns,
	                  "intervals",
	                  0,
	                  NULL};
	al.npanels = set_panels(sl, ns, st->n_targets, st->n_lists, false);
	al.title = cl->title;
	panels_size(cl, al.npanels);
	rc = draw(p, cl, lines_body, &al);
out:
	free(sq);
	free(sl);
	free(files);
	return rc;
}

typedef struct bars_arg {
	const char *ylabel;
	size_t metric;  /* 0: qps columns, 1: p99 columns of bars.dat */
	size_t ntarget; /* the targets: one bar each in every cluster */
	const char *const *targets;
	bool errorbars; /* a group has more than one repeat: min-max bars */
	double ymax;
	const char *labels; /* qps chart: gnuplot "set label" lines for the bars left out */
} bars_arg_t;

/* The groups' targets, each once, in first-seen order, into targets (gs->n room): the
 * bars of one cluster, side by side. Returns how many. */
static size_t distinct_targets(const dv_groups_t *gs, const char **targets)
{
	size_t n = 0;

	for (size_t i = 0; i < gs->n; i++) {
		size_t t = 0;
		while (t < n && strcmp(targets[t], gs->g[i].target) != 0)
			t++;
		if (t == n)
			targets[n++] = gs->g[i].target;
	}
	return n;
}

/*
 * The head of a clustered bar chart (bars-qps, bars-p99, bars-server): histogram style,
 * min-max error bars or plain clusters, y from 0 to ymax.
 */
static void histogram_head(FILE *fp, bool errorbars, double ymax)
{
	fputs("set style data histogram\nset style fill solid 0.8 border -1\n"
	      "set boxwidth 0.9\nset datafile missing '-'\n",
	      fp);
	fputs(errorbars ? "set style histogram errorbars gap 1 lw 1.5\n"
	                : "set style histogram cluster gap 1\n",
	      fp);
	fprintf(fp, "set yrange [0:%.6g]\nset xtics nomirror\n", ymax);
}

/*
 * Its plot line: a series per target from file, the mean in column first + k * stride
 * (min and max after it, for error bars), the first series naming the clusters.
 */
static void histogram_plot(FILE *fp, const char *file, const char *const *targets, size_t ntarget,
                           bool errorbars, size_t first, size_t stride)
{
	fputs("plot ", fp);
	for (size_t k = 0; k < ntarget; k++) {
		size_t col = first + k * stride;
		if (errorbars)
			fprintf(fp, "%s'%s' using %zu:%zu:%zu%s lc %zu title ", k ? ", " : "", file,
			        col, col + 1, col + 2, k == 0 ? ":xtic(1)" : "", k + 1);
		else
			fprintf(fp, "%s'%s' using %zu%s lc %zu title ", k ? ", " : "", file, col,
			        k == 0 ? ":xtic(1)" : "", k + 1);
		gp_str(fp, targets[k]);
	}
	fputs("\n", fp);
}

/* bars.dat: per target, qps mean min max then p99 mean min max: 6 columns after the label. */
static void bars_body(FILE *fp, const void *argp)
{
	const bars_arg_t *a = argp;

	histogram_head(fp, a->errorbars, a->ymax);
	fputs("set ylabel ", fp);
	gp_str(fp, a->ylabel);
	fputs("\nunset label\nset style textbox opaque noborder\n", fp);
	if (a->metric == 0 && a->labels != NULL)
		fputs(a->labels, fp);
	histogram_plot(fp, "bars.dat", a->targets, a->ntarget, a->errorbars, 2 + a->metric * 3, 6);
}

/* The bars of one cluster (a bars.dat row) and what they know. */
typedef struct bars_acc {
	const dv_study_t *st;
	size_t max_n;    /* most repeats of a group */
	double ymax[2];  /* highest max of qps, of p99 */
	size_t measured; /* qps bars drawn */
	FILE *labels;    /* "set label" lines for the qps bars left out */
	size_t cluster;  /* this row's index: its x position */
} bars_acc_t;

/*
 * A cluster's qps bars left out (issue 26): a pass too short to measure, or
 * dominated by filling the window, has no throughput figure (doc/methodology.md),
 * so its bar is not drawn as if measured; the gap gets a label instead ("too
 * short", or "v2: too short" when only some targets lack the figure).
 */
static void bars_gap_label(bars_acc_t *acc, const char *const *targets, size_t nt,
                           const dv_qps_status_t *qs)
{
	size_t out = 0;

	for (size_t t = 0; t < nt; t++)
		out += qs[t] == DV_QPS_SHORT || qs[t] == DV_QPS_FILL;
	if (out == 0 || acc->labels == NULL)
		return;
	fputs("set label \"", acc->labels);
	bool said[2] = {false, false}; /* all out: each word once */
	for (size_t t = 0, k = 0; t < nt; t++) {
		int w = qs[t] == DV_QPS_SHORT ? 0 : qs[t] == DV_QPS_FILL ? 1 : -1;
		if (w < 0 || (out == nt && said[w]))
			continue;
		fputs(k++ ? "\\n" : "", acc->labels);
		if (out < nt) { /* name the targets without the figure */
			for (const char *c = targets[t]; *c; c++)
				if (*c != '"' && *c != '\\' && (unsigned char)*c >= 0x20)
					fputc(*c, acc->labels);
			fputs(": ", acc->labels);
		}
		fputs(dv_qps_status_word(qs[t]), acc->labels);
		said[w] = true;
	}
	fprintf(acc->labels, "\\n(no qps figure)\" at %zu, graph 0.1 center front boxed\n",
	        acc->cluster);
}

/* One bars.dat row: cluster label, then mean min max of qps and p99 per target. */
static void bars_row(FILE *fp, const dv_groups_t *gs, const dv_group_t *g0,
                     const char *const *targets, size_t nt, bars_acc_t *acc)
{
	static const dv_metric_t m[2] = {DV_M_QPS, DV_M_P99_MS};
	dv_qps_status_t *qs = calloc(nt ? nt : 1, sizeof(*qs));
	char label[320];

	snprintf(label, sizeof(label), "%s %s", g0->list, dv_pass_kind_name(g0->kind));
	dat_label(fp, label);
	for (size_t t = 0; t < nt; t++) {
		dv_group_t key = {.target = targets[t], .list = g0->list, .kind = g0->kind};
		const dv_group_t *g = dv_groups_find(gs, &key);
		if (g != NULL && qs != NULL)
			qs[t] = dv_group_qps_status(acc->st, g);
		for (size_t k = 0; k < 2; k++) {
			if (g == NULL || (k == 0 && qs != NULL &&
			                  (qs[t] == DV_QPS_SHORT || qs[t] == DV_QPS_FILL))) {
				fputs(" - - -", fp);
				continue;
			}
			dv_series_t v = dv_group_series(g, m[k]);
			fprintf(fp, " %.6g %.6g %.6g", v.mean, v.min, v.max);
			acc->ymax[k] = DV_MAX(acc->ymax[k], v.max);
			acc->max_n = DV_MAX(acc->max_n, g->n);
			acc->measured += k == 0;
		}
	}
	fputc('\n', fp);
	if (qs != NULL)
		bars_gap_label(acc, targets, nt, qs);
	free(qs);
	acc->cluster++;
}

/* The bars.dat rows: one per list and pass kind, in order of first appearance. */
static void bars_rows(FILE *fp, const dv_groups_t *gs, const char *const *targets, size_t nt,
                      bars_acc_t *acc)
{
	fputs("# list and pass kind, then per target: qps mean min max, p99_ms mean min max "
	      "(- = no such pass, or qps of a pass with no throughput figure)\n",
	      fp);
	for (size_t i = 0; i < gs->n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(gs->g[j].list, gs->g[i].list) == 0 &&
			       gs->g[j].kind == gs->g[i].kind;
		if (!seen)
			bars_row(fp, gs, &gs->g[i], targets, nt, acc);
	}
}

/*
 * Targets (versions) side by side in one cluster per list and pass kind, one
 * colour per target: mean qps and mean p99, with min-max error bars over the
 * repeats when there are several.
 */
static int bar_charts(plot_ctx_t *p, const dv_study_t *st, const dv_groups_t *gs)
{
	chart_t *cq = chart_new(p, "bars-qps", "Answers per second, targets side by side");
	chart_t *cp = chart_new(p, "bars-p99", "p99 latency (ms), targets side by side");
	const char **targets = calloc(gs->n ? gs->n : 1, sizeof(*targets));
	bars_arg_t a = {.targets = targets};
	bars_acc_t acc = {.st = st};
	char *labels = NULL;
	size_t labels_len = 0;
	dv_atomicfile_t f;
	int rc;

	if (targets == NULL)
		return dv_err_set(p->err, -ENOMEM, "out of memory");
	a.ntarget = distinct_targets(gs, targets);
	if ((rc = out_open(p, "bars.dat", &f)) != 0)
		goto out;
	acc.labels = open_memstream(&labels, &labels_len);
	bars_rows(f.fp, gs, targets, a.ntarget, &acc);
	if (acc.labels != NULL)
		fclose(acc.labels);
	a.labels = labels;
	if ((rc = dv_atomicfile_commit(&f, p->err)) != 0)
		goto out;
	a.errorbars = acc.max_n > 1;
	if (a.errorbars) {
		snprintf(cq->title, sizeof(cq->title),
		         "Mean answers per second, targets side by side (bars: min-max of %zu "
		         "repeats)",
		         acc.max_n);
		snprintf(
		    cp->title, sizeof(cp->title),
		    "Mean p99 latency (ms), targets side by side (bars: min-max of %zu repeats)",
		    acc.max_n);
	}
	a.ylabel = "answers per second";
	a.metric = 0;
	a.ymax = y_top(acc.ymax[0]);
	if (acc.measured == 0)
		snprintf(cq->note, sizeof(cq->note),
		         "no pass has a throughput figure (each too short or filling the window: "
		         "doc/methodology.md); use a longer list or --hot-time");
	else if ((rc = draw(p, cq, bars_body, &a)) != 0)
		goto out;
	a.ylabel = "p99 latency (ms)";
	a.metric = 1;
	a.ymax = y_top(acc.ymax[1]);
	rc = draw(p, cp, bars_body, &a);
out:
	free(labels);
	free(targets);
	return rc;
}

/* ---- the server's CPU per answer (issue 23) ---- */

typedef struct srv_arg {
	const char *const *targets;
	size_t ntarget;
	bool errorbars; /* a group has more than one measured repeat: min-max bars */
	double ymax;
} srv_arg_t;

/* server.dat: per target, the server's CPU us per answer mean min max after the label. */
static void server_body(FILE *fp, const void *argp)
{
	const srv_arg_t *a = argp;

	histogram_head(fp, a->errorbars, a->ymax);
	fputs("set ylabel 'server CPU per answer (us, user + system)'\n", fp);
	histogram_plot(fp, "server.dat", a->targets, a->ntarget, a->errorbars, 2, 3);
}

/* server.dat: a row per list and pass kind, per target mean min max ("- - -": none). */
static void server_rows(FILE *fp, const dv_groups_t *gs, srv_arg_t *a, size_t *max_n)
{
	for (size_t i = 0; i < gs->n; i++) {
		const dv_group_t *g0 = &gs->g[i];
		char label[320];
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(gs->g[j].list, g0->list) == 0 && gs->g[j].kind == g0->kind;
		if (seen)
			continue;
		snprintf(label, sizeof(label), "%s %s", g0->list, dv_pass_kind_name(g0->kind));
		dat_label(fp, label);
		for (size_t t = 0; t < a->ntarget; t++) {
			dv_group_t key = {
			    .target = a->targets[t], .list = g0->list, .kind = g0->kind};
			dv_series_t v = dv_group_server(dv_groups_find(gs, &key), 0);
			if (v.n == 0) {
				fputs(" - - -", fp);
				continue;
			}
			fprintf(fp, " %.6g %.6g %.6g", v.mean, v.min, v.max);
			a->ymax = DV_MAX(a->ymax, v.max);
			*max_n = DV_MAX(*max_n, v.n);
		}
		fputc('\n', fp);
	}
}

/*
 * The server's CPU (user + system) per answer by target (version), side by side in a
 * cluster per list and pass kind, min-max error bars over the measured repeats: the
 * seeds' "server us per query" comparison. Only when some pass measured its server.
 */
static int server_chart(plot_ctx_t *p, const dv_groups_t *gs)
{
	const char **targets;
	srv_arg_t a = {0};
	size_t max_n = 0, measured = 0;
	dv_atomicfile_t f;
	chart_t *c;
	int rc;

	for (size_t i = 0; i < gs->n; i++)
		measured += dv_group_server(&gs->g[i], 0).n;
	if (measured == 0)
		return 0; /* no server measured: no chart, no data file */
	targets = calloc(gs->n, sizeof(*targets));
	a.targets = targets;
	if (targets == NULL)
		return dv_err_set(p->err, -ENOMEM, "out of memory");
	a.ntarget = distinct_targets(gs, targets);
	if ((rc = out_open(p, "server.dat", &f)) != 0)
		goto out;
	fputs("# list and pass kind, then per target: server CPU us per answer mean min max "
	      "(- = not measured)\n",
	      f.fp);
	server_rows(f.fp, gs, &a, &max_n);
	if ((rc = dv_atomicfile_commit(&f, p->err)) != 0)
		goto out;
	c = chart_new(p, "bars-server", "Server CPU per answer (us), targets side by side");
	a.errorbars = max_n > 1;
	if (a.errorbars)
		snprintf(c->title, sizeof(c->title),
		         "Mean server CPU per answer (us), targets side by side (bars: min-max of "
		         "%zu repeats)",
		         max_n);
	a.ymax = y_top(a.ymax);
	rc = draw(p, c, server_body, &a);
out:
	free(targets);
	return rc;
}

/* ---- index.html ---- */

static void html_begin(FILE *fp, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
	      fp);
	dv_xml_escape(fp, title);
	fputs("</title>\n<style>\nbody { font-family: sans-serif; margin: 2em auto; "
	      "max-width: 72em; padding: 0 1em; }\n"
	      ".wide { overflow-x: auto; }\n"
	      "table { border-collapse: collapse; }\n"
	      "th, td { border: 1px solid #bbb; padding: 2px 8px; text-align: right; }\n"
	      "th.l, td.l { text-align: left; }\nimg { max-width: 100%; height: auto; }\n"
	      "pre { font-size: 0.85em; background: #f6f6f6; padding: 0.5em; }\n"
	      "code { word-break: break-all; }\n"
	      "@media (max-width: 40em) { body { margin: 0.5em auto; } h1 { font-size: 1.3em; } "
	      "pre { font-size: 0.7em; } }\n"
	      "</style>\n</head>\n<body>\n<h1>",
	      fp);
	dv_xml_escape(fp, title);
	fputs("</h1>\n", fp);
}

static void html_charts(FILE *fp, const plot_ctx_t *p)
{
	for (size_t i = 0; i < p->n_charts; i++) {
		const chart_t *c = &p->charts[i];
		fputs("<h2>", fp);
		dv_xml_escape(fp, c->title);
		fputs("</h2>\n", fp);
		if (!c->made) {
			fputs("<p>Not drawn: ", fp);
			dv_xml_escape(fp, c->note);
			fputs(".</p>\n", fp);
			continue;
		}
		fprintf(fp, "<p><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", c->name, c->name);
		dv_xml_escape(fp, c->title);
		fprintf(fp,
		        "\"></a><br><a href=\"%s.svg\">SVG</a> &middot; <a href=\"%s.gp\">gnuplot "
		        "script</a></p>\n",
		        c->name, c->name);
	}
	fputs("</body>\n</html>\n", fp);
}

static void td(FILE *fp, const char *s, bool left)
{
	fputs(left ? "<td class=\"l\">" : "<td>", fp);
	dv_xml_escape(fp, s);
	fputs("</td>", fp);
}

static void tdf(FILE *fp, const char *fmt, double v)
{
	fputs("<td>", fp);
	fprintf(fp, fmt, v);
	fputs("</td>", fp);
}

/* A figure's mean in a cell, "-" when no sample has it. */
static void td_series(FILE *fp, const char *fmt, dv_series_t v)
{
	if (v.n == 0)
		td(fp, "-", false);
	else
		tdf(fp, fmt, v.mean);
}

/* Stream transports: the connection figures of each group (means over the repeats). */
static void conn_table(FILE *fp, const dv_study_t *s, const dv_groups_t *gs)
{
	fputs("<h2>Connections (", fp);
	dv_xml_escape(fp, dv_study_transport(s));
	fputs(")</h2>\n<p>Means over the repeats; - where no pass has the figure "
	      "(doc/numbers.md, Connections).</p>\n<table>\n<tr><th class=\"l\">target</th>"
	      "<th class=\"l\">list</th><th class=\"l\">pass</th>",
	      fp);
	for (int f = 0; f < DV_CF_COUNT; f++) {
		fputs("<th>", fp);
		dv_xml_escape(fp, dv_conn_fig_label((dv_conn_fig_t)f));
		fputs("</th>", fp);
	}
	fputs("</tr>\n", fp);
	for (size_t i = 0; i < gs->n; i++) {
		const dv_group_t *g = &gs->g[i];
		fputs("<tr>", fp);
		td(fp, g->target, true);
		td(fp, g->list, true);
		td(fp, dv_pass_kind_name(g->kind), true);
		for (int f = 0; f < DV_CF_COUNT; f++)
			td_series(fp, dv_conn_fig_is_latency((dv_conn_fig_t)f) ? "%.4f" : "%.1f",
			          dv_group_conn_series(g, (dv_conn_fig_t)f));
		fputs("</tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* The study table and the summary with its verdicts, as the terminal shows them. */
static void study_text(FILE *fp, const dv_study_t *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (m == NULL)
		return;
	dv_study_print_table(s, m);
	dv_study_print_summary(s, m);
	if (fclose(m) == 0 && buf != NULL) {
		fputs("<h2>Study table and verdicts</h2>\n<div class=\"wide\"><pre>", fp);
		dv_xml_escape(fp, buf[0] == '\n' ? buf + 1 : buf);
		fputs("</pre></div>\n", fp);
	}
	free(buf);
}

static int study_index(plot_ctx_t *p, const dv_study_t *s, const char *src, const dv_groups_t *gs)
{
	dv_atomicfile_t f;
	char title[512], when[64] = "?", kind[32];
	bool any_contra = false;
	int rc = out_open(p, "index.html", &f);

	if (rc != 0)
		return rc;
	if (s->start_wall_ns) {
		time_t t = (time_t)(s->start_wall_ns / DV_NS_PER_S);
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	}
	snprintf(title, sizeof(title), "dnsvolley results: %s", src);
	html_begin(f.fp, title);
	fputs("<p>Started ", f.fp);
	dv_xml_escape(f.fp, when);
	fputs(" on ", f.fp);
	dv_xml_escape(f.fp, s->hostname ? s->hostname : "?");
	fputs(", dnsvolley ", f.fp);
	dv_xml_escape(f.fp, s->tool_version ? s->tool_version : "?");
	fputs(", transport ", f.fp);
	dv_xml_escape(f.fp, dv_study_transport(s));
	fputs(".<br>Command: <code>", f.fp);
	dv_xml_escape(f.fp, s->cmdline ? s->cmdline : "?");
	fputs("</code></p>\n", f.fp);
	if (s->failed) {
		fputs("<p><strong>The study failed</strong>: ", f.fp);
		dv_xml_escape(f.fp, s->fail_msg);
		fputs("</p>\n", f.fp);
	}
	study_text(f.fp, s);
	fputs(
	    "<h2>Summary</h2>\n<p>Means over the repeats of each target, list and pass kind.</p>\n"
	    "<div class=\"wide\"><table>\n<tr><th class=\"l\">target</th><th class=\"l\">list</th>"
	    "<th class=\"l\">pass</th><th>repeats</th><th>qps</th><th>lost %</th>"
	    "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th></tr>\n",
	    f.fp);
	for (size_t i = 0; i < gs->n; i++) {
		const dv_group_t *g = &gs->g[i];
		fputs("<tr>", f.fp);
		td(f.fp, g->target, true);
		td(f.fp, g->list, true);
		bool contra = dv_group_cache_contradicts(g) > 0;
		any_contra |= contra;
		snprintf(kind, sizeof(kind), "%s%s", dv_pass_kind_name(g->kind), contra ? "!" : "");
		td(f.fp, kind, true);
		tdf(f.fp, "%.0f", (double)g->n);
		dv_qps_status_t qs = dv_group_qps_status(s, g);
		if (qs == DV_QPS_SHORT || qs == DV_QPS_FILL) /* doc/methodology.md */
			td(f.fp, dv_qps_status_word(qs), false);
		else
			tdf(f.fp, "%.1f", g->mean[DV_M_QPS]);
		tdf(f.fp, "%.3f", g->mean[DV_M_LOST_PCT]);
		tdf(f.fp, "%.4f", g->mean[DV_M_P50_MS]);
		tdf(f.fp, "%.4f", g->mean[DV_M_P90_MS]);
		tdf(f.fp, "%.4f", g->mean[DV_M_P99_MS]);
		tdf(f.fp, "%.4f", g->mean[DV_M_P999_MS]);
		fputs("</tr>\n", f.fp);
	}
	fputs("</table></div>\n", f.fp);
	if (any_contra)
		fputs("<p>!: the server's own cache counters (--server-stats) contradict at least "
		      "one "
		      "repeat of the pass (a cold pass with cache hits, or a hot pass with "
		      "misses); its "
		      "figures are in the means. The study table above marks which.</p>\n",
		      f.fp);
	if (dv_study_has_conns(s))
		conn_table(f.fp, s, gs);
	html_charts(f.fp, p);
	return dv_atomicfile_commit(&f, p->err);
}

static int make_dir(const char *dir, dv_err_t *err)
{
	struct stat st;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return dv_err_set(err, -errno, "%s: cannot create the directory: %s", dir,
	                  strerror(errno == EEXIST ? ENOTDIR : errno));
}

int dv_plot_study(const dv_study_t *s, const char *src_name, const char *dir, const char *gnuplot,
                  dv_err_t *err)
{
	plot_ctx_t p = {.dir = dir, .gnuplot = gnuplot, .err = err};
	dv_groups_t gs = {0};
	int rc;

	p.transport = dv_study_transport(s);

	if ((rc = make_dir(dir, err)) != 0)
		return rc;
	if ((rc = dv_groups_build(s, DV_GROUP_BY_KIND, &gs)) != 0)
		return dv_err_set(err, rc, "out of memory");
	if (gs.n == 0) {
		dv_groups_free(&gs);
		return dv_err_set(err, -ENODATA, "%s: no reported pass to plot", src_name);
	}
	if ((rc = latency_chart(&p, s, &gs)) == 0 && (rc = time_charts(&p, s)) == 0 &&
	    (rc = bar_charts(&p, s, &gs)) == 0 && (rc = server_chart(&p, &gs)) == 0 &&
	    (!dv_study_has_conns(s) || (rc = conn_chart(&p, s, &gs)) == 0))
		rc = study_index(&p, s, src_name, &gs);
	dv_groups_free(&gs);
	return rc;
}

/* ---- history (CSV) ---- */

typedef struct hgroup {
	const char *target, *list, *pass;
	const char *transport; /* "" in rows of header versions 1 and 2 (not recorded) */
	size_t *rows;
	size_t n;
} hgroup_t;

static int history_groups(const dv_csv_table_t *t, hgroup_t **out, size_t *nout)
{
	int ct = dv_csv_column("target"), cl = dv_csv_column("list"), cp = dv_csv_column("pass");
	int cx = dv_csv_column("transport");
	hgroup_t *g = calloc(t->n ? t->n : 1, sizeof(*g));
	size_t n = 0;

	if (g == NULL)
		return -ENOMEM;
	for (size_t r = 0; r < t->n; r++) {
		char **row = t->rows[r];
		size_t k;
		for (k = 0; k < n; k++)
			if (!strcmp(g[k].target, row[ct]) && !strcmp(g[k].list, row[cl]) &&
			    !strcmp(g[k].pass, row[cp]) && !strcmp(g[k].transport, row[cx]))
				break;
		if (k == n) {
			g[n].target = row[ct];
			g[n].list = row[cl];
			g[n].pass = row[cp];
			g[n].transport = row[cx];
			if ((g[n].rows = calloc(t->n, sizeof(size_t))) == NULL) {
				for (size_t i = 0; i < n; i++)
					free(g[i].rows);
				free(g);
				return -ENOMEM;
			}
			n++;
		}
		g[k].rows[g[k].n++] = r;
	}
	*out = g;
	*nout = n;
	return 0;
}

static void hgroups_free(hgroup_t *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].rows);
	free(g);
}

static int history_index(plot_ctx_t *p, const dv_csv_table_t *t, const char *src, const hgroup_t *g,
                         size_t ng)
{
	dv_atomicfile_t f;
	char title[512];
	int cd = dv_csv_column("date"), cq = dv_csv_column("qps"), c99 = dv_csv_column("p99_ms");
	int clp = dv_csv_column("lost_pct");
	int rc = out_open(p, "index.html", &f);

	if (rc != 0)
		return rc;
	snprintf(title, sizeof(title), "dnsvolley history: %s", src);
	html_begin(f.fp, title);
	fprintf(f.fp,
	        "<p>%zu rows.</p>\n<h2>Summary</h2>\n<p>The latest run of each target, list "
	        "and pass kind, and the mean over all runs in the file.</p>\n",
	        t->n);
	fputs("<table>\n<tr><th class=\"l\">target</th><th class=\"l\">list</th><th "
	      "class=\"l\">pass</th><th>rows</th><th class=\"l\">latest</th><th>qps</th>"
	      "<th>lost %</th><th>p99 ms</th><th>mean qps</th><th>mean p99 ms</th>"
	      "<th class=\"l\">transport</th></tr>\n",
	      f.fp);
	for (size_t i = 0; i < ng; i++) {
		char **last = t->rows[g[i].rows[g[i].n - 1]];
		double sq = 0, s99 = 0;
		for (size_t k = 0; k < g[i].n; k++) {
			sq += atof(t->rows[g[i].rows[k]][cq]);
			s99 += atof(t->rows[g[i].rows[k]][c99]);
		}
		fputs("<tr>", f.fp);
		td(f.fp, g[i].target, true);
		td(f.fp, g[i].list, true);
		td(f.fp, g[i].pass, true);
		tdf(f.fp, "%.0f", (double)g[i].n);
		td(f.fp, last[cd], true);
		td(f.fp, last[cq], false);
		td(f.fp, last[clp], false);
		td(f.fp, last[c99], false);
		tdf(f.fp, "%.1f", sq / (double)g[i].n);
		tdf(f.fp, "%.4f", s99 / (double)g[i].n);
		td(f.fp, g[i].transport[0] ? g[i].transport : "-", true);
		fputs("</tr>\n", f.fp);
	}
	fputs("</table>\n", f.fp);
	html_charts(f.fp, p);
	return dv_atomicfile_commit(&f, p->err);
}

/* A history date ("2026-12-01T10:38:00Z") as seconds since 1970; -1 when it is not one. */
static double csv_time(const char *date)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return end != NULL && *end == '\0' ? (double)timegm(&tm) : -1;
}

/*
 * The trend's date ticks where the points are (issue 26): rows over a day or more
 * (nights) get a tick at the first row's time of day on each day (every few days
 * for long spans, at most 10 ticks), so a run at 22:21 sits on its own date's tick,
 * not beside the next day's midnight. Shorter spans keep gnuplot's ticks (their
 * labels carry the time).
 */
static void trend_xtics(char *out, size_t len, double lo, double span)
{
	char a[32];
	time_t t = (time_t)lo;
	struct tm tm;
	long days;

	if (span < 86400) {
		snprintf(out, len, "set xtics rotate by -30\n");
		return;
	}
	days = (long)ceil(span / 86400 / 10);
	gmtime_r(&t, &tm);
	strftime(a, sizeof(a), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(out, len, "set xtics '%s', %ld\nset mxtics 1\n", a, days * 86400);
}

/*
 * The time axis of the trend charts fitted to the rows: a few minutes of rows
 * get clock times, a day or two day and time, longer spans dates; a margin on
 * both sides keeps the first and last point inside. The day goes in the label
 * when all rows are on one day.
 */
static void time_axis(const dv_csv_table_t *t, int cd, char *xlabel, size_t xlen, char *out,
                      size_t len, double ymax)
{
	double lo = -1, hi = -1, span, pad;
	const char *fmt;
	char day[16] = "";

	for (size_t r = 0; r < t->n; r++) {
		double v = csv_time(t->rows[r][cd]);
		if (v < 0)
			continue;
		lo = lo < 0 ? v : DV_MIN(lo, v);
		hi = DV_MAX(hi, v);
	}
	span = hi - lo;
	pad = span > 0 ? DV_MAX(span * 0.05, 1) : 60;
	if (lo >= 0) {
		time_t a = (time_t)lo, b = (time_t)hi;
		struct tm ta, tb;
		gmtime_r(&a, &ta);
		gmtime_r(&b, &tb);
		if (ta.tm_yday == tb.tm_yday && ta.tm_year == tb.tm_year)
			strftime(day, sizeof(day), "%Y-%m-%d", &ta);
	}
	if (day[0] != '\0')
		fmt = span < 600 ? "%H:%M:%S" : "%H:%M";
	else
		fmt = span < 86400 ? "%m-%d\\n%H:%M" : span < 180 * 86400 ? "%m-%d" : "%Y-%m-%d";
	snprintf(xlabel, xlen, day[0] ? "time (UTC) on %s" : "date (UTC)", day);
	if (day[0] == '\0' && span >= 86400 && lo >= 0) { /* the tick time in the label */
		time_t a = (time_t)lo;
		struct tm ta;
		gmtime_r(&a, &ta);
		snprintf(xlabel, xlen,
		         "date (UTC; a tick at %02d:%02d each day, the first run's time)",
		         ta.tm_hour, ta.tm_min);
	}
	if (lo < 0) { /* no date readable: gnuplot's own range */
		snprintf(
		    out, len,
		    "set xdata time\nset timefmt '%%Y-%%m-%%dT%%H:%%M:%%SZ'\nset yrange [0:%.6g]\n",
		    ymax);
		return;
	}
	/* The range is given in timefmt. */
	{
		char a[32], b[32];
		time_t ta = (time_t)(lo - pad), tb = (time_t)(hi + pad);
		struct tm ma, mb;
		gmtime_r(&ta, &ma);
		gmtime_r(&tb, &mb);
		strftime(a, sizeof(a), "%Y-%m-%dT%H:%M:%SZ", &ma);
		strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &mb);
		size_t n = (size_t)snprintf(
		    out, len,
		    "set xdata time\nset timefmt '%%Y-%%m-%%dT%%H:%%M:%%SZ'\nset format x "
		    "\"%s\"\nset xrange ['%s':'%s']\nset yrange [0:%.6g]\n",
		    fmt, a, b, ymax);
		if (n < len)
			trend_xtics(out + n, len - n, lo, span);
	}
}

int dv_plot_history(const dv_csv_table_t *t, const char *src_name, const char *dir,
                    const char *gnuplot, dv_err_t *err)
{
	plot_ctx_t p = {.dir = dir, .gnuplot = gnuplot, .err = err};
	int cd = dv_csv_column("date"), cq = dv_csv_column("qps"), c99 = dv_csv_column("p99_ms");
	hgroup_t *g = NULL;
	size_t ng = 0;
	series_t *sq = NULL, *s99 = NULL;
	char(*files)[48] = NULL;
	double ymax[2] = {0, 0};
	int rc;

	if ((rc = make_dir(dir, err)) != 0)
		return rc;
	if (t->n == 0)
		return dv_err_set(err, -ENODATA, "%s: no rows to plot", src_name);
	if ((rc = history_groups(t, &g, &ng)) != 0)
		return dv_err_set(err, rc, "out of memory");
	sq = calloc(ng, sizeof(*sq));
	s99 = calloc(ng, sizeof(*s99));
	files = calloc(ng, sizeof(*files));
	if (sq == NULL || s99 == NULL || files == NULL) {
		rc = dv_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ng; i++) {
		dv_atomicfile_t f;
		snprintf(files[i], sizeof(files[i]), "trend-%zu.dat", i + 1);
		if ((rc = out_open(&p, files[i], &f)) != 0)
			goto out;
		fputs("# date qps p99_ms\n", f.fp);
		for (size_t k = 0; k < g[i].n; k++) {
			char **row = t->rows[g[i].rows[k]];
			fprintf(f.fp, "%s %.3f %.6f\n", row[cd], atof(row[cq]), atof(row[c99]));
			ymax[0] = DV_MAX(ymax[0], atof(row[cq]));
			ymax[1] = DV_MAX(ymax[1], atof(row[c99]));
		}
		if ((rc = dv_atomicfile_commit(&f, err)) != 0)
			goto out;
		sq[i].file = s99[i].file = files[i];
		sq[i].ycol = 2;
		s99[i].ycol = 3;
		snprintf(sq[i].title, sizeof(sq[i].title), "%s/%s/%s%s%s%s", g[i].target, g[i].list,
		         g[i].pass, g[i].transport[0] ? " (" : "", g[i].transport,
		         g[i].transport[0] ? ")" : "");
		memcpy(s99[i].title, sq[i].title, sizeof(s99[i].title));
	}
	char timeq[400], time99[400], xlabel[64];
	time_axis(t, cd, xlabel, sizeof(xlabel), timeq, sizeof(timeq), y_top(ymax[0]));
	time_axis(t, cd, xlabel, sizeof(xlabel), time99, sizeof(time99), y_top(ymax[1]));
	lines_arg_t aq = {xlabel, "answers per second", timeq, sq, ng, "linespoints", 0, NULL};
	lines_arg_t a99 = {xlabel, "p99 latency (ms)", time99, s99, ng, "linespoints", 0, NULL};
	if ((rc = draw(&p, chart_new(&p, "trend-qps", "Nightly trend: answers per second"),
	               lines_body, &aq)) != 0)
		goto out;
	if ((rc = draw(&p, chart_new(&p, "trend-p99", "Nightly trend: p99 latency (ms)"),
	               lines_body, &a99)) != 0)
		goto out;
	rc = history_index(&p, t, src_name, g, ng);
out:
	free(sq);
	free(s99);
	free(files);
	hgroups_free(g, ng);
	return rc;
}
