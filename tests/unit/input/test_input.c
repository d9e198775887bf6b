/* test_input: -B, pcap, pcapng and dnstap readers on files the test writes itself (known clients
 * and times). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef HAVE_FSTRM
#include <fstrm.h>
#endif

#include "input/input.h"

/* ---- byte buffer ---- */

typedef struct buf {
	uint8_t d[1 << 16];
	size_t n;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->d));
	if (n == 0)
		return; /* p may be NULL (a SYN's empty payload): memcpy must not see it */
	memcpy(b->d + b->n, p, n);
	b->n += n;
}
static void put8(buf_t *b, uint8_t v)
{
	put(b, &v, 1);
}
static void put16(buf_t *b, uint16_t v)
{
	put8(b, (uint8_t)(v >> 8));
	put8(b, (uint8_t)v);
}
static void put32(buf_t *b, uint32_t v)
{
	put16(b, (uint16_t)(v >> 16));
	put16(b, (uint16_t)v);
}
static void le16(buf_t *b, uint16_t v)
{
	put8(b, (uint8_t)v);
	put8(b, (uint8_t)(v >> 8));
}
static void le32(buf_t *b, uint32_t v)
{
	le16(b, (uint16_t)v);
	le16(b, (uint16_t)(v >> 16));
}

/* A query for NAME (dotted, no final dot) of TYPE with ID, flags (0x0100 = RD), optional OPT RR. */
static size_t query(uint8_t *out, const char *name, uint16_t type, uint16_t id, uint16_t flags,
                    bool edns)
{
	buf_t *b = calloc(1, sizeof(*b));
	const char *p = name;
	size_t n;

	put16(b, id);
	put16(b, flags);
	put16(b, 1);
	put16(b, 0);
	put16(b, 0);
	put16(b, edns ? 1 : 0);
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		put8(b, (uint8_t)l);
		put(b, p, l);
		p += l + (dot ? 1 : 0);
	}
	put8(b, 0);
	put16(b, type);
	put16(b, 1);
	if (edns) { /* OPT with an ECS-like option of 8 octets: captured queries keep it */
		put8(b, 0);
		put16(b, 41);
		put16(b, 1232);
		put32(b, 0x8000);
		put16(b, 12);
		put16(b, 8);
		put16(b, 8);
		put32(b, 0x00011800);
		put32(b, 0x0a000000);
	}
	n = b->n;
	memcpy(out, b->d, n);
	free(b);
	return n;
}

/* ---- packets: IPv4/IPv6 + UDP/TCP (checksums zero: readers do not check them) ---- */

typedef struct ep {
	int v; /* 4 or 6 */
	uint8_t a[16];
	uint16_t port;
} ep_t;

static ep_t ep4(uint8_t last, uint16_t port)
{
	ep_t e = {4, {10, 0, 0, last}, port};
	return e;
}
static ep_t ep6(uint8_t last, uint16_t port)
{
	ep_t e = {6, {0x20, 0x01, 0x0d, 0xb8}, port};
	e.a[15] = last;
	return e;
}

#define TCP_F 1
#define TCP_S 2
#define TCP_A 16

/* IP packet from s to d: proto 17 (UDP) or 6 (TCP with seq, flags). */
static void ip_packet(buf_t *b, ep_t s, ep_t d, int proto, uint32_t seq, uint8_t flags,
                      const uint8_t *pl, size_t plen)
{
	size_t l4 = (proto == 17 ? 8 : 20) + plen;
	if (s.v == 4) {
		put8(b, 0x45);
		put8(b, 0);
		put16(b, (uint16_t)(20 + l4));
		put32(b, 0x00004000); /* id 0, DF */
		put8(b, 64);
		put8(b, (uint8_t)proto);
		put16(b, 0);
		put(b, s.a, 4);
		put(b, d.a, 4);
	} else {
		put32(b, 0x60000000);
		put16(b, (uint16_t)l4);
		put8(b, (uint8_t)proto);
		put8(b, 64);
		put(b, s.a, 16);
		put(b, d.a, 16);
	}
	put16(b, s.port);
	put16(b, d.port);
	if (proto == 17) {
		put16(b, (uint16_t)l4);
		put16(b, 0);
	} else {
		put32(b, seq);
		put32(b, 0);
		put8(b, 5 << 4);
		put8(b, flags);
		put16(b, 65535);
		put32(b, 0);
	}
	put(b, pl, plen);
}

enum { L_ETH = 1, L_NULL = 0, L_RAW = 101, L_SLL = 113, L_SLL2 = 276 };

/* Link header for linktype + IP packet ip. */
static void frame(buf_t *out, int link, int v, const buf_t *ip)
{
	uint16_t et = v == 4 ? 0x0800 : 0x86dd;
	static const uint8_t mac[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2};
	switch (link) {
	case L_ETH:
		put(out, mac, 12);
		put16(out, et);
		break;
	case L_NULL:
		le32(out, v == 4 ? 2 : 10);
		break;
	case L_SLL:
		put16(out, 0);
		put16(out, 772);
		put16(out, 6);
		put(out, mac, 8);
		put16(out, et);
		break;
	case L_SLL2:
		put16(out, et);
		put16(out, 0);
		put32(out, 1);
		put16(out, 772);
		put8(out, 0);
		put8(out, 6);
		put(out, mac, 8);
		break;
	default:
		break;
	}
	put(out, ip->d, ip->n);
}

/* A capture file being written: pcap (ns) or pcapng (if_tsresol 9). */
typedef struct cap {
	FILE *f;
	char path[64];
	int link;
	bool ng;
} cap_t;

static void cap_open(cap_t *c, int link, bool ng)
{
	strcpy(c->path, "/tmp/test_input.XXXXXX");
	int fd = mkstemp(c->path);
	assert_true(fd >= 0);
	c->f = fdopen(fd, "w+b");
	c->link = link;
	c->ng = ng;
	buf_t *h = calloc(1, sizeof(*h));
	if (!ng) {
		le32(h, 0xa1b23c4d); /* nanosecond pcap */
		le16(h, 2);
		le16(h, 4);
		le32(h, 0);
		le32(h, 0);
		le32(h, 65535);
		le32(h, (uint32_t)link);
	} else {
		le32(h, 0x0a0d0d0a); /* SHB */
		le32(h, 28);
		le32(h, 0x1a2b3c4d);
		le16(h, 1);
		le16(h, 0);
		le32(h, 0xffffffff);
		le32(h, 0xffffffff);
		le32(h, 28);
		le32(h, 1); /* IDB with if_tsresol = 9 */
		le32(h, 32);
		le16(h, (uint16_t)link);
		le16(h, 0);
		le32(h, 65535);
		le16(h, 9);
		le16(h, 1);
		put8(h, 9);
		put8(h, 0);
		put8(h, 0);
		put8(h, 0);
		le16(h, 0);
		le16(h, 0);
		le32(h, 32);
	}
	assert_int_equal(fwrite(h->d, 1, h->n, c->f), h->n);
	free(h);
}

static void cap_packet(cap_t *c, uint64_t ts_ns, const buf_t *ip, int v)
{
	buf_t *fr = calloc(1, sizeof(*fr)), *r = calloc(1, sizeof(*r));
	frame(fr, c->link, v, ip);
	if (!c->ng) {
		le32(r, (uint32_t)(ts_ns / 1000000000ULL));
		le32(r, (uint32_t)(ts_ns % 1000000000ULL));
		le32(r, (uint32_t)fr->n);
		le32(r, (uint32_t)fr->n);
		put(r, fr->d, fr->n);
	} else {
		size_t pad = (4 - fr->n % 4) % 4, tot = 32 + fr->n + pad;
		le32(r, 6);
		le32(r, (uint32_t)tot);
		le32(r, 0);
		le32(r, (uint32_t)(ts_ns >> 32));
		le32(r, (uint32_t)ts_ns);
		le32(r, (uint32_t)fr->n);
		le32(r, (uint32_t)fr->n);
		put(r, fr->d, fr->n);
		while (pad--)
			put8(r, 0);
		le32(r, (uint32_t)tot);
	}
	assert_int_equal(fwrite(r->d, 1, r->n, c->f), r->n);
	free(fr);
	free(r);
}

static void cap_udp(cap_t *c, uint64_t ts, ep_t s, ep_t d, const uint8_t *m, size_t n)
{
	buf_t *ip = calloc(1, sizeof(*ip));
	ip_packet(ip, s, d, 17, 0, 0, m, n);
	cap_packet(c, ts, ip, s.v);
	free(ip);
}

static void cap_tcp(cap_t *c, uint64_t ts, ep_t s, ep_t d, uint32_t seq, uint8_t fl,
                    const uint8_t *m, size_t n)
{
	buf_t *ip = calloc(1, sizeof(*ip));
	ip_packet(ip, s, d, 6, seq, fl, m, n);
	cap_packet(c, ts, ip, s.v);
	free(ip);
}

static void cap_close(cap_t *c)
{
	assert_int_equal(fclose(c->f), 0);
}

static int load(dv_querylist_t *ql, const char *path, dv_input_kind_t k,
                const dv_input_options_t *o, dv_input_stats_t *st, dv_err_t *err)
{
	dv_input_options_t def;
	if (o == NULL) {
		dv_input_options_init(&def);
		o = &def;
	}
	memset(err, 0, sizeof(*err));
	return dv_input_load(ql, path, k, o, st, err);
}

static uint16_t qtype_of(const dv_querylist_t *ql, size_t i)
{
	size_t len;
	const uint8_t *m = dv_querylist_get(ql, i, &len);
	size_t e = 12 + dv_querylist_question_len(ql, i);
	return (uint16_t)(m[e - 4] << 8 | m[e - 3]);
}

#define T0 1700000000123456789ULL

/* Six UDP queries from three clients (two share an address), plus traffic to ignore. */
static void write_udp_capture(cap_t *c, int link, bool ng, int v)
{
	uint8_t m[600];
	size_t n;
	ep_t srv = v == 4 ? ep4(53, 53) : ep6(53, 53);
	ep_t a = v == 4 ? ep4(1, 40001) : ep6(1, 40001);
	ep_t b = v == 4 ? ep4(2, 40002) : ep6(2, 40002);
	ep_t a2 = a;
	a2.port = 40003;

	cap_open(c, link, ng);
	n = query(m, "a.example", 1, 0x1111, 0x0100, false);
	cap_udp(c, T0, a, srv, m, n);
	n = query(m, "b.example", 28, 0x2222, 0x0100, true);
	cap_udp(c, T0 + 1500, b, srv, m, n);
	n = query(m, "c.example", 15, 0x3333, 0x0000, false);
	cap_udp(c, T0 + 2000000, a2, srv, m, n);
	/* a response from the server (source port 53, destination 40001): ignored */
	n = query(m, "a.example", 1, 0x1111, 0x8180, false);
	cap_udp(c, T0 + 2000001, srv, a, m, n);
	n = query(m, "d.example", 65, 0x4444, 0x0100, false);
	cap_udp(c, T0 + 3000000, a, srv, m, n);
	/* to port 5353: ignored */
	cap_udp(c, T0 + 3000001, a, v == 4 ? ep4(53, 5353) : ep6(53, 5353), m, n);
	/* to port 53 but a response: malformed, packet 7 */
	n = query(m, "x.example", 1, 0x5555, 0x8180, false);
	cap_udp(c, T0 + 3000002, b, srv, m, n);
	n = query(m, "e.example", 16, 0x6666, 0x0100, false);
	cap_udp(c, T0 + 1000000000ULL, b, srv, m, n);
	n = query(m, "f.example", 2, 0x7777, 0x0100, false);
	cap_udp(c, T0 + 1000000001ULL, a2, srv, m, n);
	cap_close(c);
}

static void check_udp_capture(const char *path, int v)
{
	static const uint64_t ts[] = {0, 1500, 2000000, 3000000, 1000000000ULL, 1000000001ULL};
	static const uint32_t cl[] = {0, 1, 2, 0, 1, 2};
	static const uint16_t ty[] = {1, 28, 15, 65, 16, 2};
	dv_querylist_t ql;
	dv_input_stats_t st;
	dv_input_options_t o;
	dv_err_t err;
	size_t i, len;

	assert_int_equal(load(&ql, path, DV_INPUT_AUTO, NULL, &st, &err), 0);
	assert_int_equal(st.kind, DV_INPUT_PCAP);
	assert_int_equal(ql.count, 6);
	assert_int_equal(ql.clients, 3);
	assert_int_equal(st.records, 9);
	assert_int_equal(st.ignored, 2);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(st.bad_kept, 1);
	assert_int_equal(st.bad[0].pos, 7);
	assert_string_equal(st.pos_unit, "packet");
	assert_non_null(strstr(st.bad[0].what, "response"));
	for (i = 0; i < 6; i++) {
		const uint8_t *m = dv_querylist_get(&ql, i, &len);
		assert_int_equal(ql.ts_ns[i], ts[i]);
		assert_int_equal(ql.client[i], cl[i]);
		assert_int_equal(qtype_of(&ql, i), ty[i]);
		assert_int_equal(m[0] | m[1], 0); /* ID cleared for the engine */
		assert_int_equal(dv_querylist_question_len(&ql, i), 11 + 4);
	}
	/* the second query keeps its OPT RR with the option (11 + 12 octets) */
	dv_querylist_get(&ql, 1, &len);
	assert_int_equal(len, 12 + 15 + 23);
	assert_int_equal(dv_querylist_get(&ql, 2, &len)[2], 0x00); /* RD as captured (off) */
	dv_querylist_free(&ql);

	/* address only: the two sources of 10.0.0.1 are one client */
	dv_input_options_init(&o);
	o.client_addr_only = true;
	assert_int_equal(load(&ql, path, DV_INPUT_PCAP, &o, &st, &err), 0);
	assert_int_equal(ql.clients, 2);
	assert_int_equal(ql.client[2], 0);
	dv_querylist_free(&ql);

	/* strict: the response at packet 7 stops the load, naming it */
	dv_input_options_init(&o);
	o.strict = true;
	assert_int_equal(load(&ql, path, DV_INPUT_PCAP, &o, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "packet 7: a response"));
	assert_null(ql.arena);

	/* a server address that is not in the capture: nothing */
	dv_input_options_init(&o);
	assert_int_equal(dv_input_set_server(&o, v == 4 ? "10.0.0.99" : "[2001:db8::99]:53", &err),
	                 0);
	assert_int_equal(load(&ql, path, DV_INPUT_PCAP, &o, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no queries"));
	dv_input_options_init(&o);
	assert_int_equal(dv_input_set_server(&o, v == 4 ? "10.0.0.53#53" : "2001:db8::35", &err),
	                 0);
	assert_int_equal(load(&ql, path, DV_INPUT_PCAP, &o, &st, &err), 0);
	assert_int_equal(ql.count, 6);
	dv_querylist_free(&ql);
}

static void test_pcap_udp_ethernet_v4(void **state)
{
	cap_t c;
	write_udp_capture(&c, L_ETH, false, 4);
	check_udp_capture(c.path, 4);
	unlink(c.path);
}

static void test_pcapng_udp_sll2_v6(void **state)
{
	cap_t c;
	write_udp_capture(&c, L_SLL2, true, 6);
	check_udp_capture(c.path, 6);
	unlink(c.path);
}

static void test_link_types(void **state)
{
	static const int links[] = {L_ETH, L_NULL, L_RAW, L_SLL, L_SLL2};
	size_t i;
	int v;

	for (i = 0; i < DV_ARRAY_SIZE(links); i++)
		for (v = 4; v <= 6; v += 2) {
			cap_t c;
			write_udp_capture(&c, links[i], i % 2 == 1, v);
			check_udp_capture(c.path, v);
			unlink(c.path);
		}
}

static void test_pcap_tcp(void **state)
{
	uint8_t m1[300], m2[300], m3[300], seg[900];
	size_t n1, n2, n3, n = 0;
	ep_t srv = ep4(53, 53), a = ep4(1, 50000), b = ep4(2, 50001), c6 = ep6(7, 50002);
	dv_querylist_t ql;
	dv_input_stats_t st;
	dv_err_t err;
	cap_t c;

	n1 = query(m1, "t1.example", 1, 1, 0x0100, false);
	n2 = query(m2, "t2.example", 28, 2, 0x0100, true);
	n3 = query(m3, "t3.example", 6, 3, 0x0100, false);
	cap_open(&c, L_ETH, false);
	/* flow a: SYN (seq 999), then two messages in one segment, the third split in two */
	cap_tcp(&c, T0, a, srv, 999, TCP_S, NULL, 0);
	seg[n++] = (uint8_t)(n1 >> 8), seg[n++] = (uint8_t)n1;
	memcpy(seg + n, m1, n1), n += n1;
	seg[n++] = (uint8_t)(n2 >> 8), seg[n++] = (uint8_t)n2;
	memcpy(seg + n, m2, n2), n += n2;
	cap_tcp(&c, T0 + 10, a, srv, 1000, TCP_A, seg, n);
	/* its retransmission: ignored */
	cap_tcp(&c, T0 + 11, a, srv, 1000, TCP_A, seg, n);
	seg[0] = (uint8_t)(n3 >> 8), seg[1] = (uint8_t)n3;
	memcpy(seg + 2, m3, n3);
	cap_tcp(&c, T0 + 20, a, srv, 1000 + (uint32_t)n, TCP_A, seg, 5);
	cap_tcp(&c, T0 + 30, a, srv, 1000 + (uint32_t)n + 5, TCP_A | TCP_F, seg + 5, n3 + 2 - 5);
	/* flow b: no SYN (capture began mid-flow), one message, then a gap: malformed */
	seg[0] = (uint8_t)(n1 >> 8), seg[1] = (uint8_t)n1;
	memcpy(seg + 2, m1, n1);
	cap_tcp(&c, T0 + 40, b, srv, 5000, TCP_A, seg, n1 + 2);
	cap_tcp(&c, T0 + 50, b, srv, 5000 + (uint32_t)n1 + 2 + 100, TCP_A, seg, n1 + 2);
	cap_tcp(&c, T0 + 60, b, srv, 5000 + (uint32_t)n1 + 2 + 200, TCP_A, seg, n1 + 2);
	/* flow c (IPv6): a message cut by the end of the capture */
	cap_tcp(&c, T0 + 70, c6, ep6(53, 53), 1, TCP_A, seg, 10);
	cap_close(&c);

	assert_int_equal(load(&ql, c.path, DV_INPUT_AUTO, NULL, &st, &err), 0);
	assert_int_equal(ql.count, 4);
	assert_int_equal(ql.clients, 2);
	assert_int_equal(st.tcp_flows, 3);
	assert_int_equal(qtype_of(&ql, 0), 1);
	assert_int_equal(qtype_of(&ql, 1), 28);
	assert_int_equal(qtype_of(&ql, 2), 6);
	assert_int_equal(qtype_of(&ql, 3), 1);
	assert_int_equal(ql.ts_ns[0], 0); /* after the earliest query, not the SYN */
	assert_int_equal(ql.ts_ns[1], 0);
	assert_int_equal(ql.ts_ns[2], 20); /* stamped when the message is complete */
	assert_int_equal(ql.ts_ns[3], 30);
	assert_int_equal(ql.client[2], 0);
	assert_int_equal(ql.client[3], 1);
	/* packets 7 and 8 of flow b, then the cut message of flow c at the end */
	assert_int_equal(st.malformed, 3);
	assert_int_equal(st.bad[0].pos, 7);
	assert_non_null(strstr(st.bad[0].what, "out of order"));
	assert_int_equal(st.bad[1].pos, 8);
	assert_non_null(strstr(st.bad[2].what, "capture ended inside"));
	assert_int_equal(st.ignored, 2); /* SYN and the retransmission */
	dv_querylist_free(&ql);
	unlink(c.path);
}

/* Data on the SYN (TCP Fast Open) starts after the SYN's sequence number. */
static void test_pcap_tcp_fast_open(void **state)
{
	uint8_t m[300], seg[302];
	size_t n = query(m, "tfo.example", 1, 1, 0x0100, false);
	dv_querylist_t ql;
	dv_input_stats_t st;
	dv_err_t err;
	cap_t c;

	seg[0] = (uint8_t)(n >> 8);
	seg[1] = (uint8_t)n;
	memcpy(seg + 2, m, n);
	cap_open(&c, L_RAW, false);
	cap_tcp(&c, T0, ep4(9, 40000), ep4(53, 53), 77, TCP_S, seg, n + 2);
	cap_tcp(&c, T0 + 5, ep4(9, 40000), ep4(53, 53), 78 + (uint32_t)n + 2, TCP_A, seg, n + 2);
	cap_close(&c);
	assert_int_equal(load(&ql, c.path, DV_INPUT_AUTO, NULL, &st, &err), 0);
	assert_int_equal(ql.count, 2);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(ql.ts_ns[1], 5);
	dv_querylist_free(&ql);
	unlink(c.path);
}

/* A capture cut in the middle of a record: what came before loads, the cut is counted. */
static void test_pcap_truncated(void **state)
{
	dv_querylist_t ql;
	dv_input_stats_t st;
	dv_input_options_t o;
	dv_err_t err;
	cap_t c;
	long size;

	write_udp_capture(&c, L_ETH, false, 4);
	c.f = fopen(c.path, "r+b");
	fseek(c.f, 0, SEEK_END);
	size = ftell(c.f);
	assert_int_equal(ftruncate(fileno(c.f), size - 20), 0);
	fclose(c.f);
	assert_int_equal(load(&ql, c.path, DV_INPUT_AUTO, NULL, &st, &err), 0);
	assert_int_equal(ql.count, 5);
	assert_int_equal(st.malformed, 2);
	assert_int_equal(st.bad[1].pos, 9);
	assert_non_null(strstr(st.bad[1].what, "unreadable"));
	dv_querylist_free(&ql);
	dv_input_options_init(&o);
	o.strict = true;
	assert_int_equal(load(&ql, c.path, DV_INPUT_PCAP, &o, &st, &err), -EINVAL);
	unlink(c.path);
	/* not a capture at all, named pcap */
	assert_int_equal(dv_input_load_buffer(&ql, (const uint8_t *)"hello\n", 6, "x.pcap",
	                                      DV_INPUT_PCAP, &o, &st, &err),
	                 -EINVAL);
	assert_non_null(strstr(err.msg, "x.pcap: "));
}

/* ---- dnsperf -B ---- */

static void test_binary(void **state)
{
	buf_t *b = calloc(1, sizeof(*b));
	uint8_t m[300];
	size_t n, i;
	dv_querylist_t ql;
	dv_input_stats_t st;
	dv_input_options_t o;
	dv_err_t err;
	static const char *names[] = {"one.example", "two.example", "three.example"};

	dv_input_options_init(&o);
	for (i = 0; i < 3; i++) {
		n = query(m, names[i], (uint16_t)(i + 1), 0xabcd, 0x0100, i == 1);
		put16(b, (uint16_t)n);
		put(b, m, n);
	}
	n = query(m, "resp.example", 1, 1, 0x8000, false); /* at offset b->n: malformed */
	size_t resp_off = b->n;
	put16(b, (uint16_t)n);
	put(b, m, n);
	size_t cut_off = b->n;
	put16(b, 40); /* cut short */
	put(b, m, 10);
	char want[160];
	/* Without --skip-bad the first malformed record stops the load, as a text list's first
	 * bad line does: FILE, record number, why, byte offset (issue 28 item 12). */
	assert_int_equal(
	    dv_input_load_buffer(&ql, b->d, b->n, "q.bin", DV_INPUT_BINARY, &o, &st, &err),
	    -EINVAL);
	snprintf(want, sizeof(want),
	         "q.bin: record 4: a response (QR = 1), not a query (byte offset %zu)", resp_off);
	assert_string_equal(err.msg, want);
	assert_int_equal(ql.count, 0);
	/* A file whose only fault is a truncated last record: the same. */
	assert_int_equal(
	    dv_input_load_buffer(&ql, b->d, resp_off, "q.bin", DV_INPUT_BINARY, &o, &st, &err), 0);
	assert_int_equal(ql.count, 3);
	assert_int_equal(ql.skipped, 0);
	dv_querylist_free(&ql);
	buf_t *t = calloc(1, sizeof(*t)); /* the good records, then the cut one */
	assert_non_null(t);
	put(t, b->d, resp_off);
	put(t, b->d + cut_off, b->n - cut_off);
	assert_int_equal(
	    dv_input_load_buffer(&ql, t->d, t->n, "q.bin", DV_INPUT_BINARY, &o, &st, &err),
	    -EINVAL);
	free(t);
	snprintf(want, sizeof(want),
	         "q.bin: record 4: message of 40 octets cut short at 10 octets (byte offset %zu)",
	         resp_off);
	assert_string_equal(err.msg, want);
	/* With --skip-bad they are counted and skipped. */
	o.ql.skip_bad = true;
	assert_int_equal(
	    dv_input_load_buffer(&ql, b->d, b->n, "q.bin", DV_INPUT_BINARY, &o, &st, &err), 0);
	assert_int_equal(ql.count, 3);
	assert_null(ql.ts_ns);
	assert_null(ql.client);
	assert_int_equal(ql.skipped, 0); /* malformed records are st's, not skipped lines */
	assert_int_equal(st.malformed, 2);
	assert_string_equal(st.pos_unit, "record");
	assert_int_equal(st.bad[0].pos, 4);
	assert_int_equal(st.bad[1].pos, 5);
	snprintf(want, sizeof(want), "a response (QR = 1), not a query (byte offset %zu)",
	         resp_off);
	assert_string_equal(st.bad[0].what, want);
	for (i = 0; i < 3; i++) {
		size_t len;
		const uint8_t *q = dv_querylist_get(&ql, i, &len);
		assert_int_equal(q[0] | q[1], 0);
		assert_int_equal(qtype_of(&ql, i), i + 1);
		assert_int_equal(dv_querylist_question_len(&ql, i), strlen(names[i]) + 2 + 4);
	}
	dv_querylist_free(&ql);
	/* -B is never detected: as text the same bytes do not load */
	assert_int_equal(dv_input_detect(b->d, b->n), DV_INPUT_TEXT);
	o.strict = true; /* strict wins over --skip-bad */
	assert_int_equal(
	    dv_input_load_buffer(&ql, b->d, b->n, "q.bin", DV_INPUT_BINARY, &o, &st, &err),
	    -EINVAL);
	assert_non_null(strstr(err.msg, "q.bin: record 4: "));
	free(b);
}

/* ---- dnstap ---- */

static void pb_varint(buf_t *b, uint64_t v)
{
	while (v >= 0x80) {
		put8(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put8(b, (uint8_t)v);
}
static void pb_key(buf_t *b, unsigned num, unsigned wt)
{
	pb_varint(b, num << 3 | wt);
}
static void pb_bytes(buf_t *b, unsigned num, const void *p, size_t n)
{
	pb_key(b, num, 2);
	pb_varint(b, n);
	put(b, p, n);
}

/* Encode a Dnstap{type MESSAGE, message{type, family, proto, addr, port, time, query}}. */
static void dnstap_msg(buf_t *out, unsigned mtype, const uint8_t *addr, size_t alen, uint16_t port,
                       uint64_t ts, const uint8_t *q, size_t qn)
{
	buf_t *m = calloc(1, sizeof(*m));
	pb_key(m, 1, 0);
	pb_varint(m, mtype);
	pb_key(m, 2, 0);
	pb_varint(m, alen == 4 ? 1 : 2);
	pb_key(m, 3, 0);
	pb_varint(m, 1);
	pb_bytes(m, 4, addr, alen);
	pb_key(m, 6, 0);
	pb_varint(m, port);
	pb_key(m, 8, 0);
	pb_varint(m, ts / 1000000000ULL);
	pb_key(m, 9, 5);
	le32(m, (uint32_t)(ts % 1000000000ULL));
	pb_bytes(m, 10, q, qn);
	pb_bytes(out, 1, "test-identity", 13); /* Dnstap.identity: skipped */
	pb_bytes(out, 14, m->d, m->n);
	pb_key(out, 15, 0);
	pb_varint(out, 1);
	free(m);
}

#ifdef HAVE_FSTRM
static void write_dnstap(const char *path, bool corrupt)
{
	static const char ct[] = "protobuf:dnstap.Dnstap";
	static const uint8_t a1[4] = {192, 0, 2, 1}, a2[16] = {0x20, 1, 0xd, 0xb8, [15] = 2};
	struct fstrm_file_options *fo = fstrm_file_options_init();
	struct fstrm_writer_options *wo = fstrm_writer_options_init();
	struct fstrm_writer *w;
	uint8_t q[300];
	size_t n;
	int i;

	fstrm_file_options_set_file_path(fo, path);
	fstrm_writer_options_add_content_type(wo, ct, strlen(ct));
	w = fstrm_file_writer_init(fo, wo);
	assert_non_null(w);
	for (i = 0; i < 6; i++) {
		buf_t *f = calloc(1, sizeof(*f));
		/* CLIENT_QUERY x3 (two clients), AUTH_QUERY, CLIENT_RESPONSE, CLIENT_QUERY */
		static const unsigned types[] = {5, 5, 1, 6, 5, 5};
		n = query(q, "tap.example", (uint16_t)(i + 1), 9, types[i] == 6 ? 0x8180 : 0x0100,
		          i == 0);
		dnstap_msg(f, types[i], i % 2 ? a2 : a1, i % 2 ? 16 : 4, (uint16_t)(1000 + i % 2),
		           T0 + (uint64_t)i * 1000, q, n);
		if (corrupt && i == 4)
			f->n -= 7; /* cut inside the Message: frame 5 is malformed */
		void *copy = malloc(f->n);
		memcpy(copy, f->d, f->n);
		assert_int_equal(fstrm_writer_write(w, copy, f->n), fstrm_res_success);
		free(copy);
		free(f);
	}
	assert_int_equal(fstrm_writer_destroy(&w), fstrm_res_success);
	fstrm_file_options_destroy(&fo);
	fstrm_writer_options_destroy(&wo);
}
#endif

static void test_dnstap(void **state)
{
#ifdef HAVE_FSTRM
	char path[] = "/tmp/test_input.XXXXXX";
	dv_querylist_t ql;
	dv_input_stats_t st;
	dv_input_options_t o;
	dv_err_t err;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_dnstap(path, false);
	assert_int_equal(load(&ql, path, DV_INPUT_AUTO, NULL, &st, &err), 0);
	assert_int_equal(st.kind, DV_INPUT_DNSTAP);
	assert_int_equal(ql.count, 4);
	assert_int_equal(ql.clients, 2);
	assert_int_equal(qtype_of(&ql, 0), 1);
	assert_int_equal(qtype_of(&ql, 1), 2);
	assert_int_equal(qtype_of(&ql, 2), 5);
	assert_int_equal(qtype_of(&ql, 3), 6);
	assert_int_equal(ql.ts_ns[0], 0);
	assert_int_equal(ql.ts_ns[1], 1000);
	assert_int_equal(ql.ts_ns[2], 4000);
	assert_int_equal(ql.ts_ns[3], 5000);
	assert_int_equal(ql.client[0], 0);
	assert_int_equal(ql.client[1], 1);
	assert_int_equal(ql.client[2], 0);
	assert_int_equal(ql.client[3], 1);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.ignored, 3); /* AUTH_QUERY, CLIENT_RESPONSE, the STOP frame */
	dv_querylist_free(&ql);

	dv_input_options_init(&o);
	o.dnstap_want = DV_DNSTAP_AUTH_QUERY;
	assert_int_equal(load(&ql, path, DV_INPUT_DNSTAP, &o, &st, &err), 0);
	assert_int_equal(ql.count, 1);
	assert_int_equal(qtype_of(&ql, 0), 3);
	dv_querylist_free(&ql);

	write_dnstap(path, true);
	assert_int_equal(load(&ql, path, DV_INPUT_AUTO, NULL, &st, &err), 0);
	assert_int_equal(ql.count, 3);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(st.bad[0].pos, 5);
	assert_string_equal(st.pos_unit, "frame");
	dv_querylist_free(&ql);
	unlink(path);
#else
	skip();
#endif
}

static void test_detect_and_names(void **state)
{
	static const uint8_t pcap_le[] = {0xd4, 0xc3, 0xb2, 0xa1}, ng[] = {0x0a, 0x0d, 0x0d, 0x0a};
	uint8_t fs[64] = {0, 0, 0, 0, 0, 0, 0, 30, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 22};
	dv_input_kind_t k;
	dv_err_t err;

	memcpy(fs + 20, "protobuf:dnstap.Dnstap", 22);
	assert_int_equal(dv_input_detect(pcap_le, 4), DV_INPUT_PCAP);
	assert_int_equal(dv_input_detect(ng, 4), DV_INPUT_PCAP);
	assert_int_equal(dv_input_detect(fs, sizeof(fs)), DV_INPUT_DNSTAP);
	fs[21] = 'X';
	assert_int_equal(dv_input_detect(fs, sizeof(fs)), DV_INPUT_TEXT);
	assert_int_equal(dv_input_detect((const uint8_t *)"www.example.com A\n", 18),
	                 DV_INPUT_TEXT);
	assert_int_equal(dv_input_kind_parse("dnstap", &k, &err), 0);
	assert_int_equal(k, DV_INPUT_DNSTAP);
	assert_int_equal(dv_input_kind_parse("binary", &k, &err), 0);
	assert_int_equal(k, DV_INPUT_BINARY);
	assert_int_equal(dv_input_kind_parse("pcapng", &k, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'pcapng'"));
	assert_string_equal(dv_input_kind_name(DV_INPUT_PCAP), "pcap");
}

/* Text through the same entry point: the querylist compiler, unchanged (no per-query arrays). */
static void test_text(void **state)
{
	static const char list[] = "a.example A\nbad-line\nb.example MX\n";
	dv_input_options_t o;
	dv_input_stats_t st;
	dv_querylist_t ql;
	dv_err_t err;

	dv_input_options_init(&o);
	o.ql.skip_bad = true;
	assert_int_equal(dv_input_load_buffer(&ql, (const uint8_t *)list, strlen(list), "l.txt",
	                                      DV_INPUT_AUTO, &o, &st, &err),
	                 0);
	assert_int_equal(st.kind, DV_INPUT_TEXT);
	assert_int_equal(ql.count, 2);
	assert_int_equal(st.malformed, 1);
	assert_null(ql.qlen);
	assert_int_equal(qtype_of(&ql, 1), 15);
	dv_querylist_free(&ql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pcap_udp_ethernet_v4),
	    cmocka_unit_test(test_pcapng_udp_sll2_v6),
	    cmocka_unit_test(test_link_types),
	    cmocka_unit_test(test_pcap_tcp),
	    cmocka_unit_test(test_pcap_tcp_fast_open),
	    cmocka_unit_test(test_pcap_truncated),
	    cmocka_unit_test(test_binary),
	    cmocka_unit_test(test_dnstap),
	    cmocka_unit_test(test_detect_and_names),
	    cmocka_unit_test(test_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
