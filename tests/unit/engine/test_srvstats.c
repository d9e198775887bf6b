/* test_srvstats: the server counters' parsers on canned outputs of each control tool,
 * garbage refused with a reason, KIND[:ARGS] parsed, the deltas of two readings. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/servercost.h"
#include "engine/srvcmd.h"
#include "engine/srvstats.h"

static char why[200];

static dv_srvstats_reading_t parse_ok(dv_srvstats_kind_t k, const char *text)
{
	dv_srvstats_reading_t r;

	why[0] = '\0';
	assert_int_equal(dv_srvstats_parse(k, text, &r, why, sizeof(why)), 0);
	return r;
}

static void test_unbound(void **state)
{
	/* unbound-control stats_noreset (1.17), abridged: per-thread lines repeat the totals */
	static const char out[] = "thread0.num.queries=700\n"
	                          "thread0.num.cachehits=200\n"
	                          "thread0.num.cachemiss=500\n"
	                          "total.num.queries=1234\n"
	                          "total.num.queries_ip_ratelimited=0\n"
	                          "total.num.cachehits=234\n"
	                          "total.num.cachemiss=1000\n"
	                          "total.num.prefetch=0\n"
	                          "total.recursion.time.avg=0.001234\n"
	                          "time.now=1764645000.123456\n"
	                          "mem.cache.rrset=123456\n";
	dv_srvstats_reading_t r = parse_ok(DV_SRVSTATS_UNBOUND, out);

	(void)state;
	assert_int_equal(r.queries, 1234);
	assert_int_equal(r.hits, 234);
	assert_int_equal(r.misses, 1000);
	assert_true(r.has_cache);
	assert_int_equal(r.counters, 9); /* the two non-integers are not counters */
}

static void test_knot(void **state)
{
	/* knotc stats (3.2) with mod-stats as a global module */
	static const char out[] = "server.zone-count = 1\n"
	                          "mod-stats.request-protocol[udp4] = 10\n"
	                          "mod-stats.request-protocol[tcp4] = 3\n"
	                          "mod-stats.request-protocol[udp6] = 2\n"
	                          "mod-stats.server-operation[query] = 15\n"
	                          "mod-stats.response-code[NOERROR] = 15\n";
	dv_srvstats_reading_t r = parse_ok(DV_SRVSTATS_KNOT, out);

	(void)state;
	assert_int_equal(r.queries, 15);
	assert_false(r.has_cache);
	/* without mod-stats: only the zone count, and the reason says what to load */
	assert_int_equal(
	    dv_srvstats_parse(DV_SRVSTATS_KNOT, "server.zone-count = 1\n", &r, why, sizeof(why)),
	    -EINVAL);
	assert_non_null(strstr(why, "knotc printed no query counter"));
	assert_non_null(strstr(why, "mod-stats"));
}

static void test_nsd(void **state)
{
	static const char out[] = "server0.queries=40\n"
	                          "num.queries=40\n"
	                          "time.boot=12.5\n"
	                          "num.type.A=40\n"
	                          "num.rcode.NOERROR=40\n";
	dv_srvstats_reading_t r = parse_ok(DV_SRVSTATS_NSD, out);

	(void)state;
	assert_int_equal(r.queries, 40);
	assert_false(r.has_cache);
}

static void test_recursor(void **state)
{
	/* rec_control get-all: NAME<TAB>VALUE */
	static const char out[] = "all-outqueries\t77\n"
	                          "cache-hits\t5\n"
	                          "cache-misses\t60\n"
	                          "packetcache-hits\t35\n"
	                          "packetcache-misses\t65\n"
	                          "questions\t100\n";
	dv_srvstats_reading_t r = parse_ok(DV_SRVSTATS_RECURSOR, out);

	(void)state;
	assert_int_equal(r.queries, 100);
	assert_int_equal(r.hits, 40); /* packet cache + record cache */
	assert_int_equal(r.misses, 60);
	assert_true(r.has_cache);
}

static void test_pdns(void **state)
{
	/* pdns_control show '*': one line, comma-separated, a trailing comma */
	static const char out[] = "corrupt-packets=0,latency=12,packetcache-hit=30,"
	                          "packetcache-miss=20,tcp-queries=5,udp-queries=45,"
	                          "udp4-queries=45,\n";
	dv_srvstats_reading_t r = parse_ok(DV_SRVSTATS_PDNS, out);

	(void)state;
	assert_int_equal(r.queries, 50); /* udp4-queries is not added twice */
	assert_int_equal(r.hits, 30);
	assert_int_equal(r.misses, 20);
	assert_true(r.has_cache);
}

static void test_bind(void **state)
{
	static const char out[] =
	    "{\"json-stats-version\":\"1.7\",\"nsstats\":{\"Requestv4\":90,\"Requestv6\":10,"
	    "\"QrySuccess\":100},\"views\":{\"_default\":{\"resolver\":{\"cachestats\":"
	    "{\"CacheHits\":500,\"CacheMisses\":70,\"QueryHits\":30,\"QueryMisses\":70}}},"
	    "\"_bind\":{\"resolver\":{\"cachestats\":{\"QueryHits\":1}}}}}";
	dv_srvstats_reading_t r = parse_ok(DV_SRVSTATS_BIND, out);

	(void)state;
	assert_int_equal(r.queries, 100);
	assert_int_equal(r.hits, 31);
	assert_int_equal(r.misses, 70);
	assert_true(r.has_cache);
	/* an authoritative-only BIND that saw nothing yet: zero counters are left out */
	r = parse_ok(DV_SRVSTATS_BIND, "{\"nsstats\":{}}");
	assert_int_equal(r.queries, 0);
	assert_false(r.has_cache);
	assert_int_equal(dv_srvstats_parse(DV_SRVSTATS_BIND, "<html>", &r, why, sizeof(why)),
	                 -EINVAL);
	assert_non_null(strstr(why, "not JSON"));
}

static void test_garbage(void **state)
{
	static const char *const junk[] = {
	    "",
	    "error: could not connect to 127.0.0.1@8953\n",
	    "total.num.queries=\n",
	    "total.num.queries=-5\n",
	    "total.num.queries=12abc\n",
	    "total.num.queries=99999999999999999999999\n",
	    "\x01\x02\xff=\n=\n==7\n",
	};
	dv_srvstats_reading_t r;

	(void)state;
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		assert_int_equal(
		    dv_srvstats_parse(DV_SRVSTATS_UNBOUND, junk[i], &r, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "unbound-control printed no query counter"));
	}
	/* a resolver without its cache counters: queries, no cache figure */
	r = parse_ok(DV_SRVSTATS_UNBOUND, "total.num.queries=5\n");
	assert_int_equal(r.queries, 5);
	assert_false(r.has_cache);
}

static void test_cfg(void **state)
{
	dv_srvstats_cfg_t c;

	(void)state;
	assert_int_equal(dv_srvstats_cfg_parse("unbound", &c, why, sizeof(why)), 0);
	assert_int_equal(c.kind, DV_SRVSTATS_UNBOUND);
	assert_int_equal(c.n_args, 0);
	dv_srvstats_cfg_free(&c);
	assert_int_equal(
	    dv_srvstats_cfg_parse("knot:-s  /run/knot/knot.sock ", &c, why, sizeof(why)), 0);
	assert_int_equal(c.kind, DV_SRVSTATS_KNOT);
	assert_int_equal(c.n_args, 2);
	assert_string_equal(c.args[0], "-s");
	assert_string_equal(c.args[1], "/run/knot/knot.sock");
	assert_string_equal(dv_srvstats_tool(c.kind), "knotc");
	dv_srvstats_cfg_free(&c);
	assert_int_equal(dv_srvstats_cfg_parse("bind:127.0.0.1:8053", &c, why, sizeof(why)), 0);
	assert_string_equal(c.args[0], "127.0.0.1:8053");
	dv_srvstats_cfg_free(&c);
	assert_int_equal(dv_srvstats_cfg_parse("bind:a b", &c, why, sizeof(why)), -EINVAL);
	assert_int_equal(dv_srvstats_cfg_parse("unbund", &c, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "'unbund' is not unbound, knot, nsd, recursor, pdns or bind");
	assert_int_equal(dv_srvstats_cfg_parse("nsd:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", &c,
	                                       why, sizeof(why)),
	                 -EINVAL);
}

static void test_delta(void **state)
{
	dv_srvstats_reading_t a = {.queries = 100, .hits = 10, .misses = 90, .has_cache = true};
	dv_srvstats_reading_t b = {.queries = 600, .hits = 410, .misses = 190, .has_cache = true};
	dv_server_cost_t out;

	(void)state;
	memset(&out, 0, sizeof(out));
	dv_server_stats_delta(&a, &b, &out);
	assert_true(out.stats_ok);
	assert_int_equal(out.stats_queries, 500);
	assert_int_equal(out.stats_hits, 400);
	assert_int_equal(out.stats_misses, 100);
	assert_true(out.stats_cache);
	/* restarted between the edges: no figure, a reason */
	memset(&out, 0, sizeof(out));
	dv_server_stats_delta(&b, &a, &out);
	assert_false(out.stats_ok);
	assert_int_equal(out.stats_queries, 0);
	assert_non_null(strstr(out.stats_error, "went down"));
}

/* --server-cost's "KEY VALUE" lines: every key, comments and unknown keys skipped. */
static void test_srvcmd(void **state)
{
	static const char out[] = "# unbound on dns1\n"
	                          "pid 4242\n"
	                          "comm unbound\n"
	                          "cpu_user_s 12.5\n"
	                          "cpu_sys_s\t0.000001\r\n"
	                          "start_time 98765\n"
	                          "future_key whatever\n"
	                          "\n"
	                          "voluntary_ctxt_switches 100\n"
	                          "involuntary_ctxt_switches 7\n"
	                          "rss_kb 2048\n"
	                          "rss_peak_kb 4096\n"
	                          "threads 3\n"
	                          "cpus 1,3\n"
	                          "cpus_allowed 0-3\n";
	dv_procstat_t ps;
	int32_t pid;
	char buf[64];

	(void)state;
	assert_int_equal(dv_srvcmd_parse(out, &ps, &pid, why, sizeof(why)), 0);
	assert_int_equal(pid, 4242);
	assert_string_equal(ps.comm, "unbound");
	assert_int_equal(ps.utime_ticks, 12500000); /* µs */
	assert_int_equal(ps.stime_ticks, 1);
	assert_int_equal(ps.start_ticks, 98765);
	assert_int_equal(ps.vcsw, 100);
	assert_int_equal(ps.ivcsw, 7);
	assert_int_equal(ps.rss_kb, 2048);
	assert_int_equal(ps.hwm_kb, 4096);
	assert_int_equal(ps.threads, 3);
	dv_cpumask_format(&ps.ran, buf, sizeof(buf));
	assert_string_equal(buf, "1,3");
	dv_cpumask_format(&ps.allowed, buf, sizeof(buf));
	assert_string_equal(buf, "0-3");
	assert_int_equal(dv_srvcmd_parse("cpu_user_s 1\n", &ps, &pid, why, sizeof(why)), -EINVAL);
	assert_string_equal(why,
	                    "it printed no cpu_sys_s line (see doc/numbers.md, --server-cost)");
	assert_int_equal(
	    dv_srvcmd_parse("cpu_user_s 1\ncpu_sys_s x\n", &ps, &pid, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "line 2: 'x' is not a value for cpu_sys_s");
	assert_int_equal(dv_srvcmd_parse("threads -3\n", &ps, &pid, why, sizeof(why)), -EINVAL);
	assert_int_equal(dv_srvcmd_parse("", &ps, &pid, why, sizeof(why)), -EINVAL);
}

/* The tool missing from PATH: one clear sentence, -ENOENT. */
static void test_missing_tool(void **state)
{
	dv_srvstats_cfg_t c;
	dv_srvstats_reading_t r;
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	(void)state;
	setenv("PATH", "/nonexistent-dir", 1);
	assert_int_equal(dv_srvstats_cfg_parse("recursor", &c, why, sizeof(why)), 0);
	assert_int_equal(dv_srvstats_read(&c, &r, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "rec_control: no such program (not installed, or not on PATH)");
	dv_srvstats_cfg_free(&c);
	if (old != NULL)
		setenv("PATH", old, 1);
	free(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unbound), cmocka_unit_test(test_knot),
	    cmocka_unit_test(test_nsd),     cmocka_unit_test(test_recursor),
	    cmocka_unit_test(test_pdns),    cmocka_unit_test(test_bind),
	    cmocka_unit_test(test_garbage), cmocka_unit_test(test_cfg),
	    cmocka_unit_test(test_delta),   cmocka_unit_test(test_missing_tool),
	    cmocka_unit_test(test_srvcmd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
