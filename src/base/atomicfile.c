/* atomicfile: results files are written to a temporary name and renamed into place. */
#include "config.h"

#include "base/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
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

int dv_atomicfile_open(dv_atomicfile_t *f, const char *path, bool copy_existing, dv_err_t *err)
{
	int fd, rc;

	memset(f, 0, sizeof(*f));
	if (strcmp(path, "-") == 0) {
		f->fp = stdout;
		return 0;
	}
	f->path = strdup(path);
	if (f->path == NULL || asprintf(&f->tmp, "%s.tmp.XXXXXX", path) < 0) {
		f->tmp = NULL;
		afile_reset(f);
		return dv_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	fd = mkstemp(f->tmp);
	if (fd < 0) {
		rc = -errno;
		dv_err_set(err, rc, "%s: cannot create a file there: %s", path, strerror(errno));
		afile_reset(f);
		return rc;
	}
	fchmod(fd, 0644);
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
		unlink(f->tmp);
	}
	afile_reset(f);
}
