/* test_wire: bounds-checked parsing (names, pointers, sections, comparison) and the writer. */
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
    0x12, 0x34, 0x81, 0x80, 0,   1,   0,   1,   0,   0,   0, 0,               /* header */
    1,    'a',  7,    'e',  'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 1,   0, 1,    /* question */
    0xc0, 12,   0,    1,    0,   1,   0,   0,   0,   60,  0, 4, 192, 0, 2, 1, /* answer */
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

static void test_read_plain_name(void **state)
{
	static const uint8_t labels[] = {1, 'a', 2, 'b', 'c', 0, 0xff};
	static const uint8_t ptr[] = {1, 'a', 0xc0, 0};
	static const uint8_t ext[] = {0x41, 'a', 0};
	uint8_t longname[300];
	dv_wire_cursor_t c;
	size_t i;

	(void)state;
	dv_wire_cursor_init(&c, labels, sizeof(labels), 0);
	assert_int_equal(dv_wire_read_plain_name(&c), 6);
	assert_true(c.ok);
	assert_int_equal(c.pos, 6);
	/* cut anywhere inside the name: 0 and not ok */
	for (i = 0; i < 6; i++) {
		dv_wire_cursor_init(&c, labels, i, 0);
		assert_int_equal(dv_wire_read_plain_name(&c), 0);
		assert_false(c.ok);
	}
	dv_wire_cursor_init(&c, ptr, sizeof(ptr), 0);
	assert_int_equal(dv_wire_read_plain_name(&c), 0); /* no pointer in a plain name */
	assert_false(c.ok);
	dv_wire_cursor_init(&c, ext, sizeof(ext), 0);
	assert_int_equal(dv_wire_read_plain_name(&c), 0);
	assert_false(c.ok);
	/* 255 octets (root included) pass, 256 do not: labels of 63 + 1 */
	memset(longname, 'x', sizeof(longname));
	for (i = 0; i < 4; i++)
		longname[i * 64] = 63; /* 4 * 64 = 256 octets before the root */
	longname[192] = 61;            /* 3 * 64 + 62 = 254, root at 254: 255 in all */
	longname[254] = 0;
	dv_wire_cursor_init(&c, longname, sizeof(longname), 0);
	assert_int_equal(dv_wire_read_plain_name(&c), 255);
	longname[192] = 62; /* root at 255: 256 in all */
	longname[254] = 'x';
	longname[255] = 0;
	dv_wire_cursor_init(&c, longname, sizeof(longname), 0);
	assert_int_equal(dv_wire_read_plain_name(&c), 0);
	assert_false(c.ok);
}

static void test_skip_name_unfollowed(void **state)
{
	/* a pointer forward (to offset 40, past the end) is skipped, not followed */
	static const uint8_t fwd[] = {1, 'a', 0xc0, 40, 0xaa};
	static const uint8_t root[] = {0, 0xaa};
	static const uint8_t ext[] = {0x80, 'a', 0};
	dv_wire_cursor_t c;

	(void)state;
	dv_wire_cursor_init(&c, fwd, sizeof(fwd), 0);
	dv_wire_skip_name_unfollowed(&c);
	assert_true(c.ok);
	assert_int_equal(c.pos, 4);
	dv_wire_cursor_init(&c, fwd, 3, 0); /* pointer cut in half */
	dv_wire_skip_name_unfollowed(&c);
	assert_false(c.ok);
	dv_wire_cursor_init(&c, root, sizeof(root), 0);
	dv_wire_skip_name_unfollowed(&c);
	assert_true(c.ok);
	assert_int_equal(c.pos, 1);
	dv_wire_cursor_init(&c, ext, sizeof(ext), 0);
	dv_wire_skip_name_unfollowed(&c);
	assert_false(c.ok);
	/* the checking skip refuses the forward pointer */
	dv_wire_cursor_init(&c, fwd, sizeof(fwd), 0);
	dv_wire_skip_name(&c);
	assert_false(c.ok);
}

static void test_writer(void **state)
{
	uint8_t buf[8];
	dv_wire_writer_t w;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	dv_wire_writer_init(&w, buf, 7);
	dv_wire_put16(&w, 0x1234);
	dv_wire_put32(&w, 0xa0b0c0d0);
	dv_wire_put8(&w, 0x42);
	assert_true(w.ok);
	assert_int_equal(w.len, 7);
	assert_memory_equal(buf, ((const uint8_t[]){0x12, 0x34, 0xa0, 0xb0, 0xc0, 0xd0, 0x42}), 7);
	dv_wire_put8(&w, 1); /* no room: sticky failure, nothing written */
	assert_false(w.ok);
	assert_int_equal(w.len, 7);
	assert_int_equal(buf[7], 0xee);
	dv_wire_writer_init(&w, buf, 3);
	dv_wire_put16(&w, 1);
	dv_wire_put16(&w, 2); /* 4 > 3: refused whole */
	dv_wire_put(&w, "", 0);
	assert_false(w.ok);
	assert_int_equal(w.len, 2);
	assert_int_equal(buf[2], 0xa0);
}

/* The header accessors and the 32-bit read, on RESP. */
static void test_header_fields(void **state)
{
	static const uint8_t be[4] = {0x80, 0x01, 0x02, 0xff};

	(void)state;
	assert_int_equal(DV_WIRE_ID(RESP), 0x1234);
	assert_true(DV_WIRE_QR(RESP));
	assert_true(DV_WIRE_RD(RESP));
	assert_false(DV_WIRE_TC(RESP));
	assert_int_equal(DV_WIRE_OPCODE(RESP), 0);
	assert_int_equal(DV_WIRE_RCODE(RESP), 0);
	assert_int_equal(DV_WIRE_QDCOUNT(RESP), 1);
	assert_int_equal(DV_WIRE_ANCOUNT(RESP), 1);
	assert_int_equal(DV_WIRE_NSCOUNT(RESP), 0);
	assert_int_equal(DV_WIRE_ARCOUNT(RESP), 0);
	assert_int_equal(dv_wire_get32(be), 0x800102ffu);
}

/* One question exactly, never a short header; the same length as dv_wire_question_len. */
static void test_single_question_len(void **state)
{
	uint8_t m[sizeof(RESP)];

	(void)state;
	assert_int_equal(dv_wire_single_question_len(RESP, sizeof(RESP)), 15);
	assert_int_equal(dv_wire_single_question_len(RESP, 11), 0);
	assert_int_equal(dv_wire_single_question_len(RESP, 12 + 14), 0); /* class cut */
	memcpy(m, RESP, sizeof(m));
	m[5] = 2; /* QDCOUNT 2 */
	assert_int_equal(dv_wire_single_question_len(m, sizeof(m)), 0);
	m[5] = 0;
	assert_int_equal(dv_wire_single_question_len(m, sizeof(m)), 0);
	m[5] = 1;
	m[12] = 0xc0; /* a compressed question name */
	assert_int_equal(dv_wire_single_question_len(m, sizeof(m)), 0);
}

/* The query header and the OPT RR, octet by octet. */
static void test_put_header_and_opt(void **state)
{
	static const uint8_t hdr_rd[12] = {0, 0, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	static const uint8_t opt_do[11] = {0, 0, 41, 0x04, 0xd0, 1, 0, 0x80, 0, 0, 12};
	static const uint8_t opt[11] = {0, 0, 41, 0x02, 0x00, 0, 0, 0, 0, 0, 0};
	uint8_t buf[16];
	dv_wire_writer_t w;

	(void)state;
	dv_wire_writer_init(&w, buf, sizeof(buf));
	dv_wire_put_query_header(&w, true);
	assert_true(w.ok);
	assert_int_equal(w.len, DV_DNS_HEADER_LEN);
	assert_memory_equal(buf, hdr_rd, 12);
	dv_wire_writer_init(&w, buf, sizeof(buf));
	dv_wire_put_query_header(&w, false);
	assert_int_equal(buf[2], 0);
	dv_wire_writer_init(&w, buf, sizeof(buf));
	dv_wire_put_opt_rr(&w, 1232, 1, true, 12);
	assert_true(w.ok);
	assert_int_equal(w.len, DV_DNS_OPT_RR_LEN);
	assert_memory_equal(buf, opt_do, 11);
	dv_wire_writer_init(&w, buf, sizeof(buf));
	dv_wire_put_opt_rr(&w, 512, 0, false, 0);
	assert_memory_equal(buf, opt, 11);
	assert_int_equal(buf[DV_DNS_OPT_OFF_FLAGS], 0);
	dv_wire_writer_init(&w, buf, DV_DNS_OPT_RR_LEN - 1); /* one octet short */
	dv_wire_put_opt_rr(&w, 512, 0, false, 0);
	assert_false(w.ok);
	dv_wire_writer_init(&w, buf, DV_DNS_HEADER_LEN - 1);
	dv_wire_put_query_header(&w, true);
	assert_false(w.ok);
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
	    cmocka_unit_test(test_read_plain_name),
	    cmocka_unit_test(test_skip_name_unfollowed),
	    cmocka_unit_test(test_writer),
	    cmocka_unit_test(test_header_fields),
	    cmocka_unit_test(test_single_question_len),
	    cmocka_unit_test(test_put_header_and_opt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
