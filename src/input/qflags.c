/* qflags: per-line query flags of a text list, compiled with the line before the clock. */
#include "config.h"

#include "input/qflags.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/wire.h"

#define QF_AD          0x20 /* header octet 3 */
#define QF_CD          0x10
#define QF_OPT_NSID    3
#define QF_OPT_ECS     8
#define QF_DEFAULT_BUF DV_DNS_EDNS_UDP_DEFAULT

static int bad(char *msg, size_t msgsz, const char *p, size_t len, const char *why)
{
	snprintf(msg, msgsz, "query flag '%.*s' %s", (int)(len > 48 ? 48 : len), p, why);
	return -EINVAL;
}

static bool room(const dv_qflags_t *f, size_t need)
{
	return f->opts_len + need <= sizeof(f->opts);
}

static void put_opt(dv_qflags_t *f, uint16_t code, const uint8_t *data, uint16_t n)
{
	uint8_t *o = f->opts + f->opts_len;

	o[0] = (uint8_t)(code >> 8);
	o[1] = (uint8_t)code;
	o[2] = (uint8_t)(n >> 8);
	o[3] = (uint8_t)n;
	if (n > 0) /* +nsid has no data (memcpy from NULL is undefined even for 0) */
		memcpy(o + 4, data, n);
	f->opts_len = (uint16_t)(f->opts_len + 4 + n);
	f->edns = true;
}

/* ecs=ADDR/PREFIX: RFC 7871 option data: family, source prefix, scope 0, address octets. */
static int parse_ecs(dv_qflags_t *f, const char *p, size_t len, char *msg, size_t msgsz)
{
	char buf[INET6_ADDRSTRLEN + 8];
	uint8_t addr[16], data[4 + 16];
	const char *v = p + 4, *slash;
	unsigned long prefix;
	char *end;
	int fam, bits;
	size_t n = len - 4, octets;

	if (n == 0 || n >= sizeof(buf))
		return bad(msg, msgsz, p, len, "is not ecs=ADDR/PREFIX");
	memcpy(buf, v, n);
	buf[n] = '\0';
	slash = strchr(buf, '/');
	if (slash == NULL)
		return bad(msg, msgsz, p, len, "is not ecs=ADDR/PREFIX (no /PREFIX)");
	buf[slash - buf] = '\0';
	if (inet_pton(AF_INET, buf, addr) == 1)
		fam = 1, bits = 32;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		fam = 2, bits = 128;
	else
		return bad(msg, msgsz, p, len, "has no IPv4 or IPv6 address");
	prefix = strtoul(slash + 1, &end, 10);
	if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || prefix > (unsigned long)bits)
		return bad(msg, msgsz, p, len, "has a prefix length out of range");
	octets = (prefix + 7) / 8;
	if (!room(f, 4 + 4 + octets))
		return bad(msg, msgsz, p, len, "does not fit: too many EDNS options on the line");
	data[0] = 0;
	data[1] = (uint8_t)fam;
	data[2] = (uint8_t)prefix;
	data[3] = 0;
	memcpy(data + 4, addr, octets);
	if (prefix % 8 != 0) /* bits past the prefix are zero (RFC 7871 section 6) */
		data[4 + octets - 1] &= (uint8_t)(0xff << (8 - prefix % 8));
	put_opt(f, QF_OPT_ECS, data, (uint16_t)(4 + octets));
	return 0;
}

static int parse_one(dv_qflags_t *f, const char *p, size_t len, char *msg, size_t msgsz)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(p, s, len) == 0)
	if (IS("+do")) {
		f->edns = f->dnssec_ok = true;
	} else if (IS("+cd")) {
		f->set3 |= QF_CD;
	} else if (IS("+ad")) {
		f->set3 |= QF_AD;
	} else if (IS("+rd")) {
		f->set2 |= DV_DNS_RD;
		f->clear2 &= (uint8_t)~DV_DNS_RD;
	} else if (IS("-rd")) {
		f->clear2 |= DV_DNS_RD;
		f->set2 &= (uint8_t)~DV_DNS_RD;
	} else if (IS("+edns")) {
		f->edns = true;
	} else if (IS("+nsid")) {
		if (!room(f, 4))
			return bad(msg, msgsz, p, len, "does not fit: too many EDNS options");
		put_opt(f, QF_OPT_NSID, NULL, 0);
	} else if (len >= 4 && memcmp(p, "ecs=", 4) == 0) {
		return parse_ecs(f, p, len, msg, msgsz);
	} else if (len == 0) {
		return bad(msg, msgsz, p, len, "is empty (flags are ',+do,+cd': no spaces)");
	} else {
		return bad(msg, msgsz, p, len,
		           "is not a flag (+do +cd +ad +rd -rd +edns +nsid ecs=ADDR/PREFIX)");
	}
	return 0;
#undef IS
}

int dv_qflags_parse(const char *p, size_t len, dv_qflags_t *f, char *msg, size_t msgsz)
{
	size_t i = 0;

	memset(f, 0, sizeof(*f));
	while (i <= len) {
		const char *c = memchr(p + i, ',', len - i);
		size_t n = c != NULL ? (size_t)(c - (p + i)) : len - i;
		int rc = parse_one(f, p + i, n, msg, msgsz);

		if (rc != 0)
			return rc;
		i += n + 1;
	}
	return 0;
}

size_t dv_qflags_apply(const dv_qflags_t *f, const uint8_t *list_opt, size_t list_opt_len,
                       size_t max_opts, uint8_t *m, size_t w)
{
	uint8_t *opt = m + w;
	size_t olen;

	m[DV_DNS_OFF_FLAGS1] = (uint8_t)((m[DV_DNS_OFF_FLAGS1] | f->set2) & ~f->clear2);
	m[DV_DNS_OFF_FLAGS2] |= f->set3;
	if (list_opt_len == 0 && !f->edns)
		return w;
	if (list_opt_len > 0) {
		memcpy(opt, list_opt, list_opt_len);
	} else {
		dv_wire_writer_t ow;

		dv_wire_writer_init(&ow, opt, DV_DNS_OPT_RR_LEN);
		dv_wire_put_opt_rr(&ow, QF_DEFAULT_BUF, 0, false, 0);
		list_opt_len = DV_DNS_OPT_RR_LEN;
	}
	olen = list_opt_len - DV_DNS_OPT_RR_LEN + f->opts_len;
	if (olen > max_opts)
		return 0;
	dv_wire_set16(m + DV_DNS_OFF_ARCOUNT, 1); /* the OPT RR */
	if (f->dnssec_ok)
		opt[DV_DNS_OPT_OFF_FLAGS] |= (uint8_t)(DV_DNS_EDNS_DO >> 8);
	dv_wire_set16(opt + DV_DNS_OPT_OFF_RDLEN, (uint16_t)olen);
	memcpy(opt + list_opt_len, f->opts, f->opts_len);
	return w + DV_DNS_OPT_RR_LEN + olen;
}
