/* study: the pass plan (repeats x targets x lists x cold/hot), flush hooks, readiness, and its
 * results. */
#ifndef DV_STUDY_H
#define DV_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "input/querylist.h"
#include "engine/run.h"
#include "study/dist.h"
#include "base/util.h"

typedef enum dv_pass_kind {
	DV_PASS_PLAIN = 0, /* a single run with no cache semantics (no --passes given) */
	DV_PASS_COLD,      /* flush command, readiness probe, then the pass */
	DV_PASS_HOT,       /* right after, cache warm */
	DV_PASS_WARMUP,    /* run but not reported (--warmup) */
} dv_pass_kind_t;

const char *dv_pass_kind_name(dv_pass_kind_t k); /* "plain", "cold", "hot", "warmup" */

typedef struct dv_target {
	char *label; /* "host1"; the address text when no label was given */
	char *spec;  /* ADDR[:PORT] as given */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char *addr_text;      /* "127.0.0.1:5300" */
	char *flush_cmd;      /* --flush LABEL=CMD, or the global --flush; NULL = none */
	char *server_version; /* version.bind CH TXT answer, NULL when none */
} dv_target_t;

typedef struct dv_list {
	char *label; /* "SOA"; the file's base name when no label was given */
	char *path;
	dv_querylist_t ql; /* compiled list (empty in a study read back from a file) */
	uint64_t queries;  /* number of queries */
	uint64_t lines;
	char sha256[65]; /* of the file's bytes, hex; "" for stdin */
} dv_list_t;

typedef struct dv_pass_record {
	size_t target;   /* index into study targets */
	size_t list;     /* index into study lists */
	unsigned repeat; /* 0-based */
	dv_pass_kind_t kind;
	double flush_s;        /* time the flush command took (cold) */
	double ready_wait_s;   /* time until the readiness probe was answered (cold) */
	dv_pass_result_t res;  /* merged over the ranks when several ran it */
	dv_rank_pass_t *ranks; /* per-rank facts (owned), NULL for a one-process pass */
	size_t n_ranks;
} dv_pass_record_t;

typedef struct dv_study {
	/* metadata */
	char *tool_version;
	char **argv;   /* the command line as given (NULL-ended copy), NULL when read from a file */
	char *cmdline; /* argv quoted for a shell (dv_argv_quote), or as a results file holds it */
	uint64_t start_wall_ns;
	char *hostname;
	char *kernel;
	unsigned ncpu;
	/* configuration */
	dv_run_config_t run;
	dv_ql_options_t ql;
	dv_target_t *targets;
	size_t n_targets;
	dv_list_t *lists;
	size_t n_lists;
	dv_pass_kind_t *plan; /* pass kinds per (repeat, target, list): e.g. cold, hot */
	size_t n_plan;
	unsigned repeat;
	bool warmup;
	bool query_version;   /* ask each target for version.bind CH TXT before the first pass */
	char *after_pass_cmd; /* --after-pass: shell command run after every pass, or NULL */
	uint64_t ready_timeout_ns;
	/* The ranks running the study (dist.h); NULL = this process alone. Rank 0 runs the
	 * flush, readiness and --after-pass commands and gets the merged results. */
	dv_dist_t *dist;
	/* results, in the order run */
	dv_pass_record_t *passes;
	size_t n_passes;
	bool interrupted;
	int failed; /* 0, or negative code: a flush failed or a target never got ready */
	char fail_msg[512];
} dv_study_t;

/*
 * Told about the study's progress; set by the caller (src/cmd/main.c prints
 * each pass with the text report). Any member may be NULL.
 */
typedef struct dv_study_observer {
	/* A reported (not warm-up) pass ended and is recorded: p is in s->passes. */
	void (*pass_done)(void *ctx, const dv_study_t *s, const dv_pass_record_t *p);
	/* Several ranks: this rank's own result of a reported pass, before the merge (every
	 * rank; p is temporary). */
	void (*own_pass)(void *ctx, const dv_study_t *s, const dv_pass_record_t *p);
	void *ctx; /* handed back to each call */
} dv_study_observer_t;

/*
 * Run the whole study described by s (targets, lists compiled, plan, repeat):
 * for each repeat, for each list, for each target (interleaved), the planned
 * passes in order. Prints the progress lines (pass headings, flush and
 * readiness, warm-ups) to out unless quiet, and tells obs (may be NULL) about
 * each reported pass as it ends. Returns 0, or a negative code with
 * s->failed/fail_msg set when a flush or a readiness probe failed; results
 * measured so far are kept in s->passes.
 */
int dv_study_run(dv_study_t *s, FILE *out, bool quiet, const dv_study_observer_t *obs);

void dv_study_free(dv_study_t *s);

#endif
