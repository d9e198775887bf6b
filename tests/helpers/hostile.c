/* hostile: a misbehaving loopback DNS server for the robustness tests: floods, wrong sources, junk
 * datagrams. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "responder/answer.h"
#include "base/util.h"
#include "base/wire.h"

/*
 * One thread, one main socket (the address dnsvolley targets) and, when asked,
 * sockets on another port and another address. For every query received it
 * first sends the "extra" datagrams its mode asks for, then the correct answer
 * (built by the bundled responder's dv_answer_build), so the extras are always
 * queued at the client before the answer that ends the query. That ordering is
 * what lets the tests assert exact counts: unexpected == K * sent for a flood,
 * malformed == sent for junk modes.
 *
 * Counts are printed at exit (SIGINT/SIGTERM or --max-seconds) as "key value"
 * lines, the format tests/integration/lib.sh's resp_count reads.
 */

#define DV_UDP_MAX 65507 /* the largest UDP payload over IPv4 */

typedef struct hostile_opts {
	const char *addr;
	uint16_t port;
	const char *port_file;
	unsigned flood;       /* unsolicited well-formed responses per query */
	bool other_port;      /* answer only from another port of the same address */
	bool other_addr;      /* answer only from another address (127.0.0.2) */
	bool wrong_source;    /* correct answer, plus copies from another port and address */
	bool oversized;       /* the answer itself padded to 65507 bytes (still valid) */
	bool oversized_junk;  /* a 65507-byte malformed datagram before each answer */
	bool empty;           /* a zero-length datagram before each answer */
	bool truncated;       /* the answer cut short before each answer */
	bool silent;          /* never answer */
	uint64_t max_seconds; /* lifetime bound */
} hostile_opts_t;

typedef struct hostile_counts {
	uint64_t received, answered, extra, wrong_source, send_errors;
	uint64_t idless; /* --truncated: extras too short to hold a DNS ID (1 octet) */
} hostile_counts_t;

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int bind_udp(const char *addr, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int bufsize = 4 * 1024 * 1024;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	if (bound != NULL)
		*bound = ntohs(sa.sin_port);
	return fd;
}

static void send_to(int fd, const uint8_t *buf, size_t len, const struct sockaddr_in *to,
                    hostile_counts_t *n)
{
	if (sendto(fd, buf, len, 0, (const struct sockaddr *)to, sizeof(*to)) != (ssize_t)len)
		n->send_errors++;
}

/* A well-formed response to "flood.invalid. A" (never in a list) with ID id. */
static int flood_response(uint16_t id, uint8_t *out, size_t cap)
{
	static const uint8_t q_tail[] = {5,   'f', 'l', 'o', 'o', 'd', 7, 'i', 'n', 'v',
	                                 'a', 'l', 'i', 'd', 0,   0,   1, 0,   1};
	uint8_t q[DV_DNS_HEADER_LEN + sizeof(q_tail)];
	dv_answer_opts_t o;

	memset(q, 0, DV_DNS_HEADER_LEN);
	dv_wire_set16(q, id);
	q[2] = 0x01; /* RD */
	dv_wire_set16(q + 4, 1);
	memcpy(q + DV_DNS_HEADER_LEN, q_tail, sizeof(q_tail));
	dv_answer_opts_init(&o);
	return dv_answer_build(q, sizeof(q), out, cap, &o);
}

/* Pad a valid answer to DV_UDP_MAX octets with one more additional record (type NULL). */
static size_t pad_answer(uint8_t *buf, size_t len)
{
	size_t rdlen = DV_UDP_MAX - len - 11;

	buf[len] = 0;                     /* owner: the root */
	dv_wire_set16(buf + len + 1, 10); /* NULL */
	dv_wire_set16(buf + len + 3, 1);  /* IN */
	memset(buf + len + 5, 0, 4);      /* TTL */
	dv_wire_set16(buf + len + 9, (uint16_t)rdlen);
	memset(buf + len + 11, 0xab, rdlen);
	dv_wire_set16(buf + 10, (uint16_t)(dv_wire_get16(buf + 10) + 1));
	return DV_UDP_MAX;
}

/* 65507 octets: the answer's header and question, then one record whose rdlength overruns. */
static size_t junk_answer(const uint8_t *ans, size_t len, uint8_t *out)
{
	size_t qend = DV_DNS_HEADER_LEN + dv_wire_question_len(ans, len);

	memcpy(out, ans, qend);
	dv_wire_set16(out + 6, 1);
	dv_wire_set16(out + 8, 0);
	dv_wire_set16(out + 10, 0);
	memset(out + qend, 0, DV_UDP_MAX - qend);
	dv_wire_set16(out + qend + 1, 16); /* TXT */
	dv_wire_set16(out + qend + 3, 1);
	dv_wire_set16(out + qend + 9, 0xffff); /* past the end of the datagram */
	return DV_UDP_MAX;
}

static void usage(FILE *out)
{
	fputs("Usage: hostile [-a ADDR] [-p PORT] [--port-file F] [--max-seconds S] MODE...\n"
	      "Modes (combinable): --flood K, --other-port, --other-addr, --wrong-source,\n"
	      "  --oversized, --oversized-junk, --empty, --truncated, --silent\n",
	      out);
}

static int parse_args(int argc, char **argv, hostile_opts_t *o)
{
	static const struct option lo[] = {
	    {"address", required_argument, NULL, 'a'},     {"port", required_argument, NULL, 'p'},
	    {"port-file", required_argument, NULL, 'f'},   {"flood", required_argument, NULL, 'F'},
	    {"other-port", no_argument, NULL, 'P'},        {"other-addr", no_argument, NULL, 'A'},
	    {"wrong-source", no_argument, NULL, 'W'},      {"oversized", no_argument, NULL, 'O'},
	    {"oversized-junk", no_argument, NULL, 'J'},    {"empty", no_argument, NULL, 'E'},
	    {"truncated", no_argument, NULL, 'R'},         {"silent", no_argument, NULL, 'S'},
	    {"max-seconds", required_argument, NULL, 'M'}, {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->addr = "127.0.0.1";
	o->max_seconds = 300;
	while ((c = getopt_long(argc, argv, "a:p:", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (dv_parse_u64(optarg, 0, 65535, &v) != 0)
				return -1;
			o->port = (uint16_t)v;
			break;
		case 'f':
			o->port_file = optarg;
			break;
		case 'F':
			if (dv_parse_u64(optarg, 1, 100, &v) != 0)
				return -1;
			o->flood = (unsigned)v;
			break;
		case 'P':
			o->other_port = true;
			break;
		case 'A':
			o->other_addr = true;
			break;
		case 'W':
			o->wrong_source = true;
			break;
		case 'O':
			o->oversized = true;
			break;
		case 'J':
			o->oversized_junk = true;
			break;
		case 'E':
			o->empty = true;
			break;
		case 'R':
			o->truncated = true;
			break;
		case 'S':
			o->silent = true;
			break;
		case 'M':
			if (dv_parse_u64(optarg, 1, 3600, &o->max_seconds) != 0)
				return -1;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	static uint8_t qbuf[DV_UDP_MAX + 1], abuf[DV_UDP_MAX + 1], xbuf[DV_UDP_MAX + 1];
	hostile_opts_t o;
	hostile_counts_t n;
	struct sigaction sa;
	uint16_t port;
	int fd, fd_port = -1, fd_addr = -1;
	uint64_t deadline_ns, seq = 0;

	if (parse_args(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	memset(&n, 0, sizeof(n));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fd = bind_udp(o.addr, o.port, &port);
	if (fd < 0) {
		fprintf(stderr, "hostile: cannot bind %s:%u: %s\n", o.addr, o.port,
		        strerror(errno));
		return 1;
	}
	if (o.other_port || o.wrong_source) {
		fd_port = bind_udp(o.addr, 0, NULL);
		if (fd_port < 0) {
			fprintf(stderr, "hostile: cannot bind another port: %s\n", strerror(errno));
			return 1;
		}
	}
	if (o.other_addr || o.wrong_source) {
		/* Same port number, another loopback address: only the address differs. */
		fd_addr = bind_udp("127.0.0.2", port, NULL);
		if (fd_addr < 0) {
			fprintf(stderr, "hostile: cannot bind 127.0.0.2:%u: %s\n", port,
			        strerror(errno));
			return 1;
		}
	}
	if (o.port_file != NULL) {
		FILE *pf = fopen(o.port_file, "w");
		if (pf == NULL || fprintf(pf, "%u\n", port) < 0 || fclose(pf) != 0) {
			fprintf(stderr, "hostile: cannot write %s\n", o.port_file);
			return 1;
		}
	}
	deadline_ns = dv_now_ns() + o.max_seconds * DV_NS_PER_S;
	while (!stop_flag && dv_now_ns() < deadline_ns) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		dv_answer_opts_t ao;
		ssize_t r;
		int alen;
		unsigned k;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recvfrom(fd, qbuf, sizeof(qbuf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
		if (r < 0)
			continue;
		n.received++;
		seq++;
		if (o.silent)
			continue;
		dv_answer_opts_init(&ao);
		alen = dv_answer_build(qbuf, (size_t)r, abuf, sizeof(abuf), &ao);
		if (alen <= 0)
			continue;
		for (k = 0; k < o.flood; k++) {
			/* IDs spread over the whole space: some hit IDs in flight, none the
			 * question. */
			int flen_resp = flood_response((uint16_t)(seq * 7919u + k * 40503u), xbuf,
			                               sizeof(xbuf));
			if (flen_resp > 0) {
				send_to(fd, xbuf, (size_t)flen_resp, &from, &n);
				n.extra++;
			}
		}
		if (o.empty) {
			send_to(fd, xbuf, 0, &from, &n);
			n.extra++;
		}
		if (o.truncated) {
			size_t cut = 1 + (size_t)(seq % (uint64_t)(alen - 1)); /* 1 .. alen-1 */
			send_to(fd, abuf, cut, &from, &n);
			n.extra++;
			n.idless += cut < 2;
		}
		if (o.oversized_junk) {
			send_to(fd, xbuf, junk_answer(abuf, (size_t)alen, xbuf), &from, &n);
			n.extra++;
		}
		if (o.oversized)
			alen = (int)pad_answer(abuf, (size_t)alen);
		if (o.other_port || o.other_addr) {
			if (fd_port >= 0)
				send_to(fd_port, abuf, (size_t)alen, &from, &n);
			if (fd_addr >= 0)
				send_to(fd_addr, abuf, (size_t)alen, &from, &n);
			n.wrong_source++;
			continue;
		}
		if (o.wrong_source) {
			send_to(fd_port, abuf, (size_t)alen, &from, &n);
			send_to(fd_addr, abuf, (size_t)alen, &from, &n);
			n.wrong_source += 2;
		}
		send_to(fd, abuf, (size_t)alen, &from, &n);
		n.answered++;
	}
	printf("received %llu\nanswered %llu\nextra %llu\nwrong-source %llu\nsend-errors %llu\n"
	       "idless %llu\n",
	       (unsigned long long)n.received, (unsigned long long)n.answered,
	       (unsigned long long)n.extra, (unsigned long long)n.wrong_source,
	       (unsigned long long)n.send_errors, (unsigned long long)n.idless);
	close(fd);
	if (fd_port >= 0)
		close(fd_port);
	if (fd_addr >= 0)
		close(fd_addr);
	return 0;
}
