/* dns: DNS protocol constants (RFC 1035, 3596, 6891): layout, header flags, types, rcodes. */
#ifndef DV_DNS_H
#define DV_DNS_H

/* Sizes, in octets. */
#define DV_DNS_HEADER_LEN 12  /* the fixed header; the question starts right after it */
#define DV_DNS_NAME_MAX   255 /* a wire name, root label included */
#define DV_DNS_LABEL_MAX  63  /* one label's length octet: 0..63 */
#define DV_DNS_OPT_RR_LEN 11  /* an OPT RR without options: root, type, class, ttl, rdlength */

/* Header field offsets: ID 0, the two flag octets, the four 16-bit counts. */
#define DV_DNS_OFF_FLAGS1  2 /* QR, opcode, AA, TC, RD */
#define DV_DNS_OFF_FLAGS2  3 /* RA, Z, AD, CD, rcode */
#define DV_DNS_OFF_QDCOUNT 4
#define DV_DNS_OFF_ANCOUNT 6
#define DV_DNS_OFF_NSCOUNT 8
#define DV_DNS_OFF_ARCOUNT 10
/* Offsets in an OPT RR: its flags octet with DO (TTL's third octet) and RDLENGTH. */
#define DV_DNS_OPT_OFF_FLAGS 7
#define DV_DNS_OPT_OFF_RDLEN 9

/* A label-length octet with both top bits set starts a compression pointer (14-bit offset). */
#define DV_DNS_PTR 0xc0

/* Header octet 2: QR | OPCODE (4 bits) | AA | TC | RD. */
#define DV_DNS_QR           0x80
#define DV_DNS_OPCODE_MASK  0x78
#define DV_DNS_OPCODE_SHIFT 3
#define DV_DNS_AA           0x04
#define DV_DNS_TC           0x02
#define DV_DNS_RD           0x01
/* Opcodes (the header's 4-bit OPCODE field). */
#define DV_DNS_OPCODE_QUERY  0
#define DV_DNS_OPCODE_UPDATE 5 /* RFC 2136 */
/* Header octet 3: RA | Z | AD | CD | RCODE (low 4 bits). */
#define DV_DNS_RCODE_MASK 0x0f

/* EDNS (RFC 6891): the OPT RR's 16-bit flags (its TTL's low half); DO is the top bit. */
#define DV_DNS_EDNS_DO 0x8000
/* The OPT RR's UDP payload size a query or answer offers by default (DNS Flag Day 2020). */
#define DV_DNS_EDNS_UDP_DEFAULT 1232
/* EDNS option codes used here. */
#define DV_DNS_EDNS_OPT_ECS 8 /* Client Subnet (RFC 7871) */

/* Types and classes used here. */
#define DV_DNS_TYPE_A     1
#define DV_DNS_TYPE_SOA   6
#define DV_DNS_TYPE_AAAA  28
#define DV_DNS_TYPE_OPT   41
#define DV_DNS_CLASS_IN   1
#define DV_DNS_CLASS_NONE 254 /* RFC 2136: "RRset does not exist", "delete an RR" */
#define DV_DNS_CLASS_ANY  255

/* Response codes (4 bits in the header; EDNS extends them to 12 with the OPT TTL's top octet). */
#define DV_DNS_RCODE_NOERROR  0
#define DV_DNS_RCODE_FORMERR  1
#define DV_DNS_RCODE_SERVFAIL 2
#define DV_DNS_RCODE_NXDOMAIN 3
#define DV_DNS_RCODE_NOTIMP   4
#define DV_DNS_RCODE_REFUSED  5
#define DV_DNS_RCODE_YXDOMAIN 6
#define DV_DNS_RCODE_YXRRSET  7
#define DV_DNS_RCODE_NXRRSET  8
#define DV_DNS_RCODE_NOTAUTH  9
#define DV_DNS_RCODE_NOTZONE  10
#define DV_DNS_RCODE_BADVERS  16 /* extended: upper 8 bits (16 >> 4 = 1) go in the OPT RR */

#endif
