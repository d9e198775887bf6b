/* test_pacer: exact counts on a fake clock, next-due agreement, backlog cap, unlimited. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "engine/pacer.h"

#define NS_PER_S 1000000000ULL

static uint64_t rng_state = 42;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* What the schedule says is due by t (inclusive): floor(elapsed * rate) + 1. */
static uint64_t expected_due(double rate, uint64_t elapsed_ns)
{
	return (uint64_t)floorl((long double)elapsed_ns * rate / 1e9L) + 1;
}

/* next_due agrees with allowance: nothing is due 1 ns before it, something is at it. */
static void check_next_due(const dv_pacer_t *p, uint64_t now)
{
	uint64_t due = dv_pacer_next_due_ns(p);
	dv_pacer_t c = *p;
	if (due > now) {
		assert_int_equal(dv_pacer_allowance(&c, due - 1), 0);
	}
	c = *p;
	assert_true(dv_pacer_allowance(&c, due > now ? due : now) >= 1);
}

/*
 * Simulate a sender polling every 0.7 ms +- 0.5 ms (and sometimes sleeping
 * exactly until next_due plus a few µs of wake-up lag) for 5 s, taking the
 * whole allowance each time. At the end it must have sent exactly what the
 * schedule made due.
 */
static void run_sim(double rate, int use_next_due)
{
	const uint64_t start = 123456789;
	const uint64_t end = start + 5 * NS_PER_S;
	dv_pacer_t p;
	dv_pacer_init(&p, rate, start, 0);
	uint64_t now = start, sent = 0;
	int polls = 0;
	while (polls < 10000000) {
		uint64_t a = dv_pacer_allowance(&p, now);
		assert_true(a < UINT64_MAX);
		dv_pacer_take(&p, a);
		sent += a;
		/* Never ahead of the schedule. */
		assert_true(sent <= expected_due(rate, now - start));
		if (polls % 97 == 0)
			check_next_due(&p, now);
		polls++;
		if (now == end)
			break;
		uint64_t next;
		if (use_next_due && polls % 3 != 0) {
			next = dv_pacer_next_due_ns(&p) + rng() % 20000;
			if (next <= now)
				next = now + 1;
		} else {
			next = now + 200000 + rng() % 1000001; /* 0.2 .. 1.2 ms */
		}
		now = next < end ? next : end;
	}
	uint64_t want = expected_due(rate, end - start);
	if (sent != want)
		fail_msg("rate %g: sent %llu, schedule %llu", rate, (unsigned long long)sent,
		         (unsigned long long)want);
	/* Within one query of rate * elapsed (hence far inside 0.1%). */
	assert_true(fabs((double)sent - rate * 5.0) <= 1.0 + 1e-9);
	assert_int_equal(p.forfeited, 0);
	assert_int_equal(p.issued, sent);
}

static void test_rates_polling(void **state)
{
	(void)state;
	static const double rates[] = {1, 1000, 20000, 1e6, 0.5, 333.3, 12345.678, 999999.5};
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		run_sim(rates[i], 0);
}

static void test_rates_sleeping_to_next_due(void **state)
{
	(void)state;
	static const double rates[] = {1, 1000, 20000, 1e6, 7.25, 44100.1};
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		run_sim(rates[i], 1);
}

static void test_exact_schedule(void **state)
{
	(void)state;
	dv_pacer_t p;
	/* 1000 qps from t=1 s: query k due at 1 s + k ms. */
	dv_pacer_init(&p, 1000, NS_PER_S, 0);
	assert_int_equal(dv_pacer_allowance(&p, 0), 0);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S - 1), 0);
	assert_int_equal(dv_pacer_next_due_ns(&p), NS_PER_S);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S), 1);
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S), 0);
	assert_int_equal(dv_pacer_next_due_ns(&p), NS_PER_S + 1000000);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S + 999999), 0);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S + 1000000), 1);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S + 10000000), 10);
	/* Taking part of the allowance leaves the rest. */
	dv_pacer_take(&p, 4);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S + 10000000), 6);
	assert_int_equal(dv_pacer_next_due_ns(&p), NS_PER_S + 5000000);

	/* 3 qps: due at 0, 333333334, 666666667 (ceil), 1 s. */
	dv_pacer_init(&p, 3, 0, 0);
	dv_pacer_take(&p, dv_pacer_allowance(&p, 0));
	assert_int_equal(dv_pacer_next_due_ns(&p), 333333334);
	assert_int_equal(dv_pacer_allowance(&p, 333333333), 0);
	assert_int_equal(dv_pacer_allowance(&p, 333333334), 1);
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_next_due_ns(&p), 666666667);
	assert_int_equal(dv_pacer_allowance(&p, 3 * NS_PER_S), 8);
	assert_int_equal(p.issued, 2);
}

static void test_backlog_cap(void **state)
{
	(void)state;
	dv_pacer_t p;
	dv_pacer_init(&p, 1000, 0, 50);
	assert_int_equal(dv_pacer_allowance(&p, 0), 1);
	dv_pacer_take(&p, 1);
	/* The sender stalls for 1 s: 1000 more are due, 50 may go, 950 are forfeited. */
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S), 50);
	assert_int_equal(p.forfeited, 950);
	/* Asking again without sending forfeits nothing more. */
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S), 50);
	assert_int_equal(p.forfeited, 950);
	dv_pacer_take(&p, 20);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S), 30);
	dv_pacer_take(&p, 30);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S), 0);
	/* The schedule is unchanged by the loss: the next one is due at 1.001 s. */
	assert_int_equal(dv_pacer_next_due_ns(&p), NS_PER_S + 1000000);
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S + 1000000), 1);
	/* Sent + forfeited = everything due. */
	dv_pacer_take(&p, 1);
	assert_int_equal(p.issued, 1002);
	assert_int_equal(p.issued - p.forfeited, 52);
	/* A second stall of 0.2 s. */
	assert_int_equal(dv_pacer_allowance(&p, NS_PER_S + 201000000), 50);
	assert_int_equal(p.forfeited, 950 + 150);
	/* Exactly at the cap: nothing forfeited. */
	dv_pacer_init(&p, 1000, 0, 50);
	assert_int_equal(dv_pacer_allowance(&p, 49000000), 50);
	assert_int_equal(p.forfeited, 0);
	assert_int_equal(dv_pacer_allowance(&p, 50000000), 50);
	assert_int_equal(p.forfeited, 1);
}

static void test_unlimited(void **state)
{
	(void)state;
	dv_pacer_t p;
	dv_pacer_init(&p, 0, 1000, 10);
	assert_int_equal(dv_pacer_allowance(&p, 0), UINT64_MAX);
	assert_int_equal(dv_pacer_allowance(&p, 5000), UINT64_MAX);
	dv_pacer_take(&p, 1000000);
	assert_int_equal(dv_pacer_allowance(&p, 5000), UINT64_MAX);
	assert_true(dv_pacer_next_due_ns(&p) <= 5000);
	assert_int_equal(p.forfeited, 0);
	assert_int_equal(p.issued, 1000000);
	/* A negative rate is treated as unlimited too. */
	dv_pacer_init(&p, -5, 0, 0);
	assert_int_equal(dv_pacer_allowance(&p, 1), UINT64_MAX);
}

static void test_long_run_no_drift(void **state)
{
	(void)state;
	/* 10 hours at 1e6 qps, polled coarsely: still exact. */
	dv_pacer_t p;
	dv_pacer_init(&p, 1e6, 7, 0);
	uint64_t now = 7, sent = 0;
	for (int i = 0; i < 36000; i++) {
		now += NS_PER_S + (uint64_t)(i % 3) - 1; /* 1 s +- 1 ns */
		uint64_t a = dv_pacer_allowance(&p, now);
		dv_pacer_take(&p, a);
		sent += a;
	}
	assert_int_equal(sent, (now - 7) / 1000 + 1);
}

/* Intended times: query k is due at start + ceil(k / rate); under a ramp the rate grows
 * linearly, so 1000 qps over 10 s has 5000 queries due by its end (then 1000/s). */
static void test_due_ns_and_ramp(void **state)
{
	dv_pacer_t p;
	uint64_t k;

	(void)state;
	dv_pacer_init(&p, 1000, 5000, 0);
	assert_int_equal(dv_pacer_due_ns(&p, 0), 5000);
	assert_int_equal(dv_pacer_due_ns(&p, 1), 5000 + 1000000);
	assert_int_equal(dv_pacer_due_ns(&p, 2500), 5000 + 2500000000ull);
	dv_pacer_set_ramp(&p, 10 * 1000000000ull);
	assert_int_equal(dv_pacer_allowance(&p, 5000 + 10 * 1000000000ull), 5001);
	dv_pacer_take(&p, 5001);
	assert_int_equal(dv_pacer_allowance(&p, 5000 + 11 * 1000000000ull), 1000);
	dv_pacer_init(&p, 1000, 5000, 0);
	dv_pacer_set_ramp(&p, 10 * 1000000000ull);
	/* Halfway up the ramp (5 s) a quarter of the ramp's queries are due: 1250 + 1. */
	assert_int_equal(dv_pacer_allowance(&p, 5000 + 5 * 1000000000ull), 1251);
	for (k = 1; k < 8000; k += 97) {
		uint64_t t = dv_pacer_due_ns(&p, k);
		dv_pacer_t q = p;
		q.issued = 0;
		assert_true(dv_pacer_allowance(&q, t) > k);
		q.issued = 0;
		assert_true(dv_pacer_allowance(&q, t - 1) <= k);
	}
}

/* --timing original: each query at start + (pass * period + ts) / speed; lag recorded. */
static void test_schedule(void **state)
{
	(void)state;
	static const uint64_t ts[4] = {0, 100, 100, 1000};
	dv_pacer_t p;
	const uint64_t start = 5000;

	dv_pacer_init_schedule(&p, ts, 4, 2000, 1.0, 0, 1, 8, start);
	dv_pacer_set_ramp(&p, 1000000); /* no ramp in schedule mode */
	assert_int_equal(p.ramp_ns, 0);
	assert_true(p.rate_qps > 0);
	/* Intended times (latency_intended) are the schedule's due times. */
	assert_int_equal(dv_pacer_due_ns(&p, 0), start);
	assert_int_equal(dv_pacer_due_ns(&p, 2), start + 100);
	assert_int_equal(dv_pacer_due_ns(&p, 3), start + 1000);
	assert_int_equal(dv_pacer_due_ns(&p, 5), start + 2100);
	assert_int_equal(dv_pacer_due_ns(&p, 8), UINT64_MAX);
	assert_int_equal(dv_pacer_next_due_ns(&p), start);
	assert_int_equal(dv_pacer_allowance(&p, start - 1), 0);
	assert_int_equal(dv_pacer_allowance(&p, start), 1);
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_next_due_ns(&p), start + 100);
	assert_int_equal(dv_pacer_allowance(&p, start + 99), 0);
	assert_int_equal(dv_pacer_allowance(&p, start + 150), 2); /* both at 100 */
	dv_pacer_take(&p, 2);
	assert_int_equal(p.lag.count, 3);
	assert_int_equal(p.lag.max_ns, 50);
	assert_int_equal(p.lag.min_ns, 0);
	assert_int_equal(dv_pacer_next_due_ns(&p), start + 1000);
	/* A late sender is never forfeited: everything due is allowed. */
	/* 1000, then pass 1: 2000 + 0, 2000 + 100 twice */
	assert_int_equal(dv_pacer_allowance(&p, start + 2100), 4);
	dv_pacer_take(&p, 4);
	assert_int_equal(p.forfeited, 0);
	assert_int_equal(p.lag.max_ns, 1100);
	assert_int_equal(dv_pacer_next_due_ns(&p), start + 3000);
	assert_int_equal(dv_pacer_allowance(&p, start + 1000000), 1); /* the end: sequence 8 */
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_allowance(&p, UINT64_MAX - 1), 0);
	assert_int_equal(dv_pacer_next_due_ns(&p), UINT64_MAX);
}

static void test_schedule_speed_and_step(void **state)
{
	(void)state;
	static const uint64_t ts[4] = {0, 100, 300, 1000};
	dv_pacer_t p;

	/* Worker 1 of 2 at speed 2: sequences 1, 3, 5 (= ts 100, 1000, pass 1 + 100). */
	dv_pacer_init_schedule(&p, ts, 4, 2000, 2.0, 1, 2, 6, 0);
	assert_int_equal(dv_pacer_next_due_ns(&p), 50);
	assert_int_equal(dv_pacer_allowance(&p, 499), 1);
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_next_due_ns(&p), 500);
	assert_int_equal(dv_pacer_allowance(&p, 1049), 1);
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_next_due_ns(&p), 1050);
	assert_int_equal(dv_pacer_allowance(&p, 1050), 1);
	dv_pacer_take(&p, 1);
	assert_int_equal(dv_pacer_next_due_ns(&p), UINT64_MAX);
	assert_int_equal(p.lag.count, 3);
	assert_int_equal(p.lag.max_ns, 549);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact_schedule),
	    cmocka_unit_test(test_due_ns_and_ramp),
	    cmocka_unit_test(test_rates_polling),
	    cmocka_unit_test(test_rates_sleeping_to_next_due),
	    cmocka_unit_test(test_backlog_cap),
	    cmocka_unit_test(test_unlimited),
	    cmocka_unit_test(test_long_run_no_drift),
	    cmocka_unit_test(test_schedule),
	    cmocka_unit_test(test_schedule_speed_and_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
