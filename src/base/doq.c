/* doq: what DNS over QUIC's two ends share (doq.h). */
#include "config.h"

#include <errno.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "base/doq.h"

/* TLS 1.3 only, the AEADs QUIC defines, no middlebox compatibility mode (RFC 9001). */
static const char priority[] =
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

void dv_doq_params_init(ngtcp2_settings *set, ngtcp2_transport_params *tp, uint64_t now)
{
	ngtcp2_settings_default(set);
	set->initial_ts = now;
	set->max_tx_udp_payload_size = DV_DOQ_PKT_MAX;
	ngtcp2_transport_params_default(tp);
	tp->initial_max_data = DV_DOQ_CONN_WINDOW;
	tp->max_idle_timeout = DV_DOQ_IDLE_NS;
}

int dv_doq_tls_init(gnutls_session_t *tls, unsigned flags, gnutls_certificate_credentials_t cred,
                    ngtcp2_crypto_conn_ref *ref)
{
	static const gnutls_datum_t alpn = {(unsigned char *)"doq", 3};

	if (gnutls_init(tls, flags) != 0)
		return -ENOMEM;
	if (gnutls_priority_set_direct(*tls, priority, NULL) != 0 ||
	    ((flags & GNUTLS_SERVER) ? ngtcp2_crypto_gnutls_configure_server_session(*tls)
	                             : ngtcp2_crypto_gnutls_configure_client_session(*tls)) != 0 ||
	    gnutls_credentials_set(*tls, GNUTLS_CRD_CERTIFICATE, cred) != 0 ||
	    gnutls_alpn_set_protocols(*tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) != 0)
		return -EINVAL;
	gnutls_session_set_ptr(*tls, ref);
	return 0;
}

void dv_doq_conn_del(ngtcp2_conn *qc, gnutls_session_t tls)
{
	if (qc != NULL)
		ngtcp2_conn_del(qc);
	if (tls != NULL)
		gnutls_deinit(tls);
}
