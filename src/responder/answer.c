/* answer: builds the responder's synthetic responses from raw query bytes (pure, fuzz-safe). */
#include "config.h"

#include "responder/answer.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "base/dns.h"
#include "base/wire.h"

#define RECORD_TTL 300
#define OFFSET_QNAME                                                                               \
	DV_DNS_HEADER_LEN /* the question name always starts right after the header                \
	                   */
#define BADVERS_HI (DV_DNS_RCODE_BADVERS >> 4) /* upper 8 bits of the 12-bit rcode */

/* FNV-1a over the lower-cased name, then a 64-bit finaliser (splitmix64) to spread it. */
static uint64_t name_hash(const uint8_t *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		uint8_t b = name[i];
		if (b >= 'A' && b <= 'Z')
			b = (uint8_t)(b + ('a' - 'A'));
		h = (h ^ b) * 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static void wr_rr_head(dv_wire_writer_t *w, uint16_t type, uint16_t cls, uint16_t rdlen)
{
	dv_wire_put16(w, DV_DNS_PTR << 8 | OFFSET_QNAME);
	dv_wire_put16(w, type);
	dv_wire_put16(w, cls);
	dv_wire_put32(w, RECORD_TTL);
	dv_wire_put16(w, rdlen);
}

static void wr_soa(dv_wire_writer_t *w, uint16_t cls)
{
	static const uint8_t mname[] = {3, 'n', 's', '1', DV_DNS_PTR, OFFSET_QNAME};
	static const uint8_t rname[] = {10,  'h', 'o', 's', 't',        'm',         'a',
	                                's', 't', 'e', 'r', DV_DNS_PTR, OFFSET_QNAME};

	wr_rr_head(w, DV_DNS_TYPE_SOA, cls, (uint16_t)(sizeof(mname) + sizeof(rname) + 20));
	dv_wire_put(w, mname, sizeof(mname));
	dv_wire_put(w, rname, sizeof(rname));
	dv_wire_put32(w, 1);          /* serial */
	dv_wire_put32(w, 3600);       /* refresh */
	dv_wire_put32(w, 900);        /* retry */
	dv_wire_put32(w, 604800);     /* expire */
	dv_wire_put32(w, RECORD_TTL); /* minimum (negative caching TTL) */
}

/*
 * The question as sent back: the query's own bytes, or for the wrong-question
 * fault "x.<qname>" (or, when that would pass 255 bytes, the first letter
 * changed to another letter, not merely another case).
 */
static void wr_question(dv_wire_writer_t *w, const uint8_t *qname, size_t namelen,
                        const uint8_t *tail4, bool wrong)
{
	if (!wrong) {
		dv_wire_put(w, qname, namelen);
	} else if (namelen + 2 <= DV_DNS_NAME_MAX) {
		static const uint8_t x[] = {1, 'x'};
		dv_wire_put(w, x, 2);
		dv_wire_put(w, qname, namelen);
	} else {
		uint8_t c = (uint8_t)(qname[1] | 0x20) == 'x' ? 'y' : 'x';
		dv_wire_put(w, qname, 1); /* namelen > 253 means at least one label */
		dv_wire_put8(w, c);
		dv_wire_put(w, qname + 2, namelen - 2);
	}
	dv_wire_put(w, tail4, 4);
}

void dv_answer_opts_init(dv_answer_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->rcode = -1;
}

static int finish(dv_wire_writer_t *w, bool wrong_id)
{
	if (!w->ok)
		return -ENOSPC;
	if (wrong_id) /* the ID's top bit flipped: an answer to no query in flight */
		dv_wire_set16(w->base, (uint16_t)(DV_WIRE_ID(w->base) ^ 0x8000));
	return (int)w->len;
}

static int build_formerr(const uint8_t *q, dv_wire_writer_t *w, bool wrong_id)
{
	dv_wire_writer_init(w, w->base, w->cap); /* start over */
	dv_wire_put(w, q, 2);
	dv_wire_put8(w, (uint8_t)(DV_DNS_QR | (q[DV_DNS_OFF_FLAGS1] & DV_DNS_OPCODE_MASK) |
	                          (q[DV_DNS_OFF_FLAGS1] & DV_DNS_RD))); /* QR, opcode, RD */
	dv_wire_put8(w, DV_DNS_RCODE_FORMERR);
	dv_wire_put32(w, 0);
	dv_wire_put32(w, 0);
	return finish(w, wrong_id);
}

/* What dv_answer_build() needs to know about a well-formed query. */
typedef struct query {
	size_t namelen; /* of the question name, which starts at DV_DNS_HEADER_LEN */
	size_t qend;    /* offset just past the question */
	uint16_t qtype, qclass;
	uint8_t opcode;
	bool has_opt, do_bit, badvers; /* an OPT RR; its DO bit; EDNS version > 0 */
} query_t;

/* Walk the additional section for the OPT RR; c->ok false on a malformed one. */
static void read_additional(dv_wire_cursor_t *c, const uint8_t *q, uint16_t arcount, query_t *pq)
{
	unsigned i;

	for (i = 0; i < arcount && c->ok; i++) {
		size_t owner = c->pos;
		uint16_t type, ext_version, eflags;

		dv_wire_skip_name_unfollowed(c);
		type = dv_wire_read16(c);
		dv_wire_skip(c, 2);              /* class (OPT: the UDP payload size) */
		ext_version = dv_wire_read16(c); /* TTL (OPT: extended rcode, EDNS version) */
		eflags = dv_wire_read16(c);      /* (OPT: flags) */
		dv_wire_skip(c, dv_wire_read16(c));
		if (!c->ok || type != DV_DNS_TYPE_OPT)
			continue;
		if (pq->has_opt || q[owner] != 0) { /* RFC 6891: one OPT, owned by the root */
			c->ok = false;
			break;
		}
		pq->has_opt = true;
		pq->badvers = (ext_version & 0xff) != 0;
		pq->do_bit = (eflags & DV_DNS_EDNS_DO) != 0;
	}
}

/* Parse the query (qlen >= DV_DNS_HEADER_LEN). Returns false when it gets FORMERR. */
static bool parse_query(const uint8_t *q, size_t qlen, query_t *pq)
{
	dv_wire_cursor_t c;
	uint16_t ancount, nscount;
	unsigned i;

	memset(pq, 0, sizeof(*pq));
	dv_wire_cursor_init(&c, q, qlen, DV_DNS_HEADER_LEN);
	pq->opcode = (uint8_t)DV_WIRE_OPCODE(q);
	ancount = DV_WIRE_ANCOUNT(q);
	nscount = DV_WIRE_NSCOUNT(q);
	if (DV_WIRE_QR(q) || DV_WIRE_QDCOUNT(q) != 1)
		return false;

	pq->namelen = dv_wire_read_plain_name(&c); /* nothing precedes it to point to */
	pq->qtype = dv_wire_read16(&c);
	pq->qclass = dv_wire_read16(&c);
	pq->qend = c.pos;
	/* Answer and authority records in a query are unusual but legal: skip them. */
	for (i = 0; i < (unsigned)ancount + nscount && c.ok; i++) {
		dv_wire_skip_name_unfollowed(&c);
		dv_wire_skip(&c, 8);
		dv_wire_skip(&c, dv_wire_read16(&c));
	}
	read_additional(&c, q, DV_WIRE_ARCOUNT(q), pq);
	return c.ok;
}

/* The reflect fault: the query echoed with QR (and the rcode and TC asked for) set. */
static int build_reflect(const uint8_t *q, size_t qlen, const query_t *pq, dv_wire_writer_t *w,
                         const dv_answer_opts_t *o)
{
	dv_wire_put(w, q, 2);
	dv_wire_put8(w, (uint8_t)(q[DV_DNS_OFF_FLAGS1] | DV_DNS_QR | (o->tc ? DV_DNS_TC : 0)));
	dv_wire_put8(w, o->rcode >= 0
	                    ? (uint8_t)((q[DV_DNS_OFF_FLAGS2] & ~DV_DNS_RCODE_MASK) | o->rcode)
	                    : q[DV_DNS_OFF_FLAGS2]);
	dv_wire_put(w, q + 4, 8);
	wr_question(w, q + DV_DNS_HEADER_LEN, pq->namelen, q + DV_DNS_HEADER_LEN + pq->namelen,
	            o->wrong_question);
	dv_wire_put(w, q + pq->qend, qlen - pq->qend);
	return finish(w, o->wrong_id);
}

/*
 * The response code (*rcode) and what the response carries: 0 nothing; type A,
 * AAAA or SOA: that record as the answer; -SOA: NODATA/NXDOMAIN, SOA in authority.
 */
static int answer_kind(const query_t *pq, const dv_answer_opts_t *o, uint8_t *rcode)
{
	*rcode = o->rcode >= 0 ? (uint8_t)(o->rcode & DV_DNS_RCODE_MASK) : 0;
	if (pq->opcode != 0)
		*rcode = DV_DNS_RCODE_NOTIMP;
	if (pq->badvers)
		*rcode = 0; /* the OPT RR carries the upper bits: BADVERS */
	if (o->tc || pq->badvers || pq->opcode != 0)
		return 0;
	if (*rcode == 0 && pq->qclass == DV_DNS_CLASS_IN &&
	    (pq->qtype == DV_DNS_TYPE_A || pq->qtype == DV_DNS_TYPE_AAAA ||
	     pq->qtype == DV_DNS_TYPE_SOA))
		return pq->qtype;
	if ((*rcode == 0 && pq->qclass == DV_DNS_CLASS_IN) || *rcode == DV_DNS_RCODE_NXDOMAIN)
		return -DV_DNS_TYPE_SOA;
	return 0;
}

/* The one record of kind (see answer_kind()), owned by the question name. */
static void wr_record(dv_wire_writer_t *w, const uint8_t *q, const query_t *pq, int kind)
{
	uint64_t h;

	if (kind == DV_DNS_TYPE_A) {
		h = name_hash(q + DV_DNS_HEADER_LEN, pq->namelen);
		wr_rr_head(w, DV_DNS_TYPE_A, pq->qclass, 4);
		dv_wire_put8(w, 198);
		dv_wire_put8(w, (uint8_t)(18 | ((h >> 16) & 1)));
		dv_wire_put8(w, (uint8_t)(h >> 8));
		dv_wire_put8(w, (uint8_t)h);
	} else if (kind == DV_DNS_TYPE_AAAA) {
		h = name_hash(q + DV_DNS_HEADER_LEN, pq->namelen);
		wr_rr_head(w, DV_DNS_TYPE_AAAA, pq->qclass, 16);
		dv_wire_put32(w, 0x20010db8);
		dv_wire_put32(w, (uint32_t)(h >> 32));
		dv_wire_put32(w, (uint32_t)h);
		dv_wire_put32(w, (uint32_t)(h >> 16) ^ 1u);
	} else if (kind == DV_DNS_TYPE_SOA || kind == -DV_DNS_TYPE_SOA) {
		wr_soa(w, pq->qclass);
	}
}

/* The OPT RR of the response: our UDP size, DO copied, BADVERS for EDNS version > 0. */
static void wr_opt(dv_wire_writer_t *w, const query_t *pq)
{
	dv_wire_put_opt_rr(w, DV_ANSWER_EDNS_UDP, pq->badvers ? BADVERS_HI : 0, pq->do_bit, 0);
}

/* The synthetic response: header, question, at most one record, OPT if asked. */
static int build_answer(const uint8_t *q, const query_t *pq, dv_wire_writer_t *w,
                        const dv_answer_opts_t *o)
{
	uint8_t rcode;
	int kind = answer_kind(pq, o, &rcode);

	dv_wire_put(w, q, 2);
	dv_wire_put8(w,
	             (uint8_t)(DV_DNS_QR | (q[DV_DNS_OFF_FLAGS1] & DV_DNS_OPCODE_MASK) | DV_DNS_AA |
	                       (o->tc ? DV_DNS_TC : 0) | (q[DV_DNS_OFF_FLAGS1] & DV_DNS_RD)));
	dv_wire_put8(w, rcode);
	dv_wire_put16(w, 1);
	dv_wire_put16(w, kind > 0 ? 1 : 0);
	dv_wire_put16(w, kind < 0 ? 1 : 0);
	dv_wire_put16(w, pq->has_opt ? 1 : 0);
	wr_question(w, q + DV_DNS_HEADER_LEN, pq->namelen, q + DV_DNS_HEADER_LEN + pq->namelen,
	            o->wrong_question);
	wr_record(w, q, pq, kind);
	if (pq->has_opt)
		wr_opt(w, pq);
	return finish(w, o->wrong_id);
}

int dv_answer_build(const uint8_t *q, size_t qlen, uint8_t *out, size_t cap,
                    const dv_answer_opts_t *o)
{
	dv_answer_opts_t defaults;
	dv_wire_writer_t w;
	query_t pq;

	if (o == NULL) {
		dv_answer_opts_init(&defaults);
		o = &defaults;
	}
	if (q == NULL || qlen < DV_DNS_HEADER_LEN)
		return -EBADMSG;
	if (out == NULL || cap < DV_DNS_HEADER_LEN)
		return -ENOSPC;
	dv_wire_writer_init(&w, out, cap);
	if (DV_WIRE_QR(q))
		return -EBADMSG; /* a response: never answered (two servers would loop) */
	if (!parse_query(q, qlen, &pq))
		return build_formerr(q, &w, o->wrong_id);
	if (o->reflect)
		return build_reflect(q, qlen, &pq, &w, o);
	return build_answer(q, &pq, &w, o);
}

int dv_answer_garbage(uint64_t seq, uint8_t *out, size_t cap)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	size_t len, i;

	if (out == NULL || cap < 100)
		return -ENOSPC;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	len = 1 + (size_t)(x % 100);
	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		out[i] = (uint8_t)(x >> 24);
	}
	if (len >= DV_DNS_HEADER_LEN)
		out[DV_DNS_OFF_FLAGS1] &= (uint8_t)~DV_DNS_QR; /* QR clear: not a response */
	return (int)len;
}

int dv_rcode_parse(const char *s, int *out)
{
	static const char *const names[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
	                                    "NOTIMP",  "REFUSED", "YXDOMAIN", "YXRRSET",
	                                    "NXRRSET", "NOTAUTH", "NOTZONE"};
	size_t i;
	int v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(s, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 2)
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	if (v > 15)
		return -EINVAL;
	*out = v;
	return 0;
}
