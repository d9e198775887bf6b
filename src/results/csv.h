/* csv: the nightly history file: one row per reported pass, stable columns, header once. */
#ifndef DV_CSV_H
#define DV_CSV_H

#include <stddef.h>

#include "engine/stats.h"
#include "study/study.h"
#include "base/util.h"

/*
 * The columns, in order (documented in doc/nightly.md; never reorder or rename,
 * only append new ones at the end, which makes a new header version):
 *   version 1: date host tool_version target target_addr list repeat pass sent
 *     completed lost lost_pct not_sent late qps p50_ms p90_ms p99_ms p999_ms
 *     mean_ms max_ms stddev_ms run_time_s cpu_us_per_query interrupted
 *   version 2 adds: client_drops target_drops target_sockets
 *     icmp_port_unreachable wire_timed
 *   version 3 adds: transport conn_opened conn_failed conn_reset conn_closed
 *     tls_full tls_resumed connect_p50_ms connect_p99_ms handshake_p50_ms
 *     handshake_p99_ms queries_per_conn http_non200 capacity_qps capacity_verdict
 *     (the percentiles and queries_per_conn empty when the pass has no such
 *     figure, the capacity columns empty when it is no capacity search)
 *   version 4 adds: server_cpu_user_s server_cpu_sys_s server_us_per_answer
 *     server_csw_per_answer server_syscalls_per_answer server_rss_end_kb
 *     server_rss_peak_kb (empty when the server was not measured; the system
 *     calls also when they could not be counted; doc/numbers.md "Server")
 *   version 5 adds: server_user_us_per_answer server_sys_us_per_answer
 *     server_rss_start_kb server_shares_cpu (1 or 0) server_queries
 *     server_cache_hits server_cache_misses server_misses_per_query (the
 *     counters empty unless --server-stats read them at both edges, the cache
 *     ones also when the server has no cache counters)
 *   version 6 adds: conn_refused conn_timeouts conn_no_port conn_syn_retries
 *     conn_backoffs conn_idle_closed conn_lost (why connection attempts
 *     failed, how they were retried, how connections ended) untimed_no_tx
 *     untimed_no_rx untimed_order (the wire clock's sampled answers left
 *     untimed, by why)
 *   version 7 adds: unexpected malformed truncated icmp_errors conn_reopened
 *     conn_abandoned conn_proto_errors conn_recycled stream_errors http_4xx
 *     http_5xx tc_retried tc_completed tc_lost tc_not_sent tc_no_conn
 *     forfeited sent_behind server_holds tsig_unsigned tsig_badsig tsig_badkey
 *     tsig_badtime tsig_badmac tsig_other_error stamps_asked rx_stamps_unused
 *     xdp_stamped (every other counter that says what went wrong or how a
 *     figure is to be read)
 * They are listed once, in csv.c; the counter columns (sent completed lost
 * not_sent late, all of version 2's, version 3's conn_*, tls_* and
 * http_non200, all of version 6's and 7's) take their values from the DV_COUNTERS
 * entry with that csv name (engine/stats.h; one table: a counter's column is
 * named only there).
 */
#define DV_CSV_VERSION    7  /* the header a new file gets */
#define DV_CSV_V1_COLUMNS 25 /* columns of version 1 (before issue 10) */
#define DV_CSV_V2_COLUMNS 30 /* columns of version 2 (before issues 12 and 13) */
#define DV_CSV_V3_COLUMNS 45 /* columns of version 3 (before issue 23) */
#define DV_CSV_V4_COLUMNS 52 /* columns of version 4 (before the server's counters) */
#define DV_CSV_V5_COLUMNS 60 /* columns of version 5 (before the connection failure split) */
#define DV_CSV_V6_COLUMNS 70 /* columns of version 6 (before every other counter) */
/* Columns of the current version (DV_CSV_VERSION). */
extern const size_t dv_csv_ncolumns;
/* Columns of header version 1..DV_CSV_VERSION (a prefix of the current ones), else 0. */
size_t dv_csv_version_columns(unsigned version);

/*
 * Append one row per reported pass of s (warmup passes excluded) to path,
 * atomically (the old content is copied to a temporary file, rows added, then
 * renamed over path). The current header line is written only when the file
 * is new or empty. A file with an earlier version's header keeps it: its rows
 * are written in that version's layout (its first columns), so a nightly job
 * never stops over an upgrade. A file whose first line is no version's header
 * is refused with -EPROTO and err "FILE: ..." (exit status 2) and left
 * untouched. Other errors: a negative errno with err filled.
 */
int dv_csv_append(const dv_study_t *s, const char *path, dv_err_t *err);

/*
 * The header version of an existing history file (1..DV_CSV_VERSION), 0 when
 * it is missing or empty, -EPROTO (err filled) for another first line, or a
 * negative errno.
 */
int dv_csv_file_version(const char *path, dv_err_t *err);

/* The current header line, without its newline. */
const char *dv_csv_header(void);
/* The header line of version 1..DV_CSV_VERSION, or NULL. */
const char *dv_csv_header_version(unsigned version);

/*
 * A history file read back: rows of fields, each row has dv_csv_ncolumns
 * fields (the current layout, whatever the file's version; the columns a file
 * of an earlier version lacks are empty strings: not recorded).
 */
typedef struct dv_csv_table {
	char ***rows; /* rows[i][col], owned */
	size_t n;
	unsigned version; /* of the file's header */
} dv_csv_table_t;

/*
 * Read a history file written by dv_csv_append (RFC 4180 quoting), of any
 * header version; each row must have that version's columns. -EPROTO for a
 * bad header or row, with err "FILE:LINE: why".
 */
int dv_csv_read(const char *path, dv_csv_table_t *t, dv_err_t *err);
/* The same from memory (buf[0..len), no NUL needed); path is used in messages (fuzzing). */
int dv_csv_read_buffer(const char *buf, size_t len, const char *path, dv_csv_table_t *t,
                       dv_err_t *err);
/* The reader refuses larger history files (-EFBIG): memory stays bounded. */
#define DV_CSV_MAX_BYTES (256 << 20)
void dv_csv_table_free(dv_csv_table_t *t);
/*
 * Rewrite a history file of an earlier header version under the current header: every row
 * kept, field for field, with the columns its version lacked left empty (not recorded).
 * Atomic (a temporary file renamed over path; its permission bits kept): on any error path
 * is untouched. *from gets the file's version (DV_CSV_VERSION: nothing to do, the file is
 * not written) and *rows its rows. Only a regular file (-EINVAL otherwise: a FIFO or a
 * device is not a history to rewrite); -EPROTO for a first line that is no version's
 * header or a bad row (err "FILE:LINE: why"); other errors a negative errno, err filled.
 */
int dv_csv_upgrade(const char *path, unsigned *from, size_t *rows, dv_err_t *err);

/* Index of a column by name, or -1. */
int dv_csv_column(const char *name);
/* The DV_COUNTERS entry written in the column of this name, or NULL (a derived column). */
const dv_counter_field_t *dv_csv_counter(const char *name);

#endif
