/* framing: DNS over TCP message framing (RFC 1035 4.2.2, RFC 7766) and a bounded byte queue. */
#ifndef DV_FRAMING_H
#define DV_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Largest DNS message a two-byte length can carry. */
#define DV_FRAME_MAX 65535u

/*
 * Byte queue: bytes waiting to be written, in order. The buffer grows on demand
 * (doubling) up to max bytes queued; it is compacted, never a ring, so the pending
 * bytes are always one contiguous span. Single-threaded.
 */
typedef struct dv_bq {
	uint8_t *buf;
	size_t head, tail; /* pending bytes are buf[head..tail) */
	size_t cap;        /* allocated bytes */
	size_t max;        /* bound on pending bytes */
} dv_bq_t;

/* An empty queue that will hold at most max bytes (nothing allocated yet). */
void dv_bq_init(dv_bq_t *q, size_t max);
void dv_bq_free(dv_bq_t *q);
static inline size_t dv_bq_len(const dv_bq_t *q)
{
	return q->tail - q->head;
}
static inline const uint8_t *dv_bq_data(const dv_bq_t *q)
{
	return q->buf + q->head;
}
/* Room for n more bytes at the tail: a pointer to write them, then dv_bq_commit(n).
 * NULL when the bound would be passed (nothing changes) or on allocation failure. */
uint8_t *dv_bq_reserve(dv_bq_t *q, size_t n);
void dv_bq_commit(dv_bq_t *q, size_t n);
/* Append n bytes. 0, or -ENOBUFS (bound; nothing appended) / -ENOMEM. */
int dv_bq_put(dv_bq_t *q, const void *data, size_t n);
/* Drop the first n pending bytes (n <= dv_bq_len). */
void dv_bq_consume(dv_bq_t *q, size_t n);

/* Append one message with its two-byte length prefix, atomically: the whole frame or
 * nothing. 0, -EMSGSIZE (len 0 or > DV_FRAME_MAX), -ENOBUFS, -ENOMEM. */
int dv_frame_put(dv_bq_t *q, const uint8_t *msg, size_t len);

/* The messages of the first frames of q (at most max): one iovec each, without its length
 * prefix; returns how many. A datagram kind's queue of datagrams to send. */
int dv_frame_iov(const dv_bq_t *q, struct iovec *iov, int max);
/* Drop the first n frames of q (n <= the frames it holds). */
void dv_frame_drop(dv_bq_t *q, size_t n);

/*
 * Frame reader: one per connection. Feed it the bytes of the stream in chunks of
 * any size (a message split over many reads, many messages in one read); it calls
 * fn once per complete message, in order. A message that lies whole inside a chunk
 * is handed over in place (no copy); a split one is gathered in a buffer that grows
 * to the length of the largest split message (<= DV_FRAME_MAX).
 */
typedef int (*dv_frame_msg_fn)(void *ctx, const uint8_t *msg, size_t len);

typedef struct dv_frame_reader {
	uint8_t hdr[2];
	uint8_t hdr_have; /* 0..2 length bytes seen of the current frame */
	size_t need;      /* length of the current message once hdr_have == 2 */
	uint8_t *buf;     /* gathered bytes of a split message */
	size_t have, cap;
	bool failed; /* a protocol error was seen: every later feed fails */
} dv_frame_reader_t;

void dv_frame_reader_init(dv_frame_reader_t *r);
void dv_frame_reader_free(dv_frame_reader_t *r);
/*
 * Consume data[0..len). Returns 0; -EPROTO on a zero length prefix (the stream is
 * unusable from there on: later calls return -EPROTO too); -ENOMEM; or the first
 * negative value fn returned (the reader stops there, the rest of the chunk unread).
 * msg is valid only during fn.
 */
int dv_frame_read(dv_frame_reader_t *r, const uint8_t *data, size_t len, dv_frame_msg_fn fn,
                  void *ctx);
/* True between frames (no partial length or message held): a clean place for EOF. */
bool dv_frame_reader_idle(const dv_frame_reader_t *r);

#endif
