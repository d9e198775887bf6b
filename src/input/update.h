/* update: dnsperf's -u input, blocks of dynamic update messages (RFC 2136) compiled once. */
#ifndef DV_UPDATE_H
#define DV_UPDATE_H

#include <stddef.h>

#include "base/util.h"
#include "input/querylist.h"

/*
 * Input: blocks of lines, one UPDATE message each, as dnsperf -u reads them:
 *
 *   example.com                       the zone (its SOA goes in the zone section)
 *   require a                         prerequisites first: name in use,
 *   require a A                       RRset exists,
 *   require a A 192.0.2.1             RRset exists with this value,
 *   prohibit x                        name not in use,
 *   prohibit x A                      RRset does not exist;
 *   add x 3600 A 192.0.2.7            then updates: add an RR (a TTL, a type, rdata),
 *   delete y                          delete every RRset of a name,
 *   delete y A                        delete an RRset,
 *   delete y A 192.0.2.9              delete one RR;
 *   send                              the end of the message.
 *
 * Keywords are case-insensitive; names relative to the zone unless they end in a dot;
 * rdata in zone-file syntax (relative names in it relative to the zone too); a TTL as a
 * number of seconds or with units (1h30m). Blank lines and lines starting with '#' or
 * ';' are skipped. Each message: ID 0, opcode UPDATE, no RD, ZOCOUNT 1, PRCOUNT and
 * UPCOUNT counted, uncompressed names, and the OPT RR of opts (-e, -D, -E) as a query
 * has it. The zone section is the "question" the engine matches answers on (qlen).
 *
 * Errors ("FILE:LINE: what"): an unknown keyword, a prerequisite after an update, a bad
 * name, TTL, type or rdata, a message over DV_QUERYLIST_WIRE_MAX octets, a block with no
 * "send" at the end of the input, an input with no message. opts->skip_bad skips a bad
 * block (to its "send") and counts it in ql->skipped.
 */
int dv_update_load_buffer(dv_querylist_t *ql, const char *buf, size_t len, const char *name,
                          const dv_querylist_options_t *opts, dv_err_t *err);

#endif
