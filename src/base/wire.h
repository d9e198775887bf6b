/* wire: DNS message helpers: header fields, question comparison, read and write cursors. */
#ifndef DV_WIRE_H
#define DV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/dns.h"

static inline uint16_t dv_wire_get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline void dv_wire_set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint32_t dv_wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Header fields of a message m of at least DV_DNS_HEADER_LEN octets (the caller checks). */
#define DV_WIRE_ID(m)      dv_wire_get16(m)
#define DV_WIRE_QR(m)      (((m)[DV_DNS_OFF_FLAGS1] & DV_DNS_QR) != 0)
#define DV_WIRE_OPCODE(m)  (((m)[DV_DNS_OFF_FLAGS1] & DV_DNS_OPCODE_MASK) >> DV_DNS_OPCODE_SHIFT)
#define DV_WIRE_TC(m)      (((m)[DV_DNS_OFF_FLAGS1] & DV_DNS_TC) != 0)
#define DV_WIRE_RD(m)      (((m)[DV_DNS_OFF_FLAGS1] & DV_DNS_RD) != 0)
#define DV_WIRE_RCODE(m)   ((m)[DV_DNS_OFF_FLAGS2] & DV_DNS_RCODE_MASK)
#define DV_WIRE_QDCOUNT(m) dv_wire_get16((m) + DV_DNS_OFF_QDCOUNT)
#define DV_WIRE_ANCOUNT(m) dv_wire_get16((m) + DV_DNS_OFF_ANCOUNT)
#define DV_WIRE_NSCOUNT(m) dv_wire_get16((m) + DV_DNS_OFF_NSCOUNT)
#define DV_WIRE_ARCOUNT(m) dv_wire_get16((m) + DV_DNS_OFF_ARCOUNT)

/*
 * Sticky-error reading cursor: every read checks bounds; after the first failure
 * all reads return 0 and ok stays false, so a chain of reads needs one check.
 * The small reads are inline: the receive path and the responder use them per
 * datagram.
 */
typedef struct dv_wire_cursor {
	const uint8_t *base; /* whole message, for compression pointers */
	size_t len;
	size_t pos;
	bool ok;
} dv_wire_cursor_t;

static inline void dv_wire_cursor_init(dv_wire_cursor_t *c, const uint8_t *msg, size_t len,
                                       size_t pos)
{
	c->base = msg;
	c->len = len;
	c->pos = pos;
	c->ok = pos <= len;
}

static inline uint16_t dv_wire_read16(dv_wire_cursor_t *c)
{
	uint16_t v;

	if (!c->ok || c->len - c->pos < 2) {
		c->ok = false;
		return 0;
	}
	v = dv_wire_get16(c->base + c->pos);
	c->pos += 2;
	return v;
}

static inline void dv_wire_skip(dv_wire_cursor_t *c, size_t n)
{
	if (!c->ok || c->len - c->pos < n) {
		c->ok = false;
		return;
	}
	c->pos += n;
}

/* Skip a (possibly compressed) name; checks label lengths, the 255-octet limit and
 * pointer loops (pointers must go strictly backwards). */
void dv_wire_skip_name(dv_wire_cursor_t *c);

/*
 * Skip a name without following its compression pointer: labels (each at most
 * 63 octets, at most 255 octets before the end or the pointer), then the root
 * label or a 2-octet pointer whose target is not checked. For a reader that only
 * needs to get past owner names it does not use (the responder).
 */
void dv_wire_skip_name_unfollowed(dv_wire_cursor_t *c);

/*
 * Read an uncompressed name (labels only, no pointer, at most 255 octets, as the
 * question name of a query must be). Returns its wire length (root label
 * included), or 0 with ok false.
 */
size_t dv_wire_read_plain_name(dv_wire_cursor_t *c);

/*
 * Sticky-error writing cursor, the same habit for building a message: a write
 * that does not fit sets ok false and writes nothing; every later write does
 * nothing. len is the number of octets written so far.
 */
typedef struct dv_wire_writer {
	uint8_t *base;
	size_t cap;
	size_t len;
	bool ok;
} dv_wire_writer_t;

static inline void dv_wire_writer_init(dv_wire_writer_t *w, uint8_t *buf, size_t cap)
{
	w->base = buf;
	w->cap = cap;
	w->len = 0;
	w->ok = true;
}

static inline void dv_wire_put(dv_wire_writer_t *w, const void *data, size_t n)
{
	if (!w->ok || w->cap - w->len < n) {
		w->ok = false;
		return;
	}
	memcpy(w->base + w->len, data, n);
	w->len += n;
}

static inline void dv_wire_put8(dv_wire_writer_t *w, uint8_t v)
{
	dv_wire_put(w, &v, 1);
}

static inline void dv_wire_put16(dv_wire_writer_t *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	dv_wire_put(w, b, 2);
}

static inline void dv_wire_put32(dv_wire_writer_t *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	dv_wire_put(w, b, 4);
}

/*
 * Length of the question section (name + type + class) that starts at offset
 * 12 of an uncompressed query (our own compiled queries); 0 if malformed.
 */
size_t dv_wire_question_len(const uint8_t *msg, size_t len);

/*
 * The same for a message that must ask exactly one question (QDCOUNT 1), as a
 * probe query and its answer do: 0 when the header is short, QDCOUNT is not 1 or
 * the question is malformed or compressed.
 */
size_t dv_wire_single_question_len(const uint8_t *msg, size_t len);

/*
 * Build a query header into w: ID 0 (set per send), RD as given, QDCOUNT 1, other
 * counts 0. The question follows it (dv_wire_put the name, then type and class).
 */
void dv_wire_put_query_header(dv_wire_writer_t *w, bool rd);

/*
 * An OPT RR (RFC 6891 section 6.1.2) without its options, DV_DNS_OPT_RR_LEN octets:
 * root owner, TYPE OPT, CLASS = the UDP payload size, TTL = extended-rcode octet,
 * version 0 and flags (DO when dnssec_ok), then RDLENGTH rdlen (the options follow).
 */
void dv_wire_put_opt_rr(dv_wire_writer_t *w, uint16_t payload, uint8_t ext_rcode, bool dnssec_ok,
                        uint16_t rdlen);

/*
 * Check a response datagram's structure: header, exactly one question whose
 * name is uncompressed, and every RR of the answer, authority and additional
 * sections (names, rdlength within bounds). On success returns true and sets
 * *qlen to the question's length (name + 4) at offset 12.
 */
bool dv_wire_check_response(const uint8_t *msg, size_t len, size_t *qlen);

/*
 * Same question? Names compared case-insensitively (ASCII), type and class
 * exactly. Both arguments point at offset 12 of their messages.
 */
bool dv_wire_question_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Presentation form of the uncompressed name at msg[pos] into buf ("www.example.com."). */
void dv_wire_name_to_text(const uint8_t *msg, size_t len, size_t pos, char *buf, size_t size);

#endif
