/* fuzz_plot: libFuzzer target for plot's history path: CSV reader, grouping, trend data files. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/csv.h"
#include "results/plot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char work[64];

static void remove_dir(void)
{
	rmdir(work); /* empty: every input's files are removed after it */
}

/* A directory on tmpfs when there is one (the data files are fsync'ed), made once. */
static const char *work_dir(void)
{
	if (work[0] == '\0') {
		snprintf(work, sizeof(work), "%s/dv-fuzz-plot.XXXXXX",
		         access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (mkdtemp(work) == NULL)
			abort();
		atexit(remove_dir);
	}
	return work;
}

/* Every line of a trend data file: "# ..." or "DATE QPS P99" with DATE a UTC time. */
static void check_data(const char *path, size_t *points)
{
	char line[4096], date[64], extra[8];
	double q, p;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		abort();
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s %lf %lf %7s", date, &q, &p, extra) != 3 ||
		    strlen(date) != 20 || date[4] != '-' || date[10] != 'T' || date[19] != 'Z')
			abort(); /* a forged or broken row in the data gnuplot reads */
		(*points)++;
	}
	fclose(f);
}

/* Check and remove what the last input left in the directory; returns the data points. */
static size_t sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];
	size_t points = 0;

	if (d == NULL)
		abort();
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (strncmp(e->d_name, "trend-", 6) == 0 && strstr(e->d_name, ".dat") != NULL &&
		    strstr(e->d_name, ".tmp.") == NULL)
			check_data(path, &points);
		unlink(path);
	}
	closedir(d);
	return points;
}

/*
 * Any bytes as a history file. When it reads, dv_plot_history groups the rows and writes
 * one trend data file per target/list/pass, then fails to start the (missing) gnuplot.
 * Checked: every data row is "DATE QPS P99" (no row forged through a field), and the data
 * files hold exactly one point per row of the file.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = work_dir();
	dv_csv_table_t t;
	dv_err_t err;
	size_t points;

	memset(&err, 0, sizeof(err));
	if (dv_csv_read_buffer((const char *)data, size, "fuzz.csv", &t, &err) != 0)
		return 0;
	if (dv_plot_history(&t, "fuzz.csv", dir, "/nonexistent/dv-fuzz-gnuplot", &err) == 0)
		abort(); /* there is no gnuplot to draw with */
	if (err.msg[0] == '\0')
		abort();
	points = sweep(dir);
	if (t.n > 0 && points != t.n)
		abort();
	dv_csv_table_free(&t);
	return 0;
}
