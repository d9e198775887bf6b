/* groups_server: a group's server figures (CPU per answer, peak RSS, the server's own
 * counters) as a series; the cold/hot check the server's counters allow. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "study/groups.h"

dv_series_t dv_group_server(const dv_group_t *g, int which)
{
	double *vals;
	size_t n = 0;
	dv_series_t st;

	if (g == NULL || g->n == 0 || (vals = malloc(g->n * sizeof(*vals))) == NULL)
		return dv_series_of(NULL, 0);
	for (size_t i = 0; i < g->n; i++) {
		const dv_server_cost_t *s = &g->passes[i]->res.server;
		if (which == 2 && s->stats_ok && s->stats_cache && s->stats_queries > 0)
			vals[n++] = (double)s->stats_misses / (double)s->stats_queries;
		else if (which == 3 && s->stats_ok)
			vals[n++] = (double)s->stats_queries;
		else if (which < 2 && s->ok && (which != 0 || s->answers > 0))
			vals[n++] =
			    which == 0 ? dv_server_us_per_answer(s) : (double)s->rss_peak_kb;
	}
	st = dv_series_of(vals, n);
	free(vals);
	return st;
}

void dv_pass_check_cache(const dv_study_t *st, const dv_pass_record_t *p)
{
	const dv_server_cost_t *s = &p->res.server;
	bool cold = p->kind == DV_PASS_COLD, hot = p->kind == DV_PASS_HOT;

	if (!s->stats_ok || !s->stats_cache || p->res.interrupted)
		return;
	if ((cold && s->stats_hits > 0) || (hot && s->stats_misses > 0))
		fprintf(stderr,
		        "dnsvolley: warning: the %s pass of target %s, list %s, repeat %u: the "
		        "server counted %" PRIu64 " cache hits and %" PRIu64 " misses in %" PRIu64
		        " queries (%s): %s\n",
		        dv_pass_kind_name(p->kind), st->targets[p->target].label,
		        st->lists[p->list].label, p->repeat + 1, s->stats_hits, s->stats_misses,
		        s->stats_queries, s->stats_kind,
		        cold ? "the pass was not cold (check --flush)"
		             : "the pass was not hot (the cache did not hold the list)");
}
