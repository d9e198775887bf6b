/* h2: the nghttp2 helpers the DoH client (transport/doh) and the responder's DoH listener share. */
#ifndef DV_H2_H
#define DV_H2_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <nghttp2/nghttp2.h>

/* A header whose name (a literal) and value outlive the session: nghttp2 copies neither. */
#define DV_H2_NV(n, v, vl)                                                                         \
	(nghttp2_nv)                                                                               \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl),                               \
		    NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE                   \
	}

/*
 * A data provider's read callback over a body held whole in memory: copies up to length
 * octets of body[*off .. len) into buf, advances *off, and sets NGHTTP2_DATA_FLAG_EOF in
 * *flags once all of it is out. Returns the octets copied.
 */
static inline ssize_t dv_h2_read_body(uint8_t *buf, size_t length, const uint8_t *body, size_t len,
                                      size_t *off, uint32_t *flags)
{
	size_t n = len - *off;

	if (n > length)
		n = length;
	memcpy(buf, body + *off, n);
	*off += n;
	if (*off == len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

#endif
