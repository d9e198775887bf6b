/* netframe: Ethernet + IPv4/IPv6 + UDP headers for the AF_XDP paths: built, parsed, checksummed. */
#ifndef DV_NETFRAME_H
#define DV_NETFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DV_NF_ETH_LEN 14
#define DV_NF_IP4_LEN 20
#define DV_NF_IP6_LEN 40
#define DV_NF_UDP_LEN 8
#define DV_NF_HDR_MAX (DV_NF_ETH_LEN + DV_NF_IP6_LEN + DV_NF_UDP_LEN)

/* One direction of a UDP flow as it goes on the wire. Ports in host order. */
typedef struct dv_nf_flow {
	uint8_t src_mac[6], dst_mac[6];
	bool v6;                        /* IPv6, else IPv4 (the first 4 octets of the addresses) */
	uint8_t src_ip[16], dst_ip[16]; /* network order */
	uint16_t src_port, dst_port;
} dv_nf_flow_t;

/* Octets of the headers before the UDP payload: 42 (IPv4) or 62 (IPv6). */
static inline size_t dv_nf_header_len(bool v6)
{
	return DV_NF_ETH_LEN + (v6 ? DV_NF_IP6_LEN : DV_NF_IP4_LEN) + DV_NF_UDP_LEN;
}

/*
 * Write the headers of flow f into frame (dv_nf_header_len(f->v6) octets), for the
 * payload_len octets of UDP payload that already follow them: lengths, IPv4 header
 * checksum, UDP checksum (over the pseudo-header, header and payload; 0 becomes
 * 0xffff). IPv4: TTL 64, DF, ID 0; IPv6: hop limit 64. payload_len <= 65,507.
 */
void dv_nf_build(uint8_t *frame, const dv_nf_flow_t *f, size_t payload_len);

/*
 * Parse a received frame: Ethernet II, then IPv4 (options allowed, no fragment) or
 * IPv6 (UDP as the next header), then UDP. The IP and UDP lengths must fit in the
 * frame (Ethernet padding after them is allowed). The checksums are not checked: a
 * datagram sent by a kernel through a veth may carry only a partial one. Fills f
 * (src = the sender) and the payload; 0, or -EINVAL when it is not such a frame.
 */
int dv_nf_parse(const uint8_t *frame, size_t len, dv_nf_flow_t *f, const uint8_t **payload,
                size_t *payload_len);

/* The flow back to f's sender: addresses and ports swapped. */
void dv_nf_reverse(const dv_nf_flow_t *f, dv_nf_flow_t *back);

/* A parsed frame's IPv4 header checksum holds (true for IPv6, which has none). */
bool dv_nf_ip4_csum_ok(const uint8_t *frame, const dv_nf_flow_t *f);

/* The Internet checksum (RFC 1071) of len octets, folded and complemented. */
uint16_t dv_nf_checksum(const uint8_t *p, size_t len);

/* The UDP checksum a datagram of flow f with this UDP header and payload must carry (the
 * checksum field read as 0). udp: udp_len octets, header first. */
uint16_t dv_nf_udp_checksum(const dv_nf_flow_t *f, const uint8_t *udp, size_t udp_len);

#endif
