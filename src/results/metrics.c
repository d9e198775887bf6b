/* metrics: a study as DNS-OARC dns-metrics JSON lines, built with jansson and written through
 * atomicfile. */
#include "config.h"

#include "results/metrics.h"
#include "results/results_server.h"

#include "base/atomicfile.h"
#include "results/connfig.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/*
 * Followed: DNS-OARC/dns-metrics dns-metrics.schema.json (the version whose
 * stats objects carry flat "queries"/"responses" integers, as kxdpgun's
 * utils/kxdpgun/stats.c writes them, schema_version 20240530). Times are in
 * nanoseconds since the epoch ("since"/"until"), durations in the header in
 * fractional seconds, latencies in nanoseconds (time_units_per_sec 1e9).
 */

/* jansson's integers are signed 64-bit; our counters never come near 2^63. */
static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)(v > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : v));
}

static json_t *header_obj(const dv_study_t *s, const char *runid)
{
	json_t *h = json_object(), *params = json_array(), *info = json_object();
	json_t *targets = json_array(), *lists = json_array();

	if (!h || !params || !info || !targets || !lists) {
		json_decref(h);
		json_decref(params);
		json_decref(info);
		json_decref(targets);
		json_decref(lists);
		return NULL;
	}
	json_object_set_new(h, "runid", json_string(runid));
	json_object_set_new(h, "type", json_string("header"));
	json_object_set_new(h, "schema_version", json_integer(DV_METRICS_SCHEMA_VERSION));
	json_object_set_new(h, "generator", json_string("dnsvolley"));
	json_object_set_new(h, "generator_version",
	                    json_string(s->tool_version ? s->tool_version : PACKAGE_VERSION));
	for (char **a = s->argv; a != NULL && *a != NULL; a++)
		json_array_append_new(params, json_string(*a));
	json_object_set_new(h, "generator_params", params);
	json_object_set_new(h, "time_units_per_sec", json_integer(1000000000));
	json_object_set_new(h, "stats_interval", json_real((double)s->run.interval_ns / 1e9));
	json_object_set_new(h, "timeout", json_real((double)s->run.timeout_ns / 1e9));

	/* Like kxdpgun's additional_info: what the plain text report also says. */
	if (s->hostname)
		json_object_set_new(info, "hostname", json_string(s->hostname));
	if (s->kernel)
		json_object_set_new(info, "kernel", json_string(s->kernel));
	json_object_set_new(info, "ncpu", json_integer(s->ncpu));
	json_object_set_new(info, "transport_layer_proto",
	                    json_string(dv_run_over_tcp(&s->run) ? "TCP" : "UDP"));
	json_object_set_new(info, "transport", json_string(dv_study_transport(s)));
	for (size_t i = 0; i < s->n_targets; i++) {
		const dv_target_t *t = &s->targets[i];
		json_t *o = json_object();
		json_object_set_new(o, "label", json_string(dv_study_target_label(s, i)));
		if (t->addr_text)
			json_object_set_new(o, "address", json_string(t->addr_text));
		if (t->server_version)
			json_object_set_new(o, "server_version", json_string(t->server_version));
		json_array_append_new(targets, o);
	}
	for (size_t i = 0; i < s->n_lists; i++) {
		const dv_list_t *l = &s->lists[i];
		json_t *o = json_object();
		json_object_set_new(o, "label", json_string(dv_study_list_label(s, i)));
		if (l->path)
			json_object_set_new(o, "path", json_string(l->path));
		json_object_set_new(o, "queries", jint(l->queries));
		if (l->sha256[0])
			json_object_set_new(o, "sha256", json_string(l->sha256));
		json_array_append_new(lists, o);
	}
	json_object_set_new(info, "targets", targets);
	json_object_set_new(info, "lists", lists);
	json_object_set_new(h, "additional_info", info);
	return h;
}

static json_t *latency_obj(const dv_hist_t *h, bool with_buckets)
{
	json_t *o = json_object(), *b;

	json_object_set_new(o, "avg", jint((uint64_t)(dv_hist_mean_ns(h) + 0.5)));
	json_object_set_new(o, "min", jint(h->count ? h->min_ns : 0));
	json_object_set_new(o, "max", jint(h->max_ns));
	json_object_set_new(o, "stddev", jint((uint64_t)(dv_hist_stddev_ns(h) + 0.5)));
	if (with_buckets) {
		/* [low, high, count]: count answers took low <= latency < high ns. */
		b = json_array();
		for (int i = 0; i < DV_HIST_BUCKETS; i++) {
			if (h->bucket[i] == 0)
				continue;
			json_t *e = json_array();
			json_array_append_new(e, jint(dv_hist_bucket_low(i)));
			json_array_append_new(e, jint(dv_hist_bucket_high(i)));
			json_array_append_new(e, jint(h->bucket[i]));
			json_array_append_new(b, e);
		}
		json_object_set_new(o, "buckets", b);
	}
	return o;
}

/* A connect or handshake time: latency_obj's figures and its p50 / p99 (ns). */
static json_t *conn_latency_obj(const dv_hist_t *h)
{
	json_t *o = latency_obj(h, false);

	json_object_set_new(o, "p50", jint(dv_hist_quantile_ns(h, 0.50)));
	json_object_set_new(o, "p99", jint(dv_hist_quantile_ns(h, 0.99)));
	return o;
}

/*
 * Stream transports (and --tc-tcp): the connection figures in conn_info (doc/nightly.md,
 * "dns-metrics"); the latencies only when there are any.
 */
static void conn_figures(json_t *conn, const dv_stats_t *st)
{
	const dv_counters_t *c = &st->c;

	json_object_set_new(conn, "connections_opened", jint(c->conn_opened));
	json_object_set_new(conn, "connections_reopened", jint(c->conn_reopened));
	json_object_set_new(conn, "connections_failed", jint(c->conn_failed));
	/* why they failed (each a subset of connections_failed), and how they were retried */
	json_object_set_new(conn, "connections_refused", jint(c->conn_refused));
	json_object_set_new(conn, "connections_timed_out", jint(c->conn_timeouts));
	json_object_set_new(conn, "connections_no_port", jint(c->conn_no_port));
	json_object_set_new(conn, "syn_retries", jint(c->conn_syn_retries));
	json_object_set_new(conn, "backoffs", jint(c->conn_backoffs));
	json_object_set_new(conn, "connections_reset", jint(c->conn_reset));
	json_object_set_new(conn, "connections_closed", jint(c->conn_closed));
	json_object_set_new(conn, "connections_idle_closed", jint(c->conn_idle_closed));
	json_object_set_new(conn, "queries_lost_with_connection", jint(c->conn_lost));
	json_object_set_new(conn, "handshakes_full", jint(c->tls_full));
	json_object_set_new(conn, "handshakes_resumed", jint(c->tls_resumed));
	json_object_set_new(conn, "http_non200", jint(c->http_non200));
	if (c->conn_opened > 0)
		json_object_set_new(conn, "queries_per_connection",
		                    json_real((double)c->sent / (double)c->conn_opened));
	if (st->connect.count > 0)
		json_object_set_new(conn, "connect_latency", conn_latency_obj(&st->connect));
	if (st->handshake.count > 0)
		json_object_set_new(conn, "handshake_latency", conn_latency_obj(&st->handshake));
}

static json_t *sum_obj(const dv_study_t *s, const char *runid, const char *subid, uint64_t since,
                       uint64_t until, const dv_stats_t *st)
{
	const dv_counters_t *c = &st->c;
	json_t *o = json_object(), *rc = json_object(), *conn = json_object();

	json_object_set_new(o, "runid", json_string(runid));
	if (subid)
		json_object_set_new(o, "subid", json_string(subid));
	json_object_set_new(o, "type", json_string("stats_sum"));
	json_object_set_new(o, "since", jint(since));
	json_object_set_new(o, "until", jint(until));
	/* queries responses timeouts interrupted unexpected discarded: see DV_COUNTERS. */
	for (size_t i = 0; i < dv_counter_nfields; i++)
		if (dv_counter_fields[i].metrics != NULL)
			json_object_set_new(o, dv_counter_fields[i].metrics,
			                    jint(dv_counter_get(c, &dv_counter_fields[i])));
	for (unsigned i = 0; i < DV_RCODES; i++)
		if (c->rcode[i] > 0)
			json_object_set_new(rc, dv_rcode_name(i), jint(c->rcode[i]));
	json_object_set_new(o, "response_rcodes", rc);
	if (st->latency.count > 0)
		json_object_set_new(o, "response_latency", latency_obj(&st->latency, true));
	json_object_set_new(conn, "type", json_string(dv_study_transport(s)));
	json_object_set_new(conn, "packets_sent", jint(c->sent));
	json_object_set_new(conn, "packets_received",
	                    jint(c->completed + c->late + c->unexpected + c->malformed));
	json_object_set_new(conn, "socket_errors", jint(c->not_sent + c->icmp_errors));
	if (s->run.stream || c->conn_opened + c->conn_failed + c->conn_abandoned > 0)
		conn_figures(conn, st);
	json_object_set_new(o, "conn_info", conn);
	return o;
}

static int emit(FILE *fp, json_t *o)
{
	int rc;

	if (o == NULL)
		return -ENOMEM;
	rc = json_dumpf(o, fp, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12));
	json_decref(o);
	if (rc != 0 || fputc('\n', fp) == EOF)
		return -EIO;
	return 0;
}

static uint64_t pass_start(const dv_study_t *s, const dv_pass_record_t *p)
{
	return p->res.start_wall_ns ? p->res.start_wall_ns : s->start_wall_ns;
}

static int write_pass(FILE *fp, const dv_study_t *s, const dv_pass_record_t *p, const char *runid,
                      unsigned n)
{
	const dv_pass_result_t *r = &p->res;
	uint64_t t0 = pass_start(s, p), prev = t0;
	char subid[32], msg[1024];
	json_t *ev = json_object();
	int rc;

	snprintf(subid, sizeof(subid), "pass%u", n);
	snprintf(msg, sizeof(msg), "pass %u: target %s (%s), list %s, repeat %u, %s%s", n,
	         dv_study_target_label(s, p->target),
	         p->target < s->n_targets && s->targets[p->target].addr_text
	             ? s->targets[p->target].addr_text
	             : "?",
	         dv_study_list_label(s, p->list), p->repeat + 1, dv_pass_kind_name(p->kind),
	         r->interrupted ? ", interrupted" : "");
	json_object_set_new(ev, "runid", json_string(runid));
	json_object_set_new(ev, "subid", json_string(subid));
	json_object_set_new(ev, "type", json_string("event"));
	json_object_set_new(ev, "msg_type", json_string("pass"));
	json_object_set_new(ev, "msg", json_string(msg));
	json_object_set_new(ev, "target", json_string(dv_study_target_label(s, p->target)));
	json_object_set_new(ev, "list", json_string(dv_study_list_label(s, p->list)));
	json_object_set_new(ev, "repeat", json_integer(p->repeat));
	json_object_set_new(ev, "pass", json_string(dv_pass_kind_name(p->kind)));
	if ((rc = emit(fp, ev)) != 0)
		return rc;

	for (size_t i = 0; i < r->n_intervals; i++) {
		const dv_interval_t *iv = &r->intervals[i];
		uint64_t until = t0 + (uint64_t)(iv->t_s * 1e9 + 0.5);
		json_t *o = json_object(), *conn = json_object();

		json_object_set_new(o, "runid", json_string(runid));
		json_object_set_new(o, "subid", json_string(subid));
		json_object_set_new(o, "type", json_string("stats_periodic"));
		json_object_set_new(o, "since", jint(prev));
		json_object_set_new(o, "until", jint(until));
		json_object_set_new(o, "queries", jint(iv->sent));
		json_object_set_new(o, "responses", jint(iv->completed));
		json_object_set_new(o, "timeouts", jint(iv->lost));
		if (iv->completed > 0) {
			/* Snapshots keep the mean, not the extremes: avg only. */
			json_t *lat = json_object();
			json_object_set_new(lat, "avg", jint((uint64_t)(iv->lat_mean_ns + 0.5)));
			json_object_set_new(o, "response_latency", lat);
		}
		json_object_set_new(conn, "type", json_string(dv_study_transport(s)));
		json_object_set_new(conn, "packets_sent", jint(iv->sent));
		json_object_set_new(o, "conn_info", conn);
		if ((rc = emit(fp, o)) != 0)
			return rc;
		prev = until;
	}
	json_t *sum =
	    sum_obj(s, runid, subid, t0, t0 + (uint64_t)(r->elapsed_s * 1e9 + 0.5), &r->stats);
	if (sum != NULL && r->server.measured) /* what the server paid: as in results files */
		json_object_set_new(sum, "server", dv_results_server_to_json(&r->server));
	return emit(fp, sum);
}

int dv_metrics_write(const dv_study_t *s, const char *path, dv_err_t *err)
{
	dv_atomicfile_t f;
	char runid[48];
	dv_stats_t *total = calloc(1, sizeof(*total));
	uint64_t since = UINT64_MAX, until = 0;
	unsigned n = 0;
	int rc;

	if (total == NULL)
		return dv_err_set(err, -ENOMEM, "%s: out of memory", path);
	dv_stats_init(total);
	rc = dv_atomicfile_open(&f, path, false, err);
	if (rc != 0) {
		free(total);
		return rc;
	}
	snprintf(runid, sizeof(runid), "%" PRIu64, s->start_wall_ns);
	rc = emit(f.fp, header_obj(s, runid));
	for (size_t i = 0; rc == 0 && i < s->n_passes; i++) {
		const dv_pass_record_t *p = &s->passes[i];
		uint64_t t0 = pass_start(s, p);
		if (p->kind == DV_PASS_WARMUP)
			continue;
		rc = write_pass(f.fp, s, p, runid, ++n);
		dv_stats_merge(total, &p->res.stats);
		since = DV_MIN(since, t0);
		until = DV_MAX(until, t0 + (uint64_t)(p->res.elapsed_s * 1e9 + 0.5));
	}
	if (rc == 0)
		rc = emit(f.fp, sum_obj(s, runid, NULL, n ? since : s->start_wall_ns,
		                        n ? until : s->start_wall_ns, total));
	free(total);
	if (rc != 0) {
		dv_atomicfile_abort(&f);
		return dv_err_set(err, rc, "%s: %s", path,
		                  rc == -ENOMEM ? "out of memory" : "write failed");
	}
	return dv_atomicfile_commit(&f, err);
}
