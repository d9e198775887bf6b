/* xdp_udp.bpf.h: for the XDP programs (compiled with clang -target bpf): the UDP header of a
 * frame. */
#ifndef DV_XDP_UDP_BPF_H
#define DV_XDP_UDP_BPF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/*
 * The UDP header of an Ethernet frame data..end carrying UDP over IPv4 (options allowed) or
 * IPv6, whole within the frame; NULL for anything else: other protocols, IPv4 fragments
 * (the kernel reassembles them), IPv6 extension headers, frames cut short. The programs
 * pass those to the kernel.
 */
static __always_inline struct udphdr *dv_xdp_udp(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct udphdr *udp;

	if ((void *)(eth + 1) > end)
		return NULL;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5 ||
		    (ip->frag_off & bpf_htons(0x3fff)) != 0)
			return NULL;
		udp = (void *)ip + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return NULL;
		udp = (void *)(ip6 + 1);
	} else {
		return NULL;
	}
	if ((void *)(udp + 1) > end)
		return NULL;
	return udp;
}

#endif
