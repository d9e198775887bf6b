/* tsig: TSIG keys (-y [alg:]name:secret) and signing a compiled list ahead of the run (RFC 8945).
 */
#ifndef DV_TSIG_H
#define DV_TSIG_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "input/querylist.h"

#define DV_TSIG_FUDGE_S 300 /* seconds either side of the time signed (RFC 8945's advice) */

typedef struct dv_tsig_key {
	char alg[16];      /* "hmac-sha256"... (the OpenSSL digest is alg + 5) */
	uint8_t name[256]; /* key name, wire form, lower case */
	size_t name_len;
	uint8_t alg_name[64]; /* algorithm name, wire form ("hmac-md5.sig-alg.reg.int.") */
	size_t alg_name_len;
	uint8_t secret[128];
	size_t secret_len;
	size_t mac_len; /* digest size of the algorithm */
} dv_tsig_key_t;

/*
 * Parse dnsperf's -y syntax: "[ALG:]NAME:SECRET", ALG hmac-md5 (the default), hmac-sha1,
 * hmac-sha224, hmac-sha256, hmac-sha384 or hmac-sha512, SECRET base64. 0, or -EINVAL with
 * err naming what is wrong ("-y: ...").
 */
int dv_tsig_key_parse(dv_tsig_key_t *k, const char *spec, dv_err_t *err);

/*
 * Sign every query of ql ahead of the run: each gets a TSIG RR (time signed now_s, fudge
 * DV_TSIG_FUDGE_S, original ID 0, HMAC over the message with ID 0 by OpenSSL) and ARCOUNT
 * one more. The engine then writes its own ID into the header: servers check the MAC
 * with the original ID put back (RFC 8945 section 5.2), so one signature serves every
 * send of the query until now_s + fudge. Per-query question lengths are kept (qlen).
 * 0, or -ENOMEM / -EINVAL (a signed query longer than DV_QUERYLIST_WIRE_MAX, OpenSSL
 * failure) with err filled; ql is unchanged on error.
 */
int dv_tsig_sign_list(dv_querylist_t *ql, const dv_tsig_key_t *k, uint64_t now_s, dv_err_t *err);

/* TSIG errors an answer may carry (RFC 8945 section 5.3), "no TSIG RR" and "a MAC that
 * does not verify". */
enum {
	DV_TSIG_BADMAC = -2,
	DV_TSIG_UNSIGNED = -1,
	DV_TSIG_BADSIG = 16,
	DV_TSIG_BADKEY = 17,
	DV_TSIG_BADTIME = 18,
};

/*
 * The TSIG error of an answer (msg, len; question rqlen octets after the header):
 * DV_TSIG_UNSIGNED when its last record is not a TSIG RR (or it cannot be walked),
 * else the RR's error field (0 = signed, no error). The MAC itself is not checked.
 */
int dv_tsig_answer_error(const uint8_t *msg, size_t len, size_t rqlen);

/*
 * Verifying answers (RFC 8945 section 5.3.2): a verifier holds the key and an HMAC context
 * keyed once, so checking costs one HMAC over the answer. One per thread. NULL when out of
 * memory or OpenSSL has no HMAC.
 */
typedef struct dv_tsig_verifier dv_tsig_verifier_t;
dv_tsig_verifier_t *dv_tsig_verifier_new(const dv_tsig_key_t *k);
void dv_tsig_verifier_free(dv_tsig_verifier_t *v);
/*
 * The outcome of an answer (msg, len; question rqlen octets after the header) to the signed
 * query (q, qlen octets, as dv_tsig_sign_list made it): DV_TSIG_UNSIGNED without a TSIG
 * RR; its error field when not 0; DV_TSIG_BADMAC when the RR names another key or
 * algorithm, or its MAC is not the HMAC of the query's MAC, the answer with the original
 * ID and without the TSIG RR, and the TSIG variables; 0 when it verifies.
 */
int dv_tsig_verify_answer(dv_tsig_verifier_t *v, const uint8_t *q, size_t qlen, const uint8_t *msg,
                          size_t len, size_t rqlen);

/*
 * Signing again as queries are sent: a list signed more than DV_TSIG_RESIGN_S ago (half
 * the fudge) would soon be answered BADTIME, so each query is signed again at now_s in its
 * send buffer (msg, len octets, as dv_tsig_sign_list made it; same length after), and its
 * answer is checked against the new MAC: the last DV_TSIG_TAIL(mac_len) octets of msg,
 * which dv_tsig_verify_answer reads as the query's. 0, or -EINVAL (not a signed query).
 */
#define DV_TSIG_RESIGN_S  (DV_TSIG_FUDGE_S / 2)
#define DV_TSIG_TAIL(mac) ((mac) + 6) /* MAC, original ID, error, other len */
#define DV_TSIG_TAIL_MAX  DV_TSIG_TAIL(64)
int dv_tsig_resign(dv_tsig_verifier_t *v, uint8_t *msg, size_t len, uint64_t now_s);

#endif
