/* junit: JUnit XML for CI systems (one testcase per check). */
#ifndef DV_JUNIT_H
#define DV_JUNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/util.h"

typedef struct dv_junit_case {
	const char *classname; /* "dnsvolley.gates.max-p99" */
	const char *name;      /* "host1/SOA/hot" */
	bool failed;
	bool skipped;
	const char *message; /* failure or skip message (one line); may be NULL */
} dv_junit_case_t;

/*
 * Write a <testsuites> document with one <testsuite name=suite> holding the
 * cases to path ("-" = stdout), atomically. All text is escaped. 0 or a
 * negative errno with err filled ("FILE: why").
 */
int dv_junit_write(const char *path, const char *suite, const dv_junit_case_t *cases, size_t n,
                   dv_err_t *err);

#endif
