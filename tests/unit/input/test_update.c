/* test_update: dnsperf -u input compiled to UPDATE messages (src/input/update.c), read back
 * by ldns's own parser; servers applying them are tests/integration/update.sh. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "input/update.h"

static int load(dv_querylist_t *ql, const char *text, bool edns, bool skip_bad, dv_err_t *err)
{
	dv_querylist_options_t o;

	dv_querylist_options_init(&o);
	o.edns = edns;
	o.skip_bad = skip_bad;
	return dv_update_load_buffer(ql, text, strlen(text), "u.txt", &o, err);
}

static ldns_pkt *msg(const dv_querylist_t *ql, size_t i)
{
	size_t len;
	const uint8_t *q = dv_querylist_get(ql, i, &len);
	ldns_pkt *p = NULL;

	assert_int_equal(ldns_wire2pkt(&p, q, len), LDNS_STATUS_OK);
	return p;
}

/* RR i of a section: owner, type, class, TTL (UINT32_MAX: not checked; ldns gives a
 * question its default), rdata as text ("" for none). */
static void check_rr(const ldns_rr_list *l, size_t i, const char *owner, ldns_rr_type type,
                     ldns_rr_class cls, uint32_t ttl, const char *rdata)
{
	const ldns_rr *rr = ldns_rr_list_rr(l, i);
	char *o = ldns_rdf2str(ldns_rr_owner(rr));

	assert_string_equal(o, owner);
	LDNS_FREE(o);
	assert_int_equal(ldns_rr_get_type(rr), type);
	assert_int_equal(ldns_rr_get_class(rr), cls);
	if (ttl != UINT32_MAX)
		assert_int_equal(ldns_rr_ttl(rr), ttl);
	if (*rdata == '\0') {
		assert_true(ldns_rr_rd_count(rr) == 0 || ldns_rdf_size(ldns_rr_rdf(rr, 0)) == 0);
	} else {
		char *r = ldns_rdf2str(ldns_rr_rdf(rr, 0));
		assert_string_equal(r, rdata);
		LDNS_FREE(r);
	}
}

static void test_every_statement(void **state)
{
	static const char text[] = "# a comment\n"
	                           "example.com\n"
	                           "require a\n"
	                           "require a A\n"
	                           "REQUIRE a A 192.0.2.1\n"
	                           "prohibit x\n"
	                           "prohibit x.other. AAAA\n"
	                           "add x 1h A 192.0.2.7\n"
	                           "add @ 300 MX 10 mail\n"
	                           "delete y\n"
	                           "delete y A\n"
	                           "delete y A 192.0.2.9\n"
	                           "send\n"
	                           "\n"
	                           "; dnsperf's comments too\n"
	                           "example.org.\n"
	                           "send\n";
	dv_querylist_t ql;
	dv_err_t err = {{0}};
	ldns_pkt *p;

	(void)state;
	assert_int_equal(load(&ql, text, false, false, &err), 0);
	assert_int_equal(ql.count, 2);
	assert_int_equal(ql.lines, 17);
	p = msg(&ql, 0);
	assert_int_equal(ldns_pkt_get_opcode(p), LDNS_PACKET_UPDATE);
	assert_false(ldns_pkt_rd(p));
	assert_int_equal(ldns_pkt_id(p), 0);
	assert_int_equal(ldns_pkt_qdcount(p), 1);
	assert_int_equal(ldns_pkt_ancount(p), 5);
	assert_int_equal(ldns_pkt_nscount(p), 5);
	assert_int_equal(ldns_pkt_arcount(p), 0);
	check_rr(ldns_pkt_question(p), 0, "example.com.", LDNS_RR_TYPE_SOA, LDNS_RR_CLASS_IN,
	         UINT32_MAX, "");
	/* RFC 2136 2.4: in use (ANY ANY), RRset exists (ANY A), with value (IN A), not in use
	 * (NONE ANY), RRset does not exist (NONE AAAA). */
	check_rr(ldns_pkt_answer(p), 0, "a.example.com.", LDNS_RR_TYPE_ANY, LDNS_RR_CLASS_ANY, 0,
	         "");
	check_rr(ldns_pkt_answer(p), 1, "a.example.com.", LDNS_RR_TYPE_A, LDNS_RR_CLASS_ANY, 0, "");
	check_rr(ldns_pkt_answer(p), 2, "a.example.com.", LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, 0,
	         "192.0.2.1");
	check_rr(ldns_pkt_answer(p), 3, "x.example.com.", LDNS_RR_TYPE_ANY, LDNS_RR_CLASS_NONE, 0,
	         "");
	check_rr(ldns_pkt_answer(p), 4, "x.other.", LDNS_RR_TYPE_AAAA, LDNS_RR_CLASS_NONE, 0, "");
	/* 2.5: add (IN, TTL), delete a name (ANY ANY), an RRset (ANY A), one RR (NONE A). */
	check_rr(ldns_pkt_authority(p), 0, "x.example.com.", LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, 3600,
	         "192.0.2.7");
	check_rr(ldns_pkt_authority(p), 1, "example.com.", LDNS_RR_TYPE_MX, LDNS_RR_CLASS_IN, 300,
	         "10");
	check_rr(ldns_pkt_authority(p), 2, "y.example.com.", LDNS_RR_TYPE_ANY, LDNS_RR_CLASS_ANY, 0,
	         "");
	check_rr(ldns_pkt_authority(p), 3, "y.example.com.", LDNS_RR_TYPE_A, LDNS_RR_CLASS_ANY, 0,
	         "");
	check_rr(ldns_pkt_authority(p), 4, "y.example.com.", LDNS_RR_TYPE_A, LDNS_RR_CLASS_NONE, 0,
	         "192.0.2.9");
	/* The MX's exchange is relative to the zone. */
	{
		char *ex = ldns_rdf2str(ldns_rr_rdf(ldns_rr_list_rr(ldns_pkt_authority(p), 1), 1));
		assert_string_equal(ex, "mail.example.com.");
		LDNS_FREE(ex);
	}
	/* The zone section is what answers are matched on. */
	assert_int_equal(dv_querylist_question_len(&ql, 0), 13 + 4);
	ldns_pkt_free(p);
	p = msg(&ql, 1);
	assert_int_equal(ldns_pkt_ancount(p) + ldns_pkt_nscount(p), 0);
	check_rr(ldns_pkt_question(p), 0, "example.org.", LDNS_RR_TYPE_SOA, LDNS_RR_CLASS_IN,
	         UINT32_MAX, "");
	ldns_pkt_free(p);
	dv_querylist_free(&ql);
}

static void test_edns(void **state)
{
	dv_querylist_t ql;
	dv_err_t err = {{0}};
	ldns_pkt *p;

	(void)state;
	assert_int_equal(load(&ql, "example.com\nadd n 60 A 192.0.2.1\nsend\n", true, false, &err),
	                 0);
	p = msg(&ql, 0);
	assert_true(ldns_pkt_edns(p)); /* ldns takes the OPT RR out of the additional count */
	assert_int_equal(ldns_pkt_edns_udp_size(p), 1232);
	{
		size_t len;
		const uint8_t *q = dv_querylist_get(&ql, 0, &len);
		assert_int_equal(q[11], 1); /* ARCOUNT */
	}
	assert_int_equal(ql.opt_len, 11);
	ldns_pkt_free(p);
	dv_querylist_free(&ql);
}

static void test_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
	    {"example.com\nfrob a\nsend\n", "u.txt:2: 'frob' is not add, delete"},
	    {"example.com\nadd a 60 A 192.0.2.1\nrequire b\nsend\n",
	     "u.txt:3: a prerequisite (require) after an update"},
	    {"example.com\nadd a A 192.0.2.1\nsend\n", "u.txt:2: add: 'A' is not a TTL"},
	    {"example.com\nadd a 60 A\nsend\n", "u.txt:2: add: no rdata"},
	    {"example.com\nadd a 60 NOPE 1\nsend\n", "u.txt:2: add: unknown type 'NOPE'"},
	    {"example.com\nadd a 60 A 300.0.0.1\nsend\n", "u.txt:2: bad A rdata '300.0.0.1'"},
	    {"example.com\nprohibit a A 192.0.2.1\nsend\n", "u.txt:2: prohibit: no rdata after"},
	    {"example.com\ndelete\nsend\n", "u.txt:2: delete: no name"},
	    {"example.com other\nsend\n", "u.txt:1: a zone line holds the zone name alone"},
	    {"example.com\nadd a 60 A 192.0.2.1\n", "u.txt:1: the update that starts here has no"},
	    {"# nothing\n", "u.txt: no update message"},
	};
	dv_querylist_t ql;
	dv_err_t err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(load(&ql, bad[i].text, false, false, &err), -EINVAL);
		if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
			fail_msg("case %zu: '%s', expected '%s...'", i, err.msg, bad[i].msg);
		assert_null(ql.arena);
		assert_int_equal(ql.count, 0);
	}
}

static void test_too_long(void **state)
{
	char text[20000];
	size_t n = (size_t)snprintf(text, sizeof(text), "example.com\n");
	dv_querylist_t ql;
	dv_err_t err = {{0}};

	(void)state;
	for (int i = 0; i < 40; i++)
		n +=
		    (size_t)snprintf(text + n, sizeof(text) - n, "add name-%d 60 A 192.0.2.1\n", i);
	snprintf(text + n, sizeof(text) - n, "send\n");
	assert_int_equal(load(&ql, text, false, false, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "u.txt:42: the message (from line 1) is over 512 octets"));
}

/* --skip-bad skips a bad message whole (to its send) and counts it; the others load. */
static void test_skip_bad(void **state)
{
	static const char text[] = "a.example\nadd x 60 A 192.0.2.1\nsend\n"
	                           "b.example\nadd x 60 A 999.0.2.1\nadd y 60 A 192.0.2.2\nsend\n"
	                           "c.example\ndelete z\nsend\n";
	dv_querylist_t ql;
	dv_err_t err = {{0}};
	ldns_pkt *p;

	(void)state;
	assert_int_equal(load(&ql, text, false, true, &err), 0);
	assert_int_equal(ql.count, 2);
	assert_int_equal(ql.skipped, 1);
	p = msg(&ql, 1);
	check_rr(ldns_pkt_question(p), 0, "c.example.", LDNS_RR_TYPE_SOA, LDNS_RR_CLASS_IN,
	         UINT32_MAX, "");
	ldns_pkt_free(p);
	dv_querylist_free(&ql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_statement), cmocka_unit_test(test_edns),
	    cmocka_unit_test(test_errors),          cmocka_unit_test(test_too_long),
	    cmocka_unit_test(test_skip_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
