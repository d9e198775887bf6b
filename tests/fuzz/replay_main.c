/* replay_main: runs a fuzz target over seed files when not linked with libFuzzer (make check). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Usage: fuzz_TARGET [-flags ignored...] PATH...
 * Each PATH is a file or a directory (its regular files, sorted by name). Every
 * file is passed once to LLVMFuzzerTestOneInput, as libFuzzer does with
 * -runs=0. A crash, a sanitizer report or an abort fails the test; an empty
 * corpus fails too (a seed directory that went missing must not pass silently).
 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;
	int rc = 0;

	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			uint8_t *nb;
			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				rc = -1;
				goto out;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		rc = -1;
		goto out;
	}
	/* An exact-size copy, so ASan sees a read one past the input. */
	{
		uint8_t *exact = malloc(len ? len : 1);
		if (exact == NULL) {
			rc = -1;
			goto out;
		}
		memcpy(exact, buf, len);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
out:
	free(buf);
	fclose(f);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, unsigned long *files)
{
	struct stat st;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	DIR *d;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*files)++;
		return run_file(path);
	}
	d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn;
			cap = cap ? cap * 2 : 64;
			nn = realloc(names, cap * sizeof(*names));
			if (nn == NULL) {
				rc = -1;
				goto out;
			}
			names = nn;
		}
		names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
		if (names[n] == NULL) {
			rc = -1;
			goto out;
		}
		sprintf(names[n], "%s/%s", path, de->d_name);
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n && rc == 0; i++) {
		if (stat(names[i], &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		(*files)++;
		rc = run_file(names[i]);
	}
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long files = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue; /* libFuzzer flags such as -runs=0 */
		if (run_path(argv[i], &files) != 0)
			return 1;
	}
	if (files == 0) {
		fprintf(stderr, "replay: no input files\n");
		return 1;
	}
	printf("replay: %lu inputs ran without a crash\n", files);
	return 0;
}
