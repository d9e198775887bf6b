/* connfig: connection figures of a pass (connect/handshake percentiles, failures, resumption),
 * and their series over a group. */
#include "config.h"

#include "results/connfig.h"

#include <math.h>
#include <stdlib.h>

static const char *const labels[DV_CF_COUNT] = {
    [DV_CF_CONNECT_P50_MS] = "connect p50 ms",
    [DV_CF_CONNECT_P99_MS] = "connect p99 ms",
    [DV_CF_HANDSHAKE_P50_MS] = "handshake p50 ms",
    [DV_CF_HANDSHAKE_P99_MS] = "handshake p99 ms",
    [DV_CF_CONN_FAILED] = "conn failed",
    [DV_CF_CONN_RESET] = "conn reset",
    [DV_CF_RESUMED_PCT] = "resumed %",
    [DV_CF_QUERIES_PER_CONN] = "queries/conn",
};

const char *dv_conn_fig_label(dv_conn_fig_t f)
{
	return (unsigned)f < DV_CF_COUNT ? labels[f] : "?";
}

static double quantile_ms(const dv_hist_t *h, double q)
{
	return h->count > 0 ? (double)dv_hist_quantile_ns(h, q) / 1e6 : NAN;
}

double dv_conn_fig(const dv_pass_result_t *r, dv_conn_fig_t f)
{
	const dv_counters_t *c = &r->stats.c;
	uint64_t hs = c->tls_full + c->tls_resumed;

	switch (f) {
	case DV_CF_CONNECT_P50_MS:
		return quantile_ms(&r->stats.connect, 0.50);
	case DV_CF_CONNECT_P99_MS:
		return quantile_ms(&r->stats.connect, 0.99);
	case DV_CF_HANDSHAKE_P50_MS:
		return quantile_ms(&r->stats.handshake, 0.50);
	case DV_CF_HANDSHAKE_P99_MS:
		return quantile_ms(&r->stats.handshake, 0.99);
	case DV_CF_CONN_FAILED:
		return (double)c->conn_failed;
	case DV_CF_CONN_RESET:
		return (double)c->conn_reset;
	case DV_CF_RESUMED_PCT:
		return hs > 0 ? 100.0 * (double)c->tls_resumed / (double)hs : NAN;
	case DV_CF_QUERIES_PER_CONN:
		return c->conn_opened > 0 ? (double)c->sent / (double)c->conn_opened : NAN;
	default:
		return NAN;
	}
}

bool dv_conn_fig_is_latency(dv_conn_fig_t f)
{
	return f <= DV_CF_HANDSHAKE_P99_MS;
}

double dv_conn_fig_floor(dv_conn_fig_t f, double v)
{
	/* The connect and handshake histograms have the latency histogram's buckets. */
	return dv_conn_fig_is_latency(f) ? dv_metric_floor(DV_M_P99_MS, v) : 0;
}

bool dv_pass_has_conns(const dv_pass_result_t *r)
{
	const dv_counters_t *c = &r->stats.c;

	return c->conn_opened + c->conn_failed + c->conn_abandoned > 0;
}

const char *dv_study_transport(const dv_study_t *s)
{
	return dv_run_transport(&s->run);
}

bool dv_study_has_conns(const dv_study_t *s)
{
	if (s->run.stream)
		return true;
	for (size_t i = 0; i < s->n_passes; i++)
		if (s->passes[i].kind != DV_PASS_WARMUP && dv_pass_has_conns(&s->passes[i].res))
			return true;
	return false;
}

dv_series_t dv_group_conn_series(const dv_group_t *g, dv_conn_fig_t f)
{
	dv_series_t none = {0};
	double *v;
	size_t n = 0;

	if (g == NULL || g->n == 0 || (v = calloc(g->n, sizeof(*v))) == NULL)
		return none;
	for (size_t i = 0; i < g->n; i++) {
		double x = dv_conn_fig(&g->passes[i]->res, f);
		if (!isnan(x))
			v[n++] = x;
	}
	none = dv_series_of(v, n);
	free(v);
	return none;
}
