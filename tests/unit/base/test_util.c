/* test_util: list checksums (SHA-256 of a file, FIPS 180-4 vectors). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/util.h"

/* SHA-256 hex of len bytes of data, through a temporary file. */
static void file_hash(const void *data, size_t len, char hex[65])
{
	char path[] = "/tmp/dv_test_util.XXXXXX";
	int fd = mkstemp(path);
	dv_err_t err = {{0}};

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(dv_sha256_file(path, hex, &err), 0);
	unlink(path);
}

static void test_sha256_vectors(void **state)
{
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmno"
	                   "pjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	char hex[65];

	(void)state;
	file_hash("", 0, hex);
	assert_string_equal(hex,
	                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	file_hash("abc", 3, hex);
	assert_string_equal(hex,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	file_hash(m448, strlen(m448), hex);
	assert_string_equal(hex,
	                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	file_hash(m896, strlen(m896), hex);
	assert_string_equal(hex,
	                    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/* Padding edges (55, 56, 64 bytes) and a file read in several 64 KiB chunks. */
static void test_sha256_lengths(void **state)
{
	char *a = malloc(1000000), hex[65];

	(void)state;
	assert_non_null(a);
	memset(a, 'a', 1000000);
	file_hash(a, 55, hex);
	assert_string_equal(hex,
	                    "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	file_hash(a, 56, hex);
	assert_string_equal(hex,
	                    "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	file_hash(a, 64, hex);
	assert_string_equal(hex,
	                    "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
	file_hash(a, 1000000, hex);
	assert_string_equal(hex,
	                    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_sha256_file_errors(void **state)
{
	char hex[65] = "x";
	dv_err_t err = {{0}};

	(void)state;
	assert_int_equal(dv_sha256_file("/nonexistent-dir/list.txt", hex, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent-dir/list.txt: No such file or directory");
	assert_string_equal(hex, "");
	strcpy(hex, "x");
	assert_int_equal(dv_sha256_file("-", hex, &err), 0);
	assert_string_equal(hex, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256_vectors),
	    cmocka_unit_test(test_sha256_lengths),
	    cmocka_unit_test(test_sha256_file_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
