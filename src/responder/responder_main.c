/* responder_main: the dnsvolley-responder command: flags, start-up line, signals, final counts. */
#include "config.h"

#include "responder/answer.h"
#include "responder/responder.h"
#include "responder/xdp.h"
#include "responder/xsk.h"
#include "base/netstamp.h"
#include "base/sockaddr.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
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
	OPT_XDP,
	OPT_VERSION,
	OPT_CAPACITY,
	OPT_CAPACITY_BACKLOG,
	OPT_TCP_PORT,
	OPT_TLS_PORT,
	OPT_TCP_PORT_FILE,
	OPT_TLS_PORT_FILE,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_HTTPS_PORT,
	OPT_HTTPS_PORT_FILE,
	OPT_DOQ_PORT,
	OPT_DOQ_PORT_FILE,
	OPT_DOQ_MAX_STREAMS,
	OPT_DOQ_0RTT,
	OPT_DOH_PATH,
	OPT_HTTPS_RECORD_EACH,
	OPT_HTTPS_MAX_STREAMS,
	OPT_HTTPS_CONN_BUDGET,
	OPT_HTTPS_BUDGET,
	OPT_FAULT_CONNS, /* OPT_FAULT_CONNS..OPT_READ_AFTER_CONNS: the --stream-* faults */
	OPT_CLOSE_AFTER,
	OPT_RESET_AFTER,
	OPT_HALF_CLOSE_AFTER,
	OPT_STALL_AFTER,
	OPT_STREAM_DROP_EVERY,
	OPT_REVERSE,
	OPT_READ_AFTER_CONNS,
	OPT_END_ /* not an option: one past the last */
};

/* The long-only options given, one bit each (opts_t.given). */
#define GIVEN(c) (1ULL << ((c)-OPT_PORT_FILE))
_Static_assert(OPT_END_ - OPT_PORT_FILE <= 64, "opts_t.given holds a bit per long option");

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
    {"xdp", required_argument, NULL, OPT_XDP},
    {"tcp-port", required_argument, NULL, OPT_TCP_PORT},
    {"tls-port", required_argument, NULL, OPT_TLS_PORT},
    {"tcp-port-file", required_argument, NULL, OPT_TCP_PORT_FILE},
    {"tls-port-file", required_argument, NULL, OPT_TLS_PORT_FILE},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"https-port", required_argument, NULL, OPT_HTTPS_PORT},
    {"https-port-file", required_argument, NULL, OPT_HTTPS_PORT_FILE},
    {"doq-port", required_argument, NULL, OPT_DOQ_PORT},
    {"doq-port-file", required_argument, NULL, OPT_DOQ_PORT_FILE},
    {"doq-max-streams", required_argument, NULL, OPT_DOQ_MAX_STREAMS},
    {"doq-0rtt", required_argument, NULL, OPT_DOQ_0RTT},
    {"doh-path", required_argument, NULL, OPT_DOH_PATH},
    {"https-record-each", no_argument, NULL, OPT_HTTPS_RECORD_EACH},
    {"https-max-streams", required_argument, NULL, OPT_HTTPS_MAX_STREAMS},
    {"https-conn-budget", required_argument, NULL, OPT_HTTPS_CONN_BUDGET},
    {"https-budget", required_argument, NULL, OPT_HTTPS_BUDGET},
    {"stream-fault-conns", required_argument, NULL, OPT_FAULT_CONNS},
    {"stream-close-after", required_argument, NULL, OPT_CLOSE_AFTER},
    {"stream-reset-after", required_argument, NULL, OPT_RESET_AFTER},
    {"stream-half-close-after", required_argument, NULL, OPT_HALF_CLOSE_AFTER},
    {"stream-stall-after", required_argument, NULL, OPT_STALL_AFTER},
    {"stream-drop-every", required_argument, NULL, OPT_STREAM_DROP_EVERY},
    {"stream-reverse", required_argument, NULL, OPT_REVERSE},
    {"stream-read-after-conns", required_argument, NULL, OPT_READ_AFTER_CONNS},
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
	    "      --xdp IFACE             answer UDP through AF_XDP sockets on IFACE, one a\n"
	    "                              thread (root); --reflect: in XDP itself (XDP_TX),\n"
	    "                              with --drop-every and --garbage-every only\n"
	    "      --tcp-port PORT         also serve DNS over TCP on PORT (0 = any free port)\n"
	    "      --tls-port PORT         also serve DNS over TLS on PORT (needs the next two)\n"
	    "      --https-port PORT       also serve DNS over HTTPS (HTTP/2) on PORT (needs the "
	    "next two)\n"
	    "      --doq-port PORT         also serve DNS over QUIC on UDP PORT (needs the next "
	    "two)\n"
	    "      --tls-cert FILE         PEM certificate (chain) of the TLS, HTTPS and DoQ "
	    "listeners\n"
	    "      --tls-key FILE          PEM private key of the TLS, HTTPS and DoQ listeners\n"
	    "      --doh-path PATH         the HTTPS path served (default /dns-query)\n"
	    "      --https-record-each     each DoH response in a TLS record of its own\n"
	    "      --https-max-streams N   HTTP/2 streams at once per connection (1000)\n"
	    "      --https-conn-budget B   bytes of requests per connection (1048576)\n"
	    "      --https-budget B        bytes of requests of all connections (268435456)\n"
	    "      --tcp-port-file FILE    write the bound TCP port, like --port-file\n"
	    "      --tls-port-file FILE    write the bound TLS port, like --port-file\n"
	    "      --https-port-file FILE  write the bound HTTPS port, like --port-file\n"
	    "      --doq-port-file FILE    write the bound DoQ port, like --port-file\n"
	    "      --doq-max-streams N     DoQ streams at once per connection (100)\n"
	    "      --doq-0rtt accept|reject  DoQ: tickets allow 0-RTT; accept the early data,\n"
	    "                              or refuse every one (as replays)\n"
	    "  TCP/TLS faults, on connections M, 2M... (default 1); DoQ takes close, reset\n"
	    "  (CONNECTION_CLOSE with DOQ_INTERNAL_ERROR), stall and drop:\n"
	    "      --stream-fault-conns M  the connections the faults below are on: M, 2M...\n"
	    "      --stream-close-after N  close after answering N queries\n"
	    "      --stream-reset-after N  reset (RST) after answering N queries\n"
	    "      --stream-half-close-after N  shut the write side after N answers\n"
	    "      --stream-stall-after N  stop reading after N queries\n"
	    "      --stream-drop-every N   no answer to queries N, 2N... of a connection\n"
	    "      --stream-reverse N      answer in groups of N, each group last-first\n"
	    "      --stream-read-after-conns N  read no connection before N are accepted\n"
	    "  -q, --quiet                 no start-up line\n"
	    "  -h, --help                  this help\n"
	    "      --version               print the version\n"
	    "\n"
	    "Stops on SIGINT/SIGTERM and prints its counts on stdout: received, answered,\n"
	    "dropped, faulty, duplicates, malformed, send-errors, source-ports (unstamped\n"
	    "too with --capacity); then the tcp-*, tls-*, https-* and doq-* counts of the\n"
	    "stream listeners that are on; with --xdp, the xdp-* counts of the XDP sockets\n"
	    "(or of the --reflect program).\n"
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

static void print_stream_counts(const char *p, const dv_stream_counts_t *c)
{
	printf("%s-connections %" PRIu64 "\n", p, c->connections);
	printf("%s-source-addresses %" PRIu64 "\n", p, c->source_addresses);
	printf("%s-refused %" PRIu64 "\n", p, c->refused);
	printf("%s-deferred %" PRIu64 "\n", p, c->deferred);
	printf("%s-throttled %" PRIu64 "\n", p, c->throttled);
	printf("%s-received %" PRIu64 "\n", p, c->received);
	printf("%s-answered %" PRIu64 "\n", p, c->answered);
	printf("%s-dropped %" PRIu64 "\n", p, c->dropped);
	printf("%s-unanswered %" PRIu64 "\n", p, c->unanswered);
	printf("%s-closed %" PRIu64 "\n", p, c->closed);
	printf("%s-resets %" PRIu64 "\n", p, c->resets);
	printf("%s-half-closed %" PRIu64 "\n", p, c->half_closed);
	printf("%s-stalled %" PRIu64 "\n", p, c->stalled);
	printf("%s-malformed %" PRIu64 "\n", p, c->malformed);
	if (strcmp(p, "tcp") != 0) {
		printf("%s-handshake-failed %" PRIu64 "\n", p, c->tls_failed);
		printf("%s-resumed %" PRIu64 "\n", p, c->tls_resumed);
	}
	if (strcmp(p, "https") == 0) {
		printf("https-status-200 %" PRIu64 "\n", c->http.s200);
		printf("https-status-400 %" PRIu64 "\n", c->http.s400);
		printf("https-status-404 %" PRIu64 "\n", c->http.s404);
		printf("https-status-405 %" PRIu64 "\n", c->http.s405);
		printf("https-status-415 %" PRIu64 "\n", c->http.s415);
		printf("https-h2-errors %" PRIu64 "\n", c->h2_errors);
		printf("https-budget-refused %" PRIu64 "\n", c->http.refused);
		printf("https-held-peak %" PRIu64 "\n", c->http.held_max);
	}
}

static void print_doq_counts(const dv_quic_counts_t *c)
{
	const struct {
		const char *name;
		uint64_t v;
	} rows[] = {
	    {"datagrams", c->datagrams},
	    {"connections", c->connections},
	    {"refused", c->refused},
	    {"handshakes", c->handshakes},
	    {"resumed", c->resumed},
	    {"early", c->early},
	    {"zero-rtt-conns", c->zero_rtt_conns},
	    {"early-queries", c->early_queries},
	    {"handshake-failed", c->handshake_failed},
	    {"received", c->received},
	    {"answered", c->answered},
	    {"dropped", c->dropped},
	    {"unanswered", c->unanswered},
	    {"cancelled", c->cancelled},
	    {"closed", c->closed},
	    {"resets", c->resets},
	    {"stalled", c->stalled},
	    {"malformed", c->malformed},
	};

	for (size_t i = 0; i < DV_ARRAY_SIZE(rows); i++)
		printf("doq-%s %" PRIu64 "\n", rows[i].name, rows[i].v);
}

static void print_counts(const dv_responder_config_t *cfg, const dv_responder_counts_t *c)
{
	printf("received %" PRIu64 "\n", c->received);
	printf("answered %" PRIu64 "\n", c->answered);
	printf("dropped %" PRIu64 "\n", c->dropped);
	printf("faulty %" PRIu64 "\n", c->faulty);
	printf("duplicates %" PRIu64 "\n", c->duplicates);
	printf("malformed %" PRIu64 "\n", c->malformed);
	printf("send-errors %" PRIu64 "\n", c->send_errors);
	printf("source-ports %" PRIu64 "\n", c->source_ports);
	if (cfg->capacity_qps > 0)
		printf("unstamped %" PRIu64 "\n", c->unstamped);
	if (cfg->stream.tcp)
		print_stream_counts("tcp", &c->tcp);
	if (cfg->stream.tls)
		print_stream_counts("tls", &c->tls);
	if (cfg->stream.https)
		print_stream_counts("https", &c->https);
	if (cfg->doq)
		print_doq_counts(&c->doq);
	fflush(stdout);
}

/* The fault field of a --stream-* option. */
static uint64_t *stream_fault(dv_stream_faults_t *f, int c)
{
	switch (c) {
	case OPT_FAULT_CONNS:
		return &f->conn_every;
	case OPT_CLOSE_AFTER:
		return &f->close_after;
	case OPT_RESET_AFTER:
		return &f->reset_after;
	case OPT_HALF_CLOSE_AFTER:
		return &f->half_close_after;
	case OPT_STALL_AFTER:
		return &f->stall_after;
	case OPT_STREAM_DROP_EVERY:
		return &f->drop_every;
	case OPT_READ_AFTER_CONNS:
		return &f->read_after_conns;
	default:
		return &f->reverse;
	}
}

static int usage_error(const char *msg)
{
	fprintf(stderr, PROG ": %s\nTry '" PROG " --help'.\n", msg);
	return 2;
}

/* The command line, parsed. */
typedef struct opts {
	dv_responder_config_t cfg;
	const char *address, *port_file, *tcp_port_file, *tls_port_file, *https_port_file;
	const char *doq_port_file;
	int doq_port;                       /* -1 = off */
	char stream_flag[32];               /* the first --stream-* fault flag given, "" = none */
	int tcp_port, tls_port, https_port; /* -1 = off */
	uint64_t port;
	bool quiet;
	const char *xdp_iface; /* --xdp: XDP sockets (or, with --reflect, the reflecting
	                        * BPF program) on this interface */
	uint64_t given;        /* GIVEN(c) of every long-only option c on the command line */
} opts_t;

/* addr with port (-1: left as it is, the listener is off). */
static void set_port(struct sockaddr_storage *a, int port)
{
	if (port < 0)
		return;
	if (a->ss_family == AF_INET6)
		((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
}

/* The stream listeners: same address as UDP, their own ports. 0 or exit status 2. */
static int stream_setup(opts_t *o)
{
	dv_responder_config_t *cfg = &o->cfg;
	dv_stream_config_t *s = &cfg->stream;
	bool tlsish = o->tls_port >= 0 || o->https_port >= 0 || o->doq_port >= 0;

	if (!tlsish && (s->cert_file != NULL || s->key_file != NULL))
		return usage_error("--tls-cert and --tls-key need --tls-port, --https-port or "
		                   "--doq-port");
	if (o->doq_port < 0 &&
	    (o->doq_port_file != NULL || cfg->quic.max_streams != 0 || cfg->quic.early_data))
		return usage_error("--doq-port-file, --doq-max-streams and --doq-0rtt need "
		                   "--doq-port");
	if (o->doq_port >= 0 && (s->cert_file == NULL || s->key_file == NULL))
		return usage_error("--doq-port needs --tls-cert FILE and --tls-key FILE");
	if (o->tls_port < 0 && o->tls_port_file != NULL)
		return usage_error("--tls-port-file needs --tls-port");
	if (o->https_port < 0 &&
	    (o->https_port_file != NULL || s->doh_path != NULL || s->https_record_each ||
	     s->https_max_streams != 0 || s->https_conn_budget != 0 || s->https_budget != 0))
		return usage_error("--https-port-file, --doh-path, --https-record-each, "
		                   "--https-max-streams and the budgets need --https-port");
	if (o->tcp_port < 0 && o->tcp_port_file != NULL)
		return usage_error("--tcp-port-file needs --tcp-port");
	if (o->tls_port >= 0 && (s->cert_file == NULL || s->key_file == NULL))
		return usage_error("--tls-port needs --tls-cert FILE and --tls-key FILE");
	if (o->https_port >= 0 && (s->cert_file == NULL || s->key_file == NULL))
		return usage_error("--https-port needs --tls-cert FILE and --tls-key FILE");
	if (s->doh_path != NULL && (s->doh_path[0] != '/' || strpbrk(s->doh_path, "?# ") != NULL))
		return bad("--doh-path", s->doh_path, "is not a path starting with '/' (no '?')");
	if (o->tcp_port < 0 && o->tls_port < 0 && o->doq_port < 0 && o->stream_flag[0] != '\0') {
		fprintf(stderr,
		        PROG ": %s needs --tcp-port, --tls-port or --doq-port\nTry '" PROG
		             " --help'.\n",
		        o->stream_flag);
		return 2;
	}
	if (s->faults.reverse > DV_STREAM_REVERSE_MAX)
		return usage_error("--stream-reverse: at most 1024 answers in a group");
	s->tcp = o->tcp_port >= 0;
	s->tls = o->tls_port >= 0;
	s->https = o->https_port >= 0;
	s->addr_len = cfg->addr_len;
	s->tcp_addr = s->tls_addr = s->https_addr = cfg->addr;
	set_port(&s->tcp_addr, o->tcp_port);
	set_port(&s->tls_addr, o->tls_port);
	set_port(&s->https_addr, o->https_port);
	cfg->doq = o->doq_port >= 0;
	cfg->quic.addr = cfg->addr;
	cfg->quic.addr_len = cfg->addr_len;
	set_port(&cfg->quic.addr, o->doq_port);
	return 0;
}

/* "--flag cannot be used with MODE: why", exit status 2. */
static int conflict(int c, const char *mode, const char *why)
{
	fprintf(stderr, PROG ": %s cannot be used with %s: %s\nTry '" PROG " --help'.\n",
	        opt_name(c), mode, why);
	return 2;
}

/*
 * Options the mode asked for would ignore: refused (exit status 2) before anything is
 * opened, never taken and dropped in silence. --xdp --reflect: the BPF program answers in
 * the driver with --drop-every and --garbage-every only. --xdp: the answers leave as XDP
 * frames, never by UDP GSO. --capacity-backlog: --capacity's queue. The DoQ listener
 * alone: the stream faults that have no meaning for it.
 */
static int mode_conflicts(const opts_t *o)
{
	static const int xdp_reflect_ignores[] = {
	    OPT_DELAY,    OPT_CAPACITY,       OPT_CAPACITY_BACKLOG,     OPT_RCODE,
	    OPT_TC_EVERY, OPT_WRONG_ID_EVERY, OPT_WRONG_QUESTION_EVERY, OPT_DUPLICATE_EVERY,
	};
	static const int doq_ignores[] = {OPT_HALF_CLOSE_AFTER, OPT_REVERSE, OPT_READ_AFTER_CONNS};
	size_t i;

	for (i = 0;
	     o->xdp_iface != NULL && o->cfg.reflect && i < DV_ARRAY_SIZE(xdp_reflect_ignores);
	     i++) {
		if (o->given & GIVEN(xdp_reflect_ignores[i]))
			return conflict(xdp_reflect_ignores[i], "--xdp --reflect",
			                "the XDP program answers in the driver and applies only "
			                "--drop-every and --garbage-every (--xdp without --reflect "
			                "applies it)");
	}
	if (o->xdp_iface != NULL && (o->given & GIVEN(OPT_NO_GSO)))
		return conflict(OPT_NO_GSO, "--xdp",
		                "the answers leave as XDP frames, never by UDP GSO");
	if ((o->given & GIVEN(OPT_CAPACITY_BACKLOG)) && !(o->given & GIVEN(OPT_CAPACITY)))
		return usage_error("--capacity-backlog needs --capacity (it bounds its queue)");
	for (i = 0; o->doq_port >= 0 && o->tcp_port < 0 && o->tls_port < 0 &&
	            i < DV_ARRAY_SIZE(doq_ignores);
	     i++) {
		if (o->given & GIVEN(doq_ignores[i]))
			return conflict(doq_ignores[i], "--doq-port alone",
			                "DoQ has no half-close, answer order or read delay (it "
			                "applies to --tcp-port and --tls-port)");
	}
	return 0;
}

/*
 * Wait for SIGINT/SIGTERM (blocked in every thread) or a thread that failed, asleep: a
 * signalfd and the responder's stop descriptor in one poll(), no timeout. Where no
 * signalfd can be had (out of descriptors), a 100 ms sigtimedwait that looks at the
 * threads between waits.
 */
static void wait_for_stop(dv_responder_t *r, const sigset_t *set)
{
	struct pollfd p[2] = {{.fd = signalfd(-1, set, SFD_CLOEXEC), .events = POLLIN},
	                      {.fd = dv_responder_stop_fd(r), .events = POLLIN}};

	if (p[0].fd < 0) {
		const struct timespec tick = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
		while (sigtimedwait(set, NULL, &tick) < 0 && !dv_responder_failed(r))
			;
		return;
	}
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	close(p[0].fd);
}

/* The counter a "every N" style option sets (the --*-every faults, --stream-*), or NULL. */
static uint64_t *every_field(dv_responder_config_t *cfg, int c)
{
	switch (c) {
	case OPT_DROP_EVERY:
		return &cfg->drop_every;
	case OPT_TC_EVERY:
		return &cfg->tc_every;
	case OPT_GARBAGE_EVERY:
		return &cfg->garbage_every;
	case OPT_WRONG_ID_EVERY:
		return &cfg->wrong_id_every;
	case OPT_WRONG_QUESTION_EVERY:
		return &cfg->wrong_question_every;
	case OPT_DUPLICATE_EVERY:
		return &cfg->duplicate_every;
	case OPT_FAULT_CONNS:
	case OPT_CLOSE_AFTER:
	case OPT_RESET_AFTER:
	case OPT_HALF_CLOSE_AFTER:
	case OPT_STALL_AFTER:
	case OPT_STREAM_DROP_EVERY:
	case OPT_REVERSE:
	case OPT_READ_AFTER_CONNS:
		return stream_fault(&cfg->stream.faults, c);
	default:
		return NULL;
	}
}

/* An option with a numeric or named value (optarg). 0, or exit status 2. */
static int parse_value(opts_t *o, int c)
{
	uint64_t v;
	double x;

	switch (c) {
	case 'p':
		if (dv_parse_u64(optarg, 0, 65535, &o->port) != 0)
			return bad("--port", optarg, "is not a port number from 0 to 65535");
		return 0;
	case 'T':
		if (dv_parse_u64(optarg, 1, DV_RESPONDER_THREADS_MAX, &v) != 0)
			return bad("--threads", optarg, "is not a number from 1 to 256");
		o->cfg.threads = (unsigned)v;
		return 0;
	case OPT_DELAY:
		if (dv_parse_double(optarg, 0.0, 3600.0 * 1000.0, &x) != 0)
			return bad("--delay", optarg,
			           "is not a number of milliseconds from 0 to 3600000");
		o->cfg.delay_ns = (uint64_t)llround(x * (double)DV_NS_PER_MS);
		return 0;
	case OPT_CAPACITY:
		if (dv_parse_double(optarg, 1.0, 1e9, &x) != 0)
			return bad("--capacity", optarg,
			           "is not a rate in queries per second from 1 to 1e9");
		o->cfg.capacity_qps = x;
		return 0;
	case OPT_HTTPS_MAX_STREAMS:
		if (dv_parse_u64(optarg, 1, INT32_MAX, &v) != 0)
			return bad("--https-max-streams", optarg,
			           "is not a number of streams from 1 to 2147483647");
		o->cfg.stream.https_max_streams = (uint32_t)v;
		return 0;
	case OPT_HTTPS_CONN_BUDGET:
	case OPT_HTTPS_BUDGET:
		if (dv_parse_u64(optarg, 4096, UINT64_MAX / 2, &v) != 0)
			return bad(opt_name(c), optarg, "is not a number of bytes, 4096 or more");
		*(c == OPT_HTTPS_BUDGET ? &o->cfg.stream.https_budget
		                        : &o->cfg.stream.https_conn_budget) = v;
		return 0;
	case OPT_CAPACITY_BACKLOG:
		if (dv_parse_u64(optarg, 0, DV_RESPONDER_HOLD_MAX, &v) != 0)
			return bad("--capacity-backlog", optarg,
			           "is not a number of queries from 0 to 1048576");
		o->cfg.capacity_backlog = (uint32_t)v;
		return 0;
	case OPT_RCODE:
		if (dv_rcode_parse(optarg, &o->cfg.rcode) != 0)
			return bad("--rcode", optarg,
			           "is not an rcode name (NOERROR, FORMERR, SERVFAIL, "
			           "NXDOMAIN, NOTIMP, REFUSED, ...) or a number from 0 to 15");
		return 0;
	case OPT_DOQ_MAX_STREAMS:
		if (dv_parse_u64(optarg, 1, 1000000, &v) != 0)
			return bad("--doq-max-streams", optarg,
			           "is not a number from 1 to 1000000");
		o->cfg.quic.max_streams = (uint32_t)v;
		return 0;
	default: /* OPT_TCP_PORT, OPT_TLS_PORT, OPT_HTTPS_PORT, OPT_DOQ_PORT */
		if (dv_parse_u64(optarg, 0, 65535, &v) != 0)
			return bad(opt_name(c), optarg, "is not a port number from 0 to 65535");
		if (c == OPT_DOQ_PORT)
			o->doq_port = (int)v;
		else if (c == OPT_TCP_PORT)
			o->tcp_port = (int)v;
		else if (c == OPT_TLS_PORT)
			o->tls_port = (int)v;
		else
			o->https_port = (int)v;
		return 0;
	}
}

/* An unknown option or one without its value: the message. Exit status 2. */
static int bad_option(int c, const char *flag)
{
	if (c == ':')
		fprintf(stderr, PROG ": option '%s' needs a value\n", flag);
	else if (optopt > 0 && optopt < 128)
		fprintf(stderr, PROG ": unknown option '-%c'\n", optopt);
	else
		fprintf(stderr, PROG ": unknown option '%s'\n", flag);
	fprintf(stderr, "Try '" PROG " --help'.\n");
	return 2;
}

/* One option from getopt_long. 0 go on, -1 done (help or version printed), else exit status. */
static int parse_opt(opts_t *o, int c, const char *flag)
{
	uint64_t *every = every_field(&o->cfg, c);

	if (c >= OPT_PORT_FILE && c < OPT_END_)
		o->given |= GIVEN(c);
	if (every != NULL) {
		if (dv_parse_u64(optarg, 0, UINT64_MAX / 2, every) != 0)
			return bad(opt_name(c), optarg, "is not a whole number (0 = off)");
		if (c >= OPT_FAULT_CONNS && c <= OPT_READ_AFTER_CONNS && o->stream_flag[0] == '\0')
			snprintf(o->stream_flag, sizeof(o->stream_flag), "%s", opt_name(c));
		return 0;
	}
	switch (c) {
	case 'a':
		o->address = optarg;
		return 0;
	case OPT_PORT_FILE:
		o->port_file = optarg;
		return 0;
	case OPT_TCP_PORT_FILE:
		o->tcp_port_file = optarg;
		return 0;
	case OPT_TLS_PORT_FILE:
		o->tls_port_file = optarg;
		return 0;
	case OPT_DOQ_PORT_FILE:
		o->doq_port_file = optarg;
		return 0;
	case OPT_DOQ_0RTT:
		if (strcmp(optarg, "accept") != 0 && strcmp(optarg, "reject") != 0)
			return bad("--doq-0rtt", optarg, "is not accept or reject");
		o->cfg.quic.early_data = true;
		o->cfg.quic.early_reject = optarg[0] == 'r';
		return 0;
	case OPT_HTTPS_PORT_FILE:
		o->https_port_file = optarg;
		return 0;
	case OPT_DOH_PATH:
		o->cfg.stream.doh_path = optarg;
		return 0;
	case OPT_HTTPS_RECORD_EACH:
		o->cfg.stream.https_record_each = true;
		return 0;
	case OPT_TLS_CERT:
		o->cfg.stream.cert_file = optarg;
		return 0;
	case OPT_TLS_KEY:
		o->cfg.stream.key_file = optarg;
		return 0;
	case OPT_REFLECT:
		o->cfg.reflect = true;
		return 0;
	case OPT_NO_GSO:
		o->cfg.no_gso = true;
		return 0;
	case OPT_XDP:
		o->xdp_iface = optarg;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'h':
		usage(stdout);
		return -1;
	case OPT_VERSION:
		printf(PROG " %s\n", PACKAGE_VERSION);
		return -1;
	case 'p':
	case 'T':
	case OPT_DELAY:
	case OPT_CAPACITY:
	case OPT_CAPACITY_BACKLOG:
	case OPT_HTTPS_MAX_STREAMS:
	case OPT_HTTPS_CONN_BUDGET:
	case OPT_HTTPS_BUDGET:
	case OPT_RCODE:
	case OPT_TCP_PORT:
	case OPT_TLS_PORT:
	case OPT_HTTPS_PORT:
	case OPT_DOQ_PORT:
	case OPT_DOQ_MAX_STREAMS:
		return parse_value(o, c);
	default:
		return bad_option(c, flag);
	}
}

/* The whole command line into o. 0 go on, -1 done (help or version), else exit status. */
static int parse_args(opts_t *o, int argc, char **argv)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	dv_responder_config_init(&o->cfg);
	o->address = "127.0.0.1";
	o->port = 53;
	o->tcp_port = o->tls_port = o->https_port = o->doq_port = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:T:qh", long_opts, NULL)) != -1) {
		rc = parse_opt(o, c, optind > 1 ? argv[optind - 1] : "?");
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\nTry '" PROG " --help'.\n",
		        argv[optind]);
		return 2;
	}
	if (parse_address(o->address, (uint16_t)o->port, &o->cfg) != 0)
		return bad("--address", o->address, "is not an IPv4 or IPv6 address");
	rc = mode_conflicts(o);
	return rc != 0 ? rc : stream_setup(o);
}

/* The start-up line on stderr and the port files. 0, or -errno in err. */
static int announce(const opts_t *o, const dv_responder_t *r, dv_err_t *err)
{
	const dv_responder_config_t *cfg = &o->cfg;
	char at[DV_SOCKADDR_TEXT_MAX];
	int rc = 0;

	dv_sockaddr_text_port((const struct sockaddr *)&cfg->addr, dv_responder_port(r), at,
	                      sizeof(at));
	/* The sockets are bound: queries sent from now on wait in their buffers. */
	if (!o->quiet)
		fprintf(stderr, PROG ": listening on %s (%u thread%s)\n", at, cfg->threads,
		        cfg->threads == 1 ? "" : "s");
	if (!o->quiet && (cfg->stream.tcp || cfg->stream.tls || cfg->stream.https))
		fprintf(stderr, PROG ": TCP port %u, TLS port %u, HTTPS port %u (0 = off)\n",
		        dv_responder_stream_port(r, DV_STREAM_TCP),
		        dv_responder_stream_port(r, DV_STREAM_TLS),
		        dv_responder_stream_port(r, DV_STREAM_HTTPS));
	/* The stream port files first: a test that sees --port-file sees them too. */
	if (o->tcp_port_file != NULL)
		rc = write_port_file(o->tcp_port_file, dv_responder_stream_port(r, DV_STREAM_TCP),
		                     err);
	if (rc == 0 && o->tls_port_file != NULL)
		rc = write_port_file(o->tls_port_file, dv_responder_stream_port(r, DV_STREAM_TLS),
		                     err);
	if (!o->quiet && cfg->doq)
		fprintf(stderr, PROG ": DoQ port %u\n", dv_responder_doq_port(r));
	if (rc == 0 && o->doq_port_file != NULL)
		rc = write_port_file(o->doq_port_file, dv_responder_doq_port(r), err);
	if (rc == 0 && o->https_port_file != NULL)
		rc = write_port_file(o->https_port_file,
		                     dv_responder_stream_port(r, DV_STREAM_HTTPS), err);
	if (rc == 0 && o->port_file != NULL)
		rc = write_port_file(o->port_file, dv_responder_port(r), err);
	return rc;
}

/*
 * --capacity: the sockets asked for the kernel's receive stamps (dv_responder_open); it
 * switches them on later (base/netstamp.h). Wait for them before the port file says the
 * responder is ready, so that the first queries are timed from their arrival too; a
 * query that still comes unstamped is timed from its read and counted (unstamped).
 */
static void stamps_ready(const opts_t *o)
{
	unsigned tries = 0;
	int rc = dv_netstamp_wait(DV_NETSTAMP_WAIT_MS, &tries);

	if (o->quiet || rc == 0)
		return;
	if (rc == -ETIMEDOUT)
		fprintf(stderr,
		        PROG ": note: the kernel did not stamp received packets within %u ms "
		             "(%u tries): --capacity times the queries that come before it does "
		             "from their read, not their arrival (counted as unstamped)\n",
		        DV_NETSTAMP_WAIT_MS, tries);
	else
		fprintf(stderr,
		        PROG ": note: cannot check that the kernel stamps received packets (%s): "
		             "--capacity times the queries that come unstamped from their read "
		             "(counted as unstamped)\n",
		        strerror(-rc));
}

/* --xdp: what answers at the driver: the XDP sockets, or the reflecting program. */
typedef struct xdp_mode {
	dv_rxdp_t *reflect; /* --xdp --reflect */
	dv_rxsk_t *xsk;     /* --xdp */
} xdp_mode_t;

/* --xdp: the program (and sockets) on the interface, answering the bound port. */
static int xdp_open(const opts_t *o, const dv_responder_t *r, xdp_mode_t *x, dv_err_t *err)
{
	if (o->cfg.reflect)
		return dv_rxdp_open(&x->reflect, o->xdp_iface, dv_responder_port(r),
		                    o->cfg.drop_every, o->cfg.garbage_every, err);
	return dv_rxsk_open(&x->xsk, o->xdp_iface, dv_responder_port(r), &o->cfg, err);
}

static void xdp_close(xdp_mode_t *x)
{
	dv_rxdp_close(x->reflect);
	dv_rxsk_close(x->xsk);
}

/* --xdp: what the program or the sockets did, after the socket counts. */
static void print_xdp_counts(const xdp_mode_t *x)
{
	dv_rxdp_counts_t c;
	dv_rxsk_counts_t k;

	if (x->reflect != NULL) {
		dv_rxdp_read(x->reflect, &c);
		printf("xdp-received %" PRIu64 "\n", c.n[DV_RXDP_RECEIVED]);
		printf("xdp-answered %" PRIu64 "\n", c.n[DV_RXDP_ANSWERED]);
		printf("xdp-dropped %" PRIu64 "\n", c.n[DV_RXDP_DROPPED]);
		printf("xdp-garbage %" PRIu64 "\n", c.n[DV_RXDP_GARBAGE]);
	} else if (x->xsk != NULL) {
		dv_rxsk_join(x->xsk, &k);
		printf("xdp-received %" PRIu64 "\n", k.c.received);
		printf("xdp-answered %" PRIu64 "\n", k.c.answered);
		printf("xdp-dropped %" PRIu64 "\n", k.c.dropped);
		printf("xdp-faulty %" PRIu64 "\n", k.c.faulty);
		printf("xdp-duplicates %" PRIu64 "\n", k.c.duplicates);
		printf("xdp-malformed %" PRIu64 "\n", k.c.malformed);
		printf("xdp-send-errors %" PRIu64 "\n", k.c.send_errors);
		printf("xdp-source-ports %" PRIu64 "\n", k.c.source_ports);
		printf("xdp-rx-dropped %" PRIu64 "\n", k.rx_dropped);
		printf("xdp-rx-ring-full %" PRIu64 "\n", k.rx_ring_full);
		printf("xdp-rx-fill-empty %" PRIu64 "\n", k.rx_fill_ring_empty);
		printf("xdp-tx-invalid %" PRIu64 "\n", k.tx_invalid);
		printf("xdp-stamped %" PRIu64 "\n", k.stamped);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	opts_t o;
	dv_responder_counts_t counts;
	dv_responder_t *r = NULL;
	xdp_mode_t xdp = {NULL, NULL};
	dv_err_t err = {{0}};
	sigset_t set;
	int rc;

	/* Blocked before any thread exists, so that only wait_for_stop() takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGINT, SIG_DFL); /* an inherited SIG_IGN must not hide them */
	signal(SIGTERM, SIG_DFL);

	rc = parse_args(&o, argc, argv);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	rc = dv_responder_open(&r, &o.cfg, &err);
	if (rc != 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return 1;
	}
	if (o.cfg.capacity_qps > 0)
		stamps_ready(&o);
	/* --xdp before the port file: a client that sees it is answered in XDP. */
	if ((o.xdp_iface != NULL && xdp_open(&o, r, &xdp, &err) != 0) ||
	    announce(&o, r, &err) != 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		xdp_close(&xdp);
		dv_responder_free(r);
		return 1;
	}
	rc = dv_responder_start(r, &err);
	if (rc == 0 && xdp.xsk != NULL)
		rc = dv_rxsk_start(xdp.xsk, &err);
	if (rc == 0)
		wait_for_stop(r, &set);
	dv_responder_stop(r);
	if (dv_responder_join(r, &counts, rc == 0 ? &err : NULL) != 0 && rc == 0)
		rc = -1;
	print_counts(&o.cfg, &counts);
	print_xdp_counts(&xdp);
	xdp_close(&xdp);
	if (rc != 0)
		fprintf(stderr, PROG ": %s\n", err.msg);
	dv_responder_free(r);
	return rc == 0 ? 0 : 1;
}
