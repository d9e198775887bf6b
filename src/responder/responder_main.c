/* responder_main: the dnsvolley-responder command: flags, start-up line, signals, final counts. */
#include "config.h"

#include "responder/answer.h"
#include "responder/responder.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "dnsvolley-responder"

enum {
	OPT_PORT_FILE = 256,
	OPT_DROP_EVERY,
	OPT_DELAY,
	OPT_RCODE,
	OPT_TC_EVERY,
	OPT_GARBAGE_EVERY,
	OPT_WRONG_ID_EVERY,
	OPT_WRONG_QUESTION_EVERY,
	OPT_DUPLICATE_EVERY,
	OPT_REFLECT,
	OPT_NO_GSO,
	OPT_VERSION,
	OPT_CAPACITY,
	OPT_CAPACITY_BACKLOG,
};

static const struct option long_opts[] = {
    {"address", required_argument, NULL, 'a'},
    {"port", required_argument, NULL, 'p'},
    {"port-file", required_argument, NULL, OPT_PORT_FILE},
    {"threads", required_argument, NULL, 'T'},
    {"drop-every", required_argument, NULL, OPT_DROP_EVERY},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"rcode", required_argument, NULL, OPT_RCODE},
    {"capacity", required_argument, NULL, OPT_CAPACITY},
    {"capacity-backlog", required_argument, NULL, OPT_CAPACITY_BACKLOG},
    {"tc-every", required_argument, NULL, OPT_TC_EVERY},
    {"garbage-every", required_argument, NULL, OPT_GARBAGE_EVERY},
    {"wrong-id-every", required_argument, NULL, OPT_WRONG_ID_EVERY},
    {"wrong-question-every", required_argument, NULL, OPT_WRONG_QUESTION_EVERY},
    {"duplicate-every", required_argument, NULL, OPT_DUPLICATE_EVERY},
    {"reflect", no_argument, NULL, OPT_REFLECT},
    {"no-gso", no_argument, NULL, OPT_NO_GSO},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: " PROG " [OPTIONS]\n"
	    "A fast loopback DNS responder: the target of the dnsvolley quick start and tests.\n"
	    "\n"
	    "  -a, --address ADDR          bind address (default 127.0.0.1; IPv6 like ::1 too)\n"
	    "  -p, --port PORT             port (default 53; 0 = any free port)\n"
	    "      --port-file FILE        write the bound port (number and newline) when "
	    "listening\n"
	    "  -T, --threads N             N threads, each with its own SO_REUSEPORT socket (1)\n"
	    "      --drop-every N          do not answer queries N, 2N, 3N... (per thread)\n"
	    "      --delay MS              hold every answer MS milliseconds (fractions allowed)\n"
	    "      --capacity QPS          serve at most QPS queries/s (a queue, see the man "
	    "page)\n"
	    "      --capacity-backlog N    queries waiting before more are dropped (256)\n"
	    "      --rcode R               answer with rcode R (NXDOMAIN, SERVFAIL... or 0-15)\n"
	    "      --tc-every N            set TC on every Nth answer (1 = all)\n"
	    "      --garbage-every N       every Nth query: send garbage instead of the answer\n"
	    "      --wrong-id-every N      every Nth query: send the answer with ID ^ 0x8000\n"
	    "      --wrong-question-every N every Nth query: answer for \"x.<qname>\" instead\n"
	    "      --duplicate-every N     every Nth query: send the answer twice\n"
	    "      --reflect               echo queries back with QR set (fastest)\n"
	    "      --no-gso                one datagram per send (no UDP GSO batching)\n"
	    "  -q, --quiet                 no start-up line\n"
	    "  -h, --help                  this help\n"
	    "      --version               print the version\n"
	    "\n"
	    "Stops on SIGINT/SIGTERM and prints its counts on stdout: received, answered,\n"
	    "dropped, faulty, duplicates, malformed, send-errors, source-ports.\n"
	    "See dnsvolley-responder(1).\n");
}

/* "--drop-every" for the option code c (the flag as the user knows it). */
static const char *opt_name(int c)
{
	static char buf[32];
	size_t i;

	for (i = 0; long_opts[i].name != NULL; i++) {
		if (long_opts[i].val == c) {
			snprintf(buf, sizeof(buf), "--%s", long_opts[i].name);
			return buf;
		}
	}
	return "?";
}

static int bad(const char *flag, const char *value, const char *what)
{
	fprintf(stderr, PROG ": %s: '%s' %s\n", flag, value, what);
	fprintf(stderr, "Try '" PROG " --help'.\n");
	return 2;
}

static int parse_address(const char *s, uint16_t port, dv_responder_config_t *cfg)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t len = strlen(s);
	struct sockaddr_in *in = (struct sockaddr_in *)&cfg->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&cfg->addr;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (len > 2 && s[0] == '[' && s[len - 1] == ']') {
		memcpy(buf, s + 1, len - 2);
		buf[len - 2] = '\0';
	} else {
		memcpy(buf, s, len + 1);
	}
	memset(&cfg->addr, 0, sizeof(cfg->addr));
	if (inet_pton(AF_INET, buf, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		cfg->addr_len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		cfg->addr_len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

static int write_port_file(const char *path, uint16_t port, dv_err_t *err)
{
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	FILE *f;
	int rc = 0;

	if (tmp == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	/* Written whole, then renamed: a reader never sees a partial number. */
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (f == NULL) {
		rc = dv_err_set(err, -errno, "--port-file %s: %s", path, strerror(errno));
		goto out;
	}
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		rc = dv_err_set(err, -errno, "--port-file %s: %s", path, strerror(errno));
		unlink(tmp);
	}
out:
	free(tmp);
	return rc;
}

static void print_counts(const dv_responder_counts_t *c)
{
	printf("received %" PRIu64 "\n", c->received);
	printf("answered %" PRIu64 "\n", c->answered);
	printf("dropped %" PRIu64 "\n", c->dropped);
	printf("faulty %" PRIu64 "\n", c->faulty);
	printf("duplicates %" PRIu64 "\n", c->duplicates);
	printf("malformed %" PRIu64 "\n", c->malformed);
	printf("send-errors %" PRIu64 "\n", c->send_errors);
	printf("source-ports %" PRIu64 "\n", c->source_ports);
	fflush(stdout);
}

/* Wait for SIGINT/SIGTERM (blocked in every thread) or a thread that failed. */
static void wait_for_stop(dv_responder_t *r, const sigset_t *set)
{
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};

	for (;;) {
		int sig = sigtimedwait(set, NULL, &tick);
		if (sig > 0 || dv_responder_failed(r))
			return;
	}
}

int main(int argc, char **argv)
{
	dv_responder_config_t cfg;
	dv_responder_counts_t counts;
	dv_responder_t *r = NULL;
	dv_err_t err = {{0}};
	const char *address = "127.0.0.1", *port_file = NULL;
	uint64_t port = 53, v;
	bool quiet = false;
	sigset_t set;
	char host[INET6_ADDRSTRLEN];
	int c, rc;

	/* Blocked before any thread exists, so that only wait_for_stop() takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGINT, SIG_DFL); /* an inherited SIG_IGN must not hide them */
	signal(SIGTERM, SIG_DFL);

	dv_responder_config_init(&cfg);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:T:qh", long_opts, NULL)) != -1) {
		const char *flag = optind > 1 ? argv[optind - 1] : "?";
		uint64_t *every = NULL;
		double ms;

		switch (c) {
		case 'a':
			address = optarg;
			break;
		case 'p':
			if (dv_parse_u64(optarg, 0, 65535, &port) != 0)
				return bad("--port", optarg,
				           "is not a port number from 0 to 65535");
			break;
		case OPT_PORT_FILE:
			port_file = optarg;
			break;
		case 'T':
			if (dv_parse_u64(optarg, 1, DV_RESPONDER_THREADS_MAX, &v) != 0)
				return bad("--threads", optarg, "is not a number from 1 to 256");
			cfg.threads = (unsigned)v;
			break;
		case OPT_DROP_EVERY:
			every = &cfg.drop_every;
			break;
		case OPT_TC_EVERY:
			every = &cfg.tc_every;
			break;
		case OPT_GARBAGE_EVERY:
			every = &cfg.garbage_every;
			break;
		case OPT_WRONG_ID_EVERY:
			every = &cfg.wrong_id_every;
			break;
		case OPT_WRONG_QUESTION_EVERY:
			every = &cfg.wrong_question_every;
			break;
		case OPT_DUPLICATE_EVERY:
			every = &cfg.duplicate_every;
			break;
		case OPT_DELAY:
			if (dv_parse_double(optarg, 0.0, 3600.0 * 1000.0, &ms) != 0)
				return bad("--delay", optarg,
				           "is not a number of milliseconds from 0 to 3600000");
			cfg.delay_ns = (uint64_t)llround(ms * (double)DV_NS_PER_MS);
			break;
		case OPT_CAPACITY:
			if (dv_parse_double(optarg, 1.0, 1e9, &ms) != 0)
				return bad("--capacity", optarg,
				           "is not a rate in queries per second from 1 to 1e9");
			cfg.capacity_qps = ms;
			break;
		case OPT_CAPACITY_BACKLOG:
			if (dv_parse_u64(optarg, 0, DV_RESPONDER_HOLD_MAX, &v) != 0)
				return bad("--capacity-backlog", optarg,
				           "is not a number of queries from 0 to 1048576");
			cfg.capacity_backlog = (uint32_t)v;
			break;
		case OPT_RCODE:
			if (dv_rcode_parse(optarg, &cfg.rcode) != 0)
				return bad(
				    "--rcode", optarg,
				    "is not an rcode name (NOERROR, FORMERR, SERVFAIL, "
				    "NXDOMAIN, NOTIMP, REFUSED, ...) or a number from 0 to 15");
			break;
		case OPT_REFLECT:
			cfg.reflect = true;
			break;
		case OPT_NO_GSO:
			cfg.no_gso = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf(PROG " %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			fprintf(stderr,
			        PROG ": option '%s' needs a value\nTry '" PROG " --help'.\n", flag);
			return 2;
		default:
			if (optopt > 0 && optopt < 128)
				fprintf(stderr, PROG ": unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, PROG ": unknown option '%s'\n", flag);
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return 2;
		}
		if (every != NULL && dv_parse_u64(optarg, 0, UINT64_MAX / 2, every) != 0)
			return bad(opt_name(c), optarg, "is not a whole number (0 = off)");
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\nTry '" PROG " --help'.\n",
		        argv[optind]);
		return 2;
	}
	if (parse_address(address, (uint16_t)port, &cfg) != 0)
		return bad("--address", address, "is not an IPv4 or IPv6 address");

	rc = dv_responder_open(&r, &cfg, &err);
	if (rc != 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	inet_ntop(cfg.addr.ss_family,
	          cfg.addr.ss_family == AF_INET6
	              ? (const void *)&((const struct sockaddr_in6 *)&cfg.addr)->sin6_addr
	              : (const void *)&((const struct sockaddr_in *)&cfg.addr)->sin_addr,
	          host, sizeof(host));
	/* The sockets are bound: queries sent from now on wait in their buffers. */
	if (!quiet)
		fprintf(stderr, PROG ": listening on %s%s%s:%u (%u thread%s)\n",
		        cfg.addr.ss_family == AF_INET6 ? "[" : "", host,
		        cfg.addr.ss_family == AF_INET6 ? "]" : "", dv_responder_port(r),
		        cfg.threads, cfg.threads == 1 ? "" : "s");
	if (port_file != NULL && write_port_file(port_file, dv_responder_port(r), &err) != 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		dv_responder_free(r);
		return 1;
	}
	rc = dv_responder_start(r, &err);
	if (rc == 0)
		wait_for_stop(r, &set);
	dv_responder_stop(r);
	if (dv_responder_join(r, &counts, rc == 0 ? &err : NULL) != 0 && rc == 0)
		rc = -1;
	print_counts(&counts);
	if (rc != 0)
		fprintf(stderr, PROG ": %s\n", err.msg);
	dv_responder_free(r);
	return rc == 0 ? 0 : 1;
}
