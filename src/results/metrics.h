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
 * The header's generator_params are s->argv word for word (empty without argv).
 * Field mapping: doc/nightly.md, "dns-metrics". 0 or a negative errno with err
 * filled ("FILE: why").
 */
int dv_metrics_write(const dv_study_t *s, const char *path, dv_err_t *err);

#endif
