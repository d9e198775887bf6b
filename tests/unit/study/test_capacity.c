/* test_capacity: the capacity search against simulated servers, and the step verdicts. */
#include "config.h"

#include <errno.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "study/capacity.h"

/* Run the state machine against a server that passes below cap (and is generator-bound
 * from gen_limit, 0 = never); returns the steps taken. */
static size_t simulate(const dv_capacity_opts_t *o, double cap, double gen_limit,
                       dv_capacity_search_t *s)
{
	size_t n = 0;

	dv_capacity_search_init(s, o);
	while (s->next > 0 && n < 1000) {
		dv_cap_verdict_t v = gen_limit > 0 && s->next >= gen_limit ? DV_CAP_GENBOUND
		                     : s->next <= cap                      ? DV_CAP_PASS
		                                                           : DV_CAP_FAIL;
		dv_capacity_search_step(s, o, v);
		n++;
	}
	return n;
}

static void test_search_finds_capacity(void **state)
{
	dv_capacity_opts_t o;
	dv_capacity_search_t s;
	double caps[] = {1500, 20000, 100000, 777777};

	(void)state;
	dv_capacity_opts_init(&o);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		size_t n = simulate(&o, caps[i], 0, &s);
		assert_true(s.lo <= caps[i]);
		assert_true(s.hi > caps[i]);
		assert_true(s.hi / s.lo <= 1.02);
		assert_true(s.confirmed);
		assert_false(s.generator_bound);
		assert_true(n <= 20);
	}
	/* 100k from 1000: 1k..64k pass (7), 128k fails, 6 bisections, 1 confirmation. */
	assert_int_equal(simulate(&o, 100000, 0, &s), 15);
}

static void test_search_generator_bound(void **state)
{
	dv_capacity_opts_t o;
	dv_capacity_search_t s;

	(void)state;
	dv_capacity_opts_init(&o);
	simulate(&o, 1e9, 50000, &s);
	assert_true(s.generator_bound);
	assert_true(s.lo == 32000); /* the last passing step: "at least 32000" */
	assert_false(s.confirmed);
}

static void test_search_bounds(void **state)
{
	dv_capacity_opts_t o;
	dv_capacity_search_t s;

	(void)state;
	dv_capacity_opts_init(&o);
	o.to = 5000;
	simulate(&o, 1e9, 0, &s);
	assert_true(s.hit_to);
	assert_true(s.lo == 5000);
	/* Failing at every rate ends with nothing. */
	dv_capacity_opts_init(&o);
	simulate(&o, 0.5, 0, &s);
	assert_true(s.lo == 0);
	assert_true(s.next == 0);
}

static void pass_result(dv_pass_result_t *r, uint64_t sent, uint64_t completed, uint64_t lat_ns)
{
	memset(r, 0, sizeof(*r));
	dv_stats_init(&r->stats);
	r->stats.c.sent = sent;
	r->stats.c.completed = completed;
	r->stats.c.lost = sent - completed;
	for (uint64_t i = 0; i < completed; i++) {
		dv_hist_add(&r->stats.latency, lat_ns);
		dv_hist_add(&r->stats.latency_intended, lat_ns * 2);
	}
	r->elapsed_s = 3;
	r->max_outstanding = 100;
	r->stats.c.inflight_peak = 10;
	r->cpu_user_s = 0.1;
}

static void test_judge(void **state)
{
	dv_capacity_opts_t o;
	dv_capacity_step_t st;
	static dv_pass_result_t r;

	(void)state;
	dv_capacity_opts_init(&o); /* step 2 s, loss 0.1% */
	/* 1000 qps x 2 s: 2001 due. */
	pass_result(&r, 2001, 2000, 1000000);
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_PASS);
	pass_result(&r, 2001, 1997, 1000000); /* 4 lost: 0.2% */
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_FAIL);
	pass_result(&r, 1980, 1980, 1000000); /* 1.05% behind, no loss */
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	pass_result(&r, 1900, 1890, 1000000); /* behind, window full, loss: the server */
	r.stats.c.inflight_peak = 100;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_FAIL);
	pass_result(&r, 1900, 1890, 1000000); /* behind with room in the window: generator */
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	/* Behind with room in the window because a stream server held sends back (its
	 * stream limit, an undrained send buffer): the server's limit, whatever the SLO. */
	pass_result(&r, 1900, 1900, 1000000);
	r.stats.c.server_holds = 3;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_FAIL);
	assert_non_null(strstr(st.why, "sent 1900 of 2001 due: server held sends back 3x"));
	r.stats.c.sent = 2001; /* on schedule: holds that cost nothing do not fail it */
	r.stats.c.completed = 2001;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_PASS);
	r.stats.c.sent_behind = 30; /* all sent, 1.5% over 2 ms late: the server's delay, */
	dv_capacity_judge(&o, 1000, 1, &r, &st); /* judged by the SLO, never generator-bound */
	assert_int_equal(st.verdict, DV_CAP_PASS);
	r.stats.c.server_holds = 0; /* the same lateness without holds: the generator's */
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	r.stats.c.server_holds = 3;
	r.stats.c.sent_behind = 0;
	r.cpu_user_s = 2.9; /* a saturated generator is still generator-bound */
	r.stats.c.sent = 1900;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	pass_result(&r, 2001, 2001, 1000000); /* 11 sent over 2 ms late (0.55%) */
	r.stats.c.sent_behind = 11;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	r.stats.c.sent_behind = 10;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_PASS);
	pass_result(&r, 1993, 1993, 1000000); /* 0.4% behind: fine */
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_PASS);
	/* p99 limit 1.5 ms: 1 ms sent-based passes, 2 ms intended-based fails. */
	o.max_lat_ns = 1.5e6;
	pass_result(&r, 2001, 2001, 1000000);
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_FAIL);
	/* the step keeps both p99s (results files carry them): 1 ms and 2 ms exactly (every
	 * answer the same: the histogram's quantile is clamped to it) */
	assert_int_equal(st.p99_ns, 1000000);
	assert_int_equal(st.p99_intended_ns, 2000000);
	assert_int_equal(st.lat_ns, 2000000);
	o.lat_intended = false;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_PASS);
	/* Answers dropped by the generator's own sockets (SO_MEMINFO): generator-bound,
	 * even where the step would pass, and where its loss would fail the SLO. */
	r.stats.c.client_drops = 1;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	assert_non_null(strstr(st.why, "own sockets dropped 1 answer "));
	r.stats.c.lost = 50;
	r.stats.c.client_drops = 50;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
	assert_non_null(strstr(st.why, "dropped 50 answers"));
	r.stats.c.client_drops = 0;
	r.stats.c.lost = 0;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_PASS);
	/* A saturated generator CPU is generator-bound whatever the server did. */
	r.cpu_user_s = 2.9;
	r.stats.c.lost = 1000;
	dv_capacity_judge(&o, 1000, 1, &r, &st);
	assert_int_equal(st.verdict, DV_CAP_GENBOUND);
}

/* The verdict names read back (results files) and nothing else does. */
static void test_verdict_names(void **state)
{
	dv_cap_verdict_t v = DV_CAP_ERROR;
	(void)state;

	for (int i = DV_CAP_PASS; i <= DV_CAP_ERROR; i++) {
		assert_int_equal(dv_cap_verdict_parse(dv_cap_verdict_name((dv_cap_verdict_t)i), &v),
		                 0);
		assert_int_equal(v, i);
	}
	assert_string_equal(dv_cap_verdict_name(DV_CAP_GENBOUND), "generator-bound");
	assert_int_equal(dv_cap_verdict_parse("fail", &v), -EINVAL);
	assert_int_equal(dv_cap_verdict_parse(NULL, &v), -EINVAL);
	dv_capacity_figure_t f = {0};
	assert_string_equal(dv_capacity_figure_verdict(&f), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_search_finds_capacity),
	    cmocka_unit_test(test_search_generator_bound),
	    cmocka_unit_test(test_search_bounds),
	    cmocka_unit_test(test_judge),
	    cmocka_unit_test(test_verdict_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
