/* test_results_server: the "server" object written and read back exactly, with and without
 * --server-stats; a file from before --server-stats (no "process", no "stats") still reads. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "results/results_server.h"

static void round_trip(const dv_server_cost_t *in, dv_server_cost_t *out)
{
	char why[200] = "";
	json_t *o = dv_results_server_to_json(in);

	assert_non_null(o);
	assert_int_equal(dv_results_server_from_json(o, out, why, sizeof(why)), 0);
	json_decref(o);
}

static void test_stats(void **state)
{
	dv_server_cost_t s, b;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.measured = true;
	s.proc = false; /* only the counters: a server on another host */
	s.stats = s.stats_ok = s.stats_cache = true;
	snprintf(s.stats_kind, sizeof(s.stats_kind), "unbound");
	s.stats_queries = 2000;
	s.stats_hits = 3;
	s.stats_misses = 1997;
	round_trip(&s, &b);
	assert_false(b.proc);
	assert_true(b.stats && b.stats_ok && b.stats_cache);
	assert_string_equal(b.stats_kind, "unbound");
	assert_int_equal(b.stats_queries, 2000);
	assert_int_equal(b.stats_hits, 3);
	assert_int_equal(b.stats_misses, 1997);
	/* not asked: no "stats" object, read back as not asked */
	s.stats = false;
	s.proc = true;
	round_trip(&s, &b);
	assert_true(b.proc);
	assert_false(b.stats);
	assert_int_equal(b.stats_queries, 0);
}

static void test_old_file(void **state)
{
	dv_server_cost_t s, b;
	char why[200] = "";
	json_t *o;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.measured = s.ok = s.proc = true;
	s.pid = 42;
	o = dv_results_server_to_json(&s);
	json_object_del(o, "process");
	assert_int_equal(dv_results_server_from_json(o, &b, why, sizeof(why)), 0);
	assert_true(b.proc); /* before --server-stats the process was always looked at */
	assert_false(b.stats);
	assert_int_equal(b.pid, 42);
	/* a stats object with a wrong member: refused with its name */
	json_object_set_new(o, "stats",
	                    json_pack("{s:s,s:b,s:s,s:i,s:b,s:i,s:s}", "kind", "knot", "ok", 1,
	                              "error", "", "queries", 5, "cache", 0, "cache_hits", 0,
	                              "cache_misses", "x"));
	assert_int_equal(dv_results_server_from_json(o, &b, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "server.stats.cache_misses: wrong type or out of range");
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_old_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
