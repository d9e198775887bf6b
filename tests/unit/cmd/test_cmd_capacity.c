/* test_cmd_capacity: capacity's own options taken out of argv, its defaults, and each bad value. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/cmd.h"
#include "engine/run_config.h"

#define ARGV(...) ((char *[]){"capacity", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"capacity", __VA_ARGS__}) / sizeof(char *)))

/* Capacity's options leave argv; the rest keeps its order, after "--" too. */
static void test_split_keeps_the_rest(void **state)
{
	char **argv = ARGV("--max-loss", "0.5%", "-s", "127.0.0.1", "--step=1s", "--to", "5000",
	                   "-p", "53", "--max-latency", "p99.9=20ms", "--", "--from", "x");
	int argc = ARGC("--max-loss", "0.5%", "-s", "127.0.0.1", "--step=1s", "--to", "5000", "-p",
	                "53", "--max-latency", "p99.9=20ms", "--", "--from", "x");
	dv_capacity_cli_t cc;

	(void)state;
	assert_int_equal(dv_capacity_cli_split(&argc, argv, &cc), 0);
	assert_int_equal(argc, 8);
	assert_string_equal(argv[0], "dnsvolley");
	assert_string_equal(argv[1], "-s");
	assert_string_equal(argv[2], "127.0.0.1");
	assert_string_equal(argv[3], "-p");
	assert_string_equal(argv[4], "53");
	assert_string_equal(argv[5], "--");
	assert_string_equal(argv[6], "--from");
	assert_string_equal(argv[7], "x");
	assert_null(argv[8]);
	assert_true(cc.opts.max_loss > 0.00499 && cc.opts.max_loss < 0.00501);
	assert_int_equal(cc.opts.step_ns, 1000000000ULL);
	assert_true(cc.opts.to == 5000);
	assert_true(cc.opts.from == 1000); /* the default: "--from" came after "--" */
	assert_true(cc.opts.lat_q > 0.99899 && cc.opts.lat_q < 0.99901);
	assert_true(cc.opts.max_lat_ns == 20e6);
	assert_null(cc.plot_dir);
}

/* Every bad value is exit status 2, before anything is measured. */
static void test_split_bad_values(void **state)
{
	static const char *const bad[][2] = {
	    {"--max-loss", "lots"},
	    {"--max-p99", "10"},
	    {"--max-latency", "p101=1ms"},
	    {"--latency-from", "now"},
	    {"--step", "0.05"},
	    {"--from", "0"},
	    {"--factor", "1.01"},
	    {"--precision", "0.0001%"},
	    {"--to", "500"},
	    {"--plot", "/dev/null/charts"},
	};
	dv_capacity_cli_t cc;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = {"capacity", (char *)bad[i][0], (char *)bad[i][1], NULL};
		int argc = 3;

		assert_int_equal(dv_capacity_cli_split(&argc, argv, &cc), 2);
	}
	{
		char *argv[] = {"capacity", "-s", "::1", "--step", NULL};
		int argc = 4;

		assert_int_equal(dv_capacity_cli_split(&argc, argv, &cc), 2);
	}
}

/* -q and -t get capacity's defaults only where the run kept a plain run's. */
static void test_defaults(void **state)
{
	dv_run_config_t run;

	(void)state;
	dv_run_config_init(&run);
	run.threads = 2;
	dv_capacity_cli_defaults(&run);
	assert_int_equal(run.max_outstanding, 2 * 65536);
	assert_int_equal(run.timeout_ns, 1000000000ULL);

	dv_run_config_init(&run);
	run.max_outstanding = 7;
	run.timeout_ns = 3;
	dv_capacity_cli_defaults(&run);
	assert_int_equal(run.max_outstanding, 7);
	assert_int_equal(run.timeout_ns, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_keeps_the_rest),
	    cmocka_unit_test(test_split_bad_values),
	    cmocka_unit_test(test_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
