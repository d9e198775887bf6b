/* test_xdp_reflect: the responder's XDP program run on frames of our own (BPF_PROG_TEST_RUN):
 * IPv4 and IPv6 queries reflected with QR set and correct checksums, garbage answers cut to
 * the header, drops, and what it passes to the kernel. Needs root (CAP_BPF): else a skip. */
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
#include "responder/xdp.h"
#include "../base/bpfframe.h"

#define PORT 5300

static const uint8_t *const query = dv_tf_query;

static void flow(dv_nf_flow_t *f, bool v6)
{
	dv_tf_flow(f, v6, 40000, PORT);
}

/* Run the program (drop_every, garbage_every) on a query frame; the verdict, the output. */
static int run(bool v6, uint64_t drop, uint64_t garbage, uint8_t qr, uint8_t *out,
               uint32_t *out_len)
{
	uint8_t in[128], q[sizeof(dv_tf_query)];
	dv_rxdp_t *r = NULL;
	dv_err_t err = {{0}};
	dv_nf_flow_t f;
	size_t len;
	int v;

	flow(&f, v6);
	memcpy(q, dv_tf_query, sizeof(q));
	q[2] |= qr;
	len = dv_tf_frame(in, &f, q, sizeof(q));
	assert_int_equal(dv_rxdp_load(&r, "lo", PORT, drop, garbage, &err), 0);
	v = dv_tf_run(dv_rxdp_prog_fd(r), in, len, out, 128, out_len);
	dv_rxdp_close(r);
	return v;
}

/* The answer to flow(v6): addresses and ports turned around, QR set; its payload. */
static void check_answer(const uint8_t *out, uint32_t len, bool v6, size_t *plen,
                         const uint8_t **pl, dv_nf_flow_t *g)
{
	dv_nf_flow_t f;

	flow(&f, v6);
	assert_int_equal(dv_nf_parse(out, len, g, pl, plen), 0);
	assert_memory_equal(g->src_mac, f.dst_mac, 6);
	assert_memory_equal(g->dst_mac, f.src_mac, 6);
	assert_memory_equal(g->src_ip, f.dst_ip, 16);
	assert_memory_equal(g->dst_ip, f.src_ip, 16);
	assert_int_equal(g->src_port, PORT);
	assert_int_equal(g->dst_port, 40000);
	assert_int_equal((*pl)[2], query[2] | 0x80); /* QR */
}

static void test_reflect_ipv4(void **state)
{
	uint8_t out[128];
	uint32_t len;
	const uint8_t *pl;
	size_t plen;
	dv_nf_flow_t g;

	(void)state;
	assert_int_equal(run(false, 0, 0, 0, out, &len), XDP_TX);
	check_answer(out, len, false, &plen, &pl, &g);
	assert_int_equal(plen, sizeof(dv_tf_query));
	assert_memory_equal(pl + 3, query + 3, sizeof(dv_tf_query) - 3);
	assert_int_equal(dv_nf_checksum(out + 14, 20), 0); /* the IP header's still holds */
	assert_int_equal(out[40] | out[41], 0);            /* UDP checksum: none */
}

static void test_reflect_ipv6(void **state)
{
	uint8_t out[128];
	uint32_t len;
	const uint8_t *pl;
	size_t plen;
	dv_nf_flow_t g;

	(void)state;
	assert_int_equal(run(true, 0, 0, 0, out, &len), XDP_TX);
	check_answer(out, len, true, &plen, &pl, &g);
	assert_int_equal(plen, sizeof(dv_tf_query));
	/* the checksum updated for QR equals one computed whole */
	assert_int_equal(out[60] << 8 | out[61], dv_nf_udp_checksum(&g, out + 54, 8 + plen));
}

static void test_garbage(void **state)
{
	uint8_t out[128];
	uint32_t len;
	const uint8_t *pl;
	size_t plen;
	dv_nf_flow_t g;

	(void)state;
	assert_int_equal(run(false, 0, 1, 0, out, &len), XDP_TX);
	assert_int_equal(len, 42 + 12);
	check_answer(out, len, false, &plen, &pl, &g);
	assert_int_equal(plen, 12);
	assert_int_equal(dv_nf_checksum(out + 14, 20), 0);
	assert_int_equal(run(true, 0, 1, 0, out, &len), XDP_TX);
	assert_int_equal(len, 62 + 12);
	check_answer(out, len, true, &plen, &pl, &g);
	assert_int_equal(plen, 12);
	assert_int_equal(out[60] << 8 | out[61], dv_nf_udp_checksum(&g, out + 54, 8 + 12));
}

/* Dropped with --drop-every 1; an answer (QR set) goes on to the kernel. */
static void test_drop_and_pass(void **state)
{
	uint8_t out[128];
	uint32_t len;

	(void)state;
	assert_int_equal(run(false, 1, 0, 0, out, &len), XDP_DROP);
	assert_int_equal(run(true, 1, 0, 0, out, &len), XDP_DROP);
	assert_int_equal(run(false, 0, 0, 0x80, out, &len), XDP_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reflect_ipv4),
	    cmocka_unit_test(test_reflect_ipv6),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_drop_and_pass),
	};

	if (geteuid() != 0) {
		printf("SKIP (lacks): running BPF programs needs root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
