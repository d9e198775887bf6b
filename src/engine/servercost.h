/* servercost: what the server paid over a pass (its CPU, context switches, memory, CPUs,
 * system calls), read at the pass's edges only. */
#ifndef DV_SERVERCOST_H
#define DV_SERVERCOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "base/procstat.h"
#include "base/syscount.h"
#include "engine/srvstats.h"

#define DV_SRV_NOTE 200 /* bytes of a "why not" sentence */
#define DV_SRV_CPUS 48  /* bytes of a CPU list ("0-3,6") */

/*
 * The server's figures over one pass (doc/numbers.md, "Server"). Flat, so a pass result
 * copies it by value. measured false: nobody was looked at (no server on this host and
 * none named). measured and !ok: error says why, the other figures are zero.
 */
typedef struct dv_server_cost {
	bool measured;
	bool ok;
	char source[8]; /* "auto" (owner of the target's socket), "pid" (--server-pid),
	                 * "cmd" (--server-cost) */
	int32_t pid;
	char comm[32];
	char error[DV_SRV_NOTE];
	double cpu_user_s, cpu_sys_s; /* over the pass, all its threads */
	uint64_t vcsw, ivcsw;         /* context switches over the pass, summed over its threads */
	uint64_t rss_start_kb, rss_end_kb;
	uint64_t rss_peak_kb; /* VmHWM at the end: over the pass when peak_in_pass, else since
	                       * the process started */
	bool peak_in_pass;
	uint32_t threads;               /* at the end */
	char cpus[DV_SRV_CPUS];         /* CPUs its threads were last on, at either edge */
	char cpus_allowed[DV_SRV_CPUS]; /* its affinity */
	char gen_cpus[DV_SRV_CPUS];     /* the generator's threads' CPUs at either edge */
	char gen_allowed[DV_SRV_CPUS];  /* the generator's affinity */
	bool shares_cpu;                /* the two affinities overlap: they can share a CPU */
	bool sys_ok;                    /* system calls counted (else sys_why says why not) */
	uint64_t sys[DV_SYS_FAMILIES];  /* over the pass, by dv_sys_family_t */
	char sys_why[DV_SRV_NOTE];
	uint64_t answers; /* completed + late answers of the pass: the per-answer divisor */
	bool proc;        /* the process was looked at (false: only its counters were read) */
	/* --server-stats: the server's own counters over the pass (engine/srvstats.h) */
	bool stats;    /* asked */
	bool stats_ok; /* read at both edges (else stats_error says why) */
	char stats_kind[12];
	char stats_error[DV_SRV_NOTE];
	uint64_t stats_queries; /* queries the server counted over the pass */
	bool stats_cache;       /* the kind has cache counters: hits and misses below */
	uint64_t stats_hits, stats_misses;
} dv_server_cost_t;

/* Per-answer figures (0 when there was no answer or no figure). */
double dv_server_us_per_answer(const dv_server_cost_t *s);      /* user + sys */
double dv_server_user_us_per_answer(const dv_server_cost_t *s); /* user */
double dv_server_sys_us_per_answer(const dv_server_cost_t *s);  /* sys */
double dv_server_per_answer(const dv_server_cost_t *s, uint64_t count);

/*
 * The state of one target's server across passes (owned by the study's target).
 * Set pid (0: find the owner of the target's socket each pass), syscalls (count them
 * when allowed); the rest is the state of the pass in progress.
 */
typedef struct dv_srvcost {
	pid_t pid;                /* --server-pid; 0 = automatic */
	bool proc;                /* look at the process (false: --server-pid none) */
	bool syscalls;            /* count system calls when the privilege exists */
	dv_srvstats_cfg_t *stats; /* --server-stats (owned), NULL = none */
	char *cmd;                /* --server-cost (owned): its figures instead of /proc's */
	/* during a pass */
	pid_t cur;
	dv_server_cost_t out;
	dv_procstat_t p0;
	dv_cpumask_t gen0;
	dv_syscount_t sc;
	bool sys_open;
	uint64_t sys0[DV_SYS_FAMILIES];
	bool warned_mount;
	dv_srvstats_reading_t st0; /* the counters at the start */
	bool st0_ok;
} dv_srvcost_t;

/* pid > 0: that process; 0: the owner of the target's socket; < 0: no process (none). */
void dv_srvcost_init(dv_srvcost_t *sc, pid_t pid);
/* Frees what sc owns (its stats configuration), not sc itself. */
void dv_srvcost_free(dv_srvcost_t *sc);

/*
 * The pass's start edge (after the workers are started, before they are let go): reads
 * the server's own counters (--server-stats) first, then finds the server (server: the
 * target address; tcp: TCP listeners, else UDP sockets, DoQ's too), opens its system-call
 * counters and takes the first reading. Never fails: a server that cannot be read is recorded in
 * the result's error (stats_error for its counters).
 */
void dv_srvcost_begin(dv_srvcost_t *sc, const struct sockaddr_storage *server, bool tcp);
/* The end edge (after the workers are joined): the second reading, the deltas into *out;
 * the process is read before the control tool runs, so its work is outside the window. */
void dv_srvcost_end(dv_srvcost_t *sc, uint64_t answers, dv_server_cost_t *out);

/* Pure: the deltas of two readings into out's CPU, switch and memory figures. */
void dv_server_cost_delta(const dv_procstat_t *a, const dv_procstat_t *b, long ticks_per_s,
                          dv_server_cost_t *out);

/* Pure: the counters' deltas of two readings into out's stats figures (ok set). */
void dv_server_stats_delta(const dv_srvstats_reading_t *a, const dv_srvstats_reading_t *b,
                           dv_server_cost_t *out);

#endif
