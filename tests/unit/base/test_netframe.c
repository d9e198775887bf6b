/* test_netframe: the AF_XDP paths' Ethernet/IP/UDP headers: RFC 1071 checksums against known
 * values, frames built and parsed back (IPv4 and IPv6), and the frames the parser refuses. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/netframe.h"

/* A query for www.example. A (29 octets), ID 0x1234. */
static const uint8_t query[] = {0x12, 0x34, 1,   0,   0,   1,   0,   0,   0,   0, 0, 0, 3, 'w', 'w',
                                'w',  7,    'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 1, 0, 1};

static void flow4(dv_nf_flow_t *f)
{
	static const uint8_t a[] = {198, 18, 0, 1}, b[] = {198, 18, 0, 2};

	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(f->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(f->src_ip, a, 4);
	memcpy(f->dst_ip, b, 4);
	f->src_port = 40000;
	f->dst_port = 53;
}

static void flow6(dv_nf_flow_t *f)
{
	flow4(f);
	f->v6 = true;
	memset(f->src_ip, 0, 16);
	memset(f->dst_ip, 0, 16);
	f->src_ip[0] = f->dst_ip[0] = 0x20;
	f->src_ip[1] = f->dst_ip[1] = 0x01;
	f->src_ip[3] = f->dst_ip[3] = 0x02;
	f->src_ip[15] = 1;
	f->dst_ip[15] = 2;
}

/* The IPv4 header example of RFC 1071's users (checksum 0xb861), and the all-ones rule. */
static void test_checksum_known(void **state)
{
	uint8_t ip[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	                0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	const uint8_t odd[] = {0x01, 0x02, 0x03};

	(void)state;
	assert_int_equal(dv_nf_checksum(ip, sizeof(ip)), 0xb861);
	ip[10] = 0xb8;
	ip[11] = 0x61;
	assert_int_equal(dv_nf_checksum(ip, sizeof(ip)), 0); /* a correct header sums to ~0 */
	/* an odd length pads the last octet: 0x0102 + 0x0300 = 0x0402 */
	assert_int_equal(dv_nf_checksum(odd, sizeof(odd)), (uint16_t)~0x0402);
}

/* Build, then read every field back; the UDP checksums are those an independent
 * implementation (Python, struct) gives for the same datagram. */
static void test_build_ipv4(void **state)
{
	uint8_t frame[128];
	const uint8_t *pl;
	size_t plen, h = dv_nf_header_len(false);
	dv_nf_flow_t f, g;

	(void)state;
	flow4(&f);
	assert_int_equal(h, 42);
	memcpy(frame + h, query, sizeof(query));
	dv_nf_build(frame, &f, sizeof(query));
	assert_memory_equal(frame, f.dst_mac, 6);
	assert_memory_equal(frame + 6, f.src_mac, 6);
	assert_int_equal(frame[12], 0x08);
	assert_int_equal(frame[13], 0x00);
	assert_int_equal(frame[16] << 8 | frame[17], 20 + 8 + sizeof(query)); /* total length */
	assert_int_equal(frame[22], 64);                                      /* TTL */
	assert_int_equal(dv_nf_checksum(frame + 14, 20), 0);                  /* header checksum */
	assert_int_equal(frame[40] << 8 | frame[41], 0xed46);                 /* UDP checksum */
	assert_int_equal(dv_nf_parse(frame, h + sizeof(query), &g, &pl, &plen), 0);
	assert_false(g.v6);
	assert_memory_equal(g.src_ip, f.src_ip, 4);
	assert_memory_equal(g.dst_ip, f.dst_ip, 4);
	assert_int_equal(g.src_port, 40000);
	assert_int_equal(g.dst_port, 53);
	assert_int_equal(plen, sizeof(query));
	assert_memory_equal(pl, query, sizeof(query));
	/* Ethernet padding after the datagram is not payload */
	assert_int_equal(dv_nf_parse(frame, h + sizeof(query) + 6, &g, &pl, &plen), 0);
	assert_int_equal(plen, sizeof(query));
}

static void test_build_ipv6(void **state)
{
	uint8_t frame[128];
	const uint8_t *pl;
	size_t plen, h = dv_nf_header_len(true);
	dv_nf_flow_t f, g;

	(void)state;
	flow6(&f);
	assert_int_equal(h, 62);
	memcpy(frame + h, query, sizeof(query));
	dv_nf_build(frame, &f, sizeof(query));
	assert_int_equal(frame[12] << 8 | frame[13], 0x86dd);
	assert_int_equal(frame[18] << 8 | frame[19], 8 + sizeof(query)); /* payload length */
	assert_int_equal(frame[20], 17);
	assert_int_equal(frame[60] << 8 | frame[61], 0x3966);
	assert_int_equal(dv_nf_parse(frame, h + sizeof(query), &g, &pl, &plen), 0);
	assert_true(g.v6);
	assert_memory_equal(g.src_ip, f.src_ip, 16);
	assert_memory_equal(g.dst_ip, f.dst_ip, 16);
	assert_int_equal(plen, sizeof(query));
	assert_memory_equal(pl, query, sizeof(query));
}

/* A checksum that sums to 0 is sent as 0xffff (0 means "none" over IPv4). */
static void test_udp_checksum_zero(void **state)
{
	uint8_t udp[8 + 2] = {0};
	dv_nf_flow_t f;
	uint16_t c;

	(void)state;
	memset(&f, 0, sizeof(f));
	udp[4] = 0;
	udp[5] = 10;
	/* pseudo-header 17 + 10, length 10 again: 37; payload p makes the sum 0xffff */
	udp[8] = 0xff;
	udp[9] = 0xff - 37;
	c = dv_nf_udp_checksum(&f, udp, sizeof(udp));
	assert_int_equal(c, 0xffff);
}

/* What the parser refuses: short frames, other protocols, lengths past the frame,
 * fragments. */
static void test_parse_refuses(void **state)
{
	uint8_t frame[128], bad[128];
	const uint8_t *pl;
	size_t plen, n = dv_nf_header_len(false) + sizeof(query);
	dv_nf_flow_t f, g;

	(void)state;
	flow4(&f);
	memcpy(frame + 42, query, sizeof(query));
	dv_nf_build(frame, &f, sizeof(query));
	assert_int_equal(dv_nf_parse(frame, 13, &g, &pl, &plen), -EINVAL);
	assert_int_equal(dv_nf_parse(frame, 41, &g, &pl, &plen), -EINVAL);
	assert_int_equal(dv_nf_parse(frame, n - 1, &g, &pl, &plen), -EINVAL); /* IP length */
	memcpy(bad, frame, n);
	bad[12] = 0x08;
	bad[13] = 0x06; /* ARP */
	assert_int_equal(dv_nf_parse(bad, n, &g, &pl, &plen), -EINVAL);
	memcpy(bad, frame, n);
	bad[23] = 6; /* TCP */
	assert_int_equal(dv_nf_parse(bad, n, &g, &pl, &plen), -EINVAL);
	memcpy(bad, frame, n);
	bad[20] = 0x20; /* MF: a fragment */
	assert_int_equal(dv_nf_parse(bad, n, &g, &pl, &plen), -EINVAL);
	memcpy(bad, frame, n);
	bad[14] = 0x44; /* IHL 4 */
	assert_int_equal(dv_nf_parse(bad, n, &g, &pl, &plen), -EINVAL);
	memcpy(bad, frame, n);
	bad[38] = 0xff; /* UDP length past the IP datagram */
	assert_int_equal(dv_nf_parse(bad, n, &g, &pl, &plen), -EINVAL);
	memcpy(bad, frame, n);
	bad[39] = 7; /* UDP length below its header */
	bad[38] = 0;
	assert_int_equal(dv_nf_parse(bad, n, &g, &pl, &plen), -EINVAL);
}

/* The flow back: a frame built on it parses as the original flow turned around, and the
 * IPv4 header check holds for it, fails for a changed octet, holds for IPv6 (none). */
static void test_reverse_and_ip4_check(void **state)
{
	uint8_t frame[DV_NF_HDR_MAX + sizeof(query)];
	const uint8_t *pl;
	dv_nf_flow_t f, back, got;
	size_t plen, h;
	int v;

	(void)state;
	for (v = 0; v < 2; v++) {
		if (v)
			flow6(&f);
		else
			flow4(&f);
		dv_nf_reverse(&f, &back);
		h = dv_nf_header_len(back.v6);
		memcpy(frame + h, query, sizeof(query));
		dv_nf_build(frame, &back, sizeof(query));
		assert_int_equal(dv_nf_parse(frame, h + sizeof(query), &got, &pl, &plen), 0);
		assert_memory_equal(got.src_mac, f.dst_mac, 6);
		assert_memory_equal(got.dst_mac, f.src_mac, 6);
		assert_memory_equal(got.src_ip, f.dst_ip, 16);
		assert_memory_equal(got.dst_ip, f.src_ip, 16);
		assert_int_equal(got.src_port, f.dst_port);
		assert_int_equal(got.dst_port, f.src_port);
		assert_int_equal(plen, sizeof(query));
		assert_true(dv_nf_ip4_csum_ok(frame, &got));
		frame[DV_NF_ETH_LEN + 8] ^= 1; /* IPv4: the TTL; IPv6: a source address octet */
		assert_true(dv_nf_ip4_csum_ok(frame, &got) == got.v6);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_checksum_known), cmocka_unit_test(test_build_ipv4),
	    cmocka_unit_test(test_build_ipv6),     cmocka_unit_test(test_udp_checksum_zero),
	    cmocka_unit_test(test_parse_refuses),  cmocka_unit_test(test_reverse_and_ip4_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
