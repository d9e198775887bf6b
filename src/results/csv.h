/* csv: the nightly history file: one row per reported pass, stable columns, header once. */
#ifndef DV_CSV_H
#define DV_CSV_H

#include <stddef.h>

#include "engine/stats.h"
#include "study/study.h"
#include "base/util.h"

/*
 * The columns, in order (documented in doc/nightly.md; never reorder or rename,
 * only append new ones at the end, which makes a new header):
 *   date host tool_version target target_addr list repeat pass sent completed
 *   lost lost_pct not_sent late qps p50_ms p90_ms p99_ms p999_ms mean_ms max_ms
 *   stddev_ms run_time_s cpu_us_per_query interrupted
 * They are listed once, in csv.c; the counter columns (sent completed lost
 * not_sent late) take their values from the DV_COUNTERS entry with that csv
 * name (engine/stats.h).
 */
extern const size_t dv_csv_ncolumns;

/*
 * Append one row per reported pass of s (warmup passes excluded) to path,
 * atomically (the old content is copied to a temporary file, rows added, then
 * renamed over path). The header line is written only when the file is new or
 * empty. A file whose first line is not this header is refused with -EPROTO
 * and err "FILE: ..." (exit status 2) and left untouched. Other errors: a
 * negative errno with err filled.
 */
int dv_csv_append(const dv_study_t *s, const char *path, dv_err_t *err);

/* The header line, without its newline. */
const char *dv_csv_header(void);

/* A history file read back: rows of fields, each row has dv_csv_ncolumns fields. */
typedef struct dv_csv_table {
	char ***rows; /* rows[i][col], owned */
	size_t n;
} dv_csv_table_t;

/*
 * Read a history file written by dv_csv_append (RFC 4180 quoting). Checks the
 * header like dv_csv_append does; -EPROTO for a bad header or row, with err
 * "FILE:LINE: why".
 */
int dv_csv_read(const char *path, dv_csv_table_t *t, dv_err_t *err);
/* The same from memory (buf[0..len), no NUL needed); path is used in messages (fuzzing). */
int dv_csv_read_buffer(const char *buf, size_t len, const char *path, dv_csv_table_t *t,
                       dv_err_t *err);
/* The reader refuses larger history files (-EFBIG): memory stays bounded. */
#define DV_CSV_MAX_BYTES (256 << 20)
void dv_csv_table_free(dv_csv_table_t *t);
/* Index of a column by name, or -1. */
int dv_csv_column(const char *name);
/* The DV_COUNTERS entry written in the column of this name, or NULL (a derived column). */
const dv_counter_field_t *dv_csv_counter(const char *name);

#endif
