/* test_csv: history rows appended with the header once, a foreign header refused, quoting round
 * trip, files of header version 1 appended in their layout and read back. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "results/csv.h"

/* Version 7's 28 counters of a pass that had none of them. */
#define V7_ZEROS                                                                                   \
	",0,0,0,0,0,0,0,0,0,0,0,0,0,0"                                                             \
	",0,0,0,0,0,0,0,0,0,0,0,0,0,0"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dv_test_csv_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/history.csv", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

static char *read_all(const char *p)
{
	FILE *fp = fopen(p, "rb");
	char *buf;
	long n;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return buf;
}

static void write_all(const char *p, const char *text)
{
	FILE *fp = fopen(p, "wb");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* Two reported passes (cold, hot) and a warmup, on target label tl. */
static dv_study_t *make_study(const char *tl)
{
	dv_study_t *s = calloc(1, sizeof(*s));
	static const dv_pass_kind_t kinds[] = {DV_PASS_WARMUP, DV_PASS_COLD, DV_PASS_HOT};

	assert_non_null(s);
	s->hostname = "bench1";
	s->tool_version = "0.1.0";
	s->start_wall_ns = 1717200000ULL * DV_NS_PER_S; /* 2024-06-01T00:00:00Z */
	s->targets = calloc(1, sizeof(*s->targets));
	s->lists = calloc(1, sizeof(*s->lists));
	s->passes = calloc(3, sizeof(*s->passes));
	s->targets[0].label = (char *)tl;
	s->targets[0].addr_text = "127.0.0.1:5300";
	s->lists[0].label = "SOA";
	s->n_targets = s->n_lists = 1;
	s->n_passes = 3;
	for (size_t i = 0; i < 3; i++) {
		dv_pass_record_t *p = &s->passes[i];
		p->kind = kinds[i];
		p->res.start_wall_ns = s->start_wall_ns + i * 60 * DV_NS_PER_S;
		p->res.qps = 1000.0 * (double)(i + 1);
		p->res.run_time_s = 2.5;
		p->res.cpu_user_s = 0.001;
		p->res.cpu_sys_s = 0.003;
		p->res.stats.c.sent = 2000;
		p->res.stats.c.lost = 10 * i;
		p->res.stats.c.completed = 2000 - 10 * i;
		dv_hist_init(&p->res.stats.latency);
		for (uint64_t k = 0; k < 2000 - 10 * i; k++)
			dv_hist_add(&p->res.stats.latency, 250000 * (i + 1));
	}
	return s;
}

static void free_study(dv_study_t *s)
{
	free(s->targets);
	free(s->lists);
	free(s->passes);
	free(s);
}

static const char *field(const dv_csv_table_t *t, size_t row, const char *col)
{
	int c = dv_csv_column(col);
	assert_true(c >= 0);
	assert_true(row < t->n);
	return t->rows[row][c];
}

static void test_header_once(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char *text, *second;
	(void)state;

	assert_string_equal(dv_csv_header(),
	                    "date,host,tool_version,target,target_addr,list,repeat,pass,sent,"
	                    "completed,lost,lost_pct,not_sent,late,qps,p50_ms,p90_ms,p99_ms,"
	                    "p999_ms,mean_ms,max_ms,stddev_ms,run_time_s,cpu_us_per_query,"
	                    "interrupted,client_drops,target_drops,target_sockets,"
	                    "icmp_port_unreachable,wire_timed,transport,conn_opened,conn_failed,"
	                    "conn_reset,conn_closed,tls_full,tls_resumed,connect_p50_ms,"
	                    "connect_p99_ms,handshake_p50_ms,handshake_p99_ms,queries_per_conn,"
	                    "http_non200,capacity_qps,capacity_verdict,server_cpu_user_s,"
	                    "server_cpu_sys_s,server_us_per_answer,server_csw_per_answer,"
	                    "server_syscalls_per_answer,server_rss_end_kb,server_rss_peak_kb,"
	                    "server_user_us_per_answer,server_sys_us_per_answer,"
	                    "server_rss_start_kb,server_shares_cpu,server_queries,"
	                    "server_cache_hits,server_cache_misses,server_misses_per_query,"
	                    "conn_refused,conn_timeouts,conn_no_port,conn_syn_retries,"
	                    "conn_backoffs,conn_idle_closed,conn_lost,untimed_no_tx,untimed_no_rx,"
	                    "untimed_order,unexpected,malformed,truncated,icmp_errors,"
	                    "conn_reopened,conn_abandoned,conn_proto_errors,conn_recycled,"
	                    "stream_errors,http_4xx,http_5xx,tc_retried,tc_completed,tc_lost,"
	                    "tc_not_sent,tc_no_conn,forfeited,sent_behind,server_holds,"
	                    "tsig_unsigned,tsig_badsig,tsig_badkey,tsig_badtime,tsig_badmac,"
	                    "tsig_other_error,stamps_asked,rx_stamps_unused,xdp_stamped");
	assert_int_equal(DV_CSV_VERSION, 7);
	assert_int_equal(dv_csv_ncolumns, 98);
	assert_int_equal(dv_csv_version_columns(6), 70);
	assert_int_equal(dv_csv_version_columns(5), 60);
	assert_int_equal(dv_csv_version_columns(4), 52);
	assert_int_equal(dv_csv_version_columns(3), 45);
	assert_int_equal(dv_csv_version_columns(2), 30);
	assert_string_equal(dv_csv_header_version(7), dv_csv_header());
	assert_string_equal(dv_csv_header_version(2) + strlen(dv_csv_header_version(2)) - 11,
	                    ",wire_timed");
	assert_int_equal(
	    strncmp(dv_csv_header(), dv_csv_header_version(2), strlen(dv_csv_header_version(2))),
	    0);
	assert_int_equal(
	    strncmp(dv_csv_header(), dv_csv_header_version(1), strlen(dv_csv_header_version(1))),
	    0);
	assert_string_equal(dv_csv_header_version(1) + strlen(dv_csv_header_version(1)) - 12,
	                    ",interrupted");
	assert_null(dv_csv_header_version(0));
	assert_string_equal(dv_csv_header_version(4) + strlen(dv_csv_header_version(4)) - 19,
	                    ",server_rss_peak_kb");
	assert_string_equal(dv_csv_header_version(5) + strlen(dv_csv_header_version(5)) - 24,
	                    ",server_misses_per_query");
	assert_string_equal(dv_csv_header_version(6) + strlen(dv_csv_header_version(6)) - 14,
	                    ",untimed_order");
	assert_null(dv_csv_header_version(8));
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_non_null(strstr(text, dv_csv_header()));
	assert_string_equal(
	    strstr(text, "\n") + 1,
	    "2024-06-01T00:01:00Z,bench1,0.1.0,t1,127.0.0.1:5300,SOA,0,cold,2000,"
	    "1990,10,0.500000,0,0,2000.000,0.500000,0.500000,0.500000,0.500000,"
	    "0.500000,0.500000,0.000000,2.500000,2.000,0,0,0,0,0,0,"
	    "udp,0,0,0,0,0,0,,,,,,0,,,,,,,,,,,,,,,,,,0,0,0,0,0,0,0,0,0,0" V7_ZEROS "\n"
	    "2024-06-01T00:02:00Z,bench1,0.1.0,t1,127.0.0.1:5300,SOA,0,hot,2000,"
	    "1980,20,1.000000,0,0,3000.000,0.750000,0.750000,0.750000,0.750000,"
	    "0.750000,0.750000,0.000000,2.500000,2.000,0,0,0,0,0,0,"
	    "udp,0,0,0,0,0,0,,,,,,0,,,,,,,,,,,,,,,,,,0,0,0,0,0,0,0,0,0,0" V7_ZEROS "\n");
	/* Append again: the header is not repeated, rows follow. */
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	second = read_all(path);
	assert_int_equal(strlen(second), 2 * strlen(text) - strlen(dv_csv_header()) - 1);
	assert_ptr_equal(strstr(second + 1, "date,host"), NULL);

	assert_int_equal(dv_csv_file_version(path, &err), 7);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 7);
	assert_int_equal(t.n, 4);
	assert_string_equal(field(&t, 0, "pass"), "cold");
	assert_string_equal(field(&t, 1, "pass"), "hot");
	assert_string_equal(field(&t, 3, "p99_ms"), "0.750000");
	assert_string_equal(field(&t, 2, "lost_pct"), "0.500000");
	assert_string_equal(field(&t, 0, "date"), "2024-06-01T00:01:00Z");
	dv_csv_table_free(&t);
	free(text);
	free(second);
	free_study(s);
}

/*
 * The counter columns come from DV_COUNTERS (stats.h) by csv name: every
 * counter with one is a column holding its value (distinct per counter here),
 * and no column is left empty (a column with neither a counter nor a text).
 */
static void test_counter_columns(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	size_t with_csv = 0;
	char want[32];
	(void)state;

	for (size_t k = 0; k < dv_counter_nfields; k++)
		*dv_counter_ptr(&s->passes[1].res.stats.c, &dv_counter_fields[k]) = 7000 + 11 * k;
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.n, 2);
	for (size_t k = 0; k < dv_counter_nfields; k++) {
		const dv_counter_field_t *f = &dv_counter_fields[k];
		if (f->csv == NULL)
			continue;
		with_csv++;
		assert_ptr_equal(dv_csv_counter(f->csv), f);
		snprintf(want, sizeof(want), "%zu", (size_t)(7000 + 11 * k));
		assert_string_equal(field(&t, 0, f->csv), want);
	}
	assert_int_equal(with_csv, 55); /* versions 1 and 2: 10, 3: 7, 6: 10, 7: 28 */
	assert_string_equal(field(&t, 0, "sent"), "7000");
	assert_string_equal(field(&t, 0, "not_sent"), "7011");
	assert_string_equal(field(&t, 0, "completed"), "7022");
	assert_string_equal(field(&t, 0, "lost"), "7033");
	assert_string_equal(field(&t, 0, "late"), "7044");
	/* the loss split and the clock (header version 2), each its own counter's value */
	for (size_t k = 0; k < dv_counter_nfields; k++) {
		static const char *const v2[] = {"client_drops", "target_drops", "target_sockets",
		                                 "icmp_port_unreachable", "wire_timed"};
		for (size_t j = 0; j < DV_ARRAY_SIZE(v2); j++) {
			if (strcmp(dv_counter_fields[k].name, v2[j]) != 0)
				continue;
			assert_int_equal(dv_csv_column(v2[j]), DV_CSV_V1_COLUMNS + j);
			snprintf(want, sizeof(want), "%zu", (size_t)(7000 + 11 * k));
			assert_string_equal(field(&t, 0, v2[j]), want);
		}
	}
	assert_null(dv_csv_counter("qps"));
	/* version 3's counters: their csv name is their results-file key (one table) */
	for (size_t j = 0; j < 7; j++) {
		static const char *const v3[] = {"conn_opened", "conn_failed", "conn_reset",
		                                 "conn_closed", "tls_full",    "tls_resumed",
		                                 "http_non200"};
		const dv_counter_field_t *f = dv_csv_counter(v3[j]);
		assert_non_null(f);
		assert_string_equal(f->name, v3[j]);
	}
	/* Empty only where the pass has no such figure: no connect or handshake histogram
	 * here, and no capacity search. */
	for (size_t r = 0; r < t.n; r++)
		for (size_t c = 0; c < dv_csv_ncolumns; c++) {
			bool may = c == (size_t)dv_csv_column("connect_p50_ms") ||
			           c == (size_t)dv_csv_column("connect_p99_ms") ||
			           c == (size_t)dv_csv_column("handshake_p50_ms") ||
			           c == (size_t)dv_csv_column("handshake_p99_ms") ||
			           c == (size_t)dv_csv_column("capacity_qps") ||
			           c == (size_t)dv_csv_column("capacity_verdict") ||
			           (c >= DV_CSV_V3_COLUMNS && /* no server measured */
			            c < DV_CSV_V5_COLUMNS) ||
			           (r == 1 && c == (size_t)dv_csv_column("queries_per_conn"));
			if (t.rows[r][c][0] == '\0' && !may)
				fail_msg("row %zu column %zu is empty", r, c);
			if (may && t.rows[r][c][0] != '\0')
				fail_msg("row %zu column %zu is not empty", r, c);
		}
	dv_csv_table_free(&t);
	free_study(s);
}

static void test_empty_file_gets_header(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	char *text;
	(void)state;

	write_all(path, "");
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_int_equal(strncmp(text, dv_csv_header(), strlen(dv_csv_header())), 0);
	free(text);
	free_study(s);
}

static void test_header_mismatch_refused(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	const char *foreign = "date,host,qps\n2024-01-01,x,5\n";
	char *text;
	(void)state;

	write_all(path, foreign);
	assert_int_equal(dv_csv_append(s, path, &err), -EPROTO);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "first line is \"date,host,qps\""));
	text = read_all(path);
	assert_string_equal(text, foreign); /* untouched */
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);

	/* A header with one column more (a newer version) is refused too. */
	char longer[1024];
	snprintf(longer, sizeof(longer), "%s,extra\n", dv_csv_header());
	write_all(path, longer);
	assert_int_equal(dv_csv_append(s, path, &err), -EPROTO);
	assert_int_equal(dv_csv_file_version(path, &err), -EPROTO);
	/* So is version 1's with a column that is not version 2's. */
	snprintf(longer, sizeof(longer), "%s,target_drops\n", dv_csv_header_version(1));
	write_all(path, longer);
	assert_int_equal(dv_csv_append(s, path, &err), -EPROTO);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	text = read_all(path);
	assert_string_equal(text, longer);
	free(text);
	free_study(s);
}

/*
 * A history "date" that is not a UTC time is refused: a quoted date holding a newline injected
 * rows into plot's trend data (issue 16 item 9).
 */
static void test_bad_date_refused(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char *text, *row, buf[8192];
	(void)state;

	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	row = strchr(text, '\n') + 1; /* the first data row starts with its date */
	assert_int_equal(row[20], ',');
	snprintf(buf, sizeof(buf), "%.*s\"2024-06-01T00:01:00Z\n2030-01-01T00:00:00Z 1e9 0\"%s",
	         (int)(row - text), text, row + 20);
	write_all(path, buf);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":2: \"date\" is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)"));
	snprintf(buf, sizeof(buf), "%.*s2024-13-01%s", (int)(row - text), text, row + 10);
	write_all(path, buf);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	write_all(path, text); /* the original reads */
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	dv_csv_table_free(&t);
	free(text);
	free_study(s);
}

/* A history row as version 1 wrote it (before the loss split). */
#define V1_ROW                                                                                     \
	"2024-05-31T00:01:00Z,bench1,0.0.9,t1,127.0.0.1:5300,SOA,0,cold,100,99,1,1.000000,0,0,"    \
	"99.000,0.500000,0.500000,0.500000,0.500000,0.500000,0.500000,0.000000,1.000000,2.000,0\n"

/*
 * A file with the version 1 header (an existing nightly history) is appended
 * to in its own layout, never refused and never given a second header; it
 * reads back with the version 2 columns empty (not recorded).
 */
static void test_old_header_appended(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char old[2048], *text, *line;
	size_t rows = 0;
	(void)state;

	snprintf(old, sizeof(old), "%s\n" V1_ROW, dv_csv_header_version(1));
	write_all(path, old);
	assert_int_equal(dv_csv_file_version(path, &err), 1);
	s->passes[1].res.stats.c.client_drops = 5; /* not written: the file has no column */
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_int_equal(strncmp(text, old, strlen(old)), 0); /* old content kept */
	assert_string_equal(text + strlen(old),
	                    "2024-06-01T00:01:00Z,bench1,0.1.0,t1,127.0.0.1:5300,SOA,0,cold,2000,"
	                    "1990,10,0.500000,0,0,2000.000,0.500000,0.500000,0.500000,0.500000,"
	                    "0.500000,0.500000,0.000000,2.500000,2.000,0\n"
	                    "2024-06-01T00:02:00Z,bench1,0.1.0,t1,127.0.0.1:5300,SOA,0,hot,2000,"
	                    "1980,20,1.000000,0,0,3000.000,0.750000,0.750000,0.750000,0.750000,"
	                    "0.750000,0.750000,0.000000,2.500000,2.000,0\n");
	for (line = text; (line = strchr(line, '\n')) != NULL && line[1] != '\0'; line++)
		rows++;
	assert_int_equal(rows, 3);
	assert_int_equal(dv_csv_file_version(path, &err), 1);

	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 1);
	assert_int_equal(t.n, 3);
	assert_string_equal(field(&t, 0, "tool_version"), "0.0.9");
	assert_string_equal(field(&t, 0, "lost"), "1");
	assert_string_equal(field(&t, 2, "pass"), "hot");
	assert_string_equal(field(&t, 2, "interrupted"), "0");
	for (size_t r = 0; r < t.n; r++)
		for (size_t c = DV_CSV_V1_COLUMNS; c < dv_csv_ncolumns; c++)
			assert_string_equal(t.rows[r][c], "");
	dv_csv_table_free(&t);
	free(text);

	/* A version 1 row in a version 2 or 3 file (or the reverse) is a wrong row. */
	snprintf(old, sizeof(old), "%s\n" V1_ROW, dv_csv_header());
	write_all(path, old);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":2: wrong number of fields"));
	snprintf(old, sizeof(old), "%s\n" V1_ROW, dv_csv_header_version(2));
	write_all(path, old);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":2: wrong number of fields"));
	snprintf(old, sizeof(old), "%s\n%.*s,0,0,0,0,0\n", dv_csv_header_version(1),
	         (int)strlen(V1_ROW) - 1, V1_ROW);
	write_all(path, old);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":2: wrong number of fields"));
	/* The same row with the version 2 header and its five columns reads (version 3's
	 * columns empty: not recorded). */
	snprintf(old, sizeof(old), "%s\n%.*s,1,2,3,4,5\n", dv_csv_header_version(2),
	         (int)strlen(V1_ROW) - 1, V1_ROW);
	write_all(path, old);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 2);
	assert_string_equal(field(&t, 0, "client_drops"), "1");
	assert_string_equal(field(&t, 0, "wire_timed"), "5");
	for (size_t c = DV_CSV_V2_COLUMNS; c < dv_csv_ncolumns; c++)
		assert_string_equal(t.rows[0][c], "");
	dv_csv_table_free(&t);
	free_study(s);
}

/*
 * A new file gets the version 2 header, and the loss split round-trips: each
 * of the five columns holds its own counter's value, distinct from the others.
 */
static void test_new_columns_round_trip(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char *text;
	(void)state;

	for (size_t i = 1; i < 3; i++) {
		dv_counters_t *c = &s->passes[i].res.stats.c;
		c->client_drops = 3 + i;
		c->target_drops = 611 + i;
		c->target_sockets = 2;
		c->icmp_port_unreachable = 17 * i;
		c->wire_timed = 1990 - i;
	}
	assert_int_equal(dv_csv_file_version(path, &err), 0); /* missing */
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_int_equal(strncmp(text, dv_csv_header(), strlen(dv_csv_header())), 0);
	assert_non_null(strstr(text, ",2.000,0,4,612,2,17,1989,udp,"));
	assert_non_null(strstr(text, ",2.000,0,5,613,2,34,1988,udp,"));
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 7);
	assert_int_equal(t.n, 2);
	assert_string_equal(field(&t, 0, "client_drops"), "4");
	assert_string_equal(field(&t, 0, "target_drops"), "612");
	assert_string_equal(field(&t, 0, "target_sockets"), "2");
	assert_string_equal(field(&t, 0, "icmp_port_unreachable"), "17");
	assert_string_equal(field(&t, 0, "wire_timed"), "1989");
	assert_string_equal(field(&t, 1, "client_drops"), "5");
	assert_string_equal(field(&t, 1, "target_drops"), "613");
	assert_string_equal(field(&t, 1, "icmp_port_unreachable"), "34");
	assert_string_equal(field(&t, 1, "wire_timed"), "1988");
	dv_csv_table_free(&t);
	free_study(s);
}

/* Header version 4 (issue 23): the server's figures, exactly; empty when not measured. */
static void test_v4_server(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	(void)state;

	dv_server_cost_t *v = &s->passes[1].res.server; /* passes[0] is a warm-up: no row */
	*v = (dv_server_cost_t){.measured = true,
	                        .ok = true,
	                        .answers = 4000,
	                        .cpu_user_s = 0.01,
	                        .cpu_sys_s = 0.03,
	                        .vcsw = 100,
	                        .ivcsw = 4,
	                        .rss_end_kb = 5000,
	                        .rss_peak_kb = 6000,
	                        .sys_ok = true};
	v->sys[DV_SYS_ALL] = 8002;
	s->passes[2].res.server = (dv_server_cost_t){.measured = true, .ok = false};
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_string_equal(field(&t, 0, "server_cpu_user_s"), "0.010");
	assert_string_equal(field(&t, 0, "server_cpu_sys_s"), "0.030");
	assert_string_equal(field(&t, 0, "server_us_per_answer"), "10.000");
	assert_string_equal(field(&t, 0, "server_csw_per_answer"), "0.0260");
	assert_string_equal(field(&t, 0, "server_syscalls_per_answer"), "2.0005");
	assert_string_equal(field(&t, 0, "server_rss_end_kb"), "5000");
	assert_string_equal(field(&t, 0, "server_rss_peak_kb"), "6000");
	assert_string_equal(field(&t, 1, "server_us_per_answer"), "");
	assert_string_equal(field(&t, 1, "server_rss_peak_kb"), "");
	dv_csv_table_free(&t);
	free_study(s);
}

/*
 * Header version 3 (issues 12 and 13): a DoT study's connection figures and a capacity
 * search's figure, exactly; a file of version 2 keeps its layout (no version 3 columns).
 */
static void test_v3_streams_capacity(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char *text;
	(void)state;

	s->run.stream = true;
	s->run.tp.kind = DV_TP_DOT;
	dv_pass_result_t *r = &s->passes[1].res;
	r->stats.c.conn_opened = 8;
	r->stats.c.conn_failed = 1;
	r->stats.c.conn_reset = 2;
	r->stats.c.conn_closed = 3;
	r->stats.c.tls_full = 5;
	r->stats.c.tls_resumed = 3;
	r->stats.c.http_non200 = 4;
	dv_hist_init(&r->stats.connect);
	dv_hist_init(&r->stats.handshake);
	for (int k = 0; k < 8; k++) {
		dv_hist_add(&r->stats.connect, 100000); /* a bucket boundary: exact */
		/* p50: 1 ms's bucket, read back as its value within it (1.001472 ms) */
		dv_hist_add(&r->stats.handshake, k < 7 ? 1000000 : 4000000);
	}
	s->passes[2].cap = (dv_capacity_figure_t){
	    .searched = true, .capacity_qps = 16000, .generator_bound = true, .steps = 4};
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_non_null(
	    strstr(text, ",0,0,0,0,0,0,dot,8,1,2,3,5,3,0.100000,0.100000,1.001472,"
	                 "4.000000,250.000,4,,,,,,,,,,,,,,,,,,0,0,0,0,0,0,0,0,0,0" V7_ZEROS "\n"));
	assert_non_null(strstr(text,
	                       ",0,0,0,0,0,0,dot,0,0,0,0,0,0,,,,,,0,16000.000,"
	                       "generator-bound,,,,,,,,,,,,,,,,0,0,0,0,0,0,0,0,0,0" V7_ZEROS "\n"));
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 7);
	assert_string_equal(field(&t, 0, "transport"), "dot");
	assert_string_equal(field(&t, 0, "conn_opened"), "8");
	assert_string_equal(field(&t, 0, "handshake_p99_ms"), "4.000000");
	assert_string_equal(field(&t, 0, "queries_per_conn"), "250.000");
	assert_string_equal(field(&t, 0, "capacity_verdict"), "");
	assert_string_equal(field(&t, 1, "capacity_qps"), "16000.000");
	dv_csv_table_free(&t);

	/* the other verdicts */
	dv_capacity_figure_t *f = &s->passes[2].cap;
	f->generator_bound = false;
	assert_string_equal(dv_capacity_figure_verdict(f), "unconfirmed");
	f->confirmed = true;
	assert_string_equal(dv_capacity_figure_verdict(f), "confirmed");
	f->hit_to = true;
	assert_string_equal(dv_capacity_figure_verdict(f), "to-reached");
	f->capacity_qps = 0;
	f->hit_to = false;
	assert_string_equal(dv_capacity_figure_verdict(f), "none");

	/* A version 2 history keeps its 30 columns. */
	char old[1024];
	snprintf(old, sizeof(old), "%s\n", dv_csv_header_version(2));
	write_all(path, old);
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_file_version(path, &err), 2);
	text = read_all(path);
	assert_null(strstr(text, "dot"));
	assert_non_null(strstr(text, ",2.000,0,0,0,0,0,0\n"));
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 2);
	assert_int_equal(t.n, 2);
	assert_string_equal(field(&t, 0, "transport"), "");
	dv_csv_table_free(&t);
	free_study(s);
}

static void test_quoting_round_trip(void **state)
{
	dv_study_t *s = make_study("lab, \"x\"\nnext");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char *text;
	(void)state;

	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_non_null(strstr(text, ",\"lab, \"\"x\"\"\nnext\",127.0.0.1:5300,"));
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(field(&t, 1, "target"), "lab, \"x\"\nnext");
	assert_string_equal(field(&t, 1, "interrupted"), "0");
	dv_csv_table_free(&t);
	free_study(s);
}

/*
 * history-upgrade: a version 1 file (a quoted field with a comma, a quote and a line break
 * among its rows) rewritten under the current header: every field kept, the newer columns
 * empty, the permission bits kept; then appended to in the current layout. A current file
 * is not written; a foreign or broken one is refused and left as it was.
 */
static void test_upgrade(void **state)
{
	dv_study_t *s = make_study("lab, \"x\"\nnext");
	dv_err_t err = {{0}};
	dv_csv_table_t before, after;
	char old[4096], *text, *again;
	unsigned from = 99;
	size_t rows = 99;
	struct stat st;
	(void)state;

	/* A version 1 file with our own quoting: two rows appended to its header. */
	snprintf(old, sizeof(old), "%s\n" V1_ROW, dv_csv_header_version(1));
	write_all(path, old);
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(dv_csv_read(path, &before, &err), 0);
	assert_int_equal(before.version, 1);

	assert_int_equal(dv_csv_upgrade(path, &from, &rows, &err), 0);
	assert_int_equal(from, 1);
	assert_int_equal(rows, 3);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	text = read_all(path);
	assert_int_equal(strncmp(text, dv_csv_header(), strlen(dv_csv_header())), 0);
	assert_int_equal(text[strlen(dv_csv_header())], '\n');
	assert_non_null(strstr(text, ",\"lab, \"\"x\"\"\nnext\",127.0.0.1:5300,"));
	assert_int_equal(dv_csv_read(path, &after, &err), 0);
	assert_int_equal(after.version, DV_CSV_VERSION);
	assert_int_equal(after.n, 3);
	for (size_t r = 0; r < after.n; r++)
		for (size_t c = 0; c < dv_csv_ncolumns; c++)
			assert_string_equal(after.rows[r][c], before.rows[r][c]);
	dv_csv_table_free(&before);
	dv_csv_table_free(&after);

	/* Current now: nothing to do, the file not rewritten. */
	assert_int_equal(dv_csv_upgrade(path, &from, &rows, &err), 0);
	assert_int_equal(from, DV_CSV_VERSION);
	assert_int_equal(rows, 3);
	again = read_all(path);
	assert_string_equal(again, text);
	free(again);
	/* Appended to in the current layout from now on. */
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_read(path, &after, &err), 0);
	assert_int_equal(after.n, 5);
	assert_string_equal(field(&after, 4, "conn_no_port"), "0");
	assert_string_equal(field(&after, 0, "conn_no_port"), "");
	dv_csv_table_free(&after);
	free(text);

	/* Refused and untouched: a foreign first line, a broken row, not a regular file. */
	write_all(path, "date,host\n1,2\n");
	assert_int_equal(dv_csv_upgrade(path, &from, &rows, &err), -EPROTO);
	assert_int_equal(from, 0);
	text = read_all(path);
	assert_string_equal(text, "date,host\n1,2\n");
	free(text);
	snprintf(old, sizeof(old), "%s\n" V1_ROW "a,b\n", dv_csv_header_version(1));
	write_all(path, old);
	assert_int_equal(dv_csv_upgrade(path, &from, &rows, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":3: wrong number of fields"));
	text = read_all(path);
	assert_string_equal(text, old);
	free(text);
	assert_int_equal(dv_csv_upgrade("/dev/null", &from, &rows, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/dev/null: not a regular file"));
	assert_int_equal(dv_csv_upgrade("/nonexistent/h.csv", &from, &rows, &err), -ENOENT);
	free_study(s);
}

static void test_bad_rows(void **state)
{
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char buf[2048];
	(void)state;

	snprintf(buf, sizeof(buf), "%s\na,b,c\n", dv_csv_header());
	write_all(path, buf);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":2: wrong number of fields"));
	snprintf(buf, sizeof(buf), "%s\n\"unterminated\n", dv_csv_header());
	write_all(path, buf);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "unterminated"));
	assert_int_equal(dv_csv_read("/nonexistent/h.csv", &t, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/h.csv: "));
}

static void test_unwritable(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	(void)state;

	assert_true(dv_csv_append(s, "/nonexistent-dir/h.csv", &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/h.csv"));
	free_study(s);
}

/*
 * Header version 5 (issue 23): the user/system split, the start RSS, a shared CPU and the
 * server's own counters, exactly; the counters empty when not read, the cache ones when
 * the kind has none. A version 4 file keeps its 52 columns and reads with them empty.
 */
static void test_v5_server(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char old[1024], *text;
	(void)state;

	dv_server_cost_t *v = &s->passes[1].res.server;
	*v = (dv_server_cost_t){.measured = true,
	                        .ok = true,
	                        .proc = true,
	                        .answers = 4000,
	                        .cpu_user_s = 0.01,
	                        .cpu_sys_s = 0.03,
	                        .rss_start_kb = 4096,
	                        .shares_cpu = true,
	                        .stats = true,
	                        .stats_ok = true,
	                        .stats_cache = true,
	                        .stats_queries = 4000,
	                        .stats_hits = 1000,
	                        .stats_misses = 3000};
	/* pass 2: counters only (--server-pid none), of a kind without cache counters */
	s->passes[2].res.server = (dv_server_cost_t){
	    .measured = true, .stats = true, .stats_ok = true, .stats_queries = 3990};
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 7);
	assert_string_equal(field(&t, 0, "server_user_us_per_answer"), "2.500");
	assert_string_equal(field(&t, 0, "server_sys_us_per_answer"), "7.500");
	assert_string_equal(field(&t, 0, "server_us_per_answer"), "10.000");
	assert_string_equal(field(&t, 0, "server_rss_start_kb"), "4096");
	assert_string_equal(field(&t, 0, "server_shares_cpu"), "1");
	assert_string_equal(field(&t, 0, "server_queries"), "4000");
	assert_string_equal(field(&t, 0, "server_cache_hits"), "1000");
	assert_string_equal(field(&t, 0, "server_cache_misses"), "3000");
	assert_string_equal(field(&t, 0, "server_misses_per_query"), "0.7500");
	assert_string_equal(field(&t, 1, "server_us_per_answer"), "");
	assert_string_equal(field(&t, 1, "server_shares_cpu"), "");
	assert_string_equal(field(&t, 1, "server_queries"), "3990");
	assert_string_equal(field(&t, 1, "server_cache_hits"), "");
	assert_string_equal(field(&t, 1, "server_misses_per_query"), "");
	dv_csv_table_free(&t);

	/* counters asked but not read: empty */
	s->passes[2].res.server.stats_ok = false;
	snprintf(old, sizeof(old), "%s\n", dv_csv_header_version(4));
	write_all(path, old);
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_file_version(path, &err), 4);
	text = read_all(path);
	assert_null(strstr(text, "server_queries"));
	assert_non_null(strstr(text, ",0.010,0.030,10.000,0.0000,,0,0\n")); /* 52 columns */
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 4);
	assert_int_equal(t.n, 2);
	assert_string_equal(field(&t, 0, "server_us_per_answer"), "10.000");
	for (size_t r = 0; r < t.n; r++)
		for (size_t c = DV_CSV_V4_COLUMNS; c < dv_csv_ncolumns; c++)
			assert_string_equal(t.rows[r][c], "");
	dv_csv_table_free(&t);
	free_study(s);
}

/* Version 6's counters in file order, each the DV_COUNTERS entry of that name. */
static const char *const v6_cols[] = {
    "conn_refused",     "conn_timeouts", "conn_no_port",  "conn_syn_retries", "conn_backoffs",
    "conn_idle_closed", "conn_lost",     "untimed_no_tx", "untimed_no_rx",    "untimed_order"};

/* Fields of each line of text (no quoted fields in it): commas + 1. */
static void assert_fields_per_line(const char *text, size_t want)
{
	size_t n = 1;

	for (const char *q = text; *q != '\0'; q++) {
		if (*q == ',')
			n++;
		else if (*q == '\n') {
			assert_int_equal(n, want);
			n = 1;
		}
	}
}

/*
 * Header version 6: why connection attempts failed (refused, timed out, no local port; each a
 * part of conn_failed), how they were retried (SYNs sent again, backoffs), how connections
 * ended (idle, queries lost with them) and the wire clock's untimed answers by why, each its
 * own counter's value, exactly. A version 5 file keeps its 60 columns: its rows carry none of
 * them, and read back with them empty (not recorded), as plot reads every version.
 */
static void test_v6_conn_split(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t;
	char old[1024], rows[4096], *text;
	(void)state;

	s->run.stream = true;
	s->run.tp.kind = DV_TP_DOT;
	dv_counters_t *c = &s->passes[1].res.stats.c; /* passes[0] is a warm-up: no row */
	c->conn_opened = 40;
	c->conn_refused = 3;
	c->conn_timeouts = 5;
	c->conn_no_port = 7;
	c->conn_failed = 3 + 5 + 7 + 2; /* 2 handshakes failed: in none of the three */
	c->conn_syn_retries = 11;
	c->conn_backoffs = 13;
	c->conn_idle_closed = 17;
	c->conn_lost = 19;
	c->untimed_no_tx = 23;
	c->untimed_no_rx = 29;
	c->untimed_order = 31;
	c->wire_timed = 1990 - 23 - 29 - 31;
	s->passes[2].res.stats.c.conn_no_port = 1000; /* the hot pass: only no port */
	s->passes[2].res.stats.c.conn_failed = 1000;
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_fields_per_line(text, 98);
	assert_non_null(strstr(text, ",dot,40,17,0,0,0,0,"));
	assert_non_null(strstr(text, ",,,,,,,,,,,,,,,,,,3,5,7,11,13,17,19,23,29,31" V7_ZEROS "\n"));
	assert_non_null(strstr(text, ",,,,,,,,,,,,,,,,,,0,0,1000,0,0,0,0,0,0,0" V7_ZEROS "\n"));
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 7);
	assert_int_equal(t.n, 2);
	for (size_t j = 0; j < DV_ARRAY_SIZE(v6_cols); j++) {
		const dv_counter_field_t *f = dv_csv_counter(v6_cols[j]);
		assert_non_null(f);
		assert_string_equal(f->name, v6_cols[j]); /* its results-file key */
		assert_int_equal(dv_csv_column(v6_cols[j]), DV_CSV_V5_COLUMNS + j);
	}
	assert_string_equal(field(&t, 0, "conn_failed"), "17");
	assert_string_equal(field(&t, 0, "conn_refused"), "3");
	assert_string_equal(field(&t, 0, "conn_timeouts"), "5");
	assert_string_equal(field(&t, 0, "conn_no_port"), "7");
	assert_string_equal(field(&t, 0, "conn_syn_retries"), "11");
	assert_string_equal(field(&t, 0, "conn_backoffs"), "13");
	assert_string_equal(field(&t, 0, "conn_idle_closed"), "17");
	assert_string_equal(field(&t, 0, "conn_lost"), "19");
	assert_string_equal(field(&t, 0, "wire_timed"), "1907");
	assert_string_equal(field(&t, 0, "untimed_no_tx"), "23");
	assert_string_equal(field(&t, 0, "untimed_no_rx"), "29");
	assert_string_equal(field(&t, 0, "untimed_order"), "31");
	assert_string_equal(field(&t, 1, "conn_failed"), "1000");
	assert_string_equal(field(&t, 1, "conn_no_port"), "1000");
	assert_string_equal(field(&t, 1, "conn_refused"), "0");
	assert_string_equal(field(&t, 1, "conn_timeouts"), "0");
	dv_csv_table_free(&t);

	snprintf(old, sizeof(old), "%s\n", dv_csv_header_version(5));
	write_all(path, old);
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_file_version(path, &err), 5);
	text = read_all(path);
	assert_int_equal(strncmp(text, old, strlen(old)), 0); /* its header kept */
	assert_null(strstr(text, "conn_refused"));
	assert_null(strstr(text, ",3,5,7,"));
	assert_fields_per_line(text, 60);
	assert_non_null(strstr(text, ",dot,40,17,0,0,0,0,"));
	assert_non_null(strstr(text, ",,,,,,,,,,,,,,,,,\n")); /* ends with version 5's */
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 5);
	assert_int_equal(t.n, 2);
	assert_string_equal(field(&t, 0, "conn_failed"), "17");
	for (size_t r = 0; r < t.n; r++)
		for (size_t col = DV_CSV_V5_COLUMNS; col < dv_csv_ncolumns; col++)
			assert_string_equal(t.rows[r][col], "");
	dv_csv_table_free(&t);
	/* A version 5 file appended to again: still its layout, rows added. */
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 5);
	assert_int_equal(t.n, 4);
	dv_csv_table_free(&t);
	/* A version 7 row under the version 5 header is a wrong row (98 fields, not 60). */
	unlink(path);
	assert_int_equal(dv_csv_append(s, path, &err), 0); /* a new file: version 7 */
	text = read_all(path);
	snprintf(rows, sizeof(rows), "%s\n%s", dv_csv_header_version(5), strchr(text, '\n') + 1);
	free(text);
	write_all(path, rows);
	assert_int_equal(dv_csv_read(path, &t, &err), -EPROTO);
	assert_non_null(strstr(err.msg, ":2: wrong number of fields"));
	free_study(s);
}

/* Version 7's counters in file order, each the DV_COUNTERS entry of that name. */
static const char *const v7_cols[] = {
    "unexpected",     "malformed",         "truncated",     "icmp_errors",   "conn_reopened",
    "conn_abandoned", "conn_proto_errors", "conn_recycled", "stream_errors", "http_4xx",
    "http_5xx",       "tc_retried",        "tc_completed",  "tc_lost",       "tc_not_sent",
    "tc_no_conn",     "forfeited",         "sent_behind",   "server_holds",  "tsig_unsigned",
    "tsig_badsig",    "tsig_badkey",       "tsig_badtime",  "tsig_badmac",   "tsig_other_error",
    "stamps_asked",   "rx_stamps_unused",  "xdp_stamped"};

/*
 * Header version 7: every other counter that says what went wrong or how a figure is to be
 * read, each its own counter's value, in file order after version 6's. A version 6 file keeps
 * its 70 columns (its rows carry none of them and read back with them empty), and
 * history-upgrade takes it to version 7 with every field kept and the new ones empty.
 */
static void test_v7_counters(void **state)
{
	dv_study_t *s = make_study("t1");
	dv_err_t err = {{0}};
	dv_csv_table_t t, up;
	char old[2048], want[32], *text;
	unsigned from = 0;
	size_t rows = 0;
	(void)state;

	assert_int_equal(DV_ARRAY_SIZE(v7_cols), 28);
	for (size_t j = 0; j < DV_ARRAY_SIZE(v7_cols); j++) {
		const dv_counter_field_t *f = dv_csv_counter(v7_cols[j]);
		assert_non_null(f);
		assert_string_equal(f->name, v7_cols[j]); /* its results-file key */
		assert_int_equal(dv_csv_column(v7_cols[j]), DV_CSV_V6_COLUMNS + j);
		/* the cold pass (passes[1]; passes[0] is a warm-up: no row) gets 100 + j */
		*dv_counter_ptr(&s->passes[1].res.stats.c, f) = 100 + j;
	}
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	text = read_all(path);
	assert_fields_per_line(text, 98);
	assert_non_null(strstr(text, ",100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,"
	                             "115,116,117,118,119,120,121,122,123,124,125,126,127\n"));
	assert_non_null(strstr(text, ",0,0,0,0,0,0,0,0,0,0" V7_ZEROS "\n")); /* the hot pass */
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 7);
	assert_int_equal(t.n, 2);
	for (size_t j = 0; j < DV_ARRAY_SIZE(v7_cols); j++) {
		snprintf(want, sizeof(want), "%zu", 100 + j);
		assert_string_equal(field(&t, 0, v7_cols[j]), want);
		assert_string_equal(field(&t, 1, v7_cols[j]), "0");
	}
	dv_csv_table_free(&t);

	/* A version 6 file: appended to in its own layout, read back with version 7's empty. */
	snprintf(old, sizeof(old), "%s\n", dv_csv_header_version(6));
	write_all(path, old);
	assert_int_equal(dv_csv_append(s, path, &err), 0);
	assert_int_equal(dv_csv_file_version(path, &err), 6);
	text = read_all(path);
	assert_int_equal(strncmp(text, old, strlen(old)), 0);
	assert_null(strstr(text, "malformed"));
	assert_fields_per_line(text, 70);
	free(text);
	assert_int_equal(dv_csv_read(path, &t, &err), 0);
	assert_int_equal(t.version, 6);
	for (size_t r = 0; r < t.n; r++)
		for (size_t col = DV_CSV_V6_COLUMNS; col < dv_csv_ncolumns; col++)
			assert_string_equal(t.rows[r][col], "");

	/* history-upgrade: version 6 -> 7, every field kept, version 7's columns empty. */
	assert_int_equal(dv_csv_upgrade(path, &from, &rows, &err), 0);
	assert_int_equal(from, 6);
	assert_int_equal(rows, 2);
	assert_int_equal(dv_csv_read(path, &up, &err), 0);
	assert_int_equal(up.version, 7);
	assert_int_equal(up.n, t.n);
	for (size_t r = 0; r < up.n; r++)
		for (size_t c = 0; c < dv_csv_ncolumns; c++)
			assert_string_equal(up.rows[r][c], t.rows[r][c]);
	text = read_all(path);
	assert_fields_per_line(text, 98);
	free(text);
	dv_csv_table_free(&t);
	dv_csv_table_free(&up);
	free_study(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_header_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_counter_columns, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_empty_file_gets_header, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_header_mismatch_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_date_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_old_header_appended, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_v3_streams_capacity, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_new_columns_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_quoting_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_rows, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_v4_server, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_v5_server, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_v6_conn_split, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_v7_counters, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
