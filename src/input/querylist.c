/* querylist: parse dnsperf-format query lists and compile every line to wire format once. */
#include "config.h"

#include "input/querylist.h"

#include <errno.h>
#include <ldns/ldns.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/wire.h"
#include "input/qflags.h"

/*
 * Why the bytes are written by hand: building an ldns_pkt and calling
 * ldns_pkt2wire costs ~2.7 us per query; writing the 12-byte header and the
 * question ourselves costs a fraction of that (doc/performance.md).
 *
 * Names: a name without a backslash is converted here (split on '.', length
 * checks); that path is byte-for-byte what ldns_str2rdf_dname produces, which
 * tests/unit/input/test_querylist.c checks. A name with a backslash (\DDD, \X) goes
 * through ldns_str2rdf_dname so escapes follow ldns exactly.
 * Types: TYPEnnn is parsed here (ldns truncates numbers above 65535 silently);
 * mnemonics are looked up with ldns_get_rr_type_by_name behind a tiny cache,
 * because most lists repeat a handful of types.
 */

#define QL_MSG_MAX                                                                                 \
	(DV_DNS_HEADER_LEN + DV_DNS_NAME_MAX + 4 + DV_DNS_OPT_RR_LEN + DV_QUERYLIST_EDNS_OPTS_MAX)
#define QL_MAX_TOKENS 4
#define QL_QUOTE_MAX  32 /* characters of an offending token quoted in messages */
#define QL_TYPE_CACHE 8

typedef struct ql_tok {
	const char *p;
	size_t len;
} ql_tok_t;

typedef struct ql_type_cache_ent {
	char name[16];
	uint8_t len;
	uint16_t type;
} ql_type_cache_ent_t;

typedef struct ql_builder {
	uint8_t *arena;
	size_t arena_len;
	size_t arena_cap;
	uint32_t *off;
	size_t count;
	size_t off_cap;
	size_t lines;
	size_t skipped;
	const char *name; /* for messages */
	const dv_querylist_options_t *opts;
	uint8_t hdr[DV_DNS_HEADER_LEN];
	uint8_t opt_rr[DV_DNS_OPT_RR_LEN + DV_QUERYLIST_EDNS_OPTS_MAX];
	size_t opt_len;
	ql_type_cache_ent_t tcache[QL_TYPE_CACHE];
	unsigned tcache_next;
	uint16_t *qlen; /* question lengths (off_cap entries): kept when a line has flags */
	bool flagged;   /* a line had per-line flags (qflags.h): OPT RRs differ in length */
} ql_builder_t;

void dv_querylist_options_init(dv_querylist_options_t *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->rd = true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int dv_querylist_add_edns_option(dv_querylist_options_t *opts, const char *spec, dv_err_t *err)
{
	const char *colon = strchr(spec, ':'), *hex;
	char *end;
	unsigned long code;
	size_t nhex, need, i;
	uint8_t *p;

	if (colon == NULL || colon == spec)
		return dv_err_set(err, -EINVAL, "-E: '%s' is not CODE:HEXVALUE (e.g. 10:0102)",
		                  spec);
	errno = 0;
	code = strtoul(spec, &end, 10);
	if (end != colon || errno != 0 || code > 65535 || spec[0] == '-' || spec[0] == '+')
		return dv_err_set(err, -EINVAL, "-E: '%s': the option code must be 0-65535", spec);
	hex = colon + 1;
	nhex = strlen(hex);
	if (nhex % 2 != 0)
		return dv_err_set(err, -EINVAL,
		                  "-E: '%s': the value needs an even number of hex digits", spec);
	for (i = 0; i < nhex; i++)
		if (hexval(hex[i]) < 0)
			return dv_err_set(err, -EINVAL, "-E: '%s': '%c' is not a hex digit", spec,
			                  hex[i]);
	need = 4 + nhex / 2;
	if (opts->edns_opts_len + need > DV_QUERYLIST_EDNS_OPTS_MAX)
		return dv_err_set(err, -ENOSPC, "-E: at most %d octets of EDNS options",
		                  DV_QUERYLIST_EDNS_OPTS_MAX);
	p = opts->edns_opts + opts->edns_opts_len;
	p[0] = (uint8_t)(code >> 8);
	p[1] = (uint8_t)code;
	p[2] = (uint8_t)((nhex / 2) >> 8);
	p[3] = (uint8_t)(nhex / 2);
	for (i = 0; i < nhex / 2; i++)
		p[4 + i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	opts->edns_opts_len = (uint16_t)(opts->edns_opts_len + need);
	opts->edns = true;
	return 0;
}

void dv_querylist_free(dv_querylist_t *ql)
{
	if (ql == NULL)
		return;
	free(ql->arena);
	free(ql->off);
	free(ql->source);
	free(ql->qlen);
	free(ql->ts_ns);
	free(ql->client);
	free(ql->tsig_key);
	memset(ql, 0, sizeof(*ql));
}

static const char *display_name(const char *name)
{
	return strcmp(name, "-") == 0 ? "(stdin)" : name;
}

/* 'tok' for messages, cut to QL_QUOTE_MAX characters with "..." when longer. */
static void quote(char *dst, size_t dstsz, const char *p, size_t len)
{
	if (len > QL_QUOTE_MAX)
		snprintf(dst, dstsz, "'%.*s...'", QL_QUOTE_MAX, p);
	else
		snprintf(dst, dstsz, "'%.*s'", (int)len, p);
}

static int fail_tok(char *msg, size_t msgsz, const char *what, const char *p, size_t len)
{
	char q[QL_QUOTE_MAX + 8];
	quote(q, sizeof(q), p, len);
	snprintf(msg, msgsz, "%s %s", what, q);
	return -EINVAL;
}

/* Name text -> wire name in out (>= DV_DNS_NAME_MAX + 1 bytes). Returns wire length or -EINVAL. */
static int compile_name(const char *s, size_t n, uint8_t *out, char *msg, size_t msgsz)
{
	if (memchr(s, '\\', n) != NULL) {
		char buf[DV_DNS_NAME_MAX * 4 + 2];
		ldns_rdf *rdf = NULL;
		ldns_status st;
		size_t wlen;

		if (n >= sizeof(buf))
			return fail_tok(msg, msgsz, "name longer than 255 octets:", s, n);
		memcpy(buf, s, n);
		buf[n] = '\0';
		st = ldns_str2rdf_dname(&rdf, buf);
		switch (st) {
		case LDNS_STATUS_OK:
			break;
		case LDNS_STATUS_LABEL_OVERFLOW:
			return fail_tok(msg, msgsz, "label longer than 63 octets in name", s, n);
		case LDNS_STATUS_DOMAINNAME_OVERFLOW:
			return fail_tok(msg, msgsz, "name longer than 255 octets:", s, n);
		case LDNS_STATUS_EMPTY_LABEL:
			return fail_tok(msg, msgsz, "empty label in name", s, n);
		case LDNS_STATUS_SYNTAX_BAD_ESCAPE:
			return fail_tok(msg, msgsz, "bad escape in name", s, n);
		case LDNS_STATUS_MEM_ERR:
			snprintf(msg, msgsz, "out of memory");
			return -ENOMEM;
		default: {
			char what[96];
			snprintf(what, sizeof(what), "bad name (%s):", ldns_get_errorstr_by_id(st));
			return fail_tok(msg, msgsz, what, s, n);
		}
		}
		wlen = ldns_rdf_size(rdf);
		if (wlen > DV_DNS_NAME_MAX) { /* ldns checks this too; never trust a size blindly */
			ldns_rdf_deep_free(rdf);
			return fail_tok(msg, msgsz, "name longer than 255 octets:", s, n);
		}
		memcpy(out, ldns_rdf_data(rdf), wlen);
		ldns_rdf_deep_free(rdf);
		return (int)wlen;
	}

	if (n == 1 && s[0] == '.') {
		out[0] = 0;
		return 1;
	}
	/* Plain name: labels separated by '.', an optional final '.'. */
	size_t w = 0, i = 0;
	while (i < n) {
		const char *lab = s + i;
		const char *dot = memchr(lab, '.', n - i);
		size_t llen = dot != NULL ? (size_t)(dot - lab) : n - i;

		if (llen == 0)
			return fail_tok(msg, msgsz, "empty label in name", s, n);
		if (llen > DV_DNS_LABEL_MAX)
			return fail_tok(msg, msgsz, "label longer than 63 octets:", lab, llen);
		if (w + 1 + llen + 1 > DV_DNS_NAME_MAX)
			return fail_tok(msg, msgsz, "name longer than 255 octets:", s, n);
		out[w] = (uint8_t)llen;
		memcpy(out + w + 1, lab, llen);
		w += 1 + llen;
		i += llen + (dot != NULL ? 1 : 0);
	}
	out[w++] = 0;
	return (int)w;
}

static bool ieq_prefix(const char *p, size_t len, const char *prefix)
{
	size_t pl = strlen(prefix);
	return len >= pl && strncasecmp(p, prefix, pl) == 0;
}

/* "TYPEnnn"/"CLASSnnn" number after a prefix of plen chars: 1 ok, 0 not that form, -1 range. */
static int generic_number(const char *p, size_t len, size_t plen, uint16_t *out)
{
	uint32_t v = 0;
	size_t i;

	if (len == plen || len > plen + 5)
		return len > plen + 5 ? -1 : 0;
	for (i = plen; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		v = v * 10 + (uint32_t)(p[i] - '0');
	}
	if (v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 1;
}

/* 0 and *type set, or -EINVAL (unknown mnemonic or number out of range). */
static int lookup_type(ql_builder_t *b, const char *p, size_t len, uint16_t *type)
{
	char buf[16];
	unsigned i;
	ldns_rr_type t;

	for (i = 0; i < QL_TYPE_CACHE; i++) {
		const ql_type_cache_ent_t *e = &b->tcache[i];
		if (e->len == len && memcmp(e->name, p, len) == 0) {
			*type = e->type;
			return 0;
		}
	}
	if (ieq_prefix(p, len, "TYPE")) {
		if (generic_number(p, len, 4, type) != 1)
			return -EINVAL;
	} else {
		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = '\0';
		t = ldns_get_rr_type_by_name(buf);
		if (t == 0 || (unsigned)t > 65535)
			return -EINVAL;
		*type = (uint16_t)t;
	}
	if (len < sizeof(b->tcache[0].name)) {
		ql_type_cache_ent_t *e = &b->tcache[b->tcache_next++ % QL_TYPE_CACHE];
		memcpy(e->name, p, len);
		e->len = (uint8_t)len;
		e->type = *type;
	}
	return 0;
}

static int lookup_class(const char *p, size_t len, uint16_t *cls)
{
	char buf[16];
	ldns_rr_class c;

	if (len == 2 && (p[0] | 0x20) == 'i' && (p[1] | 0x20) == 'n') {
		*cls = LDNS_RR_CLASS_IN;
		return 0;
	}
	if (ieq_prefix(p, len, "CLASS"))
		return generic_number(p, len, 5, cls) == 1 ? 0 : -EINVAL;
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, p, len);
	buf[len] = '\0';
	c = ldns_get_rr_class_by_name(buf);
	if (c == 0 || (unsigned)c > 65535)
		return -EINVAL;
	*cls = (uint16_t)c;
	return 0;
}

static int grow(ql_builder_t *b)
{
	if (b->arena_cap - b->arena_len < QL_MSG_MAX) {
		size_t cap = b->arena_cap < 65536 ? 65536 : b->arena_cap + b->arena_cap / 2;
		uint8_t *a = realloc(b->arena, cap);
		if (a == NULL)
			return -ENOMEM;
		b->arena = a;
		b->arena_cap = cap;
	}
	if (b->off_cap < b->count + 2) {
		size_t cap = b->off_cap < 16384 ? 16384 : b->off_cap + b->off_cap / 2;
		uint32_t *o = realloc(b->off, cap * sizeof(*o));
		if (o == NULL)
			return -ENOMEM;
		b->off = o;
		uint16_t *q = realloc(b->qlen, cap * sizeof(*q));
		if (q == NULL)
			return -ENOMEM;
		b->qlen = q;
		b->off_cap = cap;
	}
	return 0;
}

/* Byte classes for the tokenizer: one table lookup per byte. */
enum { CH_WORD = 0, CH_SPACE = 1, CH_NUL = 2 };
static const uint8_t ch_class[256] = {
    ['\0'] = CH_NUL,   [' '] = CH_SPACE,  ['\t'] = CH_SPACE,
    ['\r'] = CH_SPACE, ['\v'] = CH_SPACE, ['\f'] = CH_SPACE,
};

/*
 * Split into tokens; stop at a token starting with '#' or ';'. A backslash takes the
 * character after it into the token, a space too (`a\ b`, the presentation format of
 * ldns and dnsperf); the name compiler reads the escape. Returns the count (<= max).
 */
static size_t tokenize(const char *p, size_t len, ql_tok_t *tok, size_t max, bool *nul)
{
	const uint8_t *u = (const uint8_t *)p;
	size_t n = 0, i = 0;

	*nul = false;
	while (i < len) {
		if (ch_class[u[i]] == CH_SPACE) {
			i++;
			continue;
		}
		if (u[i] == '#' || u[i] == ';')
			break;
		size_t start = i;
		uint8_t c;
		while (i < len && (c = ch_class[u[i]]) != CH_SPACE) {
			if (c == CH_NUL)
				*nul = true;
			if (u[i] == '\\' && i + 1 < len && ch_class[u[i + 1]] != CH_NUL)
				i++;
			i++;
		}
		if (n < max) {
			tok[n].p = p + start;
			tok[n].len = i - start;
		}
		n++;
	}
	return n;
}

/*
 * Per-line flags: the line's last field (not the name) cut at its first comma, the rest
 * parsed (qflags.h). 1 with f filled, 0 when the line has none, -EINVAL with msg.
 */
static int line_flags(ql_tok_t *tok, size_t ntok, dv_qflags_t *f, char *msg, size_t msgsz)
{
	ql_tok_t *last = &tok[ntok - 1];
	const char *c;
	int rc;

	if (ntok < 2 || ntok > QL_MAX_TOKENS - 1)
		return 0;
	for (size_t i = 1; i + 1 < ntok; i++)
		if (memchr(tok[i].p, ',', tok[i].len) != NULL)
			return fail_tok(msg, msgsz,
			                "query flags follow the line's last field, joined by "
			                "commas, no spaces:",
			                tok[i].p, tok[i].len);
	if ((c = memchr(last->p, ',', last->len)) == NULL)
		return 0;
	rc = dv_qflags_parse(c + 1, last->len - (size_t)(c + 1 - last->p), f, msg, msgsz);
	last->len = (size_t)(c - last->p);
	return rc != 0 ? rc : 1;
}

/*
 * Compile one line. Returns 1 when a query was added, 0 for a blank or comment
 * line, -EINVAL with msg for a malformed line, other negatives for fatal errors.
 */
static int compile_line(ql_builder_t *b, const char *p, size_t len, char *msg, size_t msgsz)
{
	ql_tok_t tok[QL_MAX_TOKENS];
	uint16_t type, cls = LDNS_RR_CLASS_IN;
	uint8_t *m;
	size_t ntok, w;
	bool nul;
	int nlen, rc, flags;
	dv_qflags_t qf;

	ntok = tokenize(p, len, tok, QL_MAX_TOKENS, &nul);
	if (ntok == 0)
		return 0;
	if (nul) {
		snprintf(msg, msgsz, "NUL byte in line");
		return -EINVAL;
	}
	rc = grow(b);
	if (rc != 0) {
		snprintf(msg, msgsz, "out of memory");
		return rc;
	}
	m = b->arena + b->arena_len;
	nlen = compile_name(tok[0].p, tok[0].len, m + DV_DNS_HEADER_LEN, msg, msgsz);
	if (nlen < 0)
		return nlen;
	if (ntok == 1)
		return fail_tok(msg, msgsz, "missing query type after name", tok[0].p, tok[0].len);
	if ((flags = line_flags(tok, ntok, &qf, msg, msgsz)) < 0)
		return flags;
	if (ntok > 3)
		return fail_tok(msg, msgsz,
		                "stray extra field (expected NAME TYPE [CLASS]):", tok[3].p,
		                tok[3].len);
	if (ntok == 2) {
		if (lookup_type(b, tok[1].p, tok[1].len, &type) != 0)
			return fail_tok(msg, msgsz, "unknown type", tok[1].p, tok[1].len);
	} else if (lookup_class(tok[1].p, tok[1].len, &cls) == 0) {
		/* NAME CLASS TYPE (zone-file order) */
		if (lookup_type(b, tok[2].p, tok[2].len, &type) != 0)
			return fail_tok(msg, msgsz, "unknown type", tok[2].p, tok[2].len);
	} else if (lookup_type(b, tok[1].p, tok[1].len, &type) == 0) {
		/* NAME TYPE CLASS */
		uint16_t other;
		if (lookup_class(tok[2].p, tok[2].len, &cls) != 0) {
			if (lookup_type(b, tok[2].p, tok[2].len, &other) == 0)
				return fail_tok(msg, msgsz,
				                "stray extra field (expected NAME TYPE [CLASS]):",
				                tok[2].p, tok[2].len);
			return fail_tok(msg, msgsz, "unknown class", tok[2].p, tok[2].len);
		}
	} else {
		return fail_tok(msg, msgsz, "unknown type or class", tok[1].p, tok[1].len);
	}

	memcpy(m, b->hdr, DV_DNS_HEADER_LEN);
	w = DV_DNS_HEADER_LEN + (size_t)nlen;
	m[w++] = (uint8_t)(type >> 8);
	m[w++] = (uint8_t)type;
	m[w++] = (uint8_t)(cls >> 8);
	m[w++] = (uint8_t)cls;
	b->qlen[b->count] = (uint16_t)(nlen + 4);
	if (flags == 0) {
		memcpy(m + w, b->opt_rr, b->opt_len);
		w += b->opt_len;
	} else if ((w = dv_qflags_apply(&qf, b->opt_rr, b->opt_len, DV_QUERYLIST_EDNS_OPTS_MAX, m,
	                                w)) == 0) {
		snprintf(msg, msgsz, "the line's EDNS options and -E's exceed %d octets",
		         DV_QUERYLIST_EDNS_OPTS_MAX);
		return -EINVAL;
	} else {
		b->flagged = true;
	}
	if (b->arena_len + w > UINT32_MAX) {
		snprintf(msg, msgsz, "list too large: more than 4 GiB of wire data");
		return -EFBIG;
	}
	b->off[b->count++] = (uint32_t)b->arena_len;
	b->arena_len += w;
	return 1;
}

size_t dv_querylist_opt_rr(const dv_querylist_options_t *opts, uint8_t *out)
{
	uint16_t bufsize = opts->edns_bufsize != 0 ? opts->edns_bufsize : DV_DNS_EDNS_UDP_DEFAULT;
	dv_wire_writer_t w;

	if (!opts->edns && !opts->dnssec_ok && opts->edns_opts_len == 0)
		return 0;
	dv_wire_writer_init(&w, out, DV_DNS_OPT_RR_LEN);
	dv_wire_put_opt_rr(&w, bufsize, 0, opts->dnssec_ok, (uint16_t)opts->edns_opts_len);
	memcpy(out + DV_DNS_OPT_RR_LEN, opts->edns_opts, opts->edns_opts_len);
	return DV_DNS_OPT_RR_LEN + opts->edns_opts_len;
}

static void builder_init(ql_builder_t *b, const char *name, const dv_querylist_options_t *opts)
{
	dv_wire_writer_t w;

	memset(b, 0, sizeof(*b));
	b->name = name;
	b->opts = opts;
	b->opt_len = dv_querylist_opt_rr(opts, b->opt_rr);
	/* ID 0; flags: RD only; QDCOUNT 1; ARCOUNT 1 with EDNS. */
	dv_wire_writer_init(&w, b->hdr, sizeof(b->hdr));
	dv_wire_put_query_header(&w, opts->rd);
	dv_wire_set16(b->hdr + DV_DNS_OFF_ARCOUNT, b->opt_len > 0 ? 1 : 0);
}

/* Feed one line (without its newline). 0 to go on, negative to stop (err filled). */
static int builder_line(ql_builder_t *b, const char *p, size_t len, dv_err_t *err)
{
	char msg[400];
	int rc;

	b->lines++;
	/* A UTF-8 byte order mark (Windows editors write one) is not part of the first name. */
	if (b->lines == 1 && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
		p += 3;
		len -= 3;
	}
	rc = compile_line(b, p, len, msg, sizeof(msg));
	if (rc >= 0)
		return 0;
	if (rc == -EINVAL && b->opts->skip_bad) {
		b->skipped++;
		return 0;
	}
	return dv_err_set(err, rc, "%s:%zu: %s", display_name(b->name), b->lines, msg);
}

static void builder_free(ql_builder_t *b)
{
	free(b->arena);
	free(b->off);
	free(b->qlen);
	b->arena = NULL;
	b->off = NULL;
	b->qlen = NULL;
}

static int builder_finish(ql_builder_t *b, dv_querylist_t *ql, dv_err_t *err)
{
	uint8_t *a;
	uint32_t *o;

	if (b->count == 0) {
		if (b->skipped > 0)
			return dv_err_set(err, -EINVAL,
			                  "%s: no queries (%zu malformed lines skipped)",
			                  display_name(b->name), b->skipped);
		return dv_err_set(err, -EINVAL, "%s: no queries", display_name(b->name));
	}
	b->off[b->count] = (uint32_t)b->arena_len;
	/* Give back the slack of geometric growth: the list lives for the whole run. */
	a = realloc(b->arena, b->arena_len);
	if (a != NULL)
		b->arena = a;
	o = realloc(b->off, (b->count + 1) * sizeof(*o));
	if (o != NULL)
		b->off = o;

	ql->source = strdup(b->name);
	if (ql->source == NULL)
		return dv_err_set(err, -ENOMEM, "%s: out of memory", display_name(b->name));
	ql->arena = b->arena;
	ql->arena_len = b->arena_len;
	ql->off = b->off;
	ql->count = b->count;
	ql->lines = b->lines;
	ql->skipped = b->skipped;
	ql->opt_len = (uint16_t)b->opt_len;
	if (b->flagged) { /* per-line flags: OPT RRs of several lengths */
		ql->qlen = b->qlen;
		b->qlen = NULL;
	}
	b->arena = NULL;
	b->off = NULL;
	return 0;
}

int dv_ql_arrays_alloc(dv_ql_arrays_t *a, size_t n, size_t arena_cap, bool qlen, bool ts,
                       bool client)
{
	*a = (dv_ql_arrays_t){.count = n};
	a->arena = malloc(arena_cap ? arena_cap : 1);
	a->off = malloc((n + 1) * sizeof(*a->off));
	if (qlen)
		a->qlen = malloc(n * sizeof(*a->qlen) + 1);
	if (ts)
		a->ts_ns = malloc(n * sizeof(*a->ts_ns) + 1);
	if (client)
		a->client = malloc(n * sizeof(*a->client) + 1);
	if (a->arena == NULL || a->off == NULL || (qlen && a->qlen == NULL) ||
	    (ts && a->ts_ns == NULL) || (client && a->client == NULL)) {
		dv_ql_arrays_free(a);
		return -ENOMEM;
	}
	return 0;
}

void dv_ql_arrays_free(dv_ql_arrays_t *a)
{
	free(a->arena), free(a->off), free(a->qlen), free(a->ts_ns), free(a->client);
	*a = (dv_ql_arrays_t){0};
}

void dv_querylist_adopt(dv_querylist_t *ql, dv_ql_arrays_t *a)
{
	free(ql->arena), free(ql->off);
	ql->arena = a->arena, ql->arena_len = a->arena_len, ql->off = a->off, ql->count = a->count;
	if (a->qlen != NULL)
		free(ql->qlen), ql->qlen = a->qlen;
	if (a->ts_ns != NULL)
		free(ql->ts_ns), ql->ts_ns = a->ts_ns;
	if (a->client != NULL)
		free(ql->client), ql->client = a->client;
	*a = (dv_ql_arrays_t){0};
}

int dv_querylist_keep_every(dv_querylist_t *ql, size_t first, size_t step)
{
	size_t n, i, k = 0, bytes = 0, len;
	dv_ql_arrays_t a;

	if (step == 0 || first >= ql->count)
		return -EINVAL;
	n = (ql->count - first + step - 1) / step;
	for (i = first; i < ql->count; i += step)
		bytes += ql->off[i + 1] - ql->off[i];
	if (dv_ql_arrays_alloc(&a, n, bytes, ql->qlen != NULL, ql->ts_ns != NULL,
	                       ql->client != NULL) != 0)
		return -ENOMEM;
	a.off[0] = 0;
	for (i = first; i < ql->count; i += step, k++) {
		const uint8_t *q = dv_querylist_get(ql, i, &len);
		memcpy(a.arena + a.off[k], q, len);
		a.off[k + 1] = (uint32_t)(a.off[k] + len);
		if (a.qlen != NULL)
			a.qlen[k] = ql->qlen[i];
		if (a.ts_ns != NULL)
			a.ts_ns[k] = ql->ts_ns[i];
		if (a.client != NULL)
			a.client[k] = ql->client[i];
	}
	a.arena_len = bytes;
	dv_querylist_adopt(ql, &a);
	return 0;
}

int dv_querylist_load_buffer(dv_querylist_t *ql, const char *buf, size_t len, const char *name,
                             const dv_querylist_options_t *opts, dv_err_t *err)
{
	ql_builder_t b;
	size_t pos = 0;
	int rc = 0;

	memset(ql, 0, sizeof(*ql));
	builder_init(&b, name, opts);
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;

		rc = builder_line(&b, buf + pos, llen, err);
		if (rc != 0)
			goto out;
		pos += llen + 1;
	}
	rc = builder_finish(&b, ql, err);
out:
	builder_free(&b);
	return rc;
}

int dv_querylist_load_stream(dv_querylist_t *ql, FILE *in, const char *name,
                             const dv_querylist_options_t *opts, dv_err_t *err)
{
	ql_builder_t b;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	memset(ql, 0, sizeof(*ql));
	builder_init(&b, name, opts);
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		size_t llen = (size_t)n;
		if (llen > 0 && line[llen - 1] == '\n')
			llen--;
		rc = builder_line(&b, line, llen, err);
		if (rc != 0)
			goto out;
		errno = 0;
	}
	if (ferror(in)) {
		int e = errno != 0 ? errno : EIO;
		rc = dv_err_set(err, -e, "%s: %s", display_name(name), strerror(e));
		goto out;
	}
	rc = builder_finish(&b, ql, err);
out:
	free(line);
	builder_free(&b);
	return rc;
}

int dv_querylist_load(dv_querylist_t *ql, const char *path, const dv_querylist_options_t *opts,
                      dv_err_t *err)
{
	FILE *in;
	int rc;

	memset(ql, 0, sizeof(*ql));
	if (strcmp(path, "-") == 0)
		return dv_querylist_load_stream(ql, stdin, "-", opts, err);
	in = fopen(path, "r");
	if (in == NULL) {
		int e = errno;
		return dv_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	rc = dv_querylist_load_stream(ql, in, path, opts, err);
	fclose(in);
	return rc;
}
