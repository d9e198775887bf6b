/* input_types: what the input readers share: the kind, the load options, the stats of a load. */
#ifndef DV_INPUT_TYPES_H
#define DV_INPUT_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "input/querylist.h"

typedef enum dv_input_kind {
	DV_INPUT_AUTO = 0, /* detect by magic: pcap, pcapng, Frame Streams dnstap, else text */
	DV_INPUT_TEXT,     /* dnsperf query list (querylist.h) */
	DV_INPUT_BINARY,   /* dnsperf -B: 2-octet big-endian length + wire message, repeated */
	DV_INPUT_PCAP,     /* pcap or pcapng (libpcap decides which) */
	DV_INPUT_DNSTAP,   /* Frame Streams file of protobuf:dnstap.Dnstap */
	DV_INPUT_UPDATE,   /* dnsperf -u: blocks of dynamic updates (update.h); never detected */
} dv_input_kind_t;

typedef enum dv_dnstap_want {
	DV_DNSTAP_CLIENT_QUERY = 0, /* queries a resolver or server received from clients */
	DV_DNSTAP_AUTH_QUERY,       /* queries an authoritative server received */
} dv_dnstap_want_t;

typedef struct dv_input_options {
	dv_querylist_options_t ql; /* text lists only: captured queries are kept as captured */
	bool strict; /* the first malformed record stops the load (-EINVAL); -B is strict unless
	              * ql.skip_bad, as a text list */
	/* pcap: the server the queries went to. */
	uint16_t server_port; /* destination port (default 53 when 0) */
	int server_family;    /* AF_INET / AF_INET6 to also match the address, 0 = any */
	uint8_t server_addr[16];
	/*
	 * pcap and dnstap: a client is the source address + port by default (a
	 * stub resolver or a forwarder's socket is one client; each TCP
	 * connection is one); with client_addr_only the address alone.
	 */
	bool client_addr_only;
	dv_dnstap_want_t dnstap_want;
} dv_input_options_t;

#define DV_INPUT_BAD_KEPT 8 /* malformed records whose position and reason are kept */

typedef struct dv_input_bad {
	uint64_t pos;  /* packet, frame or record (-B) number, from 1 */
	char what[96]; /* why, e.g. "TCP segment out of order (gap of 120 octets)" */
} dv_input_bad_t;

typedef struct dv_input_stats {
	dv_input_kind_t kind;  /* the kind read (detected or named) */
	const char *pos_unit;  /* "packet", "frame", "record" (-B) or "line" */
	uint64_t records;      /* packets, frames, messages or lines read */
	uint64_t queries;      /* queries kept (= ql->count) */
	uint64_t ignored;      /* well-formed but not for us: other ports, non-DNS, other dnstap
	                        * types, TCP retransmissions, control frames */
	uint64_t malformed;    /* records that should have held a query and did not */
	uint64_t ts_backwards; /* queries captured earlier than the one before them */
	uint64_t tcp_flows;    /* TCP connections seen (pcap) */
	dv_input_bad_t bad[DV_INPUT_BAD_KEPT]; /* the first malformed records */
	unsigned bad_kept;
} dv_input_stats_t;

#endif
