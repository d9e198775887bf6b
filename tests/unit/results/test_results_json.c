/* test_results_json: JSON round trip is exact; bad files are rejected with "FILE: ...". */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "engine/stats.h"
#include "results/report.h"
#include "results/results_json.h"
#include "results/summary.h"
#include "study/study.h"

static char *xs(const char *s)
{
	char *d = strdup(s);
	assert_non_null(d);
	return d;
}

/* A study with two targets, one list, cold/hot x 2 repeats, with every kind of figure filled. */
static void build(dv_study_t *s)
{
	memset(s, 0, sizeof(*s));
	s->tool_version = xs("0.1.0");
	s->cmdline = xs("dnsvolley -s a=127.0.0.1:5300 -s 'b=127.0.0.1:5301' -d SOA=soa.txt");
	s->start_wall_ns = 1700000000123456789ULL;
	s->hostname = xs("bench1");
	s->kernel = xs("Linux 6.1.0 #1 SMP x86_64");
	s->ncpu = 2;
	s->run.sockets = 4;
	s->run.threads = 2;
	s->run.max_outstanding = 200;
	s->run.timeout_ns = 5 * DV_NS_PER_S;
	s->run.time_limit_ns = 0;
	s->run.passes = 1;
	s->run.max_qps = 12345.5;
	s->run.interval_ns = DV_NS_PER_S;
	s->run.local_port = 0;
	s->ql.rd = true;
	s->ql.edns = true;
	s->ql.edns_bufsize = 1232;
	assert_int_equal(dv_querylist_add_edns_option(&s->ql, "10:0102", NULL), 0);
	s->n_plan = 2;
	s->plan = calloc(2, sizeof(*s->plan));
	s->plan[0] = DV_PASS_COLD;
	s->plan[1] = DV_PASS_HOT;
	s->repeat = 2;
	s->warmup = true;
	s->ready_timeout_ns = 30 * DV_NS_PER_S;
	s->n_targets = 2;
	s->targets = calloc(2, sizeof(*s->targets));
	s->targets[0].label = xs("a");
	s->targets[0].spec = xs("127.0.0.1:5300");
	s->targets[0].addr_text = xs("127.0.0.1:5300");
	s->targets[0].flush_cmd = xs("unbound-control flush_zone . \"quoted\"");
	s->targets[0].server_version = xs("unbound 1.17.1");
	s->targets[1].label = xs("b");
	s->targets[1].spec = xs("[::1]:5301");
	s->targets[1].addr_text = xs("[::1]:5301");
	s->n_lists = 1;
	s->lists = calloc(1, sizeof(*s->lists));
	s->lists[0].label = xs("SOA");
	s->lists[0].path = xs("querylists/soa.txt");
	s->lists[0].queries = 1000;
	s->lists[0].lines = 1003;
	strcpy(s->lists[0].sha256,
	       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	s->n_passes = 8;
	s->passes = calloc(8, sizeof(*s->passes));
	for (size_t i = 0; i < 8; i++) {
		dv_pass_record_t *p = &s->passes[i];
		dv_pass_result_t *r = &p->res;
		p->repeat = (unsigned)(i / 4);
		p->target = (i / 2) % 2;
		p->list = 0;
		p->kind = i % 2 ? DV_PASS_HOT : DV_PASS_COLD;
		p->flush_s = p->kind == DV_PASS_COLD ? 0.0123 * (double)(i + 1) : 0;
		p->ready_wait_s = p->kind == DV_PASS_COLD ? 0.1 / 3 : 0;
		dv_stats_init(&r->stats);
		if (i == 5) /* an --xdp pass: passes[5].xdp (issue 27); the others have none */
			r->xdp = (dv_xdp_info_t){.used = true,
			                         .native = true,
			                         .zerocopy = false,
			                         .queues = 2,
			                         .rx_queues = 4};
		dv_counters_t *c = &r->stats.c;
		c->sent = 1000;
		c->completed = 990 - i;
		c->lost = 10 + i;
		c->late = 3;
		c->unexpected = 1;
		c->malformed = 2;
		c->truncated = 4;
		c->rcode[0] = 980 - i;
		c->rcode[3] = 10;
		c->icmp_errors = 0;
		c->bytes_sent = 33000;
		c->bytes_received = 70000 + i;
		c->send_calls = 20;
		c->recv_calls = 25;
		c->wait_calls = 26;
		c->inflight_peak = 200;
		c->qtype[0].qtype = 6;
		c->qtype[0].sent = 1000;
		c->qtype[0].completed = 990 - i;
		c->qtype[5].qtype = 65280; /* a private type, in a later slot */
		c->qtype_other_sent = 0;
		for (uint64_t k = 0; k < c->completed; k++)
			dv_hist_add(&r->stats.latency, 20000 + k * 997 * (i + 1) + (k % 7) * 13);
		r->end = i == 7 ? DV_END_INTERRUPT : DV_END_LIST;
		r->interrupted = i == 7;
		r->start_wall_ns = s->start_wall_ns + i * DV_NS_PER_S;
		r->run_time_s = 0.5 + (double)i / 7;
		r->elapsed_s = r->run_time_s + 0.001;
		r->qps = (double)c->completed / r->run_time_s;
		r->cpu_user_s = 0.1 / 3;
		r->cpu_sys_s = 0.2 / 7;
		r->udp.valid = i != 3;
		r->udp.in_datagrams = 1000;
		r->udp.out_datagrams = 1001;
		r->udp.rcvbuf_errors = i;
		r->sockets = 4;
		r->threads = 2;
		r->max_outstanding = 200;
		r->n_intervals = i % 3;
		r->intervals =
		    r->n_intervals ? calloc(r->n_intervals, sizeof(dv_interval_t)) : NULL;
		for (size_t k = 0; k < r->n_intervals; k++) {
			dv_interval_t *x = &r->intervals[k];
			x->t_s = 1.0 + (double)k;
			x->sent = 500;
			x->completed = 495;
			x->lost = 5;
			x->inflight = 7;
			x->qps = 495.0 / 1.0000001;
			x->lat_mean_ns = 123456.789;
			x->lat_p50_ns = 120000;
			x->lat_p99_ns = 400000;
		}
		/* the first interval keeps a histogram of two buckets, the second an empty one */
		if (r->n_intervals > 0) {
			r->lat_cells = calloc(2, sizeof(*r->lat_cells));
			r->n_lat_cells = 2;
			r->lat_cells[0] = (dv_hist_cell_t){dv_hist_bucket_of(120000), 0, 400};
			r->lat_cells[1] = (dv_hist_cell_t){dv_hist_bucket_of(400000), 0, 95};
			r->intervals[0].lat_kept = true;
			r->intervals[0].lat_n = 2;
			r->intervals[0].lat_count = 495;
			r->intervals[0].lat_min_ns = 119950;
			r->intervals[0].lat_max_ns = 401000;
		}
		if (r->n_intervals > 1) {
			r->intervals[1].lat_kept = true;
			r->intervals[1].lat_first = 2;
			r->intervals[1].lat_min_ns = UINT64_MAX;
		}
	}
}

static void assert_str_or_null(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_same(const dv_study_t *a, const dv_study_t *b)
{
	assert_string_equal(a->tool_version, b->tool_version);
	assert_string_equal(a->cmdline, b->cmdline);
	assert_true(a->start_wall_ns == b->start_wall_ns);
	assert_string_equal(a->hostname, b->hostname);
	assert_string_equal(a->kernel, b->kernel);
	assert_int_equal(a->ncpu, b->ncpu);
	assert_int_equal(a->run.sockets, b->run.sockets);
	assert_int_equal(a->run.threads, b->run.threads);
	assert_int_equal(a->run.max_outstanding, b->run.max_outstanding);
	assert_true(a->run.timeout_ns == b->run.timeout_ns);
	assert_true(a->run.max_qps == b->run.max_qps);
	assert_true(a->run.interval_ns == b->run.interval_ns);
	assert_int_equal(a->ql.rd, b->ql.rd);
	assert_int_equal(a->ql.edns, b->ql.edns);
	assert_int_equal(a->ql.edns_bufsize, b->ql.edns_bufsize);
	assert_int_equal(a->ql.edns_opts_len, b->ql.edns_opts_len);
	assert_memory_equal(a->ql.edns_opts, b->ql.edns_opts, a->ql.edns_opts_len);
	assert_int_equal(a->n_plan, b->n_plan);
	for (size_t i = 0; i < a->n_plan; i++)
		assert_int_equal(a->plan[i], b->plan[i]);
	assert_int_equal(a->repeat, b->repeat);
	assert_int_equal(a->warmup, b->warmup);
	assert_true(a->ready_timeout_ns == b->ready_timeout_ns);
	assert_int_equal(a->n_targets, b->n_targets);
	for (size_t i = 0; i < a->n_targets; i++) {
		assert_str_or_null(a->targets[i].label, b->targets[i].label);
		assert_str_or_null(a->targets[i].spec, b->targets[i].spec);
		assert_str_or_null(a->targets[i].addr_text, b->targets[i].addr_text);
		assert_str_or_null(a->targets[i].flush_cmd, b->targets[i].flush_cmd);
		assert_str_or_null(a->targets[i].server_version, b->targets[i].server_version);
	}
	assert_int_equal(a->n_lists, b->n_lists);
	for (size_t i = 0; i < a->n_lists; i++) {
		assert_string_equal(a->lists[i].label, b->lists[i].label);
		assert_string_equal(a->lists[i].path, b->lists[i].path);
		assert_true(a->lists[i].queries == b->lists[i].queries);
		assert_true(a->lists[i].lines == b->lists[i].lines);
		assert_string_equal(a->lists[i].sha256, b->lists[i].sha256);
	}
	assert_int_equal(a->n_passes, b->n_passes);
	for (size_t i = 0; i < a->n_passes; i++) {
		const dv_pass_record_t *p = &a->passes[i], *q = &b->passes[i];
		assert_int_equal(p->target, q->target);
		assert_int_equal(p->list, q->list);
		assert_int_equal(p->repeat, q->repeat);
		assert_int_equal(p->kind, q->kind);
		assert_true(p->flush_s == q->flush_s);
		assert_true(p->ready_wait_s == q->ready_wait_s);
		/* Counters and the whole histogram, byte for byte (both zero-initialised). */
		assert_memory_equal(&p->res.stats.c, &q->res.stats.c, sizeof(dv_counters_t));
		assert_memory_equal(&p->res.stats.latency, &q->res.stats.latency,
		                    sizeof(dv_hist_t));
		assert_int_equal(p->res.end, q->res.end);
		assert_int_equal(p->res.interrupted, q->res.interrupted);
		assert_true(p->res.start_wall_ns == q->res.start_wall_ns);
		assert_true(p->res.run_time_s == q->res.run_time_s);
		assert_true(p->res.elapsed_s == q->res.elapsed_s);
		assert_true(p->res.qps == q->res.qps);
		assert_true(p->res.cpu_user_s == q->res.cpu_user_s);
		assert_true(p->res.cpu_sys_s == q->res.cpu_sys_s);
		assert_memory_equal(&p->res.udp, &q->res.udp, sizeof(dv_udp_snmp_t));
		assert_int_equal(p->res.sockets, q->res.sockets);
		assert_int_equal(p->res.threads, q->res.threads);
		assert_int_equal(p->res.max_outstanding, q->res.max_outstanding);
		assert_int_equal(p->res.clock, q->res.clock);
		assert_int_equal(p->res.stamp_every, q->res.stamp_every);
		assert_int_equal(p->res.rx_filter, q->res.rx_filter);
		assert_int_equal(p->res.wire_workers, q->res.wire_workers);
		assert_int_equal(p->res.rx_filter_workers, q->res.rx_filter_workers);
		assert_int_equal(p->res.xdp.used, q->res.xdp.used);
		assert_int_equal(p->res.xdp.native, q->res.xdp.native);
		assert_int_equal(p->res.xdp.zerocopy, q->res.xdp.zerocopy);
		assert_int_equal(p->res.xdp.queues, q->res.xdp.queues);
		assert_int_equal(p->res.xdp.rx_queues, q->res.xdp.rx_queues);
		assert_int_equal(p->res.n_intervals, q->res.n_intervals);
		if (p->res.n_intervals)
			assert_memory_equal(p->res.intervals, q->res.intervals,
			                    p->res.n_intervals * sizeof(dv_interval_t));
		assert_int_equal(p->res.n_lat_cells, q->res.n_lat_cells);
		if (p->res.n_lat_cells)
			assert_memory_equal(p->res.lat_cells, q->res.lat_cells,
			                    p->res.n_lat_cells * sizeof(dv_hist_cell_t));
	}
	assert_int_equal(a->interrupted, b->interrupted);
	assert_int_equal(a->failed, b->failed);
	assert_string_equal(a->fail_msg, b->fail_msg);
}

static void test_round_trip(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	build(&a);
	a.interrupted = true;
	a.failed = -ECANCELED;
	snprintf(a.fail_msg, sizeof(a.fail_msg),
	         "target a: flush command failed with exit status 1");

	char *text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	/* One key per line, so shell tests can grep it. */
	assert_non_null(strstr(text, "\n \"schema_version\": 3,\n"));
	int rc = dv_results_read_buffer(text, strlen(text), "mem.json", &b, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_same(&a, &b);
	/* And the second generation is the same text. */
	char *again = dv_results_dump_json(&b, &err);
	assert_non_null(again);
	assert_string_equal(text, again);
	free(again);
	free(text);
	dv_study_free(&b);

	/* Through a file, atomically. */
	char dir[] = "/tmp/test_results_json.XXXXXX", path[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(dv_results_write_json(&a, path, &err), 0);
	assert_int_equal(dv_results_read_json(path, &b, &err), 0);
	assert_same(&a, &b);
	dv_study_free(&b);
	unlink(path);
	rmdir(dir);
	/* An unwritable place is an error naming the file. */
	rc = dv_results_write_json(&a, "/nonexistent-dir/r.json", &err);
	assert_true(rc < 0);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/r.json"));
	dv_study_free(&a);
}

/* The integer at o[key], failing the test when it is missing or not an integer. */
static uint64_t json_u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		fail_msg("\"%s\" missing or not an integer", key);
	return (uint64_t)json_integer_value(v);
}

/*
 * Every counter of every pass a different value (completed stays the latency
 * count, and so does wire_timed: stamps_asked is set), rcodes, qtype_other, udp and interval
 * figures too: the file holds each under its documented key, and reads back byte for byte. A
 * counter the writer or the reader forgot, or two keys swapped, fail here.
 */
static void test_every_counter_distinct(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	json_error_t jerr;
	build(&a);
	for (size_t i = 0; i < a.n_passes; i++) {
		dv_pass_result_t *r = &a.passes[i].res;
		dv_counters_t *c = &r->stats.c;
		uint64_t base = 1000000 * (i + 1);
		for (size_t k = 0; k < dv_counter_nfields; k++)
			if (dv_counter_fields[k].offset != offsetof(dv_counters_t, completed))
				*dv_counter_ptr(c, &dv_counter_fields[k]) = base + 1000 * (k + 1);
		for (int k = 0; k < DV_RCODES; k++)
			c->rcode[k] = base + 100 + (uint64_t)k;
		/* Still distinct, and within the invariants the reader checks (doc/numbers.md). */
		c->late = c->lost - 7;
		c->sent = c->completed + c->lost + c->interrupted;
		c->wire_timed = c->completed; /* stamps_asked > 0: the latency's count */
		c->qtype_other_sent = base + 201;
		c->qtype_other_completed = base + 202;
		r->udp.valid = 1;
		r->udp.in_datagrams = base + 301;
		r->udp.no_ports = base + 302;
		r->udp.in_errors = base + 303;
		r->udp.out_datagrams = base + 304;
		r->udp.rcvbuf_errors = base + 305;
		r->udp.sndbuf_errors = base + 306;
		for (size_t k = 0; k < r->n_intervals; k++) {
			dv_interval_t *x = &r->intervals[k];
			x->sent = base + 401 + 10 * k;
			x->completed = base + 402 + 10 * k;
			x->lost = base + 403 + 10 * k;
			x->inflight = base + 404 + 10 * k;
			x->lat_p50_ns = 0.5 + (double)k;
			x->lat_p99_ns = 0.25 + (double)k;
		}
	}
	char *text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	json_t *root = json_loads(text, 0, &jerr);
	assert_non_null(root);
	for (size_t i = 0; i < a.n_passes; i++) {
		const dv_counters_t *c = &a.passes[i].res.stats.c;
		json_t *cj =
		    json_object_get(json_array_get(json_object_get(root, "passes"), i), "counters");
		assert_non_null(cj);
		/* The schema's keys, written out here on purpose (doc/results-schema.md). */
#define K(member) assert_true(json_u64(cj, #member) == c->member)
		K(sent), K(not_sent), K(completed), K(lost), K(late), K(interrupted);
		K(unexpected), K(malformed), K(truncated), K(icmp_errors), K(bytes_sent);
		K(bytes_received), K(send_calls), K(recv_calls), K(wait_calls), K(inflight_peak);
		K(icmp_port_unreachable), K(client_drops), K(target_drops), K(target_sockets);
		K(wire_timed);
		K(conn_opened), K(conn_reopened), K(conn_abandoned), K(conn_failed),
		    K(conn_refused), K(conn_timeouts);
		K(conn_reset), K(conn_closed), K(conn_idle_closed), K(conn_proto_errors);
		K(conn_recycled), K(conn_lost), K(conn_inflight_peak), K(conn_pending_peak),
		    K(tls_full), K(tls_resumed);
		K(http_non200), K(http_4xx), K(http_5xx), K(stream_errors);
		K(tc_retried), K(tc_completed), K(tc_lost), K(tc_not_sent), K(forfeited),
		    K(sent_behind), K(server_holds);
		K(tsig_unsigned), K(tsig_badsig), K(tsig_badkey), K(tsig_badtime),
		    K(tsig_other_error), K(conn_backoffs), K(tc_no_conn), K(tsig_badmac),
		    K(conn_syn_retries), K(xdp_stamped), K(stamps_asked), K(rx_stamps_unused);
		K(conn_no_port), K(untimed_no_tx), K(untimed_no_rx), K(untimed_order);
#undef K
		/* Those 64, "rcode", "qtypes", "qtype_other": nothing else. */
		assert_int_equal(json_object_size(cj), 64 + 3);
		assert_int_equal(dv_counter_nfields, 64);
		json_t *qo = json_object_get(cj, "qtype_other");
		assert_true(json_u64(qo, "sent") == c->qtype_other_sent);
		assert_true(json_u64(qo, "completed") == c->qtype_other_completed);
		for (int k = 0; k < DV_RCODES; k++)
			assert_true((uint64_t)json_integer_value(json_array_get(
			                json_object_get(cj, "rcode"), (size_t)k)) == c->rcode[k]);
	}
	json_decref(root);
	int rc = dv_results_read_buffer(text, strlen(text), "mem.json", &b, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_same(&a, &b);
	free(text);
	dv_study_free(&a);
	dv_study_free(&b);
}

static void test_empty_and_nonfinite(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	build(&a);
	/* A pass with no answers: empty histogram (min UINT64_MAX), qps 0. */
	dv_pass_result_t *r = &a.passes[0].res;
	r->stats.c.completed = 0;
	r->stats.c.lost = r->stats.c.sent;
	r->stats.c.rcode[0] = 0;
	dv_hist_init(&r->stats.latency);
	r->qps = 0;
	char *text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	assert_int_equal(dv_results_read_buffer(text, strlen(text), "m", &b, &err), 0);
	assert_true(b.passes[0].res.stats.latency.min_ns == UINT64_MAX);
	assert_same(&a, &b);
	free(text);
	dv_study_free(&b);
	/* A non-finite figure is written as null, and a file holding one is refused. */
	r->qps = NAN;
	text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"qps\": null"));
	assert_int_equal(dv_results_read_buffer(text, strlen(text), "m", &b, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "passes[0]: \"qps\" must be a finite number >= 0"));
	free(text);
	dv_study_free(&a);
	return;
	dv_study_free(&a);
	dv_study_free(&b);
}

/* Replace the first occurrence of `from` in text by `to`; the result is malloc'ed. */
static char *subst(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	if (at == NULL)
		fail_msg("test data: \"%s\" not in the file", from);
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);
	assert_non_null(out);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	return out;
}

static void expect_reject(const char *text, const char *needle)
{
	dv_study_t s;
	dv_err_t err;
	memset(&err, 0, sizeof(err));
	int rc = dv_results_read_buffer(text, strlen(text), "bad.json", &s, &err);
	if (rc == 0)
		fail_msg("accepted a bad file (expected \"%s\")", needle);
	assert_int_equal(rc, -EINVAL);
	assert_memory_equal(err.msg, "bad.json", 8);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
	assert_null(s.passes);
	assert_null(s.targets);
}

static void test_rejects(void **state)
{
	(void)state;
	dv_study_t a;
	dv_err_t err;
	build(&a);
	char *good = dv_results_dump_json(&a, &err), *bad;
	assert_non_null(good);
	dv_study_free(&a);

	expect_reject("", "not valid JSON");
	expect_reject("[1, 2]", "not a dnsvolley results file");
	expect_reject("{\"schema\": \"other\"}", "not a dnsvolley results file");
	expect_reject("{\"a\": 1, \"a\": 2}", "not valid JSON");
	bad = strndup(good, strlen(good) / 2);
	expect_reject(bad, "not valid JSON");
	free(bad);
#define REJECT(from, to, needle)                                                                   \
	do {                                                                                       \
		bad = subst(good, from, to);                                                       \
		expect_reject(bad, needle);                                                        \
		free(bad);                                                                         \
	} while (0)
	REJECT("\"schema_version\": 3", "\"schema_version\": 99", "unsupported schema_version");
	REJECT("\"schema_version\": 3", "\"schema_version\": 4", "reads 1 to 3");
	REJECT("\"schema_version\": 3", "\"schema_version\": \"3\"", "unsupported schema_version");
	REJECT("\"schema_version\": 3", "\"schema_version\": 0", "unsupported schema_version");
	/* A version-1 file (written before stream transports) still reads. */
	bad = subst(good, "\"schema_version\": 3", "\"schema_version\": 1");
	{
		dv_study_t v1;
		dv_err_t e1;
		assert_int_equal(dv_results_read_buffer(bad, strlen(bad), "v1.json", &v1, &e1), 0);
		dv_study_free(&v1);
	}
	free(bad);
	REJECT("\"target\": 1", "\"target\": 7", "passes[2]: target 7 does not exist");
	REJECT("\"list\": 0", "\"list\": -1", "passes[0]: \"list\" must be an integer");
	REJECT("\"kind\": \"hot\"", "\"kind\": \"tepid\"", "passes[1]: \"kind\" must be one of");
	REJECT("\"sent\": 1000", "\"sent\": 1e3", "passes[0]: \"sent\" must be an integer");
	REJECT("\"completed\": 990", "\"completed\": 991",
	       "latency count 990 differs from completed 991");
	REJECT("\"count\": 990", "\"count\": 989", "buckets add up to 990, count says 989");
	REJECT("\"buckets\": [\n     [\n      19968", "\"buckets\": [\n     [\n      19969",
	       "not a bucket boundary");
	REJECT("\"end_reason\": \"list\"", "\"end_reason\": 3", "\"end_reason\" must be a string");
	REJECT("\"interrupted\": false", "\"interrupted\": 0",
	       "\"interrupted\" must be true or false");
	REJECT("\"label\": \"a\"", "\"label\": 5", "targets[0]: \"label\" must be a string");
	REJECT("\"sha256\": \"ba78", "\"sha256\": \"BA78", "\"sha256\" must be 64 lower-case hex");
	REJECT("\"rcode\": [", "\"rcode\": [1,", "\"rcode\" must hold 16 counts");
	REJECT("\"qtype\": 6", "\"qtype\": 0", "qtype 0 is not a type");
	REJECT("\"slot\": 5", "\"slot\": 0", "slot 0 used twice");
	REJECT("\"slot\": 5", "\"slot\": 32", "\"slot\" must be an integer from 0 to 31");
	REJECT("\"intervals\": []", "\"intervals\": {}", "\"intervals\" must be an array");
	REJECT("\"t_s\": 1.0", "\"t_s\": \"1\"", "\"t_s\" must be a number");
	REJECT("\"qtype_other\": {", "\"qtype_other_\": {", "missing \"qtype_other\"");
	REJECT("\"failed\": 0", "\"failed\": 3", "\"failed\" must be 0 or a negative");
	REJECT("\"plan\": [\n   \"cold\"", "\"plan\": [\n   \"lukewarm\"",
	       "\"kind\" must be one of");
	REJECT("\"udp_snmp\": {", "\"udp_snmp\": [", "not valid JSON");
	/* The invariants of doc/numbers.md (issue 16 item 3): the field is named. */
	REJECT("\"lost\": 10,", "\"lost\": 11,",
	       "passes[0]: sent 1000 is not completed 990 + lost 11 + interrupted 0");
	REJECT("\"sent\": 1000,", "\"sent\": 5,", "passes[0]: completed 990 is above sent 5");
	REJECT("\"lost\": 10,", "\"lost\": 2000,", "passes[0]: lost 2000 is above sent 1000");
	REJECT("\"late\": 3", "\"late\": 11", "passes[0]: late 11 is above lost 10");
	REJECT("\"qps\": 1980.0", "\"qps\": -1980.0",
	       "passes[0]: \"qps\" must be a finite number >= 0");
	REJECT("\"qps\": 1980.0", "\"qps\": null",
	       "passes[0]: \"qps\" must be a finite number >= 0");
	REJECT("\"qps\": 1980.0", "\"qps\": 1e308",
	       "passes[0]: qps 1e+308 is not completed 990 / run_time_s 0.5 (1980)");
	REJECT("\"qps\": 1980.0", "\"qps\": 1981.0", "passes[0]: qps 1981 is not completed");
	REJECT("\"run_time_s\": 0.5", "\"run_time_s\": 1e-300",
	       "passes[0]: \"run_time_s\" must be 0 or at least 1 ns");
	REJECT("\"cpu_user_s\": ", "\"cpu_user_s\": -1, \"x\": ",
	       "passes[0]: \"cpu_user_s\" must be a finite number >= 0");
	REJECT("\"t_s\": 1.0", "\"t_s\": -1.0",
	       "passes[1]: intervals[0]: \"t_s\" must be a finite number >= 0");
	REJECT("\"sum_ns\": ", "\"sum_ns\": -1, \"y\": ",
	       "passes[0]: latency \"sum_ns\" must be a finite number >= 0");
#undef REJECT
	free(good);
}

/* Paced passes (issue 13): latency_intended, forfeited and sent_behind read back
 * exactly, and are checked like the rest (count = completed, sums finite >= 0). */
static void test_intended(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	char *good, *bad, *at, *tail;

	build(&a);
	dv_pass_result_t *r = &a.passes[0].res;
	for (uint64_t k = 0; k < r->stats.c.completed; k++)
		dv_hist_add(&r->stats.latency_intended, 500000 + k * 1009);
	r->stats.c.forfeited = 3;
	r->stats.c.sent_behind = 7;
	good = dv_results_dump_json(&a, &err);
	assert_non_null(good);
	assert_int_equal(dv_results_read_buffer(good, strlen(good), "m", &b, &err), 0);
	assert_memory_equal(&b.passes[0].res.stats.latency_intended, &r->stats.latency_intended,
	                    sizeof(dv_hist_t));
	assert_int_equal(b.passes[1].res.stats.latency_intended.count, 0); /* absent: empty */
	assert_int_equal(b.passes[0].res.stats.c.forfeited, 3);
	assert_int_equal(b.passes[0].res.stats.c.sent_behind, 7);
	assert_same(&a, &b);
	dv_study_free(&a);
	dv_study_free(&b);
	bad = subst(good, "\"sent_behind\": 7", "\"sent_behind\": 1001");
	expect_reject(bad, "passes[0]: sent_behind 1001 is above sent 1000");
	free(bad);
	bad = subst(good, "\"latency_intended\": {", "\"latency_intended\": [");
	expect_reject(bad, "not valid JSON");
	free(bad);
	bad = subst(good, "\"latency_intended\": {", "\"latency_intended\": 5, \"x\": {");
	expect_reject(bad, "passes[0]: \"latency_intended\" must be an object");
	free(bad);
	/* The same edits inside latency_intended (after its key), not latency. */
	at = strstr(good, "\"latency_intended\": {");
	assert_non_null(at);
	const char *edits[][3] = {
	    {"\"sum_ns\": ", "\"sum_ns\": -1, \"y\": ",
	     "passes[0]: latency_intended \"sum_ns\" must be a finite number >= 0"},
	    {"\"sumsq_ns\": ", "\"sumsq_ns\": -1, \"y\": ",
	     "passes[0]: latency_intended \"sumsq_ns\" must be a finite number >= 0"},
	    {"\"count\": 990", "\"count\": 989", "buckets add up to 990, count says 989"},
	};
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		tail = subst(at, edits[i][0], edits[i][1]);
		bad = malloc((size_t)(at - good) + strlen(tail) + 1);
		assert_non_null(bad);
		memcpy(bad, good, (size_t)(at - good));
		strcpy(bad + (at - good), tail);
		expect_reject(bad, edits[i][2]);
		free(bad);
		free(tail);
	}
	free(good);
}

/* Capacity studies: a pass's "capacity" object reads back exactly and is checked. */
static void test_capacity_key(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	char *good, *bad;

	build(&a);
	a.passes[2].cap = (dv_capacity_figure_t){.searched = true,
	                                         .capacity_qps = 20242.5,
	                                         .generator_bound = true,
	                                         .confirmed = false,
	                                         .hit_to = true,
	                                         .steps = 13};
	good = dv_results_dump_json(&a, &err);
	assert_non_null(good);
	assert_int_equal(dv_results_read_buffer(good, strlen(good), "m", &b, &err), 0);
	assert_memory_equal(&b.passes[2].cap, &a.passes[2].cap, sizeof(dv_capacity_figure_t));
	assert_false(b.passes[0].cap.searched); /* absent: not a search */
	dv_study_free(&a);
	dv_study_free(&b);
	bad = subst(good, "\"capacity_qps\": 20242.5", "\"capacity_qps\": -1.0");
	expect_reject(bad, "passes[2]: capacity: \"capacity_qps\" must be a finite number >= 0");
	free(bad);
	bad = subst(good, "\"steps\": 13", "\"steps\": 1.5");
	expect_reject(bad, "\"steps\" must be an integer");
	free(bad);
	bad = subst(good, "\"hit_to\": true", "\"hit_to\": 1");
	expect_reject(bad, "\"hit_to\" must be true or false");
	free(bad);
	free(good);
}

/* Edit only inside the object that starts at the first "key": {" of good (not in "latency"). */
static void reject_inside(const char *good, const char *key, const char *from, const char *to,
                          const char *needle)
{
	const char *at = strstr(good, key);
	char *tail, *bad;

	if (at == NULL)
		fail_msg("test data: \"%s\" not in the file", key);
	tail = subst(at, from, to);
	bad = malloc((size_t)(at - good) + strlen(tail) + 1);
	assert_non_null(bad);
	memcpy(bad, good, (size_t)(at - good));
	strcpy(bad + (at - good), tail);
	expect_reject(bad, needle);
	free(bad);
	free(tail);
}

/*
 * Stream transports (issue 12): a pass's "connect" and "handshake" histograms read back
 * byte for byte, absent ones read back empty, and they are checked like "latency" (their
 * counts against conn_opened and tls_full + tls_resumed).
 */
static void test_connect_handshake(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	char *good, *bad;

	build(&a);
	a.run.stream = true;
	a.run.tp.kind = DV_TP_DOT;
	dv_counters_t *c = &a.passes[0].res.stats.c;
	c->conn_opened = 5;
	c->conn_failed = 2;
	c->tls_full = 1;
	c->tls_resumed = 3;
	for (uint64_t k = 0; k < 5; k++)
		dv_hist_add(&a.passes[0].res.stats.connect, 40000 + k * 10007);
	for (uint64_t k = 0; k < 4; k++)
		dv_hist_add(&a.passes[0].res.stats.handshake, 900000 + k * 250013);
	good = dv_results_dump_json(&a, &err);
	assert_non_null(good);
	assert_non_null(strstr(good, "\"transport\": \"dot\""));
	assert_int_equal(dv_results_read_buffer(good, strlen(good), "m", &b, &err), 0);
	assert_same(&a, &b);
	assert_memory_equal(&b.passes[0].res.stats.connect, &a.passes[0].res.stats.connect,
	                    sizeof(dv_hist_t));
	assert_memory_equal(&b.passes[0].res.stats.handshake, &a.passes[0].res.stats.handshake,
	                    sizeof(dv_hist_t));
	assert_int_equal(b.passes[0].res.stats.connect.count, 5);
	assert_int_equal(b.passes[0].res.stats.connect.min_ns, 40000);
	assert_int_equal(b.passes[0].res.stats.handshake.max_ns, 900000 + 3 * 250013);
	/* absent in the others: empty, as dv_stats_init leaves them */
	assert_memory_equal(&b.passes[1].res.stats.connect, &a.passes[1].res.stats.connect,
	                    sizeof(dv_hist_t));
	assert_int_equal(b.passes[1].res.stats.handshake.count, 0);
	assert_true(b.run.stream);
	assert_int_equal(b.run.tp.kind, DV_TP_DOT);
	dv_study_free(&a);
	dv_study_free(&b);
	bad = subst(good, "\"conn_opened\": 5", "\"conn_opened\": 6");
	expect_reject(bad, "passes[0]: connect count 5 differs from conn_opened 6");
	free(bad);
	bad = subst(good, "\"tls_resumed\": 3", "\"tls_resumed\": 2");
	expect_reject(bad, "passes[0]: handshake count 4 differs from tls_full + tls_resumed 3");
	free(bad);
	bad = subst(good, "\"connect\": {", "\"connect\": 5, \"x\": {");
	expect_reject(bad, "passes[0]: \"connect\" must be an object");
	free(bad);
	reject_inside(good, "\"connect\": {", "\"count\": 5", "\"count\": 4",
	              "passes[0]: connect buckets add up to 5, count says 4");
	reject_inside(good, "\"handshake\": {", "\"sum_ns\": ", "\"sum_ns\": -1, \"y\": ",
	              "passes[0]: handshake \"sum_ns\" must be a finite number >= 0");
	reject_inside(good, "\"handshake\": {", "[\n      ", "[\n      1,\n      ",
	              "passes[0]: handshake bucket 0 must be [low_ns, count > 0]");
	free(good);
}

/* The steps of a capacity search (issue 13) read back exactly with their figure. */
static void test_capacity_steps(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	char *good, *bad;

	build(&a);
	dv_pass_record_t *p = &a.passes[2];
	p->cap = (dv_capacity_figure_t){
	    .searched = true, .capacity_qps = 16000, .confirmed = true, .steps = 3};
	p->cap_steps = calloc(3, sizeof(*p->cap_steps));
	assert_non_null(p->cap_steps);
	p->n_cap_steps = 3;
	for (size_t i = 0; i < 3; i++) {
		dv_capacity_step_t *st = &p->cap_steps[i];
		st->offered_qps = 8000.0 * (double)(i + 1);
		st->sent_qps = st->offered_qps * 0.999 + 0.1 / 3;
		st->answered_qps = st->sent_qps - (double)i / 7;
		st->sent = 16000 * (i + 1);
		st->lost = i * 17;
		st->completed = st->sent - st->lost;
		st->loss = (double)st->lost / (double)st->sent;
		st->p50_ns = 100000 + i;
		st->p99_ns = 400000 + i;
		st->p99_intended_ns = 410000 + i;
		st->p999_intended_ns = 900000 + i;
		st->lat_ns = 410000 + i;
		st->cpu_share = 0.25 + (double)i / 11;
		st->verdict = i == 2 ? DV_CAP_FAIL : DV_CAP_PASS;
		snprintf(st->why, sizeof(st->why), i == 2 ? "loss 0.071%% > 0.050%% \"q\"" : "ok");
	}
	good = dv_results_dump_json(&a, &err);
	assert_non_null(good);
	assert_int_equal(dv_results_read_buffer(good, strlen(good), "m", &b, &err), 0);
	assert_memory_equal(&b.passes[2].cap, &p->cap, sizeof(p->cap));
	assert_int_equal(b.passes[2].n_cap_steps, 3);
	assert_memory_equal(b.passes[2].cap_steps, p->cap_steps, 3 * sizeof(*p->cap_steps));
	assert_string_equal(b.passes[2].cap_steps[2].why, "loss 0.071% > 0.050% \"q\"");
	assert_int_equal(b.passes[2].cap_steps[2].verdict, DV_CAP_FAIL);
	assert_null(b.passes[0].cap_steps);
	/* the second generation is the same text */
	char *again = dv_results_dump_json(&b, &err);
	assert_non_null(again);
	assert_string_equal(good, again);
	free(again);
	dv_study_free(&a);
	dv_study_free(&b);
	bad = subst(good, "\"steps\": 3", "\"steps\": 4");
	expect_reject(bad, "passes[2]: capacity: \"search\" holds 3 steps, \"steps\" says 4");
	free(bad);
	bad = subst(good, "\"verdict\": \"FAIL\"", "\"verdict\": \"fail\"");
	expect_reject(bad, "passes[2]: capacity: search[2]: \"verdict\" must be pass, FAIL");
	free(bad);
	bad = subst(good, "\"why\": \"ok\"", "\"why\": 3");
	expect_reject(bad, "\"why\" must be a string");
	free(bad);
	bad = subst(good, "\"offered_qps\": 8000.0", "\"offered_qps\": -8000.0");
	expect_reject(bad, "passes[2]: capacity: search[0]: \"offered_qps\" must be a finite");
	free(bad);
	bad = subst(good, "\"lost\": 17", "\"lost\": 40000");
	expect_reject(bad, "search[1]: completed 31983 or lost 40000 is above sent 32000");
	free(bad);
	bad = subst(good, "\"loss\": 0.0", "\"loss\": 1.5");
	expect_reject(bad, "search[0]: \"loss\" must be a fraction from 0 to 1");
	free(bad);
	/* a file without "search" (before issue 13's steps were kept) still reads */
	const char *at = strstr(good, "\"search\": [");
	const char *end = strstr(at, "\n    ]");
	assert_non_null(at);
	assert_non_null(end);
	char *old = malloc(strlen(good) + 1);
	assert_non_null(old);
	memcpy(old, good, (size_t)(at - good));
	strcpy(old + (at - good), "\"x_search\": []");
	strcat(old, end + strlen("\n    ]"));
	if (dv_results_read_buffer(old, strlen(old), "old", &b, &err) != 0)
		fail_msg("%s", err.msg);
	assert_true(b.passes[2].cap.searched);
	assert_null(b.passes[2].cap_steps);
	assert_int_equal(b.passes[2].n_cap_steps, 0);
	dv_study_free(&b);
	free(old);
	free(good);
}

/* Limits that keep a small hostile file from taking gigabytes (issue 16 item 7). */
static void test_limits(void **state)
{
	(void)state;
	dv_study_t a;
	dv_err_t err;
	char *good, *bad, *many;
	size_t n;

	build(&a);
	good = dv_results_dump_json(&a, &err);
	assert_non_null(good);
	dv_study_free(&a);
	/* More passes than DV_RESULTS_MAX_PASSES: refused before any is read. */
	n = (size_t)DV_RESULTS_MAX_PASSES + 1 - 8; /* the file has 8 passes after these */
	many = malloc(n * 3 + 16);
	assert_non_null(many);
	strcpy(many, "\"passes\": [{}");
	size_t k = strlen(many);
	for (size_t i = 1; i < n; i++, k += 3)
		memcpy(many + k, ",{}", 3);
	strcpy(many + k, ",");
	bad = subst(good, "\"passes\": [", many);
	expect_reject(bad, "10001 passes, more than the 10000 this dnsvolley reads");
	free(bad);
	/* More interval snapshots than DV_RESULTS_MAX_INTERVALS. */
	n = (size_t)DV_RESULTS_MAX_INTERVALS + 1;
	many = realloc(many, n * 3 + 32);
	assert_non_null(many);
	strcpy(many, "\"intervals\": [{}");
	for (size_t i = 1; i < n; i++)
		memcpy(many + strlen("\"intervals\": [{}") + 3 * (i - 1), ",{}", 4);
	strcat(many, "]");
	bad = subst(good, "\"intervals\": []", many);
	expect_reject(bad, "more than 500000 interval snapshots");
	free(bad);
	free(many);
	free(good);
	/* More JSON values than DV_RESULTS_MAX_VALUES: refused before parsing. */
	n = (size_t)DV_RESULTS_MAX_VALUES + 1;
	many = malloc(2 * n + 2);
	assert_non_null(many);
	many[0] = '[';
	for (size_t i = 0; i < n; i++)
		memcpy(many + 1 + 2 * i, "0,", 2);
	many[2 * n] = ']';
	many[2 * n + 1] = '\0';
	dv_study_t s;
	assert_int_equal(dv_results_read_buffer(many, 2 * n + 1, "v.json", &s, &err), -EFBIG);
	assert_non_null(strstr(err.msg, "v.json: more than 10000000 JSON values"));
	free(many);
}

/*
 * The reader must never crash nor leak on damaged input (the fuzz target replays
 * more): flip, delete and duplicate bytes of a valid file thousands of times.
 */
static void test_mutations(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	build(&a);
	char *good = dv_results_dump_json(&a, &err);
	dv_study_free(&a);
	size_t len = strlen(good);
	char *buf = malloc(len + 16);
	unsigned seed = 12345, accepted = 0;
	static const char junk[] = "{}[],:\"0-9e.tfn \\";
	FILE *devnull = fopen("/dev/null", "w");
	assert_non_null(devnull);
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(buf, good, len + 1);
		size_t n = len;
		for (int m = 0; m < 1 + iter % 4; m++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % n;
			switch ((seed >> 4) % 3) {
			case 0:
				buf[at] = junk[(seed >> 16) % (sizeof(junk) - 1)];
				break;
			case 1:
				memmove(buf + at, buf + at + 1, n - at);
				n--;
				break;
			default:
				if (at > 0 && n + 1 < len + 16) {
					memmove(buf + at + 1, buf + at, n - at + 1);
					n++;
				}
			}
		}
		if (dv_results_read_buffer(buf, n, "mut.json", &b, &err) == 0) {
			accepted++;
			dv_study_print_table(&b, devnull);
			dv_study_print_summary(&b, devnull);
			dv_study_free(&b);
		} else {
			assert_memory_equal(err.msg, "mut.json", 8);
		}
	}
	/* Most mutations must be caught; some (a digit in a figure) are legitimately valid. */
	assert_true(accepted < 1500);
	fclose(devnull);
	free(buf);
	free(good);
}

/* The report's clock lines of pass i of s (dv_report_clock), malloc'ed. */
static char *clock_text(const dv_study_t *s, size_t i)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	dv_report_clock(f, &s->passes[i].res, s->run.stream);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Pass r on the wire clock's sample: asked of sent queries asked a stamp, timed of them
 * timed (the latency's count), unused stamps taken by another datagram. */
static void sample(dv_pass_result_t *r, uint32_t every, bool filter, uint64_t asked, uint64_t timed,
                   uint64_t unused)
{
	r->clock = DV_PASS_CLOCK_WIRE;
	r->stamp_every = every;
	r->rx_filter = filter;
	r->wire_workers = r->threads; /* every worker of the one kind */
	r->rx_filter_workers = filter ? r->threads : 0;
	r->stats.c.stamps_asked = asked;
	r->stats.c.wire_timed = timed;
	r->stats.c.rx_stamps_unused = unused;
	dv_hist_init(&r->stats.latency);
	for (uint64_t k = 0; k < timed; k++)
		dv_hist_add(&r->stats.latency, 30000 + k * 101);
}

/*
 * The Latency clock line (and the AF_XDP and Receive stamps unused lines after it) of a
 * results file read back is the run's, byte for byte, on every clock; a file from before
 * the clock was recorded says "not recorded", never another clock; a file whose clock
 * contradicts its passes[].xdp, or names no clock, is refused.
 */

/* text (a results file) as an older version wrote it, without the NULL-ended keys in
 * every pass, read into b; fails the test when it does not read. Returns the text (free). */
static char *read_older(const char *text, const char *const *keys, dv_study_t *b)
{
	json_error_t jerr;
	dv_err_t err;
	json_t *root = json_loads(text, 0, &jerr), *passes;
	char *old;

	assert_non_null(root);
	passes = json_object_get(root, "passes");
	for (size_t i = 0; i < json_array_size(passes); i++)
		for (size_t k = 0; keys[k] != NULL; k++)
			json_object_del(json_array_get(passes, i), keys[k]);
	old = json_dumps(root, 0);
	assert_non_null(old);
	json_decref(root);
	if (dv_results_read_buffer(old, strlen(old), "old.json", b, &err) != 0)
		fail_msg("%s", err.msg);
	return old;
}

static void test_clock(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	build(&a);
	dv_pass_result_t *r = &a.passes[0].res; /* sent 1000, completed 990 */
	sample(r, 16, true, 63, 60, 3);
	sample(&a.passes[1].res, 1, false, 1000, 989, 0); /* 1/1: every answer timed */
	a.passes[2].res.clock = DV_PASS_CLOCK_APP;
	a.passes[3].res.clock = DV_PASS_CLOCK_MIXED;  /* latency count 987 = completed */
	a.passes[3].res.stats.c.wire_timed = 10;      /* a wire rank's part: count from 10 to 987 */
	a.passes[4].res.stats.c.rx_stamps_unused = 5; /* not recorded, the counter is */
	a.passes[5].res.clock = DV_PASS_CLOCK_XDP;    /* passes[5].xdp is set */
	a.passes[5].res.stats.c.xdp_stamped = 900;
	sample(&a.passes[6].res, 0, true, 80, 70, 10); /* merged samples of different rates */
	a.passes[7].res.clock = DV_PASS_CLOCK_APP;

	const char *want[8] = {
	    "  Latency clock:        wire (kernel stamps: transmit on 1 in 16 queries, receive on "
	    "those by a socket filter), latency of 60 answers (63 asked) of 990\n"
	    "  Receive stamps unused: 3 (taken by a datagram that was not the query's answer: a "
	    "duplicate, forged or stray answer; those queries untimed)\n",
	    "  Latency clock:        wire (kernel transmit and receive stamps), 989 of 989 answers "
	    "stamped at both ends\n",
	    "  Latency clock:        app (before sendmmsg, after recvmmsg)\n",
	    "  Latency clock:        mixed (the ranks merged were timed on different clocks)\n",
	    "  Latency clock:        not recorded (a results file from before dnsvolley recorded "
	    "it)\n"
	    "  Receive stamps unused: 5 (taken by a datagram that was not the query's answer: a "
	    "duplicate, forged or stray answer; those queries untimed)\n",
	    "  Latency clock:        xdp (program receive stamps, send-side app clock), 900 of 985 "
	    "answers stamped (the rest: read time)\n"
	    "  AF_XDP:               native (driver) attach, copy bind, 2 queues of 4\n",
	    "  Latency clock:        wire (kernel stamps: transmit on about 1 in 12 queries, "
	    "receive "
	    "on those by a socket filter), latency of 70 answers (80 asked) of 984\n"
	    "  Receive stamps unused: 10 (taken by a datagram that was not the query's answer: a "
	    "duplicate, forged or stray answer; those queries untimed)\n",
	    "  Latency clock:        app (before sendmmsg, after recvmmsg)\n",
	};
	char *text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"clock\": \"wire\""));
	assert_non_null(strstr(text, "\"clock\": null")); /* pass 4's */
	int rc = dv_results_read_buffer(text, strlen(text), "mem.json", &b, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_same(&a, &b);
	for (size_t i = 0; i < a.n_passes; i++) {
		char *live = clock_text(&a, i), *back = clock_text(&b, i);
		assert_string_equal(live, want[i]);
		assert_string_equal(back, live);
		free(live);
		free(back);
	}
	/* Over connections, the app clock's reads are the connection's. */
	b.run.stream = true;
	char *stream = clock_text(&b, 2);
	assert_string_equal(stream, "  Latency clock:        app (before each write, after each "
	                            "read of the connection)\n");
	free(stream);
	dv_study_free(&b);

	/* An older file (no "clock"): not recorded, whatever its counters hold. */
	char *old = read_older(text, (const char *const[]){"clock", NULL}, &b);
	for (size_t i = 0; i < b.n_passes; i++) {
		char *back = clock_text(&b, i);
		assert_int_equal(b.passes[i].res.clock, DV_PASS_CLOCK_UNKNOWN);
		assert_memory_equal(back, "  Latency clock:        not recorded (", 37);
		free(back);
	}
	free(old);
	dv_study_free(&b);

	char *bad = subst(text, "\"clock\": \"wire\"", "\"clock\": \"xdp\"");
	expect_reject(bad, "passes[0]: \"clock\" is xdp, but the pass has no \"xdp\" object");
	free(bad);
	bad = subst(text, "\"clock\": \"xdp\"", "\"clock\": \"app\"");
	expect_reject(bad, "passes[5]: \"clock\" is app, but the pass has an \"xdp\" object");
	free(bad);
	bad = subst(text, "\"clock\": \"wire\"", "\"clock\": \"sundial\"");
	expect_reject(bad, "passes[0]: \"clock\" must be app, wire, xdp, mixed or null");
	free(bad);
	bad = subst(text, "\"clock\": \"wire\"", "\"clock\": 2");
	expect_reject(bad, "passes[0]: \"clock\" must be app, wire, xdp, mixed or null");
	free(bad);
	free(text);
	/* Mixed: the latency count lies from wire_timed (every rank sampled) to completed. */
	dv_pass_result_t *m = &a.passes[3].res;
	m->stats.c.wire_timed = m->stats.c.completed;
	dv_hist_init(&m->stats.latency);
	for (uint64_t k = 1; k < m->stats.c.completed; k++)
		dv_hist_add(&m->stats.latency, 40000 + k);
	text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	expect_reject(text,
	              "passes[3]: latency count 986 is not from wire_timed 987 to completed 987");
	free(text);
	dv_study_free(&a);
}

/*
 * A pass on the sampled wire clock whose sample drew no query (a list shorter than 1 in
 * stamp_every: stamps_asked 0, nothing timed, answers completed) is what the run wrote:
 * report, compare and --baseline read it back. A pass that claims no sample (the app
 * clock) with the same empty latency is still refused.
 */
static void test_clock_empty_sample(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	build(&a);
	for (size_t i = 0; i < a.n_passes; i++)
		a.passes[i].res.clock =
		    a.passes[i].res.xdp.used ? DV_PASS_CLOCK_XDP : DV_PASS_CLOCK_APP;
	sample(&a.passes[0].res, 16, true, 0, 0, 0); /* completed 990, none timed */
	char *text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	if (dv_results_read_buffer(text, strlen(text), "mem.json", &b, &err) != 0)
		fail_msg("%s", err.msg);
	assert_same(&a, &b);
	char *back = clock_text(&b, 0);
	assert_string_equal(back,
	                    "  Latency clock:        wire (kernel stamps: transmit on 1 in 16 "
	                    "queries, receive on those by a socket filter), latency of 0 "
	                    "answers (0 asked) of 990\n");
	free(back);
	dv_study_free(&b);
	char *bad = subst(text, "\"clock\": \"wire\"", "\"clock\": \"app\"");
	expect_reject(bad, "passes[0]: latency count 0 differs from completed 990");
	free(bad);
	free(text);
	dv_study_free(&a);
}

/*
 * A pass whose workers took their receive stamps both ways (the socket filter on some,
 * every answer's control message on the others: the filter could not be attached to one
 * worker's sockets, or ranks merged) says how many of each in its Latency clock line, and
 * the results file keeps it: `dnsvolley report` prints the same line. A file from before
 * the worker counts ("rx_stamp_filter" alone) reads as its threads all of that one kind,
 * with the line it always had; counts that contradict "rx_stamp_filter" are refused.
 */
static void test_clock_rx_workers(void **state)
{
	(void)state;
	dv_study_t a, b;
	dv_err_t err;
	build(&a);
	sample(&a.passes[0].res, 16, false, 63, 60, 0); /* sampled: 1 worker of 3 by the filter */
	a.passes[0].res.threads = a.passes[0].res.wire_workers = 3;
	a.passes[0].res.rx_filter_workers = 1;
	sample(&a.passes[1].res, 1, false, 1000, 989, 0); /* every query stamped: 1 of 2 */
	a.passes[1].res.rx_filter_workers = 1;
	sample(&a.passes[2].res, 16, true, 63, 60, 0);   /* all by the filter */
	sample(&a.passes[3].res, 16, false, 63, 60, 0);  /* none */
	sample(&a.passes[4].res, 1, true, 1000, 986, 0); /* every query, all by the filter */
	const char *want[5] = {
	    "  Latency clock:        wire (kernel stamps: transmit on 1 in 16 queries, receive on "
	    "those by a socket filter on 1 of 3 workers, on all on the other 2), latency of 60 "
	    "answers (63 asked) of 990\n",
	    "  Latency clock:        wire (kernel transmit and receive stamps, receive by a socket "
	    "filter on 1 of 2 workers), 989 of 989 answers stamped at both ends\n",
	    "  Latency clock:        wire (kernel stamps: transmit on 1 in 16 queries, receive on "
	    "those by a socket filter), latency of 60 answers (63 asked) of 988\n",
	    "  Latency clock:        wire (kernel stamps: transmit on 1 in 16 queries, receive on "
	    "all), latency of 60 answers (63 asked) of 987\n",
	    "  Latency clock:        wire (kernel transmit and receive stamps, receive by a socket "
	    "filter), 986 of 986 answers stamped at both ends\n",
	};
	char *text = dv_results_dump_json(&a, &err);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"wire_workers\": 3,\n"));
	assert_non_null(strstr(text, "\"rx_stamp_filter_workers\": 1,\n"));
	int rc = dv_results_read_buffer(text, strlen(text), "mem.json", &b, &err);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_same(&a, &b);
	for (size_t i = 0; i < 5; i++) {
		char *live = clock_text(&a, i), *back = clock_text(&b, i);
		assert_string_equal(live, want[i]);
		assert_string_equal(back, live);
		free(live);
		free(back);
	}
	dv_study_free(&b);

	/* An older file: no worker counts; the all and none passes read with their lines. */
	char *old = read_older(
	    text, (const char *const[]){"wire_workers", "rx_stamp_filter_workers", NULL}, &b);
	for (size_t i = 2; i < 5; i++) {
		char *back = clock_text(&b, i);
		assert_string_equal(back, want[i]);
		assert_int_equal(b.passes[i].res.wire_workers, 2);
		assert_int_equal(b.passes[i].res.rx_filter_workers,
		                 b.passes[i].res.rx_filter ? 2 : 0);
		free(back);
	}
	assert_int_equal(b.passes[5].res.wire_workers, 0); /* not on the wire clock */
	free(old);
	dv_study_free(&b);

	char *bad =
	    subst(text, "\"rx_stamp_filter_workers\": 1,", "\"rx_stamp_filter_workers\": 4,");
	expect_reject(bad, "passes[0]: rx_stamp_filter_workers 4 is above wire_workers 3");
	free(bad);
	bad = subst(text, "\"rx_stamp_filter\": false", "\"rx_stamp_filter\": true");
	expect_reject(bad, "passes[0]: \"rx_stamp_filter\" is true, but 1 of 3 wire workers took "
	                   "receive stamps by the filter");
	free(bad);
	free(text);
	dv_study_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_every_counter_distinct),
	    cmocka_unit_test(test_empty_and_nonfinite),
	    cmocka_unit_test(test_rejects),
	    cmocka_unit_test(test_intended),
	    cmocka_unit_test(test_capacity_key),
	    cmocka_unit_test(test_connect_handshake),
	    cmocka_unit_test(test_capacity_steps),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_clock_empty_sample),
	    cmocka_unit_test(test_clock_rx_workers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
