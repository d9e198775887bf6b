/* test_capture: a command's output read into memory: whole, cut at the cap (the writer does
 * not block us), a hang killed at the timeout, an exit status passed on, a background child
 * holding the pipe open does not hold us, a missing program is -ENOENT. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "base/capture.h"

static void test_output(void **state)
{
	const char *const argv[] = {"sh", "-c", "printf 'a=1\\nb=2\\n'; echo err >&2", NULL};
	dv_capture_t c;

	(void)state;
	assert_int_equal(dv_capture_run(argv, 1024, 5000, &c), 0);
	assert_int_equal(c.res.end, DV_PROC_EXITED);
	assert_int_equal(c.res.code, 0);
	assert_string_equal(c.out, "a=1\nb=2\n"); /* standard error is not kept */
	assert_int_equal(c.len, 8);
	assert_false(c.truncated);
	free(c.out);
}

static void test_cap(void **state)
{
	/* an endless writer: cut at the cap, it gets EPIPE/SIGPIPE and ends, no timeout */
	const char *const argv[] = {"sh", "-c", "while :; do echo xxxxxxxxxxxxxxx; done", NULL};
	dv_capture_t c;

	(void)state;
	assert_int_equal(dv_capture_run(argv, 100000, 60000, &c), 0);
	assert_true(c.truncated);
	assert_int_equal(c.len, 100000);
	assert_int_equal(strlen(c.out), 100000);
	assert_int_not_equal(c.res.end, DV_PROC_TIMED_OUT);
	free(c.out);
}

static void test_timeout_and_status(void **state)
{
	const char *const hang[] = {"sh", "-c", "echo partial; exec sleep 30", NULL};
	const char *const fail[] = {"sh", "-c", "echo refused; exit 1", NULL};
	const char *const bg[] = {"sh", "-c", "sleep 30 & echo $!", NULL};
	const char *const none[] = {"no-such-program-dv", NULL};
	dv_capture_t c;
	pid_t bg_pid;

	(void)state;
	assert_int_equal(dv_capture_run(hang, 1024, 200, &c), 0);
	assert_int_equal(c.res.end, DV_PROC_TIMED_OUT);
	assert_string_equal(c.out, "partial\n");
	free(c.out);
	assert_int_equal(dv_capture_run(fail, 1024, 5000, &c), 0);
	assert_int_equal(c.res.end, DV_PROC_EXITED);
	assert_int_equal(c.res.code, 1);
	assert_string_equal(c.out, "refused\n");
	free(c.out);
	/* the background sleep keeps the pipe open: we return when sh exits, with the sleep
	 * still running (not when it ends and closes the pipe) */
	assert_int_equal(dv_capture_run(bg, 1024, 60000, &c), 0);
	bg_pid = (pid_t)atol(c.out);
	assert_true(bg_pid > 0);
	assert_int_equal(kill(bg_pid, 0), 0);
	kill(bg_pid, SIGKILL);
	free(c.out);
	assert_int_equal(dv_capture_run(none, 1024, 5000, &c), -ENOENT);
	assert_null(c.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_output),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_timeout_and_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
