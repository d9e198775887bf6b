/* csv: nightly history rows (RFC 4180) from a column table, appended atomically; and the reader
 * that `plot` uses. */
#include "config.h"

#include "results/csv.h"

#include "base/atomicfile.h"
#include "results/connfig.h"
#include "study/groups.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* One row's sources. */
typedef struct row {
	const dv_study_t *s;
	const dv_pass_record_t *p;
} row_t;

/* A derived column's text (NULL = empty field), buf as scratch. */
typedef const char *(*col_text_fn)(const row_t *w, char *buf, size_t cap);

static const char *num(char *buf, size_t cap, const char *fmt, double v)
{
	snprintf(buf, cap, fmt, v);
	return buf;
}

static const char *num_u64(char *buf, size_t cap, uint64_t v)
{
	snprintf(buf, cap, "%" PRIu64, v);
	return buf;
}

static const char *col_date(const row_t *w, char *buf, size_t cap)
{
	uint64_t wall_ns = w->p->res.start_wall_ns ? w->p->res.start_wall_ns : w->s->start_wall_ns;
	time_t t = (time_t)(wall_ns / DV_NS_PER_S);
	struct tm tm;

	if (wall_ns == 0 || gmtime_r(&t, &tm) == NULL)
		snprintf(buf, cap, "1970-01-01T00:00:00Z");
	else
		strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static const dv_target_t *target_of(const row_t *w)
{
	return w->p->target < w->s->n_targets ? &w->s->targets[w->p->target] : NULL;
}

static const char *col_host(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return w->s->hostname;
}

static const char *col_tool_version(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return w->s->tool_version;
}

static const char *col_target(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return dv_study_target_label(w->s, w->p->target);
}

static const char *col_target_addr(const row_t *w, char *buf, size_t cap)
{
	const dv_target_t *t = target_of(w);
	(void)buf, (void)cap;
	return t ? t->addr_text : "";
}

static const char *col_list(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return dv_study_list_label(w->s, w->p->list);
}

static const char *col_repeat(const row_t *w, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u", w->p->repeat);
	return buf;
}

static const char *col_pass(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return dv_pass_kind_name(w->p->kind);
}

/* Columns that are a study/groups.h metric of the pass, in milliseconds or percent. */
#define METRIC_COL(fn, metric)                                                                     \
	static const char *fn(const row_t *w, char *buf, size_t cap)                               \
	{                                                                                          \
		return num(buf, cap, "%.6f", dv_pass_metric(&w->p->res, metric));                  \
	}
METRIC_COL(col_lost_pct, DV_M_LOST_PCT)
METRIC_COL(col_p50_ms, DV_M_P50_MS)
METRIC_COL(col_p90_ms, DV_M_P90_MS)
METRIC_COL(col_p99_ms, DV_M_P99_MS)
METRIC_COL(col_p999_ms, DV_M_P999_MS)
METRIC_COL(col_mean_ms, DV_M_MEAN_MS)
#undef METRIC_COL

static const char *col_qps(const row_t *w, char *buf, size_t cap)
{
	return num(buf, cap, "%.3f", w->p->res.qps);
}

static const char *col_max_ms(const row_t *w, char *buf, size_t cap)
{
	return num(buf, cap, "%.6f", (double)w->p->res.stats.latency.max_ns / 1e6);
}

static const char *col_stddev_ms(const row_t *w, char *buf, size_t cap)
{
	return num(buf, cap, "%.6f", dv_hist_stddev_ns(&w->p->res.stats.latency) / 1e6);
}

static const char *col_run_time_s(const row_t *w, char *buf, size_t cap)
{
	return num(buf, cap, "%.6f", w->p->res.run_time_s);
}

static const char *col_cpu_us_per_query(const row_t *w, char *buf, size_t cap)
{
	const dv_pass_result_t *r = &w->p->res;
	uint64_t sent = r->stats.c.sent;
	return num(buf, cap, "%.3f",
	           sent ? (r->cpu_user_s + r->cpu_sys_s) * 1e6 / (double)sent : 0);
}

static const char *col_interrupted(const row_t *w, char *buf, size_t cap)
{
	snprintf(buf, cap, "%d", w->p->res.interrupted ? 1 : 0);
	return buf;
}

/* Header version 3 (issues 12 and 13): the transport, the connection figures, the capacity. */
static const char *col_transport(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return dv_study_transport(w->s);
}

/* A connfig.h figure; empty when the pass has none (no connection, no handshake). */
#define CONN_COL(fn, fig, fmt)                                                                     \
	static const char *fn(const row_t *w, char *buf, size_t cap)                               \
	{                                                                                          \
		double v = dv_conn_fig(&w->p->res, fig);                                           \
		return isnan(v) ? "" : num(buf, cap, fmt, v);                                      \
	}
CONN_COL(col_connect_p50_ms, DV_CF_CONNECT_P50_MS, "%.6f")
CONN_COL(col_connect_p99_ms, DV_CF_CONNECT_P99_MS, "%.6f")
CONN_COL(col_handshake_p50_ms, DV_CF_HANDSHAKE_P50_MS, "%.6f")
CONN_COL(col_handshake_p99_ms, DV_CF_HANDSHAKE_P99_MS, "%.6f")
CONN_COL(col_queries_per_conn, DV_CF_QUERIES_PER_CONN, "%.3f")
#undef CONN_COL

/* A capacity search's figure and verdict; empty for a pass that is not one. */
static const char *col_capacity_qps(const row_t *w, char *buf, size_t cap)
{
	return w->p->cap.searched ? num(buf, cap, "%.3f", w->p->cap.capacity_qps) : "";
}

/* Version 4: the server's figures (engine/servercost.h), empty when it was not measured. */
static const dv_server_cost_t *srv(const row_t *w)
{
	return w->p->res.server.ok ? &w->p->res.server : NULL;
}

static const char *col_srv_user_s(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num(buf, cap, "%.3f", srv(w)->cpu_user_s) : "";
}

static const char *col_srv_sys_s(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num(buf, cap, "%.3f", srv(w)->cpu_sys_s) : "";
}

static const char *col_srv_us(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num(buf, cap, "%.3f", dv_server_us_per_answer(srv(w))) : "";
}

static const char *col_srv_csw(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num(buf, cap, "%.4f",
	                    dv_server_per_answer(srv(w), srv(w)->vcsw + srv(w)->ivcsw))
	              : "";
}

static const char *col_srv_sys(const row_t *w, char *buf, size_t cap)
{
	return srv(w) && srv(w)->sys_ok
	           ? num(buf, cap, "%.4f", dv_server_per_answer(srv(w), srv(w)->sys[DV_SYS_ALL]))
	           : "";
}

static const char *col_srv_rss_end(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num_u64(buf, cap, srv(w)->rss_end_kb) : "";
}

static const char *col_srv_rss_peak(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num_u64(buf, cap, srv(w)->rss_peak_kb) : "";
}

/* Version 5: the user/system split, the start of memory, a shared CPU, and the server's own
 * counters (--server-stats; empty unless read at both edges, the cache ones also when the
 * kind has no cache counters). */
static const char *col_srv_user_us(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num(buf, cap, "%.3f", dv_server_user_us_per_answer(srv(w))) : "";
}

static const char *col_srv_sys_us(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num(buf, cap, "%.3f", dv_server_sys_us_per_answer(srv(w))) : "";
}

static const char *col_srv_rss_start(const row_t *w, char *buf, size_t cap)
{
	return srv(w) ? num_u64(buf, cap, srv(w)->rss_start_kb) : "";
}

static const char *col_srv_shares_cpu(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return srv(w) ? (srv(w)->shares_cpu ? "1" : "0") : "";
}

static const dv_server_cost_t *srv_stats(const row_t *w, bool cache)
{
	const dv_server_cost_t *v = &w->p->res.server;
	return v->stats && v->stats_ok && (!cache || v->stats_cache) ? v : NULL;
}

static const char *col_srv_queries(const row_t *w, char *buf, size_t cap)
{
	return srv_stats(w, false) ? num_u64(buf, cap, srv_stats(w, false)->stats_queries) : "";
}

static const char *col_srv_hits(const row_t *w, char *buf, size_t cap)
{
	return srv_stats(w, true) ? num_u64(buf, cap, srv_stats(w, true)->stats_hits) : "";
}

static const char *col_srv_misses(const row_t *w, char *buf, size_t cap)
{
	return srv_stats(w, true) ? num_u64(buf, cap, srv_stats(w, true)->stats_misses) : "";
}

static const char *col_srv_misses_per_query(const row_t *w, char *buf, size_t cap)
{
	const dv_server_cost_t *v = srv_stats(w, true);

	if (v == NULL || v->stats_queries == 0)
		return "";
	return num(buf, cap, "%.4f", (double)v->stats_misses / (double)v->stats_queries);
}

static const char *col_capacity_verdict(const row_t *w, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	return dv_capacity_figure_verdict(&w->p->cap);
}

/*
 * The columns in file order: the history file's format (never reorder or
 * rename; a new column goes at the end and makes a new header). A column with
 * no text function is the DV_COUNTERS counter whose csv name it is (stats.h).
 */
static const struct csv_col {
	const char *name;
	col_text_fn text;
} cols[] = {
    {"date", col_date},
    {"host", col_host},
    {"tool_version", col_tool_version},
    {"target", col_target},
    {"target_addr", col_target_addr},
    {"list", col_list},
    {"repeat", col_repeat},
    {"pass", col_pass},
    {"sent", NULL},
    {"completed", NULL},
    {"lost", NULL},
    {"lost_pct", col_lost_pct},
    {"not_sent", NULL},
    {"late", NULL},
    {"qps", col_qps},
    {"p50_ms", col_p50_ms},
    {"p90_ms", col_p90_ms},
    {"p99_ms", col_p99_ms},
    {"p999_ms", col_p999_ms},
    {"mean_ms", col_mean_ms},
    {"max_ms", col_max_ms},
    {"stddev_ms", col_stddev_ms},
    {"run_time_s", col_run_time_s},
    {"cpu_us_per_query", col_cpu_us_per_query},
    {"interrupted", col_interrupted},
    /* header version 2 (issue 10): where the lost queries were dropped, and the clock */
    {"client_drops", NULL},
    {"target_drops", NULL},
    {"target_sockets", NULL},
    {"icmp_port_unreachable", NULL},
    {"wire_timed", NULL},
    /* header version 3 (issues 12 and 13): stream transports and capacity searches */
    {"transport", col_transport},
    {"conn_opened", NULL},
    {"conn_failed", NULL},
    {"conn_reset", NULL},
    {"conn_closed", NULL},
    {"tls_full", NULL},
    {"tls_resumed", NULL},
    {"connect_p50_ms", col_connect_p50_ms},
    {"connect_p99_ms", col_connect_p99_ms},
    {"handshake_p50_ms", col_handshake_p50_ms},
    {"handshake_p99_ms", col_handshake_p99_ms},
    {"queries_per_conn", col_queries_per_conn},
    {"http_non200", NULL},
    {"capacity_qps", col_capacity_qps},
    {"capacity_verdict", col_capacity_verdict},
    /* header version 4 (issue 23): what the server paid */
    {"server_cpu_user_s", col_srv_user_s},
    {"server_cpu_sys_s", col_srv_sys_s},
    {"server_us_per_answer", col_srv_us},
    {"server_csw_per_answer", col_srv_csw},
    {"server_syscalls_per_answer", col_srv_sys},
    {"server_rss_end_kb", col_srv_rss_end},
    {"server_rss_peak_kb", col_srv_rss_peak},
    /* header version 5 (issue 23): the split, the start, a shared CPU, the server's counters */
    {"server_user_us_per_answer", col_srv_user_us},
    {"server_sys_us_per_answer", col_srv_sys_us},
    {"server_rss_start_kb", col_srv_rss_start},
    {"server_shares_cpu", col_srv_shares_cpu},
    {"server_queries", col_srv_queries},
    {"server_cache_hits", col_srv_hits},
    {"server_cache_misses", col_srv_misses},
    {"server_misses_per_query", col_srv_misses_per_query},
    /* header version 6: why connection attempts failed (each a subset of conn_failed), how
     * they were retried, how connections ended; the wire clock's sampled answers left
     * untimed, by why (wire_timed + the three = the sampled answers completed) */
    {"conn_refused", NULL},
    {"conn_timeouts", NULL},
    {"conn_no_port", NULL},
    {"conn_syn_retries", NULL},
    {"conn_backoffs", NULL},
    {"conn_idle_closed", NULL},
    {"conn_lost", NULL},
    {"untimed_no_tx", NULL},
    {"untimed_no_rx", NULL},
    {"untimed_order", NULL},
    /* header version 7: every other counter that says what went wrong or how a figure is to
     * be read: answers that were none (unexpected, malformed, truncated, ICMP errors),
     * connections (reopened, abandoned, protocol errors, recycled, stream errors, HTTP 4xx
     * and 5xx), --tc-tcp's retries, a paced run's honesty (forfeited, sent behind, held by
     * the server), TSIG's errors, and the wire clock's sample (asked, receive stamps
     * unused, XDP-stamped) */
    {"unexpected", NULL},
    {"malformed", NULL},
    {"truncated", NULL},
    {"icmp_errors", NULL},
    {"conn_reopened", NULL},
    {"conn_abandoned", NULL},
    {"conn_proto_errors", NULL},
    {"conn_recycled", NULL},
    {"stream_errors", NULL},
    {"http_4xx", NULL},
    {"http_5xx", NULL},
    {"tc_retried", NULL},
    {"tc_completed", NULL},
    {"tc_lost", NULL},
    {"tc_not_sent", NULL},
    {"tc_no_conn", NULL},
    {"forfeited", NULL},
    {"sent_behind", NULL},
    {"server_holds", NULL},
    {"tsig_unsigned", NULL},
    {"tsig_badsig", NULL},
    {"tsig_badkey", NULL},
    {"tsig_badtime", NULL},
    {"tsig_badmac", NULL},
    {"tsig_other_error", NULL},
    {"stamps_asked", NULL},
    {"rx_stamps_unused", NULL},
    {"xdp_stamped", NULL},
};
const size_t dv_csv_ncolumns = DV_ARRAY_SIZE(cols);

/* Columns of each header version: version v has the first ncols_of[v] columns. */
static const size_t ncols_of[DV_CSV_VERSION + 1] = {0,
                                                    DV_CSV_V1_COLUMNS,
                                                    DV_CSV_V2_COLUMNS,
                                                    DV_CSV_V3_COLUMNS,
                                                    DV_CSV_V4_COLUMNS,
                                                    DV_CSV_V5_COLUMNS,
                                                    DV_CSV_V6_COLUMNS,
                                                    DV_ARRAY_SIZE(cols)};

size_t dv_csv_version_columns(unsigned version)
{
	return version >= 1 && version <= DV_CSV_VERSION ? ncols_of[version] : 0;
}

const char *dv_csv_header_version(unsigned version)
{
	static char hdr[DV_CSV_VERSION + 1][2048];
	size_t n = dv_csv_version_columns(version);

	if (n == 0)
		return NULL;
	if (hdr[version][0] == '\0') {
		/* Version 6's is 922 characters of 2,047. A header that outgrew the buffer would be
		 * cut here, never written past it; test_csv's exact header would then fail. */
		size_t off = 0;
		for (size_t i = 0; i < n && off < sizeof(hdr[version]); i++)
			off += (size_t)snprintf(hdr[version] + off, sizeof(hdr[version]) - off,
			                        "%s%s", i ? "," : "", cols[i].name);
	}
	return hdr[version];
}

const char *dv_csv_header(void)
{
	return dv_csv_header_version(DV_CSV_VERSION);
}

/* The version whose header is line[0..n) exactly, or 0. */
static unsigned header_version(const char *line, size_t n)
{
	for (unsigned v = DV_CSV_VERSION; v >= 1; v--) {
		const char *h = dv_csv_header_version(v);
		if (n == strlen(h) && strncmp(line, h, n) == 0)
			return v;
	}
	return 0;
}

int dv_csv_column(const char *name)
{
	for (size_t i = 0; i < dv_csv_ncolumns; i++)
		if (strcmp(cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

const dv_counter_field_t *dv_csv_counter(const char *name)
{
	for (size_t i = 0; i < dv_counter_nfields; i++)
		if (dv_counter_fields[i].csv != NULL && strcmp(dv_counter_fields[i].csv, name) == 0)
			return &dv_counter_fields[i];
	return NULL;
}

/* RFC 4180: quote a field holding a comma, a quote or a line break; double the quotes. */
static void put_field(FILE *fp, const char *s, bool first)
{
	if (!first)
		fputc(',', fp);
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

/* One row of the first ncols columns (the layout of the file's header version). */
static void write_row(FILE *fp, const dv_study_t *s, const dv_pass_record_t *p, size_t ncols)
{
	const row_t w = {s, p};
	char buf[64];

	for (size_t i = 0; i < ncols; i++) {
		const char *text = NULL;
		if (cols[i].text != NULL) {
			text = cols[i].text(&w, buf, sizeof(buf));
		} else {
			const dv_counter_field_t *f = dv_csv_counter(cols[i].name);
			if (f != NULL) /* always (test_csv) */
				text =
				    num_u64(buf, sizeof(buf), dv_counter_get(&p->res.stats.c, f));
		}
		put_field(fp, text, i == 0);
	}
	fputc('\n', fp);
}

/*
 * State of an existing file: 0 missing or empty (write the header), else the
 * version of its header (1..DV_CSV_VERSION), -EPROTO any other first line.
 * *nl_missing when the last byte is not '\n'.
 */
static int existing_state(const char *path, bool *nl_missing, dv_err_t *err)
{
	struct stat st;
	FILE *fp;
	char line[2048];
	int rc;

	*nl_missing = false;
	/* A FIFO, a device or a pipe is written directly (atomicfile.h): never read it (a FIFO
	 * would wait for a writer), it gets a header like a new file. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;
	fp = fopen(path, "rb");
	if (fp == NULL) {
		if (errno == ENOENT)
			return 0;
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	}
	if (fgets(line, sizeof(line), fp) == NULL) {
		fclose(fp);
		return 0;
	}
	size_t n = strcspn(line, "\r\n");
	unsigned v = header_version(line, n);
	if (v != 0) {
		rc = (int)v;
		if (fseek(fp, -1, SEEK_END) == 0 && fgetc(fp) != '\n')
			*nl_missing = true;
	} else {
		line[n] = '\0';
		rc = dv_err_set(err, -EPROTO,
		                "%s: not a dnsvolley history file of this version: its first line "
		                "is \"%.80s%s\", expected \"%s\" (or an earlier version's "
		                "header, doc/nightly.md); start a new file",
		                path, line, n > 80 ? "..." : "", dv_csv_header());
	}
	fclose(fp);
	return rc;
}

int dv_csv_append(const dv_study_t *s, const char *path, dv_err_t *err)
{
	dv_atomicfile_t f;
	bool nl_missing;
	int state = existing_state(path, &nl_missing, err);
	int rc;

	if (state < 0)
		return state;
	rc = dv_atomicfile_open(&f, path, state > 0, err);
	if (rc != 0)
		return rc;
	if (nl_missing)
		fputc('\n', f.fp);
	if (state == 0)
		fprintf(f.fp, "%s\n", dv_csv_header());
	/* A file of an earlier version keeps its layout (doc/nightly.md says why). */
	size_t ncols = dv_csv_version_columns(state == 0 ? DV_CSV_VERSION : (unsigned)state);
	for (size_t i = 0; i < s->n_passes; i++)
		if (s->passes[i].kind != DV_PASS_WARMUP)
			write_row(f.fp, s, &s->passes[i], ncols);
	return dv_atomicfile_commit(&f, err);
}

int dv_csv_upgrade(const char *path, unsigned *from, size_t *rows, dv_err_t *err)
{
	dv_csv_table_t t;
	dv_atomicfile_t f;
	struct stat st;
	int rc;

	*from = 0;
	*rows = 0;
	if (stat(path, &st) != 0)
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return dv_err_set(err, -EINVAL, "%s: not a regular file", path);
	rc = dv_csv_read(path, &t, err);
	if (rc != 0)
		return rc;
	*from = t.version;
	*rows = t.n;
	if (t.version == DV_CSV_VERSION) {
		dv_csv_table_free(&t);
		return 0;
	}
	rc = dv_atomicfile_open(&f, path, false, err);
	if (rc == 0) {
		fprintf(f.fp, "%s\n", dv_csv_header());
		for (size_t i = 0; i < t.n; i++) {
			for (size_t c = 0; c < dv_csv_ncolumns; c++)
				put_field(f.fp, t.rows[i][c], c == 0);
			fputc('\n', f.fp);
		}
		rc = dv_atomicfile_commit(&f, err);
	}
	dv_csv_table_free(&t);
	return rc;
}

int dv_csv_file_version(const char *path, dv_err_t *err)
{
	bool nl_missing;
	return existing_state(path, &nl_missing, err);
}

/* ---- reader ---- */

void dv_csv_table_free(dv_csv_table_t *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n; i++) {
		for (size_t c = 0; c < dv_csv_ncolumns; c++)
			free(t->rows[i][c]);
		free(t->rows[i]);
	}
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

static char *slurp(const char *path, size_t *len, dv_err_t *err, int *rc)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (fp == NULL) {
		*rc = dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (n + 65536 + 1 > cap) {
			char *nb = realloc(buf, cap = (cap ? cap * 2 : 65536) + 65536 + 1);
			if (nb == NULL) {
				free(buf);
				fclose(fp);
				*rc = dv_err_set(err, -ENOMEM, "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, 65536, fp);
		n += r;
		if (n > DV_CSV_MAX_BYTES) {
			free(buf);
			fclose(fp);
			*rc = dv_err_set(err, -EFBIG,
			                 "%s: larger than %d MiB, more than this dnsvolley reads",
			                 path, DV_CSV_MAX_BYTES >> 20);
			return NULL;
		}
	} while (r > 0);
	if (ferror(fp)) {
		free(buf);
		fclose(fp);
		*rc = dv_err_set(err, -EIO, "%s: read error", path);
		return NULL;
	}
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	*rc = 0;
	return buf;
}

/* Parse one record starting at *pos; fields (malloc'd) into fv (up to max); returns count or -1. */
static int parse_record(const char *buf, size_t len, size_t *pos, char **fv, size_t max,
                        size_t *line)
{
	size_t i = *pos, nf = 0;

	for (;;) {
		size_t cap = 64, n = 0;
		char *fld = malloc(cap);
		bool quoted = i < len && buf[i] == '"';

		if (fld == NULL)
			return -1;
		if (quoted)
			i++;
		for (;;) {
			char ch;
			if (i >= len) {
				if (quoted) { /* unterminated quote */
					free(fld);
					return -1;
				}
				break;
			}
			ch = buf[i];
			if (quoted) {
				if (ch == '"') {
					if (i + 1 < len && buf[i + 1] == '"') {
						i += 2;
						ch = '"';
					} else {
						i++;
						quoted = false;
						continue;
					}
				} else {
					if (ch == '\n')
						(*line)++;
					i++;
				}
			} else {
				if (ch == ',' || ch == '\n' || ch == '\r')
					break;
				i++;
			}
			if (n + 2 > cap) {
				char *nf2 = realloc(fld, cap *= 2);
				if (nf2 == NULL) {
					free(fld);
					return -1;
				}
				fld = nf2;
			}
			fld[n++] = ch;
		}
		fld[n] = '\0';
		if (nf < max)
			fv[nf] = fld;
		else
			free(fld);
		nf++;
		if (i < len && buf[i] == ',') {
			i++;
			continue;
		}
		if (i < len && buf[i] == '\r')
			i++;
		if (i < len && buf[i] == '\n')
			i++;
		break;
	}
	*pos = i;
	return (int)nf;
}

/* Is s a UTC time as the history writes it, YYYY-MM-DDTHH:MM:SSZ (fields in range)? */
static bool is_utc_time(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:ddZ";
	int mo, d, h, mi, se;

	for (size_t i = 0; i < sizeof(pat) - 1; i++)
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return false;
	if (s[sizeof(pat) - 1] != '\0' ||
	    sscanf(s + 5, "%2d-%2dT%2d:%2d:%2d", &mo, &d, &h, &mi, &se) != 5)
		return false;
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && se <= 60;
}

/* The columns a row of an earlier header version lacks: empty fields (not recorded). */
static int fill_absent(char **fv, size_t ncols)
{
	for (size_t c = ncols; c < dv_csv_ncolumns; c++)
		if ((fv[c] = strdup("")) == NULL)
			return -1;
	return 0;
}

int dv_csv_read(const char *path, dv_csv_table_t *t, dv_err_t *err)
{
	size_t len;
	int rc;
	char *buf = slurp(path, &len, err, &rc);

	memset(t, 0, sizeof(*t));
	if (buf == NULL)
		return rc;
	rc = dv_csv_read_buffer(buf, len, path, t, err);
	free(buf);
	return rc;
}

int dv_csv_read_buffer(const char *buf, size_t len, const char *path, dv_csv_table_t *t,
                       dv_err_t *err)
{
	size_t pos = 0, line = 1, cap = 0;
	int rc;
	char **fv;

	memset(t, 0, sizeof(*t));
	size_t hl = 0;
	while (hl < len && buf[hl] != '\n' && buf[hl] != '\r' && buf[hl] != '\0')
		hl++;
	unsigned version = header_version(buf, hl);
	if (version == 0) {
		return dv_err_set(err, -EPROTO,
		                  "%s: not a dnsvolley history file: the first line is not \"%s\" "
		                  "(nor an earlier version's header, doc/nightly.md)",
		                  path, dv_csv_header());
	}
	size_t ncols = dv_csv_version_columns(version);
	t->version = version;
	pos = hl;
	if (pos < len && buf[pos] == '\r')
		pos++;
	if (pos < len && buf[pos] == '\n')
		pos++;
	line = 2;
	while (pos < len) {
		size_t start_line = line;
		if (buf[pos] == '\n') { /* blank line */
			pos++;
			line++;
			continue;
		}
		fv = calloc(dv_csv_ncolumns, sizeof(*fv));
		if (fv == NULL) {
			rc = dv_err_set(err, -ENOMEM, "%s: out of memory", path);
			goto fail;
		}
		int nf = parse_record(buf, len, &pos, fv, ncols, &line);
		line++;
		if (nf == (int)ncols && fill_absent(fv, ncols) != 0)
			nf = -2;
		if (nf != (int)ncols) {
			for (size_t c = 0; c < dv_csv_ncolumns; c++)
				free(fv[c]);
			free(fv);
			rc = nf == -2 ? dv_err_set(err, -ENOMEM, "%s: out of memory", path)
			              : dv_err_set(err, -EPROTO, "%s:%zu: %s", path, start_line,
			                           nf < 0 ? "unterminated quoted field"
			                                  : "wrong number of fields");
			goto fail;
		}
		/* plot writes the date into its data files: a newline there would forge rows. */
		if (!is_utc_time(fv[dv_csv_column("date")])) {
			for (size_t c = 0; c < dv_csv_ncolumns; c++)
				free(fv[c]);
			free(fv);
			rc = dv_err_set(err, -EPROTO,
			                "%s:%zu: \"date\" is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)",
			                path, start_line);
			goto fail;
		}
		if (t->n == cap) {
			char ***nr = realloc(t->rows, (cap = cap ? cap * 2 : 64) * sizeof(*nr));
			if (nr == NULL) {
				for (size_t c = 0; c < dv_csv_ncolumns; c++)
					free(fv[c]);
				free(fv);
				rc = dv_err_set(err, -ENOMEM, "%s: out of memory", path);
				goto fail;
			}
			t->rows = nr;
		}
		t->rows[t->n++] = fv;
	}
	return 0;
fail:
	dv_csv_table_free(t);
	return rc;
}
