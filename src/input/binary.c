/* binary: read dnsperf's -B format (2-octet big-endian length + wire message, repeated). */
#include "config.h"

#include "input/capbuild.h"

#include "base/wire.h"

/*
 * A -B file is a list someone wrote, not traffic: like a text list it stops at its first
 * malformed record unless --skip-bad (input.c makes the load strict), with the record's
 * number and byte offset: "FILE: record 3: message of 40 octets cut short at 10 octets
 * (byte offset 62)".
 */
int dv_read_binary(dv_capbuild_t *b, const uint8_t *buf, size_t len, dv_err_t *err)
{
	size_t pos = 0, qlen;
	const char *why;
	int rc;

	b->st->pos_unit = "record";
	while (pos < len) {
		size_t mlen;
		uint64_t rec = ++b->st->records;

		if (len - pos < 2)
			return dv_capbuild_bad(b, rec, err,
			                       "1 stray octet at the end, a length needs 2 (byte "
			                       "offset %zu)",
			                       pos);
		mlen = dv_wire_get16(buf + pos);
		if (len - pos - 2 < mlen)
			return dv_capbuild_bad(
			    b, rec, err,
			    "message of %zu octets cut short at %zu octets (byte "
			    "offset %zu)",
			    mlen, len - pos - 2, pos);
		why = dv_capbuild_check(buf + pos + 2, mlen, &qlen);
		if (why != NULL)
			rc = dv_capbuild_bad(b, rec, err, "%s (byte offset %zu)", why, pos);
		else
			rc = dv_capbuild_add(b, buf + pos + 2, mlen, 0, NULL, rec, err);
		if (rc < 0)
			return rc;
		pos += 2 + mlen;
	}
	return 0;
}
