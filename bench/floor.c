/* floor: the kernel floor for UDP replay: batched sendmmsg/recvmmsg, fixed window. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "floor-query.h"

/*
 * What a replay client cannot beat on this machine: one connected UDP socket,
 * the same small query (only its ID changes), up to -b datagrams per sendmmsg
 * and per recvmmsg, -q queries kept in flight, nothing looked at in the
 * answers. Whatever dnsvolley spends above this per query is its own cost.
 *
 * Lost datagrams would shrink the window for ever, so when nothing arrives for
 * -t ms the missing ones are written off (counted as lost) and the window
 * refilled. Prints the same three lines as dnsvolley's report so the bench
 * script parses both alike; syscalls are counted here exactly (every
 * sendmmsg/recvmmsg call, including those that return EAGAIN).
 */

#define MAX_BATCH 1024
#define PKT_MAX   512

struct opts {
	const char *server;
	unsigned port;
	unsigned window;
	unsigned batch;
	double seconds;
	unsigned timeout_ms;
	const char *qname;
};

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: floor -p PORT [-s 127.0.0.1] [-q WINDOW=100] [-l SECONDS=5] [-b BATCH=64]\n"
	        "             [-t LOSS_TIMEOUT_MS=100] [-n QNAME=d1.example]\n"
	        "Sends SOA queries for QNAME on one connected UDP socket with batched\n"
	        "sendmmsg/recvmmsg and prints qps, CPU and system calls per answer.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;
	o->server = "127.0.0.1";
	o->port = 0;
	o->window = 100;
	o->batch = 64;
	o->seconds = 5;
	o->timeout_ms = 100;
	o->qname = "d1.example";
	while ((c = getopt(argc, argv, "s:p:q:l:b:t:n:h")) != -1) {
		switch (c) {
		case 's':
			o->server = optarg;
			break;
		case 'p':
			o->port = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'q':
			o->window = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'l':
			o->seconds = strtod(optarg, NULL);
			break;
		case 'b':
			o->batch = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			o->timeout_ms = (unsigned)strtoul(optarg, NULL, 10);
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
	if (o->port == 0 || o->port > 65535 || o->window == 0 || o->window > 65536 ||
	    o->batch == 0 || o->batch > MAX_BATCH || !(o->seconds > 0 && o->seconds <= 3600) ||
	    o->timeout_ms == 0) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static int open_socket(const struct opts *o)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)o->port);
	if (inet_pton(AF_INET, o->server, &sa.sin_addr) != 1) {
		fprintf(stderr, "floor: bad IPv4 address %s\n", o->server);
		return -1;
	}
	if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "floor: only loopback targets (127.0.0.0/8) are allowed\n");
		return -1;
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("floor: socket");
		return -1;
	}
	int buf = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	struct timeval tv = {.tv_sec = o->timeout_ms / 1000,
	                     .tv_usec = (suseconds_t)(o->timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("floor: connect");
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	int fd = open_socket(&o);
	if (fd < 0)
		return 1;

	static uint8_t out[MAX_BATCH][PKT_MAX], in[MAX_BATCH][PKT_MAX];
	static struct mmsghdr smsg[MAX_BATCH], rmsg[MAX_BATCH];
	static struct iovec siov[MAX_BATCH], riov[MAX_BATCH];
	uint8_t q[PKT_MAX];
	int qlen = floor_build_query(q, sizeof(q), o.qname, 6 /* SOA */);
	if (qlen < 0) {
		fprintf(stderr, "floor: bad query name %s\n", o.qname);
		close(fd);
		return 2;
	}
	for (unsigned i = 0; i < o.batch; i++) {
		memcpy(out[i], q, (size_t)qlen);
		siov[i].iov_base = out[i];
		siov[i].iov_len = (size_t)qlen;
		smsg[i].msg_hdr.msg_iov = &siov[i];
		smsg[i].msg_hdr.msg_iovlen = 1;
		riov[i].iov_base = in[i];
		riov[i].iov_len = PKT_MAX;
		rmsg[i].msg_hdr.msg_iov = &riov[i];
		rmsg[i].msg_hdr.msg_iovlen = 1;
	}

	uint64_t sent = 0, received = 0, lost = 0, syscalls = 0;
	int failed = 0;
	uint16_t id = 0;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	const uint64_t t0 = floor_now_ns();
	const uint64_t end = t0 + (uint64_t)(o.seconds * 1e9);
	uint64_t t = t0;
	/* Bounded by time; the iteration cap is a backstop against a stuck clock. */
	for (uint64_t iter = 0; t < end && iter < (1ULL << 40); iter++) {
		uint64_t inflight = sent - received - lost;
		unsigned room = (unsigned)(o.window - inflight);
		if (room > 0) {
			unsigned n = room < o.batch ? room : o.batch;
			for (unsigned i = 0; i < n; i++) {
				out[i][0] = (uint8_t)(id >> 8);
				out[i][1] = (uint8_t)id;
				id++;
			}
			int r = sendmmsg(fd, smsg, n, 0);
			syscalls++;
			if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
				perror("floor: sendmmsg"); /* ECONNREFUSED: nothing listens */
				failed = 1;
				break;
			}
			if (r > 0)
				sent += (uint64_t)r;
			inflight = sent - received - lost;
		}
		/* Block for the first answer only when the window is full. */
		int flags = inflight >= o.window ? MSG_WAITFORONE : MSG_DONTWAIT;
		unsigned want = inflight < o.batch ? (unsigned)inflight : o.batch;
		if (want == 0)
			want = 1;
		int r = recvmmsg(fd, rmsg, want, flags, NULL);
		syscalls++;
		if (r > 0) {
			received += (uint64_t)r;
		} else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		           flags == MSG_WAITFORONE) {
			lost += inflight; /* nothing for timeout_ms: write the window off */
		} else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			perror("floor: recvmmsg");
			failed = 1;
			break;
		}
		t = floor_now_ns();
	}
	getrusage(RUSAGE_SELF, &ru1);
	close(fd);

	double secs = (double)(t - t0) / 1e9;
	double cpu_us = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1e6 +
	                (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) +
	                (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e6 +
	                (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec);
	double user_us = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1e6 +
	                 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec);
	double per = received ? (double)received : 1;
	printf("Floor client: window %u, batch %u, %.3f s\n", o.window, o.batch, secs);
	printf("Queries sent: %llu\n", (unsigned long long)sent);
	printf("Queries completed: %llu\n", (unsigned long long)received);
	printf("Queries lost: %llu\n", (unsigned long long)lost);
	printf("Queries per second: %.1f\n", secs > 0 ? (double)received / secs : 0.0);
	printf("CPU per query (us): %.3f\n", cpu_us / per);
	printf("User CPU per query (us): %.3f\n", user_us / per);
	printf("System calls per query: %.4f\n", (double)syscalls / per);
	return failed;
}
