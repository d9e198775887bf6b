/* proc: run one child command in its own process group, bounded in time, stoppable; the
 * whole group is killed on timeout or stop. */
#ifndef DV_PROC_H
#define DV_PROC_H

#include <stdint.h>
#include <sys/types.h>

#define DV_PROC_GRACE_MS_DEFAULT 2000 /* SIGTERM to SIGKILL when grace_ms is 0 */

typedef struct dv_proc_opts {
	/* What to run: exactly one of the two. argv[0] is looked up in PATH (posix_spawnp);
	 * shell_cmd runs as `/bin/sh -c shell_cmd`. Both are only read. */
	const char *const *argv;
	const char *shell_cmd;
	char *const *envp; /* the child's environment; NULL: ours (environ) */
	const char *cwd;   /* the child's working directory; NULL: ours */
	/* Descriptors made the child's 0, 1 and 2; -1 (or the same number) inherits ours.
	 * The caller keeps ownership and closes them after dv_proc_run returns. */
	int stdin_fd, stdout_fd, stderr_fd;
	uint64_t timeout_ms; /* 0: no timeout */
	uint64_t grace_ms; /* after the SIGTERM, before the SIGKILL; 0: DV_PROC_GRACE_MS_DEFAULT */
	/* Optional: asked while waiting (when the wait is interrupted by a signal, and at least
	 * every 100 ms); a non-zero answer kills the group as a timeout does. Lets a SIGINT
	 * handler that sets a flag end the child instead of waiting for it. */
	int (*should_stop)(void *arg);
	void *stop_arg;
} dv_proc_opts_t;

/* Fills the options with: nothing to run, fds inherited, no timeout, no stop hook. */
void dv_proc_opts_init(dv_proc_opts_t *o);

typedef enum dv_proc_end {
	DV_PROC_EXITED,    /* exited on its own: code is the exit status (0..255) */
	DV_PROC_SIGNALED,  /* killed by a signal we did not send: code is the signal number */
	DV_PROC_TIMED_OUT, /* timeout_ms passed: the group was killed; code is 0 */
	DV_PROC_STOPPED,   /* should_stop answered non-zero: the group was killed; code is 0 */
} dv_proc_end_t;

typedef struct dv_proc_result {
	dv_proc_end_t end;
	int code;
	pid_t pid;           /* the child's pid, also its process group id */
	uint64_t elapsed_ns; /* from the start to the reaping of the child */
} dv_proc_result_t;

/*
 * Start the command with posix_spawn in a new process group (its pgid is its pid), with
 * SIGINT, SIGTERM and SIGPIPE at their default action and no signal blocked, and wait for
 * it without busy polling (a pidfd on Linux >= 5.3; 10 ms sleeps on older kernels).
 * On timeout or stop: SIGTERM (and SIGCONT, for stopped members) to the whole group, then
 * SIGKILL to the whole group once the child has exited or grace_ms has passed, so the
 * command's children and grandchildren (in its group) do not outlive it. The child is
 * always reaped before this returns 0. A command that exits on its own is not followed
 * further: processes it left running in the background are not touched.
 *
 * Returns 0 when the command ran (whatever its end, see res), or a negative errno when it
 * could not start: -ENOENT for a missing program, -EACCES when it is not executable,
 * -EINVAL for options naming neither or both of argv and shell_cmd, -ENOSYS when cwd is
 * asked and the C library cannot change directory in posix_spawn, -ECHILD when the child
 * was reaped elsewhere (SIGCHLD ignored: do not). The child of a
 * `sh -c` whose command is missing exits 127, as the shell does.
 * Blocking; call from one thread at a time per child (it does not touch SIGCHLD).
 */
int dv_proc_run(const dv_proc_opts_t *o, dv_proc_result_t *res);

#endif
