/* test_stream: a pass over TCP connections (engine/stream.c) against a scripted in-process server:
 * resets, closes, refusals and --queries-per-conn, with exact counts. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/run.h"
#include "engine/stream.h"
#include "results/report.h"
#include "input/querylist.h"
#include "streampass.h"

/* What the server does with one connection. */
typedef enum { S_ANSWER = 0, S_RESET_AFTER_READ, S_CLOSE_AFTER_READ } script_t;

typedef struct server {
	int lfd;
	uint16_t port;
	script_t first;    /* the first connection's script; the rest answer everything */
	unsigned read_n;   /* RESET/CLOSE: after reading this many queries, unanswered */
	unsigned conns;    /* accepted */
	unsigned received; /* queries read (atomic: with concurrent, by several threads) */
	unsigned answered;
	pthread_t thread;
	bool concurrent; /* a thread per connection (at most MAX_CONN_THREADS) instead of one
	                  * connection at a time */
	pthread_t conn_thread[64];
	struct conn_arg {
		struct server *s;
		int fd;
	} conn_arg[64];
} server_t;

#define MAX_CONN_THREADS 64

/* Read exactly n bytes; false at EOF or an error. */
static bool read_full(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* One query: its frame into buf; false when the client went away. */
static bool read_query(int fd, uint8_t *buf, size_t *len)
{
	uint8_t hdr[2];

	if (!read_full(fd, hdr, 2))
		return false;
	*len = (size_t)hdr[0] << 8 | hdr[1];
	return *len >= 12 && *len < 600 && read_full(fd, buf, *len);
}

/* Answer: the query with QR set, NOERROR, no records. */
static bool answer(int fd, uint8_t *buf, size_t len)
{
	uint8_t out[602];

	buf[2] |= 0x80;
	out[0] = (uint8_t)(len >> 8);
	out[1] = (uint8_t)len;
	memcpy(out + 2, buf, len);
	return write(fd, out, len + 2) == (ssize_t)(len + 2);
}

static void serve_conn(server_t *s, int fd, script_t sc)
{
	uint8_t buf[600];
	size_t len;
	unsigned n = 0;

	while (read_query(fd, buf, &len)) {
		__atomic_add_fetch(&s->received, 1, __ATOMIC_RELAXED);
		n++;
		if (sc != S_ANSWER && n == s->read_n) {
			if (sc == S_RESET_AFTER_READ) {
				struct linger lg = {1, 0};
				setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			}
			break;
		}
		if (sc == S_ANSWER) {
			if (!answer(fd, buf, len))
				break;
			__atomic_add_fetch(&s->answered, 1, __ATOMIC_RELAXED);
		}
	}
	close(fd);
}

static void *conn_main(void *arg)
{
	struct conn_arg *a = arg;

	serve_conn(a->s, a->fd, S_ANSWER);
	return NULL;
}

/* One connection at a time, in order (or each in a thread of its own: concurrent), until the
 * listening socket is shut down. */
static void *server_main(void *arg)
{
	server_t *s = arg;
	int fd;

	while ((fd = accept(s->lfd, NULL, NULL)) >= 0) {
		s->conns++;
		if (!s->concurrent) {
			serve_conn(s, fd, s->conns == 1 ? s->first : S_ANSWER);
		} else if (s->conns > MAX_CONN_THREADS) {
			close(fd);
		} else {
			s->conn_arg[s->conns - 1] = (struct conn_arg){s, fd};
			if (pthread_create(&s->conn_thread[s->conns - 1], NULL, conn_main,
			                   &s->conn_arg[s->conns - 1]) != 0)
				abort();
		}
	}
	return NULL;
}

static void server_start(server_t *s, script_t first, unsigned read_n)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->first = first;
	s->read_n = read_n;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->lfd, 16), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &alen), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void server_stop(server_t *s)
{
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->lfd);
	for (unsigned i = 0; s->concurrent && i < s->conns && i < MAX_CONN_THREADS; i++)
		pthread_join(s->conn_thread[i], NULL); /* the client closed them all */
}

/* One pass: -m tcp -c 1 -q q -t 1 against port, list of n queries. */
static int run(uint16_t port, unsigned n, uint32_t q, uint64_t qpc, dv_pass_result_t *res,
               dv_err_t *err)
{
	dv_run_config_t cfg;
	dv_querylist_t ql;
	int rc;

	stream_config(&cfg, port, q, DV_NS_PER_S);
	cfg.tp.kind = DV_TP_TCP;
	cfg.queries_per_conn = qpc;
	load_list(&ql, n);
	memset(res, 0, sizeof(*res));
	rc = dv_run_pass(&cfg, &ql, res, err);
	dv_querylist_free(&ql);
	return rc;
}

/* A reset after the first 5 queries were read: those 5 are lost with their connection,
 * the connection is reopened and carries the other 15; nothing is sent twice. */
static void test_reset_reopens(void **state)
{
	server_t s;
	dv_pass_result_t res;
	dv_err_t err;
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	server_start(&s, S_RESET_AFTER_READ, 5);
	assert_int_equal(run(s.port, 20, 5, 0, &res, &err), 0);
	server_stop(&s);
	assert_int_equal(c->sent, 20);
	assert_int_equal(s.received, 20);
	assert_int_equal(c->completed, 15);
	assert_int_equal(s.answered, 15);
	assert_int_equal(c->lost, 5);
	assert_int_equal(c->conn_lost, 5);
	assert_int_equal(c->conn_reset, 1);
	assert_int_equal(c->conn_closed, 0);
	assert_int_equal(c->conn_opened, 2);
	assert_int_equal(c->conn_reopened, 1);
	assert_int_equal(s.conns, 2);
	assert_int_equal(c->conn_inflight_peak, 5);
	assert_int_equal(res.stats.connect.count, 2);
	dv_pass_result_free(&res);
}

/* A close (EOF) with queries in flight: closed by the server, not reset; same losses. */
static void test_close_reopens(void **state)
{
	server_t s;
	dv_pass_result_t res;
	dv_err_t err;
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	server_start(&s, S_CLOSE_AFTER_READ, 5);
	assert_int_equal(run(s.port, 20, 5, 0, &res, &err), 0);
	server_stop(&s);
	assert_int_equal(c->sent, 20);
	assert_int_equal(c->completed, 15);
	assert_int_equal(c->lost, 5);
	assert_int_equal(c->conn_lost, 5);
	assert_int_equal(c->conn_reset, 0);
	assert_int_equal(c->conn_closed, 1);
	assert_int_equal(c->conn_idle_closed, 0);
	assert_int_equal(c->conn_reopened, 1);
	dv_pass_result_free(&res);
}

/* --queries-per-conn 4 over a list of 20: five connections of four, each closed by us
 * once answered; no reopen after the list is sent. */
static void test_queries_per_conn(void **state)
{
	server_t s;
	dv_pass_result_t res;
	dv_err_t err;
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	server_start(&s, S_ANSWER, 0);
	assert_int_equal(run(s.port, 20, 5, 4, &res, &err), 0);
	server_stop(&s);
	assert_int_equal(c->completed, 20);
	assert_int_equal(c->lost, 0);
	assert_int_equal(c->conn_opened, 5);
	assert_int_equal(c->conn_reopened, 4);
	assert_int_equal(c->conn_abandoned, 0);
	assert_int_equal(c->conn_recycled, 5);
	assert_int_equal(c->conn_lost, 0);
	assert_int_equal(c->conn_inflight_peak, 4);
	assert_int_equal(s.conns, 5);
	dv_pass_result_free(&res);
}

/*
 * Eight connections at once, each closed by us after 2 answers and opened again at once: 20
 * to 28 sockets in turn in the worker's epoll set, every new one added while the others' events
 * are pending, often under the descriptor number of the one just closed (its events must
 * not reach the new socket, nor a closed connection's reach nothing). Nothing lost, nothing
 * twice.
 */
static void test_many_conns_recycled(void **state)
{
	server_t s;
	dv_pass_result_t res;
	dv_err_t err;
	dv_run_config_t cfg;
	dv_querylist_t ql;
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	server_start(&s, S_ANSWER, 0);
	s.concurrent = true; /* before its first accept: nothing connected yet */
	stream_config(&cfg, s.port, 8, DV_NS_PER_S);
	cfg.tp.kind = DV_TP_TCP;
	cfg.sockets = 8;
	cfg.queries_per_conn = 2;
	load_list(&ql, 40);
	memset(&res, 0, sizeof(res));
	assert_int_equal(dv_run_pass(&cfg, &ql, &res, &err), 0);
	dv_querylist_free(&ql);
	server_stop(&s);
	assert_int_equal(c->sent, 40);
	assert_int_equal(c->completed, 40);
	assert_int_equal(s.answered, 40);
	assert_int_equal(c->lost, 0);
	assert_int_equal(c->conn_failed, 0);
	assert_int_equal(c->conn_lost, 0);
	assert_int_equal(c->conn_reset + c->conn_closed + c->conn_proto_errors, 0);
	assert_int_equal(c->conn_inflight_peak, 1);
	/* Every recycled socket (2 queries each) was one the server accepted. The two sides'
	 * connection counts need not agree: the client counts a connect when it sees it end,
	 * so one the kernel completed as the list ran out is the server's alone, and one the
	 * client closed while it sat in the accept queue is the client's alone (under a hog,
	 * accepted 20-23 against opened 22-26). 20 carried 2 queries each unless the list
	 * ran out under some (then still open: never recycled); a socket reopened while the
	 * list was not done yet may have taken none. */
	assert_true(s.conns >= c->conn_recycled);
	/* The client's own counts: a reopen is counted when it starts and a connection when
	 * its connect ends, so a reopen begun as the list ran out may never be opened: 8
	 * first connects and the reopens bound the opened; every reopen followed a recycle
	 * (nothing was reset, closed or lost). */
	assert_true(c->conn_opened <= 8 + c->conn_reopened);
	assert_true(c->conn_reopened <= c->conn_recycled);
	assert_in_range(c->conn_recycled, 16, 20);
	assert_in_range(c->conn_opened, 20, 28);
	dv_pass_result_free(&res);
}

/* Nothing listening: the pass stops at once with the reason, counted as refused. */
static void test_refused_is_an_error(void **state)
{
	server_t s;
	dv_pass_result_t res;
	dv_err_t err;
	uint16_t port;

	(void)state;
	server_start(&s, S_ANSWER, 0);
	port = s.port;
	server_stop(&s); /* the port is free again */
	assert_int_not_equal(run(port, 20, 5, 0, &res, &err), 0);
	assert_non_null(strstr(err.msg, "TCP connection to the server failed: cannot connect: "
	                                "Connection refused"));
	dv_pass_result_free(&res);
}

/*
 * A failed attempt's cause from its errno and where it came: no local port is connect()'s
 * EADDRNOTAVAIL (a datagram socket's autobind: EAGAIN) or a port-0 bind()'s EADDRINUSE;
 * bind()'s EADDRNOTAVAIL is an address the host lacks, and a handshake's or a socket()'s
 * errors are neither; ECONNREFUSED is refused wherever it comes.
 */
static void test_fail_cause(void **state)
{
	static const struct {
		int err;
		dv_sw_stage_t stage;
		dv_sw_fail_t want;
	} rows[] = {
	    {EADDRNOTAVAIL, DV_SW_AT_CONNECT, DV_SW_FAIL_NO_PORT},
	    {EAGAIN, DV_SW_AT_CONNECT, DV_SW_FAIL_NO_PORT},
	    {EADDRINUSE, DV_SW_AT_BIND_PORT0, DV_SW_FAIL_NO_PORT},
	    {EADDRINUSE, DV_SW_AT_SOCKET, DV_SW_FAIL_OTHER}, /* a port asked for: taken */
	    {EADDRNOTAVAIL, DV_SW_AT_BIND_PORT0, DV_SW_FAIL_OTHER},
	    {EADDRNOTAVAIL, DV_SW_AT_SOCKET, DV_SW_FAIL_OTHER},
	    {EADDRNOTAVAIL, DV_SW_AT_LATER, DV_SW_FAIL_OTHER},
	    {EMFILE, DV_SW_AT_SOCKET, DV_SW_FAIL_OTHER},
	    {ECONNREFUSED, DV_SW_AT_CONNECT, DV_SW_FAIL_REFUSED},
	    {ECONNREFUSED, DV_SW_AT_LATER, DV_SW_FAIL_REFUSED},
	    {ETIMEDOUT, DV_SW_AT_CONNECT, DV_SW_FAIL_OTHER},
	    {ENETUNREACH, DV_SW_AT_CONNECT, DV_SW_FAIL_OTHER},
	    {0, DV_SW_AT_LATER, DV_SW_FAIL_OTHER},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(dv_sw_fail_cause(rows[i].err, rows[i].stage), rows[i].want);
}

/* The Connections line counts them apart, and a line of their own says what to do. */
static void test_no_port_report(void **state)
{
	dv_pass_result_t r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	memset(&r, 0, sizeof(r));
	dv_stats_init(&r.stats);
	r.stats.c.conn_opened = 8;
	r.stats.c.conn_failed = 45;
	r.stats.c.conn_refused = 2;
	r.stats.c.conn_timeouts = 1;
	r.stats.c.conn_no_port = 42;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	dv_report_connections(f, &r);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text,
	                       "\n  Connections:          opened 8 (reopened 0), failed 45 "
	                       "(refused 2, timed out 1, no local port 42), abandoned 0\n"
	                       "  No local port:        42 attempts (every port "
	                       "of net.ipv4.ip_local_port_range was in use toward the server, "
	                       "typically held in TIME_WAIT by connections closed before, this "
	                       "run's or earlier ones'): widen the range, open fewer "
	                       "connections (-c) or from more addresses (--client-range), "
	                       "reopen less (--queries-per-conn), or wait for TIME_WAIT to end "
	                       "(60 s)\n"
	                       "  Connections ended:"));
	free(text);
	r.stats.c.conn_no_port = 0; /* none: the count, no advice */
	text = NULL;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	dv_report_connections(f, &r);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "no local port 0), abandoned 0\n  Connections ended:"));
	free(text);
}

static uint32_t tc_seen[8], n_tc_seen;

static void tc_hook(void *ctx, uint32_t qidx)
{
	(void)ctx;
	tc_seen[n_tc_seen++ % 8] = qidx;
}

/* --tc-tcp's engine side: a completed answer with TC set hands its list index to the
 * hook (one without TC does not), and a query of a given list index can be prepared. */
static void test_tc_hook(void **state)
{
	dv_querylist_t ql;
	dv_engine_t e;
	uint8_t b[DV_MAX_QUERY_LEN];
	unsigned len, i;

	(void)state;
	load_list(&ql, 4);
	assert_int_equal(dv_engine_init(&e, &ql, 8, DV_NS_PER_S, 0, 1, 0), 0);
	e.tc_fn = tc_hook;
	n_tc_seen = 0;
	for (i = 0; i < 2; i++) {
		dv_engine_prepare_qidx(&e, 0, 100, 3 - i, b, &len); /* entries 3, then 2 */
		assert_int_equal(dv_engine_sent(&e, (uint8_t(*)[DV_MAX_QUERY_LEN])b, 1, 1, 0, 100),
		                 false);
		b[2] |= 0x80;              /* QR */
		b[2] |= i == 0 ? 0x02 : 0; /* TC on the first answer only */
		dv_engine_receive(&e, 0, b, len, true, 200);
	}
	assert_int_equal(e.stats.c.sent, 2);
	assert_int_equal(e.stats.c.completed, 2);
	assert_int_equal(e.stats.c.truncated, 1);
	assert_int_equal(n_tc_seen, 1);
	assert_int_equal(tc_seen[0], 3);
	dv_engine_free(&e);
	dv_querylist_free(&ql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reset_reopens),    cmocka_unit_test(test_close_reopens),
	    cmocka_unit_test(test_queries_per_conn), cmocka_unit_test(test_refused_is_an_error),
	    cmocka_unit_test(test_tc_hook),          cmocka_unit_test(test_many_conns_recycled),
	    cmocka_unit_test(test_fail_cause),       cmocka_unit_test(test_no_port_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
