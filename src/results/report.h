/* report: the human-readable text report of one pass, laid out like dnsperf's. */
#ifndef DV_REPORT_H
#define DV_REPORT_H

#include <stdio.h>

#include "study/study.h"

/*
 * Print the statistics of one pass record of study s (target and list names are
 * taken from s). Layout follows dnsperf's "Statistics:" block; see doc/numbers.md.
 */
void dv_report_pass_text(FILE *out, const dv_study_t *s, const dv_pass_record_t *p);

#endif
