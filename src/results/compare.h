/* compare: two studies side by side, group by group (groups: study/groups.h). */
#ifndef DV_COMPARE_H
#define DV_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "study/groups.h"
#include "study/study.h"

/*
 * Print the side-by-side table of base and cur (cur's groups in order, then the
 * groups only base has). base_name/cur_name label the columns (file names).
 * Interrupted passes are left out (dv_pass_is_sample) and counted in a note.
 * Returns the number of groups found in both.
 */
size_t dv_compare_print(const dv_study_t *base, const char *base_name, const dv_study_t *cur,
                        const char *cur_name, FILE *out);

#endif
