/* rx_stamp.bpf: the wire clock's receive stamps, for the sampled answers only (socket filter). */
/*
 * Compiled with clang -target bpf at build time (mk/xdp.mk) and embedded in the program
 * (engine/rxstamp.c loads it from memory and attaches it with SO_ATTACH_BPF to each of a
 * worker's UDP sockets). It runs for every datagram the socket receives, as the kernel
 * queues it (udp_queue_rcv_one_skb: skb->data at the UDP header, so the DNS ID is at
 * octet 8), and stamps it only when the worker armed the word of its DNS ID for this
 * socket (rxstamp_meta.h): bpf_ktime_get_ns(), CLOCK_MONOTONIC, the engine's clock.
 * The compare-and-swap makes the stamp and the worker's disarming race-free: a word the
 * worker cleared is never stamped afterwards.
 *
 * It always returns skb->len: a socket filter's return value is the length kept, and 0
 * would drop the datagram.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "engine/rxstamp_meta.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DV_RX_IDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} rx_stamps SEC(".maps");

SEC("socket")
int dv_rx_stamp(struct __sk_buff *skb)
{
	__u16 id_be;
	__u32 key;
	__u64 *word, armed;

	if (bpf_skb_load_bytes(skb, DV_RX_ID_OFFSET, &id_be, sizeof(id_be)) != 0)
		return skb->len; /* shorter than a DNS ID: nothing to stamp */
	key = bpf_ntohs(id_be);
	word = bpf_map_lookup_elem(&rx_stamps, &key);
	if (word == NULL)
		return skb->len;
	armed = *word;
	if ((armed & DV_RX_ARMED) != 0 &&
	    armed == (DV_RX_ARMED | DV_RX_COOKIE(bpf_get_socket_cookie(skb))))
		__sync_val_compare_and_swap(word, armed, bpf_ktime_get_ns());
	return skb->len;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
