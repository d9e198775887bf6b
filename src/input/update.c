/* update: dnsperf's -u input compiled to UPDATE messages (update.h, RFC 2136 section 2). */
#include "input/update.h"

#include <ctype.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/dns.h"
#include "base/wire.h"

#define UPD_LINE_MAX 4096 /* characters of one statement (rdata of a large TXT included) */
#define UPD_TEXT_MAX 1100 /* a name in presentation form, escapes included */

typedef struct upd {
	/* the list being built */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	uint32_t *off;
	uint16_t *qlen;
	size_t count, cap;
	size_t lines, skipped;
	const char *name;
	const dv_querylist_options_t *opts;
	uint8_t opt_rr[DV_DNS_OPT_RR_LEN + DV_QUERYLIST_EDNS_OPTS_MAX];
	size_t opt_len;
	/* the message being built */
	bool in_block, skipping;
	size_t block_line;
	uint8_t msg[DV_QUERYLIST_WIRE_MAX];
	dv_wire_writer_t w;
	uint16_t zlen; /* zone section octets: the "question" answers are matched on */
	char zone[UPD_TEXT_MAX];
	ldns_rdf *origin;
	unsigned prereqs, updates;
} upd_t;

/* What a statement keyword allows (dnsperf's read_update_line arguments). */
typedef struct upd_kind {
	const char *word;
	bool update;     /* an update (else a prerequisite) */
	bool ttl;        /* a TTL follows the owner (add only) */
	bool need_type;  /* the type is required */
	bool want_rdata; /* rdata may follow the type */
	bool need_rdata; /* rdata is required */
} upd_kind_t;

static const upd_kind_t kinds[] = {
    {"add", true, true, true, true, true},
    {"delete", true, false, false, true, false},
    {"require", false, false, false, true, false},
    {"prohibit", false, false, false, false, false},
};

/* Next whitespace-separated token of *p (advanced past it); NULL at the end. */
static char *token(char **p)
{
	char *s = *p, *t;

	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	if (*s == '\0')
		return NULL;
	t = s;
	while (*s != '\0' && !isspace((unsigned char)*s))
		s++;
	if (*s != '\0')
		*s++ = '\0';
	*p = s;
	return t;
}

/* The rest of the line, trimmed; NULL when empty. */
static char *rest(char *p)
{
	size_t n;

	while (*p != '\0' && isspace((unsigned char)*p))
		p++;
	n = strlen(p);
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		p[--n] = '\0';
	return n > 0 ? p : NULL;
}

/* NAME made absolute (relative to the zone unless it ends in a dot) into out. */
static int absolute(const upd_t *u, const char *name, char *out, size_t outsz, char *msg,
                    size_t msgsz)
{
	int n;

	if (ldns_dname_str_absolute(name))
		n = snprintf(out, outsz, "%s", name);
	else if (strcmp(name, "@") == 0)
		n = snprintf(out, outsz, "%s", u->zone);
	else
		n = snprintf(out, outsz, "%s%s%s", name, strcmp(u->zone, ".") == 0 ? "" : ".",
		             u->zone);
	if (n < 0 || (size_t)n >= outsz) {
		snprintf(msg, msgsz, "name too long: %.40s", name);
		return -EINVAL;
	}
	return 0;
}

/* Append a name in wire form (uncompressed). */
static int put_name(upd_t *u, const char *text, char *msg, size_t msgsz)
{
	ldns_rdf *d = ldns_dname_new_frm_str(text);

	if (d == NULL) {
		snprintf(msg, msgsz, "bad name: %.60s", text);
		return -EINVAL;
	}
	dv_wire_put(&u->w, ldns_rdf_data(d), ldns_rdf_size(d));
	ldns_rdf_deep_free(d);
	return 0;
}

/* The zone line: a new message with the zone section (zone SOA IN). */
static int zone_line(upd_t *u, char *line, char *msg, size_t msgsz)
{
	char *p = line, *z = token(&p), *extra = token(&p);
	int rc;

	if (extra != NULL) {
		snprintf(msg, msgsz,
		         "a zone line holds the zone name alone (stray '%.32s'; -u reads updates: "
		         "ZONE, statements, send)",
		         extra);
		return -EINVAL;
	}
	if (snprintf(u->zone, sizeof(u->zone), "%s%s", z, ldns_dname_str_absolute(z) ? "" : ".") >=
	    (int)sizeof(u->zone)) {
		snprintf(msg, msgsz, "zone name too long");
		return -EINVAL;
	}
	u->origin = ldns_dname_new_frm_str(u->zone);
	if (u->origin == NULL) {
		snprintf(msg, msgsz, "bad zone name: %.60s", z);
		return -EINVAL;
	}
	dv_wire_writer_init(&u->w, u->msg, sizeof(u->msg));
	dv_wire_put16(&u->w, 0); /* ID: the engine writes its own */
	dv_wire_put8(&u->w, (uint8_t)(DV_DNS_OPCODE_UPDATE << DV_DNS_OPCODE_SHIFT));
	dv_wire_put8(&u->w, 0);
	dv_wire_put16(&u->w, 1);               /* ZOCOUNT */
	dv_wire_put(&u->w, "\0\0\0\0\0\0", 6); /* PR, UP, AD counts */
	if ((rc = put_name(u, u->zone, msg, msgsz)) != 0)
		return rc;
	dv_wire_put16(&u->w, DV_DNS_TYPE_SOA);
	dv_wire_put16(&u->w, DV_DNS_CLASS_IN);
	u->zlen = (uint16_t)(u->w.len - DV_DNS_HEADER_LEN);
	u->prereqs = u->updates = 0;
	return 0;
}

/* The rdata of TYPE for OWNER from its zone-file text, appended with its length. */
static int put_rdata(upd_t *u, const char *owner, const char *type, const char *text, char *msg,
                     size_t msgsz)
{
	char rrtext[UPD_LINE_MAX + UPD_TEXT_MAX + 64];
	ldns_rr *rr = NULL;
	ldns_buffer *b;
	ldns_status s;
	int rc = 0;

	snprintf(rrtext, sizeof(rrtext), "%s 0 IN %s %s", owner, type, text);
	s = ldns_rr_new_frm_str(&rr, rrtext, 0, u->origin, NULL);
	if (s != LDNS_STATUS_OK) {
		snprintf(msg, msgsz, "bad %s rdata '%.60s': %s", type, text,
		         ldns_get_errorstr_by_id(s));
		return -EINVAL;
	}
	b = ldns_buffer_new(DV_QUERYLIST_WIRE_MAX);
	if (b == NULL || ldns_rr_rdata2buffer_wire(b, rr) != LDNS_STATUS_OK) {
		snprintf(msg, msgsz, "out of memory");
		rc = -ENOMEM;
	} else {
		dv_wire_put16(&u->w, (uint16_t)ldns_buffer_position(b));
		dv_wire_put(&u->w, ldns_buffer_begin(b), ldns_buffer_position(b));
	}
	ldns_buffer_free(b);
	ldns_rr_free(rr);
	return rc;
}

/*
 * RFC 2136 section 2.4 (prerequisites) and 2.5 (updates): the class says what a record
 * means. With rdata: require IN (value-dependent), delete NONE (one RR), add IN. Without:
 * require and delete ANY, prohibit NONE.
 */
static uint16_t statement_class(const upd_kind_t *k, bool rdata)
{
	if (k->ttl || (rdata && !k->update))
		return DV_DNS_CLASS_IN;
	if (!k->want_rdata || rdata)
		return DV_DNS_CLASS_NONE;
	return DV_DNS_CLASS_ANY;
}

static int statement(upd_t *u, const upd_kind_t *k, char *p, char *msg, size_t msgsz)
{
	char owner[UPD_TEXT_MAX], *o = token(&p), *t, *rdata;
	const char *endp = NULL;
	uint32_t ttl = 0;
	uint16_t type = LDNS_RR_TYPE_ANY;
	int rc;

	if (!k->update && u->updates > 0) {
		snprintf(msg, msgsz,
		         "a prerequisite (%s) after an update: prerequisites come first", k->word);
		return -EINVAL;
	}
	if (o == NULL) {
		snprintf(msg, msgsz, "%s: no name", k->word);
		return -EINVAL;
	}
	if ((rc = absolute(u, o, owner, sizeof(owner), msg, msgsz)) != 0)
		return rc;
	if (k->ttl) {
		t = token(&p);
		if (t == NULL || !isdigit((unsigned char)*t) ||
		    (ttl = ldns_str2period(t, &endp), *endp != '\0')) {
			snprintf(msg, msgsz, "%s: '%.32s' is not a TTL", k->word,
			         t != NULL ? t : "");
			return -EINVAL;
		}
	}
	t = token(&p);
	if (t == NULL && k->need_type) {
		snprintf(msg, msgsz, "%s: no type", k->word);
		return -EINVAL;
	}
	if (t != NULL && (type = ldns_get_rr_type_by_name(t)) == 0) {
		snprintf(msg, msgsz, "%s: unknown type '%.32s'", k->word, t);
		return -EINVAL;
	}
	rdata = t != NULL ? rest(p) : NULL;
	if ((rdata != NULL && !k->want_rdata) || (rdata == NULL && k->need_rdata)) {
		snprintf(msg, msgsz, rdata != NULL ? "%s: no rdata after the type" : "%s: no rdata",
		         k->word);
		return -EINVAL;
	}
	if ((rc = put_name(u, owner, msg, msgsz)) != 0)
		return rc;
	dv_wire_put16(&u->w, type);
	dv_wire_put16(&u->w, statement_class(k, rdata != NULL));
	dv_wire_put32(&u->w, ttl);
	if (rdata != NULL)
		rc = put_rdata(u, owner, t, rdata, msg, msgsz);
	else
		dv_wire_put16(&u->w, 0);
	if (k->update)
		u->updates++;
	else
		u->prereqs++;
	return rc;
}

/* "send": counts, the OPT RR, and the message into the list. */
static int send_msg(upd_t *u, char *msg, size_t msgsz)
{
	uint8_t *m;

	dv_wire_put(&u->w, u->opt_rr, u->opt_len);
	if (!u->w.ok || u->prereqs > UINT16_MAX || u->updates > UINT16_MAX) {
		snprintf(msg, msgsz, "the message (from line %zu) is over %d octets", u->block_line,
		         DV_QUERYLIST_WIRE_MAX);
		return -EINVAL;
	}
	m = u->msg; /* RFC 2136: PRCOUNT, UPCOUNT and ADCOUNT sit where a query's counts do */
	dv_wire_set16(m + DV_DNS_OFF_ANCOUNT, (uint16_t)u->prereqs);
	dv_wire_set16(m + DV_DNS_OFF_NSCOUNT, (uint16_t)u->updates);
	dv_wire_set16(m + DV_DNS_OFF_ARCOUNT, u->opt_len > 0 ? 1 : 0);
	if (u->count + 1 >= u->cap) {
		size_t nc = u->cap ? u->cap * 2 : 256;
		uint32_t *off = realloc(u->off, nc * sizeof(*off));
		uint16_t *ql = off != NULL ? realloc(u->qlen, nc * sizeof(*ql)) : NULL;
		if (off != NULL)
			u->off = off;
		if (ql == NULL)
			goto oom;
		u->qlen = ql;
		u->cap = nc;
	}
	if (u->arena_cap - u->arena_len < u->w.len) {
		size_t nc = u->arena_cap ? u->arena_cap * 2 : 65536;
		uint8_t *a = realloc(u->arena, nc);
		if (a == NULL || nc > UINT32_MAX)
			goto oom;
		u->arena = a;
		u->arena_cap = nc;
	}
	memcpy(u->arena + u->arena_len, u->msg, u->w.len);
	u->off[u->count] = (uint32_t)u->arena_len;
	u->qlen[u->count++] = u->zlen;
	u->arena_len += u->w.len;
	return 0;
oom:
	snprintf(msg, msgsz, "out of memory");
	return -ENOMEM;
}

static void end_block(upd_t *u)
{
	ldns_rdf_deep_free(u->origin);
	u->origin = NULL;
	u->in_block = u->skipping = false;
}

/* One line (NUL-terminated, writable). 0, or negative with msg. */
static int line(upd_t *u, char *p, char *msg, size_t msgsz)
{
	char *s = rest(p), *word;
	size_t i;

	if (s == NULL || *s == '#' || *s == ';')
		return 0;
	if (!u->in_block) {
		u->in_block = true;
		u->block_line = u->lines;
		return zone_line(u, s, msg, msgsz);
	}
	word = token(&s);
	if (strcasecmp(word, "send") == 0) {
		int rc = u->skipping ? 0 : send_msg(u, msg, msgsz);
		end_block(u);
		return rc;
	}
	if (u->skipping)
		return 0;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcasecmp(word, kinds[i].word) == 0)
			return statement(u, &kinds[i], s, msg, msgsz);
	snprintf(msg, msgsz, "'%.32s' is not add, delete, require, prohibit or send", word);
	return -EINVAL;
}

static int feed(upd_t *u, const char *buf, size_t len, dv_err_t *err)
{
	char l[UPD_LINE_MAX + 1], msg[400];
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos;
		int rc;

		u->lines++;
		/* A UTF-8 byte order mark (Windows editors write one) is not part of the zone. */
		if (u->lines == 1 && n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
			pos += 3;
			n -= 3;
		}
		if (n > UPD_LINE_MAX || memchr(buf + pos, '\0', n) != NULL) {
			snprintf(msg, sizeof(msg),
			         n > UPD_LINE_MAX ? "line over %d characters" : "NUL byte in line",
			         UPD_LINE_MAX);
			rc = -EINVAL;
		} else {
			memcpy(l, buf + pos, n);
			l[n] = '\0';
			rc = line(u, l, msg, sizeof(msg));
		}
		pos += n + 1;
		if (rc == -EINVAL && u->opts->skip_bad) {
			u->skipped++;
			u->skipping = u->in_block; /* to this block's "send" */
		} else if (rc != 0) {
			return dv_err_set(err, rc, "%s:%zu: %s", u->name, u->lines, msg);
		}
	}
	if (u->in_block)
		return dv_err_set(err, -EINVAL, "%s:%zu: the update that starts here has no 'send'",
		                  u->name, u->block_line);
	if (u->count == 0)
		return dv_err_set(err, -EINVAL, "%s: no update message (ZONE, statements, send)",
		                  u->name);
	return 0;
}

int dv_update_load_buffer(dv_querylist_t *ql, const char *buf, size_t len, const char *name,
                          const dv_querylist_options_t *opts, dv_err_t *err)
{
	upd_t u;
	int rc;

	memset(ql, 0, sizeof(*ql));
	memset(&u, 0, sizeof(u));
	u.name = strcmp(name, "-") == 0 ? "(stdin)" : name;
	u.opts = opts;
	u.opt_len = dv_querylist_opt_rr(opts, u.opt_rr);
	rc = feed(&u, buf, len, err);
	ldns_rdf_deep_free(u.origin);
	if (rc == 0 && (ql->source = strdup(name)) == NULL)
		rc = dv_err_set(err, -ENOMEM, "%s: out of memory", u.name);
	if (rc != 0) {
		free(u.arena);
		free(u.off);
		free(u.qlen);
		free(ql->source);
		memset(ql, 0, sizeof(*ql));
		return rc;
	}
	u.off[u.count] = (uint32_t)u.arena_len;
	ql->arena = u.arena;
	ql->arena_len = u.arena_len;
	ql->off = u.off;
	ql->qlen = u.qlen;
	ql->count = u.count;
	ql->lines = u.lines;
	ql->skipped = u.skipped;
	ql->opt_len = (uint16_t)u.opt_len;
	return 0;
}
