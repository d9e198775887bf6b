/* input: load any query input (text, dnsperf -B, pcap/pcapng, dnstap) into one compiled list. */
#ifndef DV_INPUT_H
#define DV_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "input/input_types.h"
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
 * that fits the message, at most DV_QUERYLIST_WIRE_MAX octets. Anything else read
 * where a query was expected is malformed: counted in dv_input_stats_t with its
 * position, skipped, fatal only with strict.
 */

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

/* Defaults: dv_querylist_options_init, port 53, any address, source address + port, CLIENT_QUERY.
 */
void dv_input_options_init(dv_input_options_t *o);

/*
 * Parse "ADDR", "ADDR#PORT", "[V6]:PORT" or "V4:PORT" into the server filter.
 * -EINVAL with err.
 */
int dv_input_set_server(dv_input_options_t *o, const char *spec, dv_err_t *err);

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
