/* test_compare: grouping of repeats, the spread rule (2 x pooled sd), deltas in the side-by-side
 * table. */
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

#include <cmocka.h>

#include "results/compare.h"
#include "results/summary.h"
#include "study/groups.h"

#include "fixture.h"

/* Two targets "a" and "b", one list "SOA". */
static dv_study_t *make_study(const pass_spec_t *ps, size_t n)
{
	static const char *const targets[] = {"a", "b"};
	return make_study_of(targets, 2, ps, n);
}

/* The significance rule on two arrays of values (study/groups.h works on series). */
static int sig(const double *a, size_t na, const double *b, size_t nb)
{
	dv_series_t sa = dv_series_of(a, na), sb = dv_series_of(b, nb);
	return (int)dv_diff_welch(&sa, &sb, 0, 0).verdict;
}

/* How many times needle occurs in hay. */
static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void test_spread_rule(void **state)
{
	/* a: mean 10, sd 1; b: mean 12, sd 1: se 0.816, df 4, t 2.776: CI 2 +- 2.27 holds 0. */
	static const double a[] = {9, 10, 11}, b[] = {11, 12, 13}, c[] = {12, 13, 14};
	static const double one[] = {5}, two[] = {4, 5}, flat[] = {4, 4, 4}, flat2[] = {4, 4, 4},
	                    flat3[] = {4.5, 4.5, 4.5};
	(void)state;

	assert_int_equal(sig(a, 3, b, 3), 0);
	assert_int_equal(sig(a, 3, c, 3), 1); /* delta 3 > 2.27 */
	assert_int_equal(sig(c, 3, a, 3), 1); /* either direction */
	assert_int_equal(sig(a, 3, one, 1), -1);
	assert_int_equal(sig(one, 1, a, 3), -1);
	assert_int_equal(sig(a, 3, two, 2), -1); /* two repeats: needs --repeat 3 */
	/* No spread at all (and no floor): any difference is significant, none is not. */
	assert_int_equal(sig(flat, 3, flat2, 3), 0);
	assert_int_equal(sig(flat, 3, flat3, 3), 1);
	/* The series itself. */
	dv_series_t st = dv_series_of(a, 3);
	assert_int_equal(st.n, 3);
	assert_true(st.mean == 10 && st.min == 9 && st.max == 11 && fabs(st.sd - 1) < 1e-12);
}

static void test_groups(void **state)
{
	static const pass_spec_t ps[] = {
	    {DV_PASS_WARMUP, 0, 1, 10, 10, 1, 0},      {DV_PASS_COLD, 0, 100, 1000, 10, 1000, 0},
	    {DV_PASS_HOT, 0, 200, 1000, 0, 500, 0},    {DV_PASS_COLD, 0, 50, 1000, 0, 3000, 1},
	    {DV_PASS_COLD, 1, 300, 1000, 30, 3000, 0}, {DV_PASS_HOT, 1, 400, 1000, 0, 700, 0},
	};
	dv_study_t *s = make_study(ps, DV_ARRAY_SIZE(ps));
	dv_groups_t gs;
	char name[64];
	(void)state;

	assert_int_equal(dv_groups_build(s, DV_GROUP_BY_KIND, &gs), 0);
	assert_int_equal(gs.n, 3); /* a/cold, a/hot, b/cold; the warmup is never grouped */
	assert_string_equal(dv_group_name(&gs.g[0], name, sizeof(name)), "a/SOA/cold");
	assert_string_equal(dv_group_name(&gs.g[1], name, sizeof(name)), "a/SOA/hot");
	assert_string_equal(dv_group_name(&gs.g[2], name, sizeof(name)), "b/SOA/cold");
	const dv_group_t *g = &gs.g[0];
	assert_int_equal(g->n, 2);
	assert_true(g->mean[DV_M_QPS] == 200);
	assert_true(fabs(g->sd[DV_M_QPS] - sqrt(2 * 100.0 * 100.0)) < 1e-9);
	assert_true(fabs(g->mean[DV_M_LOST_PCT] - 2.0) < 1e-12); /* (1% + 3%) / 2 */
	assert_true(fabs(g->mean[DV_M_P99_MS] - 0.002) < 1e-12); /* (1 us + 3 us) / 2 */
	assert_int_equal(g->sent, 2000);
	assert_int_equal(g->lost, 40);
	assert_int_equal(g->latency->count, 990 + 970);
	assert_ptr_equal(g->passes[1], &s->passes[4]);
	assert_true(gs.g[2].sd[DV_M_QPS] == 0); /* one repeat */

	dv_group_t key = {.target = "b", .list = "SOA", .kind = DV_PASS_COLD};
	assert_ptr_equal(dv_groups_find(&gs, &key), &gs.g[2]);
	key.kind = DV_PASS_HOT;
	assert_null(dv_groups_find(&gs, &key));
	dv_groups_free(&gs);
	dv_groups_free(&gs); /* idempotent */
	free_study(s);
}

static char *print_to_string(const dv_study_t *b, const dv_study_t *c, size_t *matched)
{
	FILE *fp = tmpfile();
	long n;
	char *buf;

	assert_non_null(fp);
	*matched = dv_compare_print(b, "base.json", c, "new.json", fp);
	fflush(fp);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return buf;
}

static void test_table(void **state)
{
	static const pass_spec_t base_ps[] = {
	    {DV_PASS_HOT, 0, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 1, 1010, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 2, 990, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 0, 500, 1000, 0, 2000000, 1},
	};
	static const pass_spec_t new_ps[] = {
	    {DV_PASS_HOT, 0, 900, 1000, 10, 1500000, 0},
	    {DV_PASS_HOT, 1, 905, 1000, 10, 1500000, 0},
	    {DV_PASS_HOT, 2, 895, 1000, 10, 1500000, 0},
	    {DV_PASS_COLD, 0, 50, 1000, 0, 9000000, 0},
	};
	dv_study_t *b = make_study(base_ps, DV_ARRAY_SIZE(base_ps));
	dv_study_t *c = make_study(new_ps, DV_ARRAY_SIZE(new_ps));
	size_t matched;
	char *t = print_to_string(b, c, &matched);
	(void)state;

	assert_int_equal(matched, 1);
	assert_non_null(strstr(t, "Comparison: base base.json, new new.json\n"));
	assert_non_null(strstr(t, "\na/SOA/hot (repeats: base 3, new 3)\n"));
	/* qps: 1000 -> 900, -100 (-10.00%); sd 10 and 5: Welch CI -100 +- 30, beyond the spread. */
	assert_non_null(strstr(t, "  qps               1000.0          900.0         -100.0   "
	                          "-10.00%  worse, significant\n"));
	assert_non_null(strstr(t, "  lost %             0.000          1.000         +1.000       "
	                          "n/a  worse, significant\n"));
	assert_non_null(strstr(t, "  p99 ms            1.0000         1.5000        +0.5000   "
	                          "+50.00%  worse, significant\n"));
	assert_non_null(strstr(t, "\na/SOA/cold: only in new.json\n"));
	assert_non_null(strstr(t, "\nb/SOA/hot: only in base.json\n"));
	free(t);

	/* The same file on both sides: zero deltas, never beyond the spread. */
	t = print_to_string(b, b, &matched);
	assert_int_equal(matched, 2);
	assert_non_null(strstr(t, "  qps               1000.0         1000.0           +0.0    "
	                          "+0.00%  same\n"));
	/* One repeat: no spread to compare with. */
	assert_non_null(strstr(t, "+0.00%  same\n"));
	assert_int_equal(count_of(t, "Too few repeats for a verdict (fewest: base 1, new 1; "
	                             "needs --repeat 3)"),
	                 1);
	free(t);
	free_study(b);
	free_study(c);
}

/* Stream passes: pass i gets conn_opened 4, conn_failed fail, conn_reset i, tls_full 3 and
 * tls_resumed 1, four connects of 100 us and four handshakes of hs ns. */
static void set_stream(dv_study_t *s, dv_tp_kind_t kind, uint64_t fail, uint64_t hs)
{
	s->run.stream = true;
	s->run.tp.kind = kind;
	for (size_t i = 0; i < s->n_passes; i++) {
		dv_stats_t *st = &s->passes[i].res.stats;
		st->c.conn_opened = 4;
		st->c.conn_failed = fail;
		st->c.conn_reset = i;
		st->c.tls_full = 3;
		st->c.tls_resumed = 1;
		dv_hist_init(&st->connect);
		dv_hist_init(&st->handshake);
		for (int k = 0; k < 4; k++) {
			dv_hist_add(&st->connect, 100000);
			dv_hist_add(&st->handshake, hs);
		}
	}
}

/* Issue 12: with stream passes, the connection rows, by the same spread rule. */
static void test_connection_rows(void **state)
{
	static const pass_spec_t ps[] = {
	    {DV_PASS_HOT, 0, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 1, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 2, 1000, 1000, 0, 1000000, 0},
	};
	dv_study_t *b = make_study(ps, 3), *c = make_study(ps, 3);
	size_t matched;
	char *t;
	(void)state;

	/* UDP on both sides: no connection rows. */
	t = print_to_string(b, c, &matched);
	assert_null(strstr(t, "connect p99"));
	assert_null(strstr(t, "Transport:"));
	free(t);

	set_stream(b, DV_TP_DOT, 0, 1000000);
	set_stream(c, DV_TP_DOT, 2, 4000000);
	t = print_to_string(b, c, &matched);
	assert_non_null(strstr(t, "Transport: base dot, new dot\n"));
	assert_non_null(strstr(t, "  connect p99 ms    0.1000         0.1000        +0.0000    "
	                          "+0.00%  same\n"));
	/* 1 ms and 4 ms are bucket boundaries within the histogram's resolution */
	assert_non_null(strstr(t, "  handshake p99 ms  1.0000         4.0000        +3.0000  "
	                          "+300.00%  worse, significant\n"));
	assert_non_null(strstr(t, "  conn failed          0.0            2.0           +2.0       "
	                          "n/a  worse, significant\n"));
	/* resets 0, 1, 2 on both sides: sd 1, no difference */
	assert_non_null(strstr(t, "  conn reset           1.0            1.0           +0.0    "
	                          "+0.00%  same\n"));
	assert_non_null(strstr(t, "  resumed %          25.00          25.00          +0.00    "
	                          "+0.00%  same\n"));
	free(t);

	/* TCP against UDP: the rows, with "-" where a side has no figure */
	free_study(b);
	b = make_study(ps, 3);
	set_stream(c, DV_TP_TCP, 1, 1000000);
	for (size_t i = 0; i < 3; i++) {
		c->passes[i].res.stats.c.tls_full = c->passes[i].res.stats.c.tls_resumed = 0;
		dv_hist_init(&c->passes[i].res.stats.handshake);
	}
	t = print_to_string(b, c, &matched);
	assert_non_null(strstr(t, "Transport: base udp, new tcp\n"));
	assert_non_null(strstr(t, "  connect p99 ms         -         0.1000              -       "
	                          "n/a  n/a (no such figure on a side)\n"));
	assert_non_null(strstr(t, "  handshake p99 ms       -              -              -       "
	                          "n/a  n/a (no such figure on a side)\n"));
	/* no spread on either side (counts have no floor): the means differ */
	assert_non_null(strstr(t, "  conn failed          0.0            1.0           +1.0       "
	                          "n/a  worse, significant\n"));
	free(t);
	free_study(b);
	free_study(c);
}

static char *summary_to_string(const dv_study_t *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	dv_study_print_summary(s, f);
	fclose(f);
	return buf;
}

/*
 * compare and the study summary decide spread and significance with one rule
 * (study/groups.h): on the same passes, with one interrupted, both leave the
 * interrupted pass out. Its qps (100) would turn "beyond the spread" into
 * "within noise" if either side counted it.
 */
static void test_compare_agrees_with_summary(void **state)
{
	static const pass_spec_t both[] = {
	    {DV_PASS_PLAIN, 0, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 0, 900, 1000, 0, 1000000, 1},
	    {DV_PASS_PLAIN, 1, 1010, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 1, 905, 1000, 0, 1000000, 1},
	    {DV_PASS_PLAIN, 2, 990, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 2, 100, 1000, 0, 1000000, 1},
	    {DV_PASS_PLAIN, 3, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 3, 895, 1000, 0, 1000000, 1},
	};
	static const pass_spec_t base_ps[] = {
	    {DV_PASS_PLAIN, 0, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 1, 1010, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 2, 990, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 3, 1000, 1000, 0, 1000000, 0},
	};
	static const pass_spec_t new_ps[] = {
	    {DV_PASS_PLAIN, 0, 900, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 1, 905, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 2, 100, 1000, 0, 1000000, 0},
	    {DV_PASS_PLAIN, 3, 895, 1000, 0, 1000000, 0},
	};
	dv_study_t *s = make_study(both, DV_ARRAY_SIZE(both));
	dv_study_t *b = make_study(base_ps, DV_ARRAY_SIZE(base_ps));
	dv_study_t *c = make_study(new_ps, DV_ARRAY_SIZE(new_ps));
	size_t matched;
	(void)state;

	s->repeat = b->repeat = c->repeat = 4;
	s->passes[5].res.interrupted = true;
	c->passes[2].res.interrupted = true;

	/* The summary: target b against a, three samples of b (mean 900): significant. */
	char *t = summary_to_string(s);
	if (strstr(t, "\nb       SOA   plain  3      -    900 +- 5 (895..905)") == NULL ||
	    strstr(t, "    qps   -10.0%         worse, significant") == NULL)
		fail_msg("summary:\n%s", t);
	free(t);

	/* compare: the same three samples on the new side, the same verdict. */
	t = print_to_string(b, c, &matched);
	assert_int_equal(matched, 1);
	if (strstr(t, "\na/SOA/plain (repeats: base 4, new 3)\n") == NULL ||
	    strstr(t, "  qps               1000.0          900.0         -100.0   -10.00%  worse, "
	              "significant\n") == NULL ||
	    strstr(t, "\ninterrupted passes left out: 0 in base.json, 1 in new.json\n") == NULL)
		fail_msg("compare:\n%s", t);
	free(t);

	/* Both read their figures from the same groups. */
	dv_groups_t gk, gp;
	assert_int_equal(dv_groups_build(s, DV_GROUP_BY_KIND, &gk), 0);
	assert_int_equal(dv_groups_build(s, DV_GROUP_BY_POSITION, &gp), 0);
	assert_int_equal(gk.left_out, 1);
	assert_int_equal(gp.left_out, 1);
	assert_int_equal(gk.n, 2);
	assert_int_equal(gp.n, 2);
	assert_int_equal(gk.g[1].n, 3);
	assert_ptr_equal(dv_groups_at(&gp, 1, 0, DV_PASS_PLAIN, 0)->passes[1], &s->passes[3]);
	dv_groups_free(&gk);
	dv_groups_free(&gp);
	free_study(s);
	free_study(b);
	free_study(c);
}

/* Different settings on the two sides are said, once each; -Q takes away the qps verdict. */
static void test_settings_warnings(void **state)
{
	static const pass_spec_t ps[] = {
	    {DV_PASS_HOT, 0, 1000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 1, 1010, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 2, 990, 1000, 0, 1000000, 0},
	};
	static const pass_spec_t ps2[] = {
	    {DV_PASS_HOT, 0, 2000, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 1, 2010, 1000, 0, 1000000, 0},
	    {DV_PASS_HOT, 2, 1990, 1000, 0, 1000000, 0},
	};
	dv_study_t *b = make_study(ps, 3), *c = make_study(ps2, 3);
	size_t matched;
	char *t;
	(void)state;

	t = print_to_string(b, c, &matched);
	assert_null(strstr(t, "Warning"));
	assert_null(strstr(t, "Too few repeats"));
	assert_non_null(strstr(t, "+100.00%  better, significant\n"));
	free(t);
	b->run.max_qps = 1000;
	c->run.max_qps = 2000;
	b->run.sockets = 16;
	c->run.sockets = 1;
	c->lists[0].queries = 7;
	t = print_to_string(b, c, &matched);
	assert_int_equal(count_of(t, "Warning: -Q differs: base 1000, new 2000"), 1);
	assert_int_equal(count_of(t, "Warning: -c differs: base 16, new 1\n"), 1);
	assert_int_equal(count_of(t, "Warning: list SOA differs: base 0 queries"), 1);
	assert_null(strstr(t, "Warning: -q"));
	assert_non_null(strstr(t, "+100.00%  no verdict: the rate was set (-Q), not measured\n"));
	free(t);
	free_study(b);
	free_study(c);
}

/* Grouped by position, a second hot pass in a repeat is its own group ("hot2"). */
static void test_groups_by_position(void **state)
{
	static const pass_spec_t ps[] = {
	    {DV_PASS_COLD, 0, 10, 100, 0, 1000, 0}, {DV_PASS_HOT, 0, 20, 100, 0, 1000, 0},
	    {DV_PASS_HOT, 0, 30, 100, 0, 1000, 0},  {DV_PASS_COLD, 1, 40, 100, 0, 1000, 0},
	    {DV_PASS_HOT, 1, 50, 100, 0, 1000, 0},  {DV_PASS_HOT, 1, 60, 100, 0, 1000, 0},
	};
	dv_study_t *s = make_study(ps, DV_ARRAY_SIZE(ps));
	dv_groups_t gs;
	char name[64];
	(void)state;

	assert_int_equal(dv_groups_build(s, DV_GROUP_BY_POSITION, &gs), 0);
	assert_int_equal(gs.n, 3);
	assert_string_equal(dv_group_name(&gs.g[2], name, sizeof(name)), "a/SOA/hot2");
	assert_true(gs.g[1].mean[DV_M_QPS] == 35 && gs.g[2].mean[DV_M_QPS] == 45);
	dv_groups_free(&gs);
	/* By kind (compare, gates) both hot passes are one group of four. */
	assert_int_equal(dv_groups_build(s, DV_GROUP_BY_KIND, &gs), 0);
	assert_int_equal(gs.n, 2);
	assert_int_equal(gs.g[1].n, 4);
	assert_true(gs.g[1].mean[DV_M_QPS] == 40);
	dv_groups_free(&gs);
	free_study(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spread_rule),
	    cmocka_unit_test(test_groups),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_compare_agrees_with_summary),
	    cmocka_unit_test(test_groups_by_position),
	    cmocka_unit_test(test_settings_warnings),
	    cmocka_unit_test(test_connection_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
