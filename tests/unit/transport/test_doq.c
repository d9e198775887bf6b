/* test_doq: DNS over QUIC's stream logic (src/transport/doq.c, included here to reach its
 * file-private functions; the library's doq.o is then not linked): a query framed for its
 * stream with DNS ID 0, answers gathered from any chunking with one message per stream, the
 * send queue, the error codes' names; and a connection's life before a server answers: one
 * Initial datagram, no queries before the handshake, a retransmission at its deadline, a
 * datagram of garbage ignored, a cancel of an unknown id, freed mid-handshake; the
 * worker's session store (resumption, 0-RTT's remembered parameters). */
#include "../../../src/transport/doq.c"

#include <setjmp.h>
#include <time.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static doq_t *pool(void)
{
	doq_t *q = calloc(1, sizeof(*q));
	assert_non_null(q);
	return q;
}

static void pool_free(doq_t *q)
{
	doq_strm_t *st;

	while (q->opened != NULL)
		strm_put(q, q->opened);
	while ((st = q->spare) != NULL) {
		q->spare = st->next;
		free(st);
	}
	free(q);
}

/* The query on its stream: length, then the message with ID 0 (RFC 9250 4.2.1). */
static void test_query_frame(void **state)
{
	doq_t *q = pool();
	doq_strm_t *st = strm_get(q);
	uint8_t big[3000];

	(void)state;
	assert_int_equal(strm_set_query(st,
	                                (const uint8_t *)"\xab\xcd"
	                                                 "0123456789",
	                                12),
	                 0);
	assert_int_equal(st->qlen, 14);
	assert_memory_equal(st->q,
	                    "\x00\x0c\x00\x00"
	                    "0123456789",
	                    14);
	assert_ptr_equal(st->q, st->qbuf);
	memset(big, 0x5a, sizeof(big));
	strm_put(q, st);
	st = strm_get(q);
	assert_int_equal(strm_set_query(st, big, sizeof(big)), 0); /* past the inline bytes */
	assert_ptr_not_equal(st->q, st->qbuf);
	assert_int_equal(st->q[0], sizeof(big) >> 8);
	assert_int_equal(st->q[1], sizeof(big) & 0xff);
	assert_int_equal(st->q[2], 0);
	assert_int_equal(st->q[3], 0);
	assert_int_equal(st->q[4], 0x5a);
	assert_int_equal(q->open, 1);
	strm_put(q, st);
	assert_int_equal(q->open, 0);
	assert_int_equal(q->nspare, 1); /* records are reused */
	pool_free(q);
}

/* An answer in every chunking: whole at its last byte, bytes past it a protocol error. */
static void test_answer_chunks(void **state)
{
	doq_t *q = pool();
	uint8_t wire[2 + 700];
	size_t sizes[] = {1, 2, 3, 7, 100, sizeof(wire)};

	(void)state;
	wire[0] = 700 >> 8;
	wire[1] = 700 & 0xff;
	for (size_t i = 2; i < sizeof(wire); i++)
		wire[i] = (uint8_t)(i * 13);
	for (size_t k = 0; k < DV_ARRAY_SIZE(sizes); k++) {
		doq_strm_t *st = strm_get(q);
		size_t off = 0;
		int r = 0;
		while (off < sizeof(wire)) {
			size_t n = DV_MIN(sizes[k], sizeof(wire) - off);
			r = strm_take(st, wire + off, n);
			off += n;
			assert_int_equal(r, off == sizeof(wire) ? 1 : 0);
		}
		assert_int_equal(st->alen, sizeof(wire));
		assert_memory_equal(st->a, wire, sizeof(wire));
		strm_put(q, st);
	}
	/* a second message on the stream, in the same chunk or after */
	{
		doq_strm_t *st = strm_get(q);
		uint8_t two[] = {0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 1};
		assert_int_equal(strm_take(st, two, sizeof(two)), -EPROTO);
		strm_put(q, st);
		st = strm_get(q);
		assert_int_equal(strm_take(st, two, 14), 1);
		assert_int_equal(strm_take(st, two + 14, 2), -EPROTO);
		strm_put(q, st);
	}
	/* a zero-length message is never whole (and a FIN then is a stream error) */
	{
		doq_strm_t *st = strm_get(q);
		assert_int_equal(strm_take(st, (const uint8_t *)"\0\0", 2), 0);
		strm_put(q, st);
	}
	pool_free(q);
}

static void test_sendq(void **state)
{
	doq_t *q = pool();
	doq_strm_t *a = strm_get(q), *b = strm_get(q);

	(void)state;
	sendq_push(q, a);
	sendq_push(q, b);
	assert_ptr_equal(q->sendq, a);
	assert_true(a->queued);
	sendq_pop(q);
	assert_false(a->queued);
	assert_ptr_equal(q->sendq, b);
	assert_ptr_equal(q->sendq_tail, b);
	sendq_pop(q);
	assert_null(q->sendq);
	assert_null(q->sendq_tail);
	strm_put(q, a);
	strm_put(q, b);
	pool_free(q);
}

static void test_codes(void **state)
{
	(void)state;
	assert_string_equal(dv_doq_code_name(0x0), "DOQ_NO_ERROR");
	assert_string_equal(dv_doq_code_name(0x1), "DOQ_INTERNAL_ERROR");
	assert_string_equal(dv_doq_code_name(0x2), "DOQ_PROTOCOL_ERROR");
	assert_string_equal(dv_doq_code_name(0x3), "DOQ_REQUEST_CANCELLED");
	assert_string_equal(dv_doq_code_name(0x4), "DOQ_EXCESSIVE_LOAD");
	assert_string_equal(dv_doq_code_name(0x5), "DOQ_UNSPECIFIED_ERROR");
	assert_string_equal(dv_doq_code_name(0xd098ea5e), "DOQ_ERROR_RESERVED");
	assert_string_equal(dv_doq_code_name(0x77), "an unknown code");
}

static unsigned events;
static int on_event(void *ctx, const dv_tp_event_t *ev)
{
	(void)ctx;
	(void)ev;
	events++;
	return 0;
}

/* Before any server answers: the Initial, no queries, a retransmission when it falls due. */
static void test_before_handshake(void **state)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *s = NULL;
	dv_tp_conn_t *c = NULL;
	dv_err_t err = {0};
	struct iovec iov[16];
	uint8_t junk[1200];
	uint64_t at;
	int n;

	(void)state;
	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOQ;
	cfg.sni = "dnsvolley.test";
	assert_int_equal(dv_tp_shared_new(&s, &cfg, &err), 0);
	assert_int_equal(dv_tp_conn_new(&c, s, on_event, NULL), 0);
	n = dv_tp_output(c, iov, 16);
	assert_int_equal(n, 1); /* the Initial: one datagram, padded to 1200 bytes at least */
	assert_in_range(iov[0].iov_len, 1200, DV_DOQ_PKT_MAX);
	dv_tp_consume_dgrams(c, (size_t)n);
	assert_int_equal(dv_tp_output(c, iov, 16), 0);
	assert_false(dv_tp_ready(c));
	assert_int_equal(dv_tp_capacity(c), 0);
	assert_string_equal(dv_tp_full_why(c), "the QUIC handshake is not done");
	assert_int_equal(dv_tp_submit(c, (const uint8_t *)"0123456789ab", 12, 7), -EAGAIN);
	assert_int_equal(dv_tp_cancel(c, 7), 0);
	assert_int_equal(dv_tp_in_flight(c), 0);
	at = dv_tp_next_deadline(c);
	assert_true(at != UINT64_MAX);
	/* a datagram that is no QUIC packet of this connection is dropped, not an error */
	memset(junk, 0x41, sizeof(junk));
	assert_int_equal(dv_tp_input(c, junk, sizeof(junk)), 0);
	assert_int_equal(events, 0);
	/* its deadlines: within a few, the Initial again (the probe timeout; ngtcp2's first
	 * expiry may be another timer of its own) */
	n = 0;
	for (int k = 0; k < 8 && n == 0; k++) {
		uint64_t now;
		at = dv_tp_next_deadline(c);
		assert_true(at != UINT64_MAX);
		/* ngtcp2's clock must not go back: wait for the deadline as the engine does */
		while ((now = dv_now_ns()) < at) {
			struct timespec ts = {0, (long)DV_MIN(at - now, 10 * DV_NS_PER_MS)};
			nanosleep(&ts, NULL);
		}
		assert_int_equal(dv_tp_on_deadline(c, now), 0);
		n = dv_tp_output(c, iov, 16);
	}
	assert_in_range(n, 1, 2);
	dv_tp_consume_dgrams(c, (size_t)n);
	assert_true(dv_tp_next_deadline(c) > at);
	assert_int_equal(events, 0);
	dv_tp_close(c); /* no handshake: no CONNECTION_CLOSE to send */
	dv_tp_conn_free(c);
	dv_tp_shared_free(s);
}

static void test_config(void **state)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *s = NULL;
	dv_err_t err = {0};

	(void)state;
	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOQ;
	cfg.tls_max = 0x0303;
	assert_int_equal(dv_tp_shared_new(&s, &cfg, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "TLS 1.3"));
	cfg.tls_max = 0;
	cfg.ca_file = "/nonexistent/ca.pem";
	assert_int_equal(dv_tp_shared_new(&s, &cfg, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/nonexistent/ca.pem"));
	assert_null(s);
}

/* The worker's session store: the server's parameters (pointers cleared) and GnuTLS's
 * bytes, replaced whole, the one before kept on a refusal, freed with the shared state;
 * a session GnuTLS cannot read leaves a connection with a full handshake to make. */
static void test_session_store(void **state)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *s = NULL;
	dv_tp_conn_t *c = NULL;
	dv_err_t err = {0};
	ngtcp2_transport_params tp, got;
	const uint8_t *data;
	size_t len;
	bool early;
	uint8_t vi[4] = {0, 0, 0, 1};
	struct iovec iov[16];

	(void)state;
	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOQ;
	assert_int_equal(dv_tp_shared_new(&s, &cfg, &err), 0);
	assert_false(session_parts(s, &got, &early, &data, &len)); /* none yet */
	assert_int_equal(session_keep(s, NULL, true, (const uint8_t *)"abc", 3), 0);
	assert_true(session_parts(s, &got, &early, &data, &len));
	assert_false(early); /* no parameters: no 0-RTT */
	assert_int_equal(got.initial_max_streams_bidi, 0);
	assert_int_equal(len, 3);
	assert_memory_equal(data, "abc", 3);
	ngtcp2_transport_params_default(&tp);
	tp.initial_max_streams_bidi = 7;
	tp.initial_max_data = 12345;
	tp.version_info.other_versions = vi;
	tp.version_info.other_versionslen = sizeof(vi);
	tp.version_info_present = 1;
	assert_int_equal(session_keep(s, &tp, false, (const uint8_t *)"xy", 2), 0);
	assert_true(session_parts(s, &got, &early, &data, &len));
	assert_false(early); /* the ticket allows no early data */
	assert_int_equal(session_keep(s, &tp, true, (const uint8_t *)"defgh", 5), 0);
	assert_int_equal(session_keep(s, &tp, true, (const uint8_t *)"", 0), -EINVAL); /* kept */
	assert_true(session_parts(s, &got, &early, &data, &len));
	assert_true(early);
	assert_int_equal(got.initial_max_streams_bidi, 7);
	assert_int_equal(got.initial_max_data, 12345);
	assert_null(got.version_info.other_versions);
	assert_int_equal(got.version_info_present, 0);
	assert_int_equal(len, 5);
	assert_memory_equal(data, "defgh", 5);
	/* not GnuTLS's session data: offered to nobody, the connection starts in full */
	assert_int_equal(dv_tp_conn_new(&c, s, on_event, NULL), 0);
	assert_int_equal(dv_tp_output(c, iov, 16), 1); /* the Initial only */
	assert_false(dv_tp_ready(c));
	assert_int_equal(dv_tp_capacity(c), 0);
	dv_tp_conn_free(c);
	dv_tp_shared_free(s); /* frees the session */
}

/* A NewSessionTicket's extensions: early_data (42) found past the nonce and the ticket;
 * cut or lying lengths are no early data. */
static void test_nst_early(void **state)
{
	static const uint8_t with[] = {0,   0,   0x1c, 0x20, 1, 2, 3, 4, 2, 0xaa, 0xbb, 0, 3,
	                               't', 'k', 't',  0,    8, 0, 5, 0, 0, 0,    42,   0, 0};
	uint8_t m[sizeof(with)];

	(void)state;
	assert_true(nst_allows_early(with, sizeof(with)));
	memcpy(m, with, sizeof(m));
	m[sizeof(m) - 3] = 41; /* another extension in its place */
	assert_false(nst_allows_early(m, sizeof(m)));
	assert_false(nst_allows_early(with, 12)); /* cut inside the ticket */
	memcpy(m, with, sizeof(m));
	m[17] = 0x40; /* extensions longer than the message */
	assert_false(nst_allows_early(m, sizeof(m)));
	assert_false(nst_allows_early(with, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_frame),
	    cmocka_unit_test(test_answer_chunks),
	    cmocka_unit_test(test_sendq),
	    cmocka_unit_test(test_codes),
	    cmocka_unit_test(test_before_handshake),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_session_store),
	    cmocka_unit_test(test_nst_early),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
