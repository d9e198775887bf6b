/* test_kinds: the table of transport kinds: every row is whole, names and aliases find their
 * row, the phrases the command line builds from it, and the facts callers read. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "echo_kind.h"
#include "transport/conn.h"

/* A row whole: a name, a sentence name, a port, a socket type, every operation (conn.c calls
 * them without a NULL check), timers exactly when it has the operations for them, and no
 * conn.c TLS over datagrams (a datagram kind with TLS does its own). */
static void row_whole(const dv_tp_desc_t *d)
{
	const dv_tp_ops_t *o;

	assert_non_null(d);
	assert_non_null(d->name);
	assert_true(strlen(d->name) > 0);
	assert_non_null(d->long_name);
	assert_true(d->default_port > 0);
	assert_true(d->sock_type == SOCK_STREAM || d->sock_type == SOCK_DGRAM);
	assert_true(d->sock_type == SOCK_STREAM || !d->tls || d->own_tls);
	assert_true(d->tls || !d->own_tls);
	assert_true(d->alpn == NULL || (d->tls && d->alpn_label != NULL));
	assert_true(!d->tls || d->setup_what != NULL);
	o = d->ops;
	assert_non_null(o);
	assert_non_null(o->shared_init);
	assert_non_null(o->attach);
	assert_non_null(o->detach);
	assert_non_null(o->submit);
	assert_non_null(o->input);
	assert_non_null(o->pump);
	assert_non_null(o->capacity);
	assert_non_null(o->full_why);
	assert_non_null(o->cancel);
	assert_non_null(o->in_flight);
	assert_non_null(o->settled);
	assert_non_null(o->eof_cut);
	assert_non_null(o->close);
	assert_non_null(o->next_deadline);
	assert_non_null(o->on_deadline);
	assert_int_equal(d->timers, o->next_deadline != dv_tp_no_deadline);
	assert_int_equal(d->timers, o->on_deadline != dv_tp_no_expiry);
}

/* Every kind has its row, in enum order, whole; so is the tests' own echo kind. */
static void test_rows_whole(void **state)
{
	(void)state;
	for (int k = 0; k < DV_TP_NKINDS; k++) {
		assert_int_equal(dv_tp_desc((dv_tp_kind_t)k)->kind, k);
		row_whole(dv_tp_desc((dv_tp_kind_t)k));
	}
	row_whole(&echo_desc);
}

/* A name finds its row and the row gives the name back; names are unique; aliases and other
 * cases parse (results files) but the command line's exact lookup refuses them. */
static void test_names_round_trip(void **state)
{
	dv_tp_kind_t k;

	(void)state;
	for (int i = 0; i < DV_TP_NKINDS; i++) {
		const dv_tp_desc_t *d = dv_tp_desc((dv_tp_kind_t)i);
		assert_ptr_equal(dv_tp_desc_find(d->name), d);
		assert_string_equal(dv_tp_kind_name(d->kind), d->name);
		assert_int_equal(dv_tp_kind_parse(d->name, &k), 0);
		assert_int_equal(k, d->kind);
		if (d->alias != NULL) {
			assert_int_equal(dv_tp_kind_parse(d->alias, &k), 0);
			assert_int_equal(k, d->kind);
			assert_null(dv_tp_desc_find(d->alias));
		}
		for (int j = 0; j < i; j++)
			assert_string_not_equal(dv_tp_desc((dv_tp_kind_t)j)->name, d->name);
	}
	assert_int_equal(dv_tp_kind_parse("DoT", &k), 0);
	assert_int_equal(k, DV_TP_DOT);
	assert_int_equal(dv_tp_kind_parse("https", &k), 0);
	assert_int_equal(k, DV_TP_DOH);
	assert_null(dv_tp_desc_find("DoT"));
	assert_null(dv_tp_desc_find("udp"));
	assert_null(dv_tp_desc_find(""));
	assert_int_equal(dv_tp_kind_parse("udp", &k), -EINVAL);
	assert_int_equal(dv_tp_kind_parse("quic", &k), -EINVAL);
}

/* The facts that were spread over five files before the table: now read from it. */
static void test_facts(void **state)
{
	const dv_tp_desc_t *tcp = dv_tp_desc(DV_TP_TCP), *dot = dv_tp_desc(DV_TP_DOT),
	                   *doh = dv_tp_desc(DV_TP_DOH);

	(void)state;
	assert_string_equal(tcp->name, "tcp");
	assert_string_equal(dot->name, "dot");
	assert_string_equal(doh->name, "doh");
	assert_int_equal(tcp->default_port, 53);
	assert_int_equal(dot->default_port, 853);
	assert_int_equal(doh->default_port, 443);
	assert_false(tcp->tls);
	assert_true(dot->tls);
	assert_true(doh->tls);
	assert_null(tcp->alpn);
	assert_null(dot->alpn);
	assert_string_equal(doh->alpn, "h2");
	assert_string_equal(tcp->long_name, "TCP");
	assert_string_equal(dot->long_name, "DNS over TLS");
	assert_string_equal(doh->long_name, "DNS over HTTPS");
	assert_false(tcp->answer_ids);
	assert_false(dot->answer_ids);
	assert_true(doh->answer_ids);
	for (int k = 0; k < DV_TP_NKINDS; k++) {
		const dv_tp_desc_t *d = dv_tp_desc((dv_tp_kind_t)k);
		if (k == DV_TP_DOQ)
			continue;
		assert_int_equal(d->sock_type, SOCK_STREAM);
		assert_false(d->own_tls);
		assert_false(d->timers);
	}
}

/* DNS over QUIC: the fourth kind, one line of DV_TP_KINDS and doq.c. */
static void test_doq_facts(void **state)
{
	const dv_tp_desc_t *doq = dv_tp_desc_find("doq");

	(void)state;
	assert_non_null(doq);
	assert_int_equal(doq->kind, DV_TP_DOQ);
	assert_int_equal(doq->default_port, 853);
	assert_int_equal(doq->sock_type, SOCK_DGRAM);
	assert_true(doq->tls);
	assert_true(doq->own_tls);
	assert_true(doq->timers);
	assert_true(doq->answer_ids);
	assert_string_equal(doq->alpn, "doq");
	assert_string_equal(doq->long_name, "DNS over QUIC");
}

static void test_lists(void **state)
{
	(void)state;
	assert_string_equal(dv_tp_kind_list("udp", false, NULL), "udp, tcp, dot, doh or doq");
	assert_string_equal(dv_tp_kind_list(NULL, false, NULL), "tcp, dot, doh or doq");
	assert_string_equal(dv_tp_kind_list(NULL, true, "-m "), "dot, -m doh or -m doq");
	assert_string_equal(dv_tp_kind_list("x", true, NULL), "x, dot, doh or doq");
}

/* The events a connection reported: how many of each kind. */
typedef struct seen {
	unsigned n[DV_TP_EV_PROTO_ERROR + 1];
	bool resumed;
} seen_t;

static int on_event(void *ctx, const dv_tp_event_t *ev)
{
	seen_t *s = ctx;

	if (s != NULL) {
		s->n[ev->kind]++;
		s->resumed = s->resumed || ev->resumed;
	}
	return 0;
}

/* The table's kinds without timers (all but DoQ): every connection says "none", and an
 * expiry does nothing (the engine arms no timer for them). */
static void test_no_deadlines(void **state)
{
	(void)state;
	for (int k = 0; k < DV_TP_NKINDS; k++) {
		dv_tp_config_t cfg;
		dv_tp_shared_t *s = NULL;
		dv_tp_conn_t *c = NULL;
		dv_err_t err = {0};

		if (dv_tp_desc((dv_tp_kind_t)k)->timers)
			continue;
		dv_tp_config_init(&cfg);
		cfg.kind = (dv_tp_kind_t)k;
		assert_int_equal(dv_tp_shared_new(&s, &cfg, &err), 0);
		assert_int_equal(dv_tp_conn_new(&c, s, on_event, NULL), 0);
		assert_int_equal(dv_tp_next_deadline(c), UINT64_MAX);
		assert_int_equal(dv_tp_on_deadline(c, 1), 0);
		dv_tp_conn_free(c);
		dv_tp_shared_free(s);
	}
}

/* A datagram kind with its own TLS (the tests' echo kind, through dv_tp_config_t.desc): conn.c
 * makes no TLS context nor layer (the first output is the kind's HELO as it is), each iovec
 * of dv_tp_output is one datagram and dv_tp_consume_dgrams drops whole ones; the kind's
 * handshake is counted by dv_tp_shared_handshakes; its deadline is the kind's. */
static void test_own_tls_datagrams(void **state)
{
	dv_tp_config_t cfg;
	dv_tp_shared_t *s = NULL;
	dv_tp_conn_t *c = NULL;
	dv_err_t err = {0};
	struct iovec iov[8];
	uint8_t q1[20] = {0x12, 0x34}, q2[30] = {0x56, 0x78};
	uint64_t full, resumed, before;
	seen_t seen = {0};

	(void)state;
	dv_tp_config_init(&cfg);
	cfg.desc = &echo_desc;
	cfg.ca_file = "/nonexistent/ca.pem"; /* would fail a TLS context: none is made */
	assert_ptr_equal(dv_tp_config_desc(&cfg), &echo_desc);
	memset(&echo_counts, 0, sizeof(echo_counts));
	echo_rto_ns = DV_NS_PER_S;
	echo_ack_delay_ns = DV_NS_PER_MS;
	assert_int_equal(dv_tp_shared_new(&s, &cfg, &err), 0);
	before = dv_now_ns();
	assert_int_equal(dv_tp_conn_new(&c, s, on_event, &seen), 0);
	assert_false(dv_tp_ready(c));
	assert_int_equal(dv_tp_output(c, iov, 8), 1);
	assert_int_equal(iov[0].iov_len, 4);
	assert_memory_equal(iov[0].iov_base, "HELO", 4);
	assert_true(dv_tp_next_deadline(c) >= before + DV_NS_PER_S);
	assert_int_equal(dv_tp_submit(c, q1, sizeof(q1), 1), 0);
	assert_int_equal(dv_tp_submit(c, q2, sizeof(q2), 2), 0);
	assert_int_equal(dv_tp_output(c, iov, 8), 3);
	assert_int_equal(iov[1].iov_len, sizeof(q1));
	assert_memory_equal(iov[1].iov_base, q1, sizeof(q1));
	assert_int_equal(iov[2].iov_len, sizeof(q2));
	assert_int_equal(dv_tp_output(c, iov, 2), 2); /* at most max */
	dv_tp_consume_dgrams(c, 2);
	assert_int_equal(dv_tp_output(c, iov, 8), 1);
	assert_int_equal(iov[0].iov_len, sizeof(q2));
	assert_memory_equal(iov[0].iov_base, q2, sizeof(q2));
	dv_tp_consume_dgrams(c, 1);
	assert_int_equal(dv_tp_output(c, iov, 8), 0);
	/* the peer's HELO: the kind's handshake, once, counted as a full one */
	assert_int_equal(dv_tp_input(c, (const uint8_t *)"HELO", 4), 0);
	assert_int_equal(dv_tp_input(c, (const uint8_t *)"HELO", 4), 0);
	assert_int_equal(seen.n[DV_TP_EV_HANDSHAKE], 1);
	assert_false(seen.resumed);
	assert_true(dv_tp_ready(c));
	dv_tp_shared_handshakes(s, &full, &resumed);
	assert_int_equal(full, 1);
	assert_int_equal(resumed, 0);
	assert_int_equal(dv_tp_next_deadline(c), UINT64_MAX);
	/* a PING: one deadline, whose expiry queues one PONG */
	assert_int_equal(dv_tp_input(c, (const uint8_t *)"PING", 4), 0);
	assert_true(dv_tp_next_deadline(c) != UINT64_MAX);
	assert_int_equal(dv_tp_on_deadline(c, dv_tp_next_deadline(c)), 0);
	assert_int_equal(echo_counts.deadlines, 1);
	assert_int_equal(dv_tp_output(c, iov, 8), 1);
	assert_memory_equal(iov[0].iov_base, "PONG", 4);
	assert_int_equal(dv_tp_next_deadline(c), UINT64_MAX);
	/* a datagram of nothing it knows: a protocol error, after which nothing expires */
	assert_int_equal(dv_tp_input(c, (const uint8_t *)"XY", 2), -EPROTO);
	assert_int_equal(seen.n[DV_TP_EV_PROTO_ERROR], 1);
	assert_int_equal(dv_tp_on_deadline(c, UINT64_MAX - 1), 0);
	assert_int_equal(echo_counts.deadlines, 1);
	dv_tp_conn_free(c);
	dv_tp_shared_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_whole),
	    cmocka_unit_test(test_names_round_trip),
	    cmocka_unit_test(test_facts),
	    cmocka_unit_test(test_doq_facts),
	    cmocka_unit_test(test_lists),
	    cmocka_unit_test(test_no_deadlines),
	    cmocka_unit_test(test_own_tls_datagrams),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
