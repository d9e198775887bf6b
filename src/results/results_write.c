/* results_write: a whole study to one JSON file with jansson (results_json.h). */
#include "config.h"

#include "results/results_json.h"

#include <errno.h>
#include <jansson.h>
#include <ldns/ldns.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomicfile.h"
#include "engine/stats.h"
#include "input/input.h"
#include "input/replay.h"
#include "results/results_fields.h"
#include "results/results_server.h"

typedef struct wctx {
	int rc;           /* first error */
	char what[128];   /* its field */
	size_t lat_cells; /* interval histograms written so far (DV_RESULTS_MAX_LAT_CELLS units) */
} wctx_t;

static void w_fail(wctx_t *w, int rc, const char *what)
{
	if (w->rc == 0) {
		w->rc = rc;
		snprintf(w->what, sizeof(w->what), "%s", what);
	}
}

static void w_set(wctx_t *w, json_t *o, const char *k, json_t *v)
{
	if (v == NULL || json_object_set_new(o, k, v) != 0)
		w_fail(w, -ENOMEM, k);
}

static void w_u64(wctx_t *w, json_t *o, const char *k, uint64_t v)
{
	if (v > (uint64_t)INT64_MAX) {
		w_fail(w, -ERANGE, k);
		return;
	}
	w_set(w, o, k, json_integer((json_int_t)v));
}

/* Doubles are written with 17 significant digits (jansson's default): they read back bit-exact. */
static void w_dbl(wctx_t *w, json_t *o, const char *k, double v)
{
	w_set(w, o, k, isfinite(v) ? json_real(v) : json_null());
}

static void w_str(wctx_t *w, json_t *o, const char *k, const char *v)
{
	w_set(w, o, k, v != NULL ? json_string(v) : json_null());
}

static void w_bool(wctx_t *w, json_t *o, const char *k, bool v)
{
	w_set(w, o, k, json_boolean(v));
}

static void w_append(wctx_t *w, json_t *a, json_t *v)
{
	if (v == NULL || json_array_append_new(a, v) != 0)
		w_fail(w, -ENOMEM, "array");
}

static const char *end_name(dv_end_reason_t e)
{
	switch (e) {
	case DV_END_LIST:
		return "list";
	case DV_END_TIME:
		return "time";
	case DV_END_INTERRUPT:
		return "interrupt";
	}
	return "?";
}

static void iso_time(uint64_t wall_ns, char *buf, size_t cap)
{
	time_t secs = (time_t)(wall_ns / DV_NS_PER_S);
	struct tm tm;

	if (gmtime_r(&secs, &tm) == NULL ||
	    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900,
	             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	             (unsigned)(wall_ns % DV_NS_PER_S / 1000)) < 0)
		snprintf(buf, cap, "?");
}

static void w_fields(wctx_t *w, json_t *o, const void *base, const dv_jfield_t *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const dv_jfield_t *f = &t[i];
		const char *p = (const char *)base + f->off;
		char when[64];
		double d;
		char *str;

		switch (f->type) {
		case J_UINT:
			w_u64(w, o, f->key, dv_jf_load_uint(p, f->size));
			break;
		case J_DBL:
			memcpy(&d, p, sizeof(d));
			w_dbl(w, o, f->key, d);
			break;
		case J_BOOL:
			w_bool(w, o, f->key, dv_jf_load_uint(p, f->size) != 0);
			break;
		case J_STR:
		case J_LABEL:
			memcpy(&str, p, sizeof(str));
			w_str(w, o, f->key, str);
			break;
		case J_TIME:
			iso_time(dv_jf_load_uint(p, f->size), when, sizeof(when));
			w_str(w, o, f->key, when);
			break;
		case J_KIND:
			w_str(w, o, f->key,
			      dv_pass_kind_name(*(const dv_pass_kind_t *)(const void *)p));
			break;
		case J_END:
			w_str(w, o, f->key, end_name(*(const dv_end_reason_t *)(const void *)p));
			break;
		case J_CLOCK:
			w_str(w, o, f->key,
			      dv_pass_clock_name(*(const dv_pass_clock_t *)(const void *)p));
			break;
		case J_MODE: {
			const dv_run_config_t *rc = base;
			w_str(w, o, f->key, dv_run_transport(rc));
			break;
		}
		}
	}
}

/* A new object with the table's keys, set as o[k]. */
static json_t *w_section(wctx_t *w, json_t *o, const char *k, const void *base,
                         const dv_jfield_t *t, size_t n)
{
	json_t *sub = json_object();

	if (sub == NULL) {
		w_fail(w, -ENOMEM, k);
		return NULL;
	}
	w_fields(w, sub, base, t, n);
	w_set(w, o, k, sub);
	return sub;
}

static json_t *w_qtypes(wctx_t *w, const dv_counters_t *c)
{
	json_t *qt = json_array();

	for (int i = 0; qt != NULL && i < DV_QTYPE_SLOTS; i++) {
		const dv_qtype_count_t *q = &c->qtype[i];
		if (q->qtype == 0)
			continue;
		json_t *e = json_object();
		char *name = ldns_rr_type2str((ldns_rr_type)q->qtype);
		w_u64(w, e, "slot", (uint64_t)i);
		w_u64(w, e, "qtype", q->qtype);
		w_str(w, e, "name", name);
		free(name);
		w_u64(w, e, "sent", q->sent);
		w_u64(w, e, "completed", q->completed);
		w_append(w, qt, e);
	}
	return qt;
}

/* The DV_COUNTERS in their order, then "rcode", "qtypes", "qtype_other". */
static json_t *w_counters(wctx_t *w, const dv_counters_t *c)
{
	json_t *o = json_object(), *rc = json_array();

	if (o == NULL || rc == NULL) {
		json_decref(o), json_decref(rc);
		w_fail(w, -ENOMEM, "counters");
		return NULL;
	}
	for (size_t i = 0; i < dv_counter_nfields; i++)
		w_u64(w, o, dv_counter_fields[i].name, dv_counter_get(c, &dv_counter_fields[i]));
	for (int i = 0; i < DV_RCODES; i++) {
		if (c->rcode[i] > (uint64_t)INT64_MAX)
			w_fail(w, -ERANGE, "rcode");
		w_append(w, rc, json_integer((json_int_t)c->rcode[i]));
	}
	w_set(w, o, "rcode", rc);
	w_set(w, o, "qtypes", w_qtypes(w, c));
	w_section(w, o, "qtype_other", c, TABLE(dv_jf_qtype_other));
	return o;
}

static json_t *w_latency(wctx_t *w, const dv_hist_t *h)
{
	json_t *o = json_object(), *b = json_array();

	if (o == NULL || b == NULL) {
		json_decref(o), json_decref(b);
		w_fail(w, -ENOMEM, "latency");
		return NULL;
	}
	w_u64(w, o, "count", h->count);
	if (h->count > 0)
		w_u64(w, o, "min_ns", h->min_ns);
	else
		w_set(w, o, "min_ns", json_null());
	w_u64(w, o, "max_ns", h->max_ns);
	w_dbl(w, o, "sum_ns", h->sum_ns);
	w_dbl(w, o, "sumsq_ns", h->sumsq_ns);
	/* Derived, for readers that do not rebuild the histogram. */
	w_dbl(w, o, "mean_ns", dv_hist_mean_ns(h));
	w_dbl(w, o, "stddev_ns", dv_hist_stddev_ns(h));
	w_u64(w, o, "p50_ns", dv_hist_quantile_ns(h, 0.50));
	w_u64(w, o, "p90_ns", dv_hist_quantile_ns(h, 0.90));
	w_u64(w, o, "p99_ns", dv_hist_quantile_ns(h, 0.99));
	w_u64(w, o, "p999_ns", dv_hist_quantile_ns(h, 0.999));
	for (int i = 0; i < DV_HIST_BUCKETS; i++) {
		if (h->bucket[i] == 0)
			continue;
		json_t *pair = json_array();
		if (h->bucket[i] > (uint64_t)INT64_MAX)
			w_fail(w, -ERANGE, "buckets");
		w_append(w, pair, json_integer((json_int_t)dv_hist_bucket_low(i)));
		w_append(w, pair, json_integer((json_int_t)h->bucket[i]));
		w_append(w, b, pair);
	}
	w_set(w, o, "buckets", b);
	return o;
}

/*
 * An interval's optional "latency": its histogram, sparse ("buckets" as the pass's),
 * while the file's total stays within DV_RESULTS_MAX_LAT_CELLS (past it, none: the
 * interval reads back without a histogram).
 */
static void w_interval_latency(wctx_t *w, json_t *e, const dv_pass_result_t *r,
                               const dv_interval_t *iv)
{
	json_t *o, *b;

	if (!iv->lat_kept || w->lat_cells + iv->lat_n + 2 > DV_RESULTS_MAX_LAT_CELLS)
		return;
	o = json_object();
	b = json_array();
	if (o == NULL || b == NULL) {
		json_decref(o), json_decref(b);
		w_fail(w, -ENOMEM, "intervals");
		return;
	}
	w_u64(w, o, "count", iv->lat_count);
	if (iv->lat_n > 0) {
		w_u64(w, o, "min_ns", iv->lat_min_ns);
		w_u64(w, o, "max_ns", iv->lat_max_ns);
	}
	for (uint32_t k = 0; k < iv->lat_n; k++) {
		const dv_hist_cell_t *c = &r->lat_cells[iv->lat_first + k];
		json_t *pair = json_array();
		if (c->count > (uint64_t)INT64_MAX)
			w_fail(w, -ERANGE, "intervals");
		w_append(w, pair, json_integer((json_int_t)dv_hist_bucket_low((int)c->bucket)));
		w_append(w, pair, json_integer((json_int_t)c->count));
		w_append(w, b, pair);
	}
	w->lat_cells += iv->lat_n + 2;
	w_set(w, o, "buckets", b);
	w_set(w, e, "latency", o);
}

/* A capacity search's steps as cap["search"] (when the study kept them). */
static void w_cap_steps(wctx_t *w, json_t *cap, const dv_pass_record_t *p)
{
	json_t *a;

	if (cap == NULL || p->cap_steps == NULL)
		return;
	if ((a = json_array()) == NULL) {
		w_fail(w, -ENOMEM, "search");
		return;
	}
	for (size_t i = 0; i < p->n_cap_steps; i++) {
		const dv_capacity_step_t *st = &p->cap_steps[i];
		json_t *e = json_object();
		if (e == NULL) {
			w_fail(w, -ENOMEM, "search");
			break;
		}
		w_fields(w, e, st, TABLE(dv_jf_cap_step));
		w_str(w, e, "verdict", dv_cap_verdict_name(st->verdict));
		w_str(w, e, "why", st->why);
		w_append(w, a, e);
	}
	w_set(w, cap, "search", a);
}

/*
 * The wire clock's sample (stamps_asked below sent): each percentile's distribution-free 95%
 * interval, "pXX_ci95_ns": [low, high] beside "pXX_ns" (doc/results-schema.md).
 */
static void w_latency_ci(wctx_t *w, json_t *lat, const dv_pass_result_t *r)
{
	static const struct {
		const char *key;
		double q;
	} qs[] = {{"p50_ci95_ns", 0.50},
	          {"p90_ci95_ns", 0.90},
	          {"p99_ci95_ns", 0.99},
	          {"p999_ci95_ns", 0.999}};

	if (lat == NULL || !dv_pass_sample_partial(r) || r->stats.latency.count == 0)
		return;
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t lo, hi;
		json_t *a = json_array();
		dv_hist_quantile_ci95(&r->stats.latency, qs[i].q, &lo, &hi);
		if (a == NULL) {
			w_fail(w, -ENOMEM, "latency");
			return;
		}
		w_append(w, a, json_integer((json_int_t)lo));
		w_append(w, a, json_integer((json_int_t)hi));
		w_set(w, lat, qs[i].key, a);
	}
}

static json_t *w_pass(wctx_t *w, const dv_pass_record_t *p)
{
	const dv_pass_result_t *r = &p->res;
	json_t *o = json_object(), *iv = json_array();

	if (o == NULL || iv == NULL) {
		json_decref(o), json_decref(iv);
		w_fail(w, -ENOMEM, "pass");
		return NULL;
	}
	w_fields(w, o, p, TABLE(dv_jf_pass));
	w_set(w, o, "counters", w_counters(w, &r->stats.c));
	{
		json_t *lat = w_latency(w, &r->stats.latency);
		w_latency_ci(w, lat, r);
		w_set(w, o, "latency", lat);
	}
	if (r->stats.latency_intended.count > 0) /* optional: paced runs only */
		w_set(w, o, "latency_intended", w_latency(w, &r->stats.latency_intended));
	/* optional: stream transports (connections made, TLS handshakes done) */
	if (r->stats.connect.count > 0)
		w_set(w, o, "connect", w_latency(w, &r->stats.connect));
	if (r->stats.handshake.count > 0)
		w_set(w, o, "handshake", w_latency(w, &r->stats.handshake));
	if (r->xdp.used) /* optional: --xdp passes */
		w_section(w, o, "xdp", &r->xdp, TABLE(dv_jf_pass_xdp));
	w_section(w, o, "udp_snmp", &r->udp, TABLE(dv_jf_udp));
	if (r->server.measured) /* optional: a server was looked at */
		w_set(w, o, "server", dv_results_server_to_json(&r->server));
	if (p->cap.searched) /* optional: capacity studies */
		w_cap_steps(w, w_section(w, o, "capacity", &p->cap, TABLE(dv_jf_pass_capacity)), p);
	if (r->scheduled) {
		json_t *rp = w_section(w, o, "replay", r, TABLE(dv_jf_pass_replay));
		if (rp != NULL)
			w_set(w, rp, "lag", w_latency(w, &r->lag));
	}
	for (size_t i = 0; i < r->n_intervals && r->intervals != NULL; i++) {
		json_t *e = json_object();
		if (e == NULL) {
			w_fail(w, -ENOMEM, "intervals");
			break;
		}
		w_fields(w, e, &r->intervals[i], TABLE(dv_jf_interval));
		w_interval_latency(w, e, r, &r->intervals[i]);
		w_append(w, iv, e);
	}
	w_set(w, o, "intervals", iv);
	if (p->n_ranks > 0) {
		json_t *ra = json_array();
		for (size_t i = 0; ra != NULL && i < p->n_ranks; i++) {
			json_t *e = json_object();
			if (e == NULL)
				break;
			w_fields(w, e, &p->ranks[i], TABLE(dv_jf_rank));
			w_str(w, e, "host", p->ranks[i].host);
			w_str(w, e, "error", p->ranks[i].error ? p->ranks[i].error_msg : NULL);
			w_append(w, ra, e);
		}
		if (ra == NULL)
			w_fail(w, -ENOMEM, "ranks");
		w_set(w, o, "ranks", ra);
	}
	return o;
}

/* "schema", "schema_version", "tool", command line, start, "host". */
static void w_meta(wctx_t *w, json_t *root, const dv_study_t *s)
{
	json_t *tool = json_object();

	w_str(w, root, "schema", DV_RESULTS_SCHEMA_NAME);
	w_u64(w, root, "schema_version", DV_RESULTS_SCHEMA_VERSION);
	if (tool != NULL) {
		w_str(w, tool, "name", "dnsvolley");
		w_fields(w, tool, s, TABLE(dv_jf_tool));
	}
	w_set(w, root, "tool", tool);
	w_fields(w, root, s, TABLE(dv_jf_meta));
	w_section(w, root, "host", s, TABLE(dv_jf_host));
}

static void w_config(wctx_t *w, json_t *root, const dv_study_t *s)
{
	json_t *cfg = json_object(), *plan = json_array(), *qo;

	for (size_t i = 0; plan != NULL && i < s->n_plan; i++)
		w_append(w, plan, json_string(dv_pass_kind_name(s->plan[i])));
	if (cfg == NULL) {
		json_decref(plan);
		w_fail(w, -ENOMEM, "config");
		return;
	}
	w_set(w, cfg, "plan", plan);
	w_fields(w, cfg, s, TABLE(dv_jf_config));
	w_section(w, cfg, "run", &s->run, TABLE(dv_jf_run));
	qo = w_section(w, cfg, "query_options", &s->ql, TABLE(dv_jf_qopt));
	if (qo != NULL && s->ql.edns_opts_len > 0) { /* -E options in wire form, as hex */
		char hex[2 * DV_QUERYLIST_EDNS_OPTS_MAX + 1];
		for (size_t i = 0; i < s->ql.edns_opts_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", s->ql.edns_opts[i]);
		w_str(w, qo, "edns_options", hex);
	}
	qo = w_section(w, cfg, "replay", &s->replay, TABLE(dv_jf_replay_opt));
	if (qo != NULL) {
		w_str(w, qo, "timing", dv_replay_timing_name(s->replay.timing));
		w_str(w, qo, "input", dv_input_kind_name(s->input_kind));
	}
	w_set(w, root, "config", cfg);
}

static void w_list_sha(wctx_t *w, json_t *e, const void *list)
{
	const dv_list_t *l = list;
	json_t *in;

	w_str(w, e, "sha256", l->sha256);
	if (l->input[0] == '\0')
		return;
	in = w_section(w, e, "input", l, TABLE(dv_jf_list_input));
	if (in != NULL)
		w_str(w, in, "kind", l->input);
}

/*
 * root[k] = an array of n objects, element i from table t at base + i * size,
 * then extra (may be NULL) for the keys the table does not hold.
 */
static void w_array(wctx_t *w, json_t *root, const char *k, const void *base, size_t n, size_t size,
                    const dv_jfield_t *t, size_t nt,
                    void (*extra)(wctx_t *, json_t *, const void *))
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < n; i++) {
		json_t *e = json_object();
		if (e == NULL) {
			w_fail(w, -ENOMEM, k);
			break;
		}
		w_fields(w, e, (const char *)base + i * size, t, nt);
		if (extra != NULL)
			extra(w, e, (const char *)base + i * size);
		w_append(w, a, e);
	}
	w_set(w, root, k, a);
}

static json_t *study_to_json(const dv_study_t *s, wctx_t *w)
{
	json_t *root = json_object(), *passes = json_array(), *status;

	if (root == NULL || passes == NULL) {
		json_decref(root), json_decref(passes);
		w_fail(w, -ENOMEM, "document");
		return NULL;
	}
	w_meta(w, root, s);
	w_config(w, root, s);
	w_array(w, root, "targets", s->targets, s->n_targets, sizeof(*s->targets),
	        TABLE(dv_jf_target), NULL);
	w_array(w, root, "lists", s->lists, s->n_lists, sizeof(*s->lists), TABLE(dv_jf_list),
	        w_list_sha);
	for (size_t i = 0; i < s->n_passes; i++)
		w_append(w, passes, w_pass(w, &s->passes[i]));
	w_set(w, root, "passes", passes);
	status = w_section(w, root, "status", s, TABLE(dv_jf_status));
	if (status != NULL) {
		w_set(w, status, "failed", json_integer(s->failed));
		w_str(w, status, "fail_message", s->failed ? s->fail_msg : NULL);
	}
	if (w->rc != 0) {
		json_decref(root);
		return NULL;
	}
	return root;
}

static int w_error(const wctx_t *w, const char *name, dv_err_t *err)
{
	if (w->rc == -ERANGE)
		return dv_err_set(err, w->rc, "%s: value of %s too large for a results file", name,
		                  w->what);
	return dv_err_set(err, w->rc, "%s: out of memory while writing %s", name, w->what);
}

char *dv_results_dump_json(const dv_study_t *s, dv_err_t *err)
{
	wctx_t w = {0};
	json_t *root = study_to_json(s, &w);
	char *text;

	if (root == NULL) {
		w_error(&w, "results", err);
		return NULL;
	}
	text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (text == NULL)
		dv_err_set(err, -ENOMEM, "results: out of memory");
	return text;
}

int dv_results_write_json(const dv_study_t *s, const char *path, dv_err_t *err)
{
	wctx_t w = {0};
	dv_atomicfile_t f;
	json_t *root;
	int rc;

	root = study_to_json(s, &w);
	if (root == NULL)
		return w_error(&w, path, err);
	rc = dv_atomicfile_open(&f, path, false, err);
	if (rc != 0) {
		json_decref(root);
		return rc;
	}
	errno = 0;
	if (json_dumpf(root, f.fp, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 ||
	    fputc('\n', f.fp) == EOF) {
		int e = errno ? errno : EIO; /* the stdio write's: ENOSPC on a full disk */
		json_decref(root);
		dv_atomicfile_abort(&f);
		return dv_err_set(err, -e, "%s: write failed: %s", path, strerror(e));
	}
	json_decref(root);
	return dv_atomicfile_commit(&f, err);
}
