/* test_tsig: -y keys, the list signed ahead of the run (checked by ldns's own TSIG
 * verifier; servers' checks with the engine's IDs are tests/integration/tsig.sh), and
 * answers' TSIG errors (src/input/tsig.c). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "input/tsig.h"

#define SECRET "c2VjcmV0LXNlY3JldC1zZWNyZXQ="

static void test_key_parse(void **state)
{
	dv_tsig_key_t k;
	dv_err_t err = {{0}};
	static const struct {
		const char *spec, *alg;
		size_t mac;
	} ok[] = {{"kk.:" SECRET, "hmac-md5", 16},
	          {"hmac-sha1:kk:" SECRET, "hmac-sha1", 20},
	          {"hmac-sha224:kk:" SECRET, "hmac-sha224", 28},
	          {"HMAC-SHA256:kk:" SECRET, "hmac-sha256", 32},
	          {"hmac-sha384:kk:" SECRET, "hmac-sha384", 48},
	          {"hmac-sha512:kk:" SECRET, "hmac-sha512", 64}};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(dv_tsig_key_parse(&k, ok[i].spec, &err), 0);
		assert_string_equal(k.alg, ok[i].alg);
		assert_int_equal(k.mac_len, ok[i].mac);
		assert_int_equal(k.secret_len, 20); /* "secret-secret-secret" */
		assert_int_equal(k.name_len, 4);    /* \002kk\000 */
	}
	assert_int_equal(dv_tsig_key_parse(&k, "nocolon", &err), -EINVAL);
	assert_int_equal(dv_tsig_key_parse(&k, "hmac-sha3:kk:" SECRET, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'hmac-sha3' is not a TSIG algorithm"));
	assert_int_equal(dv_tsig_key_parse(&k, "kk:abc", &err), -EINVAL);
}

/* The signed query verifies with ldns (the algorithms ldns knows); a flipped MAC bit does not. */
static void test_sign_verifies(void **state)
{
	static const char *const algs[] = {"hmac-md5", "hmac-sha1", "hmac-sha256"};
	dv_querylist_options_t o;
	dv_err_t err = {{0}};

	(void)state;
	dv_querylist_options_init(&o);
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		char spec[128];
		dv_tsig_key_t k;
		dv_querylist_t ql;
		uint8_t wire[512];
		size_t len;
		ldns_pkt *pkt = NULL;
		ldns_rdf *mac = NULL;

		snprintf(spec, sizeof(spec), "%s:kk.:%s", algs[a], SECRET);
		assert_int_equal(dv_tsig_key_parse(&k, spec, &err), 0);
		assert_int_equal(dv_querylist_load_buffer(&ql, "a.example. A\nb.example. TXT\n", 28,
		                                          "t", &o, &err),
		                 0);
		assert_int_equal(dv_tsig_sign_list(&ql, &k, (uint64_t)time(NULL), &err), 0);
		assert_true(ql.tsig);
		assert_non_null(ql.qlen);
		assert_int_equal(dv_querylist_question_len(&ql, 1), 15);
		const uint8_t *q = dv_querylist_get(&ql, 1, &len);

		memcpy(wire, q, len);
		assert_int_equal(wire[11], 1); /* ARCOUNT: the TSIG RR */
		assert_int_equal(ldns_wire2pkt(&pkt, wire, len), LDNS_STATUS_OK);
		assert_true(ldns_pkt_tsig_verify(pkt, wire, len, "kk.", SECRET, mac));
		ldns_pkt_free(pkt);
		wire[len - 8] ^= 1; /* a bit of the MAC */
		assert_int_equal(ldns_wire2pkt(&pkt, wire, len), LDNS_STATUS_OK);
		assert_false(ldns_pkt_tsig_verify(pkt, wire, len, "kk.", SECRET, mac));
		ldns_pkt_free(pkt);
		dv_querylist_free(&ql);
	}
}

static void test_answer_error(void **state)
{
	/* header (QR, ARCOUNT 1), no question, TSIG RR for "kk." hmac-sha256., MAC size 0,
	 * error 16 (BADSIG) */
	static const uint8_t badsig[] = {
	    0,   1, 0x80, 9, 0, 0, 0,  0,  0,   0,   0,   1,   2,   'k', 'k', 0,   0,   250, 0,
	    255, 0, 0,    0, 0, 0, 29, 11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6',
	    0,   0, 0,    0, 0, 0, 1,  1,  44,  0,   0,   0,   1,   0,   16,  0,   0};
	static const uint8_t unsigned_answer[] = {0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0};

	(void)state;
	assert_int_equal(dv_tsig_answer_error(badsig, sizeof(badsig), 0), DV_TSIG_BADSIG);
	assert_int_equal(dv_tsig_answer_error(badsig, sizeof(badsig) - 1, 0), DV_TSIG_UNSIGNED);
	assert_int_equal(dv_tsig_answer_error(unsigned_answer, sizeof(unsigned_answer), 0),
	                 DV_TSIG_UNSIGNED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_parse),
	    cmocka_unit_test(test_sign_verifies),
	    cmocka_unit_test(test_answer_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
