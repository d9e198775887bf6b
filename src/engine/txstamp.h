/* txstamp: the wire clock's bookkeeping: which queries ask the kernel for a transmit stamp (a
 * seeded uniform sample) and which stamp key each one took. */
#ifndef DV_TXSTAMP_H
#define DV_TXSTAMP_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/window.h"

/*
 * The sample: each query independently with probability 1/every (every >= 1; 1 takes all),
 * from a per-worker splitmix64 stream. Independent draws, not every Nth query: a fixed
 * stride would line up with the position in the send batch (the first datagram of a
 * sendmmsg waits least), and the latency of a batch position is not the latency of a query.
 */
typedef struct dv_sampler {
	uint64_t state;
	uint64_t below; /* take a draw < below; UINT64_MAX with every == 1 (then no draw at all) */
	uint32_t every;
} dv_sampler_t;

void dv_sampler_init(dv_sampler_t *s, uint64_t seed, uint32_t every);

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit draw. */
static inline uint64_t dv_sampler_next(dv_sampler_t *s)
{
	uint64_t z = (s->state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* True: this query asks for a transmit stamp. */
static inline bool dv_sampler_take(dv_sampler_t *s)
{
	return s->every <= 1 || dv_sampler_next(s) < s->below;
}

/*
 * The keys of one socket's transmit stamps. Linux numbers the datagrams that asked for a
 * stamp (SOF_TIMESTAMPING_OPT_ID; its counter advances only for those, 6.1 and 6.18 alike:
 * __ip_append_data) 0, 1, 2, ...; key k's DNS ID is id[k & mask]. The map holds twice the
 * window, so a key is overwritten only long after its stamp came; the slot's own tx_key
 * (and tx_asked) refuse any stamp that came later still, or that was never asked for.
 */
typedef struct dv_txmap {
	uint16_t *id;      /* DNS ID by key & mask */
	uint32_t mask;     /* entries - 1 */
	uint32_t next_key; /* the key the kernel gives the next datagram that asks */
	uint32_t pending;  /* asked, accepted by the kernel, stamp not yet read */
} dv_txmap_t;

/* Room for twice window_capacity keys (a power of two, 64 to DV_WINDOW_IDS). 0 or -ENOMEM. */
int dv_txmap_init(dv_txmap_t *m, uint32_t window_capacity);
void dv_txmap_free(dv_txmap_t *m);

/* The datagram of slot id asked for a stamp and the kernel accepted it: it took the next key. */
static inline void dv_txmap_sent(dv_txmap_t *m, dv_window_t *win, uint16_t id)
{
	win->slot[id].tx_key = m->next_key;
	win->slot[id].tx_asked = 1;
	m->id[m->next_key & m->mask] = id;
	m->next_key++;
	m->pending++;
}

/* A stamp with key came off the error queue: the DNS ID it was given to (the engine checks
 * that the slot still holds that key: dv_engine_tx_stamp). */
static inline uint16_t dv_txmap_take(dv_txmap_t *m, uint32_t key)
{
	if (m->pending > 0)
		m->pending--;
	return m->id[key & m->mask];
}

/* The kernel's key counter was set back to 0 (the socket's OPT_ID turned off and on). */
void dv_txmap_restart(dv_txmap_t *m);

#endif
