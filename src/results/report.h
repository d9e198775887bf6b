/* report: the human-readable text report of one pass, laid out like dnsperf's. */
#ifndef DV_REPORT_H
#define DV_REPORT_H

#include <stdio.h>

#include "study/study.h"

/*
 * The statistics of one pass record of study s (target and list names are taken
 * from s), laid out like dnsperf's "Statistics:" block (doc/numbers.md), in two
 * halves: the head ("[Status] Sending queries", "Started at", the stop rule) and
 * the body (how the pass ended, "Statistics:"). The head may be
 * printed before the pass runs, with p holding only target, list, repeat, kind
 * and the flush times (res zeroed): then it shows the study's settings and the
 * time now.
 */
void dv_report_pass_head(FILE *out, const dv_study_t *s, const dv_pass_record_t *p);
void dv_report_pass_body(FILE *out, const dv_study_t *s, const dv_pass_record_t *p);

/*
 * What timed the pass's latency (doc/numbers.md "latency"): the "Latency clock" line, from
 * r->clock and the counters that go with it (the wire clock's sample, stamps_asked,
 * wire_timed; xdp_stamped), as the run printed it and as a results file rebuilds it ("not
 * recorded" for a file from before the clock was); then the "AF_XDP" line of an --xdp pass
 * and, when not 0, "Receive stamps unused" (rx_stamps_unused). stream: the pass ran over
 * connections (the app clock's reads are the connection's).
 */
void dv_report_clock(FILE *out, const dv_pass_result_t *r, bool stream);

/*
 * Stream transports: the "Connections" lines of a pass (opened, failed, ended, lost with
 * them, queries per connection, connect and TLS handshake time p50/p99, HTTP statuses;
 * doc/numbers.md, "Connections"), each starting with two spaces after a blank line.
 * Nothing when the pass tried no connection.
 */
void dv_report_connections(FILE *out, const dv_pass_result_t *r);

/*
 * The "Server" lines: what the server paid over the pass (its CPU, context switches and
 * system calls per answer, memory, CPUs), or why it was not measured; after a blank
 * line. Nothing when no server was looked at (report_server.c).
 */
void dv_report_server(FILE *out, const dv_pass_result_t *r);

/* dnsperf's -O latency-histogram: "Latency bucket (s): answer count", one line per
 * non-empty bucket (bounds in seconds, low inclusive, high exclusive). */
void dv_report_latency_histogram(FILE *out, const dv_hist_t *h);

#endif
