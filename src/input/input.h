/* input: load any query input (text list, dnsperf -B, pcap/pcapng, dnstap) into one compiled list.
 */
#ifndef DV_INPUT_H
#define DV_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "input/querylist.h"

/*
 * Every reader produces the dv_querylist_t of querylist.h (one wire arena and an
 * offset table, compiled before the clock starts); captured inputs add, per
 * query, the question length (qlen), and when the input has them a capture
 * time (ts_ns, ns after the earliest query) and a client index (client, dense
 * 0..clients-1 in order of first appearance). Captured queries are kept as
 * captured (flags, EDNS and its options) with the ID set to 0: the engine
 * writes the ID at send time as for text lists.
 *
 * What counts as a query: QR = 0, QDCOUNT = 1, an uncompressed question name
 * that fits the message, at most DV_QL_WIRE_MAX octets. Anything else read
 * where a query was expected is malformed: counted in dv_input_stats_t with its
 * position, skipped, fatal only with strict.
 */

typedef enum dv_input_kind {
	DV_INPUT_AUTO = 0, /* detect by magic: pcap, pcapng, Frame Streams dnstap, else text */
	DV_INPUT_TEXT,     /* dnsperf query list (querylist.h) */
	DV_INPUT_BINARY,   /* dnsperf -B: 2-octet big-endian length + wire message, repeated */
	DV_INPUT_PCAP,     /* pcap or pcapng (libpcap decides which) */
	DV_INPUT_DNSTAP,   /* Frame Streams file of protobuf:dnstap.Dnstap */
} dv_input_kind_t;

/* "text", "binary", "pcap", "dnstap" (what --input takes) -> kind; -EINVAL with err. */
int dv_input_kind_parse(const char *s, dv_input_kind_t *kind, dv_err_t *err);
/* "auto", "text", "binary", "pcap", "dnstap". */
const char *dv_input_kind_name(dv_input_kind_t kind);
/*
 * Kind of an input from its first octets (at least 64 when the file has them):
 * pcap (any of the four magics), pcapng (section header block), dnstap (a Frame
 * Streams START frame whose content type is "protobuf:dnstap.Dnstap"), else text.
 * -B files have no magic: they are never detected, name them.
 */
dv_input_kind_t dv_input_detect(const uint8_t *head, size_t len);

typedef enum dv_dnstap_want {
	DV_DNSTAP_CLIENT_QUERY = 0, /* queries a resolver or server received from clients */
	DV_DNSTAP_AUTH_QUERY,       /* queries an authoritative server received */
} dv_dnstap_want_t;

typedef struct dv_input_options {
	dv_ql_options_t ql; /* text lists only: captured queries are kept as captured */
	bool strict;        /* the first malformed record stops the load (-EINVAL) */
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

/* Defaults: dv_ql_options_init, port 53, any address, source address + port, CLIENT_QUERY. */
void dv_input_options_init(dv_input_options_t *o);

/*
 * Parse "ADDR", "ADDR#PORT", "[V6]:PORT" or "V4:PORT" into the server filter.
 * -EINVAL with err.
 */
int dv_input_set_server(dv_input_options_t *o, const char *spec, dv_err_t *err);

#define DV_INPUT_BAD_KEPT 8 /* malformed records whose position and reason are kept */

typedef struct dv_input_bad {
	uint64_t pos;  /* packet or frame number (from 1), or byte offset for -B */
	char what[96]; /* why, e.g. "TCP segment out of order (gap of 120 octets)" */
} dv_input_bad_t;

typedef struct dv_input_stats {
	dv_input_kind_t kind;  /* the kind read (detected or named) */
	const char *pos_unit;  /* "packet", "frame", "byte offset" or "line" */
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

/*
 * Load PATH ("-" = stdin) as KIND (DV_INPUT_AUTO detects it). st (may be NULL)
 * is filled in every case. Errors: -EINVAL (no queries, or a malformed record
 * with strict, or a text list error), -ENOENT and other I/O errors, -ENOMEM;
 * err says "FILE: what" (with the position for a malformed record). ql is left
 * empty on error.
 */
int dv_input_load(dv_querylist_t *ql, const char *path, dv_input_kind_t kind,
                  const dv_input_options_t *o, dv_input_stats_t *st, dv_err_t *err);
/* The same from memory (tests, fuzzing); name is used in messages. */
int dv_input_load_buffer(dv_querylist_t *ql, const uint8_t *buf, size_t len, const char *name,
                         dv_input_kind_t kind, const dv_input_options_t *o, dv_input_stats_t *st,
                         dv_err_t *err);

#endif
