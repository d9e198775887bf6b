/* xdp_reflect.bpf: dnsvolley-responder --xdp: DNS queries over UDP answered in XDP (XDP_TX). */
/*
 * Compiled with clang -target bpf at build time (mk/xdp.mk) and embedded in the
 * responder (responder/xdp.c loads it from memory). A UDP datagram over IPv4 or IPv6 to
 * the responder's port that holds a DNS query (at least a header, QR clear) is
 * reflected: Ethernet and IP addresses and the ports swapped, QR set, sent back out of
 * the interface it came in on (XDP_TX): the --reflect answer, at the fastest point there
 * is. The IPv4 header checksum is unchanged by the swap; over IPv4 the UDP checksum is
 * set to 0 ("none"), since a query sent by a kernel through a veth may carry only a
 * partial one; over IPv6, where it is mandatory, it is updated for the flags word
 * (RFC 1624), or computed whole for a garbage answer. Everything else goes on to the
 * kernel (XDP_PASS), where the responder's sockets answer it.
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
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "base/dns.h"
#include "responder/xdp_conf.bpf.h"
#include "responder/xdp_counts.h"

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

/* One's-complement sum folded to 16 bits. */
static __always_inline __u16 fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/*
 * The UDP checksum of an IPv6 garbage answer (UDP header and the 12-octet DNS header
 * alone), computed whole: the pseudo-header's addresses, length and next header, then
 * the UDP header (its checksum read as 0) and the DNS header. Words as they lie in the
 * frame: the sum is the same in either byte order.
 */
static __always_inline __u16 udp6_csum(struct ipv6hdr *ip6, struct udphdr *udp, __u16 *dns)
{
	__u16 *a = (__u16 *)&ip6->saddr, *u = (__u16 *)udp;
	__u32 sum = udp->len + bpf_htons(IPPROTO_UDP);
	__u16 c;
	int i;

#pragma unroll
	for (i = 0; i < 16; i++) /* saddr and daddr, one after the other */
		sum += a[i];
	sum += u[0] + u[1] + u[2];
#pragma unroll
	for (i = 0; i < DV_DNS_HEADER_LEN / 2; i++)
		sum += dns[i];
	c = (__u16)~fold(sum);
	return c == 0 ? 0xffff : c;
}

/* Swap the Ethernet addresses, the UDP ports, set QR. */
static __always_inline void turn_around(struct ethhdr *eth, struct udphdr *udp, __u8 *dns)
{
	__u8 mac[ETH_ALEN];
	__u16 p;

	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	p = udp->source;
	udp->source = udp->dest;
	udp->dest = p;
	dns[DV_DNS_OFF_FLAGS1] |= DV_DNS_QR;
}

/* Cut the frame after the DNS header (a garbage answer). 0, or -1 (cannot happen). */
static __always_inline int cut_after_header(struct xdp_md *ctx, __u8 *dns, void *end)
{
	int cut = (int)((long)end - (long)(dns + DV_DNS_HEADER_LEN));

	return cut > 0 && bpf_xdp_adjust_tail(ctx, -cut) != 0 ? -1 : 0;
}

SEC("xdp")
int dv_reflect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct udphdr *udp;
	struct dv_rxdp_conf *cf;
	struct in6_addr a6;
	__u32 zero = 0, a;
	__u16 old, garbage;
	__u8 *dns;
	__u64 n;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3fff)))
			return XDP_PASS;
		udp = (void *)(ip + 1);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		udp = (void *)(ip6 + 1);
	} else {
		return XDP_PASS;
	}
	dns = (__u8 *)(udp + 1);
	if ((void *)(dns + DV_DNS_HEADER_LEN) > end)
		return XDP_PASS;
	cf = bpf_map_lookup_elem(&conf, &zero);
	if (cf == NULL || udp->dest != bpf_htons(cf->port) || (dns[DV_DNS_OFF_FLAGS1] & DV_DNS_QR))
		return XDP_PASS;
	n = count(DV_RXDP_RECEIVED);
	if (cf->drop_every != 0 && n % cf->drop_every == 0) {
		count(DV_RXDP_DROPPED);
		return XDP_DROP;
	}
	garbage = cf->garbage_every != 0 && n % cf->garbage_every == 0;
	old = *(__u16 *)(dns + DV_DNS_OFF_FLAGS1);
	turn_around(eth, udp, dns);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
		udp->check = 0; /* none: the query's may have been partial */
		if (garbage) {
			udp->len = bpf_htons(sizeof(*udp) + DV_DNS_HEADER_LEN);
			ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(*udp) + DV_DNS_HEADER_LEN);
			ip->check = ip4_csum(ip);
		}
	} else {
		a6 = ip6->saddr;
		ip6->saddr = ip6->daddr;
		ip6->daddr = a6;
		if (garbage) {
			udp->len = bpf_htons(sizeof(*udp) + DV_DNS_HEADER_LEN);
			ip6->payload_len = udp->len;
			udp->check = 0;
			udp->check = udp6_csum(ip6, udp, (__u16 *)dns);
		} else { /* RFC 1624: only the flags word changed (the swaps keep the sum) */
			__u16 new = *(__u16 *)(dns + DV_DNS_OFF_FLAGS1);
			__u16 c = (__u16)~fold((__u16)~udp->check + (__u16)~old + new);
			udp->check = c == 0 ? 0xffff : c;
		}
	}
	if (garbage) {
		if (cut_after_header(ctx, dns, end) != 0)
			return XDP_DROP;
		count(DV_RXDP_GARBAGE);
		return XDP_TX;
	}
	count(DV_RXDP_ANSWERED);
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
