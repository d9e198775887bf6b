/* xdp_steer.bpf: dnsvolley's XDP program: UDP to our source ports into the worker's XDP socket. */
/*
 * Compiled with clang -target bpf at build time (mk/xdp.mk) and embedded in the
 * program (engine/xdp.c loads it from memory). Every UDP datagram over IPv4 or IPv6
 * whose destination port is marked in `ports` (the source ports dnsvolley's workers
 * send from) goes to the XDP socket of the queue it arrived on (`xsks`, keyed by
 * receive queue); everything else, and anything on a queue without a socket, goes
 * on to the kernel (XDP_PASS), so the host keeps its other traffic.
 *
 * Each datagram steered carries its receive stamp in the frame's metadata (the octets
 * just before its data, struct dv_xdp_meta in base/xdp_meta.h): bpf_ktime_get_ns(),
 * CLOCK_MONOTONIC, the engine's clock, read as the program runs in the driver's receive
 * path. The kernel copies the metadata into the UMEM with the frame in copy mode too
 * (net/xdp/xsk.c, xsk_copy_xdp); a driver without room for metadata gets none, and the
 * datagram goes to the socket unstamped (xdp.c then takes the read time).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "base/xdp_udp.bpf.h"

#include "base/xdp_meta.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/* Our source ports: ports[p] = 1 when port p (host order) is one of ours. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} ports SEC(".maps");

SEC("xdp")
int dv_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct udphdr *udp;
	__u32 port;
	__u8 *mine;

	udp = dv_xdp_udp(data, end);
	if (udp == NULL)
		return XDP_PASS;
	port = bpf_ntohs(udp->dest);
	mine = bpf_map_lookup_elem(&ports, &port);
	if (mine == NULL || *mine == 0)
		return XDP_PASS;
	dv_xdp_meta_stamp(ctx); /* last: it voids the packet pointers above */
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
