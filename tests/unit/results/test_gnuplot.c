/* test_gnuplot: the one gnuplot runner, driven with /bin/sh as "gnuplot": stdin is /dev/null,
 * a whole image passes, a truncated one is removed, a failure and a hang are named. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "results/gnuplot.h"

static char dir[64];

/* The tail of a PNG (the IEND chunk with its CRC) and of an SVG, as printf(1) escapes. */
#define PNG_END "IEND\\256\\102\\140\\202"
#define SVG_END "</svg>\\n"

static const char *const IMAGES[] = {"a.png", "a.svg", NULL};

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dv_test_gnuplot_XXXXXX");
	return mkdtemp(dir) != NULL ? 0 : -1;
}

static void rm(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
}

static int teardown(void **state)
{
	static const char *const files[] = {"a.png", "a.svg", "s.gp", "stdin.txt", "gnuplot.log"};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		rm(files[i]);
	return rmdir(dir);
}

static void script(const char *text)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/s.gp", dir);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static bool exists(const char *name)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void test_whole_images_and_stdin(void **state)
{
	char p[128], got[64] = "";
	dv_err_t err = {{0}};
	FILE *f;

	(void)state;
	script("readlink /proc/self/fd/0 > stdin.txt\n"
	       "printf 'x" PNG_END "' > a.png\nprintf '<svg>" SVG_END "' > a.svg\n");
	assert_int_equal(dv_gnuplot_run(dir, "/bin/sh", "s.gp", IMAGES, 0, &err), 0);
	snprintf(p, sizeof(p), "%s/stdin.txt", dir);
	f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	assert_string_equal(got, "/dev/null\n");
	assert_true(exists("a.png") && exists("a.svg"));
}

static void test_truncated_image_removed(void **state)
{
	dv_err_t err = {{0}};

	(void)state;
	script("printf 'x' > a.png\nprintf '<svg>" SVG_END "' > a.svg\n"); /* no IEND */
	assert_int_equal(dv_gnuplot_run(dir, "/bin/sh", "s.gp", IMAGES, 0, &err), -EIO);
	assert_non_null(strstr(err.msg, "s.gp: /bin/sh could not write a whole a.png and a.svg: "
	                                "incomplete output; see "));
	assert_false(exists("a.png"));
	assert_false(exists("a.svg"));
	/* A missing image is incomplete too. */
	script("printf 'x" PNG_END "' > a.png\n");
	assert_int_equal(dv_gnuplot_run(dir, "/bin/sh", "s.gp", IMAGES, 0, &err), -EIO);
	assert_false(exists("a.png"));
}

static void test_failure_and_missing_program(void **state)
{
	dv_err_t err = {{0}};

	(void)state;
	script("echo oops >&2\nexit 3\n");
	assert_int_equal(dv_gnuplot_run(dir, "/bin/sh", "s.gp", IMAGES, 0, &err), -EIO);
	assert_non_null(strstr(err.msg, "s.gp: /bin/sh failed (status 3); see "));
	assert_non_null(strstr(err.msg, "/gnuplot.log"));
	assert_int_equal(dv_gnuplot_run(dir, "/nonexistent/gnuplot", "s.gp", IMAGES, 0, &err),
	                 -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/gnuplot: not found (install gnuplot"));
}

/* A script that never ends is killed at the timeout and named (here 0.2 s, not 60). */
static void test_timeout(void **state)
{
	dv_err_t err = {{0}};

	(void)state;
	script("sleep 30\n");
	assert_int_equal(dv_gnuplot_run(dir, "/bin/sh", "s.gp", IMAGES, 200, &err), -ETIMEDOUT);
	assert_non_null(strstr(err.msg, "s.gp: /bin/sh took longer than 0.2 s"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_whole_images_and_stdin, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_truncated_image_removed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failure_and_missing_program, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
