/* stats: the counters of one pass (per worker, then merged), with their exact meanings. */
#ifndef DV_STATS_H
#define DV_STATS_H

#include <stddef.h>
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

/*
 * The flat counters, each declared once: adding a figure is one line here.
 *   X(field, csv, metrics, flags)
 *   field    the dv_counters_t member, and its key in the results file's "counters"
 *            object (doc/results-schema.md)
 *   csv      its column in the CSV history (csv.c lists the columns in file order), or NULL
 *   metrics  its key in dns-metrics "stats_sum" objects (metrics.c), or NULL
 *   flags    DV_CTR_OPTIONAL: a results file may lack it (read back as 0); a counter
 *            added after results schema version 1 needs it, or older files stop reading
 * dv_stats_merge adds every one (inflight_peak too: merged, it is the sum of the
 * per-worker peaks) except those flagged DV_CTR_MAX, which take the maximum. The order is the order
 * of the results file and of stats_sum. The rcode and qtype breakdowns below are not flat and are
 * handled on their own.
 */
#define DV_CTR_OPTIONAL 1u /* absent in early results files */
#define DV_CTR_MAX      2u /* merged as the maximum, not the sum */

/* A paced query sent this long after its intended time counts in sent_behind (2 ms: twice
 * the pacer's longest tick, 1 ms). */
#define DV_SEND_BEHIND_NS 2000000ull

#define DV_COUNTERS(X)                                                                             \
	/* datagrams the kernel accepted */                                                        \
	X(sent, "sent", "queries", 0)                                                              \
	/* local send failures (never called lost) */                                              \
	X(not_sent, "not_sent", NULL, 0)                                                           \
	/* valid answers within the timeout */                                                     \
	X(completed, "completed", "responses", 0)                                                  \
	/* sent, no valid answer within the timeout or by the drain's end */                       \
	X(lost, "lost", "timeouts", 0)                                                             \
	/* valid answers after their query timed out (also in lost) */                             \
	X(late, "late", NULL, 0)                                                                   \
	/* in flight when an interrupted run gave up waiting */                                    \
	X(interrupted, NULL, "interrupted", 0)                                                     \
	/* parseable responses matching no query (ID, question, socket, source) */                 \
	X(unexpected, "unexpected", "unexpected", 0)                                               \
	/* datagrams that are not a parseable DNS response */                                      \
	X(malformed, "malformed", "discarded", 0)                                                  \
	/* completed answers with TC set */                                                        \
	X(truncated, "truncated", NULL, 0)                                                         \
	/* ICMP errors reported on our sockets (ECONNREFUSED etc.) */                              \
	X(icmp_errors, "icmp_errors", NULL, 0)                                                     \
	/* DNS payload bytes */                                                                    \
	X(bytes_sent, NULL, NULL, 0)                                                               \
	/* DNS payload bytes of completed answers */                                               \
	X(bytes_received, NULL, NULL, 0)                                                           \
	/* sendmmsg/sendto system calls */                                                         \
	X(send_calls, NULL, NULL, 0)                                                               \
	/* recvmmsg/recvfrom system calls */                                                       \
	X(recv_calls, NULL, NULL, 0)                                                               \
	/* event-loop waits (epoll_wait) */                                                        \
	X(wait_calls, NULL, NULL, DV_CTR_OPTIONAL)                                                 \
	/* highest in flight (merged: sum of per-worker peaks) */                                  \
	X(inflight_peak, NULL, NULL, 0)                                                            \
	/* ICMP port unreachable reported on our sockets (ECONNREFUSED; also in icmp_errors) */    \
	X(icmp_port_unreachable, "icmp_port_unreachable", NULL, DV_CTR_OPTIONAL)                   \
	/* datagrams dropped by dnsvolley's own sockets (SO_MEMINFO drops, end of the pass) */     \
	X(client_drops, "client_drops", "client_drops", DV_CTR_OPTIONAL)                           \
	/* drops at the target's socket(s) on this host over the pass (/proc/net/udp, udp6) */     \
	X(target_drops, "target_drops", "target_drops", DV_CTR_OPTIONAL)                           \
	/* the target's sockets found on this host (0: not local, target_drops unknown) */         \
	X(target_sockets, "target_sockets", NULL, DV_CTR_OPTIONAL)                                 \
	/* completed answers timed by kernel stamps at both ends (the wire clock) */               \
	X(wire_timed, "wire_timed", NULL, DV_CTR_OPTIONAL)                                         \
	/* stream connections established (TCP connect done) */                                    \
	X(conn_opened, "conn_opened", NULL, DV_CTR_OPTIONAL)                                       \
	/* connections opened again after a close, reset, failure or --queries-per-conn */         \
	X(conn_reopened, "conn_reopened", NULL, DV_CTR_OPTIONAL)                                   \
	/* connection attempts still in connect() when the pass ended (never opened or failed) */  \
	X(conn_abandoned, "conn_abandoned", NULL, DV_CTR_OPTIONAL)                                 \
	/* connection attempts that failed (refused, timed out, handshake failed) */               \
	X(conn_failed, "conn_failed", NULL, DV_CTR_OPTIONAL)                                       \
	/* connection attempts refused (ECONNREFUSED; also in conn_failed) */                      \
	X(conn_refused, "conn_refused", NULL, DV_CTR_OPTIONAL)                                     \
	/* connect or TLS handshake not done within -t (also in conn_failed) */                    \
	X(conn_timeouts, "conn_timeouts", NULL, DV_CTR_OPTIONAL)                                   \
	/* established connections reset by the peer (ECONNRESET, EPIPE) */                        \
	X(conn_reset, "conn_reset", NULL, DV_CTR_OPTIONAL)                                         \
	/* established connections closed by the server with queries in flight */                  \
	X(conn_closed, "conn_closed", NULL, DV_CTR_OPTIONAL)                                       \
	/* established connections closed by the server with none in flight (idle timeout) */      \
	X(conn_idle_closed, "conn_idle_closed", NULL, DV_CTR_OPTIONAL)                             \
	/* established connections ended by a protocol error (framing, TLS, HTTP/2) */             \
	X(conn_proto_errors, "conn_proto_errors", NULL, DV_CTR_OPTIONAL)                           \
	/* connections closed by dnsvolley after --queries-per-conn queries */                     \
	X(conn_recycled, "conn_recycled", NULL, DV_CTR_OPTIONAL)                                   \
	/* queries lost because their connection ended (also in lost) */                           \
	X(conn_lost, "conn_lost", NULL, DV_CTR_OPTIONAL)                                           \
	/* highest queries in flight on one connection (merged: the maximum) */                    \
	X(conn_inflight_peak, NULL, NULL, DV_CTR_OPTIONAL | DV_CTR_MAX)                            \
	/* most connections one worker had in connect or TLS handshake at once (the maximum) */    \
	X(conn_pending_peak, NULL, NULL, DV_CTR_OPTIONAL | DV_CTR_MAX)                             \
	/* TLS handshakes completed in full */                                                     \
	X(tls_full, "tls_full", NULL, DV_CTR_OPTIONAL)                                             \
	/* TLS handshakes that resumed a session */                                                \
	X(tls_resumed, "tls_resumed", NULL, DV_CTR_OPTIONAL)                                       \
	/* DoH queries answered with an HTTP status other than 200 (also in lost) */               \
	X(http_non200, "http_non200", NULL, DV_CTR_OPTIONAL)                                       \
	/* of those, 4xx statuses */                                                               \
	X(http_4xx, "http_4xx", NULL, DV_CTR_OPTIONAL)                                             \
	/* of those, 5xx statuses */                                                               \
	X(http_5xx, "http_5xx", NULL, DV_CTR_OPTIONAL)                                             \
	/* DoH streams reset or refused, or answered with a body that is not DNS (also in lost) */ \
	X(stream_errors, "stream_errors", NULL, DV_CTR_OPTIONAL)                                   \
	/* --tc-tcp: truncated UDP answers whose query was asked again over TCP */                 \
	X(tc_retried, "tc_retried", NULL, DV_CTR_OPTIONAL)                                         \
	/* of those, answered over TCP within the timeout */                                       \
	X(tc_completed, "tc_completed", NULL, DV_CTR_OPTIONAL)                                     \
	/* of those, not answered (timed out, connection ended, or in flight at the end) */        \
	X(tc_lost, "tc_lost", NULL, DV_CTR_OPTIONAL)                                               \
	/* truncated answers not asked again: the retry queue (65536) was full */                  \
	X(tc_not_sent, "tc_not_sent", NULL, DV_CTR_OPTIONAL)                                       \
	/* paced: queries the schedule had due that were never sent (over 1 s behind) */           \
	X(forfeited, "forfeited", NULL, DV_CTR_OPTIONAL)                                           \
	/* paced: queries sent over DV_SEND_BEHIND_NS after their intended time */                 \
	X(sent_behind, "sent_behind", NULL, DV_CTR_OPTIONAL)                                       \
	/* paced, stream transports: sends the server held back (its stream limit, an unread       \
	 * send buffer): times a connection with room in -q's share took fewer queries than due */ \
	X(server_holds, "server_holds", NULL, DV_CTR_OPTIONAL)                                     \
	/* -y (TSIG): answers with no TSIG RR (also in completed, never signed-OK) */              \
	X(tsig_unsigned, "tsig_unsigned", NULL, DV_CTR_OPTIONAL)                                   \
	/* -y: answers whose TSIG says BADSIG (RFC 8945 error 16; also in completed) */            \
	X(tsig_badsig, "tsig_badsig", NULL, DV_CTR_OPTIONAL)                                       \
	/* -y: answers whose TSIG says BADKEY (17) */                                              \
	X(tsig_badkey, "tsig_badkey", NULL, DV_CTR_OPTIONAL)                                       \
	/* -y: answers whose TSIG says BADTIME (18) */                                             \
	X(tsig_badtime, "tsig_badtime", NULL, DV_CTR_OPTIONAL)                                     \
	/* -y: answers with another TSIG error */                                                  \
	X(tsig_other_error, "tsig_other_error", NULL, DV_CTR_OPTIONAL)                             \
	/* reopens made after a backoff: the connection before ended, or the attempt failed,       \
	 * without an answer (a jittered exponential delay, 50 ms to 2 s) */                       \
	X(conn_backoffs, "conn_backoffs", NULL, DV_CTR_OPTIONAL)                                   \
	/* truncated answers not asked again: no TCP connection to the server could be made */     \
	X(tc_no_conn, "tc_no_conn", NULL, DV_CTR_OPTIONAL)                                         \
	/* -y: answers with TSIG error 0 whose MAC does not verify (another key or algorithm, a    \
	 * forged or altered answer; also in completed, never signed-OK) */                        \
	X(tsig_badmac, "tsig_badmac", NULL, DV_CTR_OPTIONAL)                                       \
	/* SYNs retransmitted before a connect ended (TCP_INFO): each a second or more lost, most  \
	 * often to a server whose accept queue was full */                                        \
	X(conn_syn_retries, "conn_syn_retries", NULL, DV_CTR_OPTIONAL)                             \
	/* --xdp: completed answers timed by the steering program's receive stamp (not the read    \
	 * time; doc/xdp.md "Clock") */                                                            \
	X(xdp_stamped, "xdp_stamped", NULL, DV_CTR_OPTIONAL)                                       \
	/* wire clock: queries sent asking for a kernel transmit stamp (its sample; wire_timed of  \
	 * them answered and stamped at both ends are the latency's sample) */                     \
	X(stamps_asked, "stamps_asked", NULL, DV_CTR_OPTIONAL)                                     \
	/* wire clock, receive stamps by the socket filter: stamps a datagram took that was not    \
	 * its query's answer in time (a duplicate, junk, a forged or stray answer with its ID, a  \
	 * late answer): unused, and the query's answer, if it comes, left untimed */              \
	X(rx_stamps_unused, "rx_stamps_unused", NULL, DV_CTR_OPTIONAL)                             \
	/* connection attempts that found no local port left (EADDRNOTAVAIL: the ephemeral range   \
	 * in use toward the server, often by TIME_WAIT; also in conn_failed; dv_sw_fail_cause) */ \
	X(conn_no_port, "conn_no_port", NULL, DV_CTR_OPTIONAL)                                     \
	/* wire clock: answers to queries that asked for a transmit stamp, left untimed because    \
	 * that stamp never came, because the answer had no usable receive stamp (rx_stamps_unused \
	 * among them), or because its receive stamp was not after the transmit stamp */           \
	X(untimed_no_tx, "untimed_no_tx", NULL, DV_CTR_OPTIONAL)                                   \
	X(untimed_no_rx, "untimed_no_rx", NULL, DV_CTR_OPTIONAL)                                   \
	X(untimed_order, "untimed_order", NULL, DV_CTR_OPTIONAL)

typedef struct dv_counters {
#define DV_COUNTER_MEMBER_(field, csv, metrics, flags) uint64_t field;
	DV_COUNTERS(DV_COUNTER_MEMBER_)
#undef DV_COUNTER_MEMBER_
	uint64_t rcode[DV_RCODES]; /* completed answers by rcode */
	uint64_t qtype_other_sent; /* queries of qtypes beyond the DV_QTYPE_SLOTS tracked ones */
	uint64_t qtype_other_completed;
	dv_qtype_count_t qtype[DV_QTYPE_SLOTS];
} dv_counters_t;

/* One entry of DV_COUNTERS, for code that walks them at run time (results, CSV, metrics). */
typedef struct dv_counter_field {
	const char *name;    /* member name = results file key */
	const char *csv;     /* CSV column, or NULL */
	const char *metrics; /* dns-metrics stats_sum key, or NULL */
	unsigned flags;      /* DV_CTR_* */
	size_t offset;       /* of the uint64_t in dv_counters_t */
} dv_counter_field_t;

/* DV_COUNTERS in order; dv_counter_nfields entries. */
extern const dv_counter_field_t dv_counter_fields[];
extern const size_t dv_counter_nfields;

static inline uint64_t dv_counter_get(const dv_counters_t *c, const dv_counter_field_t *f)
{
	return *(const uint64_t *)(const void *)((const char *)c + f->offset);
}

static inline uint64_t *dv_counter_ptr(dv_counters_t *c, const dv_counter_field_t *f)
{
	return (uint64_t *)(void *)((char *)c + f->offset);
}

typedef struct dv_stats {
	dv_counters_t c;
	dv_hist_t latency;   /* of completed answers, ns, from the actual send */
	dv_hist_t connect;   /* stream transports: connect() to established, ns */
	dv_hist_t handshake; /* DoT/DoH: established to TLS handshake done, ns */
	/* Paced runs only (empty otherwise): of the same answers, ns, from the intended send
	 * time (the schedule's, dv_pacer_due_ns), so stalls are not hidden (coordinated
	 * omission; doc/numbers.md). */
	dv_hist_t latency_intended;
} dv_stats_t;

void dv_stats_init(dv_stats_t *s);
/*
 * into += from: every DV_COUNTERS field and every rcode added (inflight_peak
 * too), qtype slots matched by qtype (a qtype with no free slot in into goes to
 * qtype_other), latency histograms merged (count, buckets and sums added, min
 * of mins, max of maxes; an empty histogram in from changes nothing).
 */
void dv_stats_merge(dv_stats_t *into, const dv_stats_t *from);
/* Count one query of this qtype as sent / completed. */
void dv_stats_qtype_sent(dv_counters_t *c, uint16_t qtype);
void dv_stats_qtype_completed(dv_counters_t *c, uint16_t qtype);

/* "NOERROR", "SERVFAIL", ... or "RCODE12" style for the unnamed ones. */
const char *dv_rcode_name(unsigned rcode);

#endif
