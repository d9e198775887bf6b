/* answer: the responder's answer builder: one DNS query in, one well-formed response out (pure). */
#ifndef DV_ANSWER_H
#define DV_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dns.h"

/* Largest response dv_answer_build() can produce (a 255-byte name, SOA, OPT). */
#define DV_ANSWER_MAX 512

/* UDP payload size advertised in the OPT RR of every EDNS response. */
#define DV_ANSWER_EDNS_UDP DV_DNS_EDNS_UDP_DEFAULT

typedef struct dv_answer_opts {
	int rcode;           /* -1: natural (NOERROR); 0..15: answer with this rcode */
	bool tc;             /* set TC (records are left out, as a truncating server does) */
	bool reflect;        /* echo the query with QR (and rcode/TC if asked) set, nothing else */
	bool wrong_id;       /* fault: ID ^ 0x8000 */
	bool wrong_question; /* fault: the question (and owners) become "x.<qname>" */
} dv_answer_opts_t;

/* Options that give the correct answer (rcode -1, every flag false). */
void dv_answer_opts_init(dv_answer_opts_t *o);

/*
 * Build the response to the query q[0..qlen) into out[0..cap). Reads no byte at or
 * past q + qlen, writes no byte at or past out + cap; no allocation, no global
 * state: the same input always gives the same output.
 *
 * The response copies ID, opcode, RD and the question byte for byte (case kept),
 * sets QR and AA, and for class IN carries one synthetic record: A (198.18.0.0/15)
 * and AAAA (2001:db8::/32), both derived from a hash of the lower-cased name, or
 * SOA (ns1.<qname> hostmaster.<qname>); any other type gets NODATA with the SOA in
 * the authority section. An OPT RR in the query gets an OPT RR back (UDP size
 * DV_ANSWER_EDNS_UDP, DO copied; EDNS version > 0 gets BADVERS). Opcodes other
 * than QUERY get NOTIMP.
 *
 * A query whose header is readable but that cannot be answered (QDCOUNT != 1, bad
 * name, truncated sections) gets a header-only FORMERR response. A message with QR
 * set is a response, not a query: it gets nothing (-EBADMSG), as real servers do, so
 * two servers (or one whose own address is spoofed as the source) cannot loop.
 *
 * Returns the response length (> 0), or
 *   -EBADMSG  fewer than 12 bytes, or QR set: no response (the caller drops it);
 *   -ENOSPC   cap too small (DV_ANSWER_MAX is always enough for synthesized answers;
 *             with reflect the answer is as long as the query, so give qlen bytes).
 */
int dv_answer_build(const uint8_t *q, size_t qlen, uint8_t *out, size_t cap,
                    const dv_answer_opts_t *o);

/*
 * Fault datagram number seq (deterministic): 1..100 bytes of pseudo-random data
 * that cannot be taken for a response: either shorter than a DNS header or with
 * QR clear. Returns the length written (<= cap), or -ENOSPC when cap < 100.
 */
int dv_answer_garbage(uint64_t seq, uint8_t *out, size_t cap);

/* Parse an rcode: a name (NOERROR, FORMERR, SERVFAIL, NXDOMAIN, NOTIMP, REFUSED,
 * YXDOMAIN, YXRRSET, NXRRSET, NOTAUTH, NOTZONE; any case) or a number 0..15.
 * Returns 0 or -EINVAL. */
int dv_rcode_parse(const char *s, int *out);

#endif
