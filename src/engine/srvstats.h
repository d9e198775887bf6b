/* srvstats: the server's own counters (unbound, Knot, NSD, PowerDNS Recursor and
 * Authoritative, BIND), read through its control tool at a pass's two edges. */
#ifndef DV_SRVSTATS_H
#define DV_SRVSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DV_SRVSTATS_TIMEOUT_MS 5000      /* a control tool's time at one edge */
#define DV_SRVSTATS_MAX_OUT    (4 << 20) /* bytes of its output read at most */
#define DV_SRVSTATS_MAX_ARGS   16        /* words of ARGS */

typedef enum dv_srvstats_kind {
	DV_SRVSTATS_UNBOUND,
	DV_SRVSTATS_KNOT,
	DV_SRVSTATS_NSD,
	DV_SRVSTATS_RECURSOR,
	DV_SRVSTATS_PDNS,
	DV_SRVSTATS_BIND,
	DV_SRVSTATS_KINDS
} dv_srvstats_kind_t;

/* One reading of the counters the figures come from (cumulative since the server started). */
typedef struct dv_srvstats_reading {
	uint64_t queries;      /* queries the server counted */
	uint64_t hits, misses; /* cache hits and misses (has_cache) */
	bool has_cache;        /* the kind has cache counters and they were there */
	unsigned counters;     /* counters the output held (a sanity figure: 0 = garbage) */
} dv_srvstats_reading_t;

/* --server-stats KIND[:ARGS] for one target (owned by its server-cost state). */
typedef struct dv_srvstats_cfg {
	dv_srvstats_kind_t kind;
	char *args[DV_SRVSTATS_MAX_ARGS]; /* ARGS split on blanks (owned) */
	size_t n_args;
	char *spec; /* the whole value, for messages (owned) */
} dv_srvstats_cfg_t;

const char *dv_srvstats_kind_name(dv_srvstats_kind_t k); /* "unbound", "knot", ... */
/* The control program a kind runs ("unbound-control"; "HTTP" for bind) (tests). */
const char *dv_srvstats_tool(dv_srvstats_kind_t k);

/* Parse "KIND[:ARGS]" (no label). 0, or -EINVAL with why filled. Free with _cfg_free. */
int dv_srvstats_cfg_parse(const char *spec, dv_srvstats_cfg_t *cfg, char *why, size_t why_len);
void dv_srvstats_cfg_free(dv_srvstats_cfg_t *cfg);

/*
 * Pure: the figures from a control tool's output (text, NUL-terminated). 0, or -EINVAL
 * with why filled when the output holds none of the counters the kind's figures need.
 */
int dv_srvstats_parse(dv_srvstats_kind_t k, const char *text, dv_srvstats_reading_t *r, char *why,
                      size_t why_len);

/*
 * One reading now: runs the kind's control tool (no shell; bounded in time and output) or,
 * for bind, fetches the statistics channel's JSON over HTTP. 0, or a negative errno with
 * why filled with one clear sentence ("unbound-control exited 1", "knotc: no such program").
 */
int dv_srvstats_read(const dv_srvstats_cfg_t *cfg, dv_srvstats_reading_t *r, char *why,
                     size_t why_len);

#endif
