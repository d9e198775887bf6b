/* test_xdp_steer: dnsvolley's steering program run on frames of our own (BPF_PROG_TEST_RUN):
 * a UDP datagram to one of our ports leaves with its receive stamp in the frame's metadata
 * (magic set, the stamp between two CLOCK_MONOTONIC reads around the run, the frame itself
 * unchanged); other ports, TCP and fragments go on to the kernel without one. Needs root
 * (CAP_BPF): else a skip. And the user side's reading of a stamp in a fake UMEM: taken
 * once, none in a frame without metadata or at its chunk's start. */
#include "config.h"

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
#include "base/xdpload.h"
#include "base/xsk.h"
#include "engine/xdp.h"
#include "base/xdp_meta.h"
#include "engine/xdp_steer_obj.h"
#include "../base/bpfframe.h"

#define OURS   40000
#define OTHERS 40001

/* An answer's payload: the DNS header alone is enough for the program (it reads no DNS). */
static const uint8_t answer[12] = {0x12, 0x34, 0x81, 0x80};

/* A frame from the server (port 53) to port dport; its length. */
static size_t frame(uint8_t *buf, bool v6, uint16_t dport)
{
	dv_nf_flow_t q, f;

	dv_tf_flow(&q, v6, dport, 53);
	dv_nf_reverse(&q, &f);
	return dv_tf_frame(buf, &f, answer, sizeof(answer));
}

/* Run the program, port OURS marked, on in (len octets): its verdict; out and *out_len
 * hold the frame from its metadata on (BPF_PROG_TEST_RUN gives data_meta..data_end). */
static int run(const uint8_t *in, size_t len, uint8_t *out, uint32_t *out_len)
{
	dv_xdp_prog_t p;
	dv_err_t err = {{0}};
	uint32_t key = OURS;
	uint8_t one = 1;
	int v;

	assert_int_equal(dv_xdp_prog_open(&p, xdp_steer_obj, sizeof(xdp_steer_obj), "dv_steer",
	                                  "lo", "--xdp", &err),
	                 0);
	assert_int_equal(bpf_map_update_elem(dv_xdp_prog_map(&p, "ports"), &key, &one, BPF_ANY), 0);
	v = dv_tf_run(p.prog_fd, in, len, out, 256, out_len);
	dv_xdp_prog_close(&p);
	return v;
}

/* To our port: the stamp before the frame, taken during the run; the frame as it was.
 * (No XDP socket in the map: the redirect falls back to XDP_PASS, stamp and all.) */
static void stamped(bool v6)
{
	uint8_t in[128], out[256];
	size_t len = frame(in, v6, OURS);
	struct dv_xdp_meta m;
	uint32_t olen;
	uint64_t t0, t1;

	t0 = dv_now_ns();
	assert_int_equal(run(in, len, out, &olen), XDP_PASS);
	t1 = dv_now_ns();
	assert_int_equal(olen, len + sizeof(m));
	memcpy(&m, out, sizeof(m));
	assert_int_equal(m.magic, DV_XDP_META_MAGIC);
	assert_int_equal(m.flags, 0);
	assert_true(m.rx_ns >= t0 && m.rx_ns <= t1); /* the engine's clock: CLOCK_MONOTONIC */
	assert_memory_equal(out + sizeof(m), in, len);
}

static void test_stamped_ipv4(void **state)
{
	(void)state;
	stamped(false);
}

static void test_stamped_ipv6(void **state)
{
	(void)state;
	stamped(true);
}

/* Not ours: another port, TCP, a fragment: passed on as they came, no metadata. */
static void test_not_ours(void **state)
{
	uint8_t in[128], out[256];
	uint32_t olen;
	size_t len;

	(void)state;
	len = frame(in, false, OTHERS);
	assert_int_equal(run(in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
	len = frame(in, true, OTHERS);
	assert_int_equal(run(in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
	len = frame(in, false, OURS);
	in[14 + 9] = 6; /* TCP */
	assert_int_equal(run(in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
	len = frame(in, false, OURS);
	in[14 + 6] |= 0x20; /* more fragments */
	assert_int_equal(run(in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
}

/* A fake UMEM of two 2,048-octet chunks: frame data 256 octets into the second. */
static void test_read_stamp(void **state)
{
	static uint8_t area[4096];
	struct dv_xdp_meta m = {.rx_ns = 123456789, .flags = 0, .magic = DV_XDP_META_MAGIC};
	uint64_t addr = 2048 + 256;

	(void)state;
	memcpy(area + addr - sizeof(m), &m, sizeof(m));
	assert_true(dv_xsk_rx_stamp(area, addr) == 123456789);
	assert_true(dv_xsk_rx_stamp(area, addr) == 0); /* taken: the next use has none */
	memset(area, 0xab, sizeof(area));              /* stale bytes, no magic */
	assert_true(dv_xsk_rx_stamp(area, addr) == 0);
	memcpy(area + 2048 - sizeof(m), &m, sizeof(m)); /* the first chunk's tail */
	assert_true(dv_xsk_rx_stamp(area, 2048) == 0);  /* not this frame's: not read */
	assert_true(dv_xsk_rx_stamp(area, 2048 + 8) == 0);
	memcpy(area + 2048, &m, sizeof(m)); /* the chunk's first 16 octets */
	assert_true(dv_xsk_rx_stamp(area, 2048 + sizeof(m)) == 123456789);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stamped_ipv4),
	    cmocka_unit_test(test_stamped_ipv6),
	    cmocka_unit_test(test_not_ours),
	};
	const struct CMUnitTest user[] = {
	    cmocka_unit_test(test_read_stamp),
	};

	if (cmocka_run_group_tests(user, NULL, NULL) != 0)
		return 1;
	if (geteuid() != 0) {
		printf("SKIP (lacks): running BPF programs needs root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
