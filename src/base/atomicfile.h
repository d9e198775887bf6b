/* atomicfile: write a results file through a temporary file and rename(), never half-written. */
#ifndef DV_ATOMICFILE_H
#define DV_ATOMICFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/util.h"

typedef struct dv_atomicfile {
	FILE *fp;   /* write here */
	char *path; /* final name; NULL for stdout */
	char *tmp;  /* temporary name in the same directory */
} dv_atomicfile_t;

/*
 * Open PATH for writing through "PATH.tmp.XXXXXX" in the same directory; "-" means
 * stdout (written directly). With copy_existing, the current content of PATH (if
 * any) is copied first, so appending stays atomic too. A new file gets mode 0666 less
 * the umask (as any new file); a replaced file keeps its permission bits. A symlink is
 * written through: its target is replaced, the link stays (a dangling link is refused,
 * -ENOENT, "is a symbolic link to a missing file"). Returns 0 or a negative errno with
 * err filled ("FILE: why"). Not for several threads at once (temporary names).
 */
int dv_atomicfile_open(dv_atomicfile_t *f, const char *path, bool copy_existing, dv_err_t *err);
/* Flush, fsync, close and rename over PATH. On any error the temporary file is
 * removed, PATH is untouched, and a negative errno is returned with err filled. */
int dv_atomicfile_commit(dv_atomicfile_t *f, dv_err_t *err);
/* Give up: close and remove the temporary file. Accepts an unopened/zeroed f. */
void dv_atomicfile_abort(dv_atomicfile_t *f);

#endif
