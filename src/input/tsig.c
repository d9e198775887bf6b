/* tsig: TSIG keys and ahead-of-time signing of a compiled query list (RFC 8945). */
#include "config.h"

#include "input/tsig.h"

#include <ctype.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "base/dns.h"
#include "base/wire.h"

#define TSIG_TYPE     250
#define TSIG_CLASS    255                                     /* ANY */
#define TSIG_RR_FIXED (2 + 2 + 4 + 2 + 6 + 2 + 2 + 2 + 2 + 2) /* all but names and MAC */

static const struct {
	const char *alg, *wire_name;
} algs[] = {
    {"hmac-md5", "hmac-md5.sig-alg.reg.int."}, {"hmac-sha1", "hmac-sha1."},
    {"hmac-sha224", "hmac-sha224."},           {"hmac-sha256", "hmac-sha256."},
    {"hmac-sha384", "hmac-sha384."},           {"hmac-sha512", "hmac-sha512."},
};

/* Text name -> lower-case wire name (ldns). */
static int wire_name(const char *text, uint8_t *out, size_t cap, size_t *len)
{
	ldns_rdf *rdf = NULL;
	size_t n;

	if (ldns_str2rdf_dname(&rdf, text) != LDNS_STATUS_OK)
		return -EINVAL;
	ldns_dname2canonical(rdf);
	n = ldns_rdf_size(rdf);
	if (n > cap) {
		ldns_rdf_deep_free(rdf);
		return -EINVAL;
	}
	memcpy(out, ldns_rdf_data(rdf), n);
	*len = n;
	ldns_rdf_deep_free(rdf);
	return 0;
}

static int parse_alg(dv_tsig_key_t *k, const char *alg, size_t n, dv_err_t *err)
{
	for (size_t i = 0; i < DV_ARRAY_SIZE(algs); i++) {
		const EVP_MD *md;
		if (strlen(algs[i].alg) != n || strncasecmp(alg, algs[i].alg, n) != 0)
			continue;
		snprintf(k->alg, sizeof(k->alg), "%s", algs[i].alg);
		md = EVP_get_digestbyname(k->alg + 5);
		if (md == NULL)
			return dv_err_set(err, -EINVAL, "-y: %s: OpenSSL has no %s", k->alg,
			                  k->alg + 5);
		k->mac_len = (size_t)EVP_MD_get_size(md);
		return wire_name(algs[i].wire_name, k->alg_name, sizeof(k->alg_name),
		                 &k->alg_name_len);
	}
	return dv_err_set(err, -EINVAL,
	                  "-y: '%.*s' is not a TSIG algorithm (hmac-md5, hmac-sha1, hmac-sha224, "
	                  "hmac-sha256, hmac-sha384, hmac-sha512)",
	                  (int)n, alg);
}

static int parse_secret(dv_tsig_key_t *k, const char *b64, dv_err_t *err)
{
	size_t n = strlen(b64), pad = 0;
	uint8_t buf[sizeof(k->secret) + 3];
	int got;

	if (n == 0 || n % 4 != 0 || n / 4 * 3 > sizeof(buf))
		return dv_err_set(err, -EINVAL, "-y: the secret is not base64 (or too long)");
	got = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)n);
	if (got < 0)
		return dv_err_set(err, -EINVAL, "-y: the secret is not base64");
	pad = (b64[n - 1] == '=') + (b64[n - 2] == '=');
	k->secret_len = (size_t)got - pad;
	memcpy(k->secret, buf, k->secret_len);
	return 0;
}

int dv_tsig_key_parse(dv_tsig_key_t *k, const char *spec, dv_err_t *err)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
	const char *name = spec, *secret;
	char nbuf[256];
	size_t nlen;
	int rc;

	memset(k, 0, sizeof(*k));
	if (c1 == NULL)
		return dv_err_set(err, -EINVAL, "-y: '%s' is not [ALG:]NAME:SECRET", spec);
	if (c2 != NULL) {
		if ((rc = parse_alg(k, spec, (size_t)(c1 - spec), err)) != 0)
			return rc;
		name = c1 + 1;
		secret = c2 + 1;
		nlen = (size_t)(c2 - name);
	} else {
		if ((rc = parse_alg(k, "hmac-md5", 8, err)) != 0)
			return rc;
		secret = c1 + 1;
		nlen = (size_t)(c1 - name);
	}
	if (nlen == 0 || nlen >= sizeof(nbuf))
		return dv_err_set(err, -EINVAL, "-y: '%s': the key name is empty or too long",
		                  spec);
	memcpy(nbuf, name, nlen);
	nbuf[nlen] = '\0';
	if (wire_name(nbuf, k->name, sizeof(k->name), &k->name_len) != 0)
		return dv_err_set(err, -EINVAL, "-y: '%s' is not a key name", nbuf);
	return parse_secret(k, secret, err);
}

/* HMAC over the message (ID 0) and the TSIG variables; 0 or -EINVAL. */
static int mac(EVP_MAC_CTX *ctx, bool *keyed, const dv_tsig_key_t *k, const uint8_t *msg,
               size_t len, const uint8_t *vars, size_t vlen, uint8_t *out)
{
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)(k->alg + 5), 0),
	    OSSL_PARAM_construct_end()};
	size_t outl = 0;

	/* Keyed once: a later init with no key reuses it (the ipad and opad digests). */
	if (EVP_MAC_init(ctx, *keyed ? NULL : k->secret, *keyed ? 0 : k->secret_len,
	                 *keyed ? NULL : params) != 1)
		return -EINVAL;
	*keyed = true;
	if (EVP_MAC_update(ctx, msg, len) != 1 || EVP_MAC_update(ctx, vars, vlen) != 1 ||
	    EVP_MAC_final(ctx, out, &outl, 64) != 1 || outl != k->mac_len)
		return -EINVAL;
	return 0;
}

/* Append the TSIG RR of msg (len octets, ID 0) at msg + len; returns the new length. */
static size_t sign_one(EVP_MAC_CTX *ctx, bool *keyed, const dv_tsig_key_t *k, uint8_t *msg,
                       size_t len, uint64_t now_s)
{
	uint8_t vars[256 + 64 + 16], m[64], *p;
	size_t v = 0;

	memcpy(vars, k->name, k->name_len), v += k->name_len;
	dv_wire_set16(vars + v, (uint16_t)TSIG_CLASS), v += 2;
	memset(vars + v, 0, 4), v += 4; /* TTL */
	memcpy(vars + v, k->alg_name, k->alg_name_len), v += k->alg_name_len;
	dv_wire_set16(vars + v, (uint16_t)(now_s >> 32)),
	    dv_wire_set16(vars + v + 2, (uint16_t)(now_s >> 16));
	dv_wire_set16(vars + v + 4, (uint16_t)now_s), v += 6;
	dv_wire_set16(vars + v, (uint16_t)DV_TSIG_FUDGE_S), v += 2;
	memset(vars + v, 0, 4), v += 4; /* error, other len */
	if (mac(ctx, keyed, k, msg, len, vars, v, m) != 0)
		return 0;
	p = msg + len;
	memcpy(p, k->name, k->name_len), p += k->name_len;
	dv_wire_set16(p, (uint16_t)TSIG_TYPE), dv_wire_set16(p + 2, (uint16_t)TSIG_CLASS),
	    memset(p + 4, 0, 4), p += 8;
	dv_wire_set16(p, (uint16_t)(k->alg_name_len + 16 + k->mac_len)), p += 2;
	memcpy(p, k->alg_name, k->alg_name_len), p += k->alg_name_len;
	memcpy(p, vars + v - 12, 8), p += 8; /* time signed, fudge (before error, other len) */
	dv_wire_set16(p, (uint16_t)k->mac_len), p += 2;
	memcpy(p, m, k->mac_len), p += k->mac_len;
	memset(p, 0, 6), p += 6; /* original ID 0, error 0, other len 0 */
	dv_wire_set16(msg + DV_DNS_OFF_ARCOUNT, (uint16_t)(DV_WIRE_ARCOUNT(msg) + 1u));
	return (size_t)(p - msg);
}

int dv_tsig_sign_list(dv_querylist_t *ql, const dv_tsig_key_t *k, uint64_t now_s, dv_err_t *err)
{
	size_t extra = k->name_len + k->alg_name_len + k->mac_len + TSIG_RR_FIXED, len, w = 0;
	dv_ql_arrays_t a = {0};
	EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = hmac != NULL ? EVP_MAC_CTX_new(hmac) : NULL;
	bool keyed = false;
	dv_tsig_key_t *key = malloc(sizeof(*key));
	int rc = 0;

	if (dv_ql_arrays_alloc(&a, ql->count, ql->arena_len + ql->count * extra + 1, true, false,
	                       false) != 0 ||
	    ctx == NULL || key == NULL) {
		rc = dv_err_set(err, -ENOMEM, "TSIG: out of memory (or no HMAC in OpenSSL)");
		goto out;
	}
	*key = *k;
	for (size_t i = 0; i < ql->count; i++) {
		const uint8_t *q = dv_querylist_get(ql, i, &len);
		if (len + extra > DV_QUERYLIST_WIRE_MAX) {
			rc = dv_err_set(err, -EINVAL,
			                "TSIG: query %zu would be %zu octets signed (at most %d)",
			                i + 1, len + extra, DV_QUERYLIST_WIRE_MAX);
			goto out;
		}
		a.qlen[i] = (uint16_t)dv_querylist_question_len(ql, i);
		a.off[i] = (uint32_t)w;
		memcpy(a.arena + w, q, len);
		a.arena[w] = a.arena[w + 1] = 0;
		if ((len = sign_one(ctx, &keyed, k, a.arena + w, len, now_s)) == 0) {
			rc = dv_err_set(err, -EINVAL, "TSIG: OpenSSL's HMAC-%s failed", k->alg + 5);
			goto out;
		}
		w += len;
	}
	a.off[ql->count] = (uint32_t)w;
	a.arena_len = w;
	dv_querylist_adopt(ql, &a); /* the capture times and clients stay the list's */
	ql->tsig = true;
	ql->tsig_time_s = now_s;
	free(ql->tsig_key);
	ql->tsig_key = key;
	key = NULL;
out:
	dv_ql_arrays_free(&a);
	free(key);
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(hmac);
	return rc;
}

/* Where an answer's TSIG RR (its last record) and its fields are. */
typedef struct tsig_rr {
	size_t start;        /* offset of the RR (its owner, the key name) */
	size_t key, key_len; /* the owner name (uncompressed, RFC 8945 section 4.2) */
	size_t alg, alg_len; /* the algorithm name */
	size_t time;         /* time signed (6) and fudge (2) */
	size_t mac, mac_len;
	uint16_t orig_id, error;
	size_t other; /* other len (2) and other data, to the end */
} tsig_rr_t;

/* Offset after the uncompressed name at c's position; 0 when it is compressed or bad. */
static size_t plain_name(dv_wire_cursor_t *c)
{
	while (c->ok && c->pos < c->len) {
		uint8_t l = c->base[c->pos];
		if ((l & DV_DNS_PTR) != 0)
			return 0;
		dv_wire_skip(c, 1u + l);
		if (l == 0)
			return c->ok ? c->pos : 0;
	}
	return 0;
}

/* Find msg's TSIG RR (the last record); false when it has none or it cannot be walked. */
static bool find_tsig(const uint8_t *msg, size_t len, size_t rqlen, tsig_rr_t *t)
{
	dv_wire_cursor_t c;
	unsigned n = (unsigned)DV_WIRE_ANCOUNT(msg) + DV_WIRE_NSCOUNT(msg) + DV_WIRE_ARCOUNT(msg);

	if (DV_WIRE_ARCOUNT(msg) == 0)
		return false;
	dv_wire_cursor_init(&c, msg, len, DV_DNS_HEADER_LEN + rqlen);
	for (unsigned i = 0; i + 1 < n && c.ok; i++) {
		dv_wire_skip_name(&c);
		dv_wire_skip(&c, 8); /* type, class, TTL */
		dv_wire_skip(&c, dv_wire_read16(&c));
	}
	t->start = t->key = c.pos;
	if (!c.ok || (t->key_len = plain_name(&c)) == 0)
		return false;
	t->key_len -= t->key;
	if (dv_wire_read16(&c) != TSIG_TYPE)
		return false;
	dv_wire_skip(&c, 8); /* class, TTL, rdlength */
	t->alg = c.pos;
	if ((t->alg_len = plain_name(&c)) == 0)
		return false;
	t->alg_len -= t->alg;
	t->time = c.pos;
	dv_wire_skip(&c, 8);
	t->mac_len = dv_wire_read16(&c);
	t->mac = c.pos;
	dv_wire_skip(&c, t->mac_len);
	t->orig_id = dv_wire_read16(&c);
	t->error = dv_wire_read16(&c);
	t->other = c.pos;
	dv_wire_skip(&c, dv_wire_read16(&c));
	return c.ok && c.pos == len;
}

int dv_tsig_answer_error(const uint8_t *msg, size_t len, size_t rqlen)
{
	tsig_rr_t t;

	return find_tsig(msg, len, rqlen, &t) ? t.error : DV_TSIG_UNSIGNED;
}

struct dv_tsig_verifier {
	dv_tsig_key_t k;
	EVP_MAC *hmac;
	EVP_MAC_CTX *ctx;
	bool keyed;                /* the context holds the key: later inits reuse it */
	uint8_t buf[65536 + 1024]; /* what the MAC covers, gathered */
};

dv_tsig_verifier_t *dv_tsig_verifier_new(const dv_tsig_key_t *k)
{
	dv_tsig_verifier_t *v = calloc(1, sizeof(*v));

	if (v == NULL)
		return NULL;
	v->k = *k;
	v->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	v->ctx = v->hmac != NULL ? EVP_MAC_CTX_new(v->hmac) : NULL;
	if (v->ctx == NULL) {
		dv_tsig_verifier_free(v);
		return NULL;
	}
	return v;
}

void dv_tsig_verifier_free(dv_tsig_verifier_t *v)
{
	if (v == NULL)
		return;
	EVP_MAC_CTX_free(v->ctx);
	EVP_MAC_free(v->hmac);
	free(v);
}

static bool name_is(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (tolower(a[i]) != tolower(b[i]))
			return false;
	return true;
}

int dv_tsig_verify_answer(dv_tsig_verifier_t *v, const uint8_t *q, size_t qlen, const uint8_t *msg,
                          size_t len, size_t rqlen)
{
	const dv_tsig_key_t *k = &v->k;
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)(k->alg + 5), 0),
	    OSSL_PARAM_construct_end()};
	uint8_t hdr[DV_DNS_HEADER_LEN], m[EVP_MAX_MD_SIZE];
	size_t outl = 0;
	tsig_rr_t t;

	if (!find_tsig(msg, len, rqlen, &t))
		return DV_TSIG_UNSIGNED;
	if (t.error != 0)
		return t.error;
	if (!name_is(msg + t.key, t.key_len, k->name, k->name_len) ||
	    !name_is(msg + t.alg, t.alg_len, k->alg_name, k->alg_name_len) ||
	    t.mac_len != k->mac_len || qlen < k->mac_len + 6)
		return DV_TSIG_BADMAC;
	/* The header as the server signed it: the original ID, ARCOUNT without the TSIG RR. */
	memcpy(hdr, msg, sizeof(hdr));
	dv_wire_set16(hdr, t.orig_id);
	dv_wire_set16(hdr + DV_DNS_OFF_ARCOUNT, (uint16_t)(DV_WIRE_ARCOUNT(msg) - 1u));
	if (EVP_MAC_init(v->ctx, v->keyed ? NULL : k->secret, v->keyed ? 0 : k->secret_len,
	                 v->keyed ? NULL : params) != 1)
		return DV_TSIG_BADMAC;
	v->keyed = true;
	/* The query's MAC (its size first), the answer, the TSIG variables (section 4.3.3), in
	 * one buffer: one update costs less than ten through OpenSSL's provider calls. */
	size_t body = t.start - DV_DNS_HEADER_LEN, n = 0;
	if (2 + k->mac_len + sizeof(hdr) + body + k->name_len + 6 + k->alg_name_len + 10 +
	        (len - t.other) >
	    sizeof(v->buf))
		return DV_TSIG_BADMAC; /* larger than any answer over UDP or a stream (65535) */
	dv_wire_set16(v->buf, (uint16_t)k->mac_len), n += 2;
	memcpy(v->buf + n, q + qlen - 6 - k->mac_len, k->mac_len), n += k->mac_len;
	memcpy(v->buf + n, hdr, sizeof(hdr)), n += sizeof(hdr);
	memcpy(v->buf + n, msg + DV_DNS_HEADER_LEN, body), n += body;
	memcpy(v->buf + n, k->name, k->name_len), n += k->name_len;
	dv_wire_set16(v->buf + n, TSIG_CLASS), n += 2;
	memset(v->buf + n, 0, 4), n += 4; /* TTL */
	memcpy(v->buf + n, k->alg_name, k->alg_name_len), n += k->alg_name_len;
	memcpy(v->buf + n, msg + t.time, 8), n += 8;                /* time signed, fudge */
	memcpy(v->buf + n, msg + t.mac + t.mac_len + 2, 2), n += 2; /* error */
	memcpy(v->buf + n, msg + t.other, len - t.other), n += len - t.other; /* other */
	EVP_MAC_update(v->ctx, v->buf, n);
	if (EVP_MAC_final(v->ctx, m, &outl, sizeof(m)) != 1 || outl != k->mac_len ||
	    CRYPTO_memcmp(m, msg + t.mac, outl) != 0)
		return DV_TSIG_BADMAC;
	return 0;
}

int dv_tsig_resign(dv_tsig_verifier_t *v, uint8_t *msg, size_t len, uint64_t now_s)
{
	const dv_tsig_key_t *k = &v->k;
	size_t extra = k->name_len + k->alg_name_len + k->mac_len + TSIG_RR_FIXED;

	if (len < DV_DNS_HEADER_LEN + extra || DV_WIRE_ARCOUNT(msg) == 0)
		return -EINVAL;
	/* Without its TSIG RR and with ID 0 (the original ID), as the list was signed. */
	dv_wire_set16(msg, 0);
	dv_wire_set16(msg + DV_DNS_OFF_ARCOUNT, (uint16_t)(DV_WIRE_ARCOUNT(msg) - 1u));
	return sign_one(v->ctx, &v->keyed, k, msg, len - extra, now_s) == len ? 0 : -EINVAL;
}
