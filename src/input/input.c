/* input: detect an input's kind and hand it to the right reader; all end as one compiled list. */
#include "config.h"

#include "input/input.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/capbuild.h"
#include "input/update.h"

#include "base/wire.h"

static const char *const kind_names[] = {"auto", "text", "binary", "pcap", "dnstap", "update"};

const char *dv_input_kind_name(dv_input_kind_t kind)
{
	return (unsigned)kind < DV_ARRAY_SIZE(kind_names) ? kind_names[kind] : "?";
}

int dv_input_kind_parse(const char *s, dv_input_kind_t *kind, dv_err_t *err)
{
	unsigned i;

	for (i = 1; i < DV_ARRAY_SIZE(kind_names); i++)
		if (strcmp(s, kind_names[i]) == 0) {
			*kind = (dv_input_kind_t)i;
			return 0;
		}
	return dv_err_set(err, -EINVAL, "--input: '%s' is not pcap, dnstap, binary, text or update",
	                  s);
}

dv_input_kind_t dv_input_detect(const uint8_t *h, size_t len)
{
	static const char ct[] = "protobuf:dnstap.Dnstap";
	uint32_t m;

	if (len < 4)
		return DV_INPUT_TEXT;
	m = dv_wire_get32(h);
	/* pcap: microsecond and nanosecond magics, either byte order. */
	if (m == 0xa1b2c3d4 || m == 0xd4c3b2a1 || m == 0xa1b23c4d || m == 0x4d3cb2a1)
		return DV_INPUT_PCAP;
	if (m == 0x0a0d0d0a) /* pcapng section header block */
		return DV_INPUT_PCAP;
	/* Frame Streams: escape, control length, START, CONTENT_TYPE field, its length, text. */
	if (m == 0 && len >= 20 + sizeof(ct) - 1 && dv_wire_get32(h + 8) == 2 &&
	    dv_wire_get32(h + 12) == 1 && dv_wire_get32(h + 16) == sizeof(ct) - 1 &&
	    memcmp(h + 20, ct, sizeof(ct) - 1) == 0)
		return DV_INPUT_DNSTAP;
	return DV_INPUT_TEXT;
}

void dv_input_options_init(dv_input_options_t *o)
{
	memset(o, 0, sizeof(*o));
	dv_querylist_options_init(&o->ql);
	o->server_port = 53;
}

int dv_input_set_server(dv_input_options_t *o, const char *spec, dv_err_t *err)
{
	char host[64];
	const char *port = NULL, *hs = spec;
	size_t hl;
	uint64_t p;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (rb == NULL || (rb[1] != '\0' && rb[1] != ':'))
			return dv_err_set(err, -EINVAL, "server '%s': expected [IPV6]:PORT", spec);
		hs = spec + 1;
		hl = (size_t)(rb - hs);
		port = rb[1] == ':' ? rb + 2 : NULL;
	} else if ((port = strchr(spec, '#')) != NULL) {
		hl = (size_t)(port++ - spec);
	} else if (strchr(spec, ':') == strrchr(spec, ':') && strchr(spec, ':') != NULL) {
		port = strchr(spec, ':');
		hl = (size_t)(port++ - spec);
	} else {
		hl = strlen(spec);
	}
	if (hl >= sizeof(host))
		return dv_err_set(err, -EINVAL, "server '%s': address too long", spec);
	memcpy(host, hs, hl);
	host[hl] = '\0';
	memset(o->server_addr, 0, sizeof(o->server_addr));
	if (inet_pton(AF_INET, host, o->server_addr) == 1)
		o->server_family = 4;
	else if (inet_pton(AF_INET6, host, o->server_addr) == 1)
		o->server_family = 6;
	else
		return dv_err_set(err, -EINVAL, "server '%s': '%s' is not an IPv4 or IPv6 address",
		                  spec, host);
	if (port != NULL) {
		if (dv_parse_u64(port, 1, 65535, &p) != 0)
			return dv_err_set(err, -EINVAL, "server '%s': port must be 1-65535", spec);
		o->server_port = (uint16_t)p;
	}
	return 0;
}

static void stats_init(dv_input_stats_t *st, dv_input_kind_t kind)
{
	memset(st, 0, sizeof(*st));
	st->kind = kind;
	st->pos_unit = kind == DV_INPUT_TEXT || kind == DV_INPUT_UPDATE ? "line" : "record";
}

/* Captured kinds from memory (pcap through fmemopen). */
static int load_captured(dv_querylist_t *ql, const uint8_t *buf, size_t len, const char *name,
                         dv_input_kind_t kind, const dv_input_options_t *o, dv_input_stats_t *st,
                         dv_err_t *err)
{
	dv_input_options_t bo = *o;
	dv_capbuild_t b;
	int rc;

	/* A -B file stops at a malformed record as a text list does at a line: --skip-bad
	 * goes on. A capture is traffic (other packets, retransmissions): it always goes on. */
	if (kind == DV_INPUT_BINARY && !o->ql.skip_bad)
		bo.strict = true;
	dv_capbuild_init(&b, name, &bo, st, kind != DV_INPUT_BINARY, kind != DV_INPUT_BINARY);
	if (kind == DV_INPUT_BINARY) {
		rc = dv_read_binary(&b, buf, len, err);
	} else if (kind == DV_INPUT_DNSTAP) {
		rc = dv_read_dnstap(&b, buf, len, err);
	} else {
		FILE *f = len > 0 ? fmemopen((void *)buf, len, "rb") : NULL;
		if (f == NULL)
			rc = dv_err_set(err, -EINVAL, "%s: empty or unreadable capture", name);
		else
			rc = dv_read_pcap(&b, f, err);
	}
	if (rc == 0)
		rc = dv_capbuild_finish(&b, ql, err);
	dv_capbuild_free(&b);
	return rc;
}

int dv_input_load_buffer(dv_querylist_t *ql, const uint8_t *buf, size_t len, const char *name,
                         dv_input_kind_t kind, const dv_input_options_t *o, dv_input_stats_t *st,
                         dv_err_t *err)
{
	dv_input_stats_t local;
	int rc;

	memset(ql, 0, sizeof(*ql));
	if (st == NULL)
		st = &local;
	if (kind == DV_INPUT_AUTO)
		kind = dv_input_detect(buf, len);
	stats_init(st, kind);
	if (kind == DV_INPUT_UPDATE)
		rc = dv_update_load_buffer(ql, (const char *)buf, len, name, &o->ql, err);
	else if (kind != DV_INPUT_TEXT)
		return load_captured(ql, buf, len, name, kind, o, st, err);
	else
		rc = dv_querylist_load_buffer(ql, (const char *)buf, len, name, &o->ql, err);
	st->records = ql->lines;
	st->queries = ql->count;
	st->malformed = ql->skipped;
	return rc;
}

/* Whole input in memory: mmap for a regular file, read() otherwise. *mapped says which. */
static int slurp(int fd, const char *path, uint8_t **buf, size_t *len, bool *mapped, dv_err_t *err)
{
	struct stat sb;
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	*mapped = false;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			*buf = m;
			*len = (size_t)sb.st_size;
			*mapped = true;
			return 0;
		}
	}
	for (;;) {
		ssize_t n;
		if (cap - *len < 65536) {
			uint8_t *nb = realloc(*buf, cap = cap ? cap * 2 : 1 << 20);
			if (nb == NULL) {
				free(*buf);
				return dv_err_set(err, -ENOMEM, "%s: out of memory", path);
			}
			*buf = nb;
		}
		n = read(fd, *buf + *len, cap - *len);
		if (n == 0)
			return 0;
		/* EINTR too: the only handlers count SIGINT/SIGTERM (installed without
		 * SA_RESTART), so an interrupted read is the user asking to stop. */
		if (n < 0) {
			int e = errno;
			free(*buf);
			return dv_err_set(err, -e, "%s: %s", path, strerror(e));
		}
		if (n > 0)
			*len += (size_t)n;
	}
}

int dv_input_load(dv_querylist_t *ql, const char *path, dv_input_kind_t kind,
                  const dv_input_options_t *o, dv_input_stats_t *st, dv_err_t *err)
{
	bool std = strcmp(path, "-") == 0, mapped;
	dv_input_stats_t local;
	uint8_t *buf;
	size_t len;
	int fd, rc;

	memset(ql, 0, sizeof(*ql));
	if (st == NULL)
		st = &local;
	stats_init(st, kind);
	if (kind == DV_INPUT_TEXT) { /* the text reader streams: no copy of the file */
		rc = dv_querylist_load(ql, path, &o->ql, err);
		st->records = ql->lines;
		st->queries = ql->count;
		st->malformed = ql->skipped;
		return rc;
	}
	fd = std ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return dv_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	rc = slurp(fd, std ? "(stdin)" : path, &buf, &len, &mapped, err);
	if (!std)
		close(fd);
	if (rc != 0)
		return rc;
	if (mapped)
		madvise(buf, len, MADV_SEQUENTIAL);
	rc = dv_input_load_buffer(ql, buf, len, path, kind, o, st, err);
	if (mapped)
		munmap(buf, len);
	else
		free(buf);
	return rc;
}
