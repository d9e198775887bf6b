/* doq: what DNS over QUIC's two ends here share (RFC 9250): the application error codes,
 * the TLS 1.3 priorities both ends set in GnuTLS, and the random source handed to ngtcp2.
 * The client kind (src/transport/doq.c) and the responder's listener (src/responder/quic.c)
 * include it, so the two cannot drift apart. */
#ifndef DV_BASE_DOQ_H
#define DV_BASE_DOQ_H

#include <stddef.h>
#include <stdint.h>

#include <ngtcp2/ngtcp2.h>

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

/* TLS 1.3 only, the AEADs QUIC defines, no middlebox compatibility mode (RFC 9001). */
extern const char dv_doq_priority[];

/* "DOQ_PROTOCOL_ERROR" etc., or "an unknown code". */
const char *dv_doq_code_name(uint64_t code);

/* ngtcp2's rand callback: GnuTLS's nonce generator. */
void dv_doq_rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx);

#endif
