/* results_read: a results file read back exactly and strictly (results_json.h). */
#include "config.h"

#include "results/results_json.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/escape.h"
#include "engine/stats.h"
#include "input/input.h"
#include "input/replay.h"
#include "results/results_fields.h"
#include "results/results_server.h"

typedef struct rctx {
	const char *name; /* file name for messages */
	dv_err_t *err;
	size_t n_intervals; /* so far, all passes: at most DV_RESULTS_MAX_INTERVALS */
	size_t lat_cells;   /* interval histograms so far: at most DV_RESULTS_MAX_LAT_CELLS units */
	char where[96];     /* "passes[3]" */
} rctx_t;

static int r_bad(rctx_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int r_bad(rctx_t *r, const char *fmt, ...)
{
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return dv_err_set(r->err, -EINVAL, "%s: %s%s%s", r->name, r->where, r->where[0] ? ": " : "",
	                  what);
}

static json_t *r_need(rctx_t *r, json_t *o, const char *k, int *rc)
{
	json_t *v = json_object_get(o, k);
	if (v == NULL && *rc == 0)
		*rc = r_bad(r, "missing \"%s\"", k);
	return v;
}

static int r_u64(rctx_t *r, json_t *o, const char *k, uint64_t max, uint64_t *out)
{
	int rc = 0;
	json_t *v = r_need(r, o, k, &rc);
	if (rc != 0)
		return rc;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return r_bad(r, "\"%s\" must be an integer from 0 to %llu", k,
		             (unsigned long long)max);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

#define R_U64(r, o, k, field, max)                                                                 \
	do {                                                                                       \
		uint64_t v_;                                                                       \
		int rc_ = r_u64((r), (o), (k), (max), &v_);                                        \
		if (rc_ != 0)                                                                      \
			return rc_;                                                                \
		(field) = v_;                                                                      \
	} while (0)

/* A number (integer or real); null reads back as NaN (non-finite values are written as null). */
static int r_dbl(rctx_t *r, json_t *o, const char *k, double *out)
{
	int rc = 0;
	json_t *v = r_need(r, o, k, &rc);
	if (rc != 0)
		return rc;
	if (json_is_null(v))
		*out = NAN;
	else if (json_is_number(v))
		*out = json_number_value(v);
	else
		return r_bad(r, "\"%s\" must be a number", k);
	return 0;
}

static int r_bool(rctx_t *r, json_t *o, const char *k, bool *out)
{
	int rc = 0;
	json_t *v = r_need(r, o, k, &rc);
	if (rc != 0)
		return rc;
	if (!json_is_boolean(v))
		return r_bad(r, "\"%s\" must be true or false", k);
	*out = json_is_true(v);
	return 0;
}

/* A string or null (optional when !required); *out is malloc'ed or NULL. */
static int r_str(rctx_t *r, json_t *o, const char *k, bool required, char **out)
{
	json_t *v = json_object_get(o, k);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		if (required)
			return r_bad(r, "\"%s\" must be a string", k);
		return 0;
	}
	if (!json_is_string(v))
		return r_bad(r, "\"%s\" must be a string", k);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return r_bad(r, "\"%s\" contains a NUL character", k);
	*out = strdup(json_string_value(v));
	if (*out == NULL)
		return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	return 0;
}

static int r_obj(rctx_t *r, json_t *o, const char *k, json_t **out)
{
	int rc = 0;
	*out = r_need(r, o, k, &rc);
	if (rc != 0)
		return rc;
	if (!json_is_object(*out))
		return r_bad(r, "\"%s\" must be an object", k);
	return 0;
}

static int r_arr(rctx_t *r, json_t *o, const char *k, json_t **out)
{
	int rc = 0;
	*out = r_need(r, o, k, &rc);
	if (rc != 0)
		return rc;
	if (!json_is_array(*out))
		return r_bad(r, "\"%s\" must be an array", k);
	return 0;
}

static int r_kind(rctx_t *r, json_t *o, dv_pass_kind_t *k)
{
	json_t *v = json_object_get(o, "kind");
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	for (int i = DV_PASS_PLAIN; s != NULL && i <= DV_PASS_WARMUP; i++)
		if (strcmp(s, dv_pass_kind_name((dv_pass_kind_t)i)) == 0) {
			*k = (dv_pass_kind_t)i;
			return 0;
		}
	return r_bad(r, "\"kind\" must be one of plain, cold, hot, warmup");
}

static int r_end(rctx_t *r, json_t *o, dv_end_reason_t *e)
{
	json_t *v = json_object_get(o, "end_reason");

	if (!json_is_string(v))
		return r_bad(r, "\"end_reason\" must be a string");
	if (strcmp(json_string_value(v), "list") == 0)
		*e = DV_END_LIST;
	else if (strcmp(json_string_value(v), "time") == 0)
		*e = DV_END_TIME;
	else if (strcmp(json_string_value(v), "interrupt") == 0)
		*e = DV_END_INTERRUPT;
	else
		return r_bad(r, "\"end_reason\" must be list, time or interrupt");
	return 0;
}

/* A pass's "clock": a name of dv_pass_clock_name, or null (not recorded, as when absent). */
static int r_clock(rctx_t *r, json_t *o, const char *key, dv_pass_clock_t *clock)
{
	json_t *v = json_object_get(o, key);

	*clock = DV_PASS_CLOCK_UNKNOWN;
	if (json_is_null(v))
		return 0;
	for (int i = DV_PASS_CLOCK_APP; json_is_string(v) && i <= DV_PASS_CLOCK_MIXED; i++)
		if (strcmp(json_string_value(v), dv_pass_clock_name((dv_pass_clock_t)i)) == 0) {
			*clock = (dv_pass_clock_t)i;
			return 0;
		}
	return r_bad(r, "\"%s\" must be app, wire, xdp, mixed or null", key);
}

/* "transport": udp, or a stream transport into rc->stream and rc->tp.kind. */
static int r_mode(rctx_t *r, json_t *o, const char *key, dv_run_config_t *rc)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return r_bad(r, "\"transport\" must be a string");
	rc->stream = strcmp(json_string_value(v), "udp") != 0;
	if (rc->stream && dv_tp_kind_parse(json_string_value(v), &rc->tp.kind) != 0)
		return r_bad(r, "\"transport\" must be %s", dv_tp_kind_list("udp", false, NULL));
	return 0;
}

static int r_field(rctx_t *r, json_t *o, void *p, const dv_jfield_t *f)
{
	uint64_t u = 0;
	double d = 0;
	bool b = false;
	char *str = NULL;
	int rc;

	if (f->opt && json_object_get(o, f->key) == NULL)
		return 0;
	switch (f->type) {
	case J_UINT:
		if ((rc = r_u64(r, o, f->key, f->max, &u)) == 0)
			dv_jf_store_uint(p, f->size, u);
		return rc;
	case J_DBL:
		if ((rc = r_dbl(r, o, f->key, &d)) == 0)
			memcpy(p, &d, sizeof(d));
		return rc;
	case J_BOOL:
		if ((rc = r_bool(r, o, f->key, &b)) == 0)
			dv_jf_store_uint(p, f->size, b);
		return rc;
	case J_STR:
	case J_LABEL:
		rc = r_str(r, o, f->key, f->type == J_LABEL, &str);
		memcpy(p, &str, sizeof(str));
		return rc;
	case J_TIME:
		return 0; /* derived; its ns are read from their own key */
	case J_KIND:
		return r_kind(r, o, (dv_pass_kind_t *)p);
	case J_END:
		return r_end(r, o, (dv_end_reason_t *)p);
	case J_CLOCK:
		return r_clock(r, o, f->key, (dv_pass_clock_t *)p);
	case J_MODE:
		return r_mode(r, o, f->key, (dv_run_config_t *)(void *)((char *)p - f->off));
	}
	return 0;
}

/* Every key of table t from o into the struct at base; the first error wins. */
static int r_fields(rctx_t *r, json_t *o, void *base, const dv_jfield_t *t, size_t n)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = r_field(r, o, (char *)base + t[i].off, &t[i])) != 0)
			return rc;
	return 0;
}

/* o[k] must be an object: its table's keys into base. */
static int r_section(rctx_t *r, json_t *o, const char *k, void *base, const dv_jfield_t *t,
                     size_t n, json_t **out)
{
	json_t *sub;
	int rc;

	if ((rc = r_obj(r, o, k, &sub)) != 0)
		return rc;
	if (out != NULL)
		*out = sub;
	return r_fields(r, sub, base, t, n);
}

/* o[k] must be an array: *arr, and *out = n zeroed elements of size (NULL when empty). */
static int r_array(rctx_t *r, json_t *o, const char *k, size_t size, json_t **arr, void **out)
{
	int rc;

	if ((rc = r_arr(r, o, k, arr)) != 0)
		return rc;
	if (json_array_size(*arr) == 0)
		return 0;
	*out = calloc(json_array_size(*arr), size);
	if (*out == NULL)
		return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	return 0;
}

static int r_rcodes(rctx_t *r, json_t *o, dv_counters_t *c)
{
	json_t *rc_arr;
	int rc;

	if ((rc = r_arr(r, o, "rcode", &rc_arr)) != 0)
		return rc;
	if (json_array_size(rc_arr) != DV_RCODES)
		return r_bad(r, "\"rcode\" must hold %d counts", DV_RCODES);
	for (int i = 0; i < DV_RCODES; i++) {
		json_t *v = json_array_get(rc_arr, (size_t)i);
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return r_bad(r, "\"rcode\"[%d] must be a non-negative integer", i);
		c->rcode[i] = (uint64_t)json_integer_value(v);
	}
	return 0;
}

static int r_qtypes(rctx_t *r, json_t *o, dv_counters_t *c)
{
	json_t *qt;
	int rc;

	if ((rc = r_arr(r, o, "qtypes", &qt)) != 0)
		return rc;
	if (json_array_size(qt) > DV_QTYPE_SLOTS)
		return r_bad(r, "\"qtypes\" has more than %d entries", DV_QTYPE_SLOTS);
	for (size_t i = 0; i < json_array_size(qt); i++) {
		json_t *e = json_array_get(qt, i);
		uint64_t slot = i, qtype;
		if (!json_is_object(e))
			return r_bad(r, "\"qtypes\"[%zu] must be an object", i);
		if (json_object_get(e, "slot") != NULL)
			R_U64(r, e, "slot", slot, DV_QTYPE_SLOTS - 1);
		R_U64(r, e, "qtype", qtype, 65535);
		if (qtype == 0)
			return r_bad(r, "\"qtypes\"[%zu]: qtype 0 is not a type", i);
		if (c->qtype[slot].qtype != 0)
			return r_bad(r, "\"qtypes\"[%zu]: slot %llu used twice", i,
			             (unsigned long long)slot);
		c->qtype[slot].qtype = (uint16_t)qtype;
		R_U64(r, e, "sent", c->qtype[slot].sent, INT64_MAX);
		R_U64(r, e, "completed", c->qtype[slot].completed, INT64_MAX);
	}
	return 0;
}

/* The DV_COUNTERS (optional ones may be absent: 0), then "rcode", "qtypes", "qtype_other". */
static int r_counters(rctx_t *r, json_t *o, dv_counters_t *c)
{
	int rc;

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < dv_counter_nfields; i++) {
		const dv_counter_field_t *f = &dv_counter_fields[i];
		if ((f->flags & DV_CTR_OPTIONAL) && json_object_get(o, f->name) == NULL)
			continue;
		if ((rc = r_u64(r, o, f->name, INT64_MAX, dv_counter_ptr(c, f))) != 0)
			return rc;
	}
	if ((rc = r_rcodes(r, o, c)) != 0 || (rc = r_qtypes(r, o, c)) != 0)
		return rc;
	return r_section(r, o, "qtype_other", c, TABLE(dv_jf_qtype_other), NULL);
}

/* A histogram ("latency", "connect", ...: name is used in messages) into h. */
static int r_latency(rctx_t *r, json_t *o, const char *name, dv_hist_t *h)
{
	json_t *b, *mn;
	uint64_t total = 0;
	int last = -1, rc;

	dv_hist_init(h);
	R_U64(r, o, "count", h->count, INT64_MAX);
	R_U64(r, o, "max_ns", h->max_ns, INT64_MAX);
	if ((rc = r_dbl(r, o, "sum_ns", &h->sum_ns)) != 0 ||
	    (rc = r_dbl(r, o, "sumsq_ns", &h->sumsq_ns)) != 0)
		return rc;
	mn = json_object_get(o, "min_ns");
	if (h->count > 0) {
		R_U64(r, o, "min_ns", h->min_ns, INT64_MAX);
		if (h->min_ns > h->max_ns)
			return r_bad(r, "%s min_ns is above max_ns", name);
	} else if (mn != NULL && !json_is_null(mn)) {
		return r_bad(r, "%s min_ns must be null when count is 0", name);
	}
	if ((rc = r_arr(r, o, "buckets", &b)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(b); i++) {
		json_t *pair = json_array_get(b, i), *lo, *n;
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !json_is_integer(lo = json_array_get(pair, 0)) ||
		    !json_is_integer(n = json_array_get(pair, 1)) || json_integer_value(lo) < 0 ||
		    json_integer_value(n) <= 0)
			return r_bad(r, "%s bucket %zu must be [low_ns, count > 0]", name, i);
		uint64_t low = (uint64_t)json_integer_value(lo);
		int idx = dv_hist_bucket_of(low);
		if (low > DV_HIST_MAX_NS || dv_hist_bucket_low(idx) != low)
			return r_bad(r,
			             "%s bucket %zu: %llu ns is not a bucket boundary of this "
			             "histogram layout",
			             name, i, (unsigned long long)low);
		if (idx <= last)
			return r_bad(r, "%s buckets must be in increasing order", name);
		last = idx;
		h->bucket[idx] = (uint64_t)json_integer_value(n);
		if (total + h->bucket[idx] < total)
			return r_bad(r, "%s bucket counts overflow", name);
		total += h->bucket[idx];
	}
	if (total != h->count)
		return r_bad(r, "%s buckets add up to %llu, count says %llu", name,
		             (unsigned long long)total, (unsigned long long)h->count);
	return 0;
}

/* Room for n more cells in res->lat_cells (*cap of them now). */
static int r_grow_cells(rctx_t *r, dv_pass_result_t *res, size_t *cap, size_t n)
{
	size_t want = res->n_lat_cells + n, ncap = *cap ? *cap : 1024;
	dv_hist_cell_t *grown;

	if (want <= *cap)
		return 0;
	while (ncap < want)
		ncap *= 2;
	grown = realloc(res->lat_cells, ncap * sizeof(*grown));
	if (grown == NULL)
		return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	res->lat_cells = grown;
	*cap = ncap;
	return 0;
}

/* "buckets" of an interval's "latency" into its cells; their sum into *total. */
static int r_interval_buckets(rctx_t *r, size_t i, json_t *b, dv_pass_result_t *res,
                              uint64_t *total)
{
	int last = -1;

	*total = 0;
	for (size_t k = 0; k < json_array_size(b); k++) {
		json_t *pair = json_array_get(b, k), *lo, *n;
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !json_is_integer(lo = json_array_get(pair, 0)) ||
		    !json_is_integer(n = json_array_get(pair, 1)) || json_integer_value(lo) < 0 ||
		    json_integer_value(n) <= 0)
			return r_bad(
			    r, "intervals[%zu]: latency bucket %zu must be [low_ns, count > 0]", i,
			    k);
		uint64_t low = (uint64_t)json_integer_value(lo);
		int idx = dv_hist_bucket_of(low);
		if (low > DV_HIST_MAX_NS || dv_hist_bucket_low(idx) != low)
			return r_bad(r,
			             "intervals[%zu]: latency bucket %zu: %llu ns is not a bucket "
			             "boundary of this histogram layout",
			             i, k, (unsigned long long)low);
		if (idx <= last)
			return r_bad(
			    r, "intervals[%zu]: latency buckets must be in increasing order", i);
		last = idx;
		dv_hist_cell_t *c = &res->lat_cells[res->n_lat_cells++];
		c->bucket = (uint32_t)idx;
		c->zero = 0;
		c->count = (uint64_t)json_integer_value(n);
		if (*total + c->count < *total)
			return r_bad(r, "intervals[%zu]: latency bucket counts overflow", i);
		*total += c->count;
	}
	return 0;
}

/* An interval's optional "latency" (its histogram, sparse): iv->lat_kept when present. */
static int r_interval_latency(rctx_t *r, size_t i, json_t *e, dv_pass_result_t *res,
                              dv_interval_t *iv, size_t *cap)
{
	json_t *o = json_object_get(e, "latency"), *b;
	uint64_t total;
	int rc;

	if (o == NULL)
		return 0;
	iv->lat_min_ns = UINT64_MAX;
	if (!json_is_object(o))
		return r_bad(r, "intervals[%zu]: \"latency\" must be an object", i);
	if ((rc = r_arr(r, o, "buckets", &b)) != 0)
		return rc;
	r->lat_cells += json_array_size(b) + 2;
	if (r->lat_cells > DV_RESULTS_MAX_LAT_CELLS)
		return r_bad(r,
		             "interval latency histograms larger than %d (a bucket counts 1, a "
		             "histogram 2 more) in the file: not read (the limit keeps memory "
		             "bounded)",
		             DV_RESULTS_MAX_LAT_CELLS);
	if (json_array_size(b) > DV_HIST_BUCKETS)
		return r_bad(r, "intervals[%zu]: more latency buckets than the histogram has", i);
	if ((rc = r_grow_cells(r, res, cap, json_array_size(b))) != 0)
		return rc;
	iv->lat_kept = true;
	iv->lat_first = res->n_lat_cells;
	iv->lat_n = (uint32_t)json_array_size(b);
	R_U64(r, o, "count", iv->lat_count, INT64_MAX);
	if ((rc = r_interval_buckets(r, i, b, res, &total)) != 0)
		return rc;
	if (total != iv->lat_count)
		return r_bad(r, "intervals[%zu]: latency buckets add up to %llu, count says %llu",
		             i, (unsigned long long)total, (unsigned long long)iv->lat_count);
	if (iv->lat_count == 0) {
		if (json_object_get(o, "min_ns") != NULL || json_object_get(o, "max_ns") != NULL)
			return r_bad(r, "intervals[%zu]: latency min_ns/max_ns without answers", i);
		return 0;
	}
	R_U64(r, o, "min_ns", iv->lat_min_ns, INT64_MAX);
	R_U64(r, o, "max_ns", iv->lat_max_ns, INT64_MAX);
	if (iv->lat_min_ns > iv->lat_max_ns)
		return r_bad(r, "intervals[%zu]: latency min_ns is above max_ns", i);
	return 0;
}

static int r_intervals(rctx_t *r, json_t *o, dv_pass_result_t *res)
{
	json_t *iv;
	size_t cap = 0;
	int rc;

	if ((rc = r_arr(r, o, "intervals", &iv)) != 0)
		return rc;
	r->n_intervals += json_array_size(iv);
	if (r->n_intervals > DV_RESULTS_MAX_INTERVALS)
		return r_bad(r,
		             "more than %d interval snapshots in the file: not read (the limit "
		             "keeps memory bounded; use a longer --stats-interval)",
		             DV_RESULTS_MAX_INTERVALS);
	if ((rc = r_array(r, o, "intervals", sizeof(dv_interval_t), &iv,
	                  (void **)&res->intervals)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(iv); i++) {
		json_t *e = json_array_get(iv, i);
		res->n_intervals = i + 1;
		if (!json_is_object(e))
			return r_bad(r, "intervals[%zu] must be an object", i);
		if ((rc = r_fields(r, e, &res->intervals[i], TABLE(dv_jf_interval))) != 0 ||
		    (rc = r_interval_latency(r, i, e, res, &res->intervals[i], &cap)) != 0)
			return rc;
	}
	return 0;
}

/* Every J_DBL of table t in the struct at base: finite and >= 0 (null reads as NaN). */
static int check_figures(rctx_t *r, const char *pre, const void *base, const dv_jfield_t *t,
                         size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v;
		if (t[i].type != J_DBL)
			continue;
		memcpy(&v, (const char *)base + t[i].off, sizeof(v));
		if (!isfinite(v) || v < 0)
			return r_bad(r, "%s\"%s\" must be a finite number >= 0", pre, t[i].key);
	}
	return 0;
}

/* Accepted qps: completed / run_time_s within rounding (files are written bit-exact). */
static bool qps_consistent(double qps, uint64_t completed, double run_time_s)
{
	double want = run_time_s > 0 ? (double)completed / run_time_s : 0;

	return isfinite(want) && fabs(qps - want) <= DV_MAX(1e-3, 1e-9 * want);
}

/*
 * The invariants of doc/numbers.md, so that no reader (report, compare, gates) computes
 * with a figure the engine cannot produce: sent = completed + lost + interrupted, late <=
 * lost, every real figure finite and >= 0, run_time_s 0 or >= 1 ns, qps = completed /
 * run_time_s. The message names the field.
 */
/* A histogram's sums: finite and >= 0 (the buckets are checked as they are read). */
static int check_hist(rctx_t *r, const char *name, const dv_hist_t *h)
{
	if (!isfinite(h->sum_ns) || h->sum_ns < 0)
		return r_bad(r, "%s \"sum_ns\" must be a finite number >= 0", name);
	if (!isfinite(h->sumsq_ns) || h->sumsq_ns < 0)
		return r_bad(r, "%s \"sumsq_ns\" must be a finite number >= 0", name);
	return 0;
}

static int check_pass(rctx_t *r, const dv_pass_record_t *p)
{
	const dv_pass_result_t *res = &p->res;
	const dv_counters_t *c = &res->stats.c;
	const dv_hist_t *h = &res->stats.latency;
	char pre[48];
	int rc;

	if (c->completed > c->sent)
		return r_bad(r, "completed %llu is above sent %llu",
		             (unsigned long long)c->completed, (unsigned long long)c->sent);
	if (c->lost > c->sent)
		return r_bad(r, "lost %llu is above sent %llu", (unsigned long long)c->lost,
		             (unsigned long long)c->sent);
	if (c->late > c->lost)
		return r_bad(r, "late %llu is above lost %llu", (unsigned long long)c->late,
		             (unsigned long long)c->lost);
	if (c->wire_timed > c->completed || c->stamps_asked > c->sent)
		return r_bad(
		    r, "wire_timed %llu is above completed, or stamps_asked %llu above sent",
		    (unsigned long long)c->wire_timed, (unsigned long long)c->stamps_asked);
	if (c->interrupted > c->sent || c->sent - c->completed - c->lost != c->interrupted ||
	    c->completed + c->lost > c->sent)
		return r_bad(r, "sent %llu is not completed %llu + lost %llu + interrupted %llu",
		             (unsigned long long)c->sent, (unsigned long long)c->completed,
		             (unsigned long long)c->lost, (unsigned long long)c->interrupted);
	if ((rc = check_figures(r, "", p, TABLE(dv_jf_pass))) != 0)
		return rc;
	if ((rc = check_hist(r, "latency", h)) != 0 ||
	    (rc = check_hist(r, "latency_intended", &res->stats.latency_intended)) != 0)
		return rc;
	if (c->sent_behind > c->sent)
		return r_bad(r, "sent_behind %llu is above sent %llu",
		             (unsigned long long)c->sent_behind, (unsigned long long)c->sent);
	if (res->run_time_s > 0 && res->run_time_s < 1e-9)
		return r_bad(r, "\"run_time_s\" must be 0 or at least 1 ns");
	if (!qps_consistent(res->qps, c->completed, res->run_time_s))
		return r_bad(r, "qps %g is not completed %llu / run_time_s %g (%g)", res->qps,
		             (unsigned long long)c->completed, res->run_time_s,
		             res->run_time_s > 0 ? (double)c->completed / res->run_time_s : 0.0);
	for (size_t i = 0; i < res->n_intervals; i++) {
		snprintf(pre, sizeof(pre), "intervals[%zu]: ", i);
		if ((rc = check_figures(r, pre, &res->intervals[i], TABLE(dv_jf_interval))) != 0)
			return rc;
	}
	return 0;
}

/* The optional "ranks" of a multi-rank pass (absent in a one-process run). */
static int r_ranks(rctx_t *r, json_t *o, dv_pass_record_t *p)
{
	json_t *ra;
	int rc;

	if (json_object_get(o, "ranks") == NULL)
		return 0;
	if ((rc = r_array(r, o, "ranks", sizeof(dv_rank_pass_t), &ra, (void **)&p->ranks)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(ra); i++) {
		json_t *e = json_array_get(ra, i), *h;
		p->n_ranks = i + 1;
		if (!json_is_object(e))
			return r_bad(r, "ranks[%zu] must be an object", i);
		if ((rc = r_fields(r, e, &p->ranks[i], TABLE(dv_jf_rank))) != 0)
			return rc;
		h = json_object_get(e, "host");
		snprintf(p->ranks[i].host, sizeof(p->ranks[i].host), "%s",
		         json_is_string(h) ? json_string_value(h) : "?");
	}
	return 0;
}

/*
 * An optional histogram o[key] (added after version 1: absent reads as empty) into h; its
 * count must be want (the counters it is kept with, named by what).
 */
static int r_opt_hist(rctx_t *r, json_t *o, const char *key, dv_hist_t *h, uint64_t want,
                      const char *what)
{
	json_t *v = json_object_get(o, key);
	int rc;

	dv_hist_init(h);
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return r_bad(r, "\"%s\" must be an object", key);
	if ((rc = r_latency(r, v, key, h)) != 0 || (rc = check_hist(r, key, h)) != 0)
		return rc;
	if (h->count != want)
		return r_bad(r, "%s count %llu differs from %s %llu", key,
		             (unsigned long long)h->count, what, (unsigned long long)want);
	return 0;
}

/* One step of "capacity"."search": its figures, verdict and why, checked. */
static int r_cap_step(rctx_t *r, size_t i, json_t *e, dv_capacity_step_t *st)
{
	char pre[48], *why = NULL;
	json_t *v;
	int rc;

	snprintf(pre, sizeof(pre), "capacity: search[%zu]: ", i);
	if (!json_is_object(e))
		return r_bad(r, "%smust be an object", pre);
	if ((rc = r_fields(r, e, st, TABLE(dv_jf_cap_step))) != 0 ||
	    (rc = check_figures(r, pre, st, TABLE(dv_jf_cap_step))) != 0)
		return rc;
	v = json_object_get(e, "verdict");
	if (dv_cap_verdict_parse(json_is_string(v) ? json_string_value(v) : NULL, &st->verdict) !=
	    0)
		return r_bad(r, "%s\"verdict\" must be pass, FAIL, generator-bound or error", pre);
	if ((rc = r_str(r, e, "why", true, &why)) != 0)
		return rc;
	if (strlen(why) >= sizeof(st->why)) {
		free(why);
		return r_bad(r, "%s\"why\" is longer than %zu bytes", pre, sizeof(st->why) - 1);
	}
	memcpy(st->why, why, strlen(why) + 1);
	free(why);
	if (st->completed > st->sent || st->lost > st->sent)
		return r_bad(r, "%scompleted %llu or lost %llu is above sent %llu", pre,
		             (unsigned long long)st->completed, (unsigned long long)st->lost,
		             (unsigned long long)st->sent);
	if (st->loss > 1)
		return r_bad(r, "%s\"loss\" must be a fraction from 0 to 1", pre);
	return 0;
}

/* The optional "capacity" of a capacity search, with its optional "search" steps. */
static int r_capacity(rctx_t *r, json_t *o, dv_pass_record_t *p)
{
	json_t *cap, *a;
	int rc;

	if (json_object_get(o, "capacity") == NULL)
		return 0;
	p->cap.searched = true;
	if ((rc = r_section(r, o, "capacity", &p->cap, TABLE(dv_jf_pass_capacity), &cap)) != 0 ||
	    (rc = check_figures(r, "capacity: ", &p->cap, TABLE(dv_jf_pass_capacity))) != 0)
		return rc;
	if (json_object_get(cap, "search") == NULL) /* optional: files before it lack it */
		return 0;
	if ((rc = r_array(r, cap, "search", sizeof(dv_capacity_step_t), &a,
	                  (void **)&p->cap_steps)) != 0)
		return rc;
	if (json_array_size(a) != p->cap.steps)
		return r_bad(r, "capacity: \"search\" holds %zu steps, \"steps\" says %u",
		             json_array_size(a), p->cap.steps);
	p->n_cap_steps = json_array_size(a);
	for (size_t i = 0; i < p->n_cap_steps; i++)
		if ((rc = r_cap_step(r, i, json_array_get(a, i), &p->cap_steps[i])) != 0)
			return rc;
	return 0;
}

/* The histograms of a pass: "latency" (count = completed; = wire_timed on the sampled wire
 * clock: stamps_asked > 0, or "clock" wire with a "stamp_every"), the optional "latency_intended"
 * (the same), "connect" (= conn_opened) and "handshake" (= tls_full + tls_resumed). */
static int r_pass_hists(rctx_t *r, json_t *o, dv_pass_result_t *res)
{
	const dv_counters_t *c = &res->stats.c;
	json_t *lat;
	int rc;

	if ((rc = r_obj(r, o, "latency", &lat)) != 0 ||
	    (rc = r_latency(r, lat, "latency", &res->stats.latency)) != 0)
		return rc;
	uint64_t n = res->stats.latency.count;
	/* Ranks merged from different clocks (MPI): each rank's count, wire_timed or completed. */
	if (res->clock == DV_PASS_CLOCK_MIXED && (n < c->wire_timed || n > c->completed))
		return r_bad(r, "latency count %llu is not from wire_timed %llu to completed %llu",
		             (unsigned long long)n, (unsigned long long)c->wire_timed,
		             (unsigned long long)c->completed);
	/* The sampled wire clock times its sample only: wire_timed answers. */
	bool sample = dv_pass_times_sample(res);
	if (res->clock != DV_PASS_CLOCK_MIXED && n != (sample ? c->wire_timed : c->completed))
		return r_bad(r, "latency count %llu differs from %s %llu", (unsigned long long)n,
		             sample ? "wire_timed" : "completed",
		             (unsigned long long)(sample ? c->wire_timed : c->completed));
	if ((rc = r_opt_hist(r, o, "latency_intended", &res->stats.latency_intended, c->completed,
	                     "completed")) != 0 ||
	    (rc = r_opt_hist(r, o, "connect", &res->stats.connect, c->conn_opened,
	                     "conn_opened")) != 0)
		return rc;
	if (c->tls_full + c->tls_resumed < c->tls_full)
		return r_bad(r, "tls_full + tls_resumed overflows");
	return r_opt_hist(r, o, "handshake", &res->stats.handshake, c->tls_full + c->tls_resumed,
	                  "tls_full + tls_resumed");
}

/*
 * The wire clock's workers by where their receive stamps came from. A file from before
 * "wire_workers" has "rx_stamp_filter" alone: its workers (threads) read as all of the one
 * kind it names, so its Latency clock line is the one it had. A file with them must agree
 * with "rx_stamp_filter" (true: every wire worker's by the filter).
 */
static int r_rx_workers(rctx_t *r, json_t *o, dv_pass_result_t *res)
{
	if (json_object_get(o, "wire_workers") == NULL &&
	    json_object_get(o, "rx_stamp_filter_workers") == NULL) {
		if (res->clock == DV_PASS_CLOCK_WIRE || res->rx_filter) {
			res->wire_workers = res->threads > 0 ? res->threads : 1;
			res->rx_filter_workers = res->rx_filter ? res->wire_workers : 0;
		}
		return 0;
	}
	if (res->rx_filter_workers > res->wire_workers)
		return r_bad(r, "rx_stamp_filter_workers %u is above wire_workers %u",
		             (unsigned)res->rx_filter_workers, (unsigned)res->wire_workers);
	bool all = res->wire_workers > 0 && res->rx_filter_workers == res->wire_workers;
	if (res->rx_filter ? !all : (all && res->clock == DV_PASS_CLOCK_WIRE))
		return r_bad(r,
		             "\"rx_stamp_filter\" is %s, but %u of %u wire workers took receive "
		             "stamps by the filter",
		             res->rx_filter ? "true" : "false", (unsigned)res->rx_filter_workers,
		             (unsigned)res->wire_workers);
	return 0;
}

static int r_pass(rctx_t *r, json_t *o, const dv_study_t *s, dv_pass_record_t *p)
{
	dv_pass_result_t *res = &p->res;
	json_t *c;
	int rc;

	if (!json_is_object(o))
		return r_bad(r, "must be an object");
	if ((rc = r_fields(r, o, p, TABLE(dv_jf_pass))) != 0 || (rc = r_rx_workers(r, o, res)) != 0)
		return rc;
	if (p->target >= s->n_targets)
		return r_bad(r, "target %zu does not exist", p->target);
	if (p->list >= s->n_lists)
		return r_bad(r, "list %zu does not exist", p->list);
	if ((rc = r_obj(r, o, "counters", &c)) != 0 || (rc = r_counters(r, c, &res->stats.c)) != 0)
		return rc;
	if ((rc = r_pass_hists(r, o, res)) != 0)
		return rc;
	if ((rc = r_section(r, o, "udp_snmp", &res->udp, TABLE(dv_jf_udp), NULL)) != 0 ||
	    (rc = r_intervals(r, o, res)) != 0)
		return rc;
	if (json_object_get(o, "xdp") != NULL) { /* optional: --xdp passes (issue 27) */
		res->xdp.used = true;
		if ((rc = r_section(r, o, "xdp", &res->xdp, TABLE(dv_jf_pass_xdp), NULL)) != 0)
			return rc;
	}
	/* One clock (not recorded or mixed aside): "xdp" exactly for the passes with an "xdp". */
	if (res->clock != DV_PASS_CLOCK_UNKNOWN && res->clock != DV_PASS_CLOCK_MIXED &&
	    (res->clock == DV_PASS_CLOCK_XDP) != res->xdp.used)
		return r_bad(r, "\"clock\" is %s, but the pass has %s \"xdp\" object",
		             dv_pass_clock_name(res->clock), res->xdp.used ? "an" : "no");
	dv_hist_init(&res->lag);
	if (json_object_get(o, "replay") != NULL) { /* optional: --timing original passes */
		json_t *rp, *lag;
		res->scheduled = true;
		if ((rc = r_section(r, o, "replay", res, TABLE(dv_jf_pass_replay), &rp)) != 0 ||
		    (rc = r_obj(r, rp, "lag", &lag)) != 0 ||
		    (rc = r_latency(r, lag, "replay lag", &res->lag)) != 0)
			return rc;
	}
	if ((rc = r_capacity(r, o, p)) != 0 || (rc = r_ranks(r, o, p)) != 0)
		return rc;
	if (json_object_get(o, "server") != NULL) { /* optional: results_server.c */
		char why[128];
		if (dv_results_server_from_json(json_object_get(o, "server"), &res->server, why,
		                                sizeof(why)) != 0)
			return r_bad(r, "%s", why);
	}
	return check_pass(r, p);
}

/* "1.2.3.4:53" / "[::1]:53" -> sockaddr; leaves AF_UNSPEC when it is not numeric. */
static void parse_addr(const char *text, struct sockaddr_storage *sa, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	unsigned long port;
	char *end;

	memset(sa, 0, sizeof(*sa));
	*len = 0;
	if (text == NULL)
		return;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (close == NULL || close[1] != ':' || (size_t)(close - text - 1) >= sizeof(host))
			return;
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (colon == NULL || (size_t)(colon - text) >= sizeof(host))
			return;
		memcpy(host, text, (size_t)(colon - text));
		host[colon - text] = '\0';
	}
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || port > 65535)
		return;
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
	}
}

/* "schema", "schema_version", "tool", command line, start, "host". */
static int r_meta(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *v;
	int rc;

	if (!json_is_object(root))
		return r_bad(r, "not a dnsvolley results file (the top level is not an object)");
	v = json_object_get(root, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), DV_RESULTS_SCHEMA_NAME) != 0)
		return r_bad(r, "not a dnsvolley results file (\"schema\" is not \"%s\")",
		             DV_RESULTS_SCHEMA_NAME);
	v = json_object_get(root, "schema_version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > DV_RESULTS_SCHEMA_VERSION)
		return r_bad(r, "unsupported schema_version (this dnsvolley reads 1 to %d)",
		             DV_RESULTS_SCHEMA_VERSION);
	if ((rc = r_section(r, root, "tool", s, TABLE(dv_jf_tool), NULL)) != 0 ||
	    (rc = r_fields(r, root, s, TABLE(dv_jf_meta))) != 0)
		return rc;
	return r_section(r, root, "host", s, TABLE(dv_jf_host), NULL);
}

static int r_plan(rctx_t *r, json_t *cfg, dv_study_t *s)
{
	json_t *plan;
	int rc;

	if ((rc = r_arr(r, cfg, "plan", &plan)) != 0)
		return rc;
	if (json_array_size(plan) > 1000)
		return r_bad(r, "\"plan\" is longer than 1000 passes");
	if ((rc = r_array(r, cfg, "plan", sizeof(*s->plan), &plan, (void **)&s->plan)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(plan); i++) {
		json_t *k = json_array_get(plan, i), *tmp = json_object();
		if (tmp == NULL)
			return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
		json_object_set(tmp, "kind", k);
		rc = r_kind(r, tmp, &s->plan[i]);
		json_decref(tmp);
		if (rc != 0)
			return rc;
		s->n_plan = i + 1;
	}
	return 0;
}

/* "edns_options": absent, null, or the -E options in wire form as hex. */
static int r_edns_options(rctx_t *r, json_t *qo, dv_querylist_options_t *ql)
{
	char *hex = NULL;
	size_t n;
	int rc;

	if ((rc = r_str(r, qo, "edns_options", false, &hex)) != 0)
		return rc;
	n = hex != NULL ? strlen(hex) : 0;
	if (n % 2 != 0 || n / 2 > DV_QUERYLIST_EDNS_OPTS_MAX) {
		free(hex);
		return r_bad(r, "\"edns_options\" must be at most %d octets of hex",
		             DV_QUERYLIST_EDNS_OPTS_MAX);
	}
	for (size_t i = 0; i < n / 2; i++) {
		unsigned byte;
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1 ||
		    !isxdigit((unsigned char)hex[2 * i]) ||
		    !isxdigit((unsigned char)hex[2 * i + 1])) {
			free(hex);
			return r_bad(r, "\"edns_options\" must be hex");
		}
		ql->edns_opts[i] = (uint8_t)byte;
	}
	ql->edns_opts_len = (uint16_t)(n / 2);
	free(hex);
	return 0;
}

/* "config"."replay" (optional): timing, speed, copies, clients, rewrites. */
static int r_replay_options(rctx_t *r, json_t *cfg, dv_study_t *s)
{
	json_t *rp;
	char *timing = NULL, *input = NULL;
	dv_err_t e;
	int rc;

	dv_replay_options_init(&s->replay);
	if (json_object_get(cfg, "replay") == NULL)
		return 0;
	if ((rc = r_section(r, cfg, "replay", &s->replay, TABLE(dv_jf_replay_opt), &rp)) != 0 ||
	    (rc = r_str(r, rp, "timing", false, &timing)) != 0 ||
	    (rc = r_str(r, rp, "input", false, &input)) != 0)
		goto out;
	if (timing != NULL && dv_replay_timing_parse(timing, &s->replay.timing, &e) != 0)
		rc = r_bad(r, "config.replay.timing must be \"list\" or \"original\"");
	else if (input != NULL && strcmp(input, "auto") != 0 &&
	         dv_input_kind_parse(input, &s->input_kind, &e) != 0)
		rc = r_bad(r, "config.replay.input is not an input kind");
out:
	free(timing);
	free(input);
	return rc;
}

static int r_config(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *cfg, *qo;
	int rc;

	if ((rc = r_obj(r, root, "config", &cfg)) != 0 || (rc = r_plan(r, cfg, s)) != 0 ||
	    (rc = r_fields(r, cfg, s, TABLE(dv_jf_config))) != 0 ||
	    (rc = r_section(r, cfg, "run", &s->run, TABLE(dv_jf_run), NULL)) != 0 ||
	    (rc = r_section(r, cfg, "query_options", &s->ql, TABLE(dv_jf_qopt), &qo)) != 0 ||
	    (rc = r_replay_options(r, cfg, s)) != 0)
		return rc;
	return r_edns_options(r, qo, &s->ql);
}

static int r_targets(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *targets;
	int rc;

	if ((rc = r_array(r, root, "targets", sizeof(*s->targets), &targets,
	                  (void **)&s->targets)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(targets); i++) {
		json_t *e = json_array_get(targets, i);
		dv_target_t *t = &s->targets[i];
		s->n_targets = i + 1;
		snprintf(r->where, sizeof(r->where), "targets[%zu]", i);
		if (!json_is_object(e))
			return r_bad(r, "must be an object");
		if ((rc = r_fields(r, e, t, TABLE(dv_jf_target))) != 0)
			return rc;
		parse_addr(t->addr_text, &t->addr, &t->addr_len);
	}
	r->where[0] = '\0';
	return 0;
}

/* "sha256": absent, null, "" or 64 lower-case hex digits. */
static int r_sha256(rctx_t *r, json_t *e, dv_list_t *l)
{
	char *sha = NULL;
	int rc;

	if ((rc = r_str(r, e, "sha256", false, &sha)) != 0 || sha == NULL)
		return rc;
	size_t n = strlen(sha);
	bool hex = n == 0 || n == 64;
	for (size_t k = 0; k < n; k++)
		hex = hex && ((sha[k] >= '0' && sha[k] <= '9') || (sha[k] >= 'a' && sha[k] <= 'f'));
	if (hex)
		memcpy(l->sha256, sha, n + 1);
	free(sha);
	if (!hex)
		return r_bad(r, "\"sha256\" must be 64 lower-case hex digits or \"\"");
	return 0;
}

/* "input" (optional): the kind read, malformed records, replay figures. */
static int r_list_input(rctx_t *r, json_t *e, dv_list_t *l)
{
	json_t *in;
	char *kind = NULL;
	int rc;

	if (json_object_get(e, "input") == NULL)
		return 0;
	if ((rc = r_section(r, e, "input", l, TABLE(dv_jf_list_input), &in)) != 0 ||
	    (rc = r_str(r, in, "kind", true, &kind)) != 0)
		return rc;
	snprintf(l->input, sizeof(l->input), "%s", kind);
	free(kind);
	return 0;
}

static int r_lists(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *lists;
	int rc;

	if ((rc = r_array(r, root, "lists", sizeof(*s->lists), &lists, (void **)&s->lists)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(lists); i++) {
		json_t *e = json_array_get(lists, i);
		dv_list_t *l = &s->lists[i];
		s->n_lists = i + 1;
		snprintf(r->where, sizeof(r->where), "lists[%zu]", i);
		if (!json_is_object(e))
			return r_bad(r, "must be an object");
		if ((rc = r_fields(r, e, l, TABLE(dv_jf_list))) != 0 ||
		    (rc = r_sha256(r, e, l)) != 0 || (rc = r_list_input(r, e, l)) != 0)
			return rc;
	}
	r->where[0] = '\0';
	return 0;
}

static int r_passes(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *passes;
	int rc;

	if ((rc = r_arr(r, root, "passes", &passes)) != 0)
		return rc;
	if (json_array_size(passes) > DV_RESULTS_MAX_PASSES)
		return r_bad(r,
		             "%zu passes, more than the %d this dnsvolley reads (the limit keeps "
		             "memory bounded)",
		             json_array_size(passes), DV_RESULTS_MAX_PASSES);
	if ((rc = r_array(r, root, "passes", sizeof(*s->passes), &passes, (void **)&s->passes)) !=
	    0)
		return rc;
	for (size_t i = 0; i < json_array_size(passes); i++) {
		s->n_passes = i + 1;
		snprintf(r->where, sizeof(r->where), "passes[%zu]", i);
		if ((rc = r_pass(r, json_array_get(passes, i), s, &s->passes[i])) != 0)
			return rc;
	}
	r->where[0] = '\0';
	return 0;
}

static int r_status(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *status, *v;
	int rc;

	if ((rc = r_section(r, root, "status", s, TABLE(dv_jf_status), &status)) != 0)
		return rc;
	v = json_object_get(status, "failed");
	if (!json_is_integer(v) || json_integer_value(v) > 0 || json_integer_value(v) < -4095)
		return r_bad(r, "\"status\".\"failed\" must be 0 or a negative error code");
	s->failed = (int)json_integer_value(v);
	v = json_object_get(status, "fail_message");
	if (json_is_string(v))
		snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", json_string_value(v));
	return 0;
}

/* One helper per section, in file order; the first error wins. */
static int study_from_json(rctx_t *r, json_t *root, dv_study_t *s)
{
	int rc;

	if ((rc = r_meta(r, root, s)) != 0 || (rc = r_config(r, root, s)) != 0 ||
	    (rc = r_targets(r, root, s)) != 0 || (rc = r_lists(r, root, s)) != 0 ||
	    (rc = r_passes(r, root, s)) != 0)
		return rc;
	return r_status(r, root, s);
}

/* About how many JSON values buf holds: '[', '{' and ',' outside strings (no parsing). */
DV_NO_COVERAGE static size_t count_values(const char *buf, size_t len)
{
	size_t n = 0;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch == ',' || ch == '[' || ch == '{') {
			n++;
		}
	}
	return n;
}

static int too_large(const char *name, dv_err_t *err)
{
	return dv_err_set(err, -EFBIG,
	                  "%s: larger than %llu MiB, more than this dnsvolley reads (the limit "
	                  "keeps memory bounded)",
	                  name, DV_RESULTS_MAX_BYTES >> 20);
}

int dv_results_read_buffer(const char *buf, size_t len, const char *name, dv_study_t *s,
                           dv_err_t *err)
{
	rctx_t r = {.name = name, .err = err};
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(s, 0, sizeof(*s));
	if (len > DV_RESULTS_MAX_BYTES)
		return too_large(name, err);
	if (count_values(buf, len) > DV_RESULTS_MAX_VALUES)
		return dv_err_set(
		    err, -EFBIG,
		    "%s: more than %d JSON values, more than this dnsvolley reads (the "
		    "limit keeps memory bounded)",
		    name, DV_RESULTS_MAX_VALUES);
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return dv_err_set(err, -EINVAL, "%s:%d: not valid JSON: %s", name, jerr.line,
		                  jerr.text);
	rc = study_from_json(&r, root, s);
	json_decref(root);
	if (rc != 0) {
		dv_study_free(s);
		memset(s, 0, sizeof(*s));
	}
	return rc;
}

int dv_results_read_json(const char *path, dv_study_t *s, dv_err_t *err)
{
	FILE *f;
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	memset(s, 0, sizeof(*s));
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (f == NULL)
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	errno = 0;
	if (f != stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    (unsigned long long)st.st_size > DV_RESULTS_MAX_BYTES) {
		rc = too_large(path, err);
		goto out;
	}
	for (;;) {
		if (cap - len < 65536) {
			if (len > DV_RESULTS_MAX_BYTES) { /* a pipe, or a file still growing */
				rc = too_large(path, err);
				goto out;
			}
			char *nb = realloc(buf, cap ? cap * 2 : 65536 * 2);
			if (nb == NULL) {
				rc = dv_err_set(err, -ENOMEM, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536 * 2;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno ? errno : EIO;
		rc = dv_err_set(err, -e, "%s: read failed: %s", path, strerror(e));
		goto out;
	}
	rc = dv_results_read_buffer(buf, len, path, s, err);
out:
	if (f != stdin)
		fclose(f);
	free(buf);
	return rc;
}

/* *p escaped in place (freed and replaced) when it holds a control character. */
static int escape_one(char **p)
{
	char *e;

	if (*p == NULL || !dv_term_needs_escape(*p))
		return 0;
	if ((e = dv_term_escape(*p)) == NULL)
		return -ENOMEM;
	free(*p);
	*p = e;
	return 0;
}

int dv_results_escape_terminal(dv_study_t *s)
{
	int rc = 0;

	for (size_t i = 0; i < s->n_targets; i++) {
		dv_target_t *t = &s->targets[i];
		rc |= escape_one(&t->label) | escape_one(&t->spec) | escape_one(&t->addr_text) |
		      escape_one(&t->flush_cmd) | escape_one(&t->server_version);
	}
	for (size_t i = 0; i < s->n_lists; i++)
		rc |= escape_one(&s->lists[i].label) | escape_one(&s->lists[i].path);
	rc |= escape_one(&s->tool_version) | escape_one(&s->cmdline) | escape_one(&s->hostname) |
	      escape_one(&s->kernel) | escape_one(&s->after_pass_cmd);
	if (dv_term_needs_escape(s->fail_msg)) {
		char *e = dv_term_escape(s->fail_msg);
		if (e == NULL)
			return -ENOMEM;
		snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", e);
		free(e);
	}
	return rc != 0 ? -ENOMEM : 0;
}
