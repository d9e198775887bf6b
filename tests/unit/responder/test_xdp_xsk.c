/* test_xdp_xsk: the XDP-socket responder's program (xdp_xsk.bpf.c, with base/xdp_udp.bpf.h)
 * run on frames of our own (BPF_PROG_TEST_RUN): which frames it hands to the XDP socket
 * (XDP_REDIRECT) and which to the kernel (XDP_PASS), each verdict exact, the frame never
 * changed; with --capacity's stamp on, the arrival stamp before each frame it hands over.
 * Needs root (CAP_BPF, AF_XDP): else a skip. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "base/netframe.h"
#include "base/xdp_meta.h"
#include "base/xsk.h"
#include "responder/xdp_counts.h"
#include "responder/xsk.h"
#include "../base/bpfframe.h"

#define PORT 5300

/*
 * The program redirects into map xsks under the frame's receive queue, with XDP_PASS as
 * the fallback for a queue without a socket: with the map empty a query and everything
 * else would both say XDP_PASS. So the fixture opens a real XDP socket (copy mode) on
 * queue 0 of lo, the queue BPF_PROG_TEST_RUN's frames come in on, and registers it: a
 * query then says XDP_REDIRECT (the test run reports the verdict; it sends nothing to the
 * socket). In a network namespace of its own where it can (root can), so that no other
 * XDP socket on the machine's lo is in the way.
 */
typedef struct fixture {
	dv_xdp_prog_t prog;
	int xsks_fd;
	dv_xsk_t s;
} fixture_t;

static fixture_t fx;

static int setup(void **state)
{
	dv_err_t err = {{0}};

	(void)state;
	if (unshare(CLONE_NEWNET) != 0)
		printf("note: no network namespace of its own (%s): the machine's lo\n",
		       strerror(errno));
	if (dv_rxsk_load(&fx.prog, "lo", PORT, false, &fx.xsks_fd, &err) != 0 ||
	    dv_xsk_open(&fx.s, "lo", 0, fx.xsks_fd, "test_xdp_xsk", &err) != 0) {
		printf("setup: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dv_xsk_close(&fx.s);
	dv_xdp_prog_close(&fx.prog);
	return 0;
}

/* The program's verdict on in (len octets); the frame it leaves is the one it got. */
static int verdict(const uint8_t *in, size_t len)
{
	uint8_t out[256];
	uint32_t olen;
	int v = dv_tf_run(fx.prog.prog_fd, in, len, out, sizeof(out), &olen);

	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
	return v;
}

/* A query frame from port sport to dport; its length. */
static size_t query(uint8_t *buf, bool v6, uint16_t sport, uint16_t dport)
{
	dv_nf_flow_t f;

	dv_tf_flow(&f, v6, sport, dport);
	return dv_tf_frame(buf, &f, dv_tf_query, sizeof(dv_tf_query));
}

/* n octets of IPv4 options (NOPs) put into a query frame of len octets: its new length.
 * The lengths and the header checksum are set again. */
static size_t ip4_options(uint8_t *buf, size_t len, size_t n)
{
	uint8_t *ip = buf + DV_NF_ETH_LEN;
	size_t ihl = DV_NF_IP4_LEN + n, tot = len - DV_NF_ETH_LEN + n;

	memmove(ip + ihl, ip + DV_NF_IP4_LEN, len - DV_NF_ETH_LEN - DV_NF_IP4_LEN);
	memset(ip + DV_NF_IP4_LEN, 1, n);
	ip[0] = (uint8_t)(0x40 | ihl / 4);
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[10] = ip[11] = 0;
	ip[10] = (uint8_t)(dv_nf_checksum(ip, ihl) >> 8);
	ip[11] = (uint8_t)dv_nf_checksum(ip, ihl);
	return len + n;
}

static void test_query_ipv4(void **state)
{
	uint8_t in[128];

	(void)state;
	assert_int_equal(verdict(in, query(in, false, 40000, PORT)), XDP_REDIRECT);
	assert_int_equal(verdict(in, query(in, false, PORT, PORT)), XDP_REDIRECT);
}

static void test_query_ipv6(void **state)
{
	uint8_t in[128];

	(void)state;
	assert_int_equal(verdict(in, query(in, true, 40000, PORT)), XDP_REDIRECT);
}

/* The program reads no DNS, checks no checksum and reads no IP version: whatever UDP to
 * the port holds goes to the socket, whose thread judges it (malformed: empty, a bad IPv4
 * header checksum, version 6 in an IPv4 frame; a response: received, never answered). */
static void test_any_payload(void **state)
{
	uint8_t in[128], resp[sizeof(dv_tf_query)];
	dv_nf_flow_t f;
	size_t len;

	(void)state;
	dv_tf_flow(&f, false, 40000, PORT);
	assert_int_equal(verdict(in, dv_tf_frame(in, &f, "", 0)), XDP_REDIRECT);
	memcpy(resp, dv_tf_query, sizeof(resp));
	resp[2] |= 0x80; /* QR */
	assert_int_equal(verdict(in, dv_tf_frame(in, &f, resp, sizeof(resp))), XDP_REDIRECT);
	dv_tf_flow(&f, true, 40000, PORT);
	assert_int_equal(verdict(in, dv_tf_frame(in, &f, "", 0)), XDP_REDIRECT);
	len = query(in, false, 40000, PORT);
	in[DV_NF_ETH_LEN + 10] ^= 0xff; /* the IPv4 header checksum */
	assert_int_equal(verdict(in, len), XDP_REDIRECT);
	len = query(in, false, 40000, PORT);
	in[DV_NF_ETH_LEN] = 0x65; /* version 6, IHL 5 */
	assert_int_equal(verdict(in, len), XDP_REDIRECT);
}

/* A queue without a socket: the redirect's fallback, the kernel. */
static void test_queue_without_socket(void **state)
{
	uint8_t in[128];
	uint32_t key = 0, fd = (uint32_t)fx.s.fd;

	(void)state;
	assert_int_equal(bpf_map_delete_elem(fx.xsks_fd, &key), 0);
	assert_int_equal(verdict(in, query(in, false, 40000, PORT)), XDP_PASS);
	assert_int_equal(verdict(in, query(in, true, 40000, PORT)), XDP_PASS);
	assert_int_equal(bpf_map_update_elem(fx.xsks_fd, &key, &fd, BPF_ANY), 0);
	assert_int_equal(verdict(in, query(in, false, 40000, PORT)), XDP_REDIRECT);
}

/* Other ports: the neighbours, the port's bytes swapped, the port as the source only. */
static void test_other_ports(void **state)
{
	const uint16_t others[] = {PORT - 1, PORT + 1, (uint16_t)(PORT >> 8 | (PORT & 0xff) << 8),
	                           53, 0};
	uint8_t in[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		assert_int_equal(verdict(in, query(in, false, 40000, others[i])), XDP_PASS);
		assert_int_equal(verdict(in, query(in, true, 40000, others[i])), XDP_PASS);
		assert_int_equal(verdict(in, query(in, false, PORT, others[i])), XDP_PASS);
	}
}

/* Not UDP: TCP, ICMP, ICMPv6 (neighbour discovery), ARP, a VLAN tag (the program reads
 * no tags: a tagged query is the kernel's). The headers are a query's, the protocol
 * changed: only the protocol decides. */
static void test_not_udp(void **state)
{
	uint8_t in[128];
	size_t len;

	(void)state;
	len = query(in, false, 40000, PORT);
	in[DV_NF_ETH_LEN + 9] = 6; /* TCP */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[DV_NF_ETH_LEN + 9] = 1; /* ICMP */
	assert_int_equal(verdict(in, len), XDP_PASS);
	len = query(in, true, 40000, PORT);
	in[DV_NF_ETH_LEN + 6] = 6; /* TCP */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[DV_NF_ETH_LEN + 6] = 58; /* ICMPv6 */
	assert_int_equal(verdict(in, len), XDP_PASS);
	len = query(in, false, 40000, PORT);
	in[12] = 0x08, in[13] = 0x06; /* ARP */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[12] = 0x81, in[13] = 0x00; /* 802.1Q */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[12] = 0x86, in[13] = 0xdd; /* an IPv4 header said to be IPv6: its next header is */
	assert_int_equal(verdict(in, len), XDP_PASS); /* IPv4's flags octet (DF: 0x40) */
}

/* Cut short: a query's frame ending inside the IP or the UDP header goes to the kernel;
 * the UDP header whole is enough (an empty datagram: the socket's thread counts it
 * malformed). BPF_PROG_TEST_RUN refuses frames shorter than an Ethernet header, so the
 * shortest is the Ethernet header alone. */
static void test_cut_short(void **state)
{
	uint8_t in[128];
	size_t n, ip4 = DV_NF_ETH_LEN + DV_NF_IP4_LEN, ip6 = DV_NF_ETH_LEN + DV_NF_IP6_LEN;

	(void)state;
	query(in, false, 40000, PORT);
	for (n = DV_NF_ETH_LEN; n < ip4 + DV_NF_UDP_LEN; n++)
		assert_int_equal(verdict(in, n), XDP_PASS);
	assert_int_equal(verdict(in, ip4 + DV_NF_UDP_LEN), XDP_REDIRECT);
	query(in, true, 40000, PORT);
	for (n = DV_NF_ETH_LEN; n < ip6 + DV_NF_UDP_LEN; n++)
		assert_int_equal(verdict(in, n), XDP_PASS);
	assert_int_equal(verdict(in, ip6 + DV_NF_UDP_LEN), XDP_REDIRECT);
}

/* IPv4 fragments (more fragments, or an offset) are the kernel's to reassemble; DF and
 * the reserved bit do not make one. */
static void test_ipv4_fragments(void **state)
{
	uint8_t in[128];
	size_t len;

	(void)state;
	len = query(in, false, 40000, PORT);
	assert_int_equal(in[DV_NF_ETH_LEN + 6], 0x40); /* DF, as dv_nf_build sets it */
	in[DV_NF_ETH_LEN + 6] = 0x20;                  /* MF, offset 0: the first fragment */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[DV_NF_ETH_LEN + 6] = 0x00, in[DV_NF_ETH_LEN + 7] = 0x01; /* offset 8: the last */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[DV_NF_ETH_LEN + 6] = 0x1f, in[DV_NF_ETH_LEN + 7] = 0xff; /* the largest offset */
	assert_int_equal(verdict(in, len), XDP_PASS);
	in[DV_NF_ETH_LEN + 6] = 0x80, in[DV_NF_ETH_LEN + 7] = 0x00; /* the reserved bit */
	assert_int_equal(verdict(in, len), XDP_REDIRECT);
	in[DV_NF_ETH_LEN + 6] = 0x00; /* no flag at all */
	assert_int_equal(verdict(in, len), XDP_REDIRECT);
}

/* IPv4 options are stepped over (the UDP header after them, if it is in the frame); a
 * header length below 5 words is no header. */
static void test_ipv4_options(void **state)
{
	uint8_t in[160];
	size_t len;

	(void)state;
	len = ip4_options(in, query(in, false, 40000, PORT), 4);
	assert_int_equal(verdict(in, len), XDP_REDIRECT);
	len = ip4_options(in, query(in, false, 40000, PORT), 40); /* the most: IHL 15 */
	assert_int_equal(verdict(in, len), XDP_REDIRECT);
	/* the UDP header cut by the frame's end after the options */
	assert_int_equal(verdict(in, DV_NF_ETH_LEN + 60 + DV_NF_UDP_LEN - 1), XDP_PASS);
	/* IHL 15 in a query's frame without options: too short for 60 octets of header and
	 * a UDP header after them */
	len = query(in, false, 40000, PORT);
	in[DV_NF_ETH_LEN] = 0x4f;
	assert_int_equal(verdict(in, len), XDP_PASS);
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		len = query(in, false, 40000, PORT);
		in[DV_NF_ETH_LEN] = (uint8_t)(0x40 | ihl);
		assert_int_equal(verdict(in, len), XDP_PASS);
	}
}

/* IPv6 extension headers (hop-by-hop, routing, fragment, destination options) before UDP:
 * the program does not walk them, the kernel does. The 8 octets after the fixed header
 * are the extension's place; the test only changes the next header. */
static void test_ipv6_extensions(void **state)
{
	const uint8_t ext[] = {0, 43, 44, 60};
	uint8_t in[128];
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof(ext); i++) {
		len = query(in, true, 40000, PORT);
		in[DV_NF_ETH_LEN + 6] = ext[i];
		assert_int_equal(verdict(in, len), XDP_PASS);
	}
}

/* The stamp (conf's, --capacity) set or clear. */
static void set_stamp(bool on)
{
	struct dv_rxdp_conf c;
	uint32_t zero = 0;
	int fd = dv_xdp_prog_map(&fx.prog, "conf");

	assert_int_equal(bpf_map_lookup_elem(fd, &zero, &c), 0);
	c.stamp = on;
	assert_int_equal(bpf_map_update_elem(fd, &zero, &c, BPF_ANY), 0);
}

/* --capacity: a query to the port leaves with its arrival stamp before it (the magic set,
 * a stamp between two CLOCK_MONOTONIC reads around the run, the frame itself unchanged);
 * what goes to the kernel, without. */
static void stamped(bool v6)
{
	uint8_t in[128], out[256];
	size_t len = query(in, v6, 40000, PORT);
	struct dv_xdp_meta m;
	uint32_t olen;
	uint64_t t0, t1;

	set_stamp(true);
	t0 = dv_now_ns();
	assert_int_equal(dv_tf_run(fx.prog.prog_fd, in, len, out, sizeof(out), &olen),
	                 XDP_REDIRECT);
	t1 = dv_now_ns();
	assert_int_equal(olen, len + sizeof(m));
	memcpy(&m, out, sizeof(m));
	assert_int_equal(m.magic, DV_XDP_META_MAGIC);
	assert_int_equal(m.flags, 0);
	assert_true(m.rx_ns >= t0 && m.rx_ns <= t1);
	assert_memory_equal(out + sizeof(m), in, len);
	len = query(in, v6, 40000, PORT + 1);
	assert_int_equal(verdict(in, len), XDP_PASS); /* no metadata: the frame as it came */
	set_stamp(false);
	len = query(in, v6, 40000, PORT);
	assert_int_equal(verdict(in, len), XDP_REDIRECT); /* no stamp without --capacity */
}

static void test_stamp_ipv4(void **state)
{
	(void)state;
	stamped(false);
}

static void test_stamp_ipv6(void **state)
{
	(void)state;
	stamped(true);
}

/* The program keeps no counters: the socket's thread counts what it is handed, the
 * kernel what it passes on. Its maps are conf and xsks alone. */

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_ipv4),   cmocka_unit_test(test_query_ipv6),
	    cmocka_unit_test(test_any_payload),  cmocka_unit_test(test_queue_without_socket),
	    cmocka_unit_test(test_other_ports),  cmocka_unit_test(test_not_udp),
	    cmocka_unit_test(test_cut_short),    cmocka_unit_test(test_ipv4_fragments),
	    cmocka_unit_test(test_ipv4_options), cmocka_unit_test(test_ipv6_extensions),
	    cmocka_unit_test(test_stamp_ipv4),   cmocka_unit_test(test_stamp_ipv6),
	};

	if (geteuid() != 0) {
		printf("SKIP (lacks): running BPF programs and opening XDP sockets needs root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
