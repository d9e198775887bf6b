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

#include "transport/conn.h"

/* Every kind has its row, in enum order, with a name, a sentence name, a port, a socket type
 * and every operation (conn.c calls them without a NULL check). */
static void test_rows_whole(void **state)
{
	(void)state;
	for (int k = 0; k < DV_TP_NKINDS; k++) {
		const dv_tp_desc_t *d = dv_tp_desc((dv_tp_kind_t)k);
		const dv_tp_ops_t *o;

		assert_non_null(d);
		assert_int_equal(d->kind, k);
		assert_non_null(d->name);
		assert_true(strlen(d->name) > 0);
		assert_non_null(d->long_name);
		assert_true(d->default_port > 0);
		assert_true(d->sock_type == SOCK_STREAM || d->sock_type == SOCK_DGRAM);
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
	}
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
	for (int k = 0; k < DV_TP_NKINDS; k++)
		assert_int_equal(dv_tp_desc((dv_tp_kind_t)k)->sock_type, SOCK_STREAM);
}

static void test_lists(void **state)
{
	(void)state;
	assert_string_equal(dv_tp_kind_list("udp", false, NULL), "udp, tcp, dot or doh");
	assert_string_equal(dv_tp_kind_list(NULL, false, NULL), "tcp, dot or doh");
	assert_string_equal(dv_tp_kind_list(NULL, true, "-m "), "dot or -m doh");
	assert_string_equal(dv_tp_kind_list("x", true, NULL), "x, dot or doh");
}

static int on_event(void *ctx, const dv_tp_event_t *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

/* No kind has timers yet: every connection says "none", and an expiry does nothing. */
static void test_no_deadlines(void **state)
{
	(void)state;
	for (int k = 0; k < DV_TP_NKINDS; k++) {
		dv_tp_config_t cfg;
		dv_tp_shared_t *s = NULL;
		dv_tp_conn_t *c = NULL;
		dv_err_t err = {0};

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_whole),   cmocka_unit_test(test_names_round_trip),
	    cmocka_unit_test(test_facts),        cmocka_unit_test(test_lists),
	    cmocka_unit_test(test_no_deadlines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
