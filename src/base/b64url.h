/* b64url: base64url without padding (RFC 4648 section 5), as DoH GET carries a query (RFC 8484
 * section 4.1): the client encodes, the responder decodes. */
#ifndef DV_B64URL_H
#define DV_B64URL_H

#include <stddef.h>
#include <stdint.h>

/* Characters dv_b64url_encode writes for len bytes (without the terminating NUL). */
#define DV_B64URL_ENC_LEN(len) (((len) / 3) * 4 + ((len) % 3 == 0 ? 0 : (len) % 3 + 1))
/* Most bytes dv_b64url_decode writes for n characters. */
#define DV_B64URL_DEC_MAX(n) ((n) / 4 * 3 + 2)

/* in[0..len) as base64url without padding into out (DV_B64URL_ENC_LEN(len) + 1 bytes: a NUL
 * ends it). Returns the characters written, without the NUL. */
size_t dv_b64url_encode(const uint8_t *in, size_t len, char *out);

/*
 * The unpadded base64url in[0..n) into out (room for DV_B64URL_DEC_MAX(n) bytes). Returns the
 * bytes written, or -1 when in is not base64url: a character outside A-Z a-z 0-9 - _ (padding
 * '=' included), or a length that leaves one character over (n % 4 == 1). The unused low bits
 * of the last character are ignored.
 */
long dv_b64url_decode(const char *in, size_t n, uint8_t *out);

#endif
