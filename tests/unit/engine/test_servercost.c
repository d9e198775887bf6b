/* test_servercost: the server's figures over a window: deltas, per-answer figures, and this
 * process measured as its own server (found by its socket, its sendto calls counted). */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/servercost.h"

static void test_delta(void **state)
{
	dv_procstat_t a, b;
	dv_server_cost_t out;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&out, 0, sizeof(out));
	a.utime_ticks = 100, b.utime_ticks = 350;
	a.stime_ticks = 40, b.stime_ticks = 90;
	a.vcsw = 1000, b.vcsw = 5000;
	a.ivcsw = 10, b.ivcsw = 4; /* a thread ended: never negative */
	a.rss_kb = 1000, b.rss_kb = 1200, b.hwm_kb = 1500;
	b.threads = 3;
	dv_cpumask_set(&a.ran, 1);
	dv_cpumask_set(&b.ran, 3);
	dv_cpumask_set(&b.allowed, 0);
	dv_cpumask_set(&b.allowed, 1);
	dv_server_cost_delta(&a, &b, 100, &out);
	assert_true(out.cpu_user_s == 2.5);
	assert_true(out.cpu_sys_s == 0.5);
	assert_int_equal(out.vcsw, 4000);
	assert_int_equal(out.ivcsw, 0);
	assert_int_equal(out.rss_start_kb, 1000);
	assert_int_equal(out.rss_end_kb, 1200);
	assert_int_equal(out.rss_peak_kb, 1500);
	assert_int_equal(out.threads, 3);
	assert_string_equal(out.cpus, "1,3");
	assert_string_equal(out.cpus_allowed, "0-1");
	out.ok = true;
	out.answers = 100000;
	assert_true(dv_server_us_per_answer(&out) > 29.999 &&
	            dv_server_us_per_answer(&out) < 30.001);
	assert_true(dv_server_user_us_per_answer(&out) > 24.999);
	assert_true(dv_server_per_answer(&out, out.vcsw) == 0.04);
	out.answers = 0;
	assert_true(dv_server_us_per_answer(&out) == 0);
}

/* A UDP socket of ours on loopback makes this process the target's server. */
static void test_self(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	socklen_t len = sizeof(*sin);
	int srv = socket(AF_INET, SOCK_DGRAM, 0), cli = socket(AF_INET, SOCK_DGRAM, 0);
	dv_srvcost_t sc;
	dv_server_cost_t out;
	volatile double x = 1;

	(void)state;
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(srv, (struct sockaddr *)sin, sizeof(*sin)), 0);
	assert_int_equal(getsockname(srv, (struct sockaddr *)sin, &len), 0);
	dv_srvcost_init(&sc, 0);
	dv_srvcost_begin(&sc, &ss, false);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(sendto(cli, "x", 1, MSG_DONTWAIT, (struct sockaddr *)sin, len), 1);
	for (long i = 0; i < 30000000; i++)
		x = x * 1.0000001;
	dv_srvcost_end(&sc, 1000, &out);
	assert_true(out.measured);
	assert_true(out.ok);
	assert_string_equal(out.source, "auto");
	assert_int_equal(out.pid, getpid());
	assert_int_equal(out.answers, 1000);
	assert_true(out.rss_peak_kb > 0);
	assert_true(out.cpus[0] != '\0');
	if (out.sys_ok) {
		assert_int_equal(out.sys[DV_SYS_SEND], 1000); /* exact: nothing else sends */
		assert_true(out.sys[DV_SYS_ALL] >= 1000);
	} else {
		fprintf(stderr, "system calls not counted: %s\n", out.sys_why);
		assert_true(out.sys_why[0] != '\0'); /* never silent */
	}
	/* a target nobody on this host listens on: nothing measured, nothing said */
	sin->sin_port = 0;
	dv_srvcost_begin(&sc, &ss, false);
	dv_srvcost_end(&sc, 1, &out);
	assert_false(out.measured);
	/* a named PID that is gone: one sentence, not ok */
	dv_srvcost_init(&sc, 0x3ffffff0);
	dv_srvcost_begin(&sc, &ss, false);
	dv_srvcost_end(&sc, 1, &out);
	assert_true(out.measured);
	assert_false(out.ok);
	assert_non_null(strstr(out.error, "is gone"));
	close(srv);
	close(cli);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_delta),
	    cmocka_unit_test(test_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
