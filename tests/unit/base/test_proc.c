/* test_proc: the process runner: exit status and signal passed through, a timeout or a stop
 * kills the whole process group (grandchildren too), a missing program is -ENOENT. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/proc.h"
#include "base/util.h"

/* Orphaned grandchildren come back to this test (a subreaper): it reaps them, so a killed
 * one disappears from the process table whatever the container's init does. */
static int setup(void **state)
{
	(void)state;
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -1;
}

/* True once no process is left in group pgid (reaping what comes back to us); bounded. */
static bool group_gone(pid_t pgid, int max_ms)
{
	for (int ms = 0; ms <= max_ms; ms += 10) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (kill(-pgid, 0) != 0 && errno == ESRCH)
			return true;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return false;
}

/* A command that starts two background sleeps (their pids into pidfile) and waits for them. */
static void grandchildren_cmd(char *cmd, size_t cap, const char *pidfile, bool ignore_term)
{
	snprintf(cmd, cap, "%ssleep 100 & echo $! > %s; sleep 100 & echo $! >> %s; wait",
	         ignore_term ? "trap '' TERM; " : "", pidfile, pidfile);
}

static void read_pids(const char *pidfile, pid_t pids[2])
{
	FILE *fp = fopen(pidfile, "r");
	int a = 0, b = 0;

	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%d %d", &a, &b), 2);
	fclose(fp);
	pids[0] = a;
	pids[1] = b;
}

static void assert_all_gone(const dv_proc_result_t *r, const char *pidfile)
{
	pid_t g[2];

	assert_true(group_gone(r->pid, 3000));
	read_pids(pidfile, g);
	assert_true(g[0] > 0 && g[1] > 0 && g[0] != g[1]);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(kill(g[i], 0), -1);
		assert_int_equal(errno, ESRCH);
	}
}

static void test_exit_status(void **state)
{
	const char *const argv[] = {"sh", "-c", "exit 0", NULL};
	dv_proc_opts_t o;
	dv_proc_result_t r;
	(void)state;

	dv_proc_opts_init(&o);
	o.shell_cmd = "exit 3";
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_EXITED);
	assert_int_equal(r.code, 3);
	assert_true(r.pid > 0);

	dv_proc_opts_init(&o);
	o.argv = argv;
	o.timeout_ms = 10000;
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_EXITED);
	assert_int_equal(r.code, 0);

	/* A signal from elsewhere (here: itself) is SIGNALED, not a timeout. */
	dv_proc_opts_init(&o);
	o.shell_cmd = "kill -USR1 $$";
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_SIGNALED);
	assert_int_equal(r.code, SIGUSR1);
}

/* Its own group: the child's pgid is its pid. */
static void test_own_group(void **state)
{
	char path[] = "/tmp/dv-test-proc-XXXXXX";
	char buf[64] = {0};
	dv_proc_opts_t o;
	dv_proc_result_t r;
	int fd = mkstemp(path);
	(void)state;

	assert_true(fd >= 0);
	dv_proc_opts_init(&o);
	o.argv = (const char *const[]){"sh", "-c", "ps -o pgid= -p $$ || echo none", NULL};
	o.stdout_fd = fd;
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_EXITED);
	assert_int_equal(pread(fd, buf, sizeof(buf) - 1, 0) > 0, 1);
	if (strncmp(buf, "none", 4) != 0) /* ps may be missing */
		assert_int_equal(atoi(buf), r.pid);
	close(fd);
	unlink(path);
}

static void test_timeout_kills_grandchildren(void **state)
{
	char pidfile[] = "/tmp/dv-test-proc-XXXXXX", cmd[256];
	dv_proc_opts_t o;
	dv_proc_result_t r;
	int fd = mkstemp(pidfile);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	grandchildren_cmd(cmd, sizeof(cmd), pidfile, false);
	dv_proc_opts_init(&o);
	o.shell_cmd = cmd;
	o.timeout_ms = 300;
	o.grace_ms = 5000;
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_TIMED_OUT);
	assert_true(r.elapsed_ns >= 300 * DV_NS_PER_MS);
	assert_true(r.elapsed_ns < 3000 * DV_NS_PER_MS); /* SIGTERM was enough: no grace */
	assert_all_gone(&r, pidfile);
	unlink(pidfile);
}

/* A group that ignores SIGTERM gets the SIGKILL after the grace. */
static void test_timeout_sigkill_after_grace(void **state)
{
	char pidfile[] = "/tmp/dv-test-proc-XXXXXX", cmd[256];
	dv_proc_opts_t o;
	dv_proc_result_t r;
	int fd = mkstemp(pidfile);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	grandchildren_cmd(cmd, sizeof(cmd), pidfile, true);
	dv_proc_opts_init(&o);
	o.shell_cmd = cmd;
	o.timeout_ms = 300;
	o.grace_ms = 300;
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_TIMED_OUT);
	assert_true(r.elapsed_ns >= 600 * DV_NS_PER_MS);
	assert_true(r.elapsed_ns < 5000 * DV_NS_PER_MS);
	assert_all_gone(&r, pidfile);
	unlink(pidfile);
}

static int stop_after_3(void *arg)
{
	int *calls = arg;
	return ++*calls >= 3;
}

static void test_stop_hook_kills_group(void **state)
{
	char pidfile[] = "/tmp/dv-test-proc-XXXXXX", cmd[256];
	dv_proc_opts_t o;
	dv_proc_result_t r;
	int calls = 0, fd = mkstemp(pidfile);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	grandchildren_cmd(cmd, sizeof(cmd), pidfile, false);
	dv_proc_opts_init(&o);
	o.shell_cmd = cmd;
	o.timeout_ms = 60000;
	o.should_stop = stop_after_3;
	o.stop_arg = &calls;
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_STOPPED);
	assert_int_equal(calls, 3);
	assert_true(r.elapsed_ns < 5000 * DV_NS_PER_MS);
	assert_all_gone(&r, pidfile);
	unlink(pidfile);
}

static void test_missing_program(void **state)
{
	dv_proc_opts_t o;
	dv_proc_result_t r;
	(void)state;

	dv_proc_opts_init(&o);
	o.argv = (const char *const[]){"/nonexistent/dv-prog", NULL};
	assert_int_equal(dv_proc_run(&o, &r), -ENOENT);
	o.argv = (const char *const[]){"dv-no-such-program-in-path", NULL};
	assert_int_equal(dv_proc_run(&o, &r), -ENOENT);
	/* Through the shell: the shell's 127. */
	dv_proc_opts_init(&o);
	o.shell_cmd = "/nonexistent/dv-prog 2>/dev/null";
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_EXITED);
	assert_int_equal(r.code, 127);
	/* Neither or both of argv and shell_cmd. */
	dv_proc_opts_init(&o);
	assert_int_equal(dv_proc_run(&o, &r), -EINVAL);
	o.shell_cmd = "true";
	o.argv = (const char *const[]){"true", NULL};
	assert_int_equal(dv_proc_run(&o, &r), -EINVAL);
}

/* stdin/stdout redirected, working directory and environment given. */
static void test_fds_cwd_env(void **state)
{
	char in_path[] = "/tmp/dv-test-proc-XXXXXX", out_path[] = "/tmp/dv-test-proc-XXXXXX";
	char *const envp[] = {"DV_X=42", NULL};
	char buf[128] = {0};
	dv_proc_opts_t o;
	dv_proc_result_t r;
	int in = mkstemp(in_path), out = mkstemp(out_path);
	(void)state;

	assert_true(in >= 0 && out >= 0);
	assert_int_equal(write(in, "hi\n", 3), 3);
	assert_int_equal(lseek(in, 0, SEEK_SET), 0);
	dv_proc_opts_init(&o);
	o.shell_cmd = "read l; echo \"$l $DV_X $(pwd)\"";
	o.stdin_fd = in;
	o.stdout_fd = out;
	o.envp = envp;
	o.cwd = "/";
	assert_int_equal(dv_proc_run(&o, &r), 0);
	assert_int_equal(r.end, DV_PROC_EXITED);
	assert_int_equal(r.code, 0);
	assert_true(pread(out, buf, sizeof(buf) - 1, 0) > 0);
	assert_string_equal(buf, "hi 42 /\n");
	close(in);
	close(out);
	unlink(in_path);
	unlink(out_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_status),
	    cmocka_unit_test(test_own_group),
	    cmocka_unit_test(test_timeout_kills_grandchildren),
	    cmocka_unit_test(test_timeout_sigkill_after_grace),
	    cmocka_unit_test(test_stop_hook_kills_group),
	    cmocka_unit_test(test_missing_program),
	    cmocka_unit_test(test_fds_cwd_env),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
