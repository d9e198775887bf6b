/* test_procstat: /proc stat and status parsing, CPU lists, and a reading of this process. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/procstat.h"

/* A real line (kernel 6.x, 52 fields) whose comm holds a space and parentheses. */
static const char stat_line[] =
    "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1234 0 5 0 731 229 0 0 20 0 3 0 987654 "
    "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 4096 16384 0 0 0 17 1 0 0 0 0 0 0 0 0 "
    "0 0 0 0 0\n";

static void test_parse_stat(void **state)
{
	char comm[32];
	uint64_t u, s, st;
	int cpu;

	(void)state;
	assert_int_equal(dv_procstat_parse_stat(stat_line, comm, &u, &s, &st, &cpu), 0);
	assert_string_equal(comm, "a (b) c");
	assert_int_equal(u, 731);
	assert_int_equal(s, 229);
	assert_int_equal(st, 987654);
	assert_int_equal(cpu, 1);
	assert_int_equal(dv_procstat_parse_stat("4242 (x) S 1 2", comm, &u, &s, &st, &cpu),
	                 -EINVAL);
	assert_int_equal(dv_procstat_parse_stat("garbage", comm, &u, &s, &st, &cpu), -EINVAL);
}

static void test_parse_status(void **state)
{
	static const char status[] = "Name:\tunbound\nVmHWM:\t   20480 kB\nVmRSS:\t   16384 kB\n"
	                             "Threads:\t1\nCpus_allowed_list:\t0-1,3\n"
	                             "voluntary_ctxt_switches:\t100\n"
	                             "nonvoluntary_ctxt_switches:\t7\n";
	dv_procstat_t ps;
	char list[32];

	(void)state;
	memset(&ps, 0, sizeof(ps));
	dv_procstat_parse_status(status, true, &ps);
	dv_procstat_parse_status(status, false, &ps); /* a second thread: switches add */
	assert_int_equal(ps.vcsw, 200);
	assert_int_equal(ps.ivcsw, 14);
	assert_int_equal(ps.rss_kb, 16384);
	assert_int_equal(ps.hwm_kb, 20480);
	dv_cpumask_format(&ps.allowed, list, sizeof(list));
	assert_string_equal(list, "0-1,3");
}

static void test_cpumask(void **state)
{
	dv_cpumask_t a, b;
	char list[64];

	(void)state;
	assert_int_equal(dv_cpumask_parse("0,2-4,63-65,1023", &a), 0);
	dv_cpumask_format(&a, list, sizeof(list));
	assert_string_equal(list, "0,2-4,63-65,1023");
	assert_int_equal(dv_cpumask_parse("5", &b), 0);
	assert_false(dv_cpumask_and(&b, &a));
	assert_true(dv_cpumask_empty(&b));
	assert_int_equal(dv_cpumask_parse("4-6", &b), 0);
	assert_true(dv_cpumask_and(&b, &a));
	dv_cpumask_format(&b, list, sizeof(list));
	assert_string_equal(list, "4");
	assert_int_equal(dv_cpumask_parse("3-1", &b), -EINVAL);
	assert_int_equal(dv_cpumask_parse("x", &b), -EINVAL);
	assert_int_equal(dv_cpumask_parse("", &b), 0);
	assert_true(dv_cpumask_empty(&b));
}

/* This process: its own reading, its own socket found by inode, a gone PID. */
static void test_read_self(void **state)
{
	dv_procstat_t ps;
	char link[64], path[64];
	unsigned long long ino;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	ssize_t n;
	uint64_t inode;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(dv_procstat_read("/proc", getpid(), &ps), 0);
	assert_true(ps.threads >= 1);
	assert_true(ps.rss_kb > 0);
	assert_true(ps.hwm_kb >= ps.rss_kb);
	assert_false(dv_cpumask_empty(&ps.ran));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_int_equal(sscanf(link, "socket:[%llu]", &ino), 1);
	inode = ino;
	assert_int_equal(dv_procstat_socket_owner("/proc", &inode, 1, NULL), getpid());
	inode = 1; /* no socket has inode 1 */
	assert_int_equal(dv_procstat_socket_owner("/proc", &inode, 1, NULL), 0);
	assert_int_equal(dv_procstat_read("/proc", 0x3ffffff0, &ps), -ESRCH);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_stat),
	    cmocka_unit_test(test_parse_status),
	    cmocka_unit_test(test_cpumask),
	    cmocka_unit_test(test_read_self),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
