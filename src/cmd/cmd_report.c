/* cmd_report: `dnsvolley report FILE.json`: the table and summary again from a results file. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "results/connfig.h"
#include "results/report.h"
#include "results/results_json.h"
#include "results/summary.h"
#include "study/study.h"

static void report_usage(FILE *out)
{
	fprintf(out, "usage: dnsvolley report [--table | --summary] [--server-table] FILE.json\n"
	             "Print the comparison table and the summary of a results file again,\n"
	             "then each pass's latency clock (and, for stream transports, its\n"
	             "connection figures).\n"
	             "  --table         the table only (no summary, no per-pass lines)\n"
	             "  --summary       the summary and per-pass lines only (no table)\n"
	             "  --server-table  the table's cells add the server's CPU us per answer\n"
	             "  -h, --help      this help\n");
}

/*
 * Each reported pass's lines, as the run printed them: what timed its latency (the Latency
 * clock line and those after it; not for a capacity search, whose run printed its steps
 * instead) and, for stream transports, its connection lines.
 */
static void print_passes(const dv_study_t *s)
{
	unsigned n = 0;

	printf("\nPer pass (%s):\n", dv_study_transport(s));
	for (size_t i = 0; i < s->n_passes; i++) {
		const dv_pass_record_t *p = &s->passes[i];
		if (p->kind == DV_PASS_WARMUP)
			continue;
		printf("Pass %u: target %s, list %s, %s, repeat %u\n", ++n,
		       s->targets[p->target].label ? s->targets[p->target].label : "?",
		       s->lists[p->list].label ? s->lists[p->list].label : "?",
		       dv_pass_kind_name(p->kind), p->repeat + 1);
		if (!p->cap.searched)
			dv_report_clock(stdout, &p->res, s->run.stream);
		dv_report_connections(stdout, &p->res);
	}
}

int dv_cmd_report(int argc, char **argv)
{
	bool table = true, summary = true, server_table = false;
	const char *path = NULL;
	dv_study_t s;
	dv_err_t err;
	int i = 1;

	if (argc >= 2 && argv[0] != NULL && strcmp(argv[0], "report") != 0 &&
	    strcmp(argv[1], "report") == 0)
		i = 2; /* called with main's whole argv */
	for (; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			report_usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--table") == 0) {
			summary = false;
		} else if (strcmp(argv[i], "--summary") == 0) {
			table = false;
		} else if (strcmp(argv[i], "--server-table") == 0) {
			server_table = true;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "dnsvolley report: unknown option %s\n", argv[i]);
			report_usage(stderr);
			return DV_EXIT_USAGE;
		} else if (path == NULL) {
			path = argv[i];
		} else {
			fprintf(stderr, "dnsvolley report: one results file at a time\n");
			report_usage(stderr);
			return DV_EXIT_USAGE;
		}
	}
	if (path == NULL || (!table && !summary)) {
		report_usage(stderr);
		return DV_EXIT_USAGE;
	}
	if (dv_results_read_json(path, &s, &err) != 0) {
		fprintf(stderr, "dnsvolley report: %s\n", err.msg);
		return DV_EXIT_USAGE;
	}
	if (dv_results_escape_terminal(&s) != 0) { /* labels may hold ESC, BEL, CR */
		fprintf(stderr, "dnsvolley report: out of memory\n");
		dv_study_free(&s);
		return DV_EXIT_USAGE;
	}
	s.table_server = server_table;
	char when[64] = "?";
	time_t secs = (time_t)(s.start_wall_ns / DV_NS_PER_S);
	struct tm tm;
	if (gmtime_r(&secs, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("Results file %s: dnsvolley %s, started %s on %s (%u CPUs), %zu passes\n", path,
	       s.tool_version ? s.tool_version : "?", when, s.hostname ? s.hostname : "?", s.ncpu,
	       s.n_passes);
	for (size_t t = 0; t < s.n_targets; t++)
		printf("Target %s: %s%s%s%s%s\n", s.targets[t].label ? s.targets[t].label : "?",
		       s.targets[t].addr_text ? s.targets[t].addr_text : "?",
		       s.targets[t].server_version ? ", version " : "",
		       s.targets[t].server_version ? s.targets[t].server_version : "",
		       s.targets[t].flush_cmd ? "; cache emptied by: " : "",
		       s.targets[t].flush_cmd ? s.targets[t].flush_cmd : "");
	printf("Transport: %s\n", dv_study_transport(&s));
	if (s.probe_text != NULL)
		printf("Readiness probe: %s\n", s.probe_text);
	for (size_t l = 0; l < s.n_lists; l++)
		printf("List %s: %s, %llu queries, sha256 %s\n",
		       s.lists[l].label ? s.lists[l].label : "?",
		       s.lists[l].path ? s.lists[l].path : "?",
		       (unsigned long long)s.lists[l].queries,
		       s.lists[l].sha256[0] ? s.lists[l].sha256 : "-");
	if (table)
		dv_study_print_table(&s, stdout);
	if (summary)
		dv_study_print_summary(&s, stdout);
	if (summary)
		print_passes(&s);
	dv_study_free(&s);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "dnsvolley report: standard output: write failed\n");
		return DV_EXIT_USAGE;
	}
	return 0;
}
