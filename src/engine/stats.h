/* stats: the counters of one pass (per worker, then merged), with their exact meanings. */
#ifndef DV_STATS_H
#define DV_STATS_H

#include <stdint.h>

#include "base/histogram.h"

/*
 * The meaning of every counter is documented in doc/numbers.md; keep the two
 * in step. Invariant at the end of a pass:
 *     sent == completed + lost + interrupted
 * (late answers are a subset of lost; unexpected and malformed are datagrams,
 * not queries, and appear in no sum.)
 */

#define DV_RCODES      16 /* header rcodes 0..15 */
#define DV_QTYPE_SLOTS 32 /* distinct qtypes tracked; the rest go to qtype_other */

typedef struct dv_qtype_count {
	uint16_t qtype; /* 0 = unused slot */
	uint64_t sent;
	uint64_t completed;
} dv_qtype_count_t;

typedef struct dv_counters {
	uint64_t sent;        /* datagrams the kernel accepted */
	uint64_t not_sent;    /* local send failures (never called lost) */
	uint64_t completed;   /* valid answers within the timeout */
	uint64_t lost;        /* sent, no valid answer within the timeout or by the drain's end */
	uint64_t late;        /* valid answers after their query timed out (also in lost) */
	uint64_t interrupted; /* in flight when an interrupted run gave up waiting */
	uint64_t unexpected;  /* parseable responses matching no query (ID, question, socket, source) */
	uint64_t malformed;   /* datagrams that are not a parseable DNS response */
	uint64_t truncated;   /* completed answers with TC set */
	uint64_t rcode[DV_RCODES]; /* completed answers by rcode */
	uint64_t icmp_errors; /* ICMP errors reported on our sockets (ECONNREFUSED etc.) */
	uint64_t bytes_sent;  /* DNS payload bytes */
	uint64_t bytes_received; /* DNS payload bytes of completed answers */
	uint64_t send_calls;  /* sendmmsg/sendto system calls */
	uint64_t recv_calls;  /* recvmmsg/recvfrom system calls */
	uint64_t wait_calls;  /* event-loop waits (epoll_wait) */
	uint64_t inflight_peak; /* highest in flight (merged: sum of per-worker peaks) */
	uint64_t qtype_other_sent;
	uint64_t qtype_other_completed;
	dv_qtype_count_t qtype[DV_QTYPE_SLOTS];
} dv_counters_t;

typedef struct dv_stats {
	dv_counters_t c;
	dv_hist_t latency; /* of completed answers, ns */
} dv_stats_t;

void dv_stats_init(dv_stats_t *s);
/* into += from (counters added, peaks summed, histograms merged). */
void dv_stats_merge(dv_stats_t *into, const dv_stats_t *from);
/* Count one query of this qtype as sent / completed. */
void dv_stats_qtype_sent(dv_counters_t *c, uint16_t qtype);
void dv_stats_qtype_completed(dv_counters_t *c, uint16_t qtype);

/* "NOERROR", "SERVFAIL", ... or "RCODE12" style for the unnamed ones. */
const char *dv_rcode_name(unsigned rcode);

#endif
