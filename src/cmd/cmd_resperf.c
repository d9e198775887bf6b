/* cmd_resperf: dnsvolley resperf: resperf's ramp, flags and summary lines on dnsvolley's engine. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/target.h"
#include "engine/run.h"
#include "input/querylist.h"
#include "results/plot_capacity.h"

#define EXIT_USAGE      2
#define EXIT_RUN_FAILED 3

typedef struct rp_opts {
	const char *server, *list, *plot, *chart_dir;
	dv_querylist_options_t qo; /* -e, -D, -E */
	uint64_t port, max_qps, outstanding, clients, threads;
	double ramp_s, const_s, max_loss, timeout_s, interval_s;
} rp_opts_t;

static void usage(FILE *f)
{
	fprintf(f, "Usage: dnsvolley resperf [-s SERVER] [-p PORT] [-d FILE] [-m QPS] [-r SEC] "
	           "[-c SEC]\n"
	           "                        [-L PCT] [-q N] [-t SEC] [-C N] [-T N] [-i SEC] "
	           "[-P FILE] [-o DIR]\n"
	           "                        [-e] [-D] [-E CODE:HEX]\n"
	           "resperf's ramp: the offered rate grows linearly from 0 to -m over -r seconds, "
	           "then\n"
	           "stays at -m for -c seconds. Prints resperf's \"Maximum throughput\" and "
	           "\"Lost at\n"
	           "that point\" and writes resperf's plot data to -P (resperf.gnuplot);\n"
	           "-o DIR draws it as resperf-report does (DIR/resperf.png, gnuplot).\n"
	           "-e adds EDNS0, -D sets the DNSSEC OK bit, -E CODE:HEX adds an EDNS option "
	           "(both imply -e).\n"
	           "Defaults as resperf's: -m 100000 -r 60 -c 0 -L 100 -q 65536 -t 45 -C 1 -i "
	           "0.5; -T 1.\n");
}

static int bad(char c, const char *v, const char *what)
{
	fprintf(stderr,
	        "dnsvolley resperf: -%c: '%s' %s\nTry 'dnsvolley resperf -h' for more "
	        "information.\n",
	        c, v, what);
	return EXIT_USAGE;
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
		fprintf(stderr,
		        "dnsvolley resperf: %s\nTry 'dnsvolley resperf -h' for more information.\n",
		        err.msg);
		return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, rp_opts_t *o)
{
	int c;

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
	                 .interval_s = 0.5};
	dv_querylist_options_init(&o->qo);
	optind = 1;
	while ((c = getopt(argc, argv, "s:p:d:m:r:c:L:q:t:C:T:i:P:o:eDE:h")) != -1) {
		const char *v = optarg;
		switch (c) {
		case 'e':
		case 'D':
		case 'E':
			if (parse_edns(c, v, &o->qo) != 0)
				return EXIT_USAGE;
			break;
		case 's':
			o->server = v;
			break;
		case 'd':
			o->list = v;
			break;
		case 'P':
			o->plot = v;
			break;
		case 'o':
			o->chart_dir = v;
			break;
		case 'p':
			if (dv_parse_u64(v, 1, 65535, &o->port))
				return bad('p', v, "is not a port");
			break;
		case 'm':
			if (dv_parse_u64(v, 1, 100000000, &o->max_qps))
				return bad('m', v, "is not a rate");
			break;
		case 'q':
			if (dv_parse_u64(v, 1, 1u << 24, &o->outstanding))
				return bad('q', v, "is not a count");
			break;
		case 'C':
			if (dv_parse_u64(v, 1, 65535, &o->clients))
				return bad('C', v, "is not a count");
			break;
		case 'T':
			if (dv_parse_u64(v, 1, 256, &o->threads))
				return bad('T', v, "is not 1..256");
			break;
		case 'r':
			if (dv_parse_double(v, 0, 86400, &o->ramp_s))
				return bad('r', v, "is not seconds");
			break;
		case 'c':
			if (dv_parse_double(v, 0, 86400, &o->const_s))
				return bad('c', v, "is not seconds");
			break;
		case 't':
			if (dv_parse_double(v, 0.001, 3600, &o->timeout_s))
				return bad('t', v, "is not seconds");
			break;
		case 'i':
			if (dv_parse_double(v, 0.01, 3600, &o->interval_s))
				return bad('i', v, "is not seconds");
			break;
		case 'L':
			if (dv_parse_double(v, 0, 100, &o->max_loss))
				return bad('L', v, "is not a percentage");
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dnsvolley resperf: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->ramp_s + o->const_s <= 0) {
		fprintf(stderr, "dnsvolley resperf: -r and -c are both 0: nothing to send\n");
		return EXIT_USAGE;
	}
	if (o->threads > o->clients)
		o->clients = o->threads;
	return 0;
}

/* The ramp's target rate at t seconds. */
static double target_qps(const rp_opts_t *o, double t)
{
	return t < o->ramp_s ? (double)o->max_qps * t / o->ramp_s : (double)o->max_qps;
}

/*
 * resperf's figures from the intervals: the maximum of responses per second over the
 * intervals whose loss (1 - answered / sent in the interval) is at most -L, and that
 * interval's loss. Writes the plot file: time, target qps, sent qps, responses/s,
 * losses/s (sent - answered, at least 0), average latency (s) per interval.
 */
static int figures(const rp_opts_t *o, const dv_pass_result_t *r, double *max_tput,
                   double *lost_pct)
{
	FILE *f = fopen(o->plot, "w");
	double prev_t = 0;

	if (f == NULL) {
		fprintf(stderr, "dnsvolley resperf: -P %s: %s\n", o->plot, strerror(errno));
		return -errno;
	}
	fprintf(f, "# time target_qps actual_qps responses_per_sec failures_per_sec "
	           "avg_latency\n");
	*max_tput = 0;
	*lost_pct = 0;
	for (size_t i = 0; i < r->n_intervals; i++) {
		const dv_interval_t *iv = &r->intervals[i];
		double len = iv->t_s - prev_t, loss, fail;

		prev_t = iv->t_s;
		if (len <= 0)
			continue;
		fail = iv->sent > iv->completed ? (double)(iv->sent - iv->completed) : 0;
		loss = iv->sent ? 100 * fail / (double)iv->sent : 0;
		fprintf(f, "%.6f %.6f %.6f %.6f %.6f %.6f\n", iv->t_s, target_qps(o, iv->t_s),
		        (double)iv->sent / len, iv->qps, fail / len, iv->lat_mean_ns / 1e9);
		if (iv->sent > 0 && loss <= o->max_loss && iv->qps > *max_tput) {
			*max_tput = iv->qps;
			*lost_pct = loss;
		}
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

static int run(const rp_opts_t *o, const dv_querylist_t *ql, dv_run_config_t *cfg)
{
	dv_pass_result_t res;
	dv_err_t err = {{0}};
	double tput = 0, lost = 0;
	const dv_counters_t *c;
	bool interrupted;

	if (dv_run_pass(cfg, ql, &res, &err) != 0) {
		fprintf(stderr, "dnsvolley resperf: %s\n", err.msg);
		return EXIT_RUN_FAILED;
	}
	c = &res.stats.c;
	if (figures(o, &res, &tput, &lost) != 0) {
		dv_pass_result_free(&res);
		return EXIT_RUN_FAILED;
	}
	printf("\nStatistics:\n\n");
	printf("  Queries sent:         %" PRIu64 "\n", c->sent);
	printf("  Queries completed:    %" PRIu64 "\n", c->completed);
	printf("  Queries lost:         %" PRIu64 "\n", c->lost);
	printf("  Run time (s):         %.6f\n", res.run_time_s);
	printf("  Maximum throughput:   %.6f qps\n", tput);
	printf("  Lost at that point:   %.2f%%\n", lost);
	interrupted = res.interrupted;
	dv_pass_result_free(&res);
	return interrupted ? EXIT_RUN_FAILED : 0;
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
	dv_run_config_init(&cfg);
	if (dv_resolve_target(o.server, (uint16_t)o.port, AF_UNSPEC, &cfg.server, &cfg.server_len,
	                      &err) != 0) {
		fprintf(stderr, "dnsvolley resperf: -s: %s\n", err.msg);
		return EXIT_USAGE;
	}
	cfg.sockets = (uint32_t)o.clients;
	cfg.threads = (uint32_t)o.threads;
	cfg.max_outstanding = (uint32_t)DV_MIN(o.outstanding, 65536 * o.threads);
	cfg.timeout_ns = (uint64_t)(o.timeout_s * 1e9);
	cfg.max_qps = (double)o.max_qps;
	cfg.ramp_ns = (uint64_t)(o.ramp_s * 1e9);
	cfg.time_limit_ns = (uint64_t)((o.ramp_s + o.const_s) * 1e9);
	cfg.interval_ns = (uint64_t)(o.interval_s * 1e9);
	cfg.out = stdout;
	memset(&ql, 0, sizeof(ql));
	if (dv_querylist_load(&ql, o.list, &o.qo, &err) != 0) {
		fprintf(stderr, "dnsvolley resperf: -d: %s\n", err.msg);
		return EXIT_USAGE;
	}
	printf("DNS Resolution Performance Testing Tool (dnsvolley resperf mode)\n");
	printf("[Status] Ramping to %" PRIu64 " qps over %g s, then %g s constant\n", o.max_qps,
	       o.ramp_s, o.const_s);
	fflush(stdout);
	rc = run(&o, &ql, &cfg);
	dv_querylist_free(&ql);
	if (rc == 0 && o.chart_dir != NULL) {
		if (dv_plot_resperf(o.chart_dir, NULL, o.plot, &err) != 0) {
			fprintf(stderr, "dnsvolley resperf: -o: %s\n", err.msg);
			return EXIT_RUN_FAILED;
		}
		printf("[Status] Chart: %s/resperf.png\n", o.chart_dir);
	}
	return rc;
}
