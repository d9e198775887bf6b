/* probe: the readiness probe before a cold pass and the version.bind CH TXT query (UDP). */
#ifndef DV_PROBE_H
#define DV_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/util.h"

typedef struct dv_probe_result {
	unsigned attempts; /* queries sent */
	double wait_s;     /* from the first send to the answer (or to giving up) */
	int rcode;         /* rcode of the answer; -1 when none */
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
 * Query the target until it answers: send QUERY (a complete DNS message; its ID is
 * overwritten) on a connected UDP socket, wait for a response whose ID is one of
 * those sent and whose question equals the query's, resend after attempt_ns
 * (doubling up to 1 s), and give up after timeout_ns in total. Any rcode counts
 * as an answer (the server is up); ICMP errors ("connection refused" while a server
 * restarts) are waited out. Returns 0 with res filled, -ETIMEDOUT with err filled
 * ("no answer from ADDR after 30.0 s (12 queries)") or another negative errno.
 */
int dv_probe_ready(const struct sockaddr *sa, socklen_t sa_len, const uint8_t *query,
                   size_t query_len, uint64_t timeout_ns, uint64_t attempt_ns,
                   dv_probe_result_t *res, dv_err_t *err);

/*
 * Ask "version.bind CH TXT" (RD clear), at most `attempts` tries of attempt_ns each.
 * On an answer with a TXT record *version is a newly allocated string (the TXT's
 * strings joined by spaces, non-printable bytes escaped as \DDD); otherwise NULL.
 * Returns 0 when a TXT answer was found, -ENOENT when the server answered without
 * one (hidden version, REFUSED...), -ETIMEDOUT, or another negative errno.
 */
int dv_probe_version(const struct sockaddr *sa, socklen_t sa_len, unsigned attempts,
                     uint64_t attempt_ns, char **version, dv_err_t *err);

#endif
