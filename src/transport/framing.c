/* framing: DNS over TCP length framing (reader and writer) and the bounded byte queue. */
#include "config.h"

#include "transport/framing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/wire.h"

#define BQ_MIN 512

void dv_bq_init(dv_bq_t *q, size_t max)
{
	memset(q, 0, sizeof(*q));
	q->max = max;
}

void dv_bq_free(dv_bq_t *q)
{
	free(q->buf);
	dv_bq_init(q, q->max);
}

uint8_t *dv_bq_reserve(dv_bq_t *q, size_t n)
{
	size_t len = dv_bq_len(q), cap;
	uint8_t *nb;

	if (n > q->max || len > q->max - n)
		return NULL;
	if (q->cap - q->tail >= n)
		return q->buf + q->tail;
	if (q->head > 0) { /* compact first: the pending span moves to the front */
		memmove(q->buf, q->buf + q->head, len);
		q->head = 0;
		q->tail = len;
		if (q->cap - q->tail >= n)
			return q->buf + q->tail;
	}
	cap = q->cap ? q->cap : BQ_MIN;
	while (cap < len + n)
		cap *= 2;
	nb = realloc(q->buf, cap);
	if (nb == NULL)
		return NULL;
	q->buf = nb;
	q->cap = cap;
	return q->buf + q->tail;
}

void dv_bq_commit(dv_bq_t *q, size_t n)
{
	q->tail += n;
}

int dv_bq_put(dv_bq_t *q, const void *data, size_t n)
{
	uint8_t *p;

	if (n == 0)
		return 0;
	p = dv_bq_reserve(q, n);
	if (p == NULL)
		return (n > q->max || dv_bq_len(q) > q->max - n) ? -ENOBUFS : -ENOMEM;
	memcpy(p, data, n);
	dv_bq_commit(q, n);
	return 0;
}

void dv_bq_consume(dv_bq_t *q, size_t n)
{
	q->head += n;
	if (q->head == q->tail)
		q->head = q->tail = 0;
}

int dv_frame_put(dv_bq_t *q, const uint8_t *msg, size_t len)
{
	uint8_t *p;

	if (len == 0 || len > DV_FRAME_MAX)
		return -EMSGSIZE;
	p = dv_bq_reserve(q, len + 2);
	if (p == NULL)
		return dv_bq_len(q) > q->max - (len + 2) || len + 2 > q->max ? -ENOBUFS : -ENOMEM;
	p[0] = (uint8_t)(len >> 8);
	p[1] = (uint8_t)len;
	memcpy(p + 2, msg, len);
	dv_bq_commit(q, len + 2);
	return 0;
}

int dv_frame_iov(const dv_bq_t *q, struct iovec *iov, int max)
{
	const uint8_t *p = dv_bq_data(q), *end = p + dv_bq_len(q);
	int n = 0;

	while (n < max && end - p >= 2) {
		size_t len = dv_wire_get16(p);
		iov[n].iov_base = (void *)(p + 2);
		iov[n].iov_len = len;
		n++;
		p += 2 + len;
	}
	return n;
}

void dv_frame_drop(dv_bq_t *q, size_t n)
{
	size_t off = 0;

	while (n-- > 0 && dv_bq_len(q) - off >= 2)
		off += 2 + dv_wire_get16(dv_bq_data(q) + off);
	dv_bq_consume(q, off);
}

void dv_frame_reader_init(dv_frame_reader_t *r)
{
	memset(r, 0, sizeof(*r));
}

void dv_frame_reader_free(dv_frame_reader_t *r)
{
	free(r->buf);
	dv_frame_reader_init(r);
}

bool dv_frame_reader_idle(const dv_frame_reader_t *r)
{
	return r->hdr_have == 0;
}

/* Length bytes of the next frame; 1 when the length is complete, 0 when data ran out. */
static int take_header(dv_frame_reader_t *r, const uint8_t **p, const uint8_t *end)
{
	while (r->hdr_have < 2 && *p < end)
		r->hdr[r->hdr_have++] = *(*p)++;
	if (r->hdr_have < 2)
		return 0;
	r->need = dv_wire_get16(r->hdr);
	r->have = 0;
	if (r->need == 0) {
		r->failed = true;
		return -EPROTO;
	}
	return 1;
}

/* Gather part of a split message; 1 once it is whole. */
static int gather(dv_frame_reader_t *r, const uint8_t **p, const uint8_t *end)
{
	size_t n = r->need - r->have;

	if (r->cap < r->need) {
		uint8_t *nb = realloc(r->buf, r->need);
		if (nb == NULL)
			return -ENOMEM;
		r->buf = nb;
		r->cap = r->need;
	}
	if ((size_t)(end - *p) < n)
		n = (size_t)(end - *p);
	memcpy(r->buf + r->have, *p, n);
	r->have += n;
	*p += n;
	return r->have == r->need;
}

int dv_frame_read(dv_frame_reader_t *r, const uint8_t *data, size_t len, dv_frame_msg_fn fn,
                  void *ctx)
{
	const uint8_t *p = data, *end = data + len;
	int rc;

	if (r->failed)
		return -EPROTO;
	while (p < end) {
		if (r->hdr_have < 2) {
			rc = take_header(r, &p, end);
			if (rc <= 0)
				return rc;
		}
		if (r->have == 0 && (size_t)(end - p) >= r->need) {
			/* Whole in this chunk: hand it over in place. */
			const uint8_t *msg = p;
			p += r->need;
			r->hdr_have = 0;
			rc = fn(ctx, msg, r->need);
		} else {
			rc = gather(r, &p, end);
			if (rc <= 0)
				return rc;
			r->hdr_have = 0;
			r->have = 0;
			rc = fn(ctx, r->buf, r->need);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}
