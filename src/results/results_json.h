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
 */
#define DV_RESULTS_SCHEMA_NAME    "dnsvolley-results"
#define DV_RESULTS_SCHEMA_VERSION 1

/*
 * Write study s (everything measured so far, also for a failed or interrupted
 * study) to PATH ("-" = stdout) atomically (atomicfile.h), indented with one
 * key per line. Returns 0 or a negative errno with err filled ("FILE: why").
 */
int dv_results_write_json(const dv_study_t *s, const char *path, dv_err_t *err);

/* The same document as a malloc'ed NUL-terminated string (tests). NULL on error. */
char *dv_results_dump_json(const dv_study_t *s, dv_err_t *err);

/*
 * Read a results file back into s (zeroed first; free with dv_study_free). The
 * passes are rebuilt exactly as written (counters, histogram, intervals); lists
 * are not compiled (ql stays empty). Any malformed, inconsistent or unsupported
 * file is rejected with -EINVAL (or an I/O errno) and err = "FILE: what is wrong";
 * s is then left freed and zeroed.
 */
int dv_results_read_json(const char *path, dv_study_t *s, dv_err_t *err);
/* The same from memory; name is used in messages (tests, fuzzing). */
int dv_results_read_buffer(const char *buf, size_t len, const char *name, dv_study_t *s,
                           dv_err_t *err);

#endif
