/* cmd_resperf: dnsvolley resperf: resperf's ramp, flags and summary lines on dnsvolley's engine. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "cmd/target.h"
#include "engine/run.h"
#include "input/querylist.h"
#include "input/tsig.h"
#include "results/plot_capacity.h"

#define PFX "dnsvolley resperf: "

typedef struct rp_opts {
	const char *server, *list, *plot, *chart_dir, *local;
	dv_querylist_options_t qo; /* -e, -D, -E */
	uint64_t port, local_port, max_qps, outstanding, clients, threads, buf_kb;
	double ramp_s, const_s, max_loss, timeout_s, interval_s;
	int family;    /* -f */
	bool port_set; /* -p given (else the mode's port) */
	bool reopen;   /* -R: the list is used again from its start when it runs out */
	bool verbose;  /* -v */
	FILE *log;     /* warnings and errors: stderr, or stdout with -W */
	FILE *plot_f;  /* -P, opened before the run so a bad path fails before measuring */
	bool tsig_on;  /* -y: the list is signed before the run (input/tsig.h) */
	dv_tsig_key_t tsig;
	dv_run_config_t run; /* -M, -O and the transport options go straight here */
} rp_opts_t;

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: dnsvolley resperf [-f family] [-M mode] [-s server] [-p port] [-a addr] "
	        "[-x port]\n"
	        "         [-d datafile] [-t timeout] [-b KB] [-e] [-E code:hex] [-D]\n"
	        "         [-y [alg:]name:secret] [-i sec] [-m qps] [-P plotfile] [-r sec] "
	        "[-c sec]\n"
	        "         [-L pct] [-C clients] [-q num] [-v] [-W] [-R] [-F 0] [-h] [-H]\n"
	        "         [-O name=value] [-T threads] [-o chartdir]\n"
	        "resperf's ramp: the offered rate grows linearly from 0 to -m over -r seconds, "
	        "then\n"
	        "stays at -m for -c seconds. Prints resperf's \"Maximum throughput\" and "
	        "\"Lost at\n"
	        "that point\" and writes resperf's plot data to -P (resperf.gnuplot): a row per "
	        "-i\n"
	        "interval while sending, at its midpoint; -o DIR draws it as resperf-report does\n"
	        "(DIR/resperf.png, gnuplot). Flags as resperf's (-M udp|tcp|dot|doh|doq, -R reuses "
	        "the\n"
	        "list when it runs out, -W warnings on stdout); -T threads and -o are "
	        "dnsvolley's.\n"
	        "Refused, with why: -F N other than 0.\n"
	        "Defaults as resperf's: -m 100000 -r 60 -c 0 -L 100 -q 65536 -t 45 -C 1 -i "
	        "0.5; -T 1.\n");
}

static void long_usage(FILE *f)
{
	fprintf(f, "Usage: dnsvolley resperf ... -O <name>=<value> ...\n\n"
	           "Available long options:\n"
	           "  num-queries-per-conn: queries per connection, then reopen (-M tcp|dot|doh)\n"
	           "  suppress: resperf's message types (timeouts, congestion, sendfailed,\n"
	           "            sockready, unexpected): accepted, dnsvolley prints none of them\n"
	           "  doh-method: GET or POST (-M doh)\n"
	           "  doh-uri: https://HOST[:PORT]/PATH: the PATH is used (-M doh)\n");
}

static int bad(char c, const char *v, const char *what)
{
	fprintf(stderr, PFX "-%c: '%s' %s\nTry 'dnsvolley resperf -h' for more information.\n", c,
	        v, what);
	return DV_EXIT_USAGE;
}

/* A flag resperf has that dnsvolley refuses, with why. */
static int refuse(char c, const char *why)
{
	fprintf(stderr, PFX "-%c: %s\n", c, why);
	return DV_EXIT_USAGE;
}

/* -e, -D, -E CODE:HEX: the queries' OPT RR, as resperf's. 0, or -1 when said why. */
static int parse_edns(int c, const char *v, dv_querylist_options_t *qo)
{
	dv_err_t err = {{0}};

	if (c == 'e') {
		qo->edns = true;
	} else if (c == 'D') {
		qo->edns = qo->dnssec_ok = true;
	} else if (dv_querylist_add_edns_option(qo, v, &err) != 0) {
		fprintf(stderr, PFX "%s\nTry 'dnsvolley resperf -h' for more information.\n",
		        err.msg);
		return -1;
	}
	return 0;
}

/* -O NAME=VALUE: resperf's long options. */
static int parse_long(rp_opts_t *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *val = eq != NULL ? eq + 1 : "";
	size_t n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	dv_err_t err = {{0}};

	if (eq == NULL || *val == '\0')
		return bad('O', arg, "is not NAME=VALUE (see -H for the names)");
	if (n == 8 && strncmp(arg, "suppress", n) == 0) {
		if (dv_cli_parse_suppress(val, &err) == 0)
			return 0;
		fprintf(stderr, PFX "%s\n", err.msg);
		return DV_EXIT_USAGE;
	}
	if (n == 20 && strncmp(arg, "num-queries-per-conn", n) == 0)
		return dv_parse_u64(val, 1, UINT32_MAX, &o->run.queries_per_conn) != 0
		           ? bad('O', arg, "is not a count")
		           : 0;
	if (n == 10 && strncmp(arg, "doh-method", n) == 0) {
		if (strcasecmp(val, "GET") != 0 && strcasecmp(val, "POST") != 0)
			return bad('O', arg, "is not GET or POST");
		o->run.tp.doh_get = strcasecmp(val, "GET") == 0;
		return 0;
	}
	if (n == 7 && strncmp(arg, "doh-uri", n) == 0) {
		const char *p = strstr(val, "://");
		p = p != NULL ? strchr(p + 3, '/') : NULL;
		if (p == NULL)
			return bad('O', arg, "has no path (https://HOST/dns-query)");
		o->run.tp.doh_path = p;
		return 0;
	}
	return bad('O', arg,
	           "is not a long option (num-queries-per-conn, suppress, doh-method, doh-uri)");
}

/* Flags that name where and how to send: -f -M -s -p -a -x -b -d -P -o. NOT_MINE: 1. */
static int parse_net(rp_opts_t *o, int c, const char *v)
{
	switch (c) {
	case 'f':
		if (strcmp(v, "inet") == 0)
			o->family = AF_INET;
		else if (strcmp(v, "inet6") == 0)
			o->family = AF_INET6;
		else if (strcmp(v, "any") == 0)
			o->family = AF_UNSPEC;
		else
			return bad('f', v, "is not a family (inet, inet6 or any)");
		return 0;
	case 'M':
		if (strcmp(v, "udp") == 0) {
			o->run.stream = false;
			return 0;
		}
		if (dv_tp_desc_find(v) == NULL) {
			char why[96];
			snprintf(why, sizeof(why), "is not a mode (%s)",
			         dv_tp_kind_list("udp", false, NULL));
			return bad('M', v, why);
		}
		o->run.stream = true;
		o->run.tp.kind = dv_tp_desc_find(v)->kind;
		return 0;
	case 's':
		o->server = v;
		return 0;
	case 'p':
		o->port_set = true;
		return dv_parse_u64(v, 1, 65535, &o->port) ? bad('p', v, "is not a port") : 0;
	case 'a':
		o->local = v;
		return 0;
	case 'x':
		return dv_parse_u64(v, 0, 65535, &o->local_port) ? bad('x', v, "is not a port") : 0;
	case 'b':
		return dv_parse_u64(v, 1, 1024 * 1024, &o->buf_kb) ? bad('b', v, "is not kilobytes")
		                                                   : 0;
	case 'd':
		o->list = v;
		return 0;
	case 'P':
		o->plot = v;
		return 0;
	case 'o':
		o->chart_dir = v;
		return 0;
	}
	return 1;
}

/* The ramp and the load: -m -r -c -L -q -C -T -t -i. NOT_MINE: 1. */
static int parse_load(rp_opts_t *o, int c, const char *v)
{
	switch (c) {
	case 'm':
		return dv_parse_u64(v, 1, 100000000, &o->max_qps) ? bad('m', v, "is not a rate")
		                                                  : 0;
	case 'q':
		return dv_parse_u64(v, 1, 1u << 24, &o->outstanding) ? bad('q', v, "is not a count")
		                                                     : 0;
	case 'C':
		return dv_parse_u64(v, 1, 65535, &o->clients) ? bad('C', v, "is not a count") : 0;
	case 'T':
		return dv_parse_u64(v, 1, 256, &o->threads) ? bad('T', v, "is not 1..256") : 0;
	case 'r':
		return dv_parse_double(v, 0, 86400, &o->ramp_s) ? bad('r', v, "is not seconds") : 0;
	case 'c':
		return dv_parse_double(v, 0, 86400, &o->const_s) ? bad('c', v, "is not seconds")
		                                                 : 0;
	case 't':
		return dv_parse_double(v, 0.001, 3600, &o->timeout_s)
		           ? bad('t', v, "is not seconds")
		           : 0;
	case 'i':
		return dv_parse_double(v, 0.01, 3600, &o->interval_s)
		           ? bad('i', v, "is not seconds")
		           : 0;
	case 'L':
		return dv_parse_double(v, 0, 100, &o->max_loss) ? bad('L', v, "is not a percentage")
		                                                : 0;
	}
	return 1;
}

/* The rest: -e -D -E -v -W -R -F -y -O -h -H, and getopt's complaints. -1: help printed. */
static int parse_other(rp_opts_t *o, int c, const char *v)
{
	dv_err_t err = {{0}};
	uint64_t n;

	switch (c) {
	case 'e':
	case 'D':
	case 'E':
		return parse_edns(c, v, &o->qo) != 0 ? DV_EXIT_USAGE : 0;
	case 'v':
		o->verbose = true;
		return 0;
	case 'W':
		o->log = stdout;
		return 0;
	case 'R':
		o->reopen = true;
		return 0;
	case 'F':
		if (dv_parse_u64(v, 0, UINT32_MAX, &n) != 0)
			return bad('F', v, "is not a count");
		if (n != 0)
			return refuse('F',
			              "dnsvolley does not end the ramp when it falls behind its "
			              "schedule: it forfeits queries over 1 s late and counts "
			              "them; -F 0 (never end early) is accepted");
		return 0;
	case 'y':
		o->tsig_on = true;
		if (dv_tsig_key_parse(&o->tsig, v, &err) == 0)
			return 0;
		fprintf(stderr, PFX "%s\n", err.msg);
		return DV_EXIT_USAGE;
	case 'O':
		return parse_long(o, v);
	case 'h':
		usage(stdout);
		return -1;
	case 'H':
		long_usage(stdout);
		return -1;
	case ':':
		fprintf(stderr,
		        PFX "-%c needs a value\nTry 'dnsvolley resperf -h' for more "
		            "information.\n",
		        optopt);
		return DV_EXIT_USAGE;
	default:
		fprintf(stderr,
		        PFX "-%c is not a resperf flag\nTry 'dnsvolley resperf -h' for "
		            "more information.\n",
		        optopt);
		return DV_EXIT_USAGE;
	}
}

/*
 * A "--NAME" argument: resperf has single-letter flags only, so name the whole argument
 * (getopt would report its second '-') and say where its long settings go instead.
 */
static int long_flag(const char *arg)
{
	fprintf(stderr,
	        PFX "'%s' is not a resperf flag: resperf's flags are single letters%s, and its "
	            "settings with names go through -O NAME=VALUE\nTry 'dnsvolley resperf -h' for "
	            "more information.\n",
	        arg, strcmp(arg, "--help") == 0 ? " (-h for help)" : "");
	return DV_EXIT_USAGE;
}

/* After the flags: what they mean together. */
static int check(rp_opts_t *o)
{
	if (o->ramp_s + o->const_s <= 0) {
		fprintf(stderr, PFX "-r and -c are both 0: nothing to send\n");
		return DV_EXIT_USAGE;
	}
	if (o->outstanding > o->clients * 65536) {
		fprintf(stderr, PFX "-q %" PRIu64 ": at most 64K outstanding per client (-C)\n",
		        o->outstanding);
		return DV_EXIT_USAGE;
	}
	if (o->run.queries_per_conn > 0 && !o->run.stream) {
		fprintf(stderr, PFX "-O num-queries-per-conn needs -M %s\n",
		        dv_tp_kind_list(NULL, false, NULL));
		return DV_EXIT_USAGE;
	}
	if ((o->run.tp.doh_path != NULL || o->run.tp.doh_get) &&
	    !(o->run.stream && o->run.tp.kind == DV_TP_DOH)) {
		fprintf(stderr, PFX "-O doh-uri and doh-method need -M doh\n");
		return DV_EXIT_USAGE;
	}
	if (!o->port_set && o->run.stream)
		o->port = dv_tp_desc(o->run.tp.kind)->default_port;
	if (o->threads > o->clients)
		o->clients = o->threads;
	return 0;
}

static int parse(int argc, char **argv, rp_opts_t *o)
{
	int c, rc;

	*o = (rp_opts_t){.server = "127.0.0.1",
	                 .list = "-",
	                 .plot = "resperf.gnuplot",
	                 .port = 53,
	                 .max_qps = 100000,
	                 .outstanding = 65536,
	                 .clients = 1,
	                 .threads = 1,
	                 .ramp_s = 60,
	                 .max_loss = 100,
	                 .timeout_s = 45,
	                 .interval_s = 0.5,
	                 .family = AF_UNSPEC,
	                 .log = stderr};
	dv_querylist_options_init(&o->qo);
	dv_run_config_init(&o->run);
	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, ":f:M:s:p:a:x:d:t:b:eE:Dy:i:m:P:r:c:L:C:q:vWRF:hHO:T:o:")) !=
	       -1) {
		if (c == '?' && optopt == '-') /* getopt saw "--NAME" as the flag '-' */
			return long_flag(argv[optind]);
		rc = parse_net(o, c, optarg);
		if (rc == 1)
			rc = parse_load(o, c, optarg);
		if (rc == 1)
			rc = parse_other(o, c, optarg);
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, PFX "unexpected argument '%s'\n", argv[optind]);
		return DV_EXIT_USAGE;
	}
	return check(o);
}

/* The ramp's target rate at t seconds (resperf: the rate at each interval's midpoint). */
static double target_qps(const rp_opts_t *o, double t)
{
	return t < o->ramp_s ? (double)o->max_qps * t / o->ramp_s : (double)o->max_qps;
}

/*
 * The rows of the plot file, as resperf's: the intervals while sending, without the one in
 * which sending stopped when it stopped early (a partial interval), never the -t drain.
 */
static size_t plot_rows(const rp_opts_t *o, const dv_pass_result_t *r)
{
	size_t full = (size_t)((o->ramp_s + o->const_s) / o->interval_s + 1e-9), last = 0;

	full = DV_MIN(full, r->n_intervals);
	if (r->end == DV_END_TIME)
		return full;
	for (size_t i = 0; i < full; i++)
		if (r->intervals[i].sent > 0)
			last = i;
	return last; /* the interval in which sending stopped is partial: left out */
}

/*
 * resperf's figures and plot file (doc/dnsvolley.1, "resperf"): per interval by send time,
 * its midpoint, the target rate there, queries sent, answered, failed (answers other than
 * NOERROR and NXDOMAIN) per second, mean latency (s), connections per second and their mean
 * set-up time (0: not recorded per interval). Maximum throughput: the highest answers per
 * second over the intervals up to the first whose loss is over -L.
 */
static int figures(const rp_opts_t *o, const dv_pass_result_t *r, double *max_tput,
                   double *lost_pct)
{
	FILE *f = o->plot_f;
	size_t rows = plot_rows(o, r);
	double len = o->interval_s;
	bool over = false;

	fprintf(f, "# time target_qps actual_qps responses_per_sec failures_per_sec avg_latency"
	           " connections conn_avg_latency\n");
	*max_tput = 0;
	*lost_pct = 0;
	for (size_t i = 0; i < rows; i++) {
		const dv_interval_t *iv = &r->intervals[i];
		double mid = ((double)i + 0.5) * len, resp = (double)iv->completed / len, loss;

		loss = iv->sent > iv->completed
		           ? 100 * (double)(iv->sent - iv->completed) / (double)iv->sent
		           : 0;
		fprintf(f, "%7.3f %8.2f %8.2f %8.2f %8.2f %8.6f %8.2f %8.6f\n", mid,
		        target_qps(o, mid), (double)iv->sent / len, resp, (double)iv->failed / len,
		        iv->lat_mean_ns / 1e9, 0.0, 0.0);
		over = over || loss > o->max_loss;
		if (!over && resp > *max_tput) {
			*max_tput = resp;
			*lost_pct = loss;
		}
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

static void print_rcodes(const dv_counters_t *c)
{
	bool first = true;

	printf("  Response codes:       ");
	for (unsigned i = 0; i < DV_RCODES; i++) {
		if (c->rcode[i] == 0)
			continue;
		printf("%s%s %" PRIu64 " (%.2f%%)", first ? "" : ", ", dv_rcode_name(i),
		       c->rcode[i], 100.0 * (double)c->rcode[i] / (double)c->completed);
		first = false;
	}
	printf("\n");
}

static int run(rp_opts_t *o, const dv_querylist_t *ql, dv_run_config_t *cfg)
{
	dv_pass_result_t res;
	dv_err_t err = {{0}};
	double tput = 0, lost = 0;
	const dv_counters_t *c;
	bool interrupted;

	if (dv_run_pass(cfg, ql, &res, &err) != 0) {
		fprintf(o->log, PFX "%s\n", err.msg);
		fclose(o->plot_f);
		return DV_EXIT_RUN_FAILED;
	}
	c = &res.stats.c;
	if (res.end == DV_END_LIST)
		fprintf(o->log,
		        PFX "ran out of query data after %" PRIu64 " queries (-R uses the "
		            "list again)\n",
		        c->sent);
	printf("[Status] Testing complete\n");
	if (figures(o, &res, &tput, &lost) != 0) {
		fprintf(o->log, PFX "-P %s: %s\n", o->plot, strerror(EIO));
		dv_pass_result_free(&res);
		return DV_EXIT_RUN_FAILED;
	}
	printf("\nStatistics:\n\n");
	printf("  Queries sent:         %" PRIu64 "\n", c->sent);
	printf("  Queries completed:    %" PRIu64 "\n", c->completed);
	printf("  Queries lost:         %" PRIu64 "\n", c->sent - c->completed);
	print_rcodes(c);
	printf("  Reconnection(s):      %" PRIu64 "\n", c->conn_reopened);
	printf("  Run time (s):         %.6f\n", res.run_time_s);
	printf("  Maximum throughput:   %.6f qps\n", tput);
	printf("  Lost at that point:   %.2f%%\n", lost);
	if (o->verbose)
		printf("  Forfeited (late):     %" PRIu64 "\n", c->forfeited);
	interrupted = res.interrupted;
	dv_pass_result_free(&res);
	return interrupted ? DV_EXIT_RUN_FAILED : 0;
}

/* -s -p -f -a -x -b -C -T -q -t -m -r -c -i into the run's settings. */
static int configure(rp_opts_t *o, dv_run_config_t *cfg)
{
	dv_err_t err = {{0}};
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE}, *ai = NULL;

	*cfg = o->run;
	if (dv_resolve_target(o->server, (uint16_t)o->port, o->family, &cfg->server,
	                      &cfg->server_len, &err) != 0) {
		fprintf(stderr, PFX "-s: %s\n", err.msg);
		return DV_EXIT_USAGE;
	}
	if (o->local != NULL) {
		if (getaddrinfo(o->local, "0", &hints, &ai) != 0 || ai == NULL)
			return bad('a', o->local, "is not a numeric IPv4 or IPv6 address");
		memcpy(&cfg->local, ai->ai_addr, ai->ai_addrlen);
		cfg->local_len = ai->ai_addrlen;
		freeaddrinfo(ai);
	}
	cfg->local_port = (uint16_t)o->local_port;
	if (o->buf_kb > 0)
		cfg->socket_buf_bytes = (uint32_t)(o->buf_kb * 1024);
	cfg->sockets = (uint32_t)o->clients;
	cfg->threads = (uint32_t)o->threads;
	cfg->max_outstanding = (uint32_t)DV_MIN(o->outstanding, 65536 * o->threads);
	cfg->timeout_ns = (uint64_t)(o->timeout_s * 1e9);
	cfg->max_qps = (double)o->max_qps;
	cfg->ramp_ns = (uint64_t)(o->ramp_s * 1e9);
	cfg->time_limit_ns = (uint64_t)((o->ramp_s + o->const_s) * 1e9);
	cfg->passes = o->reopen ? 0 : 1; /* resperf stops when its list runs out, unless -R */
	cfg->interval_ns = (uint64_t)(o->interval_s * 1e9);
	cfg->out = stdout;
	return 0;
}

int dv_cmd_resperf(int argc, char **argv)
{
	rp_opts_t o;
	dv_run_config_t cfg;
	dv_querylist_t ql;
	dv_err_t err = {{0}};
	int rc = parse(argc, argv, &o);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if ((rc = configure(&o, &cfg)) != 0)
		return rc;
	/* resperf opens its plot file after the test; a bad path should not cost the test
	 * (nor wait for a list on standard input). */
	o.plot_f = fopen(o.plot, "w");
	if (o.plot_f == NULL) {
		fprintf(o.log, PFX "-P %s: %s\n", o.plot, strerror(errno));
		return DV_EXIT_USAGE;
	}
	memset(&ql, 0, sizeof(ql));
	if (dv_querylist_load(&ql, o.list, &o.qo, &err) != 0 ||
	    (o.tsig_on && dv_tsig_sign_list(&ql, &o.tsig, (uint64_t)time(NULL), &err) != 0)) {
		fprintf(o.log, PFX "-d: %s\n", err.msg);
		dv_querylist_free(&ql);
		fclose(o.plot_f);
		return DV_EXIT_USAGE;
	}
	printf("DNS Resolution Performance Testing Tool (dnsvolley resperf mode)\n");
	printf("[Status] Ramping to %" PRIu64 " qps over %g s, then %g s constant\n", o.max_qps,
	       o.ramp_s, o.const_s);
	fflush(stdout);
	rc = run(&o, &ql, &cfg);
	dv_querylist_free(&ql);
	if (rc == 0 && o.chart_dir != NULL) {
		int prc = dv_plot_resperf(o.chart_dir, NULL, o.plot, &err);
		if (prc == -ENODATA) { /* the run stands; there is nothing to draw */
			fprintf(o.log, PFX "-o: %s\n", err.msg);
			return rc;
		}
		if (prc != 0) {
			fprintf(o.log, PFX "-o: %s\n", err.msg);
			return DV_EXIT_RUN_FAILED;
		}
		printf("[Status] Chart: %s/resperf.png\n", o.chart_dir);
	}
	return rc;
}
