/* stream: one worker's DNS over TCP, TLS and HTTPS connections, driven on the worker's loop. */
#ifndef DV_ENGINE_STREAM_H
#define DV_ENGINE_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

/*
 * With -m tcp|dot|doh a worker's share of -c is a set of connections instead of
 * UDP sockets. Each is a non-blocking socket watched by a uv_poll_t on the
 * worker's loop, with a dv_tp_conn_t (src/transport) turning queries into bytes
 * and bytes into answers. Sending, matching and counting go through the worker's
 * dv_engine_t exactly as for UDP (one window, one matching path): the socket
 * index of a query is its connection's index.
 *
 * - A connection carries at most ceil(window / connections) queries at once, so
 *   one slow connection cannot hold the whole window.
 * - A connection that ends (reset, closed by the server, protocol error) loses the
 *   queries in flight on it (counted lost and conn_lost, never sent again) and is
 *   reopened (conn_reopened) while the worker is still sending.
 * - Connect and TLS handshake must finish within -t. A worker whose connections
 *   all fail before any was ever usable, or that has had no usable connection
 *   for -t, stops with an error (w->rc, w->err) instead of waiting forever.
 * doc/numbers.md defines the connection counters.
 */

struct dv_worker;
typedef struct dv_sw dv_sw_t;

/* What the worker does after any I/O: check for a stop, send, finish or re-arm its timer. */
typedef void (*dv_sw_after_io_fn)(struct dv_worker *w);

/* Set up w->sw for w->share.nsocks connections (none opened yet). Needs w->eng. 0, or
 * a negative errno with err filled (a bad CA file, out of memory). */
int dv_sw_open(struct dv_worker *w, dv_sw_after_io_fn after_io, dv_err_t *err);
/*
 * --tc-tcp on a UDP worker: w->tc, one TCP connection (to the same address and port)
 * on which every query whose UDP answer came back truncated (the engine's TC hook) is
 * asked again, in a window and counts of its own; dv_sw_finish folds them into the
 * worker's tc_* counters (and the connection figures). The same turn, next_due, close
 * and free calls drive it; dv_sw_send_retries sends what is queued.
 */
int dv_sw_open_tc(struct dv_worker *w, dv_sw_after_io_fn after_io, dv_err_t *err);
void dv_sw_send_retries(dv_sw_t *sw, uint64_t now);
/* Retries queued or in flight. */
bool dv_sw_busy(const dv_sw_t *sw);
/* Its engine (retry mode: its own window, for the worker's timer). */
struct dv_engine *dv_sw_engine(dv_sw_t *sw);
/* End of the pass (after the loop): retries in flight count tc_lost, queued ones
 * tc_not_sent; the counts go into the worker's engine. */
void dv_sw_finish(dv_sw_t *sw, bool interrupted);
/* The pass starts: open every connection. Worker thread. */
void dv_sw_start(dv_sw_t *sw, uint64_t now);
/* Send up to n queries (n <= dv_engine_sendable) over the ready connections.
 * Returns how many were handed to connections (counted sent). */
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
