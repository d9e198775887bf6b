/* test_qflags: per-line query flags parsed and compiled into a text list's queries
 * (src/input/qflags.c through dv_querylist_load_buffer). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "input/qflags.h"
#include "input/querylist.h"

static void test_parse(void **state)
{
	dv_qflags_t f;
	char msg[200];
	const char *s = "+do,+cd,-rd,ecs=198.51.100.77/20,+nsid";

	(void)state;
	assert_int_equal(dv_qflags_parse(s, strlen(s), &f, msg, sizeof(msg)), 0);
	assert_true(f.edns && f.dnssec_ok);
	assert_int_equal(f.set3, 0x10);
	assert_int_equal(f.clear2, 0x01);
	/* ECS: code 8, length 7, family 1, /20, scope 0, 198.51.96 (bits past /20 cleared) */
	static const uint8_t want[] = {0, 8, 0, 7, 0, 1, 20, 0, 198, 51, 96, 0, 3, 0, 0};
	assert_int_equal(f.opts_len, sizeof(want));
	assert_memory_equal(f.opts, want, sizeof(want));
	assert_int_equal(dv_qflags_parse("+x", 2, &f, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "'+x' is not a flag"));
	assert_int_equal(dv_qflags_parse("ecs=::/129", 10, &f, msg, sizeof(msg)), -EINVAL);
	assert_int_equal(dv_qflags_parse("ecs=::/0", 8, &f, msg, sizeof(msg)), 0);
	assert_int_equal(f.opts_len, 8); /* family 2, /0: no address octets */
}

/* A list mixing plain and flagged lines: per-query question lengths, exact bytes. */
static void test_list(void **state)
{
	const char *text = "a.example. A\nb.example. A,+do,+ad\nc.example. IN TXT,-rd\n";
	dv_querylist_options_t o;
	dv_querylist_t ql;
	dv_err_t err = {{0}};
	size_t len;
	const uint8_t *q;

	(void)state;
	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_load_buffer(&ql, text, strlen(text), "t", &o, &err), 0);
	assert_int_equal(ql.count, 3);
	assert_non_null(ql.qlen);
	assert_int_equal(dv_querylist_question_len(&ql, 0), 15);
	assert_int_equal(dv_querylist_question_len(&ql, 1), 15);
	q = dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 12 + 15);
	assert_int_equal(q[2], 0x01);
	q = dv_querylist_get(&ql, 1, &len);
	assert_int_equal(len, 12 + 15 + 11);
	assert_int_equal(q[2], 0x01);
	assert_int_equal(q[3], 0x20);
	assert_int_equal(q[11], 1);
	assert_int_equal(q[12 + 15 + 7], 0x80); /* DO: the OPT RR's flags */
	q = dv_querylist_get(&ql, 2, &len);
	assert_int_equal(len, 12 + 15);
	assert_int_equal(q[2], 0x00);
	dv_querylist_free(&ql);
	/* Without flags no per-query lengths are kept: the list is as before. */
	assert_int_equal(dv_querylist_load_buffer(&ql, "a.example. A\n", 13, "t", &o, &err), 0);
	assert_null(ql.qlen);
	dv_querylist_free(&ql);
	/* Flags on a middle field: refused, with the line. */
	assert_int_equal(dv_querylist_load_buffer(&ql, "x. A,+do IN\n", 12, "t", &o, &err),
	                 -EINVAL);
	assert_non_null(strstr(err.msg, "t:1: query flags follow the line's last field"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
