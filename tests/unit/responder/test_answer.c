/* test_answer: the responder's answer builder, its responses parsed back with ldns. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <errno.h>
#include <ldns/ldns.h>

#include "responder/answer.h"

/* A query laid out by hand (so that case, flags and odd sections are under our control). */
typedef struct query {
	uint8_t b[1024];
	size_t len;
	size_t name_len;
} query_t;

static size_t put_name(uint8_t *p, const char *name)
{
	size_t n = 0;
	const char *s = name;

	while (*s != '\0' && strcmp(s, ".") != 0) {
		const char *dot = strchr(s, '.');
		size_t l = dot != NULL ? (size_t)(dot - s) : strlen(s);
		p[n++] = (uint8_t)l;
		memcpy(p + n, s, l);
		n += l;
		s += l;
		if (*s == '.')
			s++;
	}
	p[n++] = 0;
	return n;
}

/* edns: 0 none, 1 OPT (udp 4096), 2 OPT with DO, 3 OPT with version 1 */
static void make_query(query_t *q, uint16_t id, const char *name, uint16_t type, bool rd, int edns)
{
	uint8_t *p = q->b;

	memset(q, 0, sizeof(*q));
	p[0] = (uint8_t)(id >> 8);
	p[1] = (uint8_t)id;
	p[2] = rd ? 0x01 : 0x00;
	p[5] = 1;
	p[11] = edns ? 1 : 0;
	q->len = 12;
	q->name_len = put_name(p + 12, name);
	q->len += q->name_len;
	p[q->len++] = (uint8_t)(type >> 8);
	p[q->len++] = (uint8_t)type;
	p[q->len++] = 0;
	p[q->len++] = 1;
	if (edns) {
		uint8_t opt[11] = {0,
		                   0,
		                   41,
		                   0x10,
		                   0x00,
		                   0,
		                   (uint8_t)(edns == 3 ? 1 : 0),
		                   (uint8_t)(edns == 2 ? 0x80 : 0),
		                   0,
		                   0,
		                   0};
		memcpy(p + q->len, opt, sizeof(opt));
		q->len += sizeof(opt);
	}
}

static int build(const query_t *q, uint8_t *out, const dv_answer_opts_t *o)
{
	return dv_answer_build(q->b, q->len, out, DV_ANSWER_MAX, o);
}

static ldns_pkt *parse(const uint8_t *out, int len)
{
	ldns_pkt *p = NULL;

	assert_true(len >= 12);
	assert_int_equal(ldns_wire2pkt(&p, out, (size_t)len), LDNS_STATUS_OK);
	return p;
}

static void assert_rr_owner(const ldns_rr *rr, const char *name)
{
	ldns_rdf *want = ldns_dname_new_frm_str(name);
	assert_int_equal(ldns_dname_compare(ldns_rr_owner(rr), want), 0);
	ldns_rdf_deep_free(want);
}

static void assert_header(const ldns_pkt *p, uint16_t id, bool rd, ldns_pkt_rcode rcode)
{
	assert_int_equal(ldns_pkt_id(p), id);
	assert_true(ldns_pkt_qr(p));
	assert_true(ldns_pkt_aa(p));
	assert_int_equal(ldns_pkt_rd(p), rd);
	assert_int_equal(ldns_pkt_get_rcode(p), rcode);
	assert_int_equal(ldns_pkt_get_opcode(p), LDNS_PACKET_QUERY);
	assert_int_equal(ldns_pkt_qdcount(p), 1);
}

/* The question section comes back byte for byte, case kept. */
static void assert_same_question(const query_t *q, const uint8_t *out)
{
	assert_memory_equal(out + 12, q->b + 12, q->name_len + 4);
}

static void test_soa(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	ldns_pkt *p;
	ldns_rr *rr;
	ldns_rdf *mname;
	int len;

	(void)state;
	make_query(&q, 0x1234, "Example.COM.", LDNS_RR_TYPE_SOA, true, 0);
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_header(p, 0x1234, true, LDNS_RCODE_NOERROR);
	assert_same_question(&q, out);
	assert_int_equal(ldns_pkt_ancount(p), 1);
	assert_int_equal(ldns_pkt_nscount(p), 0);
	assert_int_equal(ldns_pkt_arcount(p), 0);
	assert_false(ldns_pkt_edns(p));
	rr = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	assert_int_equal(ldns_rr_get_type(rr), LDNS_RR_TYPE_SOA);
	assert_int_equal(ldns_rr_get_class(rr), LDNS_RR_CLASS_IN);
	assert_rr_owner(rr, "example.com.");
	/* The owner is a compression pointer to the question name. */
	assert_int_equal(out[12 + q.name_len + 4], 0xc0);
	assert_int_equal(out[12 + q.name_len + 5], 12);
	mname = ldns_dname_new_frm_str("ns1.example.com.");
	assert_int_equal(ldns_dname_compare(ldns_rr_rdf(rr, 0), mname), 0);
	ldns_rdf_deep_free(mname);
	mname = ldns_dname_new_frm_str("hostmaster.example.com.");
	assert_int_equal(ldns_dname_compare(ldns_rr_rdf(rr, 1), mname), 0);
	ldns_rdf_deep_free(mname);
	assert_int_equal(ldns_rdf2native_int32(ldns_rr_rdf(rr, 2)), 1);
	ldns_pkt_free(p);
}

static uint32_t a_record(const char *name)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	ldns_pkt *p;
	ldns_rr *rr;
	uint32_t v;
	int len;

	make_query(&q, 7, name, LDNS_RR_TYPE_A, false, 0);
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_header(p, 7, false, LDNS_RCODE_NOERROR);
	assert_same_question(&q, out);
	assert_int_equal(ldns_pkt_ancount(p), 1);
	rr = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	assert_int_equal(ldns_rr_get_type(rr), LDNS_RR_TYPE_A);
	assert_rr_owner(rr, name);
	assert_int_equal(ldns_rdf_size(ldns_rr_rdf(rr, 0)), 4);
	memcpy(&v, ldns_rdf_data(ldns_rr_rdf(rr, 0)), 4);
	ldns_pkt_free(p);
	return ntohl(v);
}

static void test_a(void **state)
{
	uint32_t a1 = a_record("www.example.org."), a2 = a_record("WWW.Example.ORG."),
	         a3 = a_record("mail.example.org.");

	(void)state;
	assert_int_equal(a1 & 0xfffe0000u, 0xc6120000u); /* 198.18.0.0/15 */
	assert_int_equal(a1, a2);                        /* case does not change the address */
	assert_int_not_equal(a1, a3);
	assert_int_equal(a_record(".") & 0xfffe0000u, 0xc6120000u);
}

static void test_aaaa(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	ldns_pkt *p;
	ldns_rr *rr;
	const uint8_t *ip;
	int len;

	(void)state;
	make_query(&q, 0xffff, "v6.example.", LDNS_RR_TYPE_AAAA, true, 1);
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_header(p, 0xffff, true, LDNS_RCODE_NOERROR);
	assert_same_question(&q, out);
	assert_int_equal(ldns_pkt_ancount(p), 1);
	rr = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	assert_int_equal(ldns_rr_get_type(rr), LDNS_RR_TYPE_AAAA);
	assert_rr_owner(rr, "v6.example.");
	assert_int_equal(ldns_rdf_size(ldns_rr_rdf(rr, 0)), 16);
	ip = ldns_rdf_data(ldns_rr_rdf(rr, 0));
	assert_int_equal(ip[0], 0x20);
	assert_int_equal(ip[1], 0x01);
	assert_int_equal(ip[2], 0x0d);
	assert_int_equal(ip[3], 0xb8);
	ldns_pkt_free(p);
}

/* Types without a synthetic record: NODATA, the SOA in the authority section. */
static void test_other_type_nodata(void **state)
{
	static const ldns_rr_type types[] = {LDNS_RR_TYPE_MX, LDNS_RR_TYPE_TXT, LDNS_RR_TYPE_NS,
	                                     LDNS_RR_TYPE_ANY, 65000};
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ldns_pkt *p;
		ldns_rr *rr;
		int len;

		make_query(&q, (uint16_t)i, "a.b.c.", types[i], true, 0);
		len = build(&q, out, NULL);
		p = parse(out, len);
		assert_header(p, (uint16_t)i, true, LDNS_RCODE_NOERROR);
		assert_same_question(&q, out);
		assert_int_equal(ldns_pkt_ancount(p), 0);
		assert_int_equal(ldns_pkt_nscount(p), 1);
		rr = ldns_rr_list_rr(ldns_pkt_authority(p), 0);
		assert_int_equal(ldns_rr_get_type(rr), LDNS_RR_TYPE_SOA);
		assert_rr_owner(rr, "a.b.c.");
		ldns_pkt_free(p);
	}
}

static void test_edns_echo(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	ldns_pkt *p;
	int len;

	(void)state;
	make_query(&q, 1, "edns.example.", LDNS_RR_TYPE_A, true, 1);
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_true(ldns_pkt_edns(p));
	assert_int_equal(ldns_pkt_edns_udp_size(p), DV_ANSWER_EDNS_UDP);
	assert_false(ldns_pkt_edns_do(p));
	assert_int_equal(ldns_pkt_edns_version(p), 0);
	assert_int_equal(ldns_pkt_ancount(p), 1);
	ldns_pkt_free(p);

	make_query(&q, 1, "edns.example.", LDNS_RR_TYPE_A, true, 2);
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_true(ldns_pkt_edns(p));
	assert_true(ldns_pkt_edns_do(p));
	ldns_pkt_free(p);

	/* EDNS version 1: BADVERS (16) = OPT extended rcode 1, header rcode 0, no records. */
	make_query(&q, 1, "edns.example.", LDNS_RR_TYPE_A, true, 3);
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_true(ldns_pkt_edns(p));
	assert_int_equal(ldns_pkt_edns_extended_rcode(p), 1);
	assert_int_equal(ldns_pkt_get_rcode(p), 0);
	assert_int_equal(ldns_pkt_ancount(p), 0);
	ldns_pkt_free(p);
}

static void test_rcode_option(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	dv_answer_opts_t o;
	query_t q;
	ldns_pkt *p;
	int len;

	(void)state;
	dv_answer_opts_init(&o);
	make_query(&q, 99, "gone.example.", LDNS_RR_TYPE_A, true, 1);
	o.rcode = LDNS_RCODE_NXDOMAIN;
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_header(p, 99, true, LDNS_RCODE_NXDOMAIN);
	assert_same_question(&q, out);
	assert_int_equal(ldns_pkt_ancount(p), 0);
	assert_int_equal(ldns_pkt_nscount(p), 1);
	assert_true(ldns_pkt_edns(p));
	ldns_pkt_free(p);

	o.rcode = LDNS_RCODE_SERVFAIL;
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_header(p, 99, true, LDNS_RCODE_SERVFAIL);
	assert_int_equal(ldns_pkt_ancount(p) + ldns_pkt_nscount(p), 0);
	ldns_pkt_free(p);

	o.rcode = 15;
	len = build(&q, out, &o);
	assert_true(len > 12);
	assert_int_equal(out[3] & 0x0f, 15);
}

static void test_tc_option(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	dv_answer_opts_t o;
	query_t q;
	ldns_pkt *p;
	int len;

	(void)state;
	dv_answer_opts_init(&o);
	o.tc = true;
	make_query(&q, 5, "big.example.", LDNS_RR_TYPE_SOA, true, 1);
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_header(p, 5, true, LDNS_RCODE_NOERROR);
	assert_true(ldns_pkt_tc(p));
	assert_int_equal(ldns_pkt_ancount(p), 0);
	assert_true(ldns_pkt_edns(p));
	ldns_pkt_free(p);

	o.tc = false;
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_false(ldns_pkt_tc(p));
	ldns_pkt_free(p);
}

static void test_reflect(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	dv_answer_opts_t o;
	query_t q;
	int len;

	(void)state;
	dv_answer_opts_init(&o);
	o.reflect = true;
	make_query(&q, 0xbeef, "Reflect.Example.", LDNS_RR_TYPE_A, true, 2);
	len = build(&q, out, &o);
	assert_int_equal(len, (int)q.len);
	assert_int_equal(out[2], q.b[2] | 0x80);
	out[2] &= 0x7f;
	assert_memory_equal(out, q.b, q.len);
}

static void test_faults(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	dv_answer_opts_t o;
	query_t q;
	ldns_pkt *p;
	ldns_rr *rr;
	int len;

	(void)state;
	dv_answer_opts_init(&o);
	o.wrong_id = true;
	make_query(&q, 0x1234, "id.example.", LDNS_RR_TYPE_A, true, 0);
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_int_equal(ldns_pkt_id(p), 0x1234 ^ 0x8000);
	assert_same_question(&q, out);
	ldns_pkt_free(p);

	dv_answer_opts_init(&o);
	o.wrong_question = true;
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_int_equal(ldns_pkt_id(p), 0x1234);
	rr = ldns_rr_list_rr(ldns_pkt_question(p), 0);
	assert_rr_owner(rr, "x.id.example.");
	rr = ldns_rr_list_rr(ldns_pkt_answer(p), 0);
	assert_rr_owner(rr, "x.id.example.");
	ldns_pkt_free(p);
}

/* A 255-byte name cannot take one more label: its first letter changes instead. */
static void test_wrong_question_long_name(void **state)
{
	char name[300];
	uint8_t out[DV_ANSWER_MAX];
	dv_answer_opts_t o;
	query_t q;
	ldns_pkt *p;
	size_t i;
	int len;

	(void)state;
	/* Three labels of 63 bytes and one of 61: 3 * 64 + 62 + 1 = 255 bytes on the wire. */
	name[0] = '\0';
	for (i = 0; i < 4; i++) {
		size_t l = strlen(name), n = i < 3 ? 63 : 61;
		memset(name + l, 'X', n);
		name[l + n] = '.';
		name[l + n + 1] = '\0';
	}
	make_query(&q, 3, name, LDNS_RR_TYPE_A, true, 0);
	assert_int_equal(q.name_len, 255);
	dv_answer_opts_init(&o);
	len = build(&q, out, &o);
	assert_true(len > 0);
	o.wrong_question = true;
	len = build(&q, out, &o);
	p = parse(out, len);
	assert_int_equal(out[12], 63);
	assert_int_equal(out[13], 'y'); /* 'X' is a case of 'x', so not 'x' */
	assert_memory_equal(out + 14, q.b + 14, q.name_len - 2);
	ldns_pkt_free(p);
}

static void assert_formerr(const uint8_t *in, size_t len, uint16_t id)
{
	uint8_t out[DV_ANSWER_MAX];
	uint8_t *copy = malloc(len);
	ldns_pkt *p;
	int rc;

	assert_non_null(copy);
	memcpy(copy, in, len);
	rc = dv_answer_build(copy, len, out, sizeof(out), NULL);
	free(copy);
	assert_int_equal(rc, 12);
	p = parse(out, rc);
	assert_int_equal(ldns_pkt_id(p), id);
	assert_true(ldns_pkt_qr(p));
	assert_int_equal(ldns_pkt_get_rcode(p), LDNS_RCODE_FORMERR);
	assert_int_equal(ldns_pkt_qdcount(p), 0);
	ldns_pkt_free(p);
}

static void test_formerr(void **state)
{
	query_t q, bad;
	uint8_t out[DV_ANSWER_MAX];
	size_t i;

	(void)state;
	make_query(&q, 0x4242, "ok.example.", LDNS_RR_TYPE_A, true, 1);

	bad = q; /* QR set: a response, not a query: no answer at all (no answer loops) */
	bad.b[2] |= 0x80;
	assert_int_equal(dv_answer_build(bad.b, bad.len, out, sizeof(out), NULL), -EBADMSG);
	assert_int_equal(dv_answer_build(bad.b, 12, out, sizeof(out), NULL), -EBADMSG);
	bad = q; /* no question */
	bad.b[5] = 0;
	assert_formerr(bad.b, bad.len, 0x4242);
	bad = q; /* two questions */
	bad.b[5] = 2;
	assert_formerr(bad.b, bad.len, 0x4242);
	bad = q; /* label type 01 */
	bad.b[12] = 0x42;
	assert_formerr(bad.b, bad.len, 0x4242);
	bad = q; /* compression pointer in the question */
	bad.b[12] = 0xc0;
	bad.b[13] = 12;
	assert_formerr(bad.b, bad.len, 0x4242);
	bad = q; /* header only */
	assert_formerr(bad.b, 12, 0x4242);
	bad = q; /* qtype cut */
	assert_formerr(bad.b, 12 + q.name_len + 1, 0x4242);
	bad = q; /* OPT announced, missing */
	assert_formerr(bad.b, q.len - 11, 0x4242);
	bad = q; /* OPT rdata longer than the message */
	bad.b[bad.len - 1] = 5;
	assert_formerr(bad.b, bad.len, 0x4242);
	bad = q; /* two OPT RRs */
	memcpy(bad.b + bad.len, q.b + q.len - 11, 11);
	bad.len += 11;
	bad.b[11] = 2;
	assert_formerr(bad.b, bad.len, 0x4242);
	bad = q; /* OPT not owned by the root */
	memmove(bad.b + q.len - 11 + 2, bad.b + q.len - 11 + 1, 10);
	bad.b[q.len - 11] = 0xc0;
	bad.b[q.len - 10] = 12;
	bad.len += 1;
	assert_formerr(bad.b, bad.len, 0x4242);

	/* A name longer than 255 bytes. */
	memset(&bad, 0, sizeof(bad));
	bad.b[5] = 1;
	bad.len = 12;
	for (i = 0; i < 5; i++) {
		bad.b[bad.len++] = 60;
		memset(bad.b + bad.len, 'a', 60);
		bad.len += 60;
	}
	bad.b[bad.len++] = 0;
	bad.len += 4;
	bad.b[bad.len - 1] = 1;
	assert_formerr(bad.b, bad.len, 0);

	/* Fewer than 12 bytes: nothing to answer. */
	for (i = 0; i < 12; i++)
		assert_int_equal(dv_answer_build(q.b, i, out, sizeof(out), NULL), -EBADMSG);
	assert_int_equal(dv_answer_build(NULL, 0, out, sizeof(out), NULL), -EBADMSG);
}

static void test_opcode_notimp(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	ldns_pkt *p;
	int len;

	(void)state;
	make_query(&q, 8, "op.example.", LDNS_RR_TYPE_SOA, true, 0);
	q.b[2] |= 2 << 3; /* STATUS */
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_int_equal(ldns_pkt_get_opcode(p), LDNS_PACKET_STATUS);
	assert_int_equal(ldns_pkt_get_rcode(p), LDNS_RCODE_NOTIMPL);
	assert_int_equal(ldns_pkt_ancount(p), 0);
	ldns_pkt_free(p);
}

/* Queries carrying answer/authority records are legal: they are skipped. */
static void test_skip_sections(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	ldns_pkt *p;
	int len;
	/* An answer RR with a compressed owner: ptr to 12, type A, IN, TTL 0, 4 bytes. */
	static const uint8_t rr[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4};

	(void)state;
	make_query(&q, 9, "s.example.", LDNS_RR_TYPE_A, true, 0);
	memcpy(q.b + q.len, rr, sizeof(rr));
	q.len += sizeof(rr);
	q.b[7] = 1;
	len = build(&q, out, NULL);
	p = parse(out, len);
	assert_header(p, 9, true, LDNS_RCODE_NOERROR);
	assert_int_equal(ldns_pkt_ancount(p), 1);
	ldns_pkt_free(p);
}

static void test_capacity(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	int full, cap;

	(void)state;
	make_query(&q, 1, "cap.example.", LDNS_RR_TYPE_SOA, true, 2);
	full = build(&q, out, NULL);
	assert_true(full > 12);
	for (cap = 0; cap < full; cap++) {
		uint8_t *small = malloc((size_t)cap + 1);
		assert_non_null(small);
		assert_int_equal(dv_answer_build(q.b, q.len, small, (size_t)cap, NULL), -ENOSPC);
		free(small);
	}
	assert_int_equal(dv_answer_build(q.b, q.len, out, (size_t)full, NULL), full);
}

/* Every prefix of a valid query, in a buffer of exactly that size (ASan sees over-reads). */
static void test_truncations(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	query_t q;
	size_t len;

	(void)state;
	make_query(&q, 0x0102, "trunc.example.", LDNS_RR_TYPE_AAAA, true, 2);
	for (len = 0; len <= q.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		int rc;

		assert_non_null(copy);
		memcpy(copy, q.b, len);
		rc = dv_answer_build(copy, len, out, sizeof(out), NULL);
		if (len < 12)
			assert_int_equal(rc, -EBADMSG);
		else if (len < q.len)
			assert_int_equal(rc, 12); /* FORMERR */
		else
			assert_true(rc > 12);
		free(copy);
	}
}

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * Random and mutated inputs: never a crash or an over-read, and every response
 * built is one ldns can parse.
 */
static void test_fuzz_inputs(void **state)
{
	uint8_t out[DV_ANSWER_MAX];
	dv_answer_opts_t o;
	query_t seed;
	int round;

	(void)state;
	make_query(&seed, 77, "fuzz.Example.net.", LDNS_RR_TYPE_A, true, 2);
	for (round = 0; round < 40000; round++) {
		size_t len, i;
		uint8_t *in;
		int rc;

		if (round % 2 == 0) { /* a mutated valid query */
			len = seed.len;
			in = malloc(len);
			assert_non_null(in);
			memcpy(in, seed.b, len);
			for (i = 0; i < 1 + rng() % 4; i++)
				in[rng() % len] = (uint8_t)rng();
			if (rng() % 4 == 0)
				len = rng() % (len + 1);
		} else { /* random bytes, a valid-looking header */
			len = rng() % 300;
			in = malloc(len ? len : 1);
			assert_non_null(in);
			for (i = 0; i < len; i++)
				in[i] = (uint8_t)rng();
			if (len >= 12) {
				in[2] &= 0x7f;
				in[4] = 0;
				in[5] = 1;
			}
		}
		dv_answer_opts_init(&o);
		o.tc = rng() % 8 == 0;
		o.wrong_question = rng() % 8 == 0;
		o.rcode = rng() % 4 == 0 ? (int)(rng() % 16) : -1;
		rc = dv_answer_build(in, len, out, sizeof(out), &o);
		if (len < 12 || (in[2] & 0x80) != 0) { /* short, or a response (QR set) */
			assert_int_equal(rc, -EBADMSG);
		} else {
			ldns_pkt *p = NULL;
			assert_true(rc >= 12 && rc <= DV_ANSWER_MAX);
			assert_int_equal(ldns_wire2pkt(&p, out, (size_t)rc), LDNS_STATUS_OK);
			assert_int_equal(ldns_pkt_id(p), (uint16_t)(in[0] << 8 | in[1]));
			assert_true(ldns_pkt_qr(p));
			ldns_pkt_free(p);
		}
		free(in);
	}
}

static void test_garbage(void **state)
{
	uint8_t a[128], b[128];
	uint64_t seq;
	int seen_short = 0, seen_long = 0;

	(void)state;
	assert_int_equal(dv_answer_garbage(1, a, 99), -ENOSPC);
	for (seq = 0; seq < 20000; seq++) {
		int la = dv_answer_garbage(seq, a, sizeof(a));
		int lb = dv_answer_garbage(seq, b, sizeof(b));

		assert_int_equal(la, lb); /* deterministic */
		assert_memory_equal(a, b, (size_t)la);
		assert_true(la >= 1 && la <= 100);
		if (la >= 12) {
			assert_int_equal(a[2] & 0x80, 0); /* never a response */
			seen_long++;
		} else {
			seen_short++;
		}
	}
	assert_true(seen_short > 100 && seen_long > 100);
}

static void test_rcode_parse(void **state)
{
	int v = -1;

	(void)state;
	assert_int_equal(dv_rcode_parse("NXDOMAIN", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(dv_rcode_parse("servfail", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(dv_rcode_parse("REFUSED", &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(dv_rcode_parse("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(dv_rcode_parse("15", &v), 0);
	assert_int_equal(v, 15);
	assert_int_equal(dv_rcode_parse("16", &v), -EINVAL);
	assert_int_equal(dv_rcode_parse("007", &v), -EINVAL);
	assert_int_equal(dv_rcode_parse("-1", &v), -EINVAL);
	assert_int_equal(dv_rcode_parse("", &v), -EINVAL);
	assert_int_equal(dv_rcode_parse("NXDOMAINX", &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_soa),           cmocka_unit_test(test_a),
	    cmocka_unit_test(test_aaaa),          cmocka_unit_test(test_other_type_nodata),
	    cmocka_unit_test(test_edns_echo),     cmocka_unit_test(test_rcode_option),
	    cmocka_unit_test(test_tc_option),     cmocka_unit_test(test_reflect),
	    cmocka_unit_test(test_faults),        cmocka_unit_test(test_wrong_question_long_name),
	    cmocka_unit_test(test_formerr),       cmocka_unit_test(test_opcode_notimp),
	    cmocka_unit_test(test_skip_sections), cmocka_unit_test(test_capacity),
	    cmocka_unit_test(test_truncations),   cmocka_unit_test(test_fuzz_inputs),
	    cmocka_unit_test(test_garbage),       cmocka_unit_test(test_rcode_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
