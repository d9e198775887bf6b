/* test_util: strict number, rate and duration parsing with their ranges and errors, errors,
 * clocks, argv copies and shell quoting, list checksums (SHA-256 of a file, FIPS 180-4). */
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

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(dv_parse_u64("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(dv_parse_u64("42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(dv_parse_u64("007", 1, 100, &v), 0); /* decimal, not octal */
	assert_int_equal(v, 7);
	/* Both ends of the range are allowed. */
	assert_int_equal(dv_parse_u64("1", 1, 65535, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(dv_parse_u64("65535", 1, 65535, &v), 0);
	assert_int_equal(v, 65535);
	assert_int_equal(dv_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	/* Out of range: -ERANGE, and out is left alone. */
	v = 7;
	assert_int_equal(dv_parse_u64("0", 1, 65535, &v), -ERANGE);
	assert_int_equal(dv_parse_u64("65536", 1, 65535, &v), -ERANGE);
	assert_int_equal(dv_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 7);
	/* Not a whole number: -EINVAL. */
	assert_int_equal(dv_parse_u64(NULL, 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("", 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("-1", 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("+1", 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64(" 1", 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("1 ", 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("1.5", 0, 10, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("0x10", 0, 100, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("1e3", 0, 10000, &v), -EINVAL);
	assert_int_equal(dv_parse_u64("ten", 0, 10, &v), -EINVAL);
	assert_int_equal(v, 7);
}

/* Rates (-Q) and other fractional values. */
static void test_parse_double(void **state)
{
	double d = 7;

	(void)state;
	assert_int_equal(dv_parse_double("20000", 1e-6, 1e9, &d), 0);
	assert_true(d == 20000.0);
	assert_int_equal(dv_parse_double("0.5", 1e-6, 1e9, &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(dv_parse_double("1e3", 1e-6, 1e9, &d), 0);
	assert_true(d == 1000.0);
	assert_int_equal(dv_parse_double("1e9", 1e-6, 1e9, &d), 0); /* the upper end */
	assert_true(d == 1e9);
	assert_int_equal(dv_parse_double("-2.5", -10, 10, &d), 0);
	assert_true(d == -2.5);
	/* Out of range. */
	d = 7;
	assert_int_equal(dv_parse_double("0", 1e-6, 1e9, &d), -ERANGE);
	assert_int_equal(dv_parse_double("-1", 0, 100, &d), -ERANGE);
	assert_int_equal(dv_parse_double("1000000001", 1e-6, 1e9, &d), -ERANGE);
	assert_int_equal(dv_parse_double("1e999", 0, 1e300, &d), -ERANGE); /* overflows */
	assert_true(d == 7);
	/* Not a number. */
	assert_int_equal(dv_parse_double(NULL, 0, 10, &d), -EINVAL);
	assert_int_equal(dv_parse_double("", 0, 10, &d), -EINVAL);
	assert_int_equal(dv_parse_double(" 1", 0, 10, &d), -EINVAL);
	assert_int_equal(dv_parse_double("1 ", 0, 10, &d), -EINVAL);
	assert_int_equal(dv_parse_double("1.5x", 0, 10, &d), -EINVAL);
	assert_int_equal(dv_parse_double("5%", 0, 100, &d), -EINVAL);
	assert_int_equal(dv_parse_double("nan", -1e300, 1e300, &d), -EINVAL);
	assert_int_equal(dv_parse_double("inf", -1e300, 1e300, &d), -EINVAL);
	assert_true(d == 7);
}

static void test_parse_duration(void **state)
{
	uint64_t ns = 7;

	(void)state;
	assert_int_equal(dv_parse_duration_ns("5", &ns), 0);
	assert_int_equal(ns, 5000000000ULL);
	assert_int_equal(dv_parse_duration_ns("0.5", &ns), 0);
	assert_int_equal(ns, 500000000ULL);
	assert_int_equal(dv_parse_duration_ns("2s", &ns), 0);
	assert_int_equal(ns, 2000000000ULL);
	assert_int_equal(dv_parse_duration_ns("250ms", &ns), 0);
	assert_int_equal(ns, 250000000ULL);
	assert_int_equal(dv_parse_duration_ns("1.5ms", &ns), 0);
	assert_int_equal(ns, 1500000ULL);
	assert_int_equal(dv_parse_duration_ns("100us", &ns), 0);
	assert_int_equal(ns, 100000ULL);
	assert_int_equal(dv_parse_duration_ns("0", &ns), 0); /* zero is the caller's to refuse */
	assert_int_equal(ns, 0);
	assert_int_equal(dv_parse_duration_ns("0.0000000004", &ns), 0); /* rounds to 0 ns */
	assert_int_equal(ns, 0);
	assert_int_equal(dv_parse_duration_ns("0.0000000006", &ns), 0); /* rounds to 1 ns */
	assert_int_equal(ns, 1);
	assert_int_equal(dv_parse_duration_ns("10000000", &ns), 0); /* the upper end: 1e7 s */
	assert_int_equal(ns, 10000000ULL * 1000000000ULL);
	/* Out of range. */
	ns = 7;
	assert_int_equal(dv_parse_duration_ns("10000001", &ns), -ERANGE);
	assert_int_equal(dv_parse_duration_ns("-1", &ns), -ERANGE);
	assert_int_equal(dv_parse_duration_ns("-5ms", &ns), -ERANGE);
	assert_int_equal(dv_parse_duration_ns("1000000000", &ns),
	                 -ERANGE); /* not "not a duration" */
	assert_int_equal(dv_parse_duration_ns("2e10ms", &ns),
	                 -ERANGE); /* the range is in seconds */
	assert_int_equal(dv_parse_duration_ns("1e999", &ns), -ERANGE);
	assert_int_equal(ns, 7);
	assert_int_equal(dv_parse_duration_ns("1e9ms", &ns), 0); /* 1e6 s */
	assert_int_equal(ns, 1000000ULL * 1000000000ULL);
	ns = 7;
	/* Not a duration. */
	assert_int_equal(dv_parse_duration_ns(NULL, &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("s", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("ms", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("us", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("5m", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("5ns", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("5 s", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("5ss", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("five", &ns), -EINVAL);
	assert_int_equal(dv_parse_duration_ns("nan", &ns), -EINVAL);
	/* 64 characters and more are refused before parsing. */
	assert_int_equal(
	    dv_parse_duration_ns("0000000000000000000000000000000000000000000000000000000000000001",
	                         &ns),
	    -EINVAL);
	assert_int_equal(
	    dv_parse_duration_ns("000000000000000000000000000000000000000000000000000000000000001",
	                         &ns),
	    0);
	assert_int_equal(ns, 1000000000ULL);
}

static void test_err_and_clocks(void **state)
{
	dv_err_t err;
	char big[600];
	uint64_t a, b;

	(void)state;
	assert_int_equal(dv_err_set(NULL, -EINVAL, "x %d", 1), -EINVAL);
	assert_int_equal(dv_err_set(&err, -ENOENT, "%s: %d", "f", 3), -ENOENT);
	assert_string_equal(err.msg, "f: 3");
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(dv_err_set(&err, 0, "%s", big), 0);
	assert_int_equal(strlen(err.msg), sizeof(err.msg) - 1); /* cut, still terminated */
	a = dv_now_ns();
	b = dv_now_ns();
	assert_true(b >= a);
	assert_true(dv_wall_ns() > 1577836800ULL * DV_NS_PER_S); /* after 2020-01-01 */
}

/*
 * The realtime-minus-monotonic offset the wire clock puts kernel stamps on the monotonic
 * clock with: 2,000 readings agree within 1 ms. Read side by side, a reading is off by any
 * preemption between the two reads (on a busy machine, milliseconds: a wire latency of 0
 * in CI); bracketed and retried, only a thread preempted between every pair of reads of
 * DV_CLOCK_PAIR_TRIES tries could be (and then by half the shortest preemption).
 */
static void test_wall_minus_mono(void **state)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN, v;
	unsigned i;

	(void)state;
	for (i = 0; i < 2000; i++) {
		v = dv_wall_minus_mono_ns();
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	assert_true(lo > 0); /* the epoch is further back than the boot */
	assert_true(hi - lo < (int64_t)DV_NS_PER_MS);
}

static void test_argv_copy(void **state)
{
	char *in[] = {"dnsvolley", "-s", "a b", ""};
	char **v;

	(void)state;
	v = dv_argv_copy(4, in);
	assert_non_null(v);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(v[i], in[i]);
		assert_ptr_not_equal(v[i], in[i]);
	}
	assert_null(v[4]);
	dv_argv_free(v);
	v = dv_argv_copy(0, in);
	assert_non_null(v);
	assert_null(v[0]);
	dv_argv_free(v);
	dv_argv_free(NULL);
}

static void expect_quote(int argc, char *const *argv, const char *want)
{
	char *q = dv_argv_quote(argc, argv);
	assert_non_null(q);
	assert_string_equal(q, want);
	free(q);
}

static void test_argv_quote(void **state)
{
	(void)state;
	expect_quote(0, NULL, "");
	expect_quote(3, (char *[]){"dnsvolley", "-s", "a=127.0.0.1:53"},
	             "dnsvolley -s a=127.0.0.1:53");
	expect_quote(2, (char *[]){"a", ""}, "a ''");
	expect_quote(1, (char *[]){"my list.txt"}, "'my list.txt'");
	expect_quote(1, (char *[]){"it's"}, "'it'\\''s'");
	expect_quote(1, (char *[]){"a\tb"}, "'a\tb'");
	/* Each shell metacharacter makes the word quoted; others ('=', ':', '/', ',') do not. */
	for (const char *m = "'\"\\$`*?;&|<>()"; *m != '\0'; m++) {
		char word[4] = {'x', *m, 'y', '\0'}, want[16];
		char *w = word;
		if (*m == '\'')
			snprintf(want, sizeof(want), "'x'\\''y'");
		else
			snprintf(want, sizeof(want), "'x%cy'", *m);
		expect_quote(1, &w, want);
	}
	expect_quote(1, (char *[]){"--flush=t1=rndc,flush/x"}, "--flush=t1=rndc,flush/x");
}

/* What dv_argv_quote writes, a shell reads back as the same words. */
static void test_argv_quote_round_trip(void **state)
{
	char *words[] = {"printf",   "%s|",         "plain", "",     "two words", "it's",
	                 "\"dq\"",   "back\\slash", "$HOME", "`id`", "*",         "a;b&c|d<e>f(g)",
	                 "tab\there"};
	const char *want = "plain||two words|it's|\"dq\"|back\\slash|$HOME|`id`|*|a;b&c|d<e>f(g)|"
	                   "tab\there|";
	char *cmd = dv_argv_quote((int)DV_ARRAY_SIZE(words), words), out[512];
	FILE *p;
	size_t n;

	(void)state;
	assert_non_null(cmd);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out, want);
	free(cmd);
}

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
	    cmocka_unit_test(test_parse_u64),
	    cmocka_unit_test(test_parse_double),
	    cmocka_unit_test(test_parse_duration),
	    cmocka_unit_test(test_err_and_clocks),
	    cmocka_unit_test(test_wall_minus_mono), /* the wire clock's conversion */
	    cmocka_unit_test(test_argv_copy),
	    cmocka_unit_test(test_argv_quote),
	    cmocka_unit_test(test_argv_quote_round_trip),
	    cmocka_unit_test(test_sha256_vectors),
	    cmocka_unit_test(test_sha256_lengths),
	    cmocka_unit_test(test_sha256_file_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
