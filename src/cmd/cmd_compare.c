/* cmd_compare: `dnsvolley compare`: results files side by side, then the gates. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "results/compare.h"
#include "results/gates.h"
#include "results/results_json.h"

static void compare_usage(FILE *out)
{
	fputs("usage: dnsvolley compare [gates] [--junit FILE] BASE.json NEW.json [NEW2.json ...]\n"
	      "  Side-by-side table per target x list x pass kind of each NEW against BASE:\n"
	      "  qps, lost %, p50/p90/p99 ms, absolute and relative deltas, and whether the\n"
	      "  change is beyond the run-to-run spread of the repeats.\n"
	      "gates (BASE is the baseline of the relative ones):\n"
	      "  --max-loss 0.1%   --max-p99 5ms   --min-qps N\n"
	      "  --max-qps-drop 5%   --max-p99-rise 10%   --max-capacity-drop 5%\n"
	      "  --max-handshake-p99 50ms   --max-conn-failures N (stream transports)\n"
	      "  --max-server-cpu-rise 10%   --max-server-rss-rise 10% (server figures)\n"
	      "  --junit FILE (JUnit XML)\n"
	      "  -h, --help  this help\n"
	      "exit status: 0 all gates hold, 1 a gate failed, 2 usage or input error\n",
	      out);
}

/* A results file, its strings escaped for the terminal (labels may hold ESC, BEL, CR). */
static int read_escaped(const char *path, dv_study_t *s, dv_err_t *err)
{
	int rc = dv_results_read_json(path, s, err);

	if (rc == 0 && (rc = dv_results_escape_terminal(s)) != 0) {
		dv_study_free(s);
		return dv_err_set(err, rc, "%s: out of memory", path);
	}
	return rc;
}

static const struct option compare_opts[] = {
    {"max-loss", required_argument, NULL, 'g'},
    {"max-p99", required_argument, NULL, 'g'},
    {"min-qps", required_argument, NULL, 'g'},
    {"max-qps-drop", required_argument, NULL, 'g'},
    {"max-p99-rise", required_argument, NULL, 'g'},
    {"max-server-cpu-rise", required_argument, NULL, 'g'},
    {"max-server-rss-rise", required_argument, NULL, 'g'},
    {"max-capacity-drop", required_argument, NULL, 'g'},
    {"max-handshake-p99", required_argument, NULL, 'g'},
    {"max-conn-failures", required_argument, NULL, 'g'},
    {"junit", required_argument, NULL, 'g'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The gates and the file names; -1 to go on, else the exit status (the error printed). */
static int parse_args(int argc, char **argv, dv_gates_t *g)
{
	dv_err_t err = {{0}};
	int c, idx;

	optind = 0; /* GNU: full reinitialisation, main may have used getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", compare_opts, &idx)) != -1) {
		switch (c) {
		case 'g':
			if (dv_gates_parse_opt(g, compare_opts[idx].name, optarg, &err) != 0) {
				fprintf(stderr, "dnsvolley compare: %s\n", err.msg);
				return DV_EXIT_USAGE;
			}
			break;
		case 'h':
			compare_usage(stdout);
			return 0;
		default:
			if (optopt != 0)
				fprintf(stderr,
				        "dnsvolley compare: -%c: unknown option or missing value\n",
				        optopt);
			else
				fprintf(stderr,
				        "dnsvolley compare: %s: unknown option or missing value\n",
				        argv[optind - 1]);
			compare_usage(stderr);
			return DV_EXIT_USAGE;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "dnsvolley compare: needs a BASE file and at least one NEW file\n");
		compare_usage(stderr);
		return DV_EXIT_USAGE;
	}
	for (int i = optind; i < argc && g->junit_path != NULL; i++) {
		if (dv_same_file(g->junit_path, argv[i])) {
			fprintf(stderr,
			        "dnsvolley compare: --junit: '%s' is also a results file to "
			        "compare; refusing to overwrite it\n",
			        g->junit_path);
			return DV_EXIT_USAGE;
		}
	}
	return -1;
}

/* Each NEW file against base (files from first on): its table, its gates collected in rep. */
static int compare_each(int argc, char **argv, int first, const dv_study_t *base,
                        const dv_gates_t *g, dv_gate_report_t *rep)
{
	dv_study_t cur;
	dv_err_t err = {{0}};
	int status = 0;

	for (int i = first + 1; i < argc && status == 0; i++) {
		char prefix[300];
		if (read_escaped(argv[i], &cur, &err) != 0) {
			fprintf(stderr, "dnsvolley compare: %s\n", err.msg);
			return DV_EXIT_USAGE;
		}
		if (i > first + 1)
			fputs("\n", stdout);
		dv_compare_print(base, argv[first], &cur, argv[i], stdout);
		snprintf(prefix, sizeof(prefix), "%s: ", argv[i]);
		if (dv_gates_any(g) &&
		    dv_gates_collect(g, &cur, base, argc - first > 2 ? prefix : NULL, rep, &err) !=
		        0) {
			fprintf(stderr, "dnsvolley compare: %s\n", err.msg);
			status = DV_EXIT_USAGE;
		}
		dv_study_free(&cur);
	}
	return status;
}

int dv_cmd_compare(int argc, char **argv)
{
	dv_gates_t g;
	dv_study_t base;
	dv_gate_report_t rep = {0};
	dv_err_t err = {{0}};
	int status;

	dv_gates_init(&g);
	status = parse_args(argc, argv, &g);
	if (status >= 0) {
		dv_gates_free(&g);
		return status;
	}
	if (read_escaped(argv[optind], &base, &err) != 0) {
		fprintf(stderr, "dnsvolley compare: %s\n", err.msg);
		dv_gates_free(&g);
		return DV_EXIT_USAGE;
	}
	status = compare_each(argc, argv, optind, &base, &g, &rep);
	if (status == 0 && dv_gates_any(&g)) {
		fputs("\n", stdout);
		status = dv_gates_print(&rep, stdout) ? DV_EXIT_GATE_FAILED : DV_EXIT_OK;
		if (g.junit_path != NULL && dv_gates_write_junit(&rep, g.junit_path, &err) != 0) {
			fprintf(stderr, "dnsvolley compare: --junit: %s\n", err.msg);
			status = DV_EXIT_USAGE;
		}
	}
	if ((fflush(stdout) != 0 || ferror(stdout)) && status == 0) {
		fprintf(stderr, "dnsvolley compare: standard output: write failed\n");
		status = DV_EXIT_USAGE;
	}
	dv_gate_report_free(&rep);
	dv_study_free(&base);
	dv_gates_free(&g);
	return status;
}
