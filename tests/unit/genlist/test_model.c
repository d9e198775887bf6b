/* test_model: Zipf sampling against its expected frequencies, type mix, NX share, and exact
 * reproducibility. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "genlist/model.h"

#define PINNED 0x6d3f59795732e00fULL /* seed 99 list (x86-64 glibc libm) */

/* n domains d0.example .. d(n-1).example, in rank order. */
static void make_domains(dv_domains_t *d, size_t n)
{
	size_t cap = n * 24 + 1, len = 0, i;
	char *text = malloc(cap);
	dv_err_t err;

	for (i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "d%zu.example\n", i);
	assert_int_equal(dv_domains_load_buffer(d, text, len, "doms", &err), 0);
	free(text);
}

/* Write the model to memory. */
static char *render(const dv_domains_t *d, const dv_model_t *m, size_t *size)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, size);
	assert_non_null(f);
	assert_int_equal(dv_model_write(f, d, m), 0);
	fclose(f);
	return buf;
}

/* Each of the top 20 ranks within 5 standard deviations of L p_i (fixed seed: exact). */
static void test_zipf_frequencies(void **state)
{
	const size_t n = 1000, draws = 200000;
	static const double ss[] = {0.0, 0.8, 1.0, 1.2};
	size_t *count = calloc(n, sizeof(*count)), i, k, distinct;
	dv_zipf_t z;

	for (k = 0; k < DV_ARRAY_SIZE(ss); k++) {
		uint64_t st = 42;
		memset(count, 0, n * sizeof(*count));
		assert_int_equal(dv_zipf_init(&z, n, ss[k]), 0);
		for (i = 0; i < draws; i++) {
			size_t r = dv_zipf_draw(&z, &st);
			assert_true(r < n);
			count[r]++;
		}
		for (i = 0; i < 20; i++) {
			double p = dv_zipf_p(&z, i), want = p * (double)draws;
			double sd = sqrt((double)draws * p * (1 - p));
			if (fabs((double)count[i] - want) > 5 * sd)
				fail_msg("s=%.1f rank %zu: %zu draws, expected %.0f (sd %.0f)",
				         ss[k], i + 1, count[i], want, sd);
		}
		/* p_1 = 1 / H(N, s): s = 1, N = 1000: H = 7.4855 */
		if (ss[k] == 1.0)
			assert_true(fabs(dv_zipf_p(&z, 0) - 1 / 7.48547086) < 1e-6);
		if (ss[k] == 0.0)
			assert_true(fabs(dv_zipf_p(&z, 999) - 0.001) < 1e-12);
		/* distinct ranks drawn against the formula, within 1% */
		for (i = 0, distinct = 0; i < n; i++)
			distinct += count[i] > 0;
		double e = dv_zipf_expected_distinct(n, ss[k], draws);
		if (fabs((double)distinct - e) > 0.01 * e)
			fail_msg("s=%.1f: %zu distinct, formula %.1f", ss[k], distinct, e);
		dv_zipf_free(&z);
	}
	free(count);
}

static void test_expected_distinct_formula(void **state)
{
	/* s = 0: N (1 - (1 - 1/N)^L) */
	double e = dv_zipf_expected_distinct(100, 0.0, 100);
	assert_true(fabs(e - 100 * (1 - pow(0.99, 100))) < 1e-9);
	/* one draw: one name; a huge list: every name */
	assert_true(fabs(dv_zipf_expected_distinct(5000, 1.0, 1) - 1.0) < 1e-9);
	assert_true(fabs(dv_zipf_expected_distinct(50, 1.0, 100000000ULL) - 50.0) < 1e-6);
	/* figures doc/querylists.md quotes (N = 100,000; L = 100,000 and 1,000,000) */
	assert_int_equal((long)lround(dv_zipf_expected_distinct(100000, 1.0, 1000000)), 80737);
	assert_int_equal((long)lround(dv_zipf_expected_distinct(100000, 1.0, 100000)), 24449);
	assert_int_equal((long)lround(dv_zipf_expected_distinct(100000, 1.2, 1000000)), 46521);
}

static void test_mix_and_nx(void **state)
{
	dv_domains_t d;
	dv_model_t m;
	dv_err_t err;
	size_t size, lines = 0, a = 0, aaaa = 0, https = 0, mx = 0, nx = 0;
	char *out, *line, *save = NULL;

	make_domains(&d, 500);
	dv_model_init(&m);
	m.length = 100000;
	m.nx_share = 0.10;
	m.seed = 7;
	assert_int_equal(dv_model_parse_mix(&m, "A:60,AAAA:25,HTTPS:10,MX:5", &err), 0);
	assert_int_equal(m.ntypes, 4);
	assert_int_equal(dv_model_check(&d, &m, &err), 0);
	out = render(&d, &m, &size);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[300], type[24];
		assert_int_equal(sscanf(line, "%299s %23s", name, type), 2);
		lines++;
		a += strcmp(type, "A") == 0;
		aaaa += strcmp(type, "AAAA") == 0;
		https += strcmp(type, "HTTPS") == 0;
		mx += strcmp(type, "MX") == 0;
		/* an NX name: a 12-character label before dN.example */
		if (strchr(name, '.') - name == DV_NX_LABEL_LEN) {
			nx++;
			assert_int_equal(strncmp(strchr(name, '.') + 1, "d", 1), 0);
		}
	}
	assert_int_equal(lines, 100000);
	assert_int_equal(a + aaaa + https + mx, lines);
	/* binomial sd at most 155: 1% = 1000 is more than 6 sd */
	assert_true(labs((long)a - 60000) < 1000);
	assert_true(labs((long)aaaa - 25000) < 1000);
	assert_true(labs((long)https - 10000) < 1000);
	assert_true(labs((long)mx - 5000) < 1000);
	assert_true(labs((long)nx - 10000) < 1000);
	free(out);

	/* under a zone */
	assert_int_equal(dv_model_set_nx_zone(&m, "nx.test.", &err), 0);
	assert_string_equal(m.nx_zone, "nx.test");
	m.length = 1000;
	m.nx_share = 1.0;
	out = render(&d, &m, &size);
	assert_int_equal(strncmp(out + DV_NX_LABEL_LEN, ".nx.test ", 9), 0);
	free(out);
	dv_domains_free(&d);
}

static void test_reproducible(void **state)
{
	dv_domains_t d;
	dv_model_t m;
	size_t s1, s2, s3;
	char *o1, *o2, *o3;

	make_domains(&d, 300);
	dv_model_init(&m);
	m.length = 5000; /* longer than the domain list */
	m.nx_share = 0.2;
	m.seed = 99;
	o1 = render(&d, &m, &s1);
	o2 = render(&d, &m, &s2);
	assert_int_equal(s1, s2);
	assert_memory_equal(o1, o2, s1);
	m.seed = 100;
	o3 = render(&d, &m, &s3);
	assert_true(s1 != s3 || memcmp(o1, o3, s1) != 0);
	/* the whole list for seed 99, pinned by its FNV-1a hash: lists made with
	 * one version are made again by the next (a generator change shows here) */
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < s1; i++)
		h = (h ^ (uint8_t)o1[i]) * 1099511628211ULL;
	fprintf(stderr, "seed 99: %zu octets, fnv1a %016llx\n", s1, (unsigned long long)h);
	assert_int_equal(h, PINNED);
	free(o1);
	free(o2);
	free(o3);
	dv_domains_free(&d);
}

static void test_bad_specs(void **state)
{
	dv_model_t m;
	dv_err_t err;
	dv_domains_t d;
	char big[300];

	dv_model_init(&m);
	assert_int_equal(dv_model_parse_mix(&m, "A:60,BOGUS:5", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unknown type 'BOGUS'"));
	assert_int_equal(dv_model_parse_mix(&m, "A:60,AAAA", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "needs a weight"));
	assert_int_equal(dv_model_parse_mix(&m, "A:0", &err), -EINVAL);
	assert_int_equal(dv_model_parse_mix(&m, "A:60,", &err), -EINVAL);
	assert_int_equal(dv_model_parse_mix(&m, "A:x", &err), -EINVAL);
	assert_int_equal(dv_model_parse_mix(&m, "TYPE65", &err), 0);
	assert_int_equal(m.ntypes, 1);
	assert_int_equal(dv_model_set_nx_zone(&m, "", &err), -EINVAL);
	/* a 250-octet domain cannot take a 12-character label */
	memset(big, 'a', sizeof(big));
	for (int i = 60; i < 250; i += 61)
		big[i] = '.';
	big[248] = '\n';
	assert_int_equal(dv_domains_load_buffer(&d, big, 249, "doms", &err), 0);
	m.nx_share = 0.5;
	assert_int_equal(dv_model_check(&d, &m, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "doms:1"));
	dv_domains_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zipf_frequencies),
	    cmocka_unit_test(test_expected_distinct_formula),
	    cmocka_unit_test(test_mix_and_nx),
	    cmocka_unit_test(test_reproducible),
	    cmocka_unit_test(test_bad_specs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
