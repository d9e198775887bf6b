/* cmd_plot: `dnsvolley plot`: read a results file or a history CSV and draw it with gnuplot. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "results/csv.h"
#include "results/plot.h"
#include "results/results_json.h"

/* gnuplot is needed: say so before anything is written when it is not there. */
static bool have_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(prog, '/') != NULL)
		return access(prog, X_OK) == 0;
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1), n ? path : ".",
		                     prog) < sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

static void plot_usage(FILE *out)
{
	fputs("usage: dnsvolley plot RESULTS.json|HISTORY.csv -o DIR [--gnuplot PROG]\n"
	      "  Draws with gnuplot, into DIR: PNG and SVG charts, their data files and .gp\n"
	      "  scripts, and index.html with the study table, the verdicts and the charts.\n"
	      "  -o, --output DIR   the directory (made when missing)\n"
	      "  --gnuplot PROG     the gnuplot to run (gnuplot, from PATH)\n"
	      "  -h, --help         this help\n"
	      "exit status: 0 done, 2 usage or input error (also: gnuplot missing or failing)\n",
	      out);
}

/* 1 for a results file (JSON object), 0 for a history CSV; -EPROTO otherwise. */
static int sniff(const char *path, dv_err_t *err)
{
	FILE *fp = fopen(path, "rb");
	char buf[64] = {0};
	size_t n, i = 0;

	if (fp == NULL)
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	if (i < n && buf[i] == '{')
		return 1;
	if (strncmp(buf, "date,host,", 10) == 0)
		return 0;
	return dv_err_set(err, -EPROTO,
	                  "%s: neither a dnsvolley results file (JSON) nor a history file (CSV)",
	                  path);
}

int dv_cmd_plot(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"gnuplot", required_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *gnuplot = "gnuplot", *src;
	dv_err_t err = {{0}};
	int c, kind, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'g':
			gnuplot = optarg;
			break;
		case 'h':
			plot_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "dnsvolley plot: %s: unknown option or missing value\n",
			        argv[optind - 1]);
			plot_usage(stderr);
			return DV_EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || dir == NULL || *dir == '\0') {
		fprintf(stderr, "dnsvolley plot: needs one input file and -o DIR\n");
		plot_usage(stderr);
		return DV_EXIT_USAGE;
	}
	src = argv[optind];
	if (!have_program(gnuplot)) {
		fprintf(stderr,
		        "dnsvolley plot: %s: not found in PATH; plots need gnuplot (Debian: "
		        "apt-get install gnuplot-nox)\n",
		        gnuplot);
		return DV_EXIT_USAGE;
	}
	if ((kind = sniff(src, &err)) < 0) {
		fprintf(stderr, "dnsvolley plot: %s\n", err.msg);
		return DV_EXIT_USAGE;
	}
	if (kind == 1) {
		dv_study_t s;
		if (dv_results_read_json(src, &s, &err) != 0) {
			fprintf(stderr, "dnsvolley plot: %s\n", err.msg);
			return DV_EXIT_USAGE;
		}
		rc = dv_plot_study(&s, src, dir, gnuplot, &err);
		dv_study_free(&s);
	} else {
		dv_csv_table_t t;
		if (dv_csv_read(src, &t, &err) != 0) {
			fprintf(stderr, "dnsvolley plot: %s\n", err.msg);
			return DV_EXIT_USAGE;
		}
		rc = dv_plot_history(&t, src, dir, gnuplot, &err);
		dv_csv_table_free(&t);
	}
	if (rc != 0) {
		fprintf(stderr, "dnsvolley plot: %s\n", err.msg);
		return DV_EXIT_USAGE;
	}
	size_t dl = strlen(dir);
	printf("dnsvolley plot: wrote %s%sindex.html\n", dir,
	       dl > 0 && dir[dl - 1] == '/' ? "" : "/"); /* "plots/" gives plots/index.html */
	return 0;
}
