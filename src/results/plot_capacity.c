/* plot_capacity: the capacity "hockey stick" (loss and latency against offered qps) and the
 * resperf-style ramp chart, drawn with gnuplot into a directory. */
#include "config.h"

#include "results/plot_capacity.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/gnuplot.h"

/* A label safe inside a gnuplot double-quoted string. */
static void gp_label(char *out, size_t cap, const char *s)
{
	size_t n = 0;

	for (; *s != '\0' && n + 1 < cap; s++)
		if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
			out[n++] = *s;
	out[n] = '\0';
}

static FILE *open_in(const char *dir, const char *name, dv_err_t *err)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	return f;
}

/* capacity-N.dat: the steps sorted by offered rate (a confirmed rate appears twice). */
static int write_series(const char *dir, size_t i, const dv_capacity_result_t *r, dv_err_t *err)
{
	char name[64];
	FILE *f;
	dv_capacity_step_t *s;

	snprintf(name, sizeof(name), "capacity-%zu.dat", i + 1);
	if ((f = open_in(dir, name, err)) == NULL)
		return -EIO;
	s = malloc((r->n_steps + 1) * sizeof(*s));
	if (s == NULL) {
		fclose(f);
		return dv_err_set(err, -ENOMEM, "out of memory");
	}
	memcpy(s, r->steps, r->n_steps * sizeof(*s));
	for (size_t a = 1; a < r->n_steps; a++) /* insertion sort: a few dozen steps */
		for (size_t b = a; b > 0 && s[b - 1].offered_qps > s[b].offered_qps; b--) {
			dv_capacity_step_t t = s[b];
			s[b] = s[b - 1];
			s[b - 1] = t;
		}
	fprintf(f, "# offered_qps loss_pct p50_ms p99_ms slo_latency_ms verdict\n");
	for (size_t k = 0; k < r->n_steps; k++)
		fprintf(f, "%.0f %.6f %.6f %.6f %.6f %s\n", s[k].offered_qps, s[k].loss * 100,
		        (double)s[k].p50_ns / 1e6, (double)s[k].p99_ns / 1e6,
		        (double)s[k].lat_ns / 1e6, dv_cap_verdict_name(s[k].verdict));
	free(s);
	return fclose(f) == 0 ? 0 : dv_err_set(err, -EIO, "%s/%s: write failed", dir, name);
}

/*
 * The axes fit the steps (issue 26): offered from the lowest to the highest rate (one
 * rate: +-20% around it, not gnuplot's "empty x range"), loss from 0 to above the
 * larger of the SLO and the highest loss (the SLO line never sits on the frame).
 */
static void hockey_ranges(FILE *f, const dv_capacity_opts_t *o, const dv_plot_cap_series_t *s,
                          size_t n)
{
	double lo = INFINITY, hi = 0, loss = o->max_loss * 100;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < s[i].r->n_steps; k++) {
			lo = fmin(lo, s[i].r->steps[k].offered_qps);
			hi = fmax(hi, s[i].r->steps[k].offered_qps);
			loss = fmax(loss, s[i].r->steps[k].loss * 100);
		}
	if (!(hi > 0))
		return;
	if (hi - lo < 1)
		fprintf(f, "set xrange [%.0f:%.0f]\n", lo * 0.8, hi * 1.2);
	else
		fprintf(f, "set xrange [%.0f:%.0f]\n", fmax(0, lo - 0.05 * (hi - lo)),
		        hi + 0.05 * (hi - lo));
	fprintf(f, "set yrange [0:%g]\n", loss > 0 ? loss * 1.3 : 1);
}

/*
 * The latency panel's log axis from just under the fastest p50 to just over the larger
 * of the slowest p99 and the latency SLO (its line inside, never on the frame).
 */
static void hockey_lat_range(FILE *f, const dv_capacity_opts_t *o, const dv_plot_cap_series_t *s,
                             size_t n)
{
	double lo = INFINITY, hi = o->max_lat_ns > 0 ? o->max_lat_ns / 1e6 : 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < s[i].r->n_steps; k++) {
			double p50 = (double)s[i].r->steps[k].p50_ns / 1e6;
			double p99 = (double)s[i].r->steps[k].p99_ns / 1e6;
			if (p50 > 0)
				lo = fmin(lo, p50);
			if (p99 > 0)
				lo = fmin(lo, p99);
			hi = fmax(hi, fmax(p50, p99));
		}
	if (isfinite(lo) && hi > 0)
		fprintf(f, "set yrange [%g:%g]\n", lo / 1.5, hi * 1.5);
	else
		fputs("set autoscale y\n", f);
}

static void hockey_script(FILE *f, const dv_capacity_opts_t *o, const dv_plot_cap_series_t *s,
                          size_t n)
{
	char label[128];

	fprintf(f, "# capacity: loss and latency against offered qps; gnuplot capacity.gp\n"
	           "set terminal png size 1000,900\nset output 'capacity.png'\n"
	           "set multiplot layout 2,1 title 'Capacity: loss and latency against offered "
	           "load'\nset grid\nset key below horizontal samplen 3 width 2 height 1\n"
	           "set lmargin 12\nset rmargin 4\nset xlabel 'offered (queries/s)'\n");
	hockey_ranges(f, o, s, n);
	for (size_t i = 0; i < n; i++) /* the capacity found, per series */
		if (s[i].r->capacity_qps > 0)
			fprintf(f,
			        "set arrow %zu from %.0f, graph 0 to %.0f, graph 1 nohead dt 2 lc "
			        "%zu\n",
			        i + 1, s[i].r->capacity_qps, s[i].r->capacity_qps, i + 1);
	fprintf(f, "set ylabel 'loss (%%)'\nplot %g title 'SLO loss' lc rgb 'red' dt 3",
	        o->max_loss * 100);
	for (size_t i = 0; i < n; i++) {
		gp_label(label, sizeof(label), s[i].label);
		fprintf(f, ", 'capacity-%zu.dat' using 1:2 with linespoints lc %zu title \"%s%s\"",
		        i + 1, i + 1, label, s[i].r->generator_bound ? " (generator-bound)" : "");
	}
	fprintf(f, "\nset ylabel 'latency (ms)'\nset logscale y\n");
	hockey_lat_range(f, o, s, n);
	fputs("plot ", f);
	if (o->max_lat_ns > 0)
		fprintf(f, "%g title 'SLO p%g' lc rgb 'red' dt 3, ", o->max_lat_ns / 1e6,
		        o->lat_q * 100);
	for (size_t i = 0; i < n; i++) {
		gp_label(label, sizeof(label), s[i].label);
		fprintf(f,
		        "%s'capacity-%zu.dat' using 1:($3>0?$3:1/0) with linespoints lc %zu dt 2 "
		        "title \"%s p50\", 'capacity-%zu.dat' using 1:($4>0?$4:1/0) with "
		        "linespoints lc %zu title \"%s p99\"",
		        i ? ", " : "", i + 1, i + 1, label, i + 1, i + 1, label);
	}
	fprintf(f, "\nunset multiplot\n");
}

int dv_plot_capacity(const char *dir, const char *gnuplot, const dv_capacity_opts_t *o,
                     const dv_plot_cap_series_t *s, size_t n, dv_err_t *err)
{
	FILE *f;
	int rc;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return dv_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	for (size_t i = 0; i < n; i++)
		if ((rc = write_series(dir, i, s[i].r, err)) != 0)
			return rc;
	if ((f = open_in(dir, "capacity.gp", err)) == NULL)
		return -EIO;
	hockey_script(f, o, s, n);
	if (fclose(f) != 0)
		return dv_err_set(err, -EIO, "%s/capacity.gp: write failed", dir);
	return dv_gnuplot_run(dir, gnuplot, "capacity.gp",
	                      (const char *const[]){"capacity.png", NULL}, 0, err);
}

/* The ramp's extent from resperf's plot file: rows, first and last time, top rate, latency. */
typedef struct ramp_range {
	size_t rows;
	double t0, t1, qps, lat_s;
} ramp_range_t;

static ramp_range_t ramp_range(const char *data)
{
	ramp_range_t r = {0, INFINITY, 0, 0, 0};
	double v[6];
	char line[512];
	FILE *f = fopen(data, "r");

	if (f == NULL)
		return r;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
		           &v[5]) != 6)
			continue; /* the header */
		r.rows++;
		r.t0 = fmin(r.t0, v[0]);
		r.t1 = fmax(r.t1, v[0]);
		r.qps = fmax(r.qps, fmax(fmax(v[1], v[2]), fmax(v[3], v[4])));
		r.lat_s = fmax(r.lat_s, v[5]);
	}
	fclose(f);
	return r;
}

/*
 * resperf-report's two panels (issue 26): axes that fit the ramp (one interval: a
 * point with room around it, not gnuplot's "empty x range"), latency in ms as every
 * other chart, legends under the panels.
 */
static void resperf_script(FILE *f, const char *q)
{
	ramp_range_t r = ramp_range(q);
	const char *with = r.rows < 3 ? "linespoints pt 7 ps 0.8" : "lines";

	fputs("# resperf-report style: rates and latency over the ramp; gnuplot resperf.gp\n"
	      "set terminal png size 1000,900\nset output 'resperf.png'\n"
	      "set multiplot layout 2,1\nset grid\nset key below horizontal samplen 3 width 2 "
	      "height 1\nset lmargin 12\nset rmargin 4\nset xlabel 'time (s)'\n",
	      f);
	if (r.rows > 0)
		fprintf(f, "set xrange [0:%g]\n",
		        r.t1 > r.t0 ? r.t1 + 0.03 * (r.t1 - r.t0) : r.t1 + fmax(r.t1, 0.25));
	fprintf(f, "set yrange [0:%g]\n", r.qps > 0 ? r.qps * 1.1 : 1);
	fprintf(f,
	        "set ylabel 'queries/s'\nset title 'Throughput over the ramp'\n"
	        "plot '%s' using 1:2 with %s title 'target', '' using 1:3 with %s "
	        "title 'sent', '' using 1:4 with %s title 'responses', '' using 1:5 with "
	        "%s title 'not answered in the interval'\n",
	        q, with, with, with, with);
	fprintf(f, "set yrange [0:%g]\n", r.lat_s > 0 ? r.lat_s * 1000 * 1.2 : 1);
	fprintf(f,
	        "set ylabel 'average latency (ms)'\nset title 'Latency over the ramp'\n"
	        "plot '%s' using 1:($6*1000) with %s title 'latency'\nunset multiplot\n",
	        q, with);
}

int dv_plot_resperf(const char *dir, const char *gnuplot, const char *data, dv_err_t *err)
{
	FILE *f;
	char q[4096];

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return dv_err_set(err, -errno, "%s: %s", dir, strerror(errno));
	if (data[0] != '/') { /* gnuplot runs in dir */
		char cwd[2048];
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return dv_err_set(err, -errno, "getcwd: %s", strerror(errno));
		snprintf(q, sizeof(q), "%s/%s", cwd, data);
	} else {
		snprintf(q, sizeof(q), "%s", data);
	}
	if (strchr(q, '\'') != NULL)
		return dv_err_set(err, -EINVAL, "%s: a quote in the plot file's path", q);
	if (ramp_range(q).rows == 0)
		return dv_err_set(
		    err, -ENODATA,
		    "no interval ended before the ramp stopped: no chart (a longer list, "
		    "or -R)");
	if ((f = open_in(dir, "resperf.gp", err)) == NULL)
		return -EIO;
	resperf_script(f, q);
	if (fclose(f) != 0)
		return dv_err_set(err, -EIO, "%s/resperf.gp: write failed", dir);
	return dv_gnuplot_run(dir, gnuplot, "resperf.gp",
	                      (const char *const[]){"resperf.png", NULL}, 0, err);
}
