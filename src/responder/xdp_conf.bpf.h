/* xdp_conf.bpf.h: for the responder's XDP programs (compiled with clang -target bpf): their
 * settings map `conf`, one entry, written by responder/xdp.c and responder/xsk.c. Declared
 * here once, so that xdp_reflect.bpf.c and xdp_xsk.bpf.c read the same map. */
#ifndef DV_RESPONDER_XDP_CONF_BPF_H
#define DV_RESPONDER_XDP_CONF_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "responder/xdp_counts.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dv_rxdp_conf);
} conf SEC(".maps");

#endif
