/* merge: several results files of one run (one per generator host) merged into one, exactly. */
#ifndef DV_MERGE_H
#define DV_MERGE_H

#include <stddef.h>

#include "study/study.h"
#include "base/util.h"

/*
 * into += from, where both are studies read from results files of the same run
 * made by different generators (`dnsvolley merge`, doc/scale-out.md). They must
 * agree on what was run: the lists (label, sha256, query count), the targets
 * (address), the query options (-e, -D, --no-rd, --edns-bufsize, -E), the timing
 * flags (-t, -l, -n, -S), the transport (-m, --queries-per-conn), the passes in
 * order (target, list, repeat, kind) and each pass's latency clock where both files
 * recorded it;
 * otherwise -EINVAL with err = "FILE: its ... differs from FIRST's (...)", and
 * into is unchanged. Each pass is merged exactly (dv_dist_merge_pass: counters
 * and histogram buckets added, the longest time, queries/s recomputed); the
 * load flags -c, -q, -T and -Q are added, the total of the run. from_name names
 * from in messages; into_name the first file.
 */
int dv_merge_study(dv_study_t *into, const char *into_name, const dv_study_t *from,
                   const char *from_name, dv_err_t *err);

/*
 * The inputs of a merge must be different generators' runs: -EINVAL with err =
 * "FILE: the same generator's run as FIRST ..." when two of them have the same
 * host, run start and first pass start (one file given twice under any name, or a
 * copy of it), which would be counted twice. names[i] names studies[i].
 */
int dv_merge_check_distinct(const dv_study_t *const *studies, const char *const *names, size_t n,
                            dv_err_t *err);

/*
 * Give every pass of merged a per-generator section: one dv_rank_pass_t per
 * input (studies[i]'s host and its own figures for that pass), the warnings
 * classified (generator-bound, clock off). Returns 0 or -ENOMEM.
 */
int dv_merge_ranks(dv_study_t *merged, const dv_study_t *const *studies, size_t n);

#endif
