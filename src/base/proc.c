/* proc: run one child command in its own process group, bounded in time, stoppable. */
#include "config.h"

#include "base/proc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

extern char **environ;

#define STOP_CHECK_MS 100 /* should_stop is asked at least this often */
#define NO_PIDFD_MS   10  /* wait step when the kernel has no pidfd */

void dv_proc_opts_init(dv_proc_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->stdin_fd = -1;
	o->stdout_fd = -1;
	o->stderr_fd = -1;
}

static int set_fds(posix_spawn_file_actions_t *fa, const dv_proc_opts_t *o)
{
	const int from[3] = {o->stdin_fd, o->stdout_fd, o->stderr_fd};
	int rc;

	for (int to = 0; to < 3; to++) {
		if (from[to] < 0 || from[to] == to)
			continue;
		if ((rc = posix_spawn_file_actions_adddup2(fa, from[to], to)) != 0)
			return -rc;
	}
	if (o->cwd != NULL) {
#ifdef HAVE_POSIX_SPAWN_FILE_ACTIONS_ADDCHDIR_NP
		if ((rc = posix_spawn_file_actions_addchdir_np(fa, o->cwd)) != 0)
			return -rc;
#else
		return -ENOSYS;
#endif
	}
	return 0;
}

/* A new process group, default SIGINT/SIGTERM/SIGPIPE (ours may be caught or ignored), no mask. */
static int set_attr(posix_spawnattr_t *at)
{
	sigset_t def, none;
	int rc;

	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGPIPE);
	if ((rc = posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
	                                           POSIX_SPAWN_SETSIGMASK)) != 0 ||
	    (rc = posix_spawnattr_setpgroup(at, 0)) != 0 ||
	    (rc = posix_spawnattr_setsigdefault(at, &def)) != 0 ||
	    (rc = posix_spawnattr_setsigmask(at, &none)) != 0)
		return -rc;
	return 0;
}

static int spawn(const dv_proc_opts_t *o, pid_t *pid)
{
	char *const sh_argv[] = {"sh", "-c", (char *)o->shell_cmd, NULL};
	char *const *envp = o->envp ? o->envp : environ;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc;

	if ((o->argv == NULL) == (o->shell_cmd == NULL) || (o->argv && o->argv[0] == NULL))
		return -EINVAL;
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return -rc;
	if ((rc = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -rc;
	}
	if ((rc = set_fds(&fa, o)) != 0 || (rc = set_attr(&at)) != 0)
		goto out;
	if (o->shell_cmd != NULL)
		rc = -posix_spawn(pid, "/bin/sh", &fa, &at, sh_argv, envp);
	else
		rc = -posix_spawnp(pid, o->argv[0], &fa, &at, (char *const *)o->argv, envp);
out:
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Has the child exited? Leaves it unreaped, so its pid (the group id) stays ours. */
static bool has_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno != EINTR; /* ECHILD: not ours to wait for; do not wait forever */
	return si.si_pid == pid;
}

typedef enum { W_EXITED, W_DEADLINE, W_STOP } wait_end_t;

/* Wait for the child's exit (unreaped), until deadline_ns (0: none) or should_stop. */
static wait_end_t wait_exit(pid_t pid, int pidfd, uint64_t deadline_ns, const dv_proc_opts_t *o)
{
	for (;;) {
		int ms = -1;

		if (has_exited(pid))
			return W_EXITED;
		if (o != NULL && o->should_stop != NULL && o->should_stop(o->stop_arg))
			return W_STOP;
		if (deadline_ns != 0) {
			uint64_t now = dv_now_ns();
			if (now >= deadline_ns)
				return W_DEADLINE;
			uint64_t left = (deadline_ns - now + DV_NS_PER_MS - 1) / DV_NS_PER_MS;
			ms = left > 1000000 ? 1000000 : (int)left;
		}
		if (o != NULL && o->should_stop != NULL && (ms < 0 || ms > STOP_CHECK_MS))
			ms = STOP_CHECK_MS;
		if (pidfd >= 0) {
			struct pollfd p = {.fd = pidfd, .events = POLLIN};
			(void)poll(&p, 1, ms); /* EINTR: a signal; look again */
		} else {
			if (ms < 0 || ms > NO_PIDFD_MS)
				ms = NO_PIDFD_MS;
			struct timespec ts = {0, (long)ms * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
}

/* SIGTERM the group, give it the grace, SIGKILL it while the leader's pid is still held. */
static void kill_group(pid_t pid, int pidfd, uint64_t grace_ms)
{
	kill(-pid, SIGTERM);
	kill(-pid, SIGCONT);
	(void)wait_exit(pid, pidfd, dv_now_ns() + grace_ms * DV_NS_PER_MS, NULL);
	kill(-pid, SIGKILL);
}

int dv_proc_run(const dv_proc_opts_t *o, dv_proc_result_t *res)
{
	uint64_t start = dv_now_ns(), deadline = 0;
	int status = 0, pidfd, rc;
	wait_end_t how;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if ((rc = spawn(o, &pid)) != 0)
		return rc;
	res->pid = pid;
	pidfd = open_pidfd(pid);
	if (o->timeout_ms != 0)
		deadline = start + o->timeout_ms * DV_NS_PER_MS;
	how = wait_exit(pid, pidfd, deadline, o);
	if (how != W_EXITED)
		kill_group(pid, pidfd, o->grace_ms ? o->grace_ms : DV_PROC_GRACE_MS_DEFAULT);
	while ((rc = (int)waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	rc = rc < 0 ? -errno : 0;
	if (pidfd >= 0)
		close(pidfd);
	if (rc != 0)
		return rc;
	res->elapsed_ns = dv_now_ns() - start;
	if (how == W_DEADLINE)
		res->end = DV_PROC_TIMED_OUT;
	else if (how == W_STOP)
		res->end = DV_PROC_STOPPED;
	else if (WIFSIGNALED(status)) {
		res->end = DV_PROC_SIGNALED;
		res->code = WTERMSIG(status);
	} else {
		res->end = DV_PROC_EXITED;
		res->code = WEXITSTATUS(status);
	}
	return 0;
}
