/* capture: run one command (no shell) with its standard output read into memory, bounded in
 * time and in size, for the control tools a pass reads the server's counters with. */
#ifndef DV_CAPTURE_H
#define DV_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "base/proc.h"

/* What came of a capture (dv_capture_run's return 0). */
typedef struct dv_capture {
	char *out;            /* its standard output, NUL-terminated (owned; free with free()) */
	size_t len;           /* bytes in out */
	int truncated;        /* it wrote more than the cap: out holds the first cap bytes */
	dv_proc_result_t res; /* how it ended (base/proc.h) */
} dv_capture_t;

/*
 * Runs argv (argv[0] looked up in PATH) in its own process group with standard input from
 * /dev/null, standard error to /dev/null, standard output read into memory up to cap bytes
 * (beyond it the pipe is closed: the command gets EPIPE or SIGPIPE), killed with its group
 * after timeout_ms. Returns 0 (see c->res for how it ended) or a negative errno when it could
 * not start (-ENOENT: no such program, -EACCES: not executable). c->out is set (possibly
 * empty) whenever 0 is returned; free it with free().
 */
int dv_capture_run(const char *const *argv, size_t cap, uint64_t timeout_ms, dv_capture_t *c);

#endif
