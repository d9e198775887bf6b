/* procstat: another process's CPU time, context switches, memory and CPUs, read from /proc. */
#ifndef DV_PROCSTAT_H
#define DV_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DV_CPUMASK_WORDS 16 /* CPUs 0..1023 */

/* A set of CPU numbers (bit n of w[n / 64]). */
typedef struct dv_cpumask {
	uint64_t w[DV_CPUMASK_WORDS];
} dv_cpumask_t;

void dv_cpumask_set(dv_cpumask_t *m, unsigned cpu); /* CPUs past the mask are ignored */
bool dv_cpumask_empty(const dv_cpumask_t *m);
/* a &= b; returns whether anything is left */
bool dv_cpumask_and(dv_cpumask_t *a, const dv_cpumask_t *b);
void dv_cpumask_or(dv_cpumask_t *a, const dv_cpumask_t *b);
/* "0-3,6" (the kernel's list format); "" for an empty set. Cut to len (always ended). */
void dv_cpumask_format(const dv_cpumask_t *m, char *buf, size_t len);
/* The kernel's list format ("0-3,6", "1"): 0 or -EINVAL. */
int dv_cpumask_parse(const char *text, dv_cpumask_t *m);

/*
 * One reading of a process (all its threads) at one instant.
 * CPU time is in clock ticks (sysconf(_SC_CLK_TCK)) as /proc/PID/stat gives it: it
 * includes threads that have exited. Context switches are summed over the threads
 * alive at the reading (/proc/PID/task/T/status): a thread that exits takes its own
 * with it. Memory in kB from /proc/PID/status.
 */
typedef struct dv_procstat {
	char comm[32];        /* the process's name (/proc/PID/stat field 2) */
	uint64_t utime_ticks; /* field 14 */
	uint64_t stime_ticks; /* field 15 */
	uint64_t start_ticks; /* field 22: start time since boot; a reused PID differs */
	uint64_t vcsw, ivcsw; /* voluntary_ctxt_switches, nonvoluntary_ctxt_switches */
	uint64_t rss_kb;      /* VmRSS */
	uint64_t hwm_kb;      /* VmHWM: peak RSS since start (or since clear_refs "5") */
	uint32_t threads;     /* tasks read */
	dv_cpumask_t ran;     /* the CPU each thread last ran on (task stat field 39) */
	dv_cpumask_t allowed; /* Cpus_allowed_list of the process */
} dv_procstat_t;

/*
 * Parse one /proc/PID/stat (or task stat) line: comm, utime, stime, start time and
 * processor (field 39). 0 or -EINVAL when it is not such a line. Pure.
 */
int dv_procstat_parse_stat(const char *line, char comm[32], uint64_t *utime, uint64_t *stime,
                           uint64_t *start, int *processor);
/*
 * Add what a /proc/PID/status text holds to ps: context switches (added), VmRSS, VmHWM
 * and Cpus_allowed_list (set when with_memory). Unknown lines are skipped. Pure.
 */
void dv_procstat_parse_status(const char *text, bool with_memory, dv_procstat_t *ps);

/*
 * Read process pid under root (normally "/proc"; tests pass a copy). 0, or -ESRCH
 * when the process is gone, -EACCES when it cannot be read, -EINVAL when its files do
 * not parse.
 */
int dv_procstat_read(const char *root, pid_t pid, dv_procstat_t *ps);

/*
 * Reset the process's peak RSS to its current RSS (writes "5" to /proc/PID/clear_refs,
 * which needs the right to write there: its owner or root). 0 or a negative errno.
 */
int dv_procstat_reset_peak(pid_t pid);

/*
 * The process holding one of the socket inodes (engine/sockstat.c finds them), found by
 * reading every /proc/PID/fd/ link ("socket:[INODE]") under root. Processes whose fd
 * folder cannot be read are skipped (count in *unreadable, may be NULL). Returns the
 * lowest such PID, 0 when none holds them (or n is 0).
 */
/* Does process pid hold one of the inodes: 1, 0, or -1 when its fd folder cannot be read. */
int dv_procstat_holds(const char *root, pid_t pid, const uint64_t *inodes, size_t n);

pid_t dv_procstat_socket_owner(const char *root, const uint64_t *inodes, size_t n,
                               unsigned *unreadable);

#endif
