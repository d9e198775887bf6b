/* wire: hot-path DNS message helpers: header fields, question comparison, a bounds-checked walk. */
#ifndef DV_WIRE_H
#define DV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#define DV_WIRE_QR(m)     (((m)[2] & DV_DNS_QR) != 0)
#define DV_WIRE_TC(m)     (((m)[2] & DV_DNS_TC) != 0)
#define DV_WIRE_RCODE(m)  ((m)[3] & DV_DNS_RCODE_MASK)
#define DV_WIRE_QDCOUNT(m) dv_wire_get16((m) + 4)

/*
 * Sticky-error cursor: every read checks bounds; after the first failure all
 * reads return 0 and ok stays false, so a chain of reads needs one check.
 */
typedef struct dv_wire_cursor {
	const uint8_t *base; /* whole message, for compression pointers */
	size_t len;
	size_t pos;
	bool ok;
} dv_wire_cursor_t;

void dv_wire_cursor_init(dv_wire_cursor_t *c, const uint8_t *msg, size_t len, size_t pos);
uint16_t dv_wire_read16(dv_wire_cursor_t *c);
void dv_wire_skip(dv_wire_cursor_t *c, size_t n);
/* Skip a (possibly compressed) name; checks label lengths, the 255-octet limit and
 * pointer loops (pointers must go strictly backwards). */
void dv_wire_skip_name(dv_wire_cursor_t *c);

/*
 * Length of the question section (name + type + class) that starts at offset
 * 12 of an uncompressed query (our own compiled queries); 0 if malformed.
 */
size_t dv_wire_question_len(const uint8_t *msg, size_t len);

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
