/* genlist: turn a list of domains into query lists (SOA per domain, A per www. name, ...). */
#ifndef DV_GENLIST_H
#define DV_GENLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"

/*
 * Input: one domain per line, '#' comments (whole line or trailing), blank
 * lines. Every domain is checked as a DNS name (ldns); a bad line stops the load
 * with "FILE:LINE: what is wrong" and -EINVAL.
 * Domains are kept as written (case, trailing dot) in one arena.
 */
typedef struct dv_domains {
	char *arena; /* NUL-terminated names back to back */
	size_t arena_len;
	size_t arena_cap;
	uint32_t *off;  /* count offsets into arena, in output order */
	uint32_t *line; /* the input line of each name, same order as off */
	size_t count;
	size_t cap;
	char *source; /* input name as given, "-" for stdin (owned) */
} dv_domains_t;

/* Load from an open stream; name is used in messages. d is left empty on error. */
int dv_domains_load_stream(dv_domains_t *d, FILE *in, const char *name, dv_err_t *err);
/* The same from memory (tests). */
int dv_domains_load_buffer(dv_domains_t *d, const char *buf, size_t len, const char *name,
                           dv_err_t *err);
/* Free everything; accepts NULL and a zeroed value. */
void dv_domains_free(dv_domains_t *d);

static inline const char *dv_domains_get(const dv_domains_t *d, size_t i)
{
	return d->arena + d->off[i];
}

/*
 * Drop repeated names, keeping the first. Names compare as DNS names: ASCII
 * case-insensitive, with or without the final dot, escapes decoded. Returns the
 * number removed, or -ENOMEM.
 */
long dv_domains_dedupe(dv_domains_t *d);

/* Reorder with Fisher-Yates driven by splitmix64(seed): the same seed, the same order. */
void dv_domains_shuffle(dv_domains_t *d, uint64_t seed);

/* One output list: "PREFIX<domain> TYPE" per domain, written to path ("-" = stdout). */
typedef struct dv_genlist_spec {
	char prefix[64]; /* "" or labels ending in '.', e.g. "www." */
	char type[24];   /* as the user wrote it, checked with ldns or TYPEnnn */
	char path[4096];
} dv_genlist_spec_t;

/*
 * Parse "TYPE[:PREFIX]=FILE" (the --type option), e.g. "MX=mx.txt" or
 * "A:www=www-a.txt". A prefix without a final '.' gets one. -EINVAL with err.
 */
int dv_genlist_spec_parse(dv_genlist_spec_t *spec, const char *arg, dv_err_t *err);
/* Fill spec directly (--soa and --www-a); the same checks. */
int dv_genlist_spec_set(dv_genlist_spec_t *spec, const char *type, const char *prefix,
                        const char *path, dv_err_t *err);

/*
 * Check that PREFIX + every domain is a valid name (length limits). On failure
 * returns -EINVAL with "SOURCE:LINE: ..." naming the domain's input line.
 */
int dv_genlist_check(const dv_domains_t *d, const dv_genlist_spec_t *spec, dv_err_t *err);

/* Write the list to out. Returns 0 or -errno of the failed write. */
int dv_genlist_write(FILE *out, const dv_domains_t *d, const dv_genlist_spec_t *spec);

/* splitmix64 step, exposed for tests: advances *state and returns the next value. */
uint64_t dv_splitmix64(uint64_t *state);

#endif
