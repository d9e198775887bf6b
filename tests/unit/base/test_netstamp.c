/* test_netstamp: after dv_netstamp_wait, a socket that asked for software receive stamps
 * before it gets one on every datagram, also for a caller that never yields its CPU. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/netstamp.h"
#include "base/util.h"

#define AFTER 200 /* datagrams that must all come stamped once the wait returned */

/* n tries on fd: how many came stamped (a negative errno fails). */
static int stamped_of(int fd, int n)
{
	int i, rc, s = 0;

	for (i = 0; i < n; i++) {
		rc = dv_netstamp_try(fd);
		if (rc < 0)
			return rc;
		s += rc;
	}
	return s;
}

/* The engine's order: its sockets ask, the wait, the load. */
static void test_wait_then_stamped(void **state)
{
	unsigned tries = 0;
	int fd = dv_netstamp_socket();

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(dv_netstamp_wait(DV_NETSTAMP_WAIT_MS, &tries), 0);
	assert_true(tries >= 1);
	assert_int_equal(stamped_of(fd, AFTER), AFTER);
	close(fd);
}

/*
 * The same in a child at SCHED_FIFO on one CPU, as `chrt -f` runs the benches: the work
 * item that turns the stamps on is queued on that CPU and cannot run while the child
 * busies it, only when the wait sleeps. Before the wait the child sends for 5 ms without
 * yielding: where no socket of the host wanted stamps before, those datagrams come
 * unstamped (printed, not asserted: another process may hold the stamps on already).
 */
static int pinned_child(void)
{
	struct sched_param sp = {.sched_priority = 1};
	uint64_t end;
	int fd, before = 0, unstamped = 0, rc;
	unsigned tries = 0;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0 ||
	    sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
		return 77;
	fd = dv_netstamp_socket();
	if (fd < 0)
		return 10;
	for (end = dv_now_ns() + 5 * DV_NS_PER_MS; dv_now_ns() < end; before++) {
		rc = dv_netstamp_try(fd);
		if (rc < 0)
			return 11;
		unstamped += rc == 0;
	}
	if (dv_netstamp_wait(DV_NETSTAMP_WAIT_MS, &tries) != 0)
		return 12;
	printf("# SCHED_FIFO child: %d of %d datagrams unstamped before the wait; the wait took "
	       "%u tries\n",
	       unstamped, before, tries);
	fflush(stdout);
	if (stamped_of(fd, AFTER) != AFTER)
		return 13;
	close(fd);
	return 0;
}

static void test_wait_realtime_pinned(void **state)
{
	int status = 0;
	pid_t pid;

	(void)state;
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(pinned_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77 && geteuid() != 0)
		skip(); /* SCHED_FIFO needs root (CAP_SYS_NICE) */
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_try_errors(void **state)
{
	(void)state;
	assert_int_equal(dv_netstamp_try(-1), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wait_realtime_pinned), /* first: no socket of ours asked yet */
	    cmocka_unit_test(test_wait_then_stamped),
	    cmocka_unit_test(test_try_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
