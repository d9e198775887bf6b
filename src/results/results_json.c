/* results_json: a whole study to one JSON file with jansson, and read back exactly and strictly. */
#include "config.h"

#include "results/results_json.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <ldns/ldns.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomicfile.h"

/* ================================================================ writing */

typedef struct wctx {
	int rc;         /* first error */
	char what[128]; /* its field */
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

static json_t *w_counters(wctx_t *w, const dv_counters_t *c)
{
	json_t *o = json_object(), *rc = json_array(), *qt = json_array(), *qo = json_object();

	if (o == NULL || rc == NULL || qt == NULL || qo == NULL) {
		json_decref(o), json_decref(rc), json_decref(qt), json_decref(qo);
		w_fail(w, -ENOMEM, "counters");
		return NULL;
	}
	w_u64(w, o, "sent", c->sent);
	w_u64(w, o, "not_sent", c->not_sent);
	w_u64(w, o, "completed", c->completed);
	w_u64(w, o, "lost", c->lost);
	w_u64(w, o, "late", c->late);
	w_u64(w, o, "interrupted", c->interrupted);
	w_u64(w, o, "unexpected", c->unexpected);
	w_u64(w, o, "malformed", c->malformed);
	w_u64(w, o, "truncated", c->truncated);
	w_u64(w, o, "icmp_errors", c->icmp_errors);
	w_u64(w, o, "bytes_sent", c->bytes_sent);
	w_u64(w, o, "bytes_received", c->bytes_received);
	w_u64(w, o, "send_calls", c->send_calls);
	w_u64(w, o, "recv_calls", c->recv_calls);
	w_u64(w, o, "wait_calls", c->wait_calls);
	w_u64(w, o, "inflight_peak", c->inflight_peak);
	for (int i = 0; i < DV_RCODES; i++) {
		if (c->rcode[i] > (uint64_t)INT64_MAX)
			w_fail(w, -ERANGE, "rcode");
		w_append(w, rc, json_integer((json_int_t)c->rcode[i]));
	}
	w_set(w, o, "rcode", rc);
	for (int i = 0; i < DV_QTYPE_SLOTS; i++) {
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
	w_set(w, o, "qtypes", qt);
	w_u64(w, qo, "sent", c->qtype_other_sent);
	w_u64(w, qo, "completed", c->qtype_other_completed);
	w_set(w, o, "qtype_other", qo);
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

static json_t *w_pass(wctx_t *w, const dv_pass_record_t *p)
{
	const dv_pass_result_t *r = &p->res;
	json_t *o = json_object(), *udp = json_object(), *iv = json_array();
	char when[64];

	if (o == NULL || udp == NULL || iv == NULL) {
		json_decref(o), json_decref(udp), json_decref(iv);
		w_fail(w, -ENOMEM, "pass");
		return NULL;
	}
	w_u64(w, o, "target", p->target);
	w_u64(w, o, "list", p->list);
	w_u64(w, o, "repeat", p->repeat);
	w_str(w, o, "kind", dv_pass_kind_name(p->kind));
	w_dbl(w, o, "flush_s", p->flush_s);
	w_dbl(w, o, "ready_wait_s", p->ready_wait_s);
	w_str(w, o, "end_reason", end_name(r->end));
	w_bool(w, o, "interrupted", r->interrupted);
	iso_time(r->start_wall_ns, when, sizeof(when));
	w_str(w, o, "start_time", when);
	w_u64(w, o, "start_wall_ns", r->start_wall_ns);
	w_dbl(w, o, "run_time_s", r->run_time_s);
	w_dbl(w, o, "elapsed_s", r->elapsed_s);
	w_dbl(w, o, "qps", r->qps);
	w_dbl(w, o, "cpu_user_s", r->cpu_user_s);
	w_dbl(w, o, "cpu_sys_s", r->cpu_sys_s);
	w_u64(w, o, "sockets", r->sockets);
	w_u64(w, o, "threads", r->threads);
	w_u64(w, o, "max_outstanding", r->max_outstanding);
	w_set(w, o, "counters", w_counters(w, &r->stats.c));
	w_set(w, o, "latency", w_latency(w, &r->stats.latency));
	w_bool(w, udp, "valid", r->udp.valid != 0);
	w_u64(w, udp, "in_datagrams", r->udp.in_datagrams);
	w_u64(w, udp, "no_ports", r->udp.no_ports);
	w_u64(w, udp, "in_errors", r->udp.in_errors);
	w_u64(w, udp, "out_datagrams", r->udp.out_datagrams);
	w_u64(w, udp, "rcvbuf_errors", r->udp.rcvbuf_errors);
	w_u64(w, udp, "sndbuf_errors", r->udp.sndbuf_errors);
	w_set(w, o, "udp_snmp", udp);
	for (size_t i = 0; i < r->n_intervals && r->intervals != NULL; i++) {
		const dv_interval_t *x = &r->intervals[i];
		json_t *e = json_object();
		if (e == NULL) {
			w_fail(w, -ENOMEM, "intervals");
			break;
		}
		w_dbl(w, e, "t_s", x->t_s);
		w_u64(w, e, "sent", x->sent);
		w_u64(w, e, "completed", x->completed);
		w_u64(w, e, "lost", x->lost);
		w_u64(w, e, "inflight", x->inflight);
		w_dbl(w, e, "qps", x->qps);
		w_dbl(w, e, "lat_mean_ns", x->lat_mean_ns);
		w_dbl(w, e, "lat_p50_ns", x->lat_p50_ns);
		w_dbl(w, e, "lat_p99_ns", x->lat_p99_ns);
		w_append(w, iv, e);
	}
	w_set(w, o, "intervals", iv);
	return o;
}

static json_t *study_to_json(const dv_study_t *s, wctx_t *w)
{
	json_t *root = json_object(), *tool = json_object(), *host = json_object();
	json_t *cfg = json_object(), *run = json_object(), *qo = json_object(),
	       *plan = json_array();
	json_t *targets = json_array(), *lists = json_array(), *passes = json_array();
	json_t *status = json_object();
	char when[64];

	if (!root || !tool || !host || !cfg || !run || !qo || !plan || !targets || !lists ||
	    !passes || !status) {
		json_decref(root), json_decref(tool), json_decref(host), json_decref(cfg);
		json_decref(run), json_decref(qo), json_decref(plan), json_decref(targets);
		json_decref(lists), json_decref(passes), json_decref(status);
		w_fail(w, -ENOMEM, "document");
		return NULL;
	}
	w_str(w, root, "schema", DV_RESULTS_SCHEMA_NAME);
	w_u64(w, root, "schema_version", DV_RESULTS_SCHEMA_VERSION);
	w_str(w, tool, "name", "dnsvolley");
	w_str(w, tool, "version", s->tool_version);
	w_set(w, root, "tool", tool);
	w_str(w, root, "command_line", s->cmdline);
	iso_time(s->start_wall_ns, when, sizeof(when));
	w_str(w, root, "start_time", when);
	w_u64(w, root, "start_wall_ns", s->start_wall_ns);
	w_str(w, host, "name", s->hostname);
	w_str(w, host, "kernel", s->kernel);
	w_u64(w, host, "cpus", s->ncpu);
	w_set(w, root, "host", host);

	for (size_t i = 0; i < s->n_plan; i++)
		w_append(w, plan, json_string(dv_pass_kind_name(s->plan[i])));
	w_set(w, cfg, "plan", plan);
	w_u64(w, cfg, "repeat", s->repeat);
	w_bool(w, cfg, "warmup", s->warmup);
	w_u64(w, cfg, "ready_timeout_ns", s->ready_timeout_ns);
	w_u64(w, run, "sockets", s->run.sockets);
	w_u64(w, run, "threads", s->run.threads);
	w_u64(w, run, "max_outstanding", s->run.max_outstanding);
	w_u64(w, run, "timeout_ns", s->run.timeout_ns);
	w_u64(w, run, "time_limit_ns", s->run.time_limit_ns);
	w_u64(w, run, "passes", s->run.passes);
	w_dbl(w, run, "max_qps", s->run.max_qps);
	w_u64(w, run, "interval_ns", s->run.interval_ns);
	w_u64(w, run, "local_port", s->run.local_port);
	w_set(w, cfg, "run", run);
	w_bool(w, qo, "rd", s->ql.rd);
	w_bool(w, qo, "edns", s->ql.edns);
	w_u64(w, qo, "edns_bufsize", s->ql.edns_bufsize);
	w_bool(w, qo, "dnssec_ok", s->ql.dnssec_ok);
	w_bool(w, qo, "skip_bad", s->ql.skip_bad);
	if (s->ql.edns_opts_len > 0) { /* -E options in wire form, as hex */
		char hex[2 * DV_QL_EDNS_OPTS_MAX + 1];
		for (size_t i = 0; i < s->ql.edns_opts_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", s->ql.edns_opts[i]);
		w_str(w, qo, "edns_options", hex);
	}
	w_set(w, cfg, "query_options", qo);
	w_set(w, root, "config", cfg);

	for (size_t i = 0; i < s->n_targets; i++) {
		const dv_target_t *t = &s->targets[i];
		json_t *e = json_object();
		if (e == NULL) {
			w_fail(w, -ENOMEM, "targets");
			break;
		}
		w_str(w, e, "label", t->label);
		w_str(w, e, "spec", t->spec);
		w_str(w, e, "address", t->addr_text);
		w_str(w, e, "flush_command", t->flush_cmd);
		w_str(w, e, "server_version", t->server_version);
		w_append(w, targets, e);
	}
	w_set(w, root, "targets", targets);
	for (size_t i = 0; i < s->n_lists; i++) {
		const dv_list_t *l = &s->lists[i];
		json_t *e = json_object();
		if (e == NULL) {
			w_fail(w, -ENOMEM, "lists");
			break;
		}
		w_str(w, e, "label", l->label);
		w_str(w, e, "path", l->path);
		w_u64(w, e, "queries", l->queries);
		w_u64(w, e, "lines", l->lines);
		w_str(w, e, "sha256", l->sha256);
		w_append(w, lists, e);
	}
	w_set(w, root, "lists", lists);
	for (size_t i = 0; i < s->n_passes; i++)
		w_append(w, passes, w_pass(w, &s->passes[i]));
	w_set(w, root, "passes", passes);
	w_bool(w, status, "interrupted", s->interrupted);
	w_set(w, status, "failed", json_integer(s->failed));
	w_str(w, status, "fail_message", s->failed ? s->fail_msg : NULL);
	w_set(w, root, "status", status);
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
	dv_afile_t f;
	json_t *root;
	int rc;

	root = study_to_json(s, &w);
	if (root == NULL)
		return w_error(&w, path, err);
	rc = dv_afile_open(&f, path, false, err);
	if (rc != 0) {
		json_decref(root);
		return rc;
	}
	if (json_dumpf(root, f.fp, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 ||
	    fputc('\n', f.fp) == EOF) {
		json_decref(root);
		dv_afile_abort(&f);
		return dv_err_set(err, -EIO, "%s: write failed", path);
	}
	json_decref(root);
	return dv_afile_commit(&f, err);
}

/* ================================================================ reading */

typedef struct rctx {
	const char *name; /* file name for messages */
	dv_err_t *err;
	char where[96]; /* "passes[3]" */
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

static int r_counters(rctx_t *r, json_t *o, dv_counters_t *c)
{
	json_t *rc_arr, *qt, *qo;
	int rc;

	memset(c, 0, sizeof(*c));
	R_U64(r, o, "sent", c->sent, INT64_MAX);
	R_U64(r, o, "not_sent", c->not_sent, INT64_MAX);
	R_U64(r, o, "completed", c->completed, INT64_MAX);
	R_U64(r, o, "lost", c->lost, INT64_MAX);
	R_U64(r, o, "late", c->late, INT64_MAX);
	R_U64(r, o, "interrupted", c->interrupted, INT64_MAX);
	R_U64(r, o, "unexpected", c->unexpected, INT64_MAX);
	R_U64(r, o, "malformed", c->malformed, INT64_MAX);
	R_U64(r, o, "truncated", c->truncated, INT64_MAX);
	R_U64(r, o, "icmp_errors", c->icmp_errors, INT64_MAX);
	R_U64(r, o, "bytes_sent", c->bytes_sent, INT64_MAX);
	R_U64(r, o, "bytes_received", c->bytes_received, INT64_MAX);
	R_U64(r, o, "send_calls", c->send_calls, INT64_MAX);
	R_U64(r, o, "recv_calls", c->recv_calls, INT64_MAX);
	if (json_object_get(o, "wait_calls") != NULL) /* optional: absent in early files */
		R_U64(r, o, "wait_calls", c->wait_calls, INT64_MAX);
	R_U64(r, o, "inflight_peak", c->inflight_peak, INT64_MAX);
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
	if ((rc = r_obj(r, o, "qtype_other", &qo)) != 0)
		return rc;
	R_U64(r, qo, "sent", c->qtype_other_sent, INT64_MAX);
	R_U64(r, qo, "completed", c->qtype_other_completed, INT64_MAX);
	return 0;
}

static int r_latency(rctx_t *r, json_t *o, dv_hist_t *h)
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
			return r_bad(r, "latency min_ns is above max_ns");
	} else if (mn != NULL && !json_is_null(mn)) {
		return r_bad(r, "latency min_ns must be null when count is 0");
	}
	if ((rc = r_arr(r, o, "buckets", &b)) != 0)
		return rc;
	for (size_t i = 0; i < json_array_size(b); i++) {
		json_t *pair = json_array_get(b, i), *lo, *n;
		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !json_is_integer(lo = json_array_get(pair, 0)) ||
		    !json_is_integer(n = json_array_get(pair, 1)) || json_integer_value(lo) < 0 ||
		    json_integer_value(n) <= 0)
			return r_bad(r, "latency bucket %zu must be [low_ns, count > 0]", i);
		uint64_t low = (uint64_t)json_integer_value(lo);
		int idx = dv_hist_bucket_of(low);
		if (low > DV_HIST_MAX_NS || dv_hist_bucket_low(idx) != low)
			return r_bad(r,
			             "latency bucket %zu: %llu ns is not a bucket boundary of this "
			             "histogram layout",
			             i, (unsigned long long)low);
		if (idx <= last)
			return r_bad(r, "latency buckets must be in increasing order");
		last = idx;
		h->bucket[idx] = (uint64_t)json_integer_value(n);
		if (total + h->bucket[idx] < total)
			return r_bad(r, "latency bucket counts overflow");
		total += h->bucket[idx];
	}
	if (total != h->count)
		return r_bad(r, "latency buckets add up to %llu, count says %llu",
		             (unsigned long long)total, (unsigned long long)h->count);
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

static int r_pass(rctx_t *r, json_t *o, const dv_study_t *s, dv_pass_record_t *p)
{
	dv_pass_result_t *res = &p->res;
	json_t *c, *lat, *udp, *iv, *v;
	uint64_t u;
	bool valid;
	int rc;

	if (!json_is_object(o))
		return r_bad(r, "must be an object");
	R_U64(r, o, "target", p->target, INT64_MAX);
	R_U64(r, o, "list", p->list, INT64_MAX);
	if (p->target >= s->n_targets)
		return r_bad(r, "target %zu does not exist", p->target);
	if (p->list >= s->n_lists)
		return r_bad(r, "list %zu does not exist", p->list);
	R_U64(r, o, "repeat", p->repeat, 1000000);
	if ((rc = r_kind(r, o, &p->kind)) != 0 || (rc = r_dbl(r, o, "flush_s", &p->flush_s)) != 0 ||
	    (rc = r_dbl(r, o, "ready_wait_s", &p->ready_wait_s)) != 0)
		return rc;
	v = json_object_get(o, "end_reason");
	if (!json_is_string(v))
		return r_bad(r, "\"end_reason\" must be a string");
	if (strcmp(json_string_value(v), "list") == 0)
		res->end = DV_END_LIST;
	else if (strcmp(json_string_value(v), "time") == 0)
		res->end = DV_END_TIME;
	else if (strcmp(json_string_value(v), "interrupt") == 0)
		res->end = DV_END_INTERRUPT;
	else
		return r_bad(r, "\"end_reason\" must be list, time or interrupt");
	if ((rc = r_bool(r, o, "interrupted", &res->interrupted)) != 0)
		return rc;
	R_U64(r, o, "start_wall_ns", res->start_wall_ns, INT64_MAX);
	if ((rc = r_dbl(r, o, "run_time_s", &res->run_time_s)) != 0 ||
	    (rc = r_dbl(r, o, "elapsed_s", &res->elapsed_s)) != 0 ||
	    (rc = r_dbl(r, o, "qps", &res->qps)) != 0 ||
	    (rc = r_dbl(r, o, "cpu_user_s", &res->cpu_user_s)) != 0 ||
	    (rc = r_dbl(r, o, "cpu_sys_s", &res->cpu_sys_s)) != 0)
		return rc;
	R_U64(r, o, "sockets", res->sockets, UINT32_MAX);
	R_U64(r, o, "threads", res->threads, UINT32_MAX);
	R_U64(r, o, "max_outstanding", res->max_outstanding, UINT32_MAX);
	if ((rc = r_obj(r, o, "counters", &c)) != 0 || (rc = r_counters(r, c, &res->stats.c)) != 0)
		return rc;
	if ((rc = r_obj(r, o, "latency", &lat)) != 0 ||
	    (rc = r_latency(r, lat, &res->stats.latency)) != 0)
		return rc;
	if (res->stats.latency.count != res->stats.c.completed)
		return r_bad(r, "latency count %llu differs from completed %llu",
		             (unsigned long long)res->stats.latency.count,
		             (unsigned long long)res->stats.c.completed);
	if ((rc = r_obj(r, o, "udp_snmp", &udp)) != 0 ||
	    (rc = r_bool(r, udp, "valid", &valid)) != 0)
		return rc;
	res->udp.valid = valid;
	R_U64(r, udp, "in_datagrams", res->udp.in_datagrams, INT64_MAX);
	R_U64(r, udp, "no_ports", res->udp.no_ports, INT64_MAX);
	R_U64(r, udp, "in_errors", res->udp.in_errors, INT64_MAX);
	R_U64(r, udp, "out_datagrams", res->udp.out_datagrams, INT64_MAX);
	R_U64(r, udp, "rcvbuf_errors", res->udp.rcvbuf_errors, INT64_MAX);
	R_U64(r, udp, "sndbuf_errors", res->udp.sndbuf_errors, INT64_MAX);
	if ((rc = r_arr(r, o, "intervals", &iv)) != 0)
		return rc;
	if (json_array_size(iv) > 0) {
		res->intervals = calloc(json_array_size(iv), sizeof(dv_interval_t));
		if (res->intervals == NULL)
			return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	}
	for (size_t i = 0; i < json_array_size(iv); i++) {
		json_t *e = json_array_get(iv, i);
		dv_interval_t *x = &res->intervals[i];
		res->n_intervals = i + 1;
		if (!json_is_object(e))
			return r_bad(r, "intervals[%zu] must be an object", i);
		if ((rc = r_dbl(r, e, "t_s", &x->t_s)) != 0)
			return rc;
		R_U64(r, e, "sent", u, INT64_MAX);
		x->sent = u;
		R_U64(r, e, "completed", x->completed, INT64_MAX);
		R_U64(r, e, "lost", x->lost, INT64_MAX);
		R_U64(r, e, "inflight", x->inflight, INT64_MAX);
		if ((rc = r_dbl(r, e, "qps", &x->qps)) != 0 ||
		    (rc = r_dbl(r, e, "lat_mean_ns", &x->lat_mean_ns)) != 0 ||
		    (rc = r_dbl(r, e, "lat_p50_ns", &x->lat_p50_ns)) != 0 ||
		    (rc = r_dbl(r, e, "lat_p99_ns", &x->lat_p99_ns)) != 0)
			return rc;
	}
	return 0;
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

static int study_from_json(rctx_t *r, json_t *root, dv_study_t *s)
{
	json_t *v, *tool, *host, *cfg, *run, *qo, *plan, *targets, *lists, *passes, *status;
	uint64_t u;
	bool b;
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
	if ((rc = r_obj(r, root, "tool", &tool)) != 0 ||
	    (rc = r_str(r, tool, "version", false, &s->tool_version)) != 0 ||
	    (rc = r_str(r, root, "command_line", false, &s->cmdline)) != 0)
		return rc;
	R_U64(r, root, "start_wall_ns", s->start_wall_ns, INT64_MAX);
	if ((rc = r_obj(r, root, "host", &host)) != 0 ||
	    (rc = r_str(r, host, "name", false, &s->hostname)) != 0 ||
	    (rc = r_str(r, host, "kernel", false, &s->kernel)) != 0)
		return rc;
	R_U64(r, host, "cpus", s->ncpu, UINT32_MAX);

	if ((rc = r_obj(r, root, "config", &cfg)) != 0 || (rc = r_arr(r, cfg, "plan", &plan)) != 0)
		return rc;
	if (json_array_size(plan) > 1000)
		return r_bad(r, "\"plan\" is longer than 1000 passes");
	if (json_array_size(plan) > 0) {
		s->plan = calloc(json_array_size(plan), sizeof(*s->plan));
		if (s->plan == NULL)
			return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	}
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
	R_U64(r, cfg, "repeat", u, 1000000);
	s->repeat = (unsigned)u;
	if ((rc = r_bool(r, cfg, "warmup", &s->warmup)) != 0)
		return rc;
	R_U64(r, cfg, "ready_timeout_ns", s->ready_timeout_ns, INT64_MAX);
	if ((rc = r_obj(r, cfg, "run", &run)) != 0)
		return rc;
	R_U64(r, run, "sockets", s->run.sockets, UINT32_MAX);
	R_U64(r, run, "threads", s->run.threads, UINT32_MAX);
	R_U64(r, run, "max_outstanding", s->run.max_outstanding, UINT32_MAX);
	R_U64(r, run, "timeout_ns", s->run.timeout_ns, INT64_MAX);
	R_U64(r, run, "time_limit_ns", s->run.time_limit_ns, INT64_MAX);
	R_U64(r, run, "passes", s->run.passes, INT64_MAX);
	if ((rc = r_dbl(r, run, "max_qps", &s->run.max_qps)) != 0)
		return rc;
	R_U64(r, run, "interval_ns", s->run.interval_ns, INT64_MAX);
	R_U64(r, run, "local_port", s->run.local_port, 65535);
	if ((rc = r_obj(r, cfg, "query_options", &qo)) != 0 ||
	    (rc = r_bool(r, qo, "rd", &s->ql.rd)) != 0 ||
	    (rc = r_bool(r, qo, "edns", &s->ql.edns)) != 0 ||
	    (rc = r_bool(r, qo, "dnssec_ok", &s->ql.dnssec_ok)) != 0 ||
	    (rc = r_bool(r, qo, "skip_bad", &s->ql.skip_bad)) != 0)
		return rc;
	R_U64(r, qo, "edns_bufsize", s->ql.edns_bufsize, 65535);
	{
		char *hex = NULL;
		size_t n;
		if ((rc = r_str(r, qo, "edns_options", false, &hex)) != 0)
			return rc;
		n = hex != NULL ? strlen(hex) : 0;
		if (n % 2 != 0 || n / 2 > DV_QL_EDNS_OPTS_MAX) {
			free(hex);
			return r_bad(r, "\"edns_options\" must be at most %d octets of hex",
				     DV_QL_EDNS_OPTS_MAX);
		}
		for (size_t i = 0; i < n / 2; i++) {
			unsigned byte;
			if (sscanf(hex + 2 * i, "%2x", &byte) != 1 || !isxdigit((unsigned char)hex[2 * i]) ||
			    !isxdigit((unsigned char)hex[2 * i + 1])) {
				free(hex);
				return r_bad(r, "\"edns_options\" must be hex");
			}
			s->ql.edns_opts[i] = (uint8_t)byte;
		}
		s->ql.edns_opts_len = (uint16_t)(n / 2);
		free(hex);
	}

	if ((rc = r_arr(r, root, "targets", &targets)) != 0 ||
	    (rc = r_arr(r, root, "lists", &lists)) != 0 ||
	    (rc = r_arr(r, root, "passes", &passes)) != 0)
		return rc;
	if (json_array_size(targets) > 0) {
		s->targets = calloc(json_array_size(targets), sizeof(*s->targets));
		if (s->targets == NULL)
			return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	}
	for (size_t i = 0; i < json_array_size(targets); i++) {
		json_t *e = json_array_get(targets, i);
		dv_target_t *t = &s->targets[i];
		s->n_targets = i + 1;
		snprintf(r->where, sizeof(r->where), "targets[%zu]", i);
		if (!json_is_object(e))
			return r_bad(r, "must be an object");
		if ((rc = r_str(r, e, "label", true, &t->label)) != 0 ||
		    (rc = r_str(r, e, "spec", false, &t->spec)) != 0 ||
		    (rc = r_str(r, e, "address", false, &t->addr_text)) != 0 ||
		    (rc = r_str(r, e, "flush_command", false, &t->flush_cmd)) != 0 ||
		    (rc = r_str(r, e, "server_version", false, &t->server_version)) != 0)
			return rc;
		parse_addr(t->addr_text, &t->addr, &t->addr_len);
	}
	if (json_array_size(lists) > 0) {
		s->lists = calloc(json_array_size(lists), sizeof(*s->lists));
		if (s->lists == NULL)
			return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	}
	for (size_t i = 0; i < json_array_size(lists); i++) {
		json_t *e = json_array_get(lists, i);
		dv_list_t *l = &s->lists[i];
		char *sha = NULL;
		s->n_lists = i + 1;
		snprintf(r->where, sizeof(r->where), "lists[%zu]", i);
		if (!json_is_object(e))
			return r_bad(r, "must be an object");
		if ((rc = r_str(r, e, "label", true, &l->label)) != 0 ||
		    (rc = r_str(r, e, "path", false, &l->path)) != 0)
			return rc;
		R_U64(r, e, "queries", l->queries, INT64_MAX);
		R_U64(r, e, "lines", l->lines, INT64_MAX);
		if ((rc = r_str(r, e, "sha256", false, &sha)) != 0)
			return rc;
		if (sha != NULL) {
			size_t n = strlen(sha);
			bool hex = n == 0 || n == 64;
			for (size_t k = 0; k < n; k++)
				hex = hex && ((sha[k] >= '0' && sha[k] <= '9') ||
				              (sha[k] >= 'a' && sha[k] <= 'f'));
			if (hex)
				memcpy(l->sha256, sha, n + 1);
			free(sha);
			if (!hex)
				return r_bad(r,
				             "\"sha256\" must be 64 lower-case hex digits or \"\"");
		}
	}
	if (json_array_size(passes) > 0) {
		s->passes = calloc(json_array_size(passes), sizeof(*s->passes));
		if (s->passes == NULL)
			return dv_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
	}
	for (size_t i = 0; i < json_array_size(passes); i++) {
		s->n_passes = i + 1;
		snprintf(r->where, sizeof(r->where), "passes[%zu]", i);
		if ((rc = r_pass(r, json_array_get(passes, i), s, &s->passes[i])) != 0)
			return rc;
	}
	r->where[0] = '\0';
	if ((rc = r_obj(r, root, "status", &status)) != 0 ||
	    (rc = r_bool(r, status, "interrupted", &b)) != 0)
		return rc;
	s->interrupted = b;
	v = json_object_get(status, "failed");
	if (!json_is_integer(v) || json_integer_value(v) > 0 || json_integer_value(v) < -4095)
		return r_bad(r, "\"status\".\"failed\" must be 0 or a negative error code");
	s->failed = (int)json_integer_value(v);
	v = json_object_get(status, "fail_message");
	if (json_is_string(v))
		snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", json_string_value(v));
	return 0;
}

int dv_results_read_buffer(const char *buf, size_t len, const char *name, dv_study_t *s,
                           dv_err_t *err)
{
	rctx_t r = {.name = name, .err = err};
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(s, 0, sizeof(*s));
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
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc;

	memset(s, 0, sizeof(*s));
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (f == NULL)
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	errno = 0;
	for (;;) {
		if (cap - len < 65536) {
			if (cap > ((size_t)1 << 34)) {
				rc = dv_err_set(err, -EFBIG, "%s: file too large", path);
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
