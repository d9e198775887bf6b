/* model: realistic synthetic query lists: Zipf popularity over domains, a type mix, a share of
 * NXDOMAIN names. */
#ifndef DV_GENLIST_MODEL_H
#define DV_GENLIST_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"
#include "genlist/genlist.h"

/*
 * The domain at position r (0-based, in list order after --dedupe/--shuffle) has
 * popularity rank r + 1 and is asked with probability p_r = (r + 1)^-s / H(N, s),
 * H(N, s) = sum over k = 1..N of k^-s. s = 0 is uniform; s near 1 is what
 * resolver traffic looks like. The list length L is independent of N: each of
 * the L queries draws a domain, a type from the mix and, with probability
 * nx_share, becomes "RANDOMLABEL.DOMAIN" (or "RANDOMLABEL.NXZONE"), a name that
 * does not exist (12 random [a-z0-9] characters: collisions are negligible).
 * All draws come from splitmix64(seed): the same inputs and seed, the same list.
 */

#define DV_MIX_MAX      16
#define DV_NX_LABEL_LEN 12

typedef struct dv_model {
	double s;        /* Zipf exponent, >= 0 */
	uint64_t length; /* queries to write (L) */
	unsigned ntypes;
	char types[DV_MIX_MAX][24]; /* as written, checked */
	double weights[DV_MIX_MAX]; /* > 0, any scale */
	double nx_share;            /* 0..1 */
	char nx_zone[256];          /* "" = under the drawn domain */
	uint64_t seed;
} dv_model_t;

/* Defaults: s = 1, length 0 (= the number of domains), mix "A:100", no NX, seed 1. */
void dv_model_init(dv_model_t *m);

/* "A:60,AAAA:25,HTTPS:10,MX:5" (or one "TYPE" alone). -EINVAL with err naming the part. */
int dv_model_parse_mix(dv_model_t *m, const char *spec, dv_err_t *err);
/* "--nx-zone": a valid name, stored without the final dot. -EINVAL with err. */
int dv_model_set_nx_zone(dv_model_t *m, const char *zone, dv_err_t *err);

/* Zipf sampler over ranks 0..n-1: a CDF table, one binary search per draw. */
typedef struct dv_zipf {
	double *cdf;
	size_t n;
} dv_zipf_t;

int dv_zipf_init(dv_zipf_t *z, size_t n, double s); /* 0 or -ENOMEM / -EINVAL (n = 0) */
size_t dv_zipf_draw(const dv_zipf_t *z, uint64_t *state);
double dv_zipf_p(const dv_zipf_t *z, size_t rank); /* probability of rank, 0-based (tests) */
void dv_zipf_free(dv_zipf_t *z);

/*
 * Expected distinct names among L draws from N ranks with exponent s:
 * E[D] = sum over i = 1..N of 1 - (1 - p_i)^L. With an empty cache that keeps
 * every name for the whole run, 1 - E[D] / L is the expected hit rate. The model's
 * own check (tests).
 */
double dv_zipf_expected_distinct(size_t n, double s, uint64_t length);

/*
 * Check that every name the model can write is valid (with the NX label), then
 * write m->length lines (d->count when 0) "NAME TYPE" to out. -EINVAL with err
 * for a name too long with the label, -ENOMEM, or -errno of a failed write.
 */
int dv_model_check(const dv_domains_t *d, const dv_model_t *m, dv_err_t *err);
int dv_model_write(FILE *out, const dv_domains_t *d, const dv_model_t *m);

#endif
