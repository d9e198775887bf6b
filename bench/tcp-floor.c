/* tcp-floor: the kernel floor for DNS over TCP with many connections, closed loop. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "floor-query.h"

/*
 * What a TCP replay client with -c connections and -q queries in flight cannot
 * beat on this machine: the same system calls dnsvolley makes per query, with
 * nothing else. One thread, one level-triggered epoll set; every connection
 * keeps its share of the window in flight (-q ÷ -c, the first -q % -c one
 * more); an event on a connection is one recv(), and the answers it completed
 * are replaced at once by as many new queries in one send() on that same
 * connection (what dnsvolley's closed loop does: the slots an answer frees go
 * to the connection just read). Answers are counted by their length prefix and
 * not looked at; every query is the same (only its ID changes).
 *
 * Connections open as dnsvolley opens them: non-blocking connects, at most
 * -w in progress at a time, each sending its queries as soon as it is up. After
 * -l seconds nothing more is sent, the answers still owed are read for up to
 * -t ms, and every socket is closed. The CPU per query printed is the whole
 * process's (opening and closing included, as /usr/bin/time gives dnsvolley's)
 * over the answers; "steady" is the CPU between the moment the last connection
 * came up and the end of sending, over the answers in that span.
 */

#define QMAX     300
#define RXCAP    65536
#define CARRY    512
#define MAXEV    1024
#define DEPTHMAX 64

struct opts {
	const char *server;
	unsigned port, conns, window, connect_window, seconds_ms, timeout_ms;
	const char *qname;
};

struct conn {
	int fd;
	uint8_t up;       /* connected */
	uint8_t depth;    /* its share of the window */
	uint8_t inflight; /* queries sent and not answered */
	uint16_t have;    /* bytes of a cut answer kept in carry */
	uint8_t carry[CARRY];
};

static double cpu_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec +
	       (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tcp-floor -p PORT [-s 127.0.0.1] [-c CONNS=16] [-q WINDOW=2*CONNS]\n"
	           "                 [-l SECONDS=4] [-t DRAIN_MS=2000] [-w CONNECTS=2048] "
	           "[-n QNAME=www1.example]\n"
	           "Keeps WINDOW A queries for QNAME in flight over CONNS TCP connections\n"
	           "(closed loop) and prints answers, q/s, CPU and system calls per answer.\n");
}

static int number(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c, bad = 0;
	unsigned secs = 4;
	*o = (struct opts){.server = "127.0.0.1",
	                   .conns = 16,
	                   .connect_window = 2048,
	                   .timeout_ms = 2000,
	                   .qname = "www1.example"};
	while ((c = getopt(argc, argv, "s:p:c:q:l:t:w:n:h")) != -1) {
		switch (c) {
		case 's':
			o->server = optarg;
			break;
		case 'p':
			bad |= number(optarg, 1, 65535, &o->port);
			break;
		case 'c':
			bad |= number(optarg, 1, 1000000, &o->conns);
			break;
		case 'q':
			bad |= number(optarg, 1, 64000000, &o->window);
			break;
		case 'l':
			bad |= number(optarg, 1, 3600, &secs);
			break;
		case 't':
			bad |= number(optarg, 1, 60000, &o->timeout_ms);
			break;
		case 'w':
			bad |= number(optarg, 1, 1000000, &o->connect_window);
			break;
		case 'n':
			o->qname = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (o->window == 0)
		o->window = 2 * o->conns;
	o->seconds_ms = secs * 1000;
	if (bad || o->port == 0 || o->window < o->conns || o->window > o->conns * DEPTHMAX) {
		fprintf(stderr, "tcp-floor: bad option (-p is needed; -c <= -q <= %d * -c)\n",
		        DEPTHMAX);
		usage(stderr);
		return -1;
	}
	return 0;
}

struct floor {
	struct opts o;
	struct sockaddr_in sa;
	struct conn *c;
	int ep;
	unsigned next_open, connecting, up;
	uint8_t q[QMAX];
	int qlen;
	uint16_t id;
	int sending;
	uint64_t sent, answered, syscalls, opened;
};

static int open_next(struct floor *f)
{
	unsigned i = f->next_open++;
	struct conn *c = &f->c[i];
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		perror("tcp-floor: socket");
		return -1;
	}
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	f->syscalls += 2;
	if (connect(c->fd, (struct sockaddr *)&f->sa, sizeof(f->sa)) < 0 && errno != EINPROGRESS) {
		perror("tcp-floor: connect");
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = i};
	if (epoll_ctl(f->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		perror("tcp-floor: epoll_ctl");
		return -1;
	}
	f->syscalls += 2;
	f->connecting++;
	f->opened++;
	return 0;
}

/* Sends n queries on c in one send(). */
static int send_queries(struct floor *f, struct conn *c, unsigned n)
{
	uint8_t out[DEPTHMAX * QMAX];
	size_t len = 0;
	for (unsigned k = 0; k < n; k++) {
		memcpy(out + len, f->q, (size_t)f->qlen);
		out[len + 2] = (uint8_t)(f->id >> 8);
		out[len + 3] = (uint8_t)f->id;
		f->id++;
		len += (size_t)f->qlen;
	}
	ssize_t w = send(c->fd, out, len, MSG_NOSIGNAL);
	f->syscalls++;
	if (w != (ssize_t)len) {
		fprintf(stderr, "tcp-floor: send: %s\n", w < 0 ? strerror(errno) : "short write");
		return -1;
	}
	c->inflight = (uint8_t)(c->inflight + n);
	f->sent += n;
	return 0;
}

static int on_connected(struct floor *f, unsigned i, uint32_t events)
{
	struct conn *c = &f->c[i];
	if (events & (EPOLLERR | EPOLLHUP)) {
		fprintf(stderr, "tcp-floor: connection %u failed to open\n", i);
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
	epoll_ctl(f->ep, EPOLL_CTL_MOD, c->fd, &ev);
	f->syscalls++;
	c->up = 1;
	f->connecting--;
	f->up++;
	return f->sending ? send_queries(f, c, c->depth) : 0;
}

/*
 * One recv() on c into the shared buffer (behind the cut answer c kept); counts
 * the whole answers it brought and replaces them.
 */
static int on_readable(struct floor *f, unsigned i)
{
	static uint8_t rx[RXCAP];
	struct conn *c = &f->c[i];
	memcpy(rx, c->carry, c->have);
	ssize_t r = recv(c->fd, rx + c->have, RXCAP - c->have, 0);
	f->syscalls++;
	if (r <= 0) {
		if (r < 0 && errno == EAGAIN)
			return 0;
		fprintf(stderr, "tcp-floor: connection %u: %s\n", i,
		        r ? strerror(errno) : "closed");
		return -1;
	}
	size_t have = c->have + (size_t)r, at = 0;
	unsigned done = 0;
	while (have - at >= 2) {
		size_t len = ((size_t)rx[at] << 8) | rx[at + 1];
		if (have - at < 2 + len)
			break;
		at += 2 + len;
		done++;
	}
	if (have - at > CARRY) {
		fprintf(stderr, "tcp-floor: connection %u: an answer over %d bytes\n", i, CARRY);
		return -1;
	}
	memcpy(c->carry, rx + at, have - at);
	c->have = (uint16_t)(have - at);
	if (done > c->inflight) {
		fprintf(stderr, "tcp-floor: connection %u: more answers than queries\n", i);
		return -1;
	}
	c->inflight = (uint8_t)(c->inflight - done);
	f->answered += done;
	return f->sending && done ? send_queries(f, c, done) : 0;
}

static int setup(struct floor *f)
{
	memset(&f->sa, 0, sizeof(f->sa));
	f->sa.sin_family = AF_INET;
	f->sa.sin_port = htons((uint16_t)f->o.port);
	if (inet_pton(AF_INET, f->o.server, &f->sa.sin_addr) != 1 ||
	    (ntohl(f->sa.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "tcp-floor: %s: only IPv4 loopback (127.0.0.0/8) targets\n",
		        f->o.server);
		return -1;
	}
	f->qlen = floor_build_query(f->q + 2, sizeof(f->q) - 2, f->o.qname, 1 /* A */);
	if (f->qlen >= 0) { /* behind its 2-byte length, as TCP carries it */
		f->q[0] = (uint8_t)(f->qlen >> 8);
		f->q[1] = (uint8_t)f->qlen;
		f->qlen += 2;
	}
	if (f->qlen < 0) {
		fprintf(stderr, "tcp-floor: bad query name %s\n", f->o.qname);
		return -1;
	}
	f->c = calloc(f->o.conns, sizeof(*f->c));
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!f->c || f->ep < 0) {
		perror("tcp-floor: setup");
		return -1;
	}
	for (unsigned i = 0; i < f->o.conns; i++) {
		f->c[i].fd = -1;
		f->c[i].depth =
		    (uint8_t)(f->o.window / f->o.conns + (i < f->o.window % f->o.conns));
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct floor f;
	int rc = parse_opts(argc, argv, &f.o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (setup(&f) < 0)
		return 2;
	struct epoll_event ev[MAXEV];
	const uint64_t t0 = floor_now_ns(), end = t0 + (uint64_t)f.o.seconds_ms * 1000000;
	uint64_t drain_end = 0, t = t0, steady_answers = 0;
	double steady_cpu = -1;
	int failed = 0;
	f.sending = 1;
	/* Bounded by time (sending, then the drain); the turn cap is a backstop. */
	for (uint64_t turn = 0; turn < (1ULL << 40) && !failed; turn++) {
		while (f.sending && f.next_open < f.o.conns && f.connecting < f.o.connect_window)
			if (open_next(&f) < 0)
				failed = 1;
		if (steady_cpu < 0 && f.up == f.o.conns) {
			steady_cpu = cpu_us();
			steady_answers = f.answered;
		}
		if (f.sending && t >= end) {
			f.sending = 0;
			drain_end = t + (uint64_t)f.o.timeout_ms * 1000000;
			if (steady_cpu >= 0) {
				steady_cpu = cpu_us() - steady_cpu;
				steady_answers = f.answered - steady_answers;
			}
		}
		if (!f.sending && (f.sent == f.answered || t >= drain_end))
			break;
		int n = epoll_wait(f.ep, ev, MAXEV, 10);
		f.syscalls++;
		for (int k = 0; k < n && !failed; k++) {
			unsigned i = ev[k].data.u32;
			if (f.c[i].up)
				failed = on_readable(&f, i) < 0;
			else
				failed = on_connected(&f, i, ev[k].events) < 0;
		}
		t = floor_now_ns();
	}
	double secs = (double)((t < end ? t : end) - t0) / 1e9;
	for (unsigned i = 0; i < f.o.conns; i++)
		if (f.c[i].fd >= 0) {
			close(f.c[i].fd);
			f.syscalls++;
		}
	close(f.ep);
	double cpu = cpu_us(), per = (double)f.answered;
	printf("TCP floor client: %u connections, window %u, %.3f s\n", f.o.conns, f.o.window,
	       secs);
	printf("Connections opened: %llu (%u of them up)\n", (unsigned long long)f.opened, f.up);
	printf("Queries sent: %llu\n", (unsigned long long)f.sent);
	printf("Queries completed: %llu\n", (unsigned long long)f.answered);
	printf("Queries per second: %.1f\n", secs > 0 ? (double)f.answered / secs : 0.0);
	if (f.answered == 0) /* nothing to divide by: say so rather than print a figure */
		printf("CPU per query (us): -\nSteady CPU per query (us): -\n"
		       "System calls per query: -\n");
	else {
		printf("CPU per query (us): %.3f\n", cpu / per);
		if (steady_cpu >= 0 && steady_answers)
			printf("Steady CPU per query (us): %.3f\n",
			       steady_cpu / (double)steady_answers);
		else
			printf("Steady CPU per query (us): -\n");
		printf("System calls per query: %.4f\n", (double)f.syscalls / per);
	}
	free(f.c);
	return failed;
}
