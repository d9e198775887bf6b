/* replay: prepare a loaded list for replay: query rewrites, --multiply copies, time order, client
 * cap. */
#ifndef DV_REPLAY_H
#define DV_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "input/querylist.h"
#include "input/tsig.h"

typedef enum dv_timing {
	DV_TIMING_LIST = 0, /* order kept, times ignored (the rate comes from -Q and the window) */
	DV_TIMING_ORIGINAL, /* each query at its captured offset (ts_ns), scaled by speed */
} dv_timing_t;

#define DV_REPLAY_MAX_CLIENTS_DEFAULT 1000

typedef struct dv_replay_options {
	dv_timing_t timing;
	double speed;         /* --speed: offsets are divided by it (1 = as captured), > 0 */
	uint32_t multiply;    /* --multiply N: N rotated copies with disjoint clients (1 = off) */
	uint32_t max_clients; /* replayed clients at most: client c becomes c mod max_clients */
	bool strip_edns_options; /* every EDNS option dropped from the OPT RR (the OPT RR kept) */
	bool strip_ecs;          /* EDNS Client Subnet (option 8) dropped */
	bool force_rd;           /* RD set in every query */
	/* --capture-server ADDR[:PORT]: a capture's queries are those sent to this server
	 * (dv_input_set_server's syntax); NULL: to port 53, any address. Not owned. */
	const char *capture_server;
	/* -y: every query signed with this key before the clock (tsig.h) when tsig_on */
	bool tsig_on;
	dv_tsig_key_t tsig;
} dv_replay_options_t;

/* timing list, speed 1, multiply 1, max_clients DV_REPLAY_MAX_CLIENTS_DEFAULT, no rewrites. */
void dv_replay_options_init(dv_replay_options_t *o);

/* "list" or "original" -> timing; -EINVAL with err naming the flag. */
int dv_replay_timing_parse(const char *s, dv_timing_t *t, dv_err_t *err);
const char *dv_replay_timing_name(dv_timing_t t);

/* What a prepared list is, for the report and the results file. */
typedef struct dv_replay_info {
	bool timed;                /* the list carries capture times (a schedule) */
	double captured_qps;       /* (count - 1) / span of the capture as read; 0 when not timed */
	double schedule_qps;       /* of the prepared list: captured_qps * multiply * speed */
	uint64_t captured_clients; /* distinct clients read (0 when the input has none) */
	uint64_t clients;          /* replayed clients (after --multiply and the cap) */
	uint64_t per_client_min, per_client_median,
	    per_client_max; /* queries per replayed client */
	uint64_t rewritten; /* queries changed by the rewrites */
	/* Gaps between consecutive captured queries (in time order) longer than
	 * DV_REPLAY_MAX_GAP_NS: a capture clock that jumped (one packet stamped 1970 in a
	 * 2023 capture made a 54-year schedule). Each is cut to gap_kept_ns. */
	uint64_t gaps_cut;       /* how many */
	uint64_t longest_gap_ns; /* the longest of them, as captured */
	uint64_t gap_kept_ns;    /* what each became: the mean of the other gaps */
} dv_replay_info_t;

/* A gap in a capture longer than this (capture time, before --speed) is cut. */
#define DV_REPLAY_MAX_GAP_NS (3600ULL * 1000000000ULL)

/* ns as a person reads it: "850 us", "12.5 ms", "3.20 s", "42.0 min", "5.00 h", "12.0 days",
 * "53.9 years". */
void dv_replay_duration_text(uint64_t ns, char *buf, size_t size);

/*
 * Prepare ql in place (before the clock starts):
 *  1. rewrites: strip_edns_options / strip_ecs edit the OPT RR of the additional
 *     section (RDLENGTH adjusted), force_rd sets RD; a query whose sections
 *     cannot be walked is left as it is (never dropped);
 *  2. with multiply N > 1 (needs capture times): copy k (0..N-1) of every query
 *     is due at (ts + k * period / N) mod period, its client is c + k * C: the
 *     copies are rotations of the capture by k/N of its length, so the rate is
 *     N times the captured one all through the pass, and the clients are disjoint;
 *  3. a timed list is put in time order (stable), so each schedule is monotonic, and
 *     every gap longer than DV_REPLAY_MAX_GAP_NS is cut to the mean of the others
 *     (info->gaps_cut says how many; the caller says so);
 *  4. clients beyond max_clients are merged: client c replays as c mod max_clients.
 * ql->period_ns is set for timed lists: the span of the capture plus one mean
 * gap between queries (1 ms when that is 0); pass p of a -n run replays the
 * capture shifted by p * period_ns. --timing original or --multiply on a list
 * without times: -EINVAL with err. info (may be NULL) is filled.
 */
int dv_replay_prepare(dv_querylist_t *ql, const dv_replay_options_t *o, dv_replay_info_t *info,
                      dv_err_t *err);

/*
 * Rewrite one message in place (len updated): returns 1 changed, 0 unchanged,
 * -EINVAL when its sections cannot be walked (left unchanged). qlen is the
 * question's length (name + 4).
 */
int dv_replay_rewrite(uint8_t *msg, size_t *len, size_t qlen, const dv_replay_options_t *o);

#endif
