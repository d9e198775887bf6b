/* connfig: the connection figures of stream passes (issue 12) for compare, gates, CSV, metrics,
 * plot. */
#ifndef DV_CONNFIG_H
#define DV_CONNFIG_H

#include <stdbool.h>

#include "study/groups.h"
#include "study/study.h"

/*
 * Per pass, from its counters and its connect / handshake histograms (doc/numbers.md,
 * "Connections"). A figure a pass does not have (no connection established, no TLS
 * handshake done) is NAN, never 0: a missing figure must not look like a fast one.
 */
typedef enum dv_conn_fig {
	DV_CF_CONNECT_P50_MS = 0, /* connect() to established, ms */
	DV_CF_CONNECT_P99_MS,
	DV_CF_HANDSHAKE_P50_MS, /* established to TLS handshake done, ms */
	DV_CF_HANDSHAKE_P99_MS,
	DV_CF_CONN_FAILED,      /* counters.conn_failed */
	DV_CF_CONN_RESET,       /* counters.conn_reset */
	DV_CF_RESUMED_PCT,      /* tls_resumed / (tls_full + tls_resumed) x 100 */
	DV_CF_QUERIES_PER_CONN, /* sent / conn_opened */
	DV_CF_COUNT
} dv_conn_fig_t;

/* "connect p99 ms", "conn failed", "resumed %"... for tables. */
const char *dv_conn_fig_label(dv_conn_fig_t f);
/* Figure f of one pass; NAN when the pass has no such figure (see above). */
double dv_conn_fig(const dv_pass_result_t *r, dv_conn_fig_t f);
/* Whether f is a latency (ms; resolution: the histogram's bucket width). */
bool dv_conn_fig_is_latency(dv_conn_fig_t f);
/* The resolution of f at v, the floor of dv_diff_welch: a latency's bucket width, else 0. */
double dv_conn_fig_floor(dv_conn_fig_t f, double v);

/* Whether the pass tried stream connections (opened, failed or abandoned any). */
bool dv_pass_has_conns(const dv_pass_result_t *r);
/* The study's transport: "udp", "tcp", "dot" or "doh" (run.stream and run.tp.kind). */
const char *dv_study_transport(const dv_study_t *s);
/* A stream transport, or a reported pass that tried connections (--tc-tcp). */
bool dv_study_has_conns(const dv_study_t *s);

/*
 * Figure f over g's samples that have it (NAN ones left out: n counts the others), as
 * dv_group_series does for the dv_metric_t figures; n 0 for a NULL group.
 */
dv_series_t dv_group_conn_series(const dv_group_t *g, dv_conn_fig_t f);

#endif
