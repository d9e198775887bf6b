/* model: draw query lists from a Zipf popularity model with a type mix and NXDOMAIN names. */
#include "config.h"

#include "genlist/model.h"

#include <ctype.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void dv_model_init(dv_model_t *m)
{
	memset(m, 0, sizeof(*m));
	m->s = 1.0;
	m->ntypes = 1;
	strcpy(m->types[0], "A");
	m->weights[0] = 100;
	m->seed = 1;
}

static bool type_ok(const char *t)
{
	size_t len = strlen(t), i;
	unsigned long v = 0;

	if (len > 4 && strncasecmp(t, "TYPE", 4) == 0) {
		for (i = 4; i < len; i++) {
			if (!isdigit((unsigned char)t[i]) || i > 9)
				return false;
			v = v * 10 + (unsigned long)(t[i] - '0');
		}
		return v <= 65535;
	}
	return strncasecmp(t, "TYPE", 4) != 0 && ldns_get_rr_type_by_name(t) != 0;
}

int dv_model_parse_mix(dv_model_t *m, const char *spec, dv_err_t *err)
{
	const char *p = spec;
	unsigned n = 0;

	while (*p != '\0') {
		const char *comma = strchr(p, ','), *colon;
		size_t len = comma ? (size_t)(comma - p) : strlen(p), tlen;
		char part[64], *end;
		double w = 100;

		if (len == 0 || len >= sizeof(part))
			return dv_err_set(err, -EINVAL, "--mix '%s': empty or overlong part", spec);
		if (n == DV_MIX_MAX)
			return dv_err_set(err, -EINVAL, "--mix '%s': at most %d types", spec,
			                  DV_MIX_MAX);
		memcpy(part, p, len);
		part[len] = '\0';
		colon = strchr(part, ':');
		tlen = colon ? (size_t)(colon - part) : len;
		if (colon != NULL) {
			errno = 0;
			w = strtod(colon + 1, &end);
			if (end == colon + 1 || *end != '\0' || errno != 0 || !(w > 0) || w > 1e9)
				return dv_err_set(err, -EINVAL,
				                  "--mix '%s': weight '%s' is not a number > 0",
				                  spec, colon + 1);
		} else if (comma != NULL || p != spec) {
			return dv_err_set(err, -EINVAL,
			                  "--mix '%s': '%s' needs a weight (TYPE:WEIGHT)", spec,
			                  part);
		}
		part[tlen] = '\0';
		if (tlen == 0 || tlen >= sizeof(m->types[0]) || !type_ok(part))
			return dv_err_set(err, -EINVAL, "--mix '%s': unknown type '%s'", spec,
			                  part);
		strcpy(m->types[n], part);
		m->weights[n++] = w;
		p += len + (comma ? 1 : 0);
		if (comma != NULL && *p == '\0')
			return dv_err_set(err, -EINVAL, "--mix '%s': ends with ','", spec);
	}
	if (n == 0)
		return dv_err_set(err, -EINVAL, "--mix: empty");
	m->ntypes = n;
	return 0;
}

int dv_model_set_nx_zone(dv_model_t *m, const char *zone, dv_err_t *err)
{
	char text[sizeof(m->nx_zone) + DV_NX_LABEL_LEN + 2];
	size_t len = strlen(zone);
	ldns_rdf *rdf = NULL;

	if (len > 0 && zone[len - 1] == '.')
		len--;
	if (len == 0 || len >= sizeof(m->nx_zone))
		return dv_err_set(err, -EINVAL, "--nx-zone '%s': not a zone name", zone);
	snprintf(text, sizeof(text), "%0*d.%.*s", DV_NX_LABEL_LEN, 0, (int)len, zone);
	if (ldns_str2rdf_dname(&rdf, text) != LDNS_STATUS_OK)
		return dv_err_set(err, -EINVAL,
		                  "--nx-zone '%s': not a valid name with a %d-character label",
		                  zone, DV_NX_LABEL_LEN);
	ldns_rdf_deep_free(rdf);
	memcpy(m->nx_zone, zone, len);
	m->nx_zone[len] = '\0';
	return 0;
}

int dv_zipf_init(dv_zipf_t *z, size_t n, double s)
{
	double sum = 0;
	size_t i;

	z->cdf = NULL;
	z->n = n;
	if (n == 0 || !(s >= 0))
		return -EINVAL;
	z->cdf = malloc(n * sizeof(*z->cdf));
	if (z->cdf == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sum += pow((double)(i + 1), -s);
		z->cdf[i] = sum;
	}
	for (i = 0; i < n; i++)
		z->cdf[i] /= sum;
	z->cdf[n - 1] = 1.0;
	return 0;
}

void dv_zipf_free(dv_zipf_t *z)
{
	free(z->cdf);
	z->cdf = NULL;
}

double dv_zipf_p(const dv_zipf_t *z, size_t rank)
{
	return rank == 0 ? z->cdf[0] : z->cdf[rank] - z->cdf[rank - 1];
}

static double uniform01(uint64_t *state)
{
	return (double)(dv_splitmix64(state) >> 11) * 0x1.0p-53;
}

size_t dv_zipf_draw(const dv_zipf_t *z, uint64_t *state)
{
	double u = uniform01(state);
	size_t lo = 0, hi = z->n - 1;

	while (lo < hi) { /* first rank whose CDF exceeds u */
		size_t mid = lo + (hi - lo) / 2;
		if (z->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

double dv_zipf_expected_distinct(size_t n, double s, uint64_t length)
{
	double h = 0, d = 0;
	size_t i;

	for (i = 1; i <= n; i++)
		h += pow((double)i, -s);
	for (i = 1; i <= n; i++) {
		double p = pow((double)i, -s) / h;
		d += p >= 1.0 ? 1.0 : -expm1((double)length * log1p(-p));
	}
	return d;
}

int dv_model_check(const dv_domains_t *d, const dv_model_t *m, dv_err_t *err)
{
	dv_genlist_spec_t spec;
	char prefix[DV_NX_LABEL_LEN + 2];

	if (m->nx_share <= 0 || m->nx_zone[0] != '\0')
		return 0; /* domains were checked at load; the zone by dv_model_set_nx_zone */
	memset(prefix, 'x', DV_NX_LABEL_LEN);
	prefix[DV_NX_LABEL_LEN] = '\0';
	if (dv_genlist_spec_set(&spec, "A", prefix, "-", err) != 0)
		return -EINVAL;
	return dv_genlist_check(d, &spec, err);
}

/* The domain as written, without a final dot (unless it is the root). */
static const char *bare(const char *name, int *len)
{
	size_t l = strlen(name);
	if (l > 1 && name[l - 1] == '.' && (l < 2 || name[l - 2] != '\\'))
		l--;
	*len = (int)l;
	return name;
}

int dv_model_write(FILE *out, const dv_domains_t *d, const dv_model_t *m)
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	uint64_t state = m->seed, len = m->length ? m->length : d->count, q;
	double wsum = 0, cum[DV_MIX_MAX];
	dv_zipf_t z;
	unsigned t;
	int rc = 0;

	if (d->count == 0)
		return -EINVAL;
	if ((rc = dv_zipf_init(&z, d->count, m->s)) != 0)
		return rc;
	for (t = 0; t < m->ntypes; t++)
		cum[t] = (wsum += m->weights[t]);
	for (q = 0; q < len && rc == 0; q++) {
		const char *name = dv_domains_get(d, dv_zipf_draw(&z, &state));
		double u = uniform01(&state) * wsum;
		int nl, w;

		for (t = 0; t + 1 < m->ntypes && u >= cum[t]; t++)
			;
		if (m->nx_share > 0 && uniform01(&state) < m->nx_share) {
			char label[DV_NX_LABEL_LEN + 1];
			for (int i = 0; i < DV_NX_LABEL_LEN; i++)
				label[i] = alnum[dv_splitmix64(&state) % 36];
			label[DV_NX_LABEL_LEN] = '\0';
			if (m->nx_zone[0] != '\0')
				w = fprintf(out, "%s.%s %s\n", label, m->nx_zone, m->types[t]);
			else if (strcmp(name, ".") == 0)
				w = fprintf(out, "%s %s\n", label, m->types[t]);
			else {
				name = bare(name, &nl);
				w = fprintf(out, "%s.%.*s %s\n", label, nl, name, m->types[t]);
			}
		} else {
			w = fprintf(out, "%s %s\n", name, m->types[t]);
		}
		if (w < 0)
			rc = errno != 0 ? -errno : -EIO;
	}
	if (rc == 0 && fflush(out) != 0)
		rc = errno != 0 ? -errno : -EIO;
	dv_zipf_free(&z);
	return rc;
}
