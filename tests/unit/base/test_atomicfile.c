/* test_atomicfile: commit puts the whole file in place (mode 0666 & ~umask, or the replaced
 * file's), through a symlink; abort and errors leave neither the file nor a temporary behind,
 * appending copies the old content first. A device, a FIFO or a /dev/fd pipe is written
 * directly, never replaced (issue 28). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/atomicfile.h"

static char dir[] = "/tmp/dv_test_afile.XXXXXX";
static char path[sizeof(dir) + 16];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/dv_test_afile.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/out.json", dir);
	return 0;
}

static int teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[sizeof(path) + 256];

	(void)state;
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d != NULL)
		closedir(d);
	return rmdir(dir);
}

/* The names in the test directory, sorted and joined with ' ' ("" when empty). */
static void dir_names(char *out, size_t size)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.') {
			if (out[0] != '\0')
				strncat(out, " ", size - strlen(out) - 1);
			strncat(out, list[i]->d_name, size - strlen(out) - 1);
		}
		free(list[i]);
	}
	free(list);
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static void assert_content(const char *p, const char *want)
{
	char buf[256];
	FILE *f = fopen(p, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, want);
}

static void test_commit(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	struct stat st;
	char names[256];
	mode_t old = umask(027); /* a new file honours the umask: 0666 & ~027 */

	(void)state;
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), 0);
	assert_non_null(f.fp);
	assert_string_equal(f.path, path);
	assert_int_equal(strncmp(f.tmp, path, strlen(path)), 0);
	assert_int_equal(strncmp(f.tmp + strlen(path), ".tmp.", 5), 0);
	fputs("{\"a\": 1}\n", f.fp);
	/* Until commit, only the temporary file exists. */
	assert_int_equal(access(path, F_OK), -1);
	dir_names(names, sizeof(names));
	assert_string_equal(names, strrchr(f.tmp, '/') + 1);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	umask(old);
	assert_null(f.fp);
	assert_null(f.path);
	assert_null(f.tmp);
	assert_content(path, "{\"a\": 1}\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json");
	/* umask 0: 0666; umask 077: 0600 (never a fixed 0644). */
	unlink(path);
	old = umask(0);
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), 0);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0666);
	unlink(path);
	umask(077);
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), 0);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* A symlink is written through: the link stays, its target gets the content (issue 16). */
static void test_symlink(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	struct stat st;
	char names[256], real[sizeof(path) + 16];

	(void)state;
	snprintf(real, sizeof(real), "%s/real.csv", dir);
	write_file(real, "row1\n", 0640);
	assert_int_equal(symlink("real.csv", path), 0); /* relative, as users make them */
	assert_int_equal(dv_atomicfile_open(&f, path, true, &err), 0);
	fputs("row2\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_content(real, "row1\nrow2\n");
	assert_int_equal(stat(real, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json real.csv");
	/* A dangling symlink is refused with a message, nothing is created. */
	unlink(real);
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "is a symbolic link to a missing file"));
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json");
}

/* Replacing a file: new content, the old file's mode kept (a private history stays private). */
static void test_commit_replaces(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	struct stat st;
	char names[256];

	(void)state;
	write_file(path, "old\n", 0600);
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), 0);
	fputs("new\n", f.fp);
	assert_content(path, "old\n"); /* still whole until the rename */
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_content(path, "new\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json");
}

static void test_append_copies_existing(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};

	(void)state;
	/* No file yet: nothing to copy. */
	assert_int_equal(dv_atomicfile_open(&f, path, true, &err), 0);
	fputs("row1\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_content(path, "row1\n");
	assert_int_equal(dv_atomicfile_open(&f, path, true, &err), 0);
	fputs("row2\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_content(path, "row1\nrow2\n");
}

static void test_abort(void **state)
{
	dv_atomicfile_t f, zero;
	dv_err_t err = {{0}};
	char names[256];

	(void)state;
	/* A new file: abort leaves nothing. */
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), 0);
	fputs("half", f.fp);
	dv_atomicfile_abort(&f);
	assert_null(f.fp);
	assert_null(f.path);
	assert_null(f.tmp);
	dir_names(names, sizeof(names));
	assert_string_equal(names, "");
	/* An existing file: abort leaves it as it was, and no temporary. */
	write_file(path, "keep\n", 0644);
	assert_int_equal(dv_atomicfile_open(&f, path, true, &err), 0);
	fputs("more", f.fp);
	dv_atomicfile_abort(&f);
	assert_content(path, "keep\n");
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json");
	/* Abort of a zeroed or NULL handle does nothing. */
	memset(&zero, 0, sizeof(zero));
	dv_atomicfile_abort(&zero);
	dv_atomicfile_abort(NULL);
}

static void test_errors(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	char bad[sizeof(dir) + 32], names[256];

	(void)state;
	snprintf(bad, sizeof(bad), "%s/no-such-dir/out.json", dir);
	assert_int_equal(dv_atomicfile_open(&f, bad, false, &err), -ENOENT);
	assert_null(f.fp);
	assert_null(f.path);
	assert_null(f.tmp);
	assert_non_null(strstr(err.msg, bad));
	assert_non_null(strstr(err.msg, ": cannot create a file there: No such file or directory"));
	/* Appending to a path that cannot be read: the temporary is removed again. */
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(dv_atomicfile_open(&f, path, true, &err) < 0);
	assert_null(f.fp);
	assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json");
	assert_int_equal(rmdir(path), 0);
	/* Commit of an unopened handle. */
	memset(&f, 0, sizeof(f));
	assert_int_equal(dv_atomicfile_commit(&f, &err), -EBADF);
	assert_string_equal(err.msg, "results file was not open");
}

/* Rename over a directory fails: the error names the file and the temporary goes. */
static void test_commit_failure(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	char names[256];

	(void)state;
	assert_int_equal(dv_atomicfile_open(&f, path, false, &err), 0);
	fputs("x", f.fp);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(dv_atomicfile_commit(&f, &err), -EISDIR);
	assert_null(f.fp);
	assert_null(f.tmp);
	assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
	assert_non_null(strstr(err.msg, ": write failed: "));
	dir_names(names, sizeof(names));
	assert_string_equal(names, "out.json");
	assert_int_equal(rmdir(path), 0);
}

static void test_stdout(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};

	(void)state;
	assert_int_equal(dv_atomicfile_open(&f, "-", false, &err), 0);
	assert_ptr_equal(f.fp, stdout);
	assert_null(f.path);
	assert_null(f.tmp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_null(f.fp);
}

/* Read what a non-blocking reader has (at most size - 1 octets), as a string. */
static void read_all(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
}

/* A FIFO gets the data (its reader reads it) and stays a FIFO: no rename over it (issue 28). */
static void test_fifo(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	struct stat st;
	char fifo[sizeof(path) + 16], names[256], got[256];
	int rfd;

	(void)state;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(dv_atomicfile_check(fifo, &err), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK); /* the reader, there before the writer */
	assert_true(rfd >= 0);
	assert_int_equal(dv_atomicfile_open(&f, fifo, false, &err), 0);
	assert_null(f.tmp);
	fputs("{\"a\": 1}\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	read_all(rfd, got, sizeof(got));
	assert_string_equal(got, "{\"a\": 1}\n");
	/* Appending (a CSV history) to a FIFO: written directly too, nothing read from it. */
	assert_int_equal(dv_atomicfile_open(&f, fifo, true, &err), 0);
	fputs("row\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	read_all(rfd, got, sizeof(got));
	assert_string_equal(got, "row\n");
	close(rfd);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	dir_names(names, sizeof(names));
	assert_string_equal(names, "fifo");
}

/* `--json >(jq .)`: a /dev/fd/N path naming a pipe is written into the pipe (issue 28). */
static void test_dev_fd_pipe(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	char fdpath[64], got[256];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", p[1]);
	assert_int_equal(dv_atomicfile_check(fdpath, &err), 0);
	assert_int_equal(dv_atomicfile_open(&f, fdpath, false, &err), 0);
	fputs("through the pipe\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	close(p[1]);
	read_all(p[0], got, sizeof(got));
	close(p[0]);
	assert_string_equal(got, "through the pipe\n");
}

/* A character device (the twin of /dev/null, made here) stays that device (issue 28). */
static void test_device(void **state)
{
	dv_atomicfile_t f;
	dv_err_t err = {{0}};
	struct stat st;
	char node[sizeof(path) + 16], names[256];

	(void)state;
	snprintf(node, sizeof(node), "%s/null", dir);
	if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		print_message("mknod: %s (needs CAP_MKNOD); skipped\n", strerror(errno));
		skip();
	}
	assert_int_equal(dv_atomicfile_check(node, &err), 0);
	assert_int_equal(dv_atomicfile_open(&f, node, false, &err), 0);
	fputs("discarded\n", f.fp);
	assert_int_equal(dv_atomicfile_commit(&f, &err), 0);
	assert_int_equal(lstat(node, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
	dir_names(names, sizeof(names));
	assert_string_equal(names, "null");
}

/* What is checked before a run: the messages the callers put after "--json: ". */
static void test_check(void **state)
{
	dv_err_t err = {{0}};
	char p[sizeof(path) + 96], link[sizeof(path) + 16];

	(void)state;
	assert_int_equal(dv_atomicfile_check(path, &err), 0); /* missing, in a writable dir */
	write_file(path, "x\n", 0644);
	assert_int_equal(dv_atomicfile_check(path, &err), 0);
	assert_int_equal(dv_atomicfile_check(dir, &err), -EISDIR);
	snprintf(p, sizeof(p), "'%s' is a directory", dir);
	assert_string_equal(err.msg, p);
	snprintf(p, sizeof(p), "%s/none/out.json", dir);
	assert_int_equal(dv_atomicfile_check(p, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "cannot write '"));
	assert_non_null(strstr(err.msg, "/none/out.json': No such file or directory"));
	snprintf(link, sizeof(link), "%s/dangling", dir);
	assert_int_equal(symlink("missing.json", link), 0);
	assert_int_equal(dv_atomicfile_check(link, &err), -ENOENT);
	snprintf(p, sizeof(p), "'%s' is a symbolic link to a missing file; not followed", link);
	assert_string_equal(err.msg, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_commit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_commit_replaces, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlink, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_append_copies_existing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_commit_failure, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stdout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dev_fd_pipe, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_check, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
