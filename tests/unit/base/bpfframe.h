/* bpfframe: the frames the XDP program tests (test_xdp_reflect, test_xdp_steer, test_xdp_xsk)
 * build, and their BPF_PROG_TEST_RUN, one definition. */
#ifndef DV_TEST_BPFFRAME_H
#define DV_TEST_BPFFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netframe.h"

/* A query for www.example. A (29 octets), ID 0x1234, QR clear. */
extern const uint8_t dv_tf_query[29];

/* A client's flow to a server: MAC 02:00:00:00:00:01 to ...:02, 198.18.0.1 to 198.18.0.2
 * (v6: 2001:2::1 to 2001:2::2), UDP port sport to dport. */
void dv_tf_flow(dv_nf_flow_t *f, bool v6, uint16_t sport, uint16_t dport);

/* The frame of flow f carrying the plen octets at pl (headers and checksums by dv_nf_build)
 * written to buf; its length. */
size_t dv_tf_frame(uint8_t *buf, const dv_nf_flow_t *f, const void *pl, size_t plen);

/* Run the XDP program prog_fd once on in (len octets, 14 at least: the kernel refuses
 * less), asserting the run itself works; its verdict. out (cap octets) and *out_len: the
 * frame it leaves (from its metadata on, if it has any). */
int dv_tf_run(int prog_fd, const uint8_t *in, size_t len, uint8_t *out, uint32_t cap,
              uint32_t *out_len);

#endif
