/* test_gates: option parsing (percent, latency units), each gate, baseline-relative gates, JUnit
 * XML. */
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

#include "results/gates.h"

#include "fixture.h"

/* ---- a hand-made study: one target "t1", one list "SOA", passes as given (fixture.h) ---- */

static dv_study_t *make_study(const pass_spec_t *ps, size_t n)
{
	static const char *const targets[] = {"t1"};
	return make_study_of(targets, 1, ps, n);
}

static char *slurp(FILE *fp)
{
	long n;
	char *buf;

	fflush(fp);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	return buf;
}

/* Evaluate g on s (and base), return the status and the report text in *text. */
static int eval(const dv_gates_t *g, const dv_study_t *s, const dv_study_t *base, char **text,
                dv_err_t *err)
{
	FILE *fp = tmpfile();
	int rc;
	assert_non_null(fp);
	rc = dv_gates_eval(g, s, base, fp, err);
	*text = slurp(fp);
	fclose(fp);
	return rc;
}

static void test_parse_percent(void **state)
{
	double v;
	(void)state;
	assert_int_equal(dv_parse_percent("0.1%", &v), 0);
	assert_true(v == 0.1);
	assert_int_equal(dv_parse_percent("5", &v), 0);
	assert_true(v == 5);
	assert_int_equal(dv_parse_percent("0%", &v), 0);
	assert_true(v == 0);
	assert_int_equal(dv_parse_percent("", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("%", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("-1%", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("1%%", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("1 %", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("abc", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("nan", &v), -EINVAL);
	assert_int_equal(dv_parse_percent("inf%", &v), -EINVAL);
}

static void test_parse_latency(void **state)
{
	double ns;
	(void)state;
	assert_int_equal(dv_parse_latency_ns("5ms", &ns), 0);
	assert_true(ns == 5e6);
	assert_int_equal(dv_parse_latency_ns("2.5s", &ns), 0);
	assert_true(ns == 2.5e9);
	assert_int_equal(dv_parse_latency_ns("800us", &ns), 0);
	assert_true(ns == 800e3);
	assert_int_equal(dv_parse_latency_ns("800\xc2\xb5s", &ns), 0);
	assert_true(ns == 800e3);
	assert_int_equal(dv_parse_latency_ns("120ns", &ns), 0);
	assert_true(ns == 120);
	assert_int_equal(dv_parse_latency_ns("5", &ns), -EINVAL); /* unit required */
	assert_int_equal(dv_parse_latency_ns("5 ms", &ns), -EINVAL);
	assert_int_equal(dv_parse_latency_ns("5m", &ns), -EINVAL);
	assert_int_equal(dv_parse_latency_ns("ms", &ns), -EINVAL);
	assert_int_equal(dv_parse_latency_ns("-1ms", &ns), -EINVAL);
}

static void test_parse_opt(void **state)
{
	dv_gates_t g;
	dv_err_t err = {{0}};
	(void)state;

	dv_gates_init(&g);
	assert_false(dv_gates_any(&g));
	assert_int_equal(dv_gates_parse_opt(&g, "--max-loss", "0.1%", &err), 0);
	assert_true(g.max_loss_pct == 0.1);
	assert_true(dv_gates_any(&g));
	assert_int_equal(dv_gates_parse_opt(&g, "max-p99", "5ms", &err), 0);
	assert_true(g.max_p99_ns == 5e6);
	assert_int_equal(dv_gates_parse_opt(&g, "--min-qps", "25000", &err), 0);
	assert_true(g.min_qps == 25000);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-qps-drop", "5%", &err), 0);
	assert_true(g.max_qps_drop_pct == 5);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-p99-rise", "10%", &err), 0);
	assert_true(g.max_p99_rise_pct == 10);
	assert_int_equal(dv_gates_parse_opt(&g, "--baseline", "base.json", &err), 0);
	assert_string_equal(g.baseline_path, "base.json");
	assert_int_equal(dv_gates_parse_opt(&g, "--baseline", "other.json", &err), 0);
	assert_string_equal(g.baseline_path, "other.json");
	assert_int_equal(dv_gates_parse_opt(&g, "--junit", "gates.xml", &err), 0);
	assert_string_equal(g.junit_path, "gates.xml");
	assert_int_equal(dv_gates_parse_opt(&g, "--max-handshake-p99", "50ms", &err), 0);
	assert_true(g.max_hs_p99_ns == 5e7);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-conn-failures", "0", &err), 0);
	assert_true(g.max_conn_fail == 0);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-conn-failures", "12", &err), 0);
	assert_true(g.max_conn_fail == 12);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-handshake-p99", "50", &err), -EINVAL);
	assert_string_equal(err.msg, "--max-handshake-p99: '50' is not a latency with a unit (e.g. "
	                             "5ms, 800us, 2.5s)");
	assert_int_equal(dv_gates_parse_opt(&g, "--max-conn-failures", "1.5", &err), -EINVAL);
	assert_string_equal(
	    err.msg, "--max-conn-failures: '1.5' is not a whole number of connections (e.g. 0)");
	assert_int_equal(dv_gates_parse_opt(&g, "--max-conn-failures", "-1", &err), -EINVAL);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-conn-failures", "inf", &err), -EINVAL);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-conn-failures", NULL, &err), -EINVAL);
	assert_true(g.max_hs_p99_ns == 5e7 && g.max_conn_fail == 12); /* kept */

	assert_int_equal(dv_gates_parse_opt(&g, "--max-loss", "101%", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--max-loss"));
	assert_int_equal(dv_gates_parse_opt(&g, "--max-p99", "5", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--max-p99: '5'"));
	assert_int_equal(dv_gates_parse_opt(&g, "--min-qps", "10k", &err), -EINVAL);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-qps-drop", "x", &err), -EINVAL);
	assert_int_equal(dv_gates_parse_opt(&g, "--baseline", "", &err), -EINVAL);
	strcpy(err.msg, "untouched");
	assert_int_equal(dv_gates_parse_opt(&g, "--json", "x", &err), -ENOENT);
	assert_string_equal(err.msg, "untouched");
	/* A failed parse keeps the previous value. */
	assert_true(g.max_loss_pct == 0.1);
	dv_gates_free(&g);
	assert_null(g.baseline_path);
	dv_gates_free(NULL);
}

static const pass_spec_t good[] = {
    {DV_PASS_COLD, 0, 10000, 1000, 1, 2000000, 0}, /* lost 0.1%, p99 2 ms */
    {DV_PASS_HOT, 0, 20000, 1000, 0, 500000, 0},   /* lost 0%, p99 0.5 ms */
};

static void test_each_absolute_gate(void **state)
{
	dv_study_t *s = make_study(good, 2);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	/* max-loss: 0.1% holds at 0.1% (not above), fails at 0.05%. */
	dv_gates_init(&g);
	g.max_loss_pct = 0.1;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "gate max-loss     ok   t1/SOA/cold: lost 0.1000% <= 0.1%"));
	assert_non_null(strstr(text, "gates: 2 checked, 0 failed, 0 skipped"));
	free(text);
	g.max_loss_pct = 0.05;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "FAIL t1/SOA/cold: lost 0.1000% > 0.05%"));
	assert_non_null(strstr(text, "ok   t1/SOA/hot: lost 0.0000% <= 0.05%"));
	assert_non_null(strstr(text, "gates: 2 checked, 1 failed"));
	free(text);

	/* max-p99 */
	dv_gates_init(&g);
	g.max_p99_ns = 1e6;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "FAIL t1/SOA/cold: p99 2.0000 ms > 1 ms"));
	assert_non_null(strstr(text, "ok   t1/SOA/hot: p99 0.5000 ms <= 1 ms"));
	free(text);
	g.max_p99_ns = 2e6;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 0);
	free(text);

	/* min-qps */
	dv_gates_init(&g);
	g.min_qps = 15000;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "FAIL t1/SOA/cold: qps 10000.0 < 15000"));
	assert_non_null(strstr(text, "ok   t1/SOA/hot: qps 20000.0 >= 15000"));
	free(text);
	g.min_qps = 10000;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 0);
	free(text);
	/* A large limit reads as written, not as 1e+07. */
	g.min_qps = 10000000;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "FAIL t1/SOA/cold: qps 10000.0 < 10000000\n"));
	free(text);
	free_study(s);
}

/* Stream passes for the connection gates: pass i has fail[i] failed connections and,
 * when hs[i] > 0, four TLS handshakes of hs[i] ns each (hs 0: none done). */
static void set_conns(dv_study_t *s, const uint64_t *fail, const uint64_t *hs)
{
	for (size_t i = 0; i < s->n_passes; i++) {
		dv_stats_t *st = &s->passes[i].res.stats;
		st->c.conn_opened = 4;
		st->c.conn_failed = fail[i];
		dv_hist_init(&st->connect);
		dv_hist_init(&st->handshake);
		for (int k = 0; k < 4; k++) {
			dv_hist_add(&st->connect, 100000);
			if (hs[i] > 0)
				dv_hist_add(&st->handshake, hs[i]);
		}
		st->c.tls_full = hs[i] > 0 ? 4 : 0;
	}
}

/* --max-handshake-p99 and --max-conn-failures (issue 12): on the group's mean, skipped where
 * the transport has no such figure, failed where a TLS pass has none. */
static void test_connection_gates(void **state)
{
	static const pass_spec_t reps[] = {
	    {DV_PASS_HOT, 0, 9000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 1, 9000, 1000, 0, 1000000, 0},
	};
	static const uint64_t fail[] = {1, 4}, hs[] = {4000000, 2000000};
	dv_study_t *s = make_study(reps, 2);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	/* UDP: nothing to check, both skipped (exit 0). */
	dv_gates_init(&g);
	g.max_hs_p99_ns = 1e6;
	g.max_conn_fail = 0;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "gate max-handshake-p99 skip t1/SOA/hot: no TLS handshakes "
	                             "over udp\n"));
	assert_non_null(strstr(text, "gate max-conn-failures skip t1/SOA/hot: no stream "
	                             "connections over udp\n"));
	assert_non_null(strstr(text, "gates: 2 checked, 0 failed, 2 skipped"));
	free(text);

	/* DoT: mean handshake p99 (4 + 2) / 2 = 3 ms, mean failures 2.5 */
	s->run.stream = true;
	s->run.tp.kind = DV_TP_DOT;
	set_conns(s, fail, hs);
	g.max_hs_p99_ns = 3e6;
	g.max_conn_fail = 3;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "gate max-handshake-p99 ok   t1/SOA/hot: handshake p99 3.0000 "
	                             "ms <= 3 ms\n"));
	assert_non_null(strstr(text, "gate max-conn-failures ok   t1/SOA/hot: connections failed "
	                             "2.5 <= 3\n"));
	free(text);
	g.max_hs_p99_ns = 2.5e6;
	g.max_conn_fail = 2;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "FAIL t1/SOA/hot: handshake p99 3.0000 ms > 2.5 ms\n"));
	assert_non_null(strstr(text, "FAIL t1/SOA/hot: connections failed 2.5 > 2\n"));
	assert_non_null(strstr(text, "gates: 2 checked, 2 failed, 0 skipped"));
	free(text);

	/* A DoT pass that finished no handshake has no figure: the gate fails, never passes. */
	static const uint64_t hs_none[] = {4000000, 0};
	set_conns(s, fail, hs_none);
	g.max_hs_p99_ns = 1e9;
	g.max_conn_fail = -1;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text,
	                       "FAIL t1/SOA/hot: handshake p99: no TLS handshake done in 1 of "
	                       "2 passes: not a finite number\n"));
	free(text);

	/* TCP: no TLS, skipped; failures checked. */
	s->run.tp.kind = DV_TP_TCP;
	static const uint64_t hs_tcp[] = {0, 0};
	set_conns(s, fail, hs_tcp);
	g.max_conn_fail = 0;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "skip t1/SOA/hot: no TLS handshakes over tcp\n"));
	assert_non_null(strstr(text, "FAIL t1/SOA/hot: connections failed 2.5 > 0\n"));
	free(text);
	free_study(s);
}

static void test_repeats_use_mean(void **state)
{
	static const pass_spec_t reps[] = {
	    {DV_PASS_HOT, 0, 9000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 1, 11000, 1000, 0, 3000000, 0},
	    {DV_PASS_WARMUP, 0, 1, 1000, 1000, 1, 0}, /* never gated */
	};
	dv_study_t *s = make_study(reps, 3);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	dv_gates_init(&g);
	g.min_qps = 10000;
	g.max_p99_ns = 2e6;
	g.max_loss_pct = 0;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 0);
	assert_non_null(strstr(text, "qps 10000.0 >= 10000"));
	assert_non_null(strstr(text, "p99 2.0000 ms <= 2 ms"));
	assert_non_null(strstr(text, "gates: 3 checked, 0 failed"));
	assert_null(strstr(text, "warmup"));
	free(text);
	free_study(s);
}

/* A loss gate over a pass that sent nothing (a server that took no query) never passes. */
static void test_loss_over_nothing_sent(void **state)
{
	static const pass_spec_t none[] = {
	    {DV_PASS_HOT, 0, 0, 0, 0, 0, 0},
	    {DV_PASS_HOT, 1, 1000, 1000, 0, 1000000, 0},
	};
	dv_study_t *s = make_study(none, 2);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	dv_gates_init(&g);
	g.max_loss_pct = 1;
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	assert_non_null(
	    strstr(text, "FAIL t1/SOA/hot: lost %: no query sent in 1 of 2 passes: not a measure"));
	assert_non_null(strstr(text, "gates: 1 checked, 1 failed"));
	free(text);
	free_study(s);
}

static void test_relative_gates(void **state)
{
	static const pass_spec_t base_spec[] = {
	    {DV_PASS_COLD, 0, 10000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 0, 20000, 1000, 0, 500000, 0},
	};
	static const pass_spec_t slow_spec[] = {
	    {DV_PASS_COLD, 0, 9600, 1000, 0, 1050000, 0}, /* -4% qps, +5% p99 */
	    {DV_PASS_HOT, 0, 18000, 1000, 0, 600000, 0},  /* -10% qps, +20% p99 */
	};
	dv_study_t *base = make_study(base_spec, 2), *slow = make_study(slow_spec, 2);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	dv_gates_init(&g);
	g.max_qps_drop_pct = 5;
	/* No baseline given: a usage error, not a pass. */
	assert_int_equal(eval(&g, slow, NULL, &text, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--max-qps-drop needs a baseline"));
	free(text);

	assert_int_equal(eval(&g, slow, base, &text, &err), 1);
	assert_non_null(strstr(text, "ok   t1/SOA/cold: qps 9600.0 vs baseline 10000.0: drop "
	                             "4.00% <= 5%"));
	assert_non_null(strstr(text, "FAIL t1/SOA/hot: qps 18000.0 vs baseline 20000.0: drop "
	                             "10.00% > 5%"));
	free(text);
	/* Same study as its own baseline: no drop. */
	assert_int_equal(eval(&g, base, base, &text, &err), 0);
	free(text);

	dv_gates_init(&g);
	g.max_p99_rise_pct = 10;
	assert_int_equal(eval(&g, slow, base, &text, &err), 1);
	assert_non_null(strstr(text, "ok   t1/SOA/cold: p99 1.0500 ms vs baseline 1.0000 ms: "
	                             "rise 5.00% <= 10%"));
	assert_non_null(strstr(text, "FAIL t1/SOA/hot: p99 0.6000 ms vs baseline 0.5000 ms: "
	                             "rise 20.00% > 10%"));
	free(text);
	/* Faster than the baseline: a negative rise holds. */
	assert_int_equal(eval(&g, base, slow, &text, &err), 0);
	free(text);

	/* A baseline with other labels matches nothing: an input error, never a silent pass. */
	base->lists[0].label = "AAAA";
	assert_int_equal(eval(&g, slow, base, &text, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no pass with the same target, list and pass kind"));
	free(text);

	/* A baseline with only the cold pass: hot is skipped, cold is checked. */
	base->lists[0].label = "SOA";
	base->n_passes = 1;
	assert_int_equal(eval(&g, slow, base, &text, &err), 0);
	assert_non_null(strstr(text, "skip t1/SOA/hot: no pass with this target/list/kind"));
	assert_non_null(strstr(text, "gates: 2 checked, 0 failed, 1 skipped"));
	free(text);
	free_study(base);
	free_study(slow);
}

/* --max-capacity-drop: mean capacity of the searches against the baseline's; a lower bound
 * (generator-bound, --to reached) on either side is skipped, never a verdict; not a search:
 * skipped. */
static void test_capacity_drop(void **state)
{
	static const pass_spec_t spec[] = {
	    {DV_PASS_HOT, 0, 20000, 1000, 0, 500000, 0},
	    {DV_PASS_HOT, 1, 20000, 1000, 0, 500000, 0},
	};
	dv_study_t *base = make_study(spec, 2), *cur = make_study(spec, 2);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	dv_gates_init(&g);
	assert_int_equal(dv_gates_parse_opt(&g, "--max-capacity-drop", "5%", &err), 0);
	assert_true(g.max_cap_drop_pct == 5);
	assert_true(dv_gates_any(&g));
	assert_int_equal(dv_gates_parse_opt(&g, "max-capacity-drop", "101%", &err), -EINVAL);
	assert_int_equal(eval(&g, cur, NULL, &text, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--max-capacity-drop needs a baseline"));
	free(text);
	/* Not capacity searches: skipped. */
	assert_int_equal(eval(&g, cur, base, &text, &err), 0);
	assert_non_null(strstr(text, "skip t1/SOA/hot: not a capacity search"));
	free(text);
	for (size_t i = 0; i < 2; i++) {
		base->passes[i].cap =
		    (dv_capacity_figure_t){.searched = true, .capacity_qps = 3000};
		cur->passes[i].cap =
		    (dv_capacity_figure_t){.searched = true, .capacity_qps = i ? 2600 : 2800};
	}
	/* Mean 2700 against 3000: a 10% drop. */
	assert_int_equal(eval(&g, cur, base, &text, &err), 1);
	assert_non_null(strstr(text, "FAIL t1/SOA/hot: capacity 2700 qps vs baseline 3000 qps: "
	                             "drop 10.00% > 5%"));
	free(text);
	g.max_cap_drop_pct = 10;
	assert_int_equal(eval(&g, cur, base, &text, &err), 0);
	assert_non_null(strstr(text, "ok   t1/SOA/hot: capacity 2700 qps"));
	free(text);
	/* A lower bound on either side: skipped, with the reason. */
	g.max_cap_drop_pct = 5;
	cur->passes[1].cap.generator_bound = true;
	assert_int_equal(eval(&g, cur, base, &text, &err), 0);
	assert_non_null(strstr(text, "skip t1/SOA/hot: a capacity is only a lower bound"));
	free(text);
	cur->passes[1].cap.generator_bound = false;
	base->passes[0].cap.hit_to = true;
	assert_int_equal(eval(&g, cur, base, &text, &err), 0);
	assert_non_null(strstr(text, "only a lower bound"));
	free(text);
	free_study(base);
	free_study(cur);
}

/*
 * A non-finite figure never passes a gate (issue 16: two baseline repeats of qps 1e308 gave a
 * mean of inf, a drop of NaN%, and NaN > limit is false: "ok"). Each gate fails and says why.
 */
static void test_non_finite_fails(void **state)
{
	static const pass_spec_t huge[] = {
	    {DV_PASS_HOT, 0, 1e308, 1000, 0, 500000, 0},
	    {DV_PASS_HOT, 1, 1e308, 1000, 0, 500000, 0},
	};
	static const pass_spec_t cur_spec[] = {{DV_PASS_HOT, 0, 20000, 1000, 0, 500000, 0}};
	dv_study_t *base = make_study(huge, 2), *cur = make_study(cur_spec, 1);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	dv_gates_init(&g);
	g.max_qps_drop_pct = 5;
	assert_int_equal(eval(&g, cur, base, &text, &err), 1);
	assert_non_null(strstr(text, "gate max-qps-drop FAIL t1/SOA/hot: "));
	assert_non_null(strstr(text, "not a finite number"));
	free(text);
	/* The same study as its own baseline: inf vs inf is NaN, not "no drop". */
	assert_int_equal(eval(&g, base, base, &text, &err), 1);
	assert_non_null(strstr(text, "not a finite number"));
	free(text);

	dv_gates_init(&g);
	g.min_qps = 10;
	assert_int_equal(eval(&g, base, NULL, &text, &err), 1);
	assert_non_null(
	    strstr(text, "gate min-qps      FAIL t1/SOA/hot: qps inf: not a finite number"));
	free(text);
	base->passes[0].res.qps = NAN;
	assert_int_equal(eval(&g, base, NULL, &text, &err), 1);
	assert_non_null(strstr(text, "not a finite number"));
	free(text);
	free_study(base);
	free_study(cur);
}

static void test_no_passes(void **state)
{
	dv_study_t *s = make_study(NULL, 0);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	dv_gates_init(&g);
	g.min_qps = 1;
	assert_int_equal(eval(&g, s, NULL, &text, &err), -ENODATA);
	assert_non_null(strstr(err.msg, "no reported pass"));
	free(text);
	free_study(s);
}

static void test_junit(void **state)
{
	static const pass_spec_t spec[] = {{DV_PASS_COLD, 0, 10000, 1000, 0, 2000000, 0},
	                                   {DV_PASS_HOT, 0, 20000, 1000, 0, 500000, 0}};
	dv_study_t *s = make_study(spec, 2);
	dv_gates_t g;
	dv_err_t err = {{0}};
	char path[] = "/tmp/dv_test_junit_XXXXXX", *text;
	int fd = mkstemp(path);
	FILE *fp;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	s->targets[0].label = "a<b>&\"c'"; /* must be escaped */
	dv_gates_init(&g);
	g.max_p99_ns = 1e6;
	g.junit_path = strdup(path);
	assert_int_equal(eval(&g, s, NULL, &text, &err), 1);
	free(text);
	fp = fopen(path, "r");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	text = slurp(fp);
	fclose(fp);
	assert_non_null(strstr(text, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
	assert_non_null(strstr(text, "<testsuites tests=\"2\" failures=\"1\" errors=\"0\" "
	                             "skipped=\"0\">"));
	assert_non_null(strstr(text, "<testcase classname=\"dnsvolley.gates.max-p99\" "
	                             "name=\"a&lt;b&gt;&amp;&quot;c&#39;/SOA/cold\" time=\"0\">"));
	assert_non_null(strstr(text, "<failure type=\"gate\" message=\"a&lt;b&gt;&amp;&quot;c&#39;"
	                             "/SOA/cold: p99 2.0000 ms &gt; 1 ms\">"));
	assert_non_null(strstr(text, "name=\"a&lt;b&gt;&amp;&quot;c&#39;/SOA/hot\" time=\"0\"/>"));
	assert_null(strstr(text, "a<b"));
	assert_non_null(strstr(text, "</testsuites>\n"));
	free(text);
	unlink(path);

	/* An unwritable JUnit path is an error, reported with the file name. */
	free(g.junit_path);
	g.junit_path = strdup("/nonexistent-dir/j.xml");
	assert_true(eval(&g, s, NULL, &text, &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/j.xml"));
	free(text);
	dv_gates_free(&g);
	free_study(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_percent),    cmocka_unit_test(test_parse_latency),
	    cmocka_unit_test(test_parse_opt),        cmocka_unit_test(test_each_absolute_gate),
	    cmocka_unit_test(test_repeats_use_mean), cmocka_unit_test(test_relative_gates),
	    cmocka_unit_test(test_capacity_drop),    cmocka_unit_test(test_non_finite_fails),
	    cmocka_unit_test(test_no_passes),        cmocka_unit_test(test_junit),
	    cmocka_unit_test(test_connection_gates), cmocka_unit_test(test_loss_over_nothing_sent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
