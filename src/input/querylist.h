/* querylist: read dnsperf-format query lists and compile them to wire format once. */
#ifndef DV_QUERYLIST_H
#define DV_QUERYLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"

/*
 * Input: one query per line, "NAME TYPE" or "NAME CLASS TYPE" / "NAME TYPE CLASS"
 * (class IN implied; an explicit class is accepted), '#' comments (whole line or
 * trailing), blank lines. Names are absolute or relative (relative = absolute),
 * with zone-file escapes (\DDD, \X; an escaped space or tab is part of the name). A
 * UTF-8 byte order mark at the start of the first line is skipped.
 * TYPE is any mnemonic ldns knows, or TYPEnnn (RFC 3597).
 *
 * Output: every query compiled to a complete DNS message with ID 0:
 *   header (RD set unless opts.rd is false, QDCOUNT 1, ARCOUNT 1 with EDNS),
 *   question, and an OPT RR when opts.edns is set.
 * All messages live in one arena; query i is arena[off[i] .. off[i + 1]).
 * The hot path only copies these bytes and writes the 2-byte ID.
 */

#define DV_QUERYLIST_EDNS_OPTS_MAX                                                                 \
	200 /* octets of EDNS options (-E), codes and lengths included                             \
	     */
/* Longest query any input may hold: the engine's send buffer (DV_MAX_QUERY_LEN). */
#define DV_QUERYLIST_WIRE_MAX 512

typedef struct dv_querylist_options {
	bool rd;               /* set RD (default true, as dnsperf does) */
	bool edns;             /* append an OPT RR */
	uint16_t edns_bufsize; /* OPT UDP payload size (default 1232 when 0) */
	bool dnssec_ok;        /* set DO in the OPT RR (implies edns) */
	bool skip_bad;         /* count and skip malformed lines instead of failing */
	uint8_t
	    edns_opts[DV_QUERYLIST_EDNS_OPTS_MAX]; /* EDNS options in wire form (implies edns) */
	uint16_t edns_opts_len;
} dv_querylist_options_t;

/* Defaults: rd = true, everything else off. */
void dv_querylist_options_init(dv_querylist_options_t *opts);

/*
 * Add an EDNS option from dnsperf's -E syntax, "CODE:HEXVALUE" (CODE decimal
 * 0-65535, HEXVALUE an even number of hex digits, may be empty: "10:" or "3:").
 * Sets edns. Returns 0 or -EINVAL / -ENOSPC with err filled.
 */
int dv_querylist_add_edns_option(dv_querylist_options_t *opts, const char *spec, dv_err_t *err);

/*
 * The OPT RR every query of a list built with opts ends with, into out (at least
 * DV_DNS_OPT_RR_LEN + DV_QUERYLIST_EDNS_OPTS_MAX octets): its length, 0 without EDNS.
 */
size_t dv_querylist_opt_rr(const dv_querylist_options_t *opts, uint8_t *out);

typedef struct dv_querylist {
	uint8_t *arena; /* wire bytes of all queries, back to back */
	size_t arena_len;
	uint32_t *off;    /* count + 1 offsets into arena */
	size_t count;     /* number of queries */
	size_t lines;     /* lines read, including comments and blanks */
	size_t skipped;   /* malformed lines skipped (only with skip_bad) */
	uint16_t opt_len; /* octets of the OPT RR every query ends with (0 without EDNS) */
	char *source;     /* file name as given, "-" for stdin (owned) */
	/*
	 * Captured inputs (src/input/input.h: -B, pcap, dnstap) keep each query as
	 * captured (its own EDNS, flags, ID zeroed), so the question length is
	 * stored per query; NULL for text lists, which all end with opt_len octets.
	 */
	uint16_t *qlen;   /* count question lengths (name + 4), or NULL (owned) */
	uint64_t *ts_ns;  /* count capture times, ns after the earliest query, or NULL (owned) */
	uint32_t *client; /* count client indexes 0..clients-1, or NULL (owned) */
	size_t clients;   /* distinct clients (0 without client) */
	/*
	 * Timed lists prepared for replay (src/input/replay.h): the schedule's
	 * length, capture span plus one mean gap; pass p is shifted by p * period_ns.
	 * 0 until dv_replay_prepare sets it.
	 */
	uint64_t period_ns;
	bool tsig; /* every query carries a TSIG RR (src/input/tsig.h): answers are checked */
	struct dv_tsig_key *tsig_key; /* the key that signed it, for the answers' MACs (owned) */
	uint64_t tsig_time_s;         /* the time it was signed at (TSIG's time signed) */
	int64_t tsig_skew_s; /* tests: seconds added to the clock of every later re-signing */
} dv_querylist_t;

/*
 * Load and compile a list from PATH ("-" = stdin). On error returns a negative
 * code and fills err with "FILE:LINE: what is wrong" (or "FILE: why" for I/O
 * errors and for an empty list). ql is left empty on error.
 */
int dv_querylist_load(dv_querylist_t *ql, const char *path, const dv_querylist_options_t *opts,
                      dv_err_t *err);
/* The same from an open stream; name is used in messages and kept as source. */
int dv_querylist_load_stream(dv_querylist_t *ql, FILE *in, const char *name,
                             const dv_querylist_options_t *opts, dv_err_t *err);
/* The same from memory (tests, fuzzing). */
int dv_querylist_load_buffer(dv_querylist_t *ql, const char *buf, size_t len, const char *name,
                             const dv_querylist_options_t *opts, dv_err_t *err);

/* Free everything; accepts NULL and an already freed/zeroed list. */
void dv_querylist_free(dv_querylist_t *ql);

/*
 * The per-query arrays of a list being rebuilt (dv_querylist_keep_every, replay's copies
 * in time order, TSIG's signed copy), allocated all or nothing and then adopted by the
 * list. One rule for the three: they were three copies of the same alloc/free/swap.
 */
typedef struct dv_ql_arrays {
	uint8_t *arena;
	size_t arena_len; /* octets used, set by the builder */
	uint32_t *off;    /* count + 1 */
	uint16_t *qlen;   /* count, or NULL */
	uint64_t *ts_ns;  /* count, or NULL */
	uint32_t *client; /* count, or NULL */
	size_t count;
} dv_ql_arrays_t;

/*
 * Arrays for n queries in arena_cap octets: arena and offsets always, question lengths,
 * capture times and client indexes where asked. 0, or -ENOMEM with nothing allocated.
 */
int dv_ql_arrays_alloc(dv_ql_arrays_t *a, size_t n, size_t arena_cap, bool qlen, bool ts,
                       bool client);
/* Frees what a holds; a is then empty. Accepts an empty a. */
void dv_ql_arrays_free(dv_ql_arrays_t *a);
/*
 * ql takes a's arena, offsets, count and the per-query arrays a holds, freeing its own;
 * an array a left NULL stays ql's own (only when a has ql's count: a signed copy keeps
 * the capture times). a is then empty.
 */
void dv_querylist_adopt(dv_querylist_t *ql, dv_ql_arrays_t *a);

/*
 * Keep entries first, first + step, ... of ql and drop the others, with every
 * per-entry array (offsets, question lengths, capture times, clients) kept in
 * step. Capture times and client indexes keep their values. 0, or -EINVAL (step
 * 0, or first past the end: nothing would be left), -ENOMEM (ql unchanged).
 */
int dv_querylist_keep_every(dv_querylist_t *ql, size_t first, size_t step);

static inline const uint8_t *dv_querylist_get(const dv_querylist_t *ql, size_t i, size_t *len)
{
	*len = ql->off[i + 1] - ql->off[i];
	return ql->arena + ql->off[i];
}

/* Octets of query i's question section (name, type, class), which starts at offset 12. */
static inline size_t dv_querylist_question_len(const dv_querylist_t *ql, size_t i)
{
	if (ql->qlen != NULL)
		return ql->qlen[i];
	return ql->off[i + 1] - ql->off[i] - 12 - ql->opt_len;
}

#endif
