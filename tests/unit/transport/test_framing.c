/* test_framing: TCP length framing: split, merged and one-byte reads, zero length, partial writes,
 * bounds. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/framing.h"
#include "transport/transport.h"

#define NMSG 5

/* Messages of lengths 1, 12, 300, 65535 and 2, each byte derived from its index. */
static const size_t lens[NMSG] = {1, 12, 300, 65535, 2};

static void fill(uint8_t *m, size_t len, unsigned k)
{
	for (size_t i = 0; i < len; i++)
		m[i] = (uint8_t)(i * 7 + k * 31);
}

typedef struct got {
	unsigned n;
	int fail_at; /* return -ECANCELED for this message number (or -1) */
} got_t;

static int check_msg(void *ctx, const uint8_t *msg, size_t len)
{
	got_t *g = ctx;
	uint8_t *want;

	assert_true(g->n < NMSG);
	assert_int_equal(len, lens[g->n]);
	want = malloc(len);
	fill(want, len, g->n);
	assert_memory_equal(msg, want, len);
	free(want);
	if ((int)g->n == g->fail_at) {
		g->n++;
		return -ECANCELED;
	}
	g->n++;
	return 0;
}

/* The whole stream of the five messages, framed by the writer. */
static dv_bq_t stream(void)
{
	dv_bq_t q;
	uint8_t *m = malloc(65535);

	dv_bq_init(&q, 1 << 20);
	for (unsigned k = 0; k < NMSG; k++) {
		fill(m, lens[k], k);
		assert_int_equal(dv_frame_put(&q, m, lens[k]), 0);
	}
	free(m);
	assert_int_equal(dv_bq_len(&q), 1 + 12 + 300 + 65535 + 2 + 2 * NMSG);
	return q;
}

/* Feed the stream in chunks of size step (0 = all at once). */
static void feed_chunks(size_t step)
{
	dv_bq_t q = stream();
	dv_frame_reader_t r;
	got_t g = {0, -1};
	size_t off = 0, len = dv_bq_len(&q);

	dv_frame_reader_init(&r);
	while (off < len) {
		size_t n = step == 0 || step > len - off ? len - off : step;
		assert_int_equal(dv_frame_read(&r, dv_bq_data(&q) + off, n, check_msg, &g), 0);
		off += n;
	}
	assert_int_equal(g.n, NMSG);
	assert_true(dv_frame_reader_idle(&r));
	dv_frame_reader_free(&r);
	dv_bq_free(&q);
}

static void test_merged(void **s)
{
	feed_chunks(0);
}

static void test_one_byte(void **s)
{
	feed_chunks(1);
}

static void test_split(void **s)
{
	/* Odd sizes that cut length prefixes and messages at every place. */
	feed_chunks(3);
	feed_chunks(13);
	feed_chunks(299);
	feed_chunks(40000);
}

static int count(void *ctx, const uint8_t *msg, size_t len)
{
	(*(unsigned *)ctx)++;
	return 0;
}

static void test_zero_length(void **s)
{
	const uint8_t bad[] = {0, 1, 0xAB, 0, 0, 0, 1, 0xCD};
	dv_frame_reader_t r;
	unsigned n = 0;

	dv_frame_reader_init(&r);
	assert_int_equal(dv_frame_read(&r, bad, 4, count, &n), 0); /* half a length */
	assert_int_equal(dv_frame_read(&r, bad + 4, 1, count, &n), -EPROTO);
	assert_int_equal(n, 1); /* the message before it came out */
	/* Dead from there on, even for good bytes. */
	assert_int_equal(dv_frame_read(&r, bad + 5, 3, count, &n), -EPROTO);
	assert_int_equal(n, 1);
	dv_frame_reader_free(&r);
}

static void test_callback_stops(void **s)
{
	dv_bq_t q = stream();
	dv_frame_reader_t r;
	got_t g = {0, 1};

	dv_frame_reader_init(&r);
	assert_int_equal(dv_frame_read(&r, dv_bq_data(&q), dv_bq_len(&q), check_msg, &g),
	                 -ECANCELED);
	assert_int_equal(g.n, 2);
	dv_frame_reader_free(&r);
	dv_bq_free(&q);
}

static void test_put_bounds(void **s)
{
	static uint8_t big[65536];
	dv_bq_t q;

	dv_bq_init(&q, 100);
	assert_int_equal(dv_frame_put(&q, big, 0), -EMSGSIZE);
	assert_int_equal(dv_frame_put(&q, big, 65536), -EMSGSIZE);
	assert_int_equal(dv_frame_put(&q, big, 60), 0);
	assert_int_equal(dv_frame_put(&q, big, 37), -ENOBUFS); /* 62 + 39 > 100 */
	assert_int_equal(dv_bq_len(&q), 62);
	assert_int_equal(dv_frame_put(&q, big, 36), 0); /* exactly 100 */
	assert_int_equal(dv_bq_len(&q), 100);
	dv_bq_free(&q);
}

/* A queue of datagrams (a SOCK_DGRAM kind's output): each frame one iovec of its message, at
 * most max of them; dropping whole frames leaves the next one first, of 1 to 65535 bytes. */
static void test_frame_iov(void **s)
{
	static uint8_t big[65535 + 8]; /* frame i starts at big + i */
	const size_t dlen[] = {1, 2, 65535, 300, 7};
	struct iovec iov[8];
	dv_bq_t q;
	size_t i;

	(void)s;
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)i;
	dv_bq_init(&q, 1 << 20);
	assert_int_equal(dv_frame_iov(&q, iov, 8), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(dv_frame_put(&q, big + i, dlen[i]), 0);
	assert_int_equal(dv_frame_iov(&q, iov, 8), 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(iov[i].iov_len, dlen[i]);
		assert_memory_equal(iov[i].iov_base, big + i, dlen[i]);
	}
	assert_int_equal(dv_frame_iov(&q, iov, 2), 2);
	dv_frame_drop(&q, 3);
	assert_int_equal(dv_frame_iov(&q, iov, 8), 2);
	assert_int_equal(iov[0].iov_len, 300);
	assert_memory_equal(iov[0].iov_base, big + 3, 300);
	dv_frame_drop(&q, 2);
	assert_int_equal(dv_bq_len(&q), 0);
	assert_int_equal(dv_frame_iov(&q, iov, 8), 0);
	dv_bq_free(&q);
}

/* Partial writes through the transport interface: iovec out, consume a few bytes. */
typedef struct ev_log {
	unsigned answers, closed, errors;
	size_t last_len;
} ev_log_t;

static int on_ev(void *ctx, const dv_tp_event_t *ev)
{
	ev_log_t *l = ctx;
	if (ev->kind == DV_TP_EV_ANSWER) {
		l->answers++;
		l->last_len = ev->len;
	} else if (ev->kind == DV_TP_EV_CLOSED) {
		l->closed++;
	} else if (ev->kind == DV_TP_EV_PROTO_ERROR) {
		l->errors++;
	}
	return 0;
}

static void test_tcp_conn(void **s)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *sh;
	dv_tp_conn_t *c;
	ev_log_t log = {0};
	struct iovec iov[2];
	uint8_t q1[20], q2[30], wire[64];
	size_t got = 0;

	memset(q1, 1, sizeof(q1));
	memset(q2, 2, sizeof(q2));
	dv_tp_config_init(&cfg);
	cfg.out_max = 600;
	assert_int_equal(dv_tp_shared_new(&sh, &cfg, NULL), 0);
	assert_int_equal(dv_tp_conn_new(&c, sh, on_ev, &log), 0);
	assert_true(dv_tp_ready(c));
	assert_int_equal(dv_tp_output(c, iov, 2), 0);
	assert_int_equal(dv_tp_submit(c, q1, sizeof(q1), 1), 0);
	assert_int_equal(dv_tp_submit(c, q2, sizeof(q2), 2), 0);
	assert_int_equal(dv_tp_submit(c, q2, 0, 3), -EMSGSIZE);
	assert_int_equal(dv_tp_output_len(c), 54);
	/* The socket takes 5 bytes, then 40, then the rest. */
	for (size_t step = 5; dv_tp_output(c, iov, 2) == 1; step = 40) {
		size_t n = iov[0].iov_len < step ? iov[0].iov_len : step;
		memcpy(wire + got, iov[0].iov_base, n);
		got += n;
		dv_tp_consume(c, n);
	}
	assert_int_equal(got, 54);
	assert_int_equal(wire[0], 0);
	assert_int_equal(wire[1], 20);
	assert_int_equal(wire[22], 0);
	assert_int_equal(wire[23], 30);
	assert_int_equal(wire[24], 2);
	/* The bound: 600 bytes queued at most, then -EAGAIN. */
	for (int i = 0; i < 18; i++)
		assert_int_equal(dv_tp_submit(c, q2, sizeof(q2), 10 + i), 0);
	assert_int_equal(dv_tp_output_len(c), 18 * 32);
	assert_int_equal(dv_tp_capacity(c), 0);
	assert_int_equal(dv_tp_submit(c, q2, sizeof(q2), 99), -EAGAIN);
	/* Answers back in two reads, the second cut inside the length prefix. */
	assert_int_equal(dv_tp_input(c, wire, 23), 0);
	assert_int_equal(log.answers, 1);
	assert_int_equal(dv_tp_input(c, wire + 23, 31), 0);
	assert_int_equal(log.answers, 2);
	assert_int_equal(log.last_len, 30);
	/* EOF inside a frame is a protocol error; between frames it is a close. */
	assert_int_equal(dv_tp_input(c, wire, 3), 0);
	assert_int_equal(dv_tp_eof(c), -EPROTO);
	assert_int_equal(log.errors, 1);
	assert_int_equal(log.closed, 0);
	assert_int_equal(dv_tp_submit(c, q1, sizeof(q1), 100), -EPIPE);
	dv_tp_conn_free(c);

	assert_int_equal(dv_tp_conn_new(&c, sh, on_ev, &log), 0);
	assert_int_equal(dv_tp_eof(c), 0);
	assert_int_equal(log.closed, 1);
	assert_int_equal(dv_tp_submit(c, q1, sizeof(q1), 1), -EPIPE);
	dv_tp_conn_free(c);
	dv_tp_shared_free(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merged),         cmocka_unit_test(test_one_byte),
	    cmocka_unit_test(test_split),          cmocka_unit_test(test_zero_length),
	    cmocka_unit_test(test_callback_stops), cmocka_unit_test(test_put_bounds),
	    cmocka_unit_test(test_tcp_conn),       cmocka_unit_test(test_frame_iov),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
