/* groups_server: a group's server figures (CPU per answer, peak RSS, the server's own
 * counters) as a series. */
#include "config.h"

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
