/* xdp_reflect.bpf: dnsvolley-responder --xdp: DNS queries over IPv4 answered in XDP (XDP_TX). */
/*
 * Compiled with clang -target bpf at build time (mk/xdp.mk) and embedded in the
 * responder (responder/xdp.c loads it from memory). A UDP datagram over IPv4 to the
 * responder's port that holds a DNS query (at least a header, QR clear) is reflected:
 * Ethernet and IP addresses and the ports swapped, QR set, sent back out of the
 * interface it came in on (XDP_TX): the --reflect answer, at the fastest point there
 * is. The IP header checksum is unchanged by the swap; the UDP checksum is set to 0
 * ("none", allowed over IPv4), since a query sent by the kernel through a veth may
 * carry only a partial one. Everything else goes on to the kernel (XDP_PASS), IPv6
 * included, where the responder's sockets answer it.
 *
 * Faults, on the receiving CPU's count n of queries (like the socket responder's
 * per-thread counts): n % drop_every == 0 is dropped (no answer), n % garbage_every
 * == 0 answered with the DNS header alone (a malformed answer: QDCOUNT 1, no
 * question). Exact counters per CPU in `counts` (DV_RXDP_* in responder/xdp.h).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "base/dns.h"
#include "responder/xdp_counts.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dv_rxdp_conf);
} conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DV_RXDP_NCOUNTS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline __u64 count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &which);

	if (c == NULL)
		return 0;
	return ++*c;
}

/* The IPv4 header checksum of a 20-octet header (garbage answers change its length). */
static __always_inline __u16 ip4_csum(struct iphdr *ip)
{
	__u16 *w = (__u16 *)ip;
	__u32 sum = 0;
	int i;

	ip->check = 0;
#pragma unroll
	for (i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("xdp")
int dv_reflect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u8 *dns = (__u8 *)(udp + 1), mac[ETH_ALEN];
	struct dv_rxdp_conf *cf;
	__u32 zero = 0, a;
	__u16 p;
	__u64 n;

	if ((void *)(dns + DV_DNS_HEADER_LEN) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_UDP || (ip->frag_off & bpf_htons(0x3fff)))
		return XDP_PASS;
	cf = bpf_map_lookup_elem(&conf, &zero);
	if (cf == NULL || udp->dest != bpf_htons(cf->port) || (dns[DV_DNS_OFF_FLAGS1] & DV_DNS_QR))
		return XDP_PASS;
	n = count(DV_RXDP_RECEIVED);
	if (cf->drop_every != 0 && n % cf->drop_every == 0) {
		count(DV_RXDP_DROPPED);
		return XDP_DROP;
	}
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	a = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = a;
	p = udp->source;
	udp->source = udp->dest;
	udp->dest = p;
	udp->check = 0;
	dns[DV_DNS_OFF_FLAGS1] |= DV_DNS_QR;
	if (cf->garbage_every != 0 && n % cf->garbage_every == 0) {
		int cut = (int)((long)end - (long)(dns + DV_DNS_HEADER_LEN));
		udp->len = bpf_htons(sizeof(*udp) + DV_DNS_HEADER_LEN);
		ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(*udp) + DV_DNS_HEADER_LEN);
		ip->check = ip4_csum(ip);
		if (cut > 0 && bpf_xdp_adjust_tail(ctx, -cut) != 0)
			return XDP_DROP; /* cannot happen: shrinking within the frame */
		count(DV_RXDP_GARBAGE);
		return XDP_TX;
	}
	count(DV_RXDP_ANSWERED);
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
