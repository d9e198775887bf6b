/* gnuplot: the one gnuplot runner of plot and plot_capacity (stdin, timeout, whole images). */
#include "config.h"

#include "results/gnuplot.h"

#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Does dir/name end as a whole PNG (IEND chunk) or SVG (</svg>) does? */
static bool image_complete(const char *dir, const char *name)
{
	static const unsigned char iend[8] = {'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	const char *ext = strrchr(name, '.');
	char path[4096], tail[64];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		return false;
	if (fseek(f, -(long)sizeof(tail), SEEK_END) != 0)
		rewind(f);
	n = fread(tail, 1, sizeof(tail), f);
	fclose(f);
	if (ext != NULL && strcmp(ext, ".png") == 0)
		return n >= sizeof(iend) &&
		       memcmp(tail + n - sizeof(iend), iend, sizeof(iend)) == 0;
	return memmem(tail, n, "</svg>", 6) != NULL;
}

/* Start it (see gnuplot.h) and wait; 0 when it ran, whatever its end (pr). */
static int spawn(const char *dir, const char *gnuplot, const char *script, const char *log,
                 unsigned timeout_ms, dv_proc_result_t *pr, dv_err_t *err)
{
	const char *const argv[] = {gnuplot, script, NULL};
	dv_proc_opts_t o;
	int fd, nul, rc;

	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return dv_err_set(err, -errno, "%s: %s", log, strerror(errno));
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	dv_proc_opts_init(&o);
	o.argv = argv;
	o.cwd = dir;
	o.stdin_fd = nul;
	o.stdout_fd = fd;
	o.stderr_fd = fd;
	o.timeout_ms = timeout_ms;
	fflush(NULL);
	rc = dv_proc_run(&o, pr);
	close(fd);
	if (nul >= 0)
		close(nul);
	if (rc == -ENOENT)
		return dv_err_set(
		    err, -ENOENT,
		    "%s: not found (install gnuplot; Debian: apt-get install gnuplot-nox)",
		    gnuplot);
	if (rc != 0)
		return dv_err_set(err, rc, "cannot start %s: %s", gnuplot, strerror(-rc));
	return 0;
}

int dv_gnuplot_run(const char *dir, const char *gnuplot, const char *script,
                   const char *const *images, unsigned timeout_ms, dv_err_t *err)
{
	char log[4096], names[1024] = "";
	dv_proc_result_t pr;
	bool whole = true;
	size_t i, off = 0;
	int rc;

	if (gnuplot == NULL)
		gnuplot = "gnuplot";
	if (timeout_ms == 0)
		timeout_ms = DV_GNUPLOT_TIMEOUT_MS;
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	if ((rc = spawn(dir, gnuplot, script, log, timeout_ms, &pr, err)) != 0)
		return rc;
	if (pr.end == DV_PROC_TIMED_OUT)
		return dv_err_set(err, -ETIMEDOUT, "%s/%s: %s took longer than %g s", dir, script,
		                  gnuplot, timeout_ms / 1000.0);
	if (pr.end != DV_PROC_EXITED || pr.code != 0)
		return dv_err_set(err, -EIO, "%s/%s: %s failed (status %d); see %s", dir, script,
		                  gnuplot, pr.end == DV_PROC_EXITED ? pr.code : 128 + pr.code, log);
	for (i = 0; images != NULL && images[i] != NULL; i++) {
		whole = whole && image_complete(dir, images[i]);
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
			                        i > 0 ? " and " : "", images[i]);
	}
	if (!whole) {
		struct statvfs vs;
		bool full = statvfs(dir, &vs) == 0 && vs.f_bavail == 0;
		char path[4096];
		for (i = 0; images[i] != NULL; i++) { /* no truncated or empty image left behind */
			snprintf(path, sizeof(path), "%s/%s", dir, images[i]);
			unlink(path);
		}
		return dv_err_set(err, full ? -ENOSPC : -EIO,
		                  "%s/%s: %s could not write a whole %s: %s; see %s", dir, script,
		                  gnuplot, names, full ? strerror(ENOSPC) : "incomplete output",
		                  log);
	}
	return 0;
}
