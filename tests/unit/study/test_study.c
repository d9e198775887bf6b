/* test_study: table and summary from hand-built studies; flush failures; probes against a peer. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "results/summary.h"
#include "study/probe.h"
#include "study/groups.h"
#include "study/study.h"

static char *xs(const char *s)
{
	char *d = strdup(s);
	assert_non_null(d);
	return d;
}

/* A pass with this qps, lost count and a constant latency (every answer takes lat_ns). */
static void add_pass(dv_study_t *s, size_t t, size_t l, unsigned r, dv_pass_kind_t k, double qps,
                     uint64_t lost, uint64_t lat_ns)
{
	s->passes = realloc(s->passes, (s->n_passes + 1) * sizeof(*s->passes));
	assert_non_null(s->passes);
	dv_pass_record_t *p = &s->passes[s->n_passes++];
	memset(p, 0, sizeof(*p));
	p->target = t;
	p->list = l;
	p->repeat = r;
	p->kind = k;
	dv_stats_init(&p->res.stats);
	p->res.qps = qps;
	p->res.run_time_s = 2; /* long enough for a throughput figure (DV_QPS_MIN_RUN_S) */
	p->res.stats.c.lost = lost;
	p->res.stats.c.completed = 100;
	p->res.stats.c.sent = 100 + lost;
	for (int i = 0; i < 100; i++)
		dv_hist_add(&p->res.stats.latency, lat_ns);
}

/* The field's study: two versions, SOA and A lists, cold/hot, two repeats. */
static void build(dv_study_t *s, const char *const *targets, size_t nt, unsigned reps)
{
	memset(s, 0, sizeof(*s));
	s->n_targets = nt;
	s->targets = calloc(nt, sizeof(*s->targets));
	for (size_t i = 0; i < nt; i++)
		s->targets[i].label = xs(targets[i]);
	s->n_lists = 2;
	s->lists = calloc(2, sizeof(*s->lists));
	s->lists[0].label = xs("SOA");
	s->lists[1].label = xs("A");
	s->lists[0].queries = 100; /* a pass of 100 + lost sent covers it */
	s->lists[1].queries = 400; /* ... a quarter of it */
	s->n_plan = 2;
	s->plan = calloc(2, sizeof(*s->plan));
	s->plan[0] = DV_PASS_COLD;
	s->plan[1] = DV_PASS_HOT;
	s->repeat = reps;
}

static char *capture(const dv_study_t *s, bool table)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (table)
		dv_study_print_table(s, f);
	else
		dv_study_print_summary(s, f);
	fclose(f);
	return buf;
}

static void test_table_shape(void **state)
{
	(void)state;
	static const char *const t[] = {"3.4.11", "4.0.4"};
	dv_study_t s;
	build(&s, t, 2, 2);
	/* In the order a study runs them: repeat, list, target, pass. */
	double q = 1000;
	for (unsigned r = 0; r < 2; r++)
		for (size_t l = 0; l < 2; l++)
			for (size_t ti = 0; ti < 2; ti++) {
				add_pass(&s, ti, l, r, DV_PASS_COLD, q, (uint64_t)q / 2, 1000000);
				add_pass(&s, ti, l, r, DV_PASS_HOT, q + 0.5, 7, 100000);
				q += 111.25;
			}
	char *out = capture(&s, true);
	const char *want =
	    "\nComparison table (queries per second, lost queries in brackets; repN = repeat N "
	    "of --repeat):\n"
	    "Target  List        rep1 cold       rep1 hot        rep2 cold       rep2 hot\n"
	    "3.4.11  SOA   1000 (lost 500)  1000 (lost 7)  1445 (lost 722)  1446 (lost 7)\n"
	    "3.4.11  A     1222 (lost 611)  1223 (lost 7)  1668 (lost 833)  1668 (lost 7)\n"
	    "4.0.4   SOA   1111 (lost 555)  1112 (lost 7)  1556 (lost 778)  1557 (lost 7)\n"
	    "4.0.4   A     1334 (lost 666)  1334 (lost 7)  1779 (lost 889)  1779 (lost 7)\n"
	    "\nCoverage (list entries asked / list size; runs through the list in brackets):\n"
	    "Target  List  rep1 cold         rep1 hot  rep2 cold         rep2 hot\n"
	    "3.4.11  SOA        100%  100% (1.1 runs)       100%  100% (1.1 runs)\n"
	    "3.4.11  A          100%            26.7%       100%            26.7%\n"
	    "4.0.4   SOA        100%  100% (1.1 runs)       100%  100% (1.1 runs)\n"
	    "4.0.4   A          100%            26.7%       100%            26.7%\n";
	assert_string_equal(out, want);
	free(out);
	dv_study_free(&s);
}

static void test_table_partial_and_repeated_kind(void **state)
{
	(void)state;
	static const char *const t[] = {"x"};
	dv_study_t s;
	build(&s, t, 1, 2);
	s.n_lists = 1;
	free(s.lists[1].label);
	s.plan = realloc(s.plan, 3 * sizeof(*s.plan));
	s.plan[2] = DV_PASS_HOT;
	s.n_plan = 3;
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 10, 1, 1000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 20, 2, 1000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 30, 3, 1000);
	add_pass(&s, 0, 0, 1, DV_PASS_COLD, 40, 4, 1000);
	s.passes[3].res.interrupted = true;
	s.interrupted = true;
	char *out = capture(&s, true);
	const char *want =
	    "\nComparison table (queries per second, lost queries in brackets; repN = repeat N "
	    "of --repeat):\n"
	    "Target  List    rep1 cold     rep1 hot    rep1 hot2     rep2 cold  rep2 hot  rep2 "
	    "hot2\n"
	    "x       SOA   10 (lost 1)  20 (lost 2)  30 (lost 3)  40 (lost 4)*         -          "
	    "-\n"
	    "\nCoverage (list entries asked / list size; runs through the list in brackets):\n"
	    "Target  List  rep1 cold         rep1 hot        rep1 hot2  rep2 cold  rep2 hot  rep2 "
	    "hot2\n"
	    "x       SOA        100%  100% (1.0 runs)  100% (1.0 runs)      100%*         -        "
	    "  -\n"
	    "* interrupted pass: partial figures\n"
	    "The study was interrupted; '-' marks passes not run.\n";
	assert_string_equal(out, want);
	free(out);
	s.failed = -ECANCELED;
	snprintf(s.fail_msg, sizeof(s.fail_msg), "target x: flush command failed");
	out = capture(&s, true);
	assert_non_null(strstr(out, "The study stopped early: target x: flush command failed\n"));
	free(out);
	dv_study_free(&s);
}

/* Every line of want[] is somewhere in out. */
static void assert_lines(const char *out, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(out, want[i]) == NULL) {
			fprintf(stderr, "lacks line %zu:\n%s\n--- got:\n%s", i, want[i], out);
			fail();
		}
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* --server-table: each qps cell adds the server's CPU us per answer, "-" when unmeasured. */
static void test_table_server(void **state)
{
	(void)state;
	static const char *const t[] = {"unbound"};
	dv_study_t s;
	build(&s, t, 1, 1);
	free(s.lists[1].label); /* one list: dv_study_free() frees n_lists labels */
	s.n_lists = 1;
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 5000, 3, 100000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 9000.4, 0, 100000);
	dv_server_cost_t *sv = &s.passes[0].res.server;
	sv->measured = sv->ok = sv->proc = true;
	sv->cpu_user_s = 0.0012; /* 12 us per answer of 100 */
	sv->cpu_sys_s = 0.00035; /* 3.5 us */
	sv->answers = 100;
	s.passes[1].res.server = *sv;
	s.passes[1].res.server.ok = false; /* not measured in that pass: "-" */
	s.passes[1].res.interrupted = true;
	s.table_server = true;
	char *out = capture(&s, true);
	const char *want = "\nComparison table (queries per second, lost queries in brackets, then "
	                   "the server's CPU us per answer (user + system); repN = repeat N of "
	                   "--repeat):\n"
	                   "Target   List               rep1 cold           rep1 hot\n"
	                   "unbound  SOA   5000 (lost 3), 15.5 us  9000 (lost 0)*, -\n"
	                   "\nCoverage (list entries asked / list size; runs through the list in "
	                   "brackets):\n"
	                   "Target   List  rep1 cold  rep1 hot\n"
	                   "unbound  SOA        100%     100%*\n"
	                   "* interrupted pass: partial figures\n";
	assert_string_equal(out, want);
	free(out);
	s.table_server = false; /* the plain table is unchanged */
	out = capture(&s, true);
	assert_non_null(strstr(out, "unbound  SOA   5000 (lost 3)  9000 (lost 0)*\n"));
	free(out);
	dv_study_free(&s);
}

/* --server-stats: a pass the server's cache counters contradict is marked '!', once explained;
 * a pass that agrees, or was not read, or a kind without cache counters, is not. */
static void test_table_cache_contradicts(void **state)
{
	(void)state;
	static const char *const t[] = {"unbound"};
	dv_study_t s;
	build(&s, t, 1, 2);
	free(s.lists[1].label);
	s.n_lists = 1;
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 5000, 0, 100000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 9000, 0, 100000);
	add_pass(&s, 0, 0, 1, DV_PASS_COLD, 5100, 0, 100000);
	add_pass(&s, 0, 0, 1, DV_PASS_HOT, 9100, 0, 100000);
	for (size_t i = 0; i < 4; i++) {
		dv_server_cost_t *sv = &s.passes[i].res.server;
		sv->stats_ok = sv->stats_cache = true;
		sv->stats_queries = 100;
		sv->stats_misses = s.passes[i].kind == DV_PASS_COLD ? 100 : 0;
		sv->stats_hits = 100 - sv->stats_misses;
	}
	char *out = capture(&s, true);
	assert_null(strstr(out, "!"));
	free(out);
	s.passes[1].res.server.stats_misses = 1; /* rep 1 hot: one miss */
	s.passes[2].res.server.stats_hits = 3;   /* rep 2 cold: three hits */
	assert_true(dv_pass_cache_contradicts(&s.passes[1]));
	assert_true(dv_pass_cache_contradicts(&s.passes[2]));
	assert_false(dv_pass_cache_contradicts(&s.passes[0]));
	out = capture(&s, true);
	assert_non_null(strstr(out, "unbound  SOA   5000 (lost 0)  9000 (lost 0)!  5100 (lost 0)!  "
	                            "9100 (lost 0)\n"));
	assert_int_equal(count_of(out, "! the server's own cache counters (--server-stats) say the "
	                               "pass was not what its column says"),
	                 1);
	free(out);
	/* The summary: each kind whose repeats include one marks its Pass name, once explained. */
	out = capture(&s, false);
	assert_non_null(strstr(out, "unbound  SOA   cold!  2"));
	assert_non_null(strstr(out, "unbound  SOA   hot!   2"));
	assert_int_equal(count_of(out, "! the server's own cache counters contradict at least one "
	                               "repeat of this pass"),
	                 1);
	assert_non_null(strstr(out, "unbound  SOA          1.79!         1.00!\n"));
	assert_int_equal(count_of(out, "! a ratio of means that include passes the server's cache "
	                               "counters contradict"),
	                 1);
	free(out);
	/* Not read, no cache counters, or interrupted ('*' wins): no mark. */
	s.passes[1].res.server.stats_ok = false;
	s.passes[2].res.server.stats_cache = false;
	out = capture(&s, true);
	assert_null(strstr(out, "!"));
	free(out);
	out = capture(&s, false);
	assert_null(strstr(out, "!"));
	free(out);
	s.passes[1].res.server.stats_ok = true;
	s.passes[1].res.interrupted = true;
	assert_false(dv_pass_cache_contradicts(&s.passes[1]));
	dv_study_free(&s);
}

/* The change lines: a pair whose means include a contradicted pass says so; the others do not. */
static void test_change_cache_contradicts(void **state)
{
	(void)state;
	static const char *const t[] = {"old", "new"};
	dv_study_t s;
	build(&s, t, 2, 1);
	free(s.lists[1].label);
	s.n_lists = 1;
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 5000, 0, 100000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 9000, 0, 100000);
	add_pass(&s, 1, 0, 0, DV_PASS_COLD, 5100, 0, 100000);
	add_pass(&s, 1, 0, 0, DV_PASS_HOT, 5200, 0, 100000);
	dv_server_cost_t *sv = &s.passes[3].res.server;
	sv->stats_ok = sv->stats_cache = true;
	sv->stats_queries = sv->stats_misses = 100; /* new's "hot" pass went upstream */
	char *out = capture(&s, false);
	assert_non_null(strstr(out, "  new vs old, list SOA, cold:"));
	assert_non_null(strstr(out, "  new vs old, list SOA, hot (! passes the server's cache "
	                            "counters contradict are in it):"));
	assert_int_equal(count_of(out, "(! passes"), 1);
	free(out);
	dv_study_free(&s);
}

static void test_summary(void **state)
{
	(void)state;
	static const char *const t[] = {"old", "new"};
	static const double old_cold[] = {1000, 1010, 990}, new_cold[] = {1100, 1110, 1090};
	static const double old_hot[] = {2000, 2100, 2050}, new_hot[] = {2010, 2090, 2040};
	dv_study_t s;
	build(&s, t, 2, 3);
	/* SOA cold: +10%, sd 10 a side: Welch CI 100 +- 2.776 x 8.165 = 77.3..122.7: significant.
	 * SOA hot: -0.2%, sd 50 and 40: within noise. new's hot passes lose 3 of 103. */
	for (unsigned r = 0; r < 3; r++) {
		add_pass(&s, 0, 0, r, DV_PASS_COLD, old_cold[r], 0, 2000000);
		add_pass(&s, 0, 0, r, DV_PASS_HOT, old_hot[r], 0, 100000);
		add_pass(&s, 1, 0, r, DV_PASS_COLD, new_cold[r], 0, 2000000);
		add_pass(&s, 1, 0, r, DV_PASS_HOT, new_hot[r], 3, 100000);
		add_pass(&s, 0, 1, r, DV_PASS_COLD, 500, 0, 1000000);
	}
	/* list A of "new" never ran, nor A hot of "old" (study stopped) */
	char *out = capture(&s, false);
	static const char *const lines[] = {
	    "Target  List  Pass  N  asked                      qps                          p50 ms "
	    "                         p99 ms  lost\n",
	    "old     SOA   cold  3   100%   1000 +- 10 (990..1010)  2.000 +- <0.008 (2.000..2.000) "
	    " "
	    "2.000 +- <0.008 (2.000..2.000)    0%\n",
	    "old     A     cold  3  25.0%      500 +- 0 (500..500)",
	    "new     SOA   hot   3   100%  2047 +- 40 (2010..2090)",
	    "2.9%\n",
	    "new     A     cold  0      -                        -",
	    "Target  List  qps hot/cold  p50 cold/hot\n",
	    "old     SOA           2.05         20.00\n",
	    "old     A                -             -\n",
	    "    p50   +0.0%          same\n    p99   +0.0%          same\n"
	    "    lost  2.9% vs 0%     worse, significant",
	    "  new vs old, list SOA, cold:\n"
	    "    qps   +10.0%         better, significant (95% CI +7.7% .. +12.3%)\n"
	    "    p50   +0.0%          same\n"
	    "    p99   +0.0%          same\n"
	    "    lost  0% vs 0%       same\n",
	    "  new vs old, list SOA, hot:\n"
	    "    qps   -0.2%          worse, within noise (95% CI",
	    "    lost  2.9% vs 0%     worse, significant",
	    "  new vs old, list A, cold: - (not measured)\n",
	};
	assert_lines(out, lines, DV_ARRAY_SIZE(lines));
	assert_null(strstr(out, "needs --repeat"));
	free(out);
	dv_study_free(&s);

	/* One repeat: the spread is unknown, said once; nothing is called significant. */
	build(&s, t, 2, 1);
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 1000, 0, 2000000);
	add_pass(&s, 1, 0, 0, DV_PASS_COLD, 900, 0, 4000000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 1000, 0, 2000000);
	add_pass(&s, 1, 0, 0, DV_PASS_HOT, 1100, 0, 1000000);
	out = capture(&s, false);
	static const char *const one[] = {
	    "  (one repeat: spread unknown; no verdicts, needs --repeat 3)\n",
	    "  new vs old, list SOA, cold:\n    qps   -10.0%         worse\n"
	    "    p50   +100.0%        worse\n",
	    "  new vs old, list SOA, hot:\n    qps   +10.0%         better\n"
	    "    p50   -50.0%         better\n",
	};
	assert_lines(out, one, DV_ARRAY_SIZE(one));
	assert_int_equal(count_of(out, "spread unknown"), 1);
	assert_null(strstr(out, "significant"));
	free(out);
	dv_study_free(&s);
}

/* Student's t quantiles against tables, and the worked example of doc/methodology.md. */
static void test_welch(void **state)
{
	(void)state;
	static const struct {
		double df, t;
	} tab[] = {{1, 12.7062}, {2, 4.3027},  {3, 3.1824},   {4, 2.7764},
	           {10, 2.2281}, {30, 2.0423}, {1000, 1.9623}};
	for (size_t i = 0; i < DV_ARRAY_SIZE(tab); i++)
		if (fabs(dv_t_quantile(0.975, tab[i].df) - tab[i].t) > 1e-4)
			fail_msg("t(0.975, %g) = %.6f, want %.4f", tab[i].df,
			         dv_t_quantile(0.975, tab[i].df), tab[i].t);
	assert_true(fabs(dv_t_quantile(0.5, 7)) < 1e-6);
	assert_true(isnan(dv_t_quantile(0.975, 0)));

	/* doc/methodology.md: A 41200, 40650, 41830 qps; B 43910, 44420, 43580. */
	static const double a[] = {41200, 40650, 41830}, b[] = {43910, 44420, 43580};
	dv_series_t sa = dv_series_of(a, 3), sb = dv_series_of(b, 3);
	dv_diff_t d = dv_diff_welch(&sa, &sb, 0, 0);
	assert_true(fabs(d.diff - 2743.33) < 0.01);
	assert_true(fabs(d.df - 3.626) < 0.001);
	assert_true(fabs(d.lo - 1529.88) < 0.01 && fabs(d.hi - 3956.78) < 0.01);
	assert_int_equal(d.verdict, DV_DIFF_SIGNIFICANT);
	/* ... and B 41900, 40900, 42600: within noise. */
	static const double c[] = {41900, 40900, 42600};
	dv_series_t sc = dv_series_of(c, 3);
	d = dv_diff_welch(&sa, &sc, 0, 0);
	assert_true(fabs(d.lo + 1176.86) < 0.01 && fabs(d.hi - 2323.52) < 0.01);
	assert_int_equal(d.verdict, DV_DIFF_NOISE);
	/* Two repeats: no verdict, no interval. */
	sb = dv_series_of(b, 2);
	d = dv_diff_welch(&sa, &sb, 0, 0);
	assert_int_equal(d.verdict, DV_DIFF_TOO_FEW);
	assert_true(isnan(d.lo) && isnan(d.hi));
}

/*
 * Two targets whose latency differs only by the histogram's rounding (one bucket)
 * with no spread at all: not significant (the spread is floored at the bucket width).
 */
static void test_rounding_not_significant(void **state)
{
	(void)state;
	static const char *const t[] = {"a", "b"};
	int i = dv_hist_bucket_of(1000000); /* 1 ms */
	uint64_t lo = dv_hist_bucket_low(i), next = dv_hist_bucket_low(i + 1);
	dv_study_t s;

	assert_true(fabs(dv_metric_floor(DV_M_P50_MS, (double)lo / 1e6) -
	                 (double)(next - lo) / 1e6) < 1e-12);
	assert_true(dv_metric_floor(DV_M_QPS, 1000) == 0);
	build(&s, t, 2, 3);
	s.n_plan = 1;
	for (unsigned r = 0; r < 3; r++) {
		add_pass(&s, 0, 0, r, DV_PASS_COLD, 1000, 0, lo);
		add_pass(&s, 1, 0, r, DV_PASS_COLD, 1000, 0, next);
	}
	char *out = capture(&s, false);
	static const char *const lines[] = {
	    "    p50   +0.4%          worse, within noise (95% CI -0.5% .. +1.3%)\n",
	    "    p99   +0.4%          worse, within noise (95% CI -0.5% .. +1.3%)\n",
	};
	assert_lines(out, lines, DV_ARRAY_SIZE(lines));
	assert_null(strstr(out, "significant"));
	free(out);
	/* Without the floor the same figures would be called significant. */
	dv_series_t sa =
	    dv_series_of((double[]){(double)lo / 1e6, (double)lo / 1e6, (double)lo / 1e6}, 3);
	dv_series_t sb =
	    dv_series_of((double[]){(double)next / 1e6, (double)next / 1e6, (double)next / 1e6}, 3);
	assert_int_equal(dv_diff_welch(&sa, &sb, 0, 0).verdict, DV_DIFF_SIGNIFICANT);
	dv_study_free(&s);
}

/* A lossy hot pass: its loss in the change lines of the summary, and the direction. */
static void test_lossy_change_line(void **state)
{
	(void)state;
	static const char *const t[] = {"pdns", "unbound"};
	dv_study_t s;
	build(&s, t, 2, 1);
	free(s.lists[1].label); /* one list: dv_study_free() frees n_lists labels */
	s.n_lists = 1;
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 50000, 0, 100000);
	add_pass(&s, 1, 0, 0, DV_PASS_HOT, 46800, 3, 100000);
	s.passes[1].res.stats.c.sent = 10000; /* 3 of 10000 lost: 0.03% */
	char *out = capture(&s, false);
	static const char *const lines[] = {
	    "  unbound vs pdns, list SOA, hot:\n    qps   -6.4%          worse\n",
	    "    lost  0.03% vs 0%    worse\n",
	};
	assert_lines(out, lines, DV_ARRAY_SIZE(lines));
	free(out);
	dv_study_free(&s);
}

/*
 * What a pass can measure (doc/methodology.md): cold passes of 14 ms have no
 * throughput figure (table, summary, hot/cold ratio and change lines say so);
 * latency still gets its verdict, its interval on the log scale (never below
 * -100%).
 */
static void test_short_passes_no_qps_verdict(void **state)
{
	(void)state;
	static const char *const t[] = {"v1", "v2"};
	static const uint64_t lat1[] = {1000000, 1100000, 900000}, lat2[] = {100000, 400000, 50000};
	dv_study_t s;
	build(&s, t, 2, 3);
	free(s.lists[1].label);
	s.n_lists = 1;
	for (unsigned r = 0; r < 3; r++) {
		add_pass(&s, 0, 0, r, DV_PASS_COLD, 176000, 0, lat1[r]);
		add_pass(&s, 0, 0, r, DV_PASS_HOT, 322000, 0, 100000);
		add_pass(&s, 1, 0, r, DV_PASS_COLD, 88000, 0, lat2[r]);
		add_pass(&s, 1, 0, r, DV_PASS_HOT, 322000, 0, 100000);
		s.passes[s.n_passes - 4].res.run_time_s = 0.014;
		s.passes[s.n_passes - 2].res.run_time_s = 0.018;
	}
	char *out = capture(&s, true);
	assert_non_null(strstr(out, "v1      SOA   too short (lost 0)"));
	assert_int_equal(count_of(out, "too short: the pass ran under 0.5 s"), 1);
	assert_null(strstr(out, "176000"));
	free(out);
	out = capture(&s, false);
	static const char *const lines[] = {
	    "v1      SOA   cold  3   100%                     too short   1.000 +- 0.100",
	    "v1      SOA              -         10.00\n",
	    "  v2 vs v1, list SOA, cold:\n"
	    "    qps   -              no verdict: passes under 0.5 s are too short (longer list or "
	    "--hot-time)\n"
	    "    p50   -81.7%         better, within noise (95% CI -99.1% .. +69.8%)\n",
	    "  v2 vs v1, list SOA, hot:\n    qps   +0.0%          same\n",
	};
	assert_lines(out, lines, DV_ARRAY_SIZE(lines));
	assert_null(strstr(out, "-49.8%"));
	free(out);
	/* On the linear scale the same samples would give an interval far below -100%. */
	static const double l1[] = {1.0, 1.1, 0.9}, l2[] = {0.1, 0.4, 0.05};
	dv_series_t sa = dv_series_of(l1, 3), sb = dv_series_of(l2, 3);
	assert_true(dv_diff_welch(&sa, &sb, 0, 0).lo / sa.mean < -1.0);
	/* Under -Q the qps is the offered rate: no verdict, no hot/cold qps ratio. */
	for (size_t i = 0; i < s.n_passes; i++)
		s.passes[i].res.run_time_s = 2;
	s.run.max_qps = 1000;
	out = capture(&s, false);
	assert_int_equal(count_of(out, "no verdict: the rate was set (-Q), not measured"), 2);
	assert_null(strstr(out, "    qps   -50.0%"));
	free(out);
	dv_study_free(&s);
}

/* Long labels are shortened in the grids (columns stay narrow) and given in full below. */
static void test_long_labels(void **state)
{
	(void)state;
	static const char *const t[] = {"a", "unbound-1.19.0-with-a-very-long-build-tag"};
	dv_study_t s;
	build(&s, t, 2, 1);
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 10, 0, 1000);
	add_pass(&s, 1, 0, 0, DV_PASS_COLD, 20, 0, 1000);
	char *out = capture(&s, true);
	static const char *const lines[] = {
	    "\nTarget                    List    rep1 cold  rep1 hot\n",
	    "\nunbound-1.19.0-with-a...  SOA   20 (lost 0)         -\n",
	    "  target unbound-1.19.0-with-a... = unbound-1.19.0-with-a-very-long-build-tag\n",
	};
	assert_lines(out, lines, DV_ARRAY_SIZE(lines));
	free(out);
	dv_study_free(&s);
}

/* Pass lengths: cold is one run through the list whatever -l/-n say; hot as --hot-*. */
static void test_pass_config(void **state)
{
	(void)state;
	dv_study_t s;
	memset(&s, 0, sizeof(s));
	dv_run_config_init(&s.run);
	s.run.time_limit_ns = 5 * DV_NS_PER_S;
	s.run.passes = 9;
	dv_run_config_t c = dv_study_pass_config(&s, DV_PASS_COLD);
	assert_int_equal(c.time_limit_ns, 0);
	assert_int_equal(c.passes, 1);
	c = dv_study_pass_config(&s, DV_PASS_HOT);
	assert_int_equal(c.time_limit_ns, DV_HOT_TIME_DEFAULT_NS);
	assert_int_equal(c.passes, 0);
	s.hot_runs = 3;
	c = dv_study_pass_config(&s, DV_PASS_HOT);
	assert_int_equal(c.time_limit_ns, 0);
	assert_int_equal(c.passes, 3);
	s.hot_runs = 0;
	s.hot_time_ns = 7 * DV_NS_PER_S;
	c = dv_study_pass_config(&s, DV_PASS_HOT);
	assert_int_equal(c.time_limit_ns, 7 * DV_NS_PER_S);
	c = dv_study_pass_config(&s, DV_PASS_PLAIN);
	assert_int_equal(c.time_limit_ns, 5 * DV_NS_PER_S);
	assert_int_equal(c.passes, 9);
}

/* --probe: NAME [TYPE] [CLASS] in either order; bad parts named. */
/* One rule for a target's and a list's name: label, else spec or path, else "?". */
static void test_labels(void **state)
{
	dv_target_t t[2] = {{.label = "ns1", .spec = "127.0.0.1"}, {.spec = "[::1]:53"}};
	dv_list_t l[3] = {{.label = "SOA", .path = "soa.txt"}, {.path = "a.txt"}, {0}};
	dv_study_t s = {.targets = t, .n_targets = 2, .lists = l, .n_lists = 3};

	(void)state;
	assert_string_equal(dv_study_target_label(&s, 0), "ns1");
	assert_string_equal(dv_study_target_label(&s, 1), "[::1]:53");
	assert_string_equal(dv_study_target_label(&s, 2), "?");
	t[1].spec = NULL;
	assert_string_equal(dv_study_target_label(&s, 1), "?");
	assert_string_equal(dv_study_list_label(&s, 0), "SOA");
	assert_string_equal(dv_study_list_label(&s, 1), "a.txt");
	assert_string_equal(dv_study_list_label(&s, 2), "?");
	assert_string_equal(dv_study_list_label(&s, 3), "?");
}

static void test_probe_parse(void **state)
{
	(void)state;
	uint8_t q[300], want[300];
	dv_err_t err;
	size_t n = dv_probe_parse("version.bind CH TXT", false, q, sizeof(q), &err);
	size_t m = dv_probe_build_query(want, sizeof(want), "version.bind", 16, 3, false);
	assert_true(n > 0 && n == m && memcmp(q, want, n) == 0);
	n = dv_probe_parse("version.bind TXT CH", false, q, sizeof(q), &err);
	assert_true(n == m && memcmp(q, want, n) == 0);
	n = dv_probe_parse("probe.z0.test", true, q, sizeof(q), &err);
	m = dv_probe_build_query(want, sizeof(want), "probe.z0.test", 1, 1, true);
	assert_true(n > 0 && n == m && memcmp(q, want, n) == 0);
	assert_int_equal(dv_probe_parse("x.test BOGUS", true, q, sizeof(q), &err), 0);
	assert_non_null(strstr(err.msg, "'BOGUS' is neither a query type nor a class"));
	assert_int_equal(dv_probe_parse("x.test A IN extra", true, q, sizeof(q), &err), 0);
	assert_int_equal(dv_probe_parse("", true, q, sizeof(q), &err), 0);
	/* Same question, case-blind; another type is another question. */
	m = dv_probe_build_query(want, sizeof(want), "PROBE.z0.test", 1, 1, true);
	assert_true(dv_probe_same_question(q, 0, want, m) == false);
	n = dv_probe_parse("probe.z0.test A", true, q, sizeof(q), &err);
	assert_true(dv_probe_same_question(q, n, want, m));
	m = dv_probe_build_query(want, sizeof(want), "probe.z0.test", 28, 1, true);
	assert_false(dv_probe_same_question(q, n, want, m));
}

/* ---------------------------------------------------------------- a UDP peer */

typedef struct peer {
	int fd;
	uint16_t port;
	int answer_from; /* answer the Nth query and later (1-based); 0 = never */
	int version;     /* answer with a version.bind TXT */
	int received;
	pthread_t th;
} peer_t;

static void *peer_main(void *arg)
{
	peer_t *p = arg;
	uint8_t buf[1500];
	for (int turns = 0; turns < 400; turns++) { /* bounded: 400 x 10 ms */
		struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n =
		    recvfrom(p->fd, buf, sizeof(buf) - 64, 0, (struct sockaddr *)&from, &fl);
		if (n < 12)
			continue;
		if (buf[0] == 0xff && buf[1] == 0xff && n == 12)
			break; /* stop */
		p->received++;
		if (p->answer_from == 0 || p->received < p->answer_from)
			continue;
		buf[2] |= 0x80;
		if (p->version) {
			static const uint8_t rr[] = {0xc0, 0x0c, 0,   16,  0,   3,   0,   0,
			                             0,    0,    0,   12,  4,   't', 'e', 's',
			                             't',  6,    'v', '1', '.', '2', '"', 1};
			memcpy(buf + n, rr, sizeof(rr));
			n += (ssize_t)sizeof(rr);
			buf[7] = 1; /* ANCOUNT */
		}
		sendto(p->fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static void peer_start(peer_t *p, int answer_from, int version)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	memset(p, 0, sizeof(*p));
	p->answer_from = answer_from;
	p->version = version;
	p->fd = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(p->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(p->fd, (struct sockaddr *)&a, &al);
	p->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&p->th, NULL, peer_main, p), 0);
}

static void peer_stop(peer_t *p)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(p->port)};
	uint8_t stop[12] = {0xff, 0xff};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sendto(fd, stop, sizeof(stop), 0, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	pthread_join(p->th, NULL);
	close(p->fd);
}

static void loopback(struct sockaddr_storage *ss, socklen_t *len, uint16_t port)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	memset(ss, 0, sizeof(*ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*len = sizeof(*a);
}

static void test_probe_ready_retries(void **state)
{
	(void)state;
	peer_t p;
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t q[512];
	dv_probe_result_t res;
	dv_err_t err;

	size_t qlen = dv_probe_build_query(q, sizeof(q), "example.com", 6, 1, true);
	assert_int_equal(qlen, 12 + 13 + 4);
	assert_int_equal(dv_probe_build_query(q, sizeof(q), "bad..name", 6, 1, true), 0);
	peer_start(&p, 3, 0);
	loopback(&ss, &len, p.port);
	/* Tries every 10, 20, 40 ms...: the third is answered. */
	int rc = dv_probe_ready((struct sockaddr *)&ss, len, NULL, q, qlen, 3 * DV_NS_PER_S,
	                        10 * DV_NS_PER_MS, NULL, &res, &err);
	peer_stop(&p);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(res.attempts, 3);
	assert_int_equal(res.rcode, 0);
	assert_int_equal(p.received, 3);

	/* A peer that never answers: a bounded wait and a clear message. */
	peer_start(&p, 0, 0);
	loopback(&ss, &len, p.port);
	rc = dv_probe_ready((struct sockaddr *)&ss, len, NULL, q, qlen, 300 * DV_NS_PER_MS,
	                    20 * DV_NS_PER_MS, NULL, &res, &err);
	peer_stop(&p);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(res.attempts >= 3 && res.attempts <= 6);
	assert_int_equal(p.received, (int)res.attempts);
	assert_non_null(
	    strstr(err.msg, "target not ready: no answer to the readiness probe after"));
	assert_true(res.wait_s >= 0.3 && res.wait_s < 5);
}

static void test_probe_version(void **state)
{
	(void)state;
	peer_t p;
	struct sockaddr_storage ss;
	socklen_t len;
	char *v = NULL;
	dv_err_t err;

	peer_start(&p, 1, 1);
	loopback(&ss, &len, p.port);
	int rc =
	    dv_probe_version((struct sockaddr *)&ss, len, NULL, 2, 500 * DV_NS_PER_MS, &v, &err);
	peer_stop(&p);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(v, "test v1.2\"\\001"); /* strings joined; odd bytes escaped */
	free(v);
	/* Answered without a TXT: -ENOENT, no version. */
	peer_start(&p, 1, 0);
	loopback(&ss, &len, p.port);
	rc = dv_probe_version((struct sockaddr *)&ss, len, NULL, 2, 500 * DV_NS_PER_MS, &v, &err);
	peer_stop(&p);
	assert_int_equal(rc, -ENOENT);
	assert_null(v);
}

/* A TCP peer: accepts one connection, reads one framed query, answers it with a
 * version.bind TXT (wrong_id_first: a REFUSED to the ID + 1 first, then the answer). */
typedef struct tcp_peer {
	int lfd;
	uint16_t port;
	bool wrong_id_first;
	int queries;
	pthread_t th;
} tcp_peer_t;

static void *tcp_peer_main(void *arg)
{
	tcp_peer_t *p = arg;
	uint8_t buf[600];
	struct pollfd pfd = {.fd = p->lfd, .events = POLLIN};
	if (poll(&pfd, 1, 5000) <= 0)
		return NULL;
	int fd = accept(p->lfd, NULL, NULL);
	size_t have = 0;
	while (fd >= 0 && have < sizeof(buf)) { /* one 2-byte length and its query */
		pfd.fd = fd;
		if (poll(&pfd, 1, 5000) <= 0)
			break;
		ssize_t n = recv(fd, buf + have, sizeof(buf) - have, 0);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have >= 2 && have >= 2 + (size_t)(buf[0] << 8 | buf[1]))
			break;
	}
	size_t qlen = have >= 2 ? (size_t)(buf[0] << 8 | buf[1]) : 0;
	if (fd >= 0 && qlen >= 12 && have >= 2 + qlen) {
		static const uint8_t rr[] = {0xc0, 0x0c, 0, 16, 0, 3,   0,   0,
		                             0,    0,    0, 4,  3, 'v', '9', '9'};
		uint8_t out[2 * 700];
		size_t alen = qlen + sizeof(rr);
		p->queries++;
		memcpy(out + 2, buf + 2, qlen);
		memcpy(out + 2 + qlen, rr, sizeof(rr));
		out[0] = (uint8_t)(alen >> 8);
		out[1] = (uint8_t)alen;
		out[4] |= 0x80; /* QR */
		out[9] = 1;     /* ANCOUNT */
		memcpy(out + 2 + alen, out, 2 + alen);
		if (p->wrong_id_first) {
			out[3]++;    /* the first copy answers another ID: not the answer */
			out[5] |= 5; /* and says REFUSED, so taking it would show in the rcode */
		}
		send(fd, out, p->wrong_id_first ? 2 * (2 + alen) : 2 + alen, MSG_NOSIGNAL);
		pfd.fd = fd;
		(void)poll(&pfd, 1, 2000); /* until the client closes */
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void tcp_peer_start(tcp_peer_t *p, bool wrong_id_first)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	memset(p, 0, sizeof(*p));
	p->wrong_id_first = wrong_id_first;
	p->lfd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(p->lfd, 4), 0);
	getsockname(p->lfd, (struct sockaddr *)&a, &al);
	p->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&p->th, NULL, tcp_peer_main, p), 0);
}

/* Over TCP: the probe and version.bind ask the way the passes will; an answer to another
 * ID is not the answer; a port nobody listens on is waited out and said. */
static void test_probe_over_tcp(void **state)
{
	(void)state;
	tcp_peer_t p;
	struct sockaddr_storage ss;
	socklen_t len;
	dv_tp_config_t tp;
	dv_probe_result_t res;
	dv_err_t err;
	uint8_t q[512];
	char *v = NULL;
	size_t qlen = dv_probe_build_query(q, sizeof(q), "version.bind", 16, 3, false);

	dv_tp_config_init(&tp);
	tp.kind = DV_TP_TCP;
	for (int wrong = 0; wrong < 2; wrong++) {
		tcp_peer_start(&p, wrong);
		loopback(&ss, &len, p.port);
		int rc = dv_probe_ready((struct sockaddr *)&ss, len, &tp, q, qlen, 5 * DV_NS_PER_S,
		                        10 * DV_NS_PER_MS, NULL, &res, &err);
		pthread_join(p.th, NULL);
		close(p.lfd);
		if (rc != 0)
			fail_msg("%s", err.msg);
		assert_int_equal(res.attempts, 1);
		assert_int_equal(res.connections, 1);
		assert_int_equal(res.rcode, 0);
		assert_int_equal(p.queries, 1);
	}
	tcp_peer_start(&p, false);
	loopback(&ss, &len, p.port);
	int rc = dv_probe_version((struct sockaddr *)&ss, len, &tp, 1, 5 * DV_NS_PER_S, &v, &err);
	pthread_join(p.th, NULL);
	close(p.lfd);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(v, "v99");
	free(v);

	/* Nobody listens (the peer's port, closed): connections refused, no query sent. */
	rc = dv_probe_ready((struct sockaddr *)&ss, len, &tp, q, qlen, 300 * DV_NS_PER_MS,
	                    20 * DV_NS_PER_MS, NULL, &res, &err);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_int_equal(res.attempts, 0);
	assert_true(res.connections >= 2);
	assert_non_null(strstr(err.msg, "(0 queries over "));
	assert_non_null(strstr(err.msg, "connections; the last: connection refused)"));
}

/* A one-target, one-list study whose list is never sent (the flush or probe fails first). */
static void study_for(dv_study_t *s, uint16_t port, const char *flush, uint64_t ready_ns)
{
	memset(s, 0, sizeof(*s));
	s->n_targets = 1;
	s->targets = calloc(1, sizeof(*s->targets));
	s->targets[0].label = xs("lbl");
	loopback(&s->targets[0].addr, &s->targets[0].addr_len, port);
	s->targets[0].flush_cmd = flush ? xs(flush) : NULL;
	s->n_lists = 1;
	s->lists = calloc(1, sizeof(*s->lists));
	s->lists[0].label = xs("SOA");
	s->n_plan = 2;
	s->plan = calloc(2, sizeof(*s->plan));
	s->plan[0] = DV_PASS_COLD;
	s->plan[1] = DV_PASS_HOT;
	s->repeat = 2;
	s->ready_timeout_ns = ready_ns;
	s->query_version = true;
}

static void test_flush_failure_stops(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_study.XXXXXX", cmd[512], path[300], line[256] = "";
	dv_study_t s;
	peer_t p;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/env", dir);
	snprintf(cmd, sizeof(cmd),
	         "echo \"$DV_TARGET_LABEL $DV_TARGET_ADDR $DV_TARGET_PORT $DV_LIST_LABEL "
	         "$DV_REPEAT\" > %s; "
	         "echo to-stderr-not-stdout; exit 3",
	         path);
	peer_start(&p, 1, 0);
	study_for(&s, p.port, cmd, DV_NS_PER_S);
	FILE *devnull = fopen("/dev/null", "w");
	int rc = dv_study_run(&s, devnull, false, NULL);
	fclose(devnull);
	peer_stop(&p);
	assert_int_equal(rc, -ECANCELED);
	assert_int_equal(s.failed, -ECANCELED);
	assert_int_equal(s.n_passes, 0);
	assert_non_null(
	    strstr(s.fail_msg, "target lbl: flush command failed with exit status 3: echo"));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	char want[128];
	snprintf(want, sizeof(want), "lbl 127.0.0.1 %u SOA 1\n", p.port);
	assert_string_equal(line, want);
	/* The study's metadata was completed on the way. */
	assert_non_null(s.hostname);
	assert_non_null(s.kernel);
	assert_true(s.ncpu >= 1);
	snprintf(want, sizeof(want), "127.0.0.1:%u", p.port);
	assert_string_equal(s.targets[0].addr_text, want);
	dv_study_free(&s);

	/* Killed by a signal: said so. */
	study_for(&s, p.port, "kill -TERM $$", DV_NS_PER_S);
	rc = dv_study_run(&s, stdout, true, NULL);
	assert_int_equal(rc, -ECANCELED);
	assert_non_null(strstr(s.fail_msg, "killed by signal 15"));
	dv_study_free(&s);
	unlink(path);
	rmdir(dir);
}

static void test_never_ready_stops(void **state)
{
	(void)state;
	dv_study_t s;
	peer_t p;

	peer_start(&p, 0, 0); /* receives, never answers */
	study_for(&s, p.port, "true", 250 * DV_NS_PER_MS);
	int rc = dv_study_run(&s, stdout, true, NULL);
	peer_stop(&p);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_int_equal(s.failed, -ETIMEDOUT);
	assert_int_equal(s.n_passes, 0);
	assert_non_null(strstr(s.fail_msg, "target lbl: 127.0.0.1:"));
	assert_non_null(strstr(s.fail_msg, "target not ready"));
	assert_null(s.targets[0].server_version);
	/* The probe (version.bind CH TXT) was retried and the version query came first. */
	if (p.received < 3)
		fail_msg("peer received %d queries; %s", p.received, s.fail_msg);
	dv_study_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_shape),
	    cmocka_unit_test(test_table_partial_and_repeated_kind),
	    cmocka_unit_test(test_summary),
	    cmocka_unit_test(test_welch),
	    cmocka_unit_test(test_rounding_not_significant),
	    cmocka_unit_test(test_lossy_change_line),
	    cmocka_unit_test(test_short_passes_no_qps_verdict),
	    cmocka_unit_test(test_long_labels),
	    cmocka_unit_test(test_pass_config),
	    cmocka_unit_test(test_labels),
	    cmocka_unit_test(test_probe_parse),
	    cmocka_unit_test(test_probe_ready_retries),
	    cmocka_unit_test(test_probe_version),
	    cmocka_unit_test(test_probe_over_tcp),
	    cmocka_unit_test(test_flush_failure_stops),
	    cmocka_unit_test(test_never_ready_stops),
	    cmocka_unit_test(test_table_server),
	    cmocka_unit_test(test_table_cache_contradicts),
	    cmocka_unit_test(test_change_cache_contradicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
