/* answer: builds the responder's synthetic responses from raw query bytes (pure, fuzz-safe). */
#include "config.h"

#include "responder/answer.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "base/dns.h"

#define RECORD_TTL   300
#define OFFSET_QNAME DV_DNS_HEADER_LEN /* the question name always starts right after the header   \
	                                */
#define BADVERS_HI (DV_DNS_RCODE_BADVERS >> 4) /* upper 8 bits of the 12-bit rcode */

/* Reading cursor: every read checks the bound; the first failure sticks (knot's wire_ctx). */
typedef struct rcur {
	const uint8_t *p;
	size_t len, off;
	bool err;
} rcur_t;

static uint16_t rd_u16(rcur_t *c)
{
	uint16_t v;

	if (c->err || c->len - c->off < 2) {
		c->err = true;
		return 0;
	}
	v = (uint16_t)(c->p[c->off] << 8 | c->p[c->off + 1]);
	c->off += 2;
	return v;
}

static void rd_skip(rcur_t *c, size_t n)
{
	if (c->err || c->len - c->off < n) {
		c->err = true;
		return;
	}
	c->off += n;
}

/*
 * The question name: labels only (no compression pointer: the question is the
 * first name in a message, there is nothing before it to point to), at most 255
 * bytes. Returns its wire length, or 0 with c->err set.
 */
static size_t rd_qname(rcur_t *c)
{
	size_t start = c->off;

	while (!c->err) {
		uint8_t l;

		if (c->off >= c->len) {
			c->err = true;
			break;
		}
		l = c->p[c->off];
		if (l > DV_DNS_LABEL_MAX) { /* pointer or reserved label type */
			c->err = true;
			break;
		}
		if (c->off - start + 1 + l > DV_DNS_NAME_MAX) {
			c->err = true;
			break;
		}
		rd_skip(c, 1u + l);
		if (l == 0)
			return c->off - start;
	}
	return 0;
}

/* Any owner name in the other sections: labels, possibly ending in a pointer (not followed). */
static void rd_skip_name(rcur_t *c)
{
	size_t start = c->off;

	while (!c->err) {
		uint8_t l;

		if (c->off >= c->len) {
			c->err = true;
			return;
		}
		l = c->p[c->off];
		if ((l & DV_DNS_PTR) == DV_DNS_PTR) {
			rd_skip(c, 2);
			return;
		}
		if (l > DV_DNS_LABEL_MAX || c->off - start + 1 + l > DV_DNS_NAME_MAX) {
			c->err = true;
			return;
		}
		rd_skip(c, 1u + l);
		if (l == 0)
			return;
	}
}

/* Writing cursor: same sticky-error habit. */
typedef struct wcur {
	uint8_t *p;
	size_t cap, len;
	bool err;
} wcur_t;

static void wr(wcur_t *w, const void *data, size_t n)
{
	if (w->err || w->cap - w->len < n) {
		w->err = true;
		return;
	}
	memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void wr_u8(wcur_t *w, uint8_t v)
{
	wr(w, &v, 1);
}

static void wr_u16(wcur_t *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	wr(w, b, 2);
}

static void wr_u32(wcur_t *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	wr(w, b, 4);
}

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

static void wr_rr_head(wcur_t *w, uint16_t type, uint16_t cls, uint16_t rdlen)
{
	wr_u16(w, DV_DNS_PTR << 8 | OFFSET_QNAME);
	wr_u16(w, type);
	wr_u16(w, cls);
	wr_u32(w, RECORD_TTL);
	wr_u16(w, rdlen);
}

static void wr_soa(wcur_t *w, uint16_t cls)
{
	static const uint8_t mname[] = {3, 'n', 's', '1', DV_DNS_PTR, OFFSET_QNAME};
	static const uint8_t rname[] = {10,  'h', 'o', 's', 't',        'm',         'a',
	                                's', 't', 'e', 'r', DV_DNS_PTR, OFFSET_QNAME};

	wr_rr_head(w, DV_DNS_TYPE_SOA, cls, (uint16_t)(sizeof(mname) + sizeof(rname) + 20));
	wr(w, mname, sizeof(mname));
	wr(w, rname, sizeof(rname));
	wr_u32(w, 1);          /* serial */
	wr_u32(w, 3600);       /* refresh */
	wr_u32(w, 900);        /* retry */
	wr_u32(w, 604800);     /* expire */
	wr_u32(w, RECORD_TTL); /* minimum (negative caching TTL) */
}

/*
 * The question as sent back: the query's own bytes, or for the wrong-question
 * fault "x.<qname>" (or, when that would pass 255 bytes, the first letter
 * changed to another letter, not merely another case).
 */
static void wr_question(wcur_t *w, const uint8_t *qname, size_t namelen, const uint8_t *tail4,
                        bool wrong)
{
	if (!wrong) {
		wr(w, qname, namelen);
	} else if (namelen + 2 <= DV_DNS_NAME_MAX) {
		static const uint8_t x[] = {1, 'x'};
		wr(w, x, 2);
		wr(w, qname, namelen);
	} else {
		uint8_t c = (uint8_t)(qname[1] | 0x20) == 'x' ? 'y' : 'x';
		wr(w, qname, 1); /* namelen > 253 means at least one label */
		wr_u8(w, c);
		wr(w, qname + 2, namelen - 2);
	}
	wr(w, tail4, 4);
}

void dv_answer_opts_init(dv_answer_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->rcode = -1;
}

static int finish(wcur_t *w, bool wrong_id)
{
	if (w->err)
		return -ENOSPC;
	if (wrong_id)
		w->p[0] ^= 0x80;
	return (int)w->len;
}

static int build_formerr(const uint8_t *q, wcur_t *w, bool wrong_id)
{
	w->len = 0;
	w->err = false;
	wr(w, q, 2);
	wr_u8(w, (uint8_t)(DV_DNS_QR | (q[2] & DV_DNS_OPCODE_MASK) |
	                   (q[2] & DV_DNS_RD))); /* QR, opcode, RD */
	wr_u8(w, DV_DNS_RCODE_FORMERR);
	wr_u32(w, 0);
	wr_u32(w, 0);
	return finish(w, wrong_id);
}

int dv_answer_build(const uint8_t *q, size_t qlen, uint8_t *out, size_t cap,
                    const dv_answer_opts_t *o)
{
	dv_answer_opts_t defaults;
	rcur_t c = {.p = q, .len = qlen, .off = DV_DNS_HEADER_LEN, .err = false};
	wcur_t w = {.p = out, .cap = cap, .len = 0, .err = false};
	uint16_t qdcount, ancount, nscount, arcount, qtype, qclass;
	unsigned i;
	size_t namelen, qend;
	bool has_opt = false, do_bit = false, badvers = false;
	uint8_t opcode, rcode;
	uint16_t an = 0, ns = 0;
	int kind = 0; /* 0: nothing; type A, AAAA or SOA: answer; -SOA: SOA in authority */

	if (o == NULL) {
		dv_answer_opts_init(&defaults);
		o = &defaults;
	}
	if (q == NULL || qlen < DV_DNS_HEADER_LEN)
		return -EBADMSG;
	if (out == NULL || cap < DV_DNS_HEADER_LEN)
		return -ENOSPC;

	opcode = (uint8_t)((q[2] & DV_DNS_OPCODE_MASK) >> DV_DNS_OPCODE_SHIFT);
	qdcount = (uint16_t)(q[4] << 8 | q[5]);
	ancount = (uint16_t)(q[6] << 8 | q[7]);
	nscount = (uint16_t)(q[8] << 8 | q[9]);
	arcount = (uint16_t)(q[10] << 8 | q[11]);
	if ((q[2] & DV_DNS_QR) != 0 || qdcount != 1)
		return build_formerr(q, &w, o->wrong_id);

	namelen = rd_qname(&c);
	qtype = rd_u16(&c);
	qclass = rd_u16(&c);
	qend = c.off;
	/* Answer and authority records in a query are unusual but legal: skip them. */
	for (i = 0; i < (unsigned)ancount + nscount && !c.err; i++) {
		rd_skip_name(&c);
		rd_skip(&c, 8);
		rd_skip(&c, rd_u16(&c));
	}
	for (i = 0; i < arcount && !c.err; i++) {
		size_t owner = c.off;
		uint16_t type, cls, rdlen;
		uint8_t ttl[4] = {0, 0, 0, 0};

		rd_skip_name(&c);
		type = rd_u16(&c);
		cls = rd_u16(&c);
		if (!c.err && c.len - c.off >= 4)
			memcpy(ttl, c.p + c.off, 4);
		rd_skip(&c, 4);
		rdlen = rd_u16(&c);
		rd_skip(&c, rdlen);
		if (c.err || type != DV_DNS_TYPE_OPT)
			continue;
		if (has_opt || c.p[owner] != 0) { /* RFC 6891: one OPT, owned by the root */
			c.err = true;
			break;
		}
		(void)cls;
		has_opt = true;
		badvers = ttl[1] != 0;
		do_bit = (ttl[2] & (DV_DNS_EDNS_DO >> 8)) != 0;
	}
	if (c.err)
		return build_formerr(q, &w, o->wrong_id);

	if (o->reflect) {
		wr(&w, q, 2);
		wr_u8(&w, (uint8_t)(q[2] | DV_DNS_QR | (o->tc ? DV_DNS_TC : 0)));
		wr_u8(&w, o->rcode >= 0 ? (uint8_t)((q[3] & ~DV_DNS_RCODE_MASK) | o->rcode) : q[3]);
		wr(&w, q + 4, 8);
		wr_question(&w, q + DV_DNS_HEADER_LEN, namelen, q + DV_DNS_HEADER_LEN + namelen,
		            o->wrong_question);
		wr(&w, q + qend, qlen - qend);
		return finish(&w, o->wrong_id);
	}

	rcode = o->rcode >= 0 ? (uint8_t)(o->rcode & DV_DNS_RCODE_MASK) : 0;
	if (opcode != 0)
		rcode = DV_DNS_RCODE_NOTIMP;
	if (badvers)
		rcode = 0; /* the OPT RR carries the upper bits: BADVERS */
	if (!o->tc && !badvers && opcode == 0) {
		if (rcode == 0 && qclass == DV_DNS_CLASS_IN &&
		    (qtype == DV_DNS_TYPE_A || qtype == DV_DNS_TYPE_AAAA ||
		     qtype == DV_DNS_TYPE_SOA))
			kind = qtype;
		else if ((rcode == 0 && qclass == DV_DNS_CLASS_IN) ||
		         rcode == DV_DNS_RCODE_NXDOMAIN)
			kind = -DV_DNS_TYPE_SOA;
	}
	if (kind > 0)
		an = 1;
	else if (kind < 0)
		ns = 1;

	wr(&w, q, 2);
	wr_u8(&w, (uint8_t)(DV_DNS_QR | (q[2] & DV_DNS_OPCODE_MASK) | DV_DNS_AA |
	                    (o->tc ? DV_DNS_TC : 0) | (q[2] & DV_DNS_RD)));
	wr_u8(&w, rcode);
	wr_u16(&w, 1);
	wr_u16(&w, an);
	wr_u16(&w, ns);
	wr_u16(&w, has_opt ? 1 : 0);
	wr_question(&w, q + DV_DNS_HEADER_LEN, namelen, q + DV_DNS_HEADER_LEN + namelen,
	            o->wrong_question);

	if (kind == DV_DNS_TYPE_A) {
		uint64_t h = name_hash(q + DV_DNS_HEADER_LEN, namelen);
		wr_rr_head(&w, DV_DNS_TYPE_A, qclass, 4);
		wr_u8(&w, 198);
		wr_u8(&w, (uint8_t)(18 | ((h >> 16) & 1)));
		wr_u8(&w, (uint8_t)(h >> 8));
		wr_u8(&w, (uint8_t)h);
	} else if (kind == DV_DNS_TYPE_AAAA) {
		uint64_t h = name_hash(q + DV_DNS_HEADER_LEN, namelen);
		wr_rr_head(&w, DV_DNS_TYPE_AAAA, qclass, 16);
		wr_u32(&w, 0x20010db8);
		wr_u32(&w, (uint32_t)(h >> 32));
		wr_u32(&w, (uint32_t)h);
		wr_u32(&w, (uint32_t)(h >> 16) ^ 1u);
	} else if (kind == DV_DNS_TYPE_SOA || kind == -DV_DNS_TYPE_SOA) {
		wr_soa(&w, qclass);
	}
	if (has_opt) {
		wr_u8(&w, 0);
		wr_u16(&w, DV_DNS_TYPE_OPT);
		wr_u16(&w, DV_ANSWER_EDNS_UDP);
		wr_u8(&w, badvers ? BADVERS_HI : 0);
		wr_u8(&w, 0);
		wr_u8(&w, do_bit ? (uint8_t)(DV_DNS_EDNS_DO >> 8) : 0);
		wr_u8(&w, 0);
		wr_u16(&w, 0);
	}
	return finish(&w, o->wrong_id);
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
		out[2] &= (uint8_t)~DV_DNS_QR; /* QR clear: not a response */
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
