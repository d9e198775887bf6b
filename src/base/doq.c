/* doq: what DNS over QUIC's two ends share (doq.h). */
#include "config.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "base/doq.h"

const char dv_doq_priority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "+AES-128-CCM:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:"
    "%DISABLE_TLS13_COMPAT_MODE";

const char *dv_doq_code_name(uint64_t code)
{
	switch (code) {
	case DOQ_NO_ERROR:
		return "DOQ_NO_ERROR";
	case DOQ_INTERNAL_ERROR:
		return "DOQ_INTERNAL_ERROR";
	case DOQ_PROTOCOL_ERROR:
		return "DOQ_PROTOCOL_ERROR";
	case DOQ_REQUEST_CANCELLED:
		return "DOQ_REQUEST_CANCELLED";
	case DOQ_EXCESSIVE_LOAD:
		return "DOQ_EXCESSIVE_LOAD";
	case DOQ_UNSPECIFIED_ERROR:
		return "DOQ_UNSPECIFIED_ERROR";
	case DOQ_ERROR_RESERVED:
		return "DOQ_ERROR_RESERVED";
	default:
		return "an unknown code";
	}
}

void dv_doq_rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	(void)gnutls_rnd(GNUTLS_RND_NONCE, dest, len);
}
