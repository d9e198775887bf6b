/* test_genlist: domain list loading, dedupe, seeded shuffle and output of dnsvolley-genlist. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "genlist/genlist.h"

static int load(dv_domains_t *d, const char *text, dv_err_t *err)
{
	memset(err, 0, sizeof(*err));
	return dv_domains_load_buffer(d, text, strlen(text), "dom.txt", err);
}

/* The whole output of one spec as a string (caller frees). */
static char *render(const dv_domains_t *d, const dv_genlist_spec_t *spec)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(dv_genlist_write(f, d, spec), 0);
	fclose(f);
	return buf;
}

static void test_load(void **state)
{
	dv_domains_t d;
	dv_err_t err;

	assert_int_equal(load(&d,
	                      "# domains\n"
	                      "\n"
	                      "Example.COM\n"
	                      "  b.org.   # trailing\n"
	                      "c.net\r\n"
	                      "; another comment\n"
	                      "\\065.de",
	                      &err),
	                 0);
	assert_int_equal(d.count, 4);
	assert_string_equal(dv_domains_get(&d, 0), "Example.COM");
	assert_string_equal(dv_domains_get(&d, 1), "b.org.");
	assert_string_equal(dv_domains_get(&d, 2), "c.net");
	assert_string_equal(dv_domains_get(&d, 3), "\\065.de");
	assert_int_equal(d.line[0], 3);
	assert_int_equal(d.line[3], 7);
	assert_string_equal(d.source, "dom.txt");
	dv_domains_free(&d);
	dv_domains_free(&d);
	dv_domains_free(NULL);
}

static void test_bad_lines(void **state)
{
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
	    {"a.com\n\nbad..com\n", "dom.txt:3: empty label in domain 'bad..com'"},
	    {"a.com SOA\n", "dom.txt:1: stray extra field (expected one domain per line): 'SOA'"},
	    {"a.com\nb\\999.com\n", "dom.txt:2: bad escape in domain 'b\\999.com'"},
	    {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.com\n",
	     "dom.txt:1: label longer than 63 octets in domain "
	     "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"},
	    {"", "dom.txt: no domains"},
	    {"# nothing\n\n", "dom.txt: no domains"},
	};
	dv_domains_t d;
	dv_err_t err;

	for (size_t i = 0; i < DV_ARRAY_SIZE(cases); i++) {
		assert_int_equal(load(&d, cases[i].text, &err), -EINVAL);
		assert_string_equal(err.msg, cases[i].msg);
		assert_int_equal(d.count, 0);
		assert_null(d.arena);
	}
}

static void test_dedupe(void **state)
{
	dv_domains_t d;
	dv_err_t err;

	assert_int_equal(load(&d, "a.com\nB.com\nA.COM.\nb.com\nc.com\n\\097.com\nc.com.x\n", &err),
	                 0);
	assert_int_equal(d.count, 7);
	assert_int_equal(dv_domains_dedupe(&d), 3);
	assert_int_equal(d.count, 4);
	assert_string_equal(dv_domains_get(&d, 0), "a.com");
	assert_string_equal(dv_domains_get(&d, 1), "B.com");
	assert_string_equal(dv_domains_get(&d, 2), "c.com");
	assert_string_equal(dv_domains_get(&d, 3), "c.com.x");
	assert_int_equal(d.line[2], 5);
	assert_int_equal(dv_domains_dedupe(&d), 0);
	dv_domains_free(&d);
}

static void test_dedupe_many(void **state)
{
	/* 5000 names, each written twice in different case: half go */
	size_t cap = 5000 * 2 * 24, len = 0;
	char *text = malloc(cap);
	dv_domains_t d;
	dv_err_t err;

	assert_non_null(text);
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, cap - len, "n%d.example\n", i);
	for (int i = 4999; i >= 0; i--)
		len += (size_t)snprintf(text + len, cap - len, "N%d.EXAMPLE.\n", i);
	assert_int_equal(load(&d, text, &err), 0);
	assert_int_equal(d.count, 10000);
	assert_int_equal(dv_domains_dedupe(&d), 5000);
	assert_int_equal(d.count, 5000);
	assert_string_equal(dv_domains_get(&d, 4999), "n4999.example");
	dv_domains_free(&d);
	free(text);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_shuffle(void **state)
{
	char text[8192];
	size_t len = 0;
	dv_domains_t a, b, c;
	dv_err_t err;
	size_t same_ab = 0, same_ac = 0;
	const char *sa[300], *so[300];

	for (int i = 0; i < 300; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "d%d.test\n", i);
	assert_int_equal(load(&a, text, &err), 0);
	assert_int_equal(load(&b, text, &err), 0);
	assert_int_equal(load(&c, text, &err), 0);
	dv_domains_shuffle(&a, 42);
	dv_domains_shuffle(&b, 42);
	dv_domains_shuffle(&c, 43);
	for (size_t i = 0; i < 300; i++) {
		same_ab += strcmp(dv_domains_get(&a, i), dv_domains_get(&b, i)) == 0;
		same_ac += strcmp(dv_domains_get(&a, i), dv_domains_get(&c, i)) == 0;
		sa[i] = dv_domains_get(&a, i);
		/* the line travels with its name */
		assert_int_equal((size_t)atoi(dv_domains_get(&a, i) + 1) + 1, a.line[i]);
	}
	assert_int_equal(same_ab, 300); /* same seed, same order */
	assert_true(same_ac < 30);      /* another seed, another order */
	/* a permutation: sorted, the shuffled names are the originals */
	for (size_t i = 0; i < 300; i++)
		so[i] = dv_domains_get(&b, i);
	qsort(sa, 300, sizeof(sa[0]), cmp_str);
	qsort(so, 300, sizeof(so[0]), cmp_str);
	for (size_t i = 0; i < 300; i++) {
		assert_string_equal(sa[i], so[i]);
		if (i > 0)
			assert_true(strcmp(sa[i - 1], sa[i]) < 0);
	}
	dv_domains_free(&a);
	dv_domains_free(&b);
	dv_domains_free(&c);
}

static void test_splitmix(void **state)
{
	/* reference values of splitmix64 seeded with 0 */
	uint64_t s = 0;
	assert_true(dv_splitmix64(&s) == 0xe220a8397b1dcdafULL);
	assert_true(dv_splitmix64(&s) == 0x6e789e6aa1b965f4ULL);
	assert_true(dv_splitmix64(&s) == 0x06c45d188009454fULL);
}

static void test_specs_and_write(void **state)
{
	dv_domains_t d;
	dv_genlist_spec_t sp;
	dv_err_t err;
	char *out;

	assert_int_equal(load(&d, "a.com\nB.org.\n.\n", &err), 0);

	assert_int_equal(dv_genlist_spec_set(&sp, "SOA", "", "-", &err), 0);
	out = render(&d, &sp);
	assert_string_equal(out, "a.com SOA\nB.org. SOA\n. SOA\n");
	free(out);

	assert_int_equal(dv_genlist_spec_set(&sp, "A", "www.", "x", &err), 0);
	out = render(&d, &sp);
	assert_string_equal(out, "www.a.com A\nwww.B.org. A\nwww. A\n");
	free(out);

	assert_int_equal(dv_genlist_spec_parse(&sp, "MX=mx.txt", &err), 0);
	assert_string_equal(sp.type, "MX");
	assert_string_equal(sp.prefix, "");
	assert_string_equal(sp.path, "mx.txt");
	assert_int_equal(dv_genlist_spec_parse(&sp, "TYPE65:_dns.x=-", &err), 0);
	assert_string_equal(sp.prefix, "_dns.x.");
	out = render(&d, &sp);
	assert_string_equal(out, "_dns.x.a.com TYPE65\n_dns.x.B.org. TYPE65\n_dns.x. TYPE65\n");
	free(out);
	assert_int_equal(dv_genlist_spec_parse(&sp, "aaaa:mail.=o=k", &err), 0);
	assert_string_equal(sp.path, "o=k");
	assert_string_equal(sp.type, "aaaa");

	assert_int_equal(dv_genlist_spec_parse(&sp, "MX", &err), -EINVAL);
	assert_string_equal(err.msg, "--type wants TYPE[:PREFIX]=FILE, got 'MX'");
	assert_int_equal(dv_genlist_spec_parse(&sp, "FOO=x", &err), -EINVAL);
	assert_string_equal(err.msg, "unknown query type 'FOO'");
	assert_int_equal(dv_genlist_spec_parse(&sp, "TYPE70000=x", &err), -EINVAL);
	assert_int_equal(dv_genlist_spec_parse(&sp, "A:a..b=x", &err), -EINVAL);
	assert_string_equal(err.msg, "bad prefix 'a..b'");
	assert_int_equal(dv_genlist_spec_parse(&sp, "A=", &err), -EINVAL);
	dv_domains_free(&d);
}

static void test_check_prefix_length(void **state)
{
	char text[600];
	dv_domains_t d;
	dv_genlist_spec_t sp;
	dv_err_t err;
	char l63[64];

	memset(l63, 'x', 63);
	l63[63] = '\0';
	/* 63*3 + 3 + 58 + 4 = 254 characters: 255 octets on the wire, fits; "www." does not */
	snprintf(text, sizeof(text), "ok.com\n%s.%s.%s.%.58s\n", l63, l63, l63, l63);
	assert_int_equal(load(&d, text, &err), 0);
	assert_int_equal(dv_genlist_spec_set(&sp, "SOA", "", "-", &err), 0);
	assert_int_equal(dv_genlist_check(&d, &sp, &err), 0);
	assert_int_equal(dv_genlist_spec_set(&sp, "A", "www", "-", &err), 0);
	assert_string_equal(sp.prefix, "www.");
	assert_int_equal(dv_genlist_check(&d, &sp, &err), -EINVAL);
	assert_string_equal(
	    err.msg, "dom.txt:2: name longer than 255 octets with prefix 'www.': "
	             "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx....'");
	dv_domains_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_bad_lines),
	    cmocka_unit_test(test_dedupe),
	    cmocka_unit_test(test_dedupe_many),
	    cmocka_unit_test(test_shuffle),
	    cmocka_unit_test(test_splitmix),
	    cmocka_unit_test(test_specs_and_write),
	    cmocka_unit_test(test_check_prefix_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
