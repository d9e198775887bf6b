/* fixture: a hand-made study for the results unit tests (test_compare, test_gates). */
#ifndef DV_TEST_RESULTS_FIXTURE_H
#define DV_TEST_RESULTS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/histogram.h"
#include "study/study.h"

/* One pass of the study; target last so a one-target study may leave it out (0). */
typedef struct pass_spec {
	dv_pass_kind_t kind;
	unsigned repeat;
	double qps;
	uint64_t sent, lost;
	uint64_t lat_ns; /* every answer took this long: p50 = p99 = lat_ns exactly */
	size_t target;   /* index into the labels given to make_study */
} pass_spec_t;

/*
 * A study with the targets labelled labels[0..nt-1] (address 127.0.0.1:53),
 * one list "SOA", and the passes ps[0..n-1] in that order: qps, sent and lost
 * as given, completed = sent - lost answers of lat_ns each. Strings are
 * literals: free it with free_study, not dv_study_free.
 */
static inline dv_study_t *make_study_of(const char *const *labels, size_t nt, const pass_spec_t *ps,
                                        size_t n)
{
	dv_study_t *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->targets = calloc(nt, sizeof(*s->targets));
	s->lists = calloc(1, sizeof(*s->lists));
	s->passes = calloc(n ? n : 1, sizeof(*s->passes));
	assert_non_null(s->targets);
	assert_non_null(s->lists);
	assert_non_null(s->passes);
	for (size_t t = 0; t < nt; t++) {
		s->targets[t].label = (char *)labels[t];
		s->targets[t].addr_text = (char *)"127.0.0.1:53";
	}
	s->lists[0].label = (char *)"SOA";
	s->n_targets = nt;
	s->n_lists = 1;
	s->n_passes = n;
	for (size_t i = 0; i < n; i++) {
		dv_pass_record_t *p = &s->passes[i];
		assert_true(ps[i].target < nt);
		p->target = ps[i].target;
		p->kind = ps[i].kind;
		p->repeat = ps[i].repeat;
		p->res.qps = ps[i].qps;
		p->res.run_time_s = 2; /* long enough for a throughput figure */
		p->res.stats.c.sent = ps[i].sent;
		p->res.stats.c.lost = ps[i].lost;
		p->res.stats.c.completed = ps[i].sent - ps[i].lost;
		dv_hist_init(&p->res.stats.latency);
		for (uint64_t k = 0; k < ps[i].sent - ps[i].lost; k++)
			dv_hist_add(&p->res.stats.latency, ps[i].lat_ns);
	}
	return s;
}

static inline void free_study(dv_study_t *s)
{
	free(s->targets);
	free(s->lists);
	free(s->passes);
	free(s);
}

#endif
