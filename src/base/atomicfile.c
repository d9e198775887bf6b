/* atomicfile: results files are written to a temporary name and renamed into place; devices,
 * FIFOs and pipes are written directly. */
#include "config.h"

#include "base/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void afile_reset(dv_atomicfile_t *f)
{
	free(f->path);
	free(f->tmp);
	f->fp = NULL;
	f->path = NULL;
	f->tmp = NULL;
}

static int copy_into(FILE *dst, const char *path, dv_err_t *err)
{
	char buf[65536];
	size_t n;
	FILE *src = fopen(path, "rb");

	if (src == NULL) {
		if (errno == ENOENT)
			return 0;
		return dv_err_set(err, -errno, "%s: %s", path, strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof(buf), src)) > 0) {
		if (fwrite(buf, 1, n, dst) != n) {
			int e = errno ? errno : EIO;
			fclose(src);
			return dv_err_set(err, -e, "%s: %s", path, strerror(e));
		}
	}
	if (ferror(src)) {
		int e = errno ? errno : EIO;
		fclose(src);
		return dv_err_set(err, -e, "%s: %s", path, strerror(e));
	}
	fclose(src);
	return 0;
}

/*
 * The name to write: PATH, or for a symlink the file it points to (resolved, so the link
 * stays and its target gets the content). Returns a malloc'ed name, or NULL with *rc set.
 */
static char *final_name(const char *path, int *rc, dv_err_t *err)
{
	struct stat st;
	char *real, *p;

	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) {
		if ((p = strdup(path)) == NULL)
			*rc = dv_err_set(err, -ENOMEM, "%s: out of memory", path);
		return p;
	}
	real = realpath(path, NULL);
	if (real == NULL) {
		*rc = -errno;
		if (errno == ENOENT)
			dv_err_set(err, *rc,
			           "%s: is a symbolic link to a missing file; not followed", path);
		else
			dv_err_set(err, *rc, "%s: cannot follow the symbolic link: %s", path,
			           strerror(errno));
	}
	return real;
}

/*
 * Create the temporary file: O_EXCL with mode 0666, so the kernel applies the umask (and a
 * default ACL) as for any new file; a file being replaced keeps its own permission bits.
 */
static int create_tmp(dv_atomicfile_t *f)
{
	static unsigned seq;
	struct stat st;
	size_t n = strlen(f->tmp);
	int fd = -1;

	for (int i = 0; i < 100 && fd < 0; i++) {
		uint64_t x =
		    dv_now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)++seq * 0x9e3779b9u;
		for (size_t k = n - 6; k < n; k++, x /= 36)
			f->tmp[k] = "0123456789abcdefghijklmnopqrstuvwxyz"[x % 36];
		fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	if (stat(f->path, &st) == 0 && S_ISREG(st.st_mode))
		(void)fchmod(fd, st.st_mode & 07777);
	return fd;
}

/*
 * Why not everything through a temporary: rename() over a device node or a FIFO replaces
 * the node (as root, `--json /dev/null` would replace the system's /dev/null) and a
 * FIFO's reader never sees the data; /dev/fd/N of a pipe (bash's `>(jq .)`) is a link to
 * no file at all. Such a path is a stream, not a file to keep whole: it is opened and
 * written as it is, with no O_CREAT (it exists) and no O_TRUNC (meaningless there).
 */
static bool is_stream(const struct stat *st)
{
	return !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode);
}

static int open_direct(dv_atomicfile_t *f, const char *path, dv_err_t *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY), rc;

	if (fd < 0) {
		rc = -errno;
		return dv_err_set(err, rc, "%s: %s", path, strerror(-rc));
	}
	f->fp = fdopen(fd, "w");
	f->path = strdup(path);
	if (f->fp == NULL || f->path == NULL) {
		rc = f->fp == NULL ? -errno : -ENOMEM;
		if (f->fp != NULL)
			fclose(f->fp);
		else
			close(fd);
		afile_reset(f);
		return dv_err_set(err, rc, "%s: %s", path, strerror(-rc));
	}
	return 0;
}

int dv_atomicfile_check(const char *path, dv_err_t *err)
{
	struct stat st;
	char *dir_of = NULL;
	int rc = 0;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return dv_err_set(err, -EISDIR, "'%s' is a directory", path);
		if (is_stream(&st))
			rc = access(path, W_OK) != 0 ? -errno : 0;
		else if ((dir_of = realpath(path, NULL)) == NULL) /* the temporary goes beside it */
			rc = -errno;
	} else if (errno != ENOENT) {
		rc = -errno;
	} else if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		return dv_err_set(err, -ENOENT,
		                  "'%s' is a symbolic link to a missing file; not followed", path);
	} else if ((dir_of = strdup(path)) == NULL) {
		rc = -ENOMEM;
	}
	if (dir_of != NULL) {
		rc = access(dirname(dir_of), W_OK | X_OK) != 0 ? -errno : 0;
		free(dir_of);
	}
	if (rc != 0)
		return dv_err_set(err, rc, "cannot write '%s': %s", path, strerror(-rc));
	return 0;
}

int dv_atomicfile_open(dv_atomicfile_t *f, const char *path, bool copy_existing, dv_err_t *err)
{
	struct stat st;
	int fd, rc = 0;

	memset(f, 0, sizeof(*f));
	if (strcmp(path, "-") == 0) {
		f->fp = stdout;
		return 0;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return dv_err_set(err, -EISDIR, "%s: %s", path, strerror(EISDIR));
	if (stat(path, &st) == 0 && is_stream(&st)) /* st: what the path names now */
		return open_direct(f, path, err);
	f->path = final_name(path, &rc, err);
	if (f->path == NULL)
		return rc;
	if (asprintf(&f->tmp, "%s.tmp.XXXXXX", f->path) < 0) {
		f->tmp = NULL;
		afile_reset(f);
		return dv_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	fd = create_tmp(f);
	if (fd < 0) {
		rc = fd;
		dv_err_set(err, rc, "%s: cannot create a file there: %s", path, strerror(-rc));
		afile_reset(f);
		return rc;
	}
	f->fp = fdopen(fd, "w");
	if (f->fp == NULL) {
		rc = -errno;
		close(fd);
		unlink(f->tmp);
		afile_reset(f);
		return dv_err_set(err, rc, "%s: %s", path, strerror(-rc));
	}
	if (copy_existing) {
		rc = copy_into(f->fp, path, err);
		if (rc != 0) {
			dv_atomicfile_abort(f);
			return rc;
		}
	}
	return 0;
}

int dv_atomicfile_commit(dv_atomicfile_t *f, dv_err_t *err)
{
	int rc = 0;

	if (f->fp == NULL)
		return dv_err_set(err, -EBADF, "results file was not open");
	if (f->path == NULL) { /* stdout */
		if (fflush(f->fp) != 0 || ferror(f->fp))
			rc = dv_err_set(err, -EIO, "standard output: write failed");
		f->fp = NULL;
		return rc;
	}
	if (f->tmp == NULL) { /* written directly: a device, a FIFO, a pipe */
		if (fflush(f->fp) != 0 || ferror(f->fp))
			rc = -(errno ? errno : EIO);
		if (fclose(f->fp) != 0 && rc == 0)
			rc = -(errno ? errno : EIO);
		f->fp = NULL;
		if (rc != 0)
			dv_err_set(err, rc, "%s: write failed: %s", f->path, strerror(-rc));
		afile_reset(f);
		return rc;
	}
	if (fflush(f->fp) != 0 || ferror(f->fp))
		rc = -(errno ? errno : EIO);
	else if (fsync(fileno(f->fp)) != 0)
		rc = -errno;
	if (fclose(f->fp) != 0 && rc == 0)
		rc = -(errno ? errno : EIO);
	f->fp = NULL;
	if (rc == 0 && rename(f->tmp, f->path) != 0)
		rc = -errno;
	if (rc != 0) {
		dv_err_set(err, rc, "%s: write failed: %s", f->path, strerror(-rc));
		unlink(f->tmp);
	}
	afile_reset(f);
	return rc;
}

void dv_atomicfile_abort(dv_atomicfile_t *f)
{
	if (f == NULL)
		return;
	if (f->fp != NULL && f->path != NULL) {
		fclose(f->fp);
		if (f->tmp != NULL)
			unlink(f->tmp);
	}
	afile_reset(f);
}
