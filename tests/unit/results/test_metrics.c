/* test_metrics: dns-metrics JSON lines: one object per line, types in order, fields parse back with
 * jansson. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "engine/stats.h"
#include "results/metrics.h"

#define T0 (1717200000ULL * DV_NS_PER_S)

static dv_study_t *make_study(void)
{
	dv_study_t *s = calloc(1, sizeof(*s));
	static const dv_pass_kind_t kinds[] = {DV_PASS_WARMUP, DV_PASS_COLD, DV_PASS_HOT};
	static char *argv[] = {"dnsvolley", "-s",  "127.0.0.1", "-d", "my list.txt",
	                       "--label",   "a b", "x y",       NULL};

	assert_non_null(s);
	s->hostname = "bench1";
	s->tool_version = "0.1.0";
	s->argv = argv;
	s->start_wall_ns = T0;
	s->run.interval_ns = 500 * DV_NS_PER_MS;
	s->run.timeout_ns = 2 * DV_NS_PER_S;
	s->targets = calloc(1, sizeof(*s->targets));
	s->lists = calloc(1, sizeof(*s->lists));
	s->passes = calloc(3, sizeof(*s->passes));
	s->targets[0].label = "t1";
	s->targets[0].addr_text = "127.0.0.1:5300";
	s->targets[0].server_version = "responder 1";
	s->lists[0].label = "SOA";
	s->lists[0].path = "soa.txt";
	s->lists[0].queries = 1000;
	strcpy(s->lists[0].sha256, "ab12");
	s->n_targets = s->n_lists = 1;
	s->n_passes = 3;
	for (size_t i = 0; i < 3; i++) {
		dv_pass_record_t *p = &s->passes[i];
		dv_counters_t *c = &p->res.stats.c;
		p->kind = kinds[i];
		p->res.start_wall_ns = T0 + i * 10 * DV_NS_PER_S;
		p->res.elapsed_s = 1.25;
		c->sent = 1000;
		c->lost = 4;
		c->completed = 996;
		c->rcode[0] = 990;
		c->rcode[2] = 6;
		c->late = 1;
		c->unexpected = 2;
		c->malformed = 3;
		c->not_sent = 5;
		dv_hist_init(&p->res.stats.latency);
		for (uint64_t k = 0; k < 996; k++)
			dv_hist_add(&p->res.stats.latency, k < 900 ? 100 : 1000000);
		p->res.n_intervals = 2;
		p->res.intervals = calloc(2, sizeof(dv_interval_t));
		p->res.intervals[0] = (dv_interval_t){
		    .t_s = 0.5, .sent = 600, .completed = 598, .lost = 0, .lat_mean_ns = 1234.4};
		p->res.intervals[1] = (dv_interval_t){
		    .t_s = 1.0, .sent = 400, .completed = 398, .lost = 4, .lat_mean_ns = 99.6};
	}
	return s;
}

static void free_study(dv_study_t *s)
{
	for (size_t i = 0; i < s->n_passes; i++)
		free(s->passes[i].res.intervals);
	free(s->targets);
	free(s->lists);
	free(s->passes);
	free(s);
}

static json_int_t geti(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_non_null(v);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static const char *gets(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void test_lines(void **state)
{
	dv_study_t *s = make_study();
	char path[] = "/tmp/dv_test_metrics_XXXXXX";
	int fd = mkstemp(path);
	dv_err_t err = {{0}};
	FILE *fp;
	char line[65536];
	json_t *o[16];
	size_t n = 0;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dv_metrics_write(s, path, &err), 0);
	fp = fopen(path, "r");
	assert_non_null(fp);
	/* Every line is one complete JSON object (JSON lines). */
	while (fgets(line, sizeof(line), fp) != NULL) {
		json_error_t jerr;
		assert_true(n < 16);
		assert_non_null(strchr(line, '\n'));
		o[n] = json_loads(line, 0, &jerr);
		if (o[n] == NULL)
			fail_msg("line %zu: %s", n + 1, jerr.text);
		assert_true(json_is_object(o[n]));
		assert_string_equal(gets(o[n], "runid"), "1717200000000000000");
		n++;
	}
	fclose(fp);
	unlink(path);
	/* header, then per reported pass: event, 2 periodic, sum; then the total sum. */
	assert_int_equal(n, 1 + 2 * 4 + 1);
	assert_string_equal(gets(o[0], "type"), "header");
	assert_int_equal(geti(o[0], "schema_version"), 20240530);
	assert_string_equal(gets(o[0], "generator"), "dnsvolley");
	assert_string_equal(gets(o[0], "generator_version"), "0.1.0");
	assert_int_equal(geti(o[0], "time_units_per_sec"), 1000000000);
	assert_true(json_real_value(json_object_get(o[0], "stats_interval")) == 0.5);
	assert_true(json_real_value(json_object_get(o[0], "timeout")) == 2.0);
	json_t *params = json_object_get(o[0], "generator_params");
	assert_int_equal(json_array_size(params), 8);
	assert_string_equal(json_string_value(json_array_get(params, 4)), "my list.txt");
	assert_string_equal(json_string_value(json_array_get(params, 6)), "a b");
	assert_string_equal(json_string_value(json_array_get(params, 7)), "x y");
	json_t *info = json_object_get(o[0], "additional_info");
	assert_string_equal(
	    gets(json_array_get(json_object_get(info, "targets"), 0), "server_version"),
	    "responder 1");
	assert_int_equal(geti(json_array_get(json_object_get(info, "lists"), 0), "queries"), 1000);

	/* The first reported pass is the cold one (the warmup is not reported). */
	assert_string_equal(gets(o[1], "type"), "event");
	assert_string_equal(gets(o[1], "subid"), "pass1");
	assert_string_equal(gets(o[1], "pass"), "cold");
	assert_string_equal(gets(o[1], "msg"),
	                    "pass 1: target t1 (127.0.0.1:5300), list SOA, repeat 1, cold");
	uint64_t t1 = T0 + 10 * DV_NS_PER_S;
	assert_string_equal(gets(o[2], "type"), "stats_periodic");
	assert_string_equal(gets(o[2], "subid"), "pass1");
	assert_int_equal(geti(o[2], "since"), t1);
	assert_int_equal(geti(o[2], "until"), t1 + 500 * DV_NS_PER_MS);
	assert_int_equal(geti(o[2], "queries"), 600);
	assert_int_equal(geti(o[2], "responses"), 598);
	assert_int_equal(geti(json_object_get(o[2], "response_latency"), "avg"), 1234);
	assert_int_equal(geti(o[3], "since"), t1 + 500 * DV_NS_PER_MS);
	assert_int_equal(geti(o[3], "until"), t1 + DV_NS_PER_S);
	assert_int_equal(geti(o[3], "timeouts"), 4);
	assert_int_equal(geti(json_object_get(o[3], "response_latency"), "avg"), 100);

	json_t *sum = o[4];
	assert_string_equal(gets(sum, "type"), "stats_sum");
	assert_string_equal(gets(sum, "subid"), "pass1");
	assert_int_equal(geti(sum, "since"), t1);
	assert_int_equal(geti(sum, "until"), t1 + 1250 * DV_NS_PER_MS);
	assert_int_equal(geti(sum, "queries"), 1000);
	assert_int_equal(geti(sum, "responses"), 996);
	assert_int_equal(geti(sum, "timeouts"), 4);
	assert_int_equal(geti(sum, "unexpected"), 2);
	assert_int_equal(geti(sum, "discarded"), 3);
	assert_int_equal(geti(json_object_get(sum, "response_rcodes"), "NOERROR"), 990);
	assert_int_equal(geti(json_object_get(sum, "response_rcodes"), "SERVFAIL"), 6);
	assert_int_equal(json_object_size(json_object_get(sum, "response_rcodes")), 2);
	json_t *lat = json_object_get(sum, "response_latency");
	assert_int_equal(geti(lat, "min"), 100);
	assert_int_equal(geti(lat, "max"), 1000000);
	assert_int_equal(geti(lat, "avg"), (900 * 100 + 96 * 1000000 + 498) / 996);
	json_t *b = json_object_get(lat, "buckets");
	assert_int_equal(json_array_size(b), 2);
	/* [low, high, count] covering 100 exactly and 1 ms within 1%. */
	assert_int_equal(json_integer_value(json_array_get(json_array_get(b, 0), 0)), 100);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(b, 0), 1)), 101);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(b, 0), 2)), 900);
	json_int_t lo = json_integer_value(json_array_get(json_array_get(b, 1), 0));
	json_int_t hi = json_integer_value(json_array_get(json_array_get(b, 1), 1));
	assert_true(lo <= 1000000 && 1000000 < hi && hi - lo <= 1000000 / 128);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(b, 1), 2)), 96);
	json_t *conn = json_object_get(sum, "conn_info");
	assert_string_equal(gets(conn, "type"), "udp");
	assert_int_equal(geti(conn, "packets_sent"), 1000);
	assert_int_equal(geti(conn, "packets_received"), 996 + 1 + 2 + 3);
	assert_int_equal(geti(conn, "socket_errors"), 5);
	assert_null(json_object_get(conn, "connections_opened")); /* UDP: no connections */
	assert_null(json_object_get(conn, "connections_no_port"));

	assert_string_equal(gets(o[5], "pass"), "hot");
	/* The total: no subid, both reported passes summed, spanning both. */
	json_t *tot = o[9];
	assert_string_equal(gets(tot, "type"), "stats_sum");
	assert_null(json_object_get(tot, "subid"));
	assert_int_equal(geti(tot, "queries"), 2000);
	assert_int_equal(geti(tot, "responses"), 1992);
	assert_int_equal(geti(tot, "since"), t1);
	assert_int_equal(geti(tot, "until"), T0 + 20 * DV_NS_PER_S + 1250 * DV_NS_PER_MS);
	assert_int_equal(geti(json_object_get(tot, "response_rcodes"), "NOERROR"), 1980);
	for (size_t i = 0; i < n; i++)
		json_decref(o[i]);
	free_study(s);
}

/*
 * stats_sum takes its counts from DV_COUNTERS (stats.h) by dns-metrics name:
 * with every counter a distinct value, each named one appears under its key,
 * in this order, and no other counter leaks in.
 */
static void test_sum_counters(void **state)
{
	dv_study_t *s = make_study();
	char path[] = "/tmp/dv_test_metrics_XXXXXX";
	int fd = mkstemp(path);
	dv_err_t err = {{0}};
	char line[65536];
	json_t *sum = NULL;
	static const char *const keys[] = {"queries",     "responses",  "timeouts",
	                                   "interrupted", "unexpected", "discarded"};
	(void)state;

	s->n_passes = 2; /* the warmup and one reported pass */
	for (size_t k = 0; k < dv_counter_nfields; k++)
		*dv_counter_ptr(&s->passes[1].res.stats.c, &dv_counter_fields[k]) = 5000 + 100 * k;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dv_metrics_write(s, path, &err), 0);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	while (sum == NULL && fgets(line, sizeof(line), fp) != NULL) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(gets(o, "type"), "stats_sum") == 0)
			sum = o; /* the pass's own, first */
		else
			json_decref(o);
	}
	fclose(fp);
	unlink(path);
	assert_non_null(sum);
	assert_int_equal(geti(sum, "queries"), 5000);     /* sent */
	assert_int_equal(geti(sum, "responses"), 5200);   /* completed */
	assert_int_equal(geti(sum, "timeouts"), 5300);    /* lost */
	assert_int_equal(geti(sum, "interrupted"), 5500); /* interrupted */
	assert_int_equal(geti(sum, "unexpected"), 5600);  /* unexpected */
	assert_int_equal(geti(sum, "discarded"), 5700);   /* malformed */
	/* In that order, right after "until" (the line as written, compact). */
	const char *at = strstr(line, "\"until\":");
	assert_non_null(at);
	for (size_t k = 0; k < DV_ARRAY_SIZE(keys); k++) {
		char quoted[32];
		snprintf(quoted, sizeof(quoted), "\"%s\":", keys[k]);
		const char *next = strstr(at, quoted);
		assert_non_null(next);
		assert_non_null(strchr(next, ',')); /* one value, then the next key */
		assert_ptr_equal(strchr(strchr(at, ',') + 1, '"'), next);
		at = next;
	}
	json_decref(sum);
	s->n_passes = 3; /* so free_study frees every pass */
	free_study(s);
}

/* The stats_sum lines of the file at path (the passes' then the total), n of them. */
static size_t read_sums(const char *path, json_t **sums, size_t max, json_t **header)
{
	char line[65536];
	size_t n = 0;
	FILE *fp = fopen(path, "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL) {
		json_t *o = json_loads(line, 0, NULL);
		assert_non_null(o);
		if (strcmp(gets(o, "type"), "header") == 0 && *header == NULL)
			*header = o;
		else if (strcmp(gets(o, "type"), "stats_sum") == 0 && n < max)
			sums[n++] = o;
		else
			json_decref(o);
	}
	fclose(fp);
	return n;
}

/* Stream transports (issue 12): conn_info carries the connection figures, and why attempts
 * failed, exactly. */
static void test_stream_conn_info(void **state)
{
	dv_study_t *s = make_study();
	char path[] = "/tmp/dv_test_metrics_XXXXXX";
	int fd = mkstemp(path);
	dv_err_t err = {{0}};
	json_t *sums[4] = {NULL}, *hdr = NULL;
	(void)state;

	s->run.stream = true;
	s->run.tp.kind = DV_TP_DOT;
	for (size_t i = 1; i < 3; i++) {
		dv_stats_t *st = &s->passes[i].res.stats;
		st->c.conn_opened = 4 * i;
		st->c.conn_reopened = i;
		st->c.conn_failed = 10 * i + 1; /* one handshake failed: in none of the split */
		st->c.conn_refused = 2 * i;
		st->c.conn_timeouts = 3 * i;
		st->c.conn_no_port = 5 * i;
		st->c.conn_syn_retries = 7 * i;
		st->c.conn_backoffs = 9 * i;
		st->c.conn_lost = 13 * i;
		st->c.conn_reset = 3 * i;
		st->c.conn_closed = 1;
		st->c.conn_idle_closed = 5;
		st->c.tls_full = 1;
		st->c.tls_resumed = 4 * i - 1;
		st->c.http_non200 = 7;
		dv_hist_init(&st->connect);
		dv_hist_init(&st->handshake);
		for (size_t k = 0; k < 4 * i; k++) {
			dv_hist_add(&st->connect, 100000 * i); /* bucket boundaries: exact */
			dv_hist_add(&st->handshake, k == 0 ? 4000000 : 100000);
		}
	}
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(dv_metrics_write(s, path, &err), 0);
	assert_int_equal(read_sums(path, sums, 4, &hdr), 3);
	unlink(path);
	json_t *info = json_object_get(hdr, "additional_info");
	assert_string_equal(gets(info, "transport_layer_proto"), "TCP");
	assert_string_equal(gets(info, "transport"), "dot");
	json_t *c1 = json_object_get(sums[0], "conn_info");
	assert_string_equal(gets(c1, "type"), "dot");
	assert_int_equal(geti(c1, "connections_opened"), 4);
	assert_int_equal(geti(c1, "connections_reopened"), 1);
	assert_int_equal(geti(c1, "connections_failed"), 11);
	assert_int_equal(geti(c1, "connections_refused"), 2);
	assert_int_equal(geti(c1, "connections_timed_out"), 3);
	assert_int_equal(geti(c1, "connections_no_port"), 5);
	assert_int_equal(geti(c1, "syn_retries"), 7);
	assert_int_equal(geti(c1, "backoffs"), 9);
	assert_int_equal(geti(c1, "queries_lost_with_connection"), 13);
	assert_int_equal(geti(c1, "connections_reset"), 3);
	assert_int_equal(geti(c1, "connections_closed"), 1);
	assert_int_equal(geti(c1, "connections_idle_closed"), 5);
	assert_int_equal(geti(c1, "handshakes_full"), 1);
	assert_int_equal(geti(c1, "handshakes_resumed"), 3);
	assert_int_equal(geti(c1, "http_non200"), 7);
	assert_true(json_real_value(json_object_get(c1, "queries_per_connection")) == 250.0);
	assert_int_equal(geti(json_object_get(c1, "connect_latency"), "p50"), 100000);
	assert_int_equal(geti(json_object_get(c1, "connect_latency"), "p99"), 100000);
	assert_int_equal(geti(json_object_get(c1, "connect_latency"), "min"), 100000);
	/* the middle of 100 us's bucket (its min, 100000, is below it) */
	assert_int_equal(geti(json_object_get(c1, "handshake_latency"), "p50"), 100096);
	assert_int_equal(geti(json_object_get(c1, "handshake_latency"), "max"), 4000000);
	assert_int_equal(geti(json_object_get(c1, "handshake_latency"), "p99"), 4000000);
	/* the total: both passes added, histograms merged */
	json_t *ct = json_object_get(sums[2], "conn_info");
	assert_null(json_object_get(sums[2], "subid"));
	assert_int_equal(geti(ct, "connections_opened"), 12);
	assert_int_equal(geti(ct, "connections_reset"), 9);
	assert_int_equal(geti(ct, "connections_failed"), 32);
	assert_int_equal(geti(ct, "connections_refused"), 6);
	assert_int_equal(geti(ct, "connections_timed_out"), 9);
	assert_int_equal(geti(ct, "connections_no_port"), 15);
	assert_int_equal(geti(ct, "syn_retries"), 21);
	assert_int_equal(geti(ct, "backoffs"), 27);
	assert_int_equal(geti(ct, "queries_lost_with_connection"), 39);
	assert_int_equal(geti(ct, "handshakes_resumed"), 10);
	/* 166.666666667: dns-metrics lines carry 12 significant digits */
	assert_true(fabs(json_real_value(json_object_get(ct, "queries_per_connection")) -
	                 2000.0 / 12.0) < 1e-9);
	assert_int_equal(geti(json_object_get(ct, "connect_latency"), "max"), 200000);
	assert_int_equal(geti(json_object_get(ct, "connect_latency"), "p50"), 200000);
	for (size_t i = 0; i < 3; i++)
		json_decref(sums[i]);
	json_decref(hdr);
	free_study(s);
}

static void test_unwritable(void **state)
{
	dv_study_t *s = make_study();
	dv_err_t err = {{0}};
	(void)state;
	assert_true(dv_metrics_write(s, "/nonexistent-dir/m.jsonl", &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/m.jsonl"));
	free_study(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_sum_counters),
	    cmocka_unit_test(test_stream_conn_info),
	    cmocka_unit_test(test_unwritable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
