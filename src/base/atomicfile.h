/* atomicfile: write a results file through a temporary file and rename(), never half-written;
 * a device, a FIFO or a pipe is written directly. */
#ifndef DV_ATOMICFILE_H
#define DV_ATOMICFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"

typedef struct dv_atomicfile {
	FILE *fp;   /* write here */
	char *path; /* final name; NULL for stdout */
	char *tmp;  /* temporary name in the same directory; NULL when written directly */
} dv_atomicfile_t;

/*
 * Can PATH be written by dv_atomicfile_open (checked before a run that may take
 * hours)? A regular file or a missing one: its directory must accept new files
 * (the temporary); anything else that exists (a device, a FIFO, /dev/fd/N): it
 * must be writable. 0, or a negative errno with err = "'PATH' is a directory",
 * "'PATH' is a symbolic link to a missing file; not followed" or "cannot write
 * 'PATH': why" (the caller puts its flag in front).
 */
int dv_atomicfile_check(const char *path, dv_err_t *err);

/*
 * Open PATH for writing through "PATH.tmp.XXXXXX" in the same directory; "-" means
 * stdout (written directly). With copy_existing, the current content of PATH (if
 * any) is copied first, so appending stays atomic too. A new file gets mode 0666 less
 * the umask (as any new file); a replaced file keeps its permission bits. A symlink is
 * written through: its target is replaced, the link stays (a dangling link is refused,
 * -ENOENT, "is a symbolic link to a missing file"). Anything that is neither a regular file
 * nor missing (a character device such as /dev/null, a FIFO, a /dev/fd/N pipe as bash's
 * `>(cmd)` gives) is opened and written directly, never replaced: tmp stays NULL,
 * copy_existing is ignored (nothing is read from it), and opening a FIFO waits for its
 * reader. A directory is refused (-EISDIR). Returns 0 or a negative errno with err filled
 * ("FILE: why"). Not for several threads at once (temporary names).
 */
int dv_atomicfile_open(dv_atomicfile_t *f, const char *path, bool copy_existing, dv_err_t *err);
/* Flush, fsync, close and rename over PATH. On any error the temporary file is
 * removed, PATH is untouched, and a negative errno is returned with err filled.
 * Written directly: flush and close only (what was written is there). */
int dv_atomicfile_commit(dv_atomicfile_t *f, dv_err_t *err);
/* Give up: close and remove the temporary file (written directly: close it). Accepts an
 * unopened/zeroed f. */
void dv_atomicfile_abort(dv_atomicfile_t *f);

#endif
