/* probe: the readiness probe before a cold pass and the version.bind CH TXT query, over UDP
 * or the run's connection kind. */
#ifndef DV_PROBE_H
#define DV_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "base/util.h"
#include "transport/transport.h"

typedef struct dv_probe_result {
	unsigned attempts;    /* queries sent */
	unsigned connections; /* over a connection kind: connections opened (UDP: 0) */
	double wait_s;        /* from the first send to the answer (or to giving up) */
	int rcode;            /* rcode of the answer; -1 when none */
	char why[160];        /* over a connection kind, no answer: why the last one ended */
} dv_probe_result_t;

/*
 * Build a query for NAME (presentation format, "." for the root) with this qtype and
 * qclass into buf: 12-byte header (RD as given, QDCOUNT 1) and the question.
 * Returns its length, or 0 when NAME is not a valid domain name or buf is too small.
 */
size_t dv_probe_build_query(uint8_t *buf, size_t cap, const char *name, uint16_t qtype,
                            uint16_t qclass, bool rd);

/*
 * Parse "NAME [TYPE] [CLASS]" (TYPE a mnemonic such as A or TXT, or TYPEnnn;
 * CLASS IN, CH...; in either order; defaults A and IN) into a query in buf, RD as
 * given. Returns its length, or 0 with err naming the bad part.
 */
size_t dv_probe_parse(const char *text, bool rd, uint8_t *buf, size_t cap, dv_err_t *err);

/* Whether messages a and b (each with QDCOUNT 1) ask the same question (names case-blind). */
bool dv_probe_same_question(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/*
 * Query the target until it answers, the way the passes will: tp NULL over UDP, else
 * over tp's connection kind (TCP, DoT, DoH, DoQ: dv_probe_stream_exchange says how connections
 * are retried). Over UDP: send QUERY (a complete DNS message; its ID is overwritten) on a
 * connected socket, wait for a response whose ID is one of those sent and whose question
 * equals the query's, resend after attempt_ns (doubling up to 1 s), and give up after
 * timeout_ns in total. Any rcode counts as an answer (the server is up); "connection
 * refused" while a server restarts is waited out. Returns 0 with res filled, -ETIMEDOUT
 * with err filled ("ADDR: target not ready: no answer to the readiness probe after 30.0 s
 * (12 queries)", and over a connection kind " over N connections; the last: why"), or
 * another negative errno (said in err). stop, when not NULL, is asked at least every
 * DV_PROBE_STOP_CHECK_MS (a SIGINT during the wait): true ends the wait with -EINTR.
 */
#define DV_PROBE_STOP_CHECK_MS 100
int dv_probe_ready(const struct sockaddr *sa, socklen_t sa_len, const dv_tp_config_t *tp,
                   const uint8_t *query, size_t query_len, uint64_t timeout_ns, uint64_t attempt_ns,
                   bool (*stop)(void), dv_probe_result_t *res, dv_err_t *err);

/*
 * Ask "version.bind CH TXT" (RD clear) over UDP (tp NULL) or tp's connection kind, at
 * most `attempts` tries (over a connection kind: queries) in attempt_ns x attempts.
 * On an answer with a TXT record *version is a newly allocated string (the TXT's
 * strings joined by spaces, non-printable bytes escaped as \DDD); otherwise NULL.
 * Returns 0 when a TXT answer was found, -ENOENT when the server answered without
 * one (hidden version, REFUSED...), -ETIMEDOUT, or another negative errno.
 */
int dv_probe_version(const struct sockaddr *sa, socklen_t sa_len, const dv_tp_config_t *tp,
                     unsigned attempts, uint64_t attempt_ns, char **version, dv_err_t *err);

/* A poll's wait of ms (-1: none) shortened to DV_PROBE_STOP_CHECK_MS when there is a stop
 * hook to ask. */
int dv_probe_wait_ms(int ms, bool (*stop)(void));

/* The probes' DNS IDs: a small xorshift seeded by the clock and the pid (not security
 * relevant: a probe's answer must also ask its question). */
uint64_t dv_probe_id_seed(void);
uint16_t dv_probe_next_id(uint64_t *state);

/*
 * probe_stream.c, the exchange dv_probe_ready and dv_probe_version use over a connection
 * kind. Ask q (qlen octets, one question; its DNS ID is rewritten) over tp's kind until an
 * answer to it arrives: one connection at a time, framed by the kind's machine
 * (transport.h), driven by poll(2). A connection that fails (refused, reset, closed, a
 * TLS or HTTP/2 error, an HTTP status instead of a DNS message) is reopened after
 * step_ns, doubling up to 1 s; one that stays silent is given up after
 * DV_PROBE_STREAM_PATIENCE_NS, doubling up to 8 s, and reopened at once (with
 * max_sends 1, its connection has the whole timeout_ns). At most max_sends queries are
 * sent, and it all ends at timeout_ns. The answer goes to ans (cap octets; its question
 * is q's, its ID q's, or its stream q's where the kind matches answers so); returns its length,
 * -ETIMEDOUT, or another negative errno. res gets the queries sent, the connections opened, the
 * time and, when none came, why the last connection ended. stop as for dv_probe_ready (-EINTR).
 */
#define DV_PROBE_STREAM_PATIENCE_NS (1000 * DV_NS_PER_MS)
ssize_t dv_probe_stream_exchange(const struct sockaddr *sa, socklen_t sa_len,
                                 const dv_tp_config_t *tp, uint8_t *q, size_t qlen,
                                 uint64_t timeout_ns, uint64_t step_ns, unsigned max_sends,
                                 bool (*stop)(void), uint8_t *ans, size_t cap,
                                 dv_probe_result_t *res);

#endif
