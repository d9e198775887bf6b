/* netframe: Ethernet + IPv4/IPv6 + UDP headers for the AF_XDP paths: built, parsed, checksummed. */
#include "config.h"

#include "base/netframe.h"

#include <errno.h>
#include <string.h>

#include "base/wire.h"

#define ETHERTYPE_IP4 0x0800
#define ETHERTYPE_IP6 0x86dd
#define PROTO_UDP     17
#define TTL           64

/* The 32-bit one's-complement sum of len octets (big-endian words; an odd last octet padded). */
static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += dv_wire_get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t dv_nf_checksum(const uint8_t *p, size_t len)
{
	return fold(sum16(p, len, 0));
}

uint16_t dv_nf_udp_checksum(const dv_nf_flow_t *f, const uint8_t *udp, size_t udp_len)
{
	size_t alen = f->v6 ? 16 : 4;
	uint32_t sum = 0;
	uint16_t c;

	sum = sum16(f->src_ip, alen, sum);
	sum = sum16(f->dst_ip, alen, sum);
	sum += PROTO_UDP;
	sum += (uint32_t)udp_len; /* IPv6: the 32-bit length, whose top half is 0 here */
	sum = sum16(udp, 6, sum); /* ports and length; the checksum field counts as 0 */
	sum = sum16(udp + DV_NF_UDP_LEN, udp_len - DV_NF_UDP_LEN, sum);
	c = fold(sum);
	return c == 0 ? 0xffff : c;
}

void dv_nf_build(uint8_t *frame, const dv_nf_flow_t *f, size_t payload_len)
{
	size_t udp_len = DV_NF_UDP_LEN + payload_len;
	uint8_t *ip = frame + DV_NF_ETH_LEN, *udp;

	memcpy(frame, f->dst_mac, 6);
	memcpy(frame + 6, f->src_mac, 6);
	dv_wire_set16(frame + 12, f->v6 ? ETHERTYPE_IP6 : ETHERTYPE_IP4);
	if (f->v6) {
		memset(ip, 0, 8);
		ip[0] = 0x60; /* version 6, traffic class and flow label 0 */
		dv_wire_set16(ip + 4, (uint16_t)udp_len);
		ip[6] = PROTO_UDP;
		ip[7] = TTL;
		memcpy(ip + 8, f->src_ip, 16);
		memcpy(ip + 24, f->dst_ip, 16);
		udp = ip + DV_NF_IP6_LEN;
	} else {
		ip[0] = 0x45; /* version 4, header of 5 words */
		ip[1] = 0;
		dv_wire_set16(ip + 2, (uint16_t)(DV_NF_IP4_LEN + udp_len));
		dv_wire_set16(ip + 4, 0);      /* ID: unused with DF */
		dv_wire_set16(ip + 6, 0x4000); /* DF, offset 0 */
		ip[8] = TTL;
		ip[9] = PROTO_UDP;
		dv_wire_set16(ip + 10, 0);
		memcpy(ip + 12, f->src_ip, 4);
		memcpy(ip + 16, f->dst_ip, 4);
		dv_wire_set16(ip + 10, dv_nf_checksum(ip, DV_NF_IP4_LEN));
		udp = ip + DV_NF_IP4_LEN;
	}
	dv_wire_set16(udp, f->src_port);
	dv_wire_set16(udp + 2, f->dst_port);
	dv_wire_set16(udp + 4, (uint16_t)udp_len);
	dv_wire_set16(udp + 6, 0);
	dv_wire_set16(udp + 6, dv_nf_udp_checksum(f, udp, udp_len));
}

int dv_nf_parse(const uint8_t *frame, size_t len, dv_nf_flow_t *f, const uint8_t **payload,
                size_t *payload_len)
{
	const uint8_t *ip = frame + DV_NF_ETH_LEN, *udp;
	size_t room, ulen;

	if (len < DV_NF_ETH_LEN)
		return -EINVAL;
	room = len - DV_NF_ETH_LEN;
	memcpy(f->dst_mac, frame, 6);
	memcpy(f->src_mac, frame + 6, 6);
	switch (dv_wire_get16(frame + 12)) {
	case ETHERTYPE_IP4: {
		size_t ihl, total;
		if (room < DV_NF_IP4_LEN || (ip[0] >> 4) != 4 || ip[9] != PROTO_UDP)
			return -EINVAL;
		ihl = (size_t)(ip[0] & 0x0f) * 4;
		total = dv_wire_get16(ip + 2);
		if (ihl < DV_NF_IP4_LEN || total < ihl + DV_NF_UDP_LEN || total > room ||
		    (dv_wire_get16(ip + 6) & 0x3fff) != 0) /* MF or an offset: a fragment */
			return -EINVAL;
		f->v6 = false;
		memset(f->src_ip, 0, sizeof(f->src_ip));
		memset(f->dst_ip, 0, sizeof(f->dst_ip));
		memcpy(f->src_ip, ip + 12, 4);
		memcpy(f->dst_ip, ip + 16, 4);
		udp = ip + ihl;
		room = total - ihl;
		break;
	}
	case ETHERTYPE_IP6: {
		size_t plen;
		if (room < DV_NF_IP6_LEN || (ip[0] >> 4) != 6 || ip[6] != PROTO_UDP)
			return -EINVAL;
		plen = dv_wire_get16(ip + 4);
		if (plen < DV_NF_UDP_LEN || plen > room - DV_NF_IP6_LEN)
			return -EINVAL;
		f->v6 = true;
		memcpy(f->src_ip, ip + 8, 16);
		memcpy(f->dst_ip, ip + 24, 16);
		udp = ip + DV_NF_IP6_LEN;
		room = plen;
		break;
	}
	default:
		return -EINVAL;
	}
	ulen = dv_wire_get16(udp + 4);
	if (ulen < DV_NF_UDP_LEN || ulen > room)
		return -EINVAL;
	f->src_port = dv_wire_get16(udp);
	f->dst_port = dv_wire_get16(udp + 2);
	*payload = udp + DV_NF_UDP_LEN;
	*payload_len = ulen - DV_NF_UDP_LEN;
	return 0;
}

void dv_nf_reverse(const dv_nf_flow_t *f, dv_nf_flow_t *back)
{
	back->v6 = f->v6;
	memcpy(back->src_mac, f->dst_mac, 6);
	memcpy(back->dst_mac, f->src_mac, 6);
	memcpy(back->src_ip, f->dst_ip, 16);
	memcpy(back->dst_ip, f->src_ip, 16);
	back->src_port = f->dst_port;
	back->dst_port = f->src_port;
}

bool dv_nf_ip4_csum_ok(const uint8_t *frame, const dv_nf_flow_t *f)
{
	const uint8_t *ip = frame + DV_NF_ETH_LEN;

	return f->v6 || dv_nf_checksum(ip, (size_t)(ip[0] & 0x0f) * 4) == 0;
}
