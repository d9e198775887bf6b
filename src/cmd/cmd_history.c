/* cmd_history: `dnsvolley history-upgrade FILE.csv`: a nightly history under the current header. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "results/csv.h"

static void history_usage(FILE *out)
{
	fprintf(out,
	        "usage: dnsvolley history-upgrade FILE.csv\n"
	        "Rewrite a --csv history file of an earlier header version under the current\n"
	        "header (version %d): every row kept, the columns its version lacked left empty\n"
	        "(not recorded), the file replaced atomically. A file already at version %d is\n"
	        "left alone. Until a file is upgraded, the rows appended to it keep its own\n"
	        "layout, without the newer columns (doc/nightly.md).\n"
	        "  -h, --help  this help\n"
	        "Exit status 0 (upgraded, or nothing to do), 2 when the file is no history file\n"
	        "or cannot be read (it is untouched), 3 when the new file could not be written\n"
	        "(the old one is untouched).\n",
	        DV_CSV_VERSION, DV_CSV_VERSION);
}

int dv_cmd_history_upgrade(int argc, char **argv)
{
	const char *path = NULL;
	unsigned from = 0;
	size_t rows = 0;
	dv_err_t err = {{0}};
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			history_usage(stdout);
			return 0;
		}
		if ((argv[i][0] == '-' && argv[i][1] != '\0') || path != NULL) {
			fprintf(stderr, "dnsvolley history-upgrade: %s %s\n",
			        path != NULL ? "one file at a time, not also" : "unknown option",
			        argv[i]);
			history_usage(stderr);
			return DV_EXIT_USAGE;
		}
		path = argv[i];
	}
	if (path == NULL) {
		fprintf(stderr, "dnsvolley history-upgrade: which history file?\n");
		history_usage(stderr);
		return DV_EXIT_USAGE;
	}
	rc = dv_csv_upgrade(path, &from, &rows, &err);
	if (rc != 0) {
		fprintf(stderr, "dnsvolley history-upgrade: %s\n", err.msg);
		/* Reading or recognising the file failed before anything was written. */
		return from == 0 ? DV_EXIT_USAGE : DV_EXIT_RUN_FAILED;
	}
	if (from == DV_CSV_VERSION)
		printf("%s: already header version %u (%zu rows); nothing to do\n", path, from,
		       rows);
	else
		printf("%s: header version %u -> %d, %zu rows, each with %zu empty fields (columns "
		       "that version did not record)\n",
		       path, from, DV_CSV_VERSION, rows,
		       dv_csv_ncolumns - dv_csv_version_columns(from));
	return 0;
}
