/* test_replay: query rewrites, --multiply rotations, time order and the client cap
 * (src/input/replay.c). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "input/replay.h"

/* q<i>.example. A, RD clear, with an OPT RR holding ECS (11 octets) and COOKIE (12) when opt. */
static size_t make_query(uint8_t *m, unsigned i, int opt, size_t *qlen)
{
	size_t n = 0;
	char label[8];
	int ll = snprintf(label, sizeof(label), "q%u", i);
	static const uint8_t optrr[] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 23,
	                                /* ECS: family 1, /24, 192.0.2 */
	                                0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2,
	                                /* COOKIE: 8 octets */
	                                0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
	const uint8_t hdr[12] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, (uint8_t)(opt ? 1 : 0)};

	memcpy(m, hdr, 12);
	n = 12;
	m[n++] = (uint8_t)ll;
	memcpy(m + n, label, (size_t)ll);
	n += (size_t)ll;
	memcpy(m + n, "\7example\0\0\1\0\1", 13);
	n += 13;
	*qlen = n - 12;
	if (opt) {
		memcpy(m + n, optrr, sizeof(optrr));
		n += sizeof(optrr);
	}
	return n;
}

static void test_rewrite(void **state)
{
	(void)state;
	uint8_t m[128];
	size_t qlen, len = make_query(m, 7, 1, &qlen), base = 12 + qlen;
	dv_replay_options_t o;

	dv_replay_options_init(&o);
	o.strip_ecs = true;
	assert_int_equal(dv_replay_rewrite(m, &len, qlen, &o), 1);
	assert_int_equal(len, base + 11 + 12);
	assert_int_equal(m[base + 9] << 8 | m[base + 10], 12); /* RDLENGTH: the cookie only */
	assert_int_equal(m[base + 11] << 8 | m[base + 12], 10);
	assert_int_equal(dv_replay_rewrite(m, &len, qlen, &o), 0); /* nothing left to strip */
	o.strip_edns_options = true;
	assert_int_equal(dv_replay_rewrite(m, &len, qlen, &o), 1);
	assert_int_equal(len, base + 11);
	assert_int_equal(m[base + 9] << 8 | m[base + 10], 0);
	assert_int_equal(m[2] & 1, 0);
	dv_replay_options_init(&o);
	o.force_rd = true;
	assert_int_equal(dv_replay_rewrite(m, &len, qlen, &o), 1);
	assert_int_equal(m[2] & 1, 1);
	/* ARCOUNT says 2 records but there is one: cannot be walked, left as it is. */
	len = make_query(m, 7, 1, &qlen);
	m[11] = 2;
	o.strip_ecs = true;
	o.force_rd = false;
	assert_int_equal(dv_replay_rewrite(m, &len, qlen, &o), -EINVAL);
	assert_int_equal(len, base + 34);
}

/* A timed list of n queries: ts[i] and client[i] as given (owned arrays). */
static void make_list(dv_querylist_t *ql, size_t n, const uint64_t *ts, const uint32_t *client,
                      size_t clients, int opt)
{
	uint8_t m[128];
	size_t i, qlen, len, w = 0;

	memset(ql, 0, sizeof(*ql));
	ql->arena = malloc(n * 128);
	ql->off = malloc((n + 1) * sizeof(*ql->off));
	ql->qlen = malloc(n * sizeof(*ql->qlen));
	ql->ts_ns = malloc(n * sizeof(*ql->ts_ns));
	ql->client = malloc(n * sizeof(*ql->client));
	assert_non_null(ql->client);
	for (i = 0; i < n; i++) {
		len = make_query(m, (unsigned)i, opt, &qlen);
		memcpy(ql->arena + w, m, len);
		ql->off[i] = (uint32_t)w;
		w += len;
		ql->qlen[i] = (uint16_t)qlen;
		ql->ts_ns[i] = ts[i];
		ql->client[i] = client[i];
	}
	ql->off[n] = (uint32_t)w;
	ql->arena_len = w;
	ql->count = n;
	ql->clients = clients;
}

/* The i of "q<i>.example." of query k. */
static unsigned name_of(const dv_querylist_t *ql, size_t k)
{
	size_t len;
	const uint8_t *m = dv_querylist_get(ql, k, &len);
	return (unsigned)strtoul((const char *)m + 14, NULL, 10);
}

static void test_multiply(void **state)
{
	(void)state;
	static const uint64_t ts[4] = {0, 300, 600, 900};
	static const uint32_t cl[4] = {0, 1, 0, 1};
	dv_querylist_t ql;
	dv_replay_options_t o;
	dv_replay_info_t info;
	dv_err_t err;

	make_list(&ql, 4, ts, cl, 2, 0);
	dv_replay_options_init(&o);
	o.multiply = 2;
	assert_int_equal(dv_replay_prepare(&ql, &o, &info, &err), 0);
	/* period = 900 + 300; copy 1 is rotated by 600: 600, 900, 0, 300 with clients 2, 3. */
	assert_int_equal(ql.period_ns, 1200);
	assert_int_equal(ql.count, 8);
	assert_int_equal(ql.clients, 4);
	static const uint64_t want_ts[8] = {0, 0, 300, 300, 600, 600, 900, 900};
	static const uint32_t want_cl[8] = {0, 2, 1, 3, 0, 2, 1, 3};
	static const unsigned want_q[8] = {0, 2, 1, 3, 2, 0, 3, 1};
	for (size_t k = 0; k < 8; k++) {
		assert_int_equal(ql.ts_ns[k], want_ts[k]);
		assert_int_equal(ql.client[k], want_cl[k]);
		assert_int_equal(name_of(&ql, k), want_q[k]);
	}
	assert_true(info.timed);
	assert_int_equal(info.captured_clients, 2);
	assert_int_equal(info.clients, 4);
	assert_int_equal(info.per_client_min, 2);
	assert_int_equal(info.per_client_max, 2);
	assert_float_equal(info.captured_qps, 3 * 1e9 / 900, 1e-6);
	assert_float_equal(info.schedule_qps, 2 * 3 * 1e9 / 900, 1e-6);
	dv_querylist_free(&ql);
}

static void test_order_cap_and_rewrite(void **state)
{
	(void)state;
	static const uint64_t ts[5] = {0, 500, 200, 200, 900};
	static const uint32_t cl[5] = {0, 1, 2, 3, 4};
	dv_querylist_t ql;
	dv_replay_options_t o;
	dv_replay_info_t info;
	dv_err_t err;
	size_t len;

	make_list(&ql, 5, ts, cl, 5, 1);
	dv_replay_options_init(&o);
	o.max_clients = 2;
	o.strip_ecs = true;
	o.timing = DV_TIMING_ORIGINAL;
	o.speed = 2;
	assert_int_equal(dv_replay_prepare(&ql, &o, &info, &err), 0);
	static const unsigned want_q[5] = {0, 2, 3, 1, 4}; /* stable: 2 before 3 */
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(name_of(&ql, k), want_q[k]);
	assert_int_equal(ql.ts_ns[1], 200);
	assert_int_equal(ql.ts_ns[3], 500);
	/* clients 0, 2, 3, 1, 4 mod 2 */
	assert_int_equal(ql.client[0], 0);
	assert_int_equal(ql.client[1], 0);
	assert_int_equal(ql.client[2], 1);
	assert_int_equal(ql.client[3], 1);
	assert_int_equal(ql.client[4], 0);
	assert_int_equal(ql.clients, 2);
	assert_int_equal(info.clients, 2);
	assert_int_equal(info.per_client_min, 2);
	assert_int_equal(info.per_client_median, 2);
	assert_int_equal(info.per_client_max, 3);
	assert_int_equal(info.rewritten, 5);
	dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 12 + 16 + 11 + 12); /* q0: header, question, OPT, COOKIE */
	assert_float_equal(info.schedule_qps, 2 * 4 * 1e9 / 900, 1e-6);
	dv_querylist_free(&ql);
}

/* One packet stamped 1970 in a 2023 capture (issue 28 item 10): the 54-year gap is cut to
 * the mean of the others, and the schedule is the capture's few milliseconds. */
static void test_clock_jump(void **state)
{
	(void)state;
	const uint64_t J = 1700000000ULL * 1000000000ULL, ms = 1000000;
	const uint64_t ts[5] = {J, 0, J + 1 * ms, J + 2 * ms, J + 3 * ms};
	static const uint32_t cl[5] = {0, 0, 0, 0, 0};
	dv_querylist_t ql;
	dv_replay_options_t o;
	dv_replay_info_t info;
	dv_err_t err;
	char text[32];

	make_list(&ql, 5, ts, cl, 1, 0);
	dv_replay_options_init(&o);
	o.timing = DV_TIMING_ORIGINAL;
	assert_int_equal(dv_replay_prepare(&ql, &o, &info, &err), 0);
	static const unsigned want_q[5] = {1, 0, 2, 3, 4};
	for (size_t k = 0; k < 5; k++) {
		assert_int_equal(name_of(&ql, k), want_q[k]);
		assert_int_equal(ql.ts_ns[k], k * ms);
	}
	assert_int_equal(info.gaps_cut, 1);
	assert_int_equal(info.longest_gap_ns, J);
	assert_int_equal(info.gap_kept_ns, ms);
	assert_int_equal(ql.period_ns, 5 * ms);
	assert_float_equal(info.captured_qps, 1000, 1e-9);
	dv_replay_duration_text(info.longest_gap_ns, text, sizeof(text));
	assert_string_equal(text, "53.9 years");
	dv_querylist_free(&ql);

	/* A packet stamped two hours late at the end, and a gap of exactly 1 h (kept). */
	const uint64_t h = 3600ULL * 1000000000ULL;
	const uint64_t ts2[5] = {0, 2 * ms, h + 2 * ms, h + 4 * ms, 3 * h + 4 * ms};
	make_list(&ql, 5, ts2, cl, 1, 0);
	assert_int_equal(dv_replay_prepare(&ql, &o, &info, &err), 0);
	assert_int_equal(info.gaps_cut, 1);
	assert_int_equal(info.longest_gap_ns, 2 * h);
	assert_int_equal(info.gap_kept_ns, (h + 4 * ms) / 3);
	assert_int_equal(ql.ts_ns[3], h + 4 * ms);
	assert_int_equal(ql.ts_ns[4], h + 4 * ms + (h + 4 * ms) / 3);
	dv_querylist_free(&ql);

	/* The units a person reads. */
	static const struct {
		uint64_t ns;
		const char *text;
	} d[] = {{850000, "850 us"},        {12500000, "12.5 ms"},
	         {3200000000ULL, "3.20 s"}, {2520ULL * 1000000000ULL, "42.0 min"},
	         {5 * h, "5.00 h"},         {288 * h, "12.0 days"}};
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		dv_replay_duration_text(d[i].ns, text, sizeof(text));
		assert_string_equal(text, d[i].text);
	}
}

static void test_needs_times(void **state)
{
	(void)state;
	static const uint64_t ts[2] = {0, 1};
	static const uint32_t cl[2] = {0, 0};
	dv_querylist_t ql;
	dv_replay_options_t o;
	dv_err_t err;

	make_list(&ql, 2, ts, cl, 1, 0);
	free(ql.ts_ns);
	ql.ts_ns = NULL;
	dv_replay_options_init(&o);
	o.timing = DV_TIMING_ORIGINAL;
	assert_int_equal(dv_replay_prepare(&ql, &o, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--timing original needs capture times"));
	o.timing = DV_TIMING_LIST;
	o.multiply = 3;
	assert_int_equal(dv_replay_prepare(&ql, &o, NULL, &err), -EINVAL);
	o.multiply = 1;
	assert_int_equal(dv_replay_prepare(&ql, &o, NULL, &err), 0);
	assert_int_equal(ql.count, 2);
	dv_querylist_free(&ql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rewrite),
	    cmocka_unit_test(test_multiply),
	    cmocka_unit_test(test_order_cap_and_rewrite),
	    cmocka_unit_test(test_needs_times),
	    cmocka_unit_test(test_clock_jump),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
