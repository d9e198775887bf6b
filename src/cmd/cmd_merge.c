/* cmd_merge: `dnsvolley merge A.json B.json ... -o ALL.json`: one run's generators merged. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomicfile.h"
#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "results/merge.h"
#include "results/results_json.h"
#include "study/study.h"

static void merge_usage(FILE *out)
{
	fprintf(out, "usage: dnsvolley merge A.json B.json [...] -o ALL.json\n"
	             "Merge the results files of one run's generators (one per host, e.g. started\n"
	             "together with --start-at) into one: counters and latency histograms added\n"
	             "exactly, with a per-generator section. Files of different lists, flags,\n"
	             "transports or passes are refused, and so is a file given twice.\n"
	             "  -o ALL.json   the merged results file ('-': standard output)\n"
	             "  -h, --help    this help\n"
	             "Exit status 0, or 2 when nothing was written.\n");
}

/*
 * Before anything is read: -o must not be an input (it would be overwritten), no input
 * may be named twice, and -o must be writable. 0, or a message printed and 2.
 */
static int check_paths(const char *out, const char **in, size_t n)
{
	dv_err_t err;

	for (size_t i = 0; i < n; i++) {
		if (dv_same_file(out, in[i])) {
			fprintf(stderr,
			        "dnsvolley merge: -o: '%s' is also an input (%s); refusing to "
			        "overwrite it\n",
			        out, in[i]);
			return DV_EXIT_USAGE;
		}
		for (size_t j = 0; j < i; j++)
			if (dv_same_file(in[i], in[j])) {
				fprintf(
				    stderr,
				    "dnsvolley merge: '%s' is given twice (inputs %zu and %zu): "
				    "its counts would be added twice\n",
				    in[i], j + 1, i + 1);
				return DV_EXIT_USAGE;
			}
	}
	if (strcmp(out, "-") != 0 && dv_atomicfile_check(out, &err) != 0) {
		fprintf(stderr, "dnsvolley merge: -o: %s\n", err.msg);
		return DV_EXIT_USAGE;
	}
	return 0;
}

int dv_cmd_merge(int argc, char **argv)
{
	const char *out = NULL, **in = calloc((size_t)argc, sizeof(*in));
	dv_study_t *st = calloc((size_t)argc, sizeof(*st));
	const dv_study_t **sp = calloc((size_t)argc, sizeof(*sp));
	size_t n = 0, nread = 0;
	dv_err_t err;
	int status = DV_EXIT_USAGE;

	if (in == NULL || st == NULL || sp == NULL) {
		fprintf(stderr, "dnsvolley merge: out of memory\n");
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			merge_usage(stdout);
			status = DV_EXIT_OK;
			goto out;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "dnsvolley merge: unknown option %s\n", argv[i]);
			merge_usage(stderr);
			goto out;
		} else {
			in[n++] = argv[i];
		}
	}
	if (out == NULL || n < 2) {
		fprintf(stderr, "dnsvolley merge: %s\n",
		        out == NULL ? "-o ALL.json is required" : "at least two results files");
		merge_usage(stderr);
		goto out;
	}
	if (check_paths(out, in, n) != 0)
		goto out;
	/* st[0] becomes the merge; st[1 .. n] are the inputs as read (the per-rank figures) */
	for (nread = 0; nread <= n; nread++) {
		const char *path = in[nread == 0 ? 0 : nread - 1];
		if (dv_results_read_json(path, &st[nread], &err) != 0) {
			fprintf(stderr, "dnsvolley merge: %s\n", err.msg);
			goto out;
		}
		sp[nread] = &st[nread];
	}
	if (dv_merge_check_distinct(sp + 1, in, n, &err) != 0) {
		fprintf(stderr, "dnsvolley merge: %s\n", err.msg);
		goto out;
	}
	for (size_t i = 2; i <= n; i++) {
		if (dv_merge_study(&st[0], in[0], &st[i], in[i - 1], &err) != 0) {
			fprintf(stderr, "dnsvolley merge: %s\n", err.msg);
			goto out;
		}
	}
	if (dv_merge_ranks(&st[0], sp + 1, n) != 0) {
		fprintf(stderr, "dnsvolley merge: out of memory\n");
		goto out;
	}
	if (dv_results_write_json(&st[0], out, &err) != 0) {
		fprintf(stderr, "dnsvolley merge: %s\n", err.msg);
		goto out;
	}
	status = DV_EXIT_OK;
out:
	for (size_t i = 0; st != NULL && i < nread; i++)
		dv_study_free(&st[i]);
	free(st);
	free(sp);
	free(in);
	return status;
}
