/* test_sha256: SHA-256 against the FIPS 180-4 known-answer vectors, whole and in pieces. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/sha256.h"

static void hex_of(const void *data, size_t len, char hex[65])
{
	dv_sha256_t c;
	uint8_t d[DV_SHA256_LEN];
	dv_sha256_init(&c);
	dv_sha256_update(&c, data, len);
	dv_sha256_final(&c, d);
	dv_sha256_hex(d, hex);
}

static void test_vectors(void **state)
{
	char hex[65];
	(void)state;
	hex_of("", 0, hex);
	assert_string_equal(hex,
	                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, hex);
	assert_string_equal(hex,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hex_of(m448, strlen(m448), hex);
	assert_string_equal(hex,
	                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmno"
	                   "pjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	hex_of(m896, strlen(m896), hex);
	assert_string_equal(hex,
	                    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a_in_odd_chunks(void **state)
{
	(void)state;
	char *a = malloc(1000000);
	assert_non_null(a);
	memset(a, 'a', 1000000);
	dv_sha256_t c;
	uint8_t d[DV_SHA256_LEN];
	char hex[65];
	dv_sha256_init(&c);
	size_t done = 0, step = 1;
	while (done < 1000000) {
		size_t n = DV_MIN(step, 1000000 - done);
		dv_sha256_update(&c, a + done, n);
		done += n;
		step = step * 7 % 997 + 1; /* 1, 8, 57, ... crosses block boundaries every way */
	}
	dv_sha256_final(&c, d);
	dv_sha256_hex(d, hex);
	assert_string_equal(hex,
	                    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* Every length 0..130 hashed whole equals hashed byte by byte (padding edge cases
	 * 55/56/64). */
	for (size_t len = 0; len <= 130; len++) {
		char h1[65], h2[65];
		hex_of(a, len, h1);
		dv_sha256_init(&c);
		for (size_t i = 0; i < len; i++)
			dv_sha256_update(&c, a + i, 1);
		dv_sha256_final(&c, d);
		dv_sha256_hex(d, h2);
		assert_string_equal(h1, h2);
	}
	hex_of(a, 55, hex);
	assert_string_equal(hex,
	                    "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	hex_of(a, 56, hex);
	assert_string_equal(hex,
	                    "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	hex_of(a, 64, hex);
	assert_string_equal(hex,
	                    "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
	free(a);
}

static void test_file(void **state)
{
	(void)state;
	char path[] = "/tmp/test_sha256.XXXXXX", hex[65];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	dv_err_t err;
	assert_int_equal(dv_sha256_file(path, hex, &err), 0);
	assert_string_equal(hex,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	unlink(path);
	assert_true(dv_sha256_file(path, hex, &err) < 0);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(dv_sha256_file("-", hex, &err), 0);
	assert_string_equal(hex, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),
	    cmocka_unit_test(test_million_a_in_odd_chunks),
	    cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
