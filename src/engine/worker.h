/* worker: one thread with its own libuv loop, sockets, window and counters. */
#ifndef DV_WORKER_H
#define DV_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "engine/duetimer.h"
#include "engine/engine.h"
#include "engine/pacer.h"
#include "engine/rxstamp.h"
#include "engine/run_config.h"
#include "engine/stats.h"
#include "engine/txstamp.h"
#include "input/querylist.h"
#include "base/util.h"

#define DV_BATCH 64 /* datagrams per sendmmsg/recvmmsg */

struct dv_worker;

/* Start gate: workers wait until main opens it (1) or calls the pass off (-1). */
typedef struct dv_start_barrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;
	uint64_t t0_ns; /* monotonic start of the pass, set before the gate opens (intervals) */
} dv_start_barrier_t;

typedef struct dv_sock {
	uv_poll_t poll; /* first member: handle -> dv_sock_t */
	struct dv_worker *w;
	int fd;
	uint16_t index;  /* worker-local */
	bool want_write; /* the kernel refused a send: wait for POLLOUT */
	int events;      /* events the poll handle watches */
	dv_txmap_t tx;   /* wire clock: transmit-stamp keys to DNS IDs (tx.id NULL otherwise) */
	uint64_t cookie; /* its SO_COOKIE: what the receive-stamp filter arms an ID for */
} dv_sock_t;

typedef struct dv_worker {
	/* set up by run.c before the thread starts */
	unsigned id;
	const dv_run_config_t *cfg;
	const dv_querylist_t *ql;
	dv_run_share_t share; /* its sockets, window, rate and sequence numbers (dv_run_split) */
	dv_start_barrier_t *gate;
	uv_async_t *done_async; /* main loop: a worker finished */

	/* the thread's own state */
	pthread_t thread;
	bool loop_ok; /* loop initialised (cleanup must close it) */
	uv_loop_t loop;
	uv_timer_t timer;
	uv_async_t wake;      /* main -> worker: stop requested */
	uv_prepare_t prepare; /* counts loop iterations (one epoll_wait each) */
	uv_idle_t idle;       /* direct mode: the send/receive turns run from here */
	dv_sock_t *socks;
	uint32_t next_sock; /* round robin */
	struct dv_sw *sw;   /* -m tcp|dot|doh: the connections (engine/stream.h), else NULL */
	struct dv_sw *tc;   /* --tc-tcp: the TCP connection for truncated answers, else NULL */
	struct dv_xdp *xdp; /* --xdp: the pass's program (set by run.c), else NULL */
	struct dv_xw *xw;   /* --xdp: this worker's XDP socket (engine/xdp.h), else NULL */
	dv_engine_t eng;
	dv_pacer_t pacer;
	uint64_t t0_ns;
	uint64_t send_end_ns;  /* time limit, UINT64_MAX when none */
	uint64_t drain_end_ns; /* give up waiting for answers at this time */
	uint64_t next_publish_ns;
	bool sending;         /* still in the sending phase */
	bool coalesce;        /* paced: read answers on timer ticks (sockets with queries out) */
	bool direct;          /* one socket, unpaced: wait for answers in recvmmsg itself */
	bool wire;            /* the wire clock: kernel transmit and receive stamps */
	uint32_t stamp_every; /* wire clock: 1 in stamp_every queries asks for a transmit stamp */
	dv_sampler_t sampler; /* ... drawn from this */
	bool rx_filter;   /* wire clock: receive stamps by the socket filter (rxstamp.h), for the
	                   * sample only; else from every answer's control message */
	dv_rxstamp_t rxs; /* ... its program and words */
	uint64_t rx_set[DV_RX_IDS / 64]; /* IDs whose word may not be idle (armed or stamped) */
	bool xdp_tick; /* --xdp, paced as coalesce would read: answers read on the pacer's
	                * due times once they carry receive stamps (dv_xw_recv) */
	uint64_t snap_epoch_seen; /* last snapshot request answered (thread-local copy) */
	bool interrupted;
	/* replay (run_config.h): a timed list's schedule, a socket per client */
	bool scheduled;            /* the pacer follows the list's capture times */
	bool by_client;            /* query i goes out on socket client[i] */
	dv_duetimer_t due;         /* wakes the loop when the next paced query is due */
	uint64_t pace_tick_ns;     /* -Q: the shortest time between two due-timer wakes */
	bool pace_pending;         /* streams: the schedule waits for a connection to be up */
	uint64_t pace_wait_end_ns; /* ... until this time at most (-t after the start) */

	/* main <-> worker */
	_Atomic int stop_level; /* 0 run, 1 stop sending and drain briefly, 2 stop now */
	_Atomic int finished;
	_Atomic uint64_t publish_req; /* main asks for a snapshot numbered this (intervals) */
	pthread_mutex_t snap_lock;
	uint64_t snap_epoch; /* the request the snapshot answers, under snap_lock */
	dv_stats_t snap;     /* published copy of eng.stats, under snap_lock */
	uint64_t snap_inflight;
	bool snap_sending;

	/* results, read by main after join */
	int rc;
	char err[256];
} dv_worker_t;

/* Open this worker's sockets (in the calling thread, so errors surface before the start). */
int dv_worker_open(dv_worker_t *w, dv_err_t *err);
/* Start the thread. */
int dv_worker_start(dv_worker_t *w);
/* Ask to stop: level 1 = stop sending and drain briefly, 2 = stop at once. Thread-safe. */
void dv_worker_request_stop(dv_worker_t *w, int level);
/* Copy the published snapshot (thread-safe). */
void dv_worker_snapshot(dv_worker_t *w, dv_stats_t *out, uint64_t *inflight, bool *sending);
/* Ask for a fresh snapshot numbered epoch (thread-safe); done when dv_worker_epoch() reaches it. */
void dv_worker_request_snapshot(dv_worker_t *w, uint64_t epoch);
uint64_t dv_worker_epoch(dv_worker_t *w);
void dv_worker_cleanup(dv_worker_t *w);

/*
 * The worker's sockets take the kernel's software receive stamps (realtime): the wire clock
 * without the socket filter (every answer's control message), or answers read on ticks
 * (coalesce) when the filter does not stamp them. Opened sockets decide it (a worker whose
 * filter could not be attached has rx_filter false).
 */
static inline bool dv_worker_kernel_rx_stamps(const dv_worker_t *w)
{
	return (w->wire || w->coalesce) && !w->rx_filter;
}

#endif
