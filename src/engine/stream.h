/* stream: one worker's DNS over TCP, TLS and HTTPS connections, driven on the worker's loop. */
#ifndef DV_ENGINE_STREAM_H
#define DV_ENGINE_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "base/util.h"
#include "engine/engine.h"
#include "engine/pacer.h"
#include "engine/run_config.h"
#include "input/querylist.h"

/*
 * With -m tcp|dot|doh a worker's share of -c is a set of connections instead of
 * UDP sockets. Each is a non-blocking socket of the type its kind's row asks for
 * (a connected UDP socket for a datagram kind) in an epoll set of the worker's own,
 * watched by one uv_poll_t on the worker's loop, with a dv_tp_conn_t (src/transport)
 * turning queries into bytes and bytes into answers, and, for a kind with timers, a
 * uv_timer_t armed at the machine's next deadline. Sending, matching and counting go
 * through the worker's dv_engine_t exactly as for UDP (one window, one matching path):
 * the socket index of a query is its connection's index.
 *
 * - A connection carries at most ceil(window / connections) queries at once, so
 *   one slow connection cannot hold the whole window.
 * - A connection that ends (reset, closed by the server, protocol error) loses the
 *   queries in flight on it (counted lost and conn_lost, never sent again) and is
 *   reopened (conn_reopened) while the worker is still sending: at once if an answer
 *   came on it, else after a jittered exponential backoff (conn_backoffs), as after a
 *   failed attempt.
 * - At most 256 connections per worker are in connect or handshake at once; the others
 *   wait in a queue and open as those finish. No call walks every connection per event.
 * - Connect and TLS handshake must finish within -t. A worker stops with an error (the
 *   host's rc and err) instead of waiting forever when an attempt fails before any of
 *   its connections was ever usable (refused, unreachable, no local port, timed out:
 *   the others would meet the same; a pass on fewer connections than -c would measure
 *   another load), or when it has had no usable connection for -t.
 * doc/numbers.md defines the connection counters.
 */

typedef struct dv_sw dv_sw_t;

/* Where an attempt to open a connection failed (dv_sw_fail_cause). */
typedef enum dv_sw_stage {
	DV_SW_AT_SOCKET,     /* socket(), or bind() to an address with its port given */
	DV_SW_AT_BIND_PORT0, /* bind() to a local address, port 0 (the kernel picks it) */
	DV_SW_AT_CONNECT,    /* connect(), or the error it left (SO_ERROR) */
	DV_SW_AT_LATER, /* the handshake, or a close or reset before the connection was usable */
} dv_sw_stage_t;

/* Why, for the counters: conn_refused, conn_no_port, or neither (conn_failed only). */
typedef enum dv_sw_fail {
	DV_SW_FAIL_OTHER = 0,
	DV_SW_FAIL_REFUSED, /* ECONNREFUSED: nothing listening, or the server refused */
	/* No local port left: connect()'s EADDRNOTAVAIL (EAGAIN for a datagram socket's
	 * autobind), bind()'s EADDRINUSE for port 0: every port of the ephemeral range
	 * (net.ipv4.ip_local_port_range) is in use toward the server, typically by TIME_WAIT
	 * of connections closed moments before. Not bind()'s EADDRNOTAVAIL: that is an
	 * address this host does not have. */
	DV_SW_FAIL_NO_PORT,
} dv_sw_fail_t;

/* The cause of a failed attempt from its errno (0: none, e.g. a timeout) and stage. */
dv_sw_fail_t dv_sw_fail_cause(int err, dv_sw_stage_t stage);

/* What a worker lends its connections (all owned by the worker, outliving the dv_sw_t). */
typedef struct dv_sw_host {
	uv_loop_t *loop;            /* the worker's loop: the epoll set's uv_poll_t lives on it */
	dv_engine_t *eng;           /* the worker's engine: window, matching, counters */
	const dv_run_config_t *cfg; /* server, -t, tp (TLS, DoH), queries_per_conn */
	const dv_querylist_t *ql;
	uint32_t conns;      /* connections: the worker's share of -c */
	uint32_t first_conn; /* the global index of its first (--client-range's address) */
	uint32_t capacity;   /* the worker's window (-q share) */
	/* The worker's pacer: while eng->paced, each query handed to a connection gets its
	 * intended send time, dv_pacer_due_ns(pacer, pacer->issued + its place in the
	 * dv_sw_send call) (the caller takes them from the pacer after the call). */
	const dv_pacer_t *pacer;
	bool *sending;          /* the worker's sending phase: read; a fatal error clears it */
	uint64_t *drain_end_ns; /* a fatal error sets it to now */
	int *rc;                /* a fatal error: -ECONNABORTED, and its sentence in err */
	char *err;
	size_t err_len;
	void (*after_io)(void *ctx); /* after any I/O: check for a stop, send, finish, re-arm */
	void *ctx;
} dv_sw_host_t;

/* Set up *out for h->conns connections (none opened yet). 0, or a negative errno with
 * err filled (a bad CA file, out of memory); *out is then still to be freed. */
int dv_sw_open(dv_sw_t **out, const dv_sw_host_t *h, dv_err_t *err);
/*
 * --tc-tcp on a UDP worker: one TCP connection (to the same address and port)
 * on which every query whose UDP answer came back truncated (the engine's TC hook) is
 * asked again, in a window and counts of its own; dv_sw_finish folds them into the
 * worker's tc_* counters (and the connection figures). A connection that cannot be made
 * does not stop the UDP pass: the retries queued while none is up count tc_no_conn.
 * The same turn, next_due, close and free calls drive it; dv_sw_send_retries sends
 * what is queued.
 */
int dv_sw_open_tc(dv_sw_t **out, const dv_sw_host_t *h, dv_err_t *err);
void dv_sw_send_retries(dv_sw_t *sw, uint64_t now);
/* Retries queued or in flight. */
bool dv_sw_busy(const dv_sw_t *sw);
/* A connection takes queries, or did and drains (READY or DRAINING). */
bool dv_sw_up(const dv_sw_t *sw);
/* Its engine (retry mode: its own window, for the worker's timer). */
dv_engine_t *dv_sw_engine(dv_sw_t *sw);
/* End of the pass (after the loop): retries in flight count tc_lost, queued ones
 * tc_not_sent (tc_no_conn when no connection was ever made); the counts go into the
 * worker's engine. */
void dv_sw_finish(dv_sw_t *sw, bool interrupted);
/* The pass starts: open the connections, at most 256 in connect or handshake at once (the rest in
 * turn, from dv_sw_turn). Worker thread. */
void dv_sw_start(dv_sw_t *sw, uint64_t now);
/* Send up to n queries (n <= dv_engine_sendable, and, paced, <= the pacer's allowance) over
 * the ready connections. Returns how many were handed to connections (counted sent). */
unsigned dv_sw_send(dv_sw_t *sw, uint64_t now, unsigned n);
/* Timers: expire overdue queries, connect and handshake timeouts, reopen. Call before
 * dv_engine_expire (this one keeps the per-connection counts). */
void dv_sw_turn(dv_sw_t *sw, uint64_t now);
/* Monotonic time at which dv_sw_turn has work (UINT64_MAX: none). */
uint64_t dv_sw_next_due(const dv_sw_t *sw);
/* The pass is over: close every connection (libuv handles close asynchronously). */
void dv_sw_close(dv_sw_t *sw);
/* After the loop has run out: free everything. Accepts NULL. */
void dv_sw_free(dv_sw_t *sw);

#endif
