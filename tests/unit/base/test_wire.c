/* test_wire: the receive path's bounds-checked parsing: names, pointers, sections, comparison. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/wire.h"

/* Response to "a.example A" with one answer whose owner is a pointer to the question. */
static const uint8_t RESP[] = {
	0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,           /* header */
	1, 'a', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 1, 0, 1, /* question */
	0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1,     /* answer */
};

static void test_check_response_ok(void **state)
{
	size_t qlen = 0;

	(void)state;
	assert_true(dv_wire_check_response(RESP, sizeof(RESP), &qlen));
	assert_int_equal(qlen, 15);
	assert_int_equal(dv_wire_question_len(RESP, sizeof(RESP)), 15);
}

static void test_check_response_cut_everywhere(void **state)
{
	size_t len, qlen;

	(void)state;
	for (len = 0; len < sizeof(RESP); len++)
		assert_false(dv_wire_check_response(RESP, len, &qlen));
}

static void test_pointer_loops_and_forward_pointers(void **state)
{
	uint8_t m[sizeof(RESP)];
	size_t qlen;

	(void)state;
	memcpy(m, RESP, sizeof(m));
	m[27] = 0xc0;
	m[28] = 27; /* points at itself */
	assert_false(dv_wire_check_response(m, sizeof(m), &qlen));
	m[28] = 40; /* points forward */
	assert_false(dv_wire_check_response(m, sizeof(m), &qlen));
	m[27] = 0x80; /* reserved label type */
	assert_false(dv_wire_check_response(m, sizeof(m), &qlen));
}

static void test_header_rules(void **state)
{
	uint8_t m[sizeof(RESP)];
	size_t qlen;

	(void)state;
	memcpy(m, RESP, sizeof(m));
	m[2] &= 0x7f; /* QR clear: not a response */
	assert_false(dv_wire_check_response(m, sizeof(m), &qlen));
	memcpy(m, RESP, sizeof(m));
	m[5] = 2; /* two questions */
	assert_false(dv_wire_check_response(m, sizeof(m), &qlen));
	memcpy(m, RESP, sizeof(m));
	m[7] = 0; /* fewer RRs than the datagram holds is fine */
	assert_true(dv_wire_check_response(m, sizeof(m), &qlen));
	m[7] = 2; /* more than it holds is not */
	assert_false(dv_wire_check_response(m, sizeof(m), &qlen));
}

static void test_question_equal(void **state)
{
	uint8_t a[15], b[15];

	(void)state;
	memcpy(a, RESP + 12, 15);
	memcpy(b, RESP + 12, 15);
	assert_true(dv_wire_question_equal(a, 15, b, 15));
	b[1] = 'A';
	assert_true(dv_wire_question_equal(a, 15, b, 15));
	b[14] = 3; /* class CH */
	assert_false(dv_wire_question_equal(a, 15, b, 15));
	memcpy(b, a, 15);
	b[12] = 28; /* type AAAA */
	assert_false(dv_wire_question_equal(a, 15, b, 15));
	assert_false(dv_wire_question_equal(a, 15, b, 14));
}

static void test_name_to_text(void **state)
{
	char buf[64];
	static const uint8_t odd[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 'a', '.', 0xff, 0};

	(void)state;
	dv_wire_name_to_text(RESP, sizeof(RESP), 12, buf, sizeof(buf));
	assert_string_equal(buf, "a.example.");
	dv_wire_name_to_text(odd, sizeof(odd), 12, buf, sizeof(buf));
	assert_string_equal(buf, "a\\.\\255.");
	dv_wire_name_to_text(RESP, sizeof(RESP), 12, buf, 5);
	assert_true(strlen(buf) < 5);
}

static void test_cursor_sticky(void **state)
{
	dv_wire_cursor_t c;

	(void)state;
	dv_wire_cursor_init(&c, RESP, 3, 0);
	assert_int_equal(dv_wire_read16(&c), 0x1234);
	assert_int_equal(dv_wire_read16(&c), 0);
	assert_false(c.ok);
	dv_wire_skip(&c, 0);
	assert_false(c.ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_response_ok),
		cmocka_unit_test(test_check_response_cut_everywhere),
		cmocka_unit_test(test_pointer_loops_and_forward_pointers),
		cmocka_unit_test(test_header_rules),
		cmocka_unit_test(test_question_equal),
		cmocka_unit_test(test_name_to_text),
		cmocka_unit_test(test_cursor_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
