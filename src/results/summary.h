/* summary: a study's comparison table and its summary as text (doc/methodology.md). */
#ifndef DV_SUMMARY_H
#define DV_SUMMARY_H

#include <stdio.h>

#include "study/study.h"

/*
 * The comparison table: one row per target and list, one cell per repeat and
 * plan position (qps and lost; '-' not run, '*' interrupted).
 */
void dv_study_print_table(const dv_study_t *s, FILE *out);
/*
 * The summary: mean +- spread per target, list and plan position, the hot/cold
 * ratio, and the change against the first target with the spread verdict of
 * study/groups.h. Interrupted passes are left out.
 */
void dv_study_print_summary(const dv_study_t *s, FILE *out);

#endif
