/* test_tls: a client and a server TLS machine talking in memory: 1.3 and 1.2, resumption,
 * verification, DoT. */
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
#include "transport/tls.h"
#include "transport/transport.h"
#include "selfsigned.h"

static selfsigned_t cert;

static int setup(void **s)
{
	return selfsigned_make(&cert);
}

static int teardown(void **s)
{
	selfsigned_remove(&cert);
	return 0;
}

typedef struct sink {
	uint8_t buf[256];
	size_t len;
} sink_t;

static int to_sink(void *ctx, const uint8_t *data, size_t len)
{
	sink_t *k = ctx;
	assert_true(k->len + len <= sizeof(k->buf));
	memcpy(k->buf + k->len, data, len);
	k->len += len;
	return 0;
}

/* Move bytes each way until both sides are quiet (bounded). 0 or the first error. */
static int pump(dv_tls_t *a, dv_tls_t *b, sink_t *ka, sink_t *kb)
{
	for (int round = 0; round < 20; round++) {
		dv_bq_t *qa = dv_tls_out(a), *qb = dv_tls_out(b);
		size_t na = dv_bq_len(qa), nb = dv_bq_len(qb);
		int rc;
		if (na == 0 && nb == 0)
			return 0;
		if (na > 0) {
			rc = dv_tls_feed(b, dv_bq_data(qa), na, to_sink, kb);
			dv_bq_consume(qa, na);
			if (rc != 0)
				return rc;
		}
		if (nb > 0) {
			rc = dv_tls_feed(a, dv_bq_data(qb), nb, to_sink, ka);
			dv_bq_consume(qb, nb);
			if (rc != 0)
				return rc;
		}
	}
	fail_msg("TLS exchange did not settle in 20 rounds");
	return -1;
}

static dv_tls_ctx_t *server_ctx(int max_version)
{
	dv_tls_ctx_config_t c = {.server = true,
	                         .cert_file = cert.cert,
	                         .key_file = cert.key,
	                         .max_version = max_version};
	dv_tls_ctx_t *ctx;
	dv_err_t err;
	assert_int_equal(dv_tls_ctx_new(&ctx, &c, &err), 0);
	return ctx;
}

static dv_tls_ctx_t *client_ctx(int max_version, bool no_resume, const char *ca)
{
	dv_tls_ctx_config_t c = {.max_version = max_version, .no_resume = no_resume, .ca_file = ca};
	dv_tls_ctx_t *ctx;
	dv_err_t err;
	assert_int_equal(dv_tls_ctx_new(&ctx, &c, &err), 0);
	return ctx;
}

/* One connection: handshake, a message each way, close_notify. Returns resumed. */
static bool one_conn(dv_tls_ctx_t *cc, dv_tls_ctx_t *sc, const char *version)
{
	dv_tls_t *cl, *sv;
	sink_t kc = {.len = 0}, ks = {.len = 0};
	bool resumed;

	assert_int_equal(dv_tls_new(&cl, cc, "dnsvolley.test", 4096), 0);
	assert_int_equal(dv_tls_new(&sv, sc, NULL, 4096), 0);
	assert_true(dv_bq_len(dv_tls_out(cl)) > 0); /* the ClientHello */
	/* Written before the handshake: held, then sent. */
	assert_int_equal(dv_tls_write(cl, (const uint8_t *)"query", 5), 0);
	assert_int_equal(pump(cl, sv, &kc, &ks), 0);
	assert_true(dv_tls_handshake_done(cl));
	assert_true(dv_tls_handshake_done(sv));
	assert_string_equal(dv_tls_version(cl), version);
	if (!dv_tls_resumed(sv)) { /* a resumed TLS 1.2 server keeps no name */
		assert_non_null(dv_tls_sni(sv));
		assert_string_equal(dv_tls_sni(sv), "dnsvolley.test");
	}
	assert_int_equal(ks.len, 5);
	assert_memory_equal(ks.buf, "query", 5);
	assert_int_equal(dv_tls_write(sv, (const uint8_t *)"answer", 6), 0);
	assert_int_equal(pump(cl, sv, &kc, &ks), 0);
	assert_int_equal(kc.len, 6);
	assert_memory_equal(kc.buf, "answer", 6);
	resumed = dv_tls_resumed(cl);
	assert_int_equal(resumed, dv_tls_resumed(sv));
	dv_tls_close(sv);
	assert_int_equal(pump(cl, sv, &kc, &ks), 0);
	assert_true(dv_tls_peer_closed(cl));
	dv_tls_free(cl);
	dv_tls_free(sv);
	return resumed;
}

static void check_counts(dv_tls_ctx_t *c, uint64_t full, uint64_t resumed)
{
	uint64_t f, r;
	dv_tls_ctx_counts(c, &f, &r);
	assert_int_equal(f, full);
	assert_int_equal(r, resumed);
}

static void resume_run(int version, const char *name)
{
	dv_tls_ctx_t *sc = server_ctx(version), *cc = client_ctx(version, false, NULL);

	assert_false(one_conn(cc, sc, name));
	check_counts(cc, 1, 0);
	assert_true(one_conn(cc, sc, name));
	assert_true(one_conn(cc, sc, name));
	check_counts(cc, 1, 2);
	check_counts(sc, 1, 2);
	dv_tls_ctx_free(cc);
	dv_tls_ctx_free(sc);
}

static void test_tls13_resume(void **s)
{
	resume_run(TLS1_3_VERSION, "TLSv1.3");
}

static void test_tls12_resume(void **s)
{
	resume_run(TLS1_2_VERSION, "TLSv1.2");
}

static void test_no_resume(void **s)
{
	dv_tls_ctx_t *sc = server_ctx(0), *cc = client_ctx(0, true, NULL);

	assert_false(one_conn(cc, sc, "TLSv1.3"));
	assert_false(one_conn(cc, sc, "TLSv1.3"));
	check_counts(cc, 2, 0);
	dv_tls_ctx_free(cc);
	dv_tls_ctx_free(sc);
}

static void test_verify(void **s)
{
	dv_tls_ctx_t *sc = server_ctx(0), *cc = client_ctx(0, false, cert.cert);
	dv_tls_t *cl, *sv;
	sink_t kc = {.len = 0}, ks = {.len = 0};

	/* The right name verifies against the CA file. */
	assert_false(one_conn(cc, sc, "TLSv1.3"));
	check_counts(cc, 1, 0);
	dv_tls_ctx_free(cc);
	/* Another name does not: a clear error, and the machine is dead. (A fresh
	 * context: a session is only ever resumed with the server name it was made for,
	 * as one worker talks to one server.) */
	cc = client_ctx(0, false, cert.cert);
	assert_int_equal(dv_tls_new(&cl, cc, "other.test", 4096), 0);
	assert_int_equal(dv_tls_new(&sv, sc, NULL, 4096), 0);
	assert_int_equal(pump(cl, sv, &kc, &ks), -EPROTO);
	assert_non_null(strstr(dv_tls_error(cl), "certificate"));
	assert_false(dv_tls_handshake_done(cl));
	assert_int_equal(dv_tls_write(cl, (const uint8_t *)"x", 1), -EPROTO);
	dv_tls_free(cl);
	dv_tls_free(sv);
	check_counts(cc, 0, 0);
	dv_tls_ctx_free(cc);
	dv_tls_ctx_free(sc);
}

static void test_bad_files(void **s)
{
	dv_tls_ctx_config_t c = {.ca_file = "/nonexistent/ca.pem"};
	dv_tls_ctx_t *ctx;
	dv_err_t err;

	assert_int_equal(dv_tls_ctx_new(&ctx, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/nonexistent/ca.pem"));
	assert_null(ctx);
}

/* An address literal as the server name: no SNI (RFC 6066 allows names only). */
static void test_sni_literal(void **s)
{
	dv_tls_ctx_t *sc = server_ctx(0), *cc = client_ctx(0, false, NULL);
	dv_tls_t *cl, *sv;
	sink_t kc = {.len = 0}, ks = {.len = 0};

	assert_int_equal(dv_tls_new(&cl, cc, "127.0.0.1", 4096), 0);
	assert_int_equal(dv_tls_new(&sv, sc, NULL, 4096), 0);
	assert_int_equal(pump(cl, sv, &kc, &ks), 0);
	assert_true(dv_tls_handshake_done(sv));
	assert_null(dv_tls_sni(sv));
	dv_tls_free(cl);
	dv_tls_free(sv);
	dv_tls_ctx_free(cc);
	dv_tls_ctx_free(sc);
}

typedef struct err_log {
	unsigned errors, other;
	char what[160];
} err_log_t;

static int err_ev(void *ctx, const dv_tp_event_t *ev)
{
	err_log_t *l = ctx;
	if (ev->kind == DV_TP_EV_PROTO_ERROR) {
		l->errors++;
		snprintf(l->what, sizeof(l->what), "%s", ev->what);
	} else {
		l->other++;
	}
	return 0;
}

/* DoT to a port that speaks plain DNS over TCP: one PROTO_ERROR naming the handshake. */
static void test_dot_plain_port(void **s)
{
	const uint8_t dns[] = {0, 12, 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0};
	dv_tp_config_t cfg;
	dv_tp_shared_t *sh;
	dv_tp_conn_t *c;
	err_log_t log = {0};
	uint8_t q[12] = {0};

	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOT;
	assert_int_equal(dv_tp_shared_new(&sh, &cfg, NULL), 0);
	assert_int_equal(dv_tp_conn_new(&c, sh, err_ev, &log), 0);
	assert_int_equal(dv_tp_submit(c, q, sizeof(q), 1), 0);
	assert_int_equal(dv_tp_input(c, dns, sizeof(dns)), -EPROTO);
	assert_int_equal(log.errors, 1);
	assert_int_equal(log.other, 0);
	assert_non_null(strstr(log.what, "TLS handshake failed"));
	assert_int_equal(dv_tp_submit(c, q, sizeof(q), 2), -EPIPE);
	assert_int_equal(dv_tp_input(c, dns, sizeof(dns)), -EPROTO);
	assert_int_equal(dv_tp_eof(c), 0);
	assert_int_equal(log.errors, 1);
	dv_tp_conn_free(c);
	dv_tp_shared_free(sh);
}

/* A server that answers in plain DNS over TCP: the client fails the handshake. */
static void test_not_tls(void **s)
{
	dv_tls_ctx_t *cc = client_ctx(0, false, NULL);
	dv_tls_t *cl;
	sink_t k = {.len = 0};
	const uint8_t dns[] = {0, 12, 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0};

	assert_int_equal(dv_tls_new(&cl, cc, NULL, 4096), 0);
	assert_int_equal(dv_tls_feed(cl, dns, sizeof(dns), to_sink, &k), -EPROTO);
	assert_non_null(strstr(dv_tls_error(cl), "handshake"));
	dv_tls_free(cl);
	dv_tls_ctx_free(cc);
}

typedef struct dot_log {
	unsigned answers, handshakes, resumed, closed;
} dot_log_t;

static int dot_ev(void *ctx, const dv_tp_event_t *ev)
{
	dot_log_t *l = ctx;
	if (ev->kind == DV_TP_EV_ANSWER) {
		assert_int_equal(ev->len, 12);
		l->answers++;
	} else if (ev->kind == DV_TP_EV_HANDSHAKE) {
		l->handshakes++;
		l->resumed += ev->resumed;
	} else if (ev->kind == DV_TP_EV_CLOSED) {
		l->closed++;
	} else {
		fail_msg("unexpected event %d", ev->kind);
	}
	return 0;
}

/* The server side of DoT: echo every framed message back. */
static int echo(void *ctx, const uint8_t *msg, size_t len)
{
	return dv_frame_put(ctx, msg, len);
}

typedef struct dot_server {
	dv_tls_t *t;
	dv_frame_reader_t rd;
	dv_bq_t back;
} dot_server_t;

static int server_plain(void *ctx, const uint8_t *data, size_t len)
{
	dot_server_t *sv = ctx;
	return dv_frame_read(&sv->rd, data, len, echo, &sv->back);
}

/* Byte shuttle between a dv_tp_conn_t and a DoT server, 7 bytes at a time to the server. */
static void dot_pump(dv_tp_conn_t *c, dot_server_t *sv)
{
	for (int round = 0; round < 200; round++) {
		struct iovec iov;
		dv_bq_t *so = dv_tls_out(sv->t);
		bool moved = false;
		if (dv_tp_output(c, &iov, 1) == 1) {
			size_t n = iov.iov_len < 7 ? iov.iov_len : 7;
			assert_int_equal(dv_tls_feed(sv->t, iov.iov_base, n, server_plain, sv), 0);
			dv_tp_consume(c, n);
			moved = true;
		}
		if (dv_bq_len(&sv->back) > 0) {
			assert_int_equal(
			    dv_tls_write(sv->t, dv_bq_data(&sv->back), dv_bq_len(&sv->back)), 0);
			dv_bq_consume(&sv->back, dv_bq_len(&sv->back));
		}
		if (dv_bq_len(so) > 0) {
			assert_int_equal(dv_tp_input(c, dv_bq_data(so), dv_bq_len(so)), 0);
			dv_bq_consume(so, dv_bq_len(so));
			moved = true;
		}
		if (!moved)
			return;
	}
	fail_msg("DoT exchange did not settle");
}

static void test_dot_conn(void **s)
{
	dv_tls_ctx_t *sc = server_ctx(0);
	dv_tp_config_t cfg;
	dv_tp_shared_t *sh;
	dv_tp_conn_t *c;
	dot_server_t sv;
	dot_log_t log = {0};
	uint8_t q[12] = {0xab, 0xcd};
	uint64_t full, resumed;

	dv_tp_config_init(&cfg);
	cfg.kind = DV_TP_DOT;
	cfg.sni = "dnsvolley.test";
	assert_int_equal(dv_tp_shared_new(&sh, &cfg, NULL), 0);
	for (int conn = 0; conn < 2; conn++) {
		memset(&log, 0, sizeof(log));
		dv_frame_reader_init(&sv.rd);
		dv_bq_init(&sv.back, 1 << 16);
		assert_int_equal(dv_tls_new(&sv.t, sc, NULL, 1 << 16), 0);
		assert_int_equal(dv_tp_conn_new(&c, sh, dot_ev, &log), 0);
		assert_false(dv_tp_ready(c));
		for (int i = 0; i < 3; i++)
			assert_int_equal(dv_tp_submit(c, q, sizeof(q), (uint64_t)i), 0);
		dot_pump(c, &sv);
		assert_true(dv_tp_ready(c));
		assert_int_equal(log.handshakes, 1);
		assert_int_equal(log.resumed, conn == 1);
		assert_int_equal(log.answers, 3);
		dv_tls_close(sv.t);
		dot_pump(c, &sv);
		assert_int_equal(log.closed, 1);
		assert_int_equal(dv_tp_submit(c, q, sizeof(q), 9), -EPIPE);
		dv_tp_conn_free(c);
		dv_tls_free(sv.t);
		dv_frame_reader_free(&sv.rd);
		dv_bq_free(&sv.back);
	}
	dv_tp_shared_handshakes(sh, &full, &resumed);
	assert_int_equal(full, 1);
	assert_int_equal(resumed, 1);
	dv_tp_shared_free(sh);
	dv_tls_ctx_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tls13_resume),   cmocka_unit_test(test_tls12_resume),
	    cmocka_unit_test(test_no_resume),      cmocka_unit_test(test_verify),
	    cmocka_unit_test(test_bad_files),      cmocka_unit_test(test_not_tls),
	    cmocka_unit_test(test_dot_conn),       cmocka_unit_test(test_sni_literal),
	    cmocka_unit_test(test_dot_plain_port),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
