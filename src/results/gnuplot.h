/* gnuplot: run one gnuplot script in a chart directory and check the images it wrote. */
#ifndef DV_GNUPLOT_H
#define DV_GNUPLOT_H

#include "base/util.h"

#define DV_GNUPLOT_TIMEOUT_MS 60000 /* one script; a hung gnuplot is killed */

/*
 * Run `GNUPLOT SCRIPT` (gnuplot NULL: "gnuplot", looked up in PATH) with dir as its
 * working directory: its own process group, stdin /dev/null (a script never waits
 * for a terminal), stdout and stderr appended to dir/gnuplot.log, killed with its
 * group after timeout_ms (0: DV_GNUPLOT_TIMEOUT_MS). Then every name of images
 * (NULL-terminated; files in dir ending .png or .svg) must be a whole image: a PNG
 * that ends with its IEND chunk, an SVG with </svg> (on a full disk gnuplot may exit
 * 0 after a short write). On an incomplete one, every listed image is removed (no
 * truncated or empty image left behind).
 * Returns 0, or a negative errno with err filled: -ENOENT gnuplot not found, -ETIMEDOUT
 * ("took longer than 60 s"), -EIO (failed, with its status; or an incomplete image),
 * -ENOSPC (an incomplete image on a full file system); each message names the script
 * and dir/gnuplot.log.
 */
int dv_gnuplot_run(const char *dir, const char *gnuplot, const char *script,
                   const char *const *images, unsigned timeout_ms, dv_err_t *err);

#endif
