/* txstamp: the wire clock's sample of queries and its transmit-stamp keys (txstamp.h). */
#include "config.h"

#include "engine/txstamp.h"

#include <errno.h>
#include <stdlib.h>

void dv_sampler_init(dv_sampler_t *s, uint64_t seed, uint32_t every)
{
	s->state = seed;
	s->every = every > 0 ? every : 1;
	/* P(draw < below) = below / 2^64 = 1/every, to within 2^-64 */
	s->below = s->every <= 1 ? UINT64_MAX : UINT64_MAX / s->every + 1;
}

int dv_txmap_init(dv_txmap_t *m, uint32_t window_capacity)
{
	uint32_t n = 64;

	while (n < 2 * window_capacity && n < DV_WINDOW_IDS)
		n *= 2;
	m->id = calloc(n, sizeof(*m->id));
	if (m->id == NULL)
		return -ENOMEM;
	m->mask = n - 1;
	m->next_key = 0;
	m->pending = 0;
	return 0;
}

void dv_txmap_free(dv_txmap_t *m)
{
	free(m->id);
	m->id = NULL;
}

void dv_txmap_restart(dv_txmap_t *m)
{
	m->next_key = 0;
	m->pending = 0;
}
