/* dist: a study run by one process or by the ranks of an MPI job (the distribution interface). */
#ifndef DV_DIST_H
#define DV_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/run.h"
#include "input/querylist.h"
#include "base/util.h"

/*
 * One rank's facts about one pass (doc/numbers.md, "Per-rank figures"). Each rank
 * fills its own; rank 0 gets all of them with the merged result.
 */
typedef struct dv_rank_pass {
	uint32_t rank;
	char host[64];
	bool reported; /* rank 0: this rank's result arrived (false = lost rank, partial run) */
	int error;     /* 0, or negative: the pass could not run on this rank */
	char error_msg[200];
	uint64_t sent, completed, lost;
	uint64_t kernel_drops;   /* UDP receive + send buffer errors of its host (/proc/net/snmp) */
	double qps;              /* its completed / its run time */
	double cpu_per_query_us; /* its user + system CPU / its completed, microseconds */
	double busy;             /* its CPU / (elapsed x threads): 1 = every thread always busy */
	double clock_offset_s;   /* its start wall clock - rank 0's (they start on a barrier) */
	bool generator_bound;    /* busy >= DV_DIST_BUSY_BOUND */
	bool clock_off;          /* |clock_offset_s| > DV_DIST_CLOCK_OFF_S */
} dv_rank_pass_t;

#define DV_DIST_BUSY_BOUND  0.9  /* CPU share above which a generator limits the rate */
#define DV_DIST_CLOCK_OFF_S 0.05 /* start skew above which a rank's clock is called off */

typedef struct dv_dist dv_dist_t;

/*
 * The operations a study needs from its distribution. Only the calling (main)
 * thread calls them; every rank calls the same ones in the same order. Each
 * blocking step is bounded by timeout_ns and returns -ETIMEDOUT with err naming
 * the ranks and hosts that did not arrive, never hangs.
 */
struct dv_dist {
	int rank, size;
	char **hosts;      /* size host names, hosts[rank] is ours (owned) */
	bool lead_stopped; /* rank 0 told this rank to stop (after rank 0's own failure) */
	/*
	 * Rank 0's *go (0 = run the next pass, else stop with that code) is given to
	 * every rank, then all wait for each other: the pass starts together.
	 */
	int (*start_pass)(dv_dist_t *d, int *go, uint64_t timeout_ns, dv_err_t *err);
	/* len bytes of buf from rank 0 to every rank. */
	int (*bcast)(dv_dist_t *d, void *buf, size_t len, uint64_t timeout_ns, dv_err_t *err);
	/*
	 * Every rank's res (and its own pass status own_rc/own_msg) to rank 0, which
	 * merges them exactly into its res (counters and histogram added, the pass
	 * lasting as long as the longest rank) and fills ranks[0 .. size). A rank that
	 * does not report within timeout_ns is left out (ranks[r].reported false) and
	 * named in err with -ETIMEDOUT; a rank whose pass failed is named in err with
	 * -EIO; the merge of the others is kept either way. Other ranks: 0 once sent.
	 */
	int (*reduce_pass)(dv_dist_t *d, dv_pass_result_t *res, int own_rc, const char *own_msg,
	                   dv_rank_pass_t *ranks, uint64_t timeout_ns, dv_err_t *err);
	/* End every rank now with this exit status (after a lost rank); never returns for MPI. */
	void (*abort)(dv_dist_t *d, int status);
	/*
	 * The last call (MPI_Finalize); frees d's own data. status is this process's exit
	 * status: a finalize that waits longer than DV_DIST_FINALIZE_S (for a rank lost
	 * mid-run) ends the process with it.
	 */
	void (*finish)(dv_dist_t *d, int status);
	void *impl;
};

#define DV_DIST_FINALIZE_S 10 /* bound on MPI_Finalize, s (doc/scale-out.md) */

/* The one-process distribution: rank 0 of 1; every operation is immediate. Always built. */
void dv_dist_single(dv_dist_t *d);

/*
 * Join the MPI job this process was started in (MPI_Init_thread, FUNNELED) when
 * the build has MPI (configure --with-mpi) and the process was started by
 * mpirun/mpiexec (OMPI_COMM_WORLD_SIZE in the environment); otherwise the
 * single-process distribution. Returns 0, or a negative code with err filled.
 */
int dv_dist_init(dv_dist_t *d, int *argc, char ***argv, dv_err_t *err);

/*
 * Rank `rank` of `size`'s share of a run configured for the whole run (the
 * split of doc/scale-out.md): -c, -q and -T divided like dv_run_split divides
 * them over threads (the first remainder ranks get one more), -Q divided
 * evenly, -x port ranges kept apart. -T below the number of ranks gives each
 * rank one thread. Returns 0, or -EINVAL with err filled when -c or -q is
 * below the number of ranks (a rank cannot run without a socket or a query).
 */
int dv_dist_share_config(dv_run_config_t *cfg, int rank, int size, dv_err_t *err);

/*
 * Keep in ql only rank `rank` of `size`'s share of the list: queries rank,
 * rank + size, rank + 2 size, ... (order kept), so the ranks together hold each
 * query exactly once. Returns 0, -ENOMEM, or -EINVAL (err filled) when the list
 * has fewer queries than ranks.
 */
int dv_dist_shard_list(dv_querylist_t *ql, int rank, int size, dv_err_t *err);

/* This rank's facts about its own pass (host given), before any merge. */
void dv_rank_pass_fill(dv_rank_pass_t *rp, int rank, const char *host, const dv_pass_result_t *res);

/* Warnings of rank 0 about ranks[0 .. n): generator-bound, clock off, failed, lost. */
void dv_rank_pass_classify(dv_rank_pass_t *ranks, size_t n);

/*
 * into += the intervals of from, matched by index (both started on the same
 * barrier and use the same -S; an interval one lacks counts as empty): sent,
 * completed, lost, in flight and queries/s added. When both keep their
 * histogram (dv_interval_t.lat_kept) the histograms are added bucket by bucket
 * and p50/p99 are those of the sum, exactly, and the latency mean is weighted
 * by the answers timed; otherwise p50/p99 become the larger of the two (an
 * upper bound), the mean is weighted by completed, and the result keeps no
 * histogram. The merged cells stay within DV_RUN_MAX_LAT_CELLS per pass (an
 * interval past it keeps none). Returns 0 or -ENOMEM (into unchanged).
 */
int dv_dist_merge_intervals(dv_pass_result_t *into, const dv_pass_result_t *from);

/*
 * into += from, exactly: the stats merged (dv_stats_merge), the times the
 * longest, the CPU and /proc/net/snmp deltas added, sockets/threads/queries in
 * flight added, intervals merged, qps recomputed (completed / run time), the
 * earliest start, interrupted if either was; the clock kept when both had it (else
 * mixed, or not recorded when either's was not), the sample rate when both had it.
 */
int dv_dist_merge_pass(dv_pass_result_t *into, const dv_pass_result_t *from);

/*
 * --start-at TIME: "UNIXSECONDS[.FRACTION]" or "YYYY-MM-DDTHH:MM:SS[.FRACTION]Z"
 * (UTC) -> wall-clock ns. Returns 0 or -EINVAL with err filled.
 */
int dv_dist_parse_start_at(const char *text, uint64_t *wall_ns, dv_err_t *err);

/*
 * Sleep until wall_ns (CLOCK_REALTIME), in steps so a SIGINT/SIGTERM ends the
 * wait (returns -EINTR). A time already past returns at once. Returns 0.
 */
int dv_dist_wait_until(uint64_t wall_ns);

#endif
