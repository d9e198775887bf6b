/* capbuild: the list builder the captured-input readers share (-B, pcap, dnstap); internal. */
#ifndef DV_CAPBUILD_H
#define DV_CAPBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input/input_types.h"

/* A client key: family (4 or 6, 0 = none), address (16 octets, v4 in the first 4), port. */
typedef struct dv_client_key {
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
} dv_client_key_t;

typedef struct dv_capbuild {
	uint8_t *arena;
	size_t arena_len, arena_cap;
	uint32_t *off;
	uint16_t *qlen;
	uint64_t *ts; /* absolute ns while building */
	uint32_t *client;
	size_t count, cap;
	bool has_ts, has_client;
	uint64_t last_ts;
	/* client table: open addressing, keys[] in index order, slots hold index + 1 */
	dv_client_key_t *keys;
	size_t nkeys, keys_cap;
	uint32_t *slots;
	size_t nslots; /* power of two */
	const dv_input_options_t *opts;
	dv_input_stats_t *st;
	const char *name;   /* for messages ("(stdin)" for "-") */
	const char *source; /* as given, kept in the list */
} dv_capbuild_t;

/* has_ts / has_client: whether this input carries them (fixed for the whole input). */
void dv_capbuild_init(dv_capbuild_t *b, const char *name, const dv_input_options_t *o,
                      dv_input_stats_t *st, bool has_ts, bool has_client);
void dv_capbuild_free(dv_capbuild_t *b);

/*
 * Record a malformed record at pos with a printf reason. Returns 0 to go on, or
 * -EINVAL with err filled when strict.
 */
int dv_capbuild_bad(dv_capbuild_t *b, uint64_t pos, dv_err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Add one captured message (checked as a query). ts (ns) and key are used when
 * the input has them (key may be NULL otherwise). Returns 1 added, 0 malformed
 * and skipped (counted via dv_capbuild_bad), negative to stop (err filled).
 */
int dv_capbuild_add(dv_capbuild_t *b, const uint8_t *msg, size_t len, uint64_t ts,
                    const dv_client_key_t *key, uint64_t pos, dv_err_t *err);

/* Move the result into ql (timestamps made relative to the earliest). -EINVAL if empty. */
int dv_capbuild_finish(dv_capbuild_t *b, dv_querylist_t *ql, dv_err_t *err);

/* Why msg is not a query we can send, or NULL if it is; *qlen set then. */
const char *dv_capbuild_check(const uint8_t *msg, size_t len, size_t *qlen);

/*
 * The readers: each walks one whole input in memory and feeds b (created with
 * the right has_ts / has_client), filling b->st. 0 or a negative code with err.
 */
int dv_read_binary(dv_capbuild_t *b, const uint8_t *buf, size_t len, dv_err_t *err);
int dv_read_dnstap(dv_capbuild_t *b, const uint8_t *buf, size_t len, dv_err_t *err);
/* pcap reads through libpcap from a stream it owns and closes (fmemopen or fopen). */
int dv_read_pcap(dv_capbuild_t *b, FILE *f, dv_err_t *err);

#endif
