/* binary: read dnsperf's -B format (2-octet big-endian length + wire message, repeated). */
#include "config.h"

#include "input/capbuild.h"

int dv_read_binary(dv_capbuild_t *b, const uint8_t *buf, size_t len, dv_err_t *err)
{
	size_t pos = 0;
	int rc;

	b->st->pos_unit = "byte offset";
	while (pos < len) {
		size_t mlen;

		b->st->records++;
		if (len - pos < 2)
			return dv_capbuild_bad(b, pos, err,
			                       "1 stray octet at the end (a length needs 2)");
		mlen = (size_t)buf[pos] << 8 | buf[pos + 1];
		if (len - pos - 2 < mlen)
			return dv_capbuild_bad(b, pos, err,
			                       "message of %zu octets cut short at %zu octets",
			                       mlen, len - pos - 2);
		rc = dv_capbuild_add(b, buf + pos + 2, mlen, 0, NULL, pos, err);
		if (rc < 0)
			return rc;
		pos += 2 + mlen;
	}
	return 0;
}
