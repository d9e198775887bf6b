/* results_json: the whole study (metadata, configuration, passes) as one versioned JSON file. */
#ifndef DV_RESULTS_JSON_H
#define DV_RESULTS_JSON_H

#include <stddef.h>

#include "study/study.h"
#include "base/util.h"

/*
 * The schema is documented in doc/results-schema.md. DV_RESULTS_SCHEMA_VERSION
 * changes only when a reader of the previous version would misread a file;
 * added fields do not change it. Readers accept versions 1..DV_RESULTS_SCHEMA_VERSION.
 * Version 2 (issue 12): a pass may be over TCP, DoT or DoH, where "sent" counts
 * queries handed to a connection and latency includes its queueing; a version-1
 * reader would take such a pass for UDP and compare it with UDP baselines.
 * Version 3 (issue 27): on the sampled wire clock a pass's latency histograms count the
 * sampled answers (counters.wire_timed), not every completed one; a version-2 reader
 * refuses that as a corrupt file ("latency count differs from completed").
 */
#define DV_RESULTS_SCHEMA_NAME    "dnsvolley-results"
#define DV_RESULTS_SCHEMA_VERSION 3

/*
 * Write study s (everything measured so far, also for a failed or interrupted
 * study) to PATH ("-" = stdout) atomically (atomicfile.h), indented with one
 * key per line. Returns 0 or a negative errno with err filled ("FILE: why").
 */
int dv_results_write_json(const dv_study_t *s, const char *path, dv_err_t *err);

/* The same document as a malloc'ed NUL-terminated string (tests). NULL on error. */
char *dv_results_dump_json(const dv_study_t *s, dv_err_t *err);

/*
 * Limits of the reader, so that a small hostile file cannot make report or compare use
 * gigabytes (each pass costs ~75 KB in memory whatever its size in the file, each JSON value
 * ~80 B while parsed): larger files are refused with a message naming the limit, the bytes
 * and the values before parsing. Reading takes at most about 1.5 GB. The run refuses a plan
 * of more than DV_RESULTS_MAX_PASSES passes.
 */
#define DV_RESULTS_MAX_BYTES     (256ULL << 20) /* file size */
#define DV_RESULTS_MAX_PASSES    10000          /* "passes" entries */
#define DV_RESULTS_MAX_INTERVALS 500000         /* interval snapshots, all passes together */
#define DV_RESULTS_MAX_LAT_CELLS 1000000  /* interval histograms: 1 per bucket + 2 per interval */
#define DV_RESULTS_MAX_VALUES    10000000 /* JSON values (~80 B of memory each when parsed) */

/*
 * Read a results file back into s (zeroed first; free with dv_study_free). The
 * passes are rebuilt exactly as written (counters, histogram, intervals); lists
 * are not compiled (ql stays empty). Any malformed, inconsistent or unsupported
 * file is rejected with -EINVAL (or an I/O errno) and err = "FILE: what is wrong";
 * s is then left freed and zeroed.
 */
int dv_results_read_json(const char *path, dv_study_t *s, dv_err_t *err);
/*
 * Replace every string of s read from a file (labels, addresses, paths, versions, host,
 * command line, failure message) with its dv_term_escape form, so that printing it cannot
 * drive the terminal (ESC, BEL, CR, C1 controls become visible \xHH / \uHHHH). For
 * report and compare, which print what a file says; not for plot (it escapes for HTML
 * and gnuplot itself). Returns 0 or -ENOMEM.
 */
int dv_results_escape_terminal(dv_study_t *s);

/* The same from memory; name is used in messages (tests, fuzzing). */
int dv_results_read_buffer(const char *buf, size_t len, const char *name, dv_study_t *s,
                           dv_err_t *err);

#endif
