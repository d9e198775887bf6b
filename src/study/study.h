/* study: the pass plan (repeats x targets x lists x cold/hot), flush hooks, readiness, and its
 * results. */
#ifndef DV_STUDY_H
#define DV_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "input/input_types.h"
#include "input/querylist.h"
#include "input/replay.h"
#include "engine/run.h"
#include "study/capacity.h"
#include "study/dist.h"
#include "base/util.h"

typedef enum dv_pass_kind {
	DV_PASS_PLAIN = 0, /* a single run with no cache semantics (no --passes given) */
	DV_PASS_COLD,      /* flush command, readiness probe, then the pass */
	DV_PASS_HOT,       /* right after, cache warm */
	DV_PASS_WARMUP,    /* run but not reported (--warmup) */
} dv_pass_kind_t;

const char *dv_pass_kind_name(dv_pass_kind_t k); /* "plain", "cold", "hot", "warmup" */

#define DV_HOT_TIME_DEFAULT_NS (2 * DV_NS_PER_S) /* a hot pass's length by default */
#define DV_HOT_TIME_MIN_NS     DV_NS_PER_S       /* --hot-time refuses shorter */
#define DV_PROBE_DEFAULT       "version.bind CH TXT"

typedef struct dv_target {
	char *label; /* "host1"; the address text when no label was given */
	char *spec;  /* ADDR[:PORT] as given */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char *addr_text;         /* "127.0.0.1:5300" */
	char *flush_cmd;         /* --flush LABEL=CMD, or the global --flush; NULL = none */
	char *after_pass_cmd;    /* --after-pass LABEL=CMD, or NULL (then the study's) */
	char *server_version;    /* version.bind CH TXT answer, NULL when none */
	struct dv_srvcost *cost; /* its server's cost state (engine/servercost.h; owned), NULL =
	                          * not looked at */
} dv_target_t;

typedef struct dv_list {
	char *label; /* "SOA"; the file's base name when no label was given */
	char *path;
	dv_querylist_t ql; /* compiled list (empty in a study read back from a file) */
	uint64_t queries;  /* number of queries */
	uint64_t lines;
	char sha256[65]; /* of the file's bytes, hex; "" for stdin */
	/* What src/input read (results files before issue 17 lack it: "" and 0). */
	char input[8];           /* "text", "binary", "pcap" or "dnstap" */
	uint64_t malformed;      /* records skipped as malformed (dv_input_stats_t) */
	dv_replay_info_t replay; /* clients, captured and scheduled rates (src/input/replay.h) */
} dv_list_t;

typedef struct dv_pass_record {
	size_t target;   /* index into study targets */
	size_t list;     /* index into study lists */
	unsigned repeat; /* 0-based */
	dv_pass_kind_t kind;
	double flush_s;                /* time the flush command took (cold) */
	double ready_wait_s;           /* time until the readiness probe was answered (cold) */
	unsigned probe_queries;        /* readiness probe queries sent before the pass (cold) */
	uint64_t names_asked;          /* list entries asked (dv_pass_names_asked) */
	dv_pass_result_t res;          /* merged over the ranks when several ran it; a capacity
	                                * search: the judged pass of its last passing step */
	dv_capacity_figure_t cap;      /* a capacity search's figure (cap.searched), else zero */
	dv_capacity_step_t *cap_steps; /* its steps in the order run (owned; not in results
	                                * files: NULL in a study read back) */
	size_t n_cap_steps;
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
	dv_querylist_options_t ql;
	dv_input_kind_t input_kind; /* --input / -B (DV_INPUT_AUTO: detected per list) */
	dv_replay_options_t replay; /* --timing, --speed, --multiply, --max-clients, rewrites */
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
	bool table_server;    /* --server-table: table cells add the server's us per answer */
	uint64_t ready_timeout_ns;
	/*
	 * Pass lengths (doc/methodology.md, "Cold means cold"): a cold pass is always one
	 * run through its list (each entry asked once), whatever run.time_limit_ns and
	 * run.passes say (the command line refuses -l/-n with --passes); a hot pass runs
	 * hot_runs times through the list, else for hot_time_ns (wrapping around the list).
	 */
	uint64_t hot_time_ns; /* --hot-time; DV_HOT_TIME_DEFAULT_NS unless --hot-runs */
	uint64_t hot_runs;    /* --hot-runs N; 0 = by time */
	/* The readiness probe (--probe 'NAME [TYPE [CLASS]]'), default "version.bind CH TXT". */
	char *probe_text;
	uint8_t probe_wire[300];
	size_t probe_len;          /* 0 = the default, built when the study runs */
	uint64_t flush_timeout_ns; /* --flush-timeout: --flush/--after-pass limit; 0: 600 s */
	/*
	 * dnsvolley capacity: each reported pass is a capacity search (capacity.h) with
	 * these options (borrowed); a cold one empties the cache before every step. NULL:
	 * ordinary passes. Not with several ranks.
	 */
	const dv_capacity_opts_t *capacity;
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
	/* A reported pass is about to start (after its flush): p holds target, list,
	 * repeat, kind and the flush times; p->res is zeroed. */
	void (*pass_start)(void *ctx, const dv_study_t *s, const dv_pass_record_t *p);
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

/*
 * --probe TEXT: "NAME [TYPE] [CLASS]" (TYPE A, CLASS IN by default; either order) compiled into
 * s->probe_wire with RD as rd. 0, or -EINVAL with err naming what is wrong.
 */
int dv_study_set_probe(dv_study_t *s, const char *text, bool rd, dv_err_t *err);

/*
 * List entries a pass asked: min(sent, list_size). Exact for a cold pass (one run
 * through the list: each entry is sent at most once) and for one thread; for a
 * time-limited pass over several threads an upper bound (doc/methodology.md).
 */
uint64_t dv_pass_names_asked(const dv_pass_record_t *p, uint64_t list_size);

/*
 * What a pass's qps is (doc/methodology.md, "What a pass can measure"): a
 * measured throughput, or not. A pass shorter than DV_QPS_MIN_RUN_S, or that
 * sent fewer than DV_QPS_MIN_WINDOWS windows (-q) of queries (filling and
 * draining the window dominate it), has no throughput figure; under -Q (or a
 * replayed schedule, or a capacity search) the rate was set, not measured.
 * Latency and loss are measured in every case.
 */
#define DV_QPS_MIN_RUN_S   0.5
#define DV_QPS_MIN_WINDOWS 10

typedef enum dv_qps_status {
	DV_QPS_MEASURED = 0,
	DV_QPS_OFFERED, /* -Q, --timing original or a capacity search set the rate */
	DV_QPS_SHORT,   /* run time under DV_QPS_MIN_RUN_S */
	DV_QPS_FILL,    /* fewer than DV_QPS_MIN_WINDOWS windows sent */
} dv_qps_status_t;

dv_qps_status_t dv_pass_qps_status(const dv_study_t *s, const dv_pass_record_t *p);
/* A short phrase for a table: "offered rate (-Q)", "too short", "window fill". */
const char *dv_qps_status_word(dv_qps_status_t st);

/*
 * The server's own cache counters (--server-stats, a kind that has them) contradict the
 * pass's kind: a cold pass the cache answered in part (hits), or a hot pass it did not
 * (misses). False when the counters were not read, or the pass was interrupted. The
 * study warns of such a pass, and its table cells are marked '!'.
 */
bool dv_pass_cache_contradicts(const dv_pass_record_t *p);

/* The run configuration of a pass of this kind (cold: one run; hot: --hot-*; else as given). */
dv_run_config_t dv_study_pass_config(const dv_study_t *s, dv_pass_kind_t kind);

/* Print the plan (targets with their flush commands, lists, pass lengths, probe, passes). */
void dv_study_print_plan(const dv_study_t *s, FILE *out);

void dv_study_free(dv_study_t *s);

/*
 * The name a report, a group, the CSV and dns-metrics give target i: its label, else its
 * spec; list i: its label, else its path. "?" for an index out of range or neither.
 */
const char *dv_study_target_label(const dv_study_t *s, size_t i);
const char *dv_study_list_label(const dv_study_t *s, size_t i);

#endif
