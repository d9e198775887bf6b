/* test_echo_kind: the stream engine runs a kind it has never heard of (the tests' own echo
 * kind: datagrams, timers, a handshake of its own) from its row alone, against a scripted
 * UDP peer: answers, its deadline timer, a silent peer, a hostile one, a closed port, with
 * exact counts. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../transport/echo_kind.h"
#include "base/dns.h"
#include "engine/run.h"
#include "input/querylist.h"
#include "streampass.h"

#define HELD_MAX 16
#define QMAX     600

/* What the peer does. */
typedef enum {
	P_ECHO,          /* HELO back, then pings, then answers every query */
	P_SILENT,        /* reads, never writes */
	P_HOSTILE_FIRST, /* the first connection's first query gets a datagram over the limit */
} pmode_t;

typedef struct peer {
	int fd;
	uint16_t port;
	pmode_t mode;
	unsigned pings; /* per connection, one at a time, each after the last one's PONG */
	atomic_bool stop;
	pthread_t thread;
	/* the connection being served: its source address */
	struct sockaddr_in client;
	unsigned pings_sent, pongs_conn;
	uint8_t held[HELD_MAX][QMAX]; /* queries kept until the pings are done */
	size_t held_len[HELD_MAX];
	unsigned nheld;
	/* counts */
	unsigned conns, hellos, pongs, queries, answered, oversize, other;
	uint8_t first[8]; /* the first datagram's first bytes */
	size_t first_len;
} peer_t;

static void reply(peer_t *p, const void *data, size_t len)
{
	(void)sendto(p->fd, data, len, 0, (const struct sockaddr *)&p->client, sizeof(p->client));
}

static void answer(peer_t *p, uint8_t *q, size_t len)
{
	q[DV_DNS_OFF_FLAGS1] |= DV_DNS_QR;
	reply(p, q, len);
	p->answered++;
}

/* The pings of this connection are done: the queries held meanwhile are answered. */
static bool pings_done(const peer_t *p)
{
	return p->pongs_conn >= p->pings;
}

static void on_query(peer_t *p, uint8_t *buf, size_t len)
{
	static uint8_t big[5000];

	p->queries++;
	if (p->mode == P_HOSTILE_FIRST && p->conns == 1) {
		if (p->oversize++ == 0)
			reply(p, big, sizeof(big));
		return;
	}
	if (!pings_done(p) && p->nheld < HELD_MAX && len <= QMAX) {
		memcpy(p->held[p->nheld], buf, len);
		p->held_len[p->nheld++] = len;
		return;
	}
	answer(p, buf, len);
}

static void on_control(peer_t *p, const uint8_t *buf)
{
	if (memcmp(buf, "HELO", 4) == 0) {
		p->hellos++;
		if (p->mode == P_SILENT)
			return;
		reply(p, "HELO", 4);
		if (p->pings_sent < p->pings) {
			p->pings_sent++;
			reply(p, "PING", 4);
		}
	} else if (memcmp(buf, "PONG", 4) == 0) {
		p->pongs++;
		p->pongs_conn++;
		if (p->pings_sent < p->pings) {
			p->pings_sent++;
			reply(p, "PING", 4);
		} else {
			for (unsigned i = 0; i < p->nheld; i++)
				answer(p, p->held[i], p->held_len[i]);
			p->nheld = 0;
		}
	} else {
		p->other++;
	}
}

static void *peer_main(void *arg)
{
	peer_t *p = arg;
	uint8_t buf[QMAX];
	struct sockaddr_in from;

	while (!atomic_load(&p->stop)) {
		struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
		socklen_t flen = sizeof(from);
		ssize_t n;
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = recvfrom(p->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
		if (n <= 0)
			continue;
		if (p->conns == 0 || from.sin_port != p->client.sin_port) { /* a new connection */
			p->conns++;
			p->client = from;
			p->pings_sent = p->pongs_conn = p->nheld = 0;
		}
		if (p->first_len == 0) {
			p->first_len = (size_t)n;
			memcpy(p->first, buf, DV_MIN((size_t)n, sizeof(p->first)));
		}
		if (n == 4)
			on_control(p, buf);
		else if (n >= DV_DNS_HEADER_LEN)
			on_query(p, buf, (size_t)n);
		else
			p->other++;
	}
	return NULL;
}

/* A UDP socket on 127.0.0.1 (port chosen by the kernel). */
static int udp_bound(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void peer_start(peer_t *p, pmode_t mode, unsigned pings)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->pings = pings;
	atomic_init(&p->stop, false);
	p->fd = udp_bound(&p->port);
	assert_int_equal(pthread_create(&p->thread, NULL, peer_main, p), 0);
}

static void peer_stop(peer_t *p)
{
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	close(p->fd);
}

/* One pass of the echo kind: -c 1 -q 5 -t 2 against port, a list of 20 queries. */
static int run(uint16_t port, dv_pass_result_t *res, dv_err_t *err)
{
	dv_run_config_t cfg;
	dv_querylist_t ql;
	int rc;

	stream_config(&cfg, port, 5, 2 * DV_NS_PER_S);
	cfg.tp.desc = &echo_desc;
	load_list(&ql, 20);
	memset(res, 0, sizeof(*res));
	memset(&echo_counts, 0, sizeof(echo_counts));
	rc = dv_run_pass(&cfg, &ql, res, err);
	dv_querylist_free(&ql);
	return rc;
}

/* A pass against a peer started for it (and stopped after); dv_run_pass's return. */
static int pass_against(peer_t *p, pmode_t mode, unsigned pings, dv_pass_result_t *res,
                        dv_err_t *err)
{
	int rc;

	peer_start(p, mode, pings);
	rc = run(p->port, res, err);
	peer_stop(p);
	return rc;
}

static void defaults(void)
{
	echo_rto_ns = 2 * DV_NS_PER_S; /* never reached while the peer answers */
	echo_ack_delay_ns = DV_NS_PER_MS;
	echo_max_retransmits = 3;
}

/* Every query answered over one connection; the handshake is the kind's own (the peer's first
 * datagram is its HELO, no TLS record around it) and counted once; the peer's three PINGs,
 * one at a time, make the connection's deadline timer fire exactly three times, each
 * sending one PONG; the queries held until then are answered after. */
static void test_answers_and_timers(void **state)
{
	peer_t p;
	dv_pass_result_t res;
	dv_err_t err = {0};
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	defaults();
	assert_int_equal(pass_against(&p, P_ECHO, 3, &res, &err), 0);
	assert_int_equal(p.first_len, 4);
	assert_memory_equal(p.first, "HELO", 4);
	assert_int_equal(c->sent, 20);
	assert_int_equal(c->completed, 20);
	assert_int_equal(c->lost, 0);
	assert_int_equal(p.queries, 20);
	assert_int_equal(p.answered, 20);
	assert_int_equal(echo_counts.answers, 20);
	assert_int_equal(c->conn_opened, 1);
	assert_int_equal(c->conn_failed, 0);
	assert_int_equal(c->tls_full, 1);
	assert_int_equal(c->tls_resumed, 0);
	assert_int_equal(res.stats.handshake.count, 1);
	assert_int_equal(p.conns, 1);
	assert_int_equal(p.hellos, 1);
	assert_int_equal(echo_counts.hellos, 1);
	assert_int_equal(echo_counts.deadlines, 3);
	assert_int_equal(echo_counts.pongs, 3);
	assert_int_equal(p.pongs, 3);
	assert_int_equal(p.other, 0);
	dv_pass_result_free(&res);
}

/* A peer that never answers: the hello goes out once and is retransmitted three times, one
 * deadline each, and the fourth deadline gives up: the one attempt fails, the pass stops
 * with the kind's own sentence. */
static void test_silent_peer(void **state)
{
	peer_t p;
	dv_pass_result_t res;
	dv_err_t err = {0};
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	defaults();
	echo_rto_ns = 5 * DV_NS_PER_MS; /* four of them well inside -t 2 */
	assert_int_not_equal(pass_against(&p, P_SILENT, 0, &res, &err), 0);
	assert_non_null(strstr(err.msg, "datagram echo connection to the server failed: no "
	                                "answer to the hello"));
	assert_int_equal(echo_counts.deadlines, 4);
	assert_int_equal(echo_counts.hellos, 4);
	assert_int_equal(p.hellos, 4);
	assert_int_equal(p.conns, 1);
	assert_int_equal(echo_counts.attached, 1);
	assert_int_equal(c->conn_failed, 1);
	assert_int_equal(c->conn_timeouts, 0);
	assert_int_equal(c->tls_full, 0);
	assert_int_equal(c->sent, 0);
	dv_pass_result_free(&res);
}

/* A datagram over DV_TP_DGRAM_MAX on the first connection: a protocol error that loses its
 * five queries in flight; the connection is reopened (a second handshake) and carries the
 * other fifteen. No deadline fires (the peer answers every hello and sends no PING). */
static void test_hostile_peer(void **state)
{
	peer_t p;
	dv_pass_result_t res;
	dv_err_t err = {0};
	const dv_counters_t *c = &res.stats.c;

	(void)state;
	defaults();
	assert_int_equal(pass_against(&p, P_HOSTILE_FIRST, 0, &res, &err), 0);
	assert_int_equal(p.oversize, 5);
	assert_int_equal(c->sent, 20);
	assert_int_equal(c->completed, 15);
	assert_int_equal(c->lost, 5);
	assert_int_equal(c->conn_lost, 5);
	assert_int_equal(c->conn_proto_errors, 1);
	assert_int_equal(c->conn_opened, 2);
	assert_int_equal(c->conn_reopened, 1);
	assert_int_equal(c->tls_full, 2);
	assert_int_equal(p.conns, 2);
	assert_int_equal(p.hellos, 2);
	assert_int_equal(p.answered, 15);
	assert_int_equal(echo_counts.deadlines, 0);
	dv_pass_result_free(&res);
}

/* Nothing on the port: the hello's ICMP error ends the one attempt as refused. */
static void test_closed_port(void **state)
{
	dv_pass_result_t res;
	dv_err_t err = {0};
	const dv_counters_t *c = &res.stats.c;
	uint16_t port;

	(void)state;
	defaults();
	close(udp_bound(&port)); /* the port is free again */
	assert_int_not_equal(run(port, &res, &err), 0);
	assert_non_null(strstr(err.msg, "datagram echo connection to the server failed: "));
	assert_non_null(strstr(err.msg, "Connection refused"));
	assert_int_equal(c->conn_failed, 1);
	assert_int_equal(c->conn_refused, 1);
	assert_int_equal(echo_counts.hellos, 1);
	assert_int_equal(echo_counts.deadlines, 0);
	dv_pass_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_answers_and_timers),
	    cmocka_unit_test(test_silent_peer),
	    cmocka_unit_test(test_hostile_peer),
	    cmocka_unit_test(test_closed_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
