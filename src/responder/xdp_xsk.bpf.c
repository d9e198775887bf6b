/* xdp_xsk.bpf: dnsvolley-responder --xdp: UDP to the responder's port into its XDP sockets. */
/*
 * Compiled with clang -target bpf at build time (mk/xdp.mk) and embedded in the
 * responder (responder/xsk.c loads it from memory). A UDP datagram over IPv4 (not a
 * fragment: those are the kernel's to reassemble) or IPv6 to the responder's port goes
 * to the XDP socket of the queue it came in on (map xsks, keyed by queue), whatever it
 * holds: the responder parses, counts (malformed ones too) and answers it. A queue with
 * no socket, and everything else (other ports, TCP, ARP, neighbour discovery), goes on
 * to the kernel (XDP_PASS), where the responder's UDP sockets answer what is theirs.
 * With conf's stamp set (--capacity), a datagram to the port carries its arrival time in
 * the frame's metadata (base/xdp_meta.h), as the sockets' carry the kernel's stamp.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "base/xdp_meta.h"
#include "base/xdp_udp.bpf.h"

#include "responder/xdp_conf.bpf.h"
#include "responder/xdp_counts.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, DV_RXSK_QUEUES_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp")
int dv_xsk(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct dv_rxdp_conf *cf;
	struct udphdr *udp;
	__u32 zero = 0;

	udp = dv_xdp_udp(data, end);
	if (udp == NULL)
		return XDP_PASS;
	cf = bpf_map_lookup_elem(&conf, &zero);
	if (cf == NULL || udp->dest != bpf_htons(cf->port))
		return XDP_PASS;
	if (cf->stamp)
		dv_xdp_meta_stamp(ctx); /* last: it voids the packet pointers above */
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
