/* syscount: another process's system calls counted in the kernel (perf tracepoint
 * raw_syscalls:sys_enter), in total and by family, with no record per call. */
#ifndef DV_SYSCOUNT_H
#define DV_SYSCOUNT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The families counted; DV_SYS_ALL is every system call (the others are subsets). */
typedef enum dv_sys_family {
	DV_SYS_ALL = 0,
	DV_SYS_RECV, /* recvfrom, recvmsg, recvmmsg */
	DV_SYS_SEND, /* sendto, sendmsg, sendmmsg */
	DV_SYS_POLL, /* poll, ppoll, select, pselect6, epoll_wait, epoll_pwait, epoll_pwait2 */
	DV_SYS_RW,   /* read, write, readv, writev */
	DV_SYS_FAMILIES
} dv_sys_family_t;

const char *dv_sys_family_name(dv_sys_family_t f); /* "all", "recv", "send", "poll", "rw" */

/*
 * One counter per family per thread of the process (perf_event_open with pid = the
 * thread, cpu = -1, inherit = 1, so threads it starts later are counted through their
 * parent's counter). The counters run from open to close; read them at the edges of a
 * window and subtract.
 */
typedef struct dv_syscount {
	int *fds; /* DV_SYS_FAMILIES per thread; owned */
	size_t n; /* fds open */
} dv_syscount_t;

/*
 * Open the counters for every thread of pid. On failure returns a negative errno and
 * writes why to why (one sentence: "tracefs is not mounted", "perf_event_open: ... (needs
 * root or CAP_PERFMON, or kernel.perf_event_paranoid <= 1; it is 2)"). As root, mounts
 * tracefs on /sys/kernel/tracing when no tracefs is mounted (said in *mounted).
 */
int dv_syscount_open(dv_syscount_t *sc, pid_t pid, int *mounted, char *why, size_t why_len);
/* The counts now (since open), summed over the threads. 0 or a negative errno. */
int dv_syscount_read(const dv_syscount_t *sc, uint64_t out[DV_SYS_FAMILIES]);
void dv_syscount_close(dv_syscount_t *sc); /* NULL-safe; may be called twice */

/* The tracepoint filter of a family ("id == 45 || id == 47 || ..."), "" for DV_SYS_ALL. */
void dv_sys_filter(dv_sys_family_t f, char *buf, size_t len);

#endif
