/* srvcmd: the server's figures from a command (--server-cost CMD) that prints them as
 * "KEY VALUE" lines, for a server on another host (doc/numbers.md, "--server-cost"). */
#ifndef DV_SRVCMD_H
#define DV_SRVCMD_H

#include <stddef.h>
#include <stdint.h>

#include "base/procstat.h"

#define DV_SRVCMD_TICKS_PER_S 1000000 /* the readings' CPU times are in µs "ticks" */
#define DV_SRVCMD_TIMEOUT_MS  10000   /* the command's time at one edge */
#define DV_SRVCMD_MAX_OUT     65536   /* bytes of its output read at most */

/*
 * Pure: one reading from the command's output. Lines "KEY VALUE"; blank lines, '#'
 * comments and unknown keys are ignored. Required: cpu_user_s, cpu_sys_s (decimal
 * seconds, cumulative). Optional: pid, comm, start_time (any integer that changes when
 * the process is replaced), voluntary_ctxt_switches, involuntary_ctxt_switches, rss_kb,
 * rss_peak_kb, threads, cpus, cpus_allowed (CPU lists, "0-3,6"). CPU times land in
 * ps->utime_ticks/stime_ticks in µs. 0, or -EINVAL with why naming the line or the key.
 */
int dv_srvcmd_parse(const char *text, dv_procstat_t *ps, int32_t *pid, char *why, size_t why_len);

/* Runs cmd with /bin/sh -c (its own process group, bounded in time and output) and parses
 * what it prints. 0, or a negative errno with why filled with one sentence. */
int dv_srvcmd_read(const char *cmd, dv_procstat_t *ps, int32_t *pid, char *why, size_t why_len);

#endif
