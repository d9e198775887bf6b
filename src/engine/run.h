/* run: one pass of a query list against one target: workers, signals, drain, merge. */
#ifndef DV_RUN_H
#define DV_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "input/querylist.h"
#include "engine/run_config.h"
#include "engine/stats.h"
#include "engine/xdp.h"
#include "engine/servercost.h"
#include "base/util.h"

typedef struct dv_interval {
	double t_s;    /* end of interval, seconds since the pass started */
	uint64_t sent; /* in this interval */
	uint64_t completed;
	uint64_t lost;
	uint64_t failed;   /* by send time only: answers other than NOERROR and NXDOMAIN */
	uint64_t inflight; /* at the end of the interval */
	double qps;        /* completed / interval length */
	double lat_mean_ns, lat_p50_ns, lat_p99_ns;
	/*
	 * The latency histogram of the answers timed in this interval (the delta of
	 * the pass's, so the intervals of several ranks merge exactly): lat_n
	 * non-empty buckets at the pass result's lat_cells[lat_first ..], lat_count
	 * answers in them, and the range its quantiles are clamped to (lat_min_ns >
	 * lat_max_ns when empty). lat_kept false: no histogram (a results file
	 * without one, or past DV_RUN_MAX_LAT_CELLS); its p50/p99 then merge as an
	 * upper bound (doc/scale-out.md).
	 */
	bool lat_kept;
	uint32_t lat_n;
	size_t lat_first;
	uint64_t lat_count, lat_min_ns, lat_max_ns;
} dv_interval_t;

/*
 * Interval histograms kept per pass, in cells (16 bytes each: 16 MB); an
 * interval past it keeps none. Bounds memory and the results file of a long
 * pass with a short -S (a few hundred cells per interval are usual).
 */
#define DV_RUN_MAX_LAT_CELLS 1000000

typedef enum dv_end_reason {
	DV_END_LIST = 0,  /* the planned passes through the list were sent */
	DV_END_TIME,      /* the time limit was reached */
	DV_END_INTERRUPT, /* SIGINT/SIGTERM */
} dv_end_reason_t;

/* What timed a pass's latency (doc/numbers.md "latency"; the results file's "clock"). */
typedef enum dv_pass_clock {
	DV_PASS_CLOCK_UNKNOWN = 0, /* not recorded (an older results file), or no pass ran */
	DV_PASS_CLOCK_APP,   /* send and read times of the application (--clock app, streams) */
	DV_PASS_CLOCK_WIRE,  /* kernel stamps (wire_timed counts the answers so timed) */
	DV_PASS_CLOCK_XDP,   /* --xdp: the steering program's receive stamps (xdp_stamped) */
	DV_PASS_CLOCK_MIXED, /* ranks merged from different clocks (dnsvolley merge refuses) */
} dv_pass_clock_t;

/* Its name in the results file and messages: "app", "wire", "xdp" or "mixed"; NULL for
 * DV_PASS_CLOCK_UNKNOWN (the file's null). */
const char *dv_pass_clock_name(dv_pass_clock_t clock);

typedef struct dv_udp_snmp {
	uint64_t in_datagrams, no_ports, in_errors, out_datagrams, rcvbuf_errors, sndbuf_errors;
	int valid; /* 0 when /proc/net/snmp could not be read */
} dv_udp_snmp_t;

typedef struct dv_pass_result {
	dv_stats_t stats; /* merged over workers */
	dv_end_reason_t end;
	bool interrupted;
	uint64_t start_wall_ns; /* CLOCK_REALTIME when sending began */
	double run_time_s;      /* first send to the later of last send / last completed answer */
	double elapsed_s;       /* first send to end of drain (wall time the pass took) */
	double qps;             /* completed / run_time_s */
	double cpu_user_s, cpu_sys_s; /* this process, over the pass */
	dv_udp_snmp_t udp;            /* /proc/net/snmp Udp deltas over the pass (host-wide) */
	uint32_t sockets, threads, max_outstanding;
	dv_pass_clock_t clock; /* what timed the latency (--clock, --xdp) */
	uint32_t stamp_every; /* wire clock: 1 in this many queries asked a transmit stamp; 0 app */
	bool rx_filter;       /* wire clock: receive stamps by the socket filter, for the sample
	                       * only (every worker); false: from every answer's control message
	                       * on one worker at least (rx_filter_workers says how many not) */
	uint32_t wire_workers;      /* workers on the wire clock (summed over merged ranks) */
	uint32_t rx_filter_workers; /* of those, the ones whose receive stamps the socket filter
	                             * took (the others': every answer's control message) */
	dv_xdp_info_t xdp;          /* --xdp: the attach and bind modes, the queues */
	/*
	 * One entry per -S interval. While the pass runs they are recorded by arrival
	 * (what was sent, answered and timed out in it); after the drain, sent,
	 * completed and lost are replaced by the fate of the queries sent in each
	 * interval (doc/numbers.md, "intervals"); the other fields stay as recorded.
	 */
	dv_interval_t *intervals; /* owned; n_intervals entries */
	size_t n_intervals;
	dv_hist_cell_t *lat_cells; /* owned; the intervals' histograms (dv_interval_t.lat_first) */
	size_t n_lat_cells;
	/* A timed list replayed with --timing original (zero otherwise): */
	bool scheduled;
	dv_hist_t lag;           /* ns from each query's due time to its send (doc/numbers.md) */
	double send_qps;         /* achieved rate: (sent - 1) / (last send - first due time) */
	dv_server_cost_t server; /* what the server paid (cfg->server_cost; measured false: none) */
} dv_pass_result_t;

/*
 * The pass's latency timed the wire clock's sample only, so its histograms count wire_timed
 * answers, not every completed one: stamps were asked, or the pass ran on the wire clock
 * with a sample rate (a sample can draw no query: a list shorter than 1 in stamp_every).
 */
bool dv_pass_times_sample(const dv_pass_result_t *r);
/* ... and that sample was part of the queries sent: its percentiles have a sampling error. */
bool dv_pass_sample_partial(const dv_pass_result_t *r);

/*
 * Run one pass. Blocks until done. A list with clients (ql->client) is replayed
 * with a socket per client: cfg->sockets is taken as ql->clients, and it needs
 * one thread (-EINVAL otherwise). The first pass installs a process-wide
 * SIGINT/SIGTERM handler that stays for the life of the process and only counts
 * the signals (worker threads block both). The pass polls the count every 10 ms:
 * the first signal stops sending and drains for at most min(interrupt_drain_ns,
 * timeout_ns), a second stops at once; a signal counted before the pass began
 * (between the passes of a study) stops it as soon as it starts. Returns 0 (also
 * for an interrupted pass: see res->interrupted) or a negative code with err
 * filled when the pass could not run at all (sockets, threads).
 */
int dv_run_pass(const dv_run_config_t *cfg, const dv_querylist_t *ql, dv_pass_result_t *res,
                dv_err_t *err);
void dv_pass_result_free(dv_pass_result_t *res);

/* True once a SIGINT/SIGTERM asked the whole program to stop (studies check it between passes). */
bool dv_run_stop_requested(void);

/* Catch SIGINT/SIGTERM from now on, counted for dv_run_stop_requested (dv_run_pass does it too):
 * a study calls it before its first flush command so a Ctrl-C then ends the flush. Idempotent. */
void dv_run_catch_signals(void);

#endif
