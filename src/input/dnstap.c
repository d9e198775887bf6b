/* dnstap: read a Frame Streams file of dnstap messages; keep CLIENT_QUERY or AUTH_QUERY. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "input/capbuild.h"

#include "base/wire.h"

/*
 * Why by hand, not libfstrm's reader and protobuf-c: we need 8 fields of 2
 * messages. A hand decoder is ~150 lines with every read bounds-checked, works
 * on a buffer (so the fuzz target reaches exactly this code), allocates nothing
 * per frame, needs no generated code at build time, and a broken frame costs one
 * frame, not the rest of the file (libfstrm's reader stops at the first).
 * The tests write their files with libfstrm's own writer, so the framing is
 * checked against the reference implementation.
 *
 * Frame Streams (unidirectional file): an escape (4 zero octets), a control
 * frame (length, type START = 2, fields: CONTENT_TYPE = 1, length, text), data
 * frames (32-bit big-endian length > 0, payload), an escape + STOP (3) control
 * frame. dnstap.proto (github.com/dnstap/dnstap.pb): Dnstap { message = 14,
 * type = 15 (MESSAGE = 1) }, Message { type = 1 (AUTH_QUERY = 1, CLIENT_QUERY =
 * 5), socket_family = 2, socket_protocol = 3, query_address = 4, query_port = 6,
 * query_time_sec = 8 (uint64), query_time_nsec = 9 (fixed32), query_message =
 * 10 (bytes) }.
 */

#define FS_START              2
#define FS_STOP               3
#define FS_FIELD_CONTENT_TYPE 1
#define DNSTAP_CONTENT_TYPE   "protobuf:dnstap.Dnstap"
#define DT_MESSAGE            1
#define DT_AUTH_QUERY         1
#define DT_CLIENT_QUERY       5

/* One protobuf field: number, wire type, and its value (varint/fixed) or bytes. */
typedef struct pb_field {
	uint32_t num;
	unsigned wt;
	uint64_t v;
	const uint8_t *data;
	size_t len;
} pb_field_t;

static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if ((c & 0x80) == 0)
			return true;
		shift += 7;
	}
	return false;
}

/* Next field at *p; 1 read, 0 at the end, -1 malformed. */
static int pb_next(const uint8_t **p, const uint8_t *end, pb_field_t *f)
{
	uint64_t key;

	if (*p == end)
		return 0;
	if (!pb_varint(p, end, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wt = (unsigned)(key & 7);
	switch (f->wt) {
	case 0:
		return pb_varint(p, end, &f->v) ? 1 : -1;
	case 1:
		if (end - *p < 8)
			return -1;
		memcpy(&f->v, *p, 8); /* little-endian on the wire; we never use fixed64 fields */
		*p += 8;
		return 1;
	case 2:
		if (!pb_varint(p, end, &f->v) || f->v > (uint64_t)(end - *p))
			return -1;
		f->data = *p;
		f->len = (size_t)f->v;
		*p += f->len;
		return 1;
	case 5:
		if (end - *p < 4)
			return -1;
		f->v = (uint64_t)(*p)[0] | (uint64_t)(*p)[1] << 8 | (uint64_t)(*p)[2] << 16 |
		       (uint64_t)(*p)[3] << 24;
		*p += 4;
		return 1;
	default:
		return -1; /* groups (3, 4) and unknown wire types */
	}
}

typedef struct dt_msg {
	uint64_t type;
	bool has_time;
	uint64_t sec, nsec;
	const uint8_t *addr;
	size_t addr_len;
	uint64_t port;
	const uint8_t *query;
	size_t query_len;
	bool has_query;
} dt_msg_t;

/* Decode a Message. NULL or why it is malformed. */
static const char *decode_message(const uint8_t *p, size_t len, dt_msg_t *m)
{
	const uint8_t *end = p + len;
	pb_field_t f;
	int rc;

	memset(m, 0, sizeof(*m));
	while ((rc = pb_next(&p, end, &f)) == 1) {
		bool vi = f.wt == 0, by = f.wt == 2;
		switch (f.num) {
		case 1:
			if (!vi)
				return "Message.type is not a varint";
			m->type = f.v;
			break;
		case 4:
			if (!by)
				return "query_address is not bytes";
			m->addr = f.data;
			m->addr_len = f.len;
			break;
		case 6:
			if (!vi)
				return "query_port is not a varint";
			m->port = f.v;
			break;
		case 8:
			if (!vi)
				return "query_time_sec is not a varint";
			m->sec = f.v;
			m->has_time = true;
			break;
		case 9:
			if (f.wt != 5)
				return "query_time_nsec is not fixed32";
			m->nsec = f.v;
			break;
		case 10:
			if (!by)
				return "query_message is not bytes";
			m->query = f.data;
			m->query_len = f.len;
			m->has_query = true;
			break;
		default:
			break;
		}
	}
	return rc < 0 ? "bad protobuf in Message" : NULL;
}

/* One data frame. 0 to go on, negative to stop. */
static int data_frame(dv_capbuild_t *b, const uint8_t *p, size_t len, uint64_t pos, dv_err_t *err)
{
	const uint8_t *end = p + len, *mp = NULL;
	size_t mlen = 0;
	uint64_t dtype = 0;
	dv_client_key_t key;
	pb_field_t f;
	dt_msg_t m;
	const char *why;
	uint64_t want;
	int rc;

	while ((rc = pb_next(&p, end, &f)) == 1) {
		if (f.num == 15 && f.wt == 0)
			dtype = f.v;
		else if (f.num == 14 && f.wt == 2) {
			mp = f.data;
			mlen = f.len;
		}
	}
	if (rc < 0)
		return dv_capbuild_bad(b, pos, err, "bad protobuf in Dnstap");
	if (dtype != DT_MESSAGE || mp == NULL) {
		b->st->ignored++;
		return 0;
	}
	if ((why = decode_message(mp, mlen, &m)) != NULL)
		return dv_capbuild_bad(b, pos, err, "%s", why);
	want = b->opts->dnstap_want == DV_DNSTAP_AUTH_QUERY ? DT_AUTH_QUERY : DT_CLIENT_QUERY;
	if (m.type != want) {
		b->st->ignored++;
		return 0;
	}
	if (!m.has_query)
		return dv_capbuild_bad(b, pos, err, "query message without query_message");
	if (!m.has_time || m.nsec >= 1000000000ULL || m.sec > UINT64_MAX / 1000000000ULL - 1)
		return dv_capbuild_bad(b, pos, err, "query_time missing or out of range");
	memset(&key, 0, sizeof(key));
	if (m.addr_len == 4 || m.addr_len == 16) {
		key.family = m.addr_len == 4 ? 4 : 6;
		memcpy(key.addr, m.addr, m.addr_len);
	}
	key.port = (uint16_t)m.port;
	rc = dv_capbuild_add(b, m.query, m.query_len, m.sec * 1000000000ULL + m.nsec, &key, pos,
	                     err);
	return rc < 0 ? rc : 0;
}

/* The START frame's content type, if any, must be dnstap's. */
static int check_start(dv_capbuild_t *b, const uint8_t *c, size_t clen, dv_err_t *err)
{
	size_t i = 4;

	if (clen < 4 || dv_wire_get32(c) != FS_START)
		return dv_err_set(err, -EINVAL, "%s: not a Frame Streams file (no START frame)",
		                  b->name);
	while (clen - i >= 8) {
		uint32_t ft = dv_wire_get32(c + i), fl = dv_wire_get32(c + i + 4);
		if (fl > clen - i - 8)
			break;
		if (ft == FS_FIELD_CONTENT_TYPE &&
		    (fl != strlen(DNSTAP_CONTENT_TYPE) ||
		     memcmp(c + i + 8, DNSTAP_CONTENT_TYPE, fl) != 0))
			return dv_err_set(err, -EINVAL,
			                  "%s: Frame Streams content type is '%.*s', not '%s'",
			                  b->name, (int)(fl > 64 ? 64 : fl),
			                  (const char *)c + i + 8, DNSTAP_CONTENT_TYPE);
		i += 8 + fl;
	}
	return 0;
}

int dv_read_dnstap(dv_capbuild_t *b, const uint8_t *buf, size_t len, dv_err_t *err)
{
	size_t pos = 8;
	uint32_t clen;
	uint64_t frame = 0;
	int rc;

	b->st->pos_unit = "frame";
	if (len < 8 || dv_wire_get32(buf) != 0 || (clen = dv_wire_get32(buf + 4)) > len - 8)
		return dv_err_set(err, -EINVAL, "%s: not a Frame Streams file", b->name);
	if ((rc = check_start(b, buf + 8, clen, err)) != 0)
		return rc;
	pos += clen;
	while (pos < len) {
		uint32_t flen;

		frame++;
		b->st->records++;
		if (len - pos < 4)
			return dv_capbuild_bad(b, frame, err, "frame length cut short");
		flen = dv_wire_get32(buf + pos);
		pos += 4;
		if (flen == 0) { /* control frame: STOP ends the stream, others are skipped */
			if (len - pos < 4 || (clen = dv_wire_get32(buf + pos)) > len - pos - 4)
				return dv_capbuild_bad(b, frame, err, "control frame cut short");
			b->st->ignored++;
			if (clen >= 4 && dv_wire_get32(buf + pos + 4) == FS_STOP)
				return 0;
			pos += 4 + clen;
			continue;
		}
		if (flen > len - pos)
			return dv_capbuild_bad(b, frame, err,
			                       "frame of %u octets cut short at %zu octets", flen,
			                       len - pos);
		if ((rc = data_frame(b, buf + pos, flen, frame, err)) != 0)
			return rc;
		pos += flen;
	}
	return 0;
}
