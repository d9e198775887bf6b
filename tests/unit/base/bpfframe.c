/* bpfframe: the XDP program tests' frames and test runs (bpfframe.h). */
#include "config.h"

#include "bpfframe.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>
#include <bpf/bpf.h>

const uint8_t dv_tf_query[29] = {0x12, 0x34, 1,   0,   0,   1,   0, 0,   0,   0,
                                 0,    0,    3,   'w', 'w', 'w', 7, 'e', 'x', 'a',
                                 'm',  'p',  'l', 'e', 0,   0,   1, 0,   1};

void dv_tf_flow(dv_nf_flow_t *f, bool v6, uint16_t sport, uint16_t dport)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(f->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	f->v6 = v6;
	if (v6) {
		f->src_ip[0] = f->dst_ip[0] = 0x20;
		f->src_ip[1] = f->dst_ip[1] = 0x01;
		f->src_ip[3] = f->dst_ip[3] = 0x02;
		f->src_ip[15] = 1;
		f->dst_ip[15] = 2;
	} else {
		memcpy(f->src_ip, "\xc6\x12\x00\x01", 4);
		memcpy(f->dst_ip, "\xc6\x12\x00\x02", 4);
	}
	f->src_port = sport;
	f->dst_port = dport;
}

size_t dv_tf_frame(uint8_t *buf, const dv_nf_flow_t *f, const void *pl, size_t plen)
{
	size_t h = dv_nf_header_len(f->v6);

	memcpy(buf + h, pl, plen);
	dv_nf_build(buf, f, plen);
	return h + plen;
}

int dv_tf_run(int prog_fd, const uint8_t *in, size_t len, uint8_t *out, uint32_t cap,
              uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
	            .data_out = out, .data_size_out = cap, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &o), 0);
	*out_len = o.data_size_out;
	return (int)o.retval;
}
