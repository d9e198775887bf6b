/* engine: one worker's accounting core: what to send next, matching answers, timeouts. No I/O. */
#ifndef DV_ENGINE_H
#define DV_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "input/querylist.h"
#include "engine/stats.h"
#include "engine/window.h"

/*
 * The engine decides and counts; the worker (worker.c) does the system calls.
 * Keeping them apart lets the unit tests drive sending, matching and expiry
 * with hand-made datagrams and a fake clock (tests/unit/engine/test_engine.c).
 *
 * Sequence: this worker sends global sequence numbers first, first + step, ...
 * below end (exclusive; UINT64_MAX = until told to stop); sequence s sends query
 * s mod ql->count. With T workers, worker w uses first = w, step = T, so the
 * workers together send every query of every pass exactly once.
 */

#define DV_MAX_QUERY_LEN 512 /* a compiled query: at most 12 + 255 + 4 + 11 + 200 (-E) octets */

/* The fate of the queries sent in one interval (intervals by send time, doc/numbers.md). */
typedef struct dv_send_bucket {
	uint64_t sent, completed, lost;
	/* of completed: rcode other than NOERROR and NXDOMAIN (resperf's failures) */
	uint64_t failed;
} dv_send_bucket_t;

typedef struct dv_engine {
	const dv_querylist_t *ql;
	struct dv_tsig_verifier *tsigv; /* -y: checks the answers' MACs (src/input/tsig.h) */
	int64_t tsig_wall_off_ns;       /* -y: wall clock - monotonic clock, for re-signing */
	uint8_t *tsig_tail; /* -y, re-signing: each ID's MAC tail as sent (DV_TSIG_TAIL_MAX) */
	uint8_t *tsig_own;  /* -y: 1 when that ID's query was signed again as it was sent */
	dv_window_t win;
	dv_stats_t stats;
	uint64_t timeout_ns;
	uint64_t next_seq;
	uint64_t step;
	uint64_t end_seq;
	uint64_t last_send_ns;     /* monotonic time of the last datagram sent */
	uint64_t last_complete_ns; /* monotonic time of the last completed answer */
	FILE *verbose;             /* a line per query when not NULL */
	bool paced;            /* record stats.latency_intended (slot intended_ns set by caller) */
	bool wire;             /* latency (stats.latency) only of answers stamped at both ends */
	bool rx_stamped;       /* the datagram being received carries a kernel receive stamp */
	uint64_t bucket_t0_ns; /* intervals by send time: start of interval 0 */
	uint64_t bucket_ns;    /* their length; 0 = not tracked */
	dv_send_bucket_t *bucket; /* owned; nbucket entries, grown on demand */
	size_t nbucket;
	/* --tc-tcp: called with the list index of each completed answer that has TC set */
	void (*tc_fn)(void *ctx, uint32_t qidx);
	void *tc_ctx;
} dv_engine_t;

int dv_engine_init(dv_engine_t *e, const dv_querylist_t *ql, uint32_t capacity, uint64_t timeout_ns,
                   uint64_t first_seq, uint64_t step, uint64_t end_seq);
void dv_engine_free(dv_engine_t *e);

/* Queries that could be sent now: window room, bounded by the sequence end. */
uint64_t dv_engine_sendable(const dv_engine_t *e);
static inline bool dv_engine_list_done(const dv_engine_t *e)
{
	return e->next_seq >= e->end_seq;
}

/*
 * Prepare up to n queries (n <= dv_engine_sendable()) for socket sock: each
 * gets the oldest free ID and is copied into bufs[i] (DV_MAX_QUERY_LEN octets
 * each) with lens[i] set. Slots are marked in flight at now_ns. Returns the
 * number prepared.
 */
unsigned dv_engine_prepare(dv_engine_t *e, uint16_t sock, uint64_t now_ns, unsigned n,
                           uint8_t (*bufs)[DV_MAX_QUERY_LEN], unsigned *lens);

/*
 * Prepare one query of list entry qidx (not from the sequence: a --tc-tcp retry) for
 * socket sock into buf (DV_MAX_QUERY_LEN octets), *len set. Requires window room.
 * Count it with dv_engine_sent(e, &buf, 1, 1, 0, now) once sent, or give the slot
 * back with dv_window_cancel.
 */
void dv_engine_prepare_qidx(dv_engine_t *e, uint16_t sock, uint64_t now_ns, uint32_t qidx,
                            uint8_t *buf, unsigned *len);

/*
 * Account for a send call over n prepared queries of which the kernel accepted
 * the first `sent`. If sent < n, err is the errno of the first refused one:
 * EAGAIN/EWOULDBLOCK/EINTR/ENOBUFS mean "try again later" (nothing is counted;
 * the refused queries will be prepared again); any other error counts the first
 * refused query as not sent (it is skipped) and the rest are prepared again.
 * Returns true when the caller should wait for the socket to become writable.
 */
bool dv_engine_sent(dv_engine_t *e, uint8_t (*bufs)[DV_MAX_QUERY_LEN], unsigned n, unsigned sent,
                    int err, uint64_t now_ns);

/*
 * One datagram received on socket sock; now_ns is its arrival time (the kernel's
 * receive timestamp on the monotonic clock, or the time it was read). from_ok is
 * false when it did not come from the server's address and port. Counts it as
 * completed, late, unexpected or malformed (see doc/numbers.md). An answer that
 * arrived after its query's deadline is late (and the query lost) even if expiry
 * has not run yet.
 */
void dv_engine_receive(dv_engine_t *e, uint16_t sock, const uint8_t *buf, size_t len, bool from_ok,
                       uint64_t now_ns);

/* Expire queries sent at or before now_ns - timeout: each counts as lost. */
void dv_engine_expire(dv_engine_t *e, uint64_t now_ns);
/* Stream transports: in-flight query id is lost now (its connection ended, or its
 * deadline passed): counted as lost, its ID freed as by expiry. */
void dv_engine_lose(dv_engine_t *e, uint16_t id);
/* Monotonic deadline of the oldest query in flight, UINT64_MAX when none. */
uint64_t dv_engine_next_deadline(const dv_engine_t *e);

/*
 * Track intervals by send time: each query sent at t counts (sent, then completed
 * or lost) in bucket (t - t0_ns) / len_ns. Call before the first send.
 */
void dv_engine_track_intervals(dv_engine_t *e, uint64_t t0_ns, uint64_t len_ns);

/*
 * The kernel's transmit stamp (monotonic ns) of the datagram that carried DNS id
 * on socket sock, numbered key by SOF_TIMESTAMPING_OPT_ID. Kept only when that
 * slot is in flight from that socket, asked for a stamp (tx_asked) under that key
 * and has no stamp yet; with e->wire its answer's latency is then measured from
 * this stamp, and only answers so stamped (and stamped on arrival: rx_stamped)
 * enter stats.latency, counted in wire_timed. Counts are exact either way.
 */
void dv_engine_tx_stamp(dv_engine_t *e, uint16_t sock, uint16_t id, uint32_t key,
                        uint64_t stamp_ns);

/* End of a pass: whatever is still in flight counts as lost, or as interrupted. */
void dv_engine_finish(dv_engine_t *e, bool interrupted);

#endif
