/* metrics: DNS-OARC dns-metrics JSON lines (header / event / stats_periodic / stats_sum), as
 * kxdpgun writes them. */
#ifndef DV_METRICS_H
#define DV_METRICS_H

#include "study/study.h"
#include "base/util.h"

/* The dns-metrics schema version followed (kxdpgun's STATS_SCHEMA_VERSION). */
#define DV_METRICS_SCHEMA_VERSION 20240530

/*
 * Write the study s as dns-metrics JSON lines to path ("-" = stdout),
 * atomically: one header object, then per reported pass an event object, one
 * stats_periodic object per interval snapshot and a stats_sum object (all with
 * subid "passN"), then a stats_sum over all reported passes without subid.
 * Field mapping: doc/nightly.md, "dns-metrics". 0 or a negative errno with err
 * filled ("FILE: why").
 */
int dv_metrics_write(const dv_study_t *s, const char *path, dv_err_t *err);

/*
 * Split a command line the way a POSIX shell splits words (blanks, '...',
 * "...", backslash), for the header's generator_params. Returns a NULL-ended
 * array of strings to free with dv_argv_free, or NULL on allocation failure.
 */
char **dv_split_cmdline(const char *cmdline);
void dv_argv_free(char **argv);

#endif
