/* hostile-doq: a DNS over QUIC peer that misbehaves on purpose (the responder's QUIC listener,
 * src/responder/quic.c, in one of its hostile modes), for tests/integration/hostile-doq.sh.
 *
 *   hostile-doq --mode MODE --port-file FILE [--cert PEM --key PEM] [--max-seconds N]
 *
 * MODE: serve (a plain DoQ server), mute (handshakes and reads queries, answers none: the
 * listener's drop fault on every query), silent, stream-reset, close, version-neg,
 * stateless-reset (quic.h says what each does). Binds 127.0.0.1 on a free port, writes it
 * to FILE, runs until SIGINT/SIGTERM or N seconds (default 60), then prints its counts
 * ("doq-received 12") on stdout. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "responder/quic.h"

static const struct {
	const char *name;
	dv_quic_hostile_t mode;
} modes[] = {
    {"serve", DV_QUIC_SERVE},
    {"mute", DV_QUIC_SERVE}, /* handshakes, reads every query, answers none */
    {"silent", DV_QUIC_SILENT},
    {"stream-reset", DV_QUIC_STREAM_RESET},
    {"close", DV_QUIC_CLOSE},
    {"version-neg", DV_QUIC_VERSION_NEG},
    {"stateless-reset", DV_QUIC_STATELESS_RESET},
};

static int usage(void)
{
	fprintf(stderr,
	        "usage: hostile-doq --mode serve|mute|silent|stream-reset|close|version-neg|"
	        "stateless-reset --port-file FILE [--cert PEM --key PEM] "
	        "[--max-seconds N]\n");
	return 2;
}

static void print_counts(const dv_quic_counts_t *c)
{
	printf("doq-datagrams %" PRIu64 "\n", c->datagrams);
	printf("doq-connections %" PRIu64 "\n", c->connections);
	printf("doq-handshakes %" PRIu64 "\n", c->handshakes);
	printf("doq-received %" PRIu64 "\n", c->received);
	printf("doq-dropped %" PRIu64 "\n", c->dropped);
	printf("doq-answered %" PRIu64 "\n", c->answered);
	printf("doq-cancelled %" PRIu64 "\n", c->cancelled);
	printf("doq-stream-resets %" PRIu64 "\n", c->stream_resets);
	printf("doq-conn-closes %" PRIu64 "\n", c->conn_closes);
	printf("doq-version-negs %" PRIu64 "\n", c->version_negs);
	printf("doq-stateless-resets %" PRIu64 "\n", c->stateless_resets);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"mode", required_argument, NULL, 'm'},
	    {"port-file", required_argument, NULL, 'f'},
	    {"cert", required_argument, NULL, 'c'},
	    {"key", required_argument, NULL, 'k'},
	    {"max-seconds", required_argument, NULL, 's'},
	    {NULL, 0, NULL, 0},
	};
	dv_quic_config_t cfg = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&cfg.addr;
	const char *port_file = NULL, *mode = NULL;
	long max_s = 60;
	dv_quic_t *l = NULL;
	dv_quic_counts_t counts;
	dv_err_t err = {{0}};
	sigset_t set;
	struct timespec limit;
	FILE *f;
	char tmp[4096];
	int c;
	size_t i;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'f':
			port_file = optarg;
			break;
		case 'c':
			cfg.cert_file = optarg;
			break;
		case 'k':
			cfg.key_file = optarg;
			break;
		case 's':
			max_s = strtol(optarg, NULL, 10);
			break;
		default:
			return usage();
		}
	}
	if (mode == NULL || port_file == NULL || max_s <= 0)
		return usage();
	for (i = 0; i < DV_ARRAY_SIZE(modes) && strcmp(modes[i].name, mode) != 0; i++)
		;
	if (i == DV_ARRAY_SIZE(modes))
		return usage();
	cfg.hostile = modes[i].mode;
	if (strcmp(mode, "mute") == 0)
		cfg.faults.drop_every = 1;
	cfg.rcode = -1;
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg.addr_len = sizeof(*in);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (dv_quic_open(&l, &cfg, &err) != 0 || dv_quic_start(l, &err) != 0) {
		fprintf(stderr, "hostile-doq: %s\n", err.msg);
		dv_quic_free(l);
		return 1;
	}
	/* Written whole, then renamed: the test never reads half a number. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
	f = fopen(tmp, "w");
	if (f == NULL || fprintf(f, "%u\n", dv_quic_port(l)) < 0 || fclose(f) != 0 ||
	    rename(tmp, port_file) != 0) {
		perror(port_file);
		dv_quic_free(l);
		return 1;
	}
	limit.tv_sec = max_s;
	limit.tv_nsec = 0;
	(void)sigtimedwait(&set, NULL, &limit);
	dv_quic_join(l, &counts);
	print_counts(&counts);
	dv_quic_free(l);
	return 0;
}
