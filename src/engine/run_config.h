/* run_config: what one pass is asked to do (-c/-T/-q/-Q/-t/-l/-n...) and its split over workers. */
#ifndef DV_RUN_CONFIG_H
#define DV_RUN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>

/* A pass's error code when its stream connections could take no query for -t while
 * queries were due (the server allows no stream, closes every connection first, does not
 * read): dnsvolley exits 5 (doc/dnsvolley.1). */
#define DV_RUN_NOTHING_SENT (-EBUSY)
#include <sys/socket.h>

#include "transport/transport.h"

/* Which clock times each query (--clock; doc/numbers.md "latency"). */
typedef enum dv_clock {
	DV_CLOCK_AUTO =
	    0,         /* wire for UDP sockets, app for streams and --xdp (doc/performance.md) */
	DV_CLOCK_WIRE, /* kernel stamps: transmit on a sample of queries, receive on all */
	DV_CLOCK_APP,  /* one clock read before each sendmmsg, one after each recvmmsg */
} dv_clock_t;

/*
 * The wire clock's sample: unpaced, 1 in DV_STAMP_EVERY_DEFAULT queries asks for a
 * transmit stamp; paced (-Q), every query; --clock wire:1/N says otherwise for both
 * (doc/performance.md "The wire clock's cost" chose it: CPU per query against the
 * percentiles' sampling error). A pass of at most DV_STAMP_ALL_MAX queries (-n over a
 * short list) stamps every query: its sample would be a few hundred answers or none, and
 * stamping all of them costs about a millisecond of CPU at most. dv_run_stamp_every() is the rule.
 */
#define DV_STAMP_EVERY_DEFAULT 16u
#define DV_STAMP_EVERY_MAX     65536u
#define DV_STAMP_ALL_MAX       4096u

typedef struct dv_run_config {
	struct sockaddr_storage server; /* target address and port */
	socklen_t server_len;
	struct sockaddr_storage local; /* -a / -x; family AF_UNSPEC when not given */
	socklen_t local_len;
	uint16_t local_port;         /* -x: first port of a range, 0 = any */
	uint32_t sockets;            /* -c, total over all workers */
	uint32_t threads;            /* -T */
	uint32_t max_outstanding;    /* -q, total over all workers */
	uint64_t timeout_ns;         /* -t */
	uint64_t time_limit_ns;      /* -l, 0 = none */
	uint64_t passes;             /* -n, 0 = none (then: one pass unless a time limit) */
	double max_qps;              /* -Q, 0 = unlimited */
	uint64_t interval_ns;        /* -S / snapshot period; 0 = no interval lines */
	bool interval_print;         /* print a line per interval (-S) */
	bool interval_dnsperf;       /* print them as dnsperf does: "SECONDS.USEC: QPS" */
	bool progress;               /* live progress line on stderr */
	bool verbose;                /* a line per query on stdout (-v) */
	FILE *out;                   /* where interval and verbose lines go (stdout) */
	uint64_t interrupt_drain_ns; /* wait after SIGINT before giving up, default 1 s */
	uint32_t socket_buf_bytes;   /* -b: SO_RCVBUF/SO_SNDBUF asked for (default 4 MiB) */
	uint64_t ramp_ns;            /* paced: rate grows from 0 to max_qps over this, 0 = none */
	dv_clock_t clock;            /* --clock */
	uint32_t stamp_every;        /* --clock wire:1/N: N (1 = every query); 0 = the default */
	bool every_latency;          /* each answer's own latency is used (--latency-histogram) */
	bool no_rx_filter; /* wire clock: receive stamps from control messages even where the
	                    * socket filter loads (DV_NO_RX_FILTER in the environment; tests) */
	/*
	 * Replay (src/input/replay.h). A list with capture times follows its
	 * schedule with timing_original; a list with clients sends each client's
	 * queries from its own socket (one thread; cfg->sockets is then the
	 * number of clients), bound to the client's address when a range is given.
	 */
	bool timing_original;                /* --timing original */
	double speed;                        /* --speed (1) */
	struct sockaddr_storage client_base; /* --client-range: client c binds to base + c, port 0;
	                                      * AF_UNSPEC when not given */
	socklen_t client_base_len;
	uint64_t client_range_size; /* addresses from client_base on */
	/* -m tcp|dot|doh: sockets are connections (engine/stream.h); tp.kind says which */
	bool stream;
	dv_tp_config_t tp;         /* stream transports: TLS and DoH options */
	uint64_t queries_per_conn; /* --queries-per-conn: reopen after this many, 0 = never */
	bool tc_tcp;               /* UDP: ask truncated answers' queries again over TCP */
	const char *xdp_iface;     /* --xdp: UDP through AF_XDP on this interface (engine/xdp.h) */
	/* The server's cost, read at the pass's edges (engine/servercost.h); NULL = not read.
	 * Borrowed: the study's target owns it. */
	struct dv_srvcost *server_cost;
} dv_run_config_t;

/* Defaults as documented in doc/dnsvolley.1 (run_config.c). */
void dv_run_config_init(dv_run_config_t *cfg);

/*
 * The wire clock's sample for a worker sending at rate_qps (0: unpaced) in a pass whose
 * sequence numbers stay below end_seq (dv_run_share_t: the pass's queries at most): 1 in
 * this many queries asks for a transmit stamp. --clock wire:1/N's N; else every query
 * where each answer's own latency is printed (-v) or counted (--latency-histogram, whose
 * counts are every answer's, as dnsperf's are), where a rate, not our CPU, sets the pace
 * (a capacity step's p99 comes from few queries), or where the pass has at most
 * DV_STAMP_ALL_MAX queries; else DV_STAMP_EVERY_DEFAULT.
 */
uint32_t dv_run_stamp_every(const dv_run_config_t *cfg, double rate_qps, uint64_t end_seq);

/* The run's packets ride TCP (TCP, DoT, DoH): the server listens on a TCP socket. Not for
 * UDP, nor DoQ, whose connections are QUIC over UDP. */
bool dv_run_over_tcp(const dv_run_config_t *cfg);
/* The run's transport by name, as -m and the results' "transport" give it: "udp", "tcp"... */
const char *dv_run_transport(const dv_run_config_t *cfg);

/*
 * The work split of a pass: worker `worker` (0 <= worker < cfg->threads) of a
 * pass over a list of list_count queries gets
 *   - sockets: cfg->sockets / T, plus one for the first cfg->sockets % T workers;
 *     first_sock is the global index of its first (the -x port offset), so the
 *     workers' sockets are 0..cfg->sockets-1 in order, each exactly once;
 *   - capacity: cfg->max_outstanding divided the same way (its window, -q);
 *   - rate_qps: cfg->max_qps / T (0 = unlimited);
 *   - the sequence numbers worker, worker + T, worker + 2T, ... below end_seq
 *     (sequence s sends query s mod list_count), so the workers together send
 *     each sequence number below end_seq exactly once.
 * end_seq is cfg->passes * list_count with -n, UINT64_MAX (until the time limit)
 * with only -l, else list_count (one pass). Pure: reads cfg, writes *share.
 * Expects T >= 1, cfg->sockets >= T and cfg->max_outstanding >= T (dv_run_pass
 * refuses a config without them).
 */
typedef struct dv_run_share {
	uint32_t first_sock; /* global index of the worker's first socket */
	uint32_t nsocks;     /* its sockets */
	uint32_t capacity;   /* its queries outstanding at most */
	double rate_qps;     /* its rate, queries per second; 0 = unlimited */
	uint64_t first_seq;  /* its first sequence number (= worker) */
	uint64_t step;       /* between its sequence numbers (= T) */
	uint64_t end_seq;    /* its sequence numbers stay below this (same for all) */
} dv_run_share_t;

void dv_run_split(const dv_run_config_t *cfg, uint64_t list_count, uint32_t worker,
                  dv_run_share_t *share);

/* --client-range: the range's index-th address (index mod client_range_size; 0 = the
 * first, client_base), port 0, in *out (client_base_len bytes of it). Pure. Expects a
 * range (client_base not AF_UNSPEC, client_range_size >= 1). */
void dv_run_client_addr(const dv_run_config_t *cfg, uint64_t index, struct sockaddr_storage *out);

#endif
