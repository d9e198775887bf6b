/* doq: what DNS over QUIC's two ends here share (RFC 9250): the application error codes,
 * the ngtcp2 callbacks, settings and transport parameters both ends start from, the
 * GnuTLS session both set up (TLS 1.3 priorities, ALPN, ngtcp2's crypto hooks) and the
 * connection's deletion. The client kind (src/transport/doq.c) and the responder's
 * listener (src/responder/quic.c) include it, so the two cannot drift apart; what is
 * left in them is their role's (client or server). */
#ifndef DV_BASE_DOQ_H
#define DV_BASE_DOQ_H

#include <stddef.h>
#include <stdint.h>

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "base/util.h"

/* RFC 9250 section 4.3: the application error codes of DoQ. */
enum {
	DOQ_NO_ERROR = 0x0,
	DOQ_INTERNAL_ERROR = 0x1,
	DOQ_PROTOCOL_ERROR = 0x2,
	DOQ_REQUEST_CANCELLED = 0x3,
	DOQ_EXCESSIVE_LOAD = 0x4,
	DOQ_UNSPECIFIED_ERROR = 0x5,
	DOQ_ERROR_RESERVED = 0xd098ea5e,
};

/* A QUIC packet either end writes: the common path MTU's UDP payload (1500 - 40 - 8). */
#define DV_DOQ_PKT_MAX 1452u
/* The connection's flow-control window each end offers: the bytes the peer may send
 * before it is opened again (each end does as it reads them). */
#define DV_DOQ_CONN_WINDOW (16u << 20)
/* The idle timeout each end offers: a connection nothing crosses this long ends (ngtcp2's
 * timer). */
#define DV_DOQ_IDLE_NS (30 * DV_NS_PER_S)

/* "DOQ_PROTOCOL_ERROR" etc., or "an unknown code". */
const char *dv_doq_code_name(uint64_t code);

/* ngtcp2's rand callback: GnuTLS's nonce generator. */
void dv_doq_rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx);

/* ngtcp2's settings and transport parameters as both ends start them: ngtcp2's defaults,
 * its clock at now, packets of at most DV_DOQ_PKT_MAX, DV_DOQ_CONN_WINDOW and
 * DV_DOQ_IDLE_NS offered. Each end then sets its role's: the streams it allows, their
 * windows, the server's connection IDs and token. */
void dv_doq_params_init(ngtcp2_settings *set, ngtcp2_transport_params *tp, uint64_t now);

/* A GnuTLS session for one QUIC connection of either end: gnutls_init with flags
 * (GNUTLS_CLIENT or GNUTLS_SERVER and the role's others), TLS 1.3 only with the AEADs
 * QUIC defines and no middlebox compatibility mode (RFC 9001), ngtcp2's crypto hooks for
 * that role, cred's certificates, ALPN "doq" required of the peer (RFC 9250 4.1), and ref
 * (how ngtcp2's crypto helpers find the connection) as its pointer. 0; -ENOMEM with no
 * session made; -EINVAL with *tls made (the caller deinits it). */
int dv_doq_tls_init(gnutls_session_t *tls, unsigned flags, gnutls_certificate_credentials_t cred,
                    ngtcp2_crypto_conn_ref *ref);

/* Deletes a connection of either end: ngtcp2's state, then the GnuTLS session it used
 * (ngtcp2 does not own it). Either may be NULL (a connection given up half made). The
 * stream records are the caller's to free: ngtcp2_conn_del calls no stream_close. */
void dv_doq_conn_del(ngtcp2_conn *qc, gnutls_session_t tls);

/* The entries of an ngtcp2_callbacks table both ends fill alike: ngtcp2's crypto helpers
 * (packet protection, key updates, the crypto stream, version negotiation's keys) and the
 * random source. Each end's table starts with it and adds its role's: the Initial
 * (client_initial or recv_client_initial), connection IDs, the handshake and streams. */
#define DV_DOQ_CALLBACKS_SHARED                                                                    \
	.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,                                     \
	.encrypt = ngtcp2_crypto_encrypt_cb, .decrypt = ngtcp2_crypto_decrypt_cb,                  \
	.hp_mask = ngtcp2_crypto_hp_mask_cb, .update_key = ngtcp2_crypto_update_key_cb,            \
	.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,                         \
	.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,                     \
	.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,                       \
	.version_negotiation = ngtcp2_crypto_version_negotiation_cb, .rand = dv_doq_rand_cb

#endif
