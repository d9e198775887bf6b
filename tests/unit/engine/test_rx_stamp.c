/* test_rx_stamp: the receive-stamp socket filter (engine/rx_stamp.bpf.c) on real loopback
 * sockets, IPv4 and IPv6: a datagram whose DNS ID is armed for the receiving socket is
 * stamped (between two CLOCK_MONOTONIC reads around its send), once; an unarmed ID, an ID
 * armed for another socket and a datagram too short to hold an ID are not; every datagram
 * is delivered whole. Needs root (CAP_BPF): else a skip. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/util.h"
#include "engine/rxstamp.h"

typedef struct pair {
	int tx, rx, other; /* the server's socket; ours (filtered); another of ours */
	uint64_t cookie, other_cookie;
} pair_t;

static dv_rxstamp_t rs;

static int setup(void **state)
{
	int rc = dv_rxstamp_open(&rs);

	(void)state;
	if (rc != 0) {
		fprintf(stderr, "skip: cannot load the BPF socket filter (%s): needs root\n",
		        strerror(-rc));
		exit(77);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dv_rxstamp_close(&rs);
	return 0;
}

/* A bound loopback UDP socket of family af. */
static int bound(int af)
{
	struct sockaddr_storage a;
	int fd = socket(af, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.ss_family = (sa_family_t)af;
	if (af == AF_INET6)
		((struct sockaddr_in6 *)&a)->sin6_addr = in6addr_loopback;
	else
		((struct sockaddr_in *)&a)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(
	    bind(fd, (struct sockaddr *)&a,
	         af == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)),
	    0);
	return fd;
}

/* Connect a to b's address (both ways for the pair's tx and rx). */
static void link_to(int a, int b)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);

	assert_int_equal(getsockname(b, (struct sockaddr *)&addr, &len), 0);
	assert_int_equal(connect(a, (struct sockaddr *)&addr, len), 0);
}

static void pair_open(pair_t *p, int af)
{
	p->tx = bound(af);
	p->rx = bound(af);
	p->other = bound(af);
	link_to(p->tx, p->rx);
	link_to(p->rx, p->tx);
	link_to(p->other, p->tx);
	assert_int_equal(dv_rxstamp_attach(&rs, p->rx, &p->cookie), 0);
	assert_int_equal(dv_rxstamp_attach(&rs, p->other, &p->other_cookie), 0);
	assert_true(p->cookie != p->other_cookie);
}

static void pair_close(pair_t *p)
{
	close(p->tx);
	close(p->rx);
	close(p->other);
}

/* Send len octets (an answer with DNS ID id, padded) to rx and read it back: its full
 * length arrived. */
static void exchange(const pair_t *p, uint16_t id, size_t len)
{
	uint8_t out[64] = {0}, in[128];
	ssize_t n;

	out[0] = (uint8_t)(id >> 8);
	out[1] = (uint8_t)id;
	out[2] = 0x81;
	assert_true(len <= sizeof(out));
	assert_int_equal(send(p->tx, out, len, 0), (ssize_t)len);
	n = recv(p->rx, in, sizeof(in), 0);
	assert_int_equal(n, (ssize_t)len);
	assert_memory_equal(in, out, len);
}

static void armed_and_not(int af)
{
	pair_t p;
	uint64_t t0, t1, v;

	pair_open(&p, af);
	/* armed for this socket: stamped during the exchange */
	dv_rxstamp_arm(&rs, 0x1234, p.cookie);
	t0 = dv_now_ns();
	exchange(&p, 0x1234, 12);
	t1 = dv_now_ns();
	v = dv_rxstamp_peek(&rs, 0x1234);
	assert_true(dv_rxstamp_is_stamp(v));
	assert_true(v >= t0 && v <= t1); /* CLOCK_MONOTONIC, the engine's clock */
	/* the next datagram with that ID leaves the stamp as it was */
	exchange(&p, 0x1234, 40);
	assert_true(dv_rxstamp_peek(&rs, 0x1234) == v);
	dv_rxstamp_disarm(&rs, 0x1234);
	exchange(&p, 0x1234, 12);
	assert_true(dv_rxstamp_peek(&rs, 0x1234) == 0);
	/* never armed: left idle */
	exchange(&p, 0x4321, 12);
	assert_true(dv_rxstamp_peek(&rs, 0x4321) == 0);
	/* armed for another socket: not stamped here */
	dv_rxstamp_arm(&rs, 0x0001, p.other_cookie);
	exchange(&p, 0x0001, 12);
	assert_true(dv_rxstamp_peek(&rs, 0x0001) == (DV_RX_ARMED | DV_RX_COOKIE(p.other_cookie)));
	dv_rxstamp_disarm(&rs, 0x0001);
	/* the ID's two octets read in network order: 0xffff and 0x0100 */
	dv_rxstamp_arm(&rs, 0xffff, p.cookie);
	dv_rxstamp_arm(&rs, 0x0100, p.cookie);
	exchange(&p, 0x0100, 2);
	assert_true(dv_rxstamp_is_stamp(dv_rxstamp_peek(&rs, 0x0100)));
	assert_true(dv_rxstamp_peek(&rs, 0x0001) == 0);
	exchange(&p, 0xffff, 12);
	assert_true(dv_rxstamp_is_stamp(dv_rxstamp_peek(&rs, 0xffff)));
	dv_rxstamp_disarm(&rs, 0xffff);
	dv_rxstamp_disarm(&rs, 0x0100);
	pair_close(&p);
}

static void test_ipv4(void **state)
{
	(void)state;
	armed_and_not(AF_INET);
}

static void test_ipv6(void **state)
{
	(void)state;
	armed_and_not(AF_INET6);
}

/* Under 10 octets of UDP (no whole DNS ID): delivered whole, nothing stamped. A filter that
 * read past the one octet 0x00 would find an ID 0x00xx: all of those are armed. */
static void test_short(void **state)
{
	pair_t p;
	uint8_t in[16];
	unsigned i;

	(void)state;
	pair_open(&p, AF_INET);
	for (i = 0; i < 256; i++)
		dv_rxstamp_arm(&rs, (uint16_t)i, p.cookie);
	assert_int_equal(send(p.tx, "", 0, 0), 0);
	assert_int_equal(recv(p.rx, in, sizeof(in), 0), 0);
	assert_int_equal(send(p.tx, "\0", 1, 0), 1);
	assert_int_equal(recv(p.rx, in, sizeof(in), 0), 1);
	for (i = 0; i < 256; i++) {
		assert_false(dv_rxstamp_is_stamp(dv_rxstamp_peek(&rs, (uint16_t)i)));
		dv_rxstamp_disarm(&rs, (uint16_t)i);
	}
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ipv4),
	    cmocka_unit_test(test_ipv6),
	    cmocka_unit_test(test_short),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
