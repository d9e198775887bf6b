/* test_b64url: base64url without padding: RFC 4648's test vectors, every length's round trip,
 * and the inputs the decoder refuses. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64url.h"

/* RFC 4648 section 10 (base64 and base64url agree on these: no '+' or '/' in them). */
static void test_rfc_vectors(void **state)
{
	static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *coded[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
	char out[16];
	uint8_t back[16];

	(void)state;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		size_t len = strlen(plain[i]);
		assert_int_equal(dv_b64url_encode((const uint8_t *)plain[i], len, out),
		                 strlen(coded[i]));
		assert_string_equal(out, coded[i]);
		assert_int_equal(DV_B64URL_ENC_LEN(len), strlen(coded[i]));
		assert_int_equal(dv_b64url_decode(coded[i], strlen(coded[i]), back), (long)len);
		assert_memory_equal(back, plain[i], len);
	}
}

/* The two characters where base64url differs from base64: 62 is '-', 63 is '_'. */
static void test_url_alphabet(void **state)
{
	const uint8_t in[] = {0xfb, 0xff, 0xbf};
	char out[8];
	uint8_t back[8];

	(void)state;
	assert_int_equal(dv_b64url_encode(in, sizeof(in), out), 4);
	assert_string_equal(out, "-_-_");
	assert_int_equal(dv_b64url_decode("-_-_", 4, back), 3);
	assert_memory_equal(back, in, 3);
}

/* Every length 0..300 of every byte value round-trips, within the stated bounds. */
static void test_round_trip(void **state)
{
	uint8_t in[300], back[DV_B64URL_DEC_MAX(400) + 1];
	char out[DV_B64URL_ENC_LEN(300) + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	for (size_t len = 0; len <= sizeof(in); len++) {
		size_t n = dv_b64url_encode(in, len, out);
		assert_int_equal(n, DV_B64URL_ENC_LEN(len));
		assert_int_equal(out[n], '\0');
		assert_int_not_equal(n % 4, 1);
		assert_true(len <= DV_B64URL_DEC_MAX(n));
		assert_int_equal(dv_b64url_decode(out, n, back), (long)len);
		assert_memory_equal(back, in, len);
	}
}

/* Padding, the base64 alphabet's '+' and '/', a space, a NUL and a lone last character. */
static void test_refused(void **state)
{
	uint8_t back[16];

	(void)state;
	assert_int_equal(dv_b64url_decode("Zg==", 4, back), -1);
	assert_int_equal(dv_b64url_decode("+/+/", 4, back), -1);
	assert_int_equal(dv_b64url_decode("Zm 9", 4, back), -1);
	assert_int_equal(dv_b64url_decode("Zm\0"
	                                  "9",
	                                  4, back),
	                 -1);
	assert_int_equal(dv_b64url_decode("Zm9vY", 5, back), -1);
	assert_int_equal(dv_b64url_decode("Z", 1, back), -1);
	assert_int_equal(dv_b64url_decode("", 0, back), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc_vectors),
	    cmocka_unit_test(test_url_alphabet),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
