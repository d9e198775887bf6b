/* wire: bounds-checked DNS parsing for the receive path; no allocation, no ldns. */
#include "config.h"

#include "base/wire.h"

#include <stdio.h>
#include <string.h>

void dv_wire_skip_name(dv_wire_cursor_t *c)
{
	size_t pos = c->pos, total = 0, limit = c->pos;
	bool jumped = false;

	if (!c->ok)
		return;
	for (;;) {
		uint8_t l;
		if (pos >= c->len)
			goto bad;
		l = c->base[pos];
		if ((l & DV_DNS_PTR) == DV_DNS_PTR) {
			size_t target;
			if (pos + 1 >= c->len)
				goto bad;
			target = ((size_t)(l & 0x3f) << 8) | c->base[pos + 1];
			/* Pointers must point strictly backwards: no loops possible. */
			if (target >= limit)
				goto bad;
			if (!jumped)
				c->pos = pos + 2;
			jumped = true;
			limit = target;
			pos = target;
			continue;
		}
		if ((l & DV_DNS_PTR) != 0) /* 0x40 / 0x80: obsolete extended labels */
			goto bad;
		total += (size_t)l + 1;
		if (total > DV_DNS_NAME_MAX)
			goto bad;
		if (l == 0) {
			if (!jumped)
				c->pos = pos + 1;
			return;
		}
		pos += (size_t)l + 1;
	}
bad:
	c->ok = false;
}

void dv_wire_skip_name_unfollowed(dv_wire_cursor_t *c)
{
	size_t start = c->pos;

	while (c->ok) {
		uint8_t l;

		if (c->pos >= c->len) {
			c->ok = false;
			return;
		}
		l = c->base[c->pos];
		if ((l & DV_DNS_PTR) == DV_DNS_PTR) {
			dv_wire_skip(c, 2);
			return;
		}
		if (l > DV_DNS_LABEL_MAX || c->pos - start + 1 + l > DV_DNS_NAME_MAX) {
			c->ok = false;
			return;
		}
		dv_wire_skip(c, 1u + l);
		if (l == 0)
			return;
	}
}

size_t dv_wire_read_plain_name(dv_wire_cursor_t *c)
{
	size_t start = c->pos;

	while (c->ok) {
		uint8_t l;

		if (c->pos >= c->len) {
			c->ok = false;
			break;
		}
		l = c->base[c->pos];
		/* > 63: a pointer or a reserved label type; the limit counts the root label */
		if (l > DV_DNS_LABEL_MAX || c->pos - start + 1 + l > DV_DNS_NAME_MAX) {
			c->ok = false;
			break;
		}
		dv_wire_skip(c, 1u + l);
		if (l == 0)
			return c->pos - start;
	}
	return 0;
}

size_t dv_wire_question_len(const uint8_t *msg, size_t len)
{
	size_t pos = DV_DNS_HEADER_LEN;

	while (pos < len) {
		uint8_t l = msg[pos];
		if (l == 0) {
			pos += 1 + 4;
			return pos <= len ? pos - DV_DNS_HEADER_LEN : 0;
		}
		if (l > DV_DNS_LABEL_MAX)
			return 0;
		pos += (size_t)l + 1;
	}
	return 0;
}

size_t dv_wire_single_question_len(const uint8_t *msg, size_t len)
{
	if (len < DV_DNS_HEADER_LEN || DV_WIRE_QDCOUNT(msg) != 1)
		return 0;
	return dv_wire_question_len(msg, len);
}

void dv_wire_put_query_header(dv_wire_writer_t *w, bool rd)
{
	dv_wire_put16(w, 0);
	dv_wire_put8(w, rd ? DV_DNS_RD : 0);
	dv_wire_put8(w, 0);
	dv_wire_put16(w, 1); /* QDCOUNT */
	dv_wire_put16(w, 0);
	dv_wire_put16(w, 0);
	dv_wire_put16(w, 0);
}

void dv_wire_put_opt_rr(dv_wire_writer_t *w, uint16_t payload, uint8_t ext_rcode, bool dnssec_ok,
                        uint16_t rdlen)
{
	dv_wire_put8(w, 0); /* root owner */
	dv_wire_put16(w, DV_DNS_TYPE_OPT);
	dv_wire_put16(w, payload);
	dv_wire_put8(w, ext_rcode);
	dv_wire_put8(w, 0); /* version */
	dv_wire_put16(w, dnssec_ok ? DV_DNS_EDNS_DO : 0);
	dv_wire_put16(w, rdlen);
}

bool dv_wire_check_response(const uint8_t *msg, size_t len, size_t *qlen)
{
	dv_wire_cursor_t c;
	unsigned rrs, i;
	size_t qend;

	if (len < DV_DNS_HEADER_LEN || !DV_WIRE_QR(msg) || DV_WIRE_QDCOUNT(msg) != 1)
		return false;
	/* The question's name must be uncompressed (nothing precedes it to point to). */
	dv_wire_cursor_init(&c, msg, len, DV_DNS_HEADER_LEN);
	dv_wire_skip_name(&c);
	dv_wire_skip(&c, 4);
	if (!c.ok)
		return false;
	qend = c.pos;
	rrs = (unsigned)DV_WIRE_ANCOUNT(msg) + DV_WIRE_NSCOUNT(msg) + DV_WIRE_ARCOUNT(msg);
	for (i = 0; i < rrs && c.ok; i++) {
		uint16_t rdlen;
		dv_wire_skip_name(&c);
		dv_wire_skip(&c, 8); /* type, class, ttl */
		rdlen = dv_wire_read16(&c);
		dv_wire_skip(&c, rdlen);
	}
	if (!c.ok)
		return false;
	*qlen = qend - DV_DNS_HEADER_LEN;
	return true;
}

static inline uint8_t lower(uint8_t ch)
{
	return (ch >= 'A' && ch <= 'Z') ? (uint8_t)(ch + 32) : ch;
}

bool dv_wire_question_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t i;

	if (alen != blen)
		return false;
	if (memcmp(a, b, alen) == 0)
		return true;
	/* Same length: compare the name part case-insensitively, type/class exactly. */
	if (alen < 5 || memcmp(a + alen - 4, b + alen - 4, 4) != 0)
		return false;
	for (i = 0; i < alen - 4; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

void dv_wire_name_to_text(const uint8_t *msg, size_t len, size_t pos, char *buf, size_t size)
{
	size_t out = 0;

	if (size == 0)
		return;
	while (pos < len && msg[pos] != 0 && msg[pos] <= DV_DNS_LABEL_MAX) {
		uint8_t l = msg[pos++], k;
		for (k = 0; k < l && pos < len; k++, pos++) {
			uint8_t ch = msg[pos];
			char tmp[5];
			int n;
			if (ch == '.' || ch == '\\')
				n = snprintf(tmp, sizeof(tmp), "\\%c", ch);
			else if (ch > 0x20 && ch < 0x7f)
				n = snprintf(tmp, sizeof(tmp), "%c", ch);
			else
				n = snprintf(tmp, sizeof(tmp), "\\%03u", ch);
			if (out + (size_t)n + 2 > size)
				goto done;
			memcpy(buf + out, tmp, (size_t)n);
			out += (size_t)n;
		}
		if (out + 2 > size)
			goto done;
		buf[out++] = '.';
	}
	if (out == 0 && size > 1)
		buf[out++] = '.';
done:
	buf[out] = '\0';
}
