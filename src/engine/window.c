/* window: outstanding-query table: 65536 slots by DNS ID, free-ID FIFO, in-flight list. */
#include "config.h"

#include "engine/window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every ID is always in exactly one of two places: the free FIFO (states FREE,
 * DONE, TIMEDOUT, LATE) or the in-flight list (state INFLIGHT). So the ring
 * never holds more than DV_WINDOW_IDS entries and free_count + inflight is
 * always DV_WINDOW_IDS. The transitions below check the state they start from
 * and do nothing otherwise: a stray duplicate call (e.g. a second answer with
 * the same ID reaching complete()) must not put an ID in the FIFO twice, which
 * would later hand one ID to two queries.
 */
#define RING_MASK (DV_WINDOW_IDS - 1)

int dv_window_init(dv_window_t *w, uint32_t capacity)
{
	memset(w, 0, sizeof(*w));
	if (capacity == 0 || capacity > DV_WINDOW_IDS)
		return -EINVAL;
	w->slot = calloc(DV_WINDOW_IDS, sizeof(*w->slot));
	w->freeq = calloc(DV_WINDOW_IDS, sizeof(*w->freeq));
	if (w->slot == NULL || w->freeq == NULL) {
		dv_window_free(w);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < DV_WINDOW_IDS; i++) {
		w->freeq[i] = (uint16_t)i;
		w->slot[i].prev = DV_WINDOW_NIL;
		w->slot[i].next = DV_WINDOW_NIL;
		w->slot[i].state = DV_SLOT_FREE;
	}
	w->free_head = 0;
	w->free_count = DV_WINDOW_IDS;
	w->head = DV_WINDOW_NIL;
	w->tail = DV_WINDOW_NIL;
	w->capacity = capacity;
	return 0;
}

void dv_window_free(dv_window_t *w)
{
	if (w == NULL)
		return;
	free(w->slot);
	free(w->freeq);
	free(w->per_sock);
	w->slot = NULL;
	w->freeq = NULL;
	w->per_sock = NULL;
}

int dv_window_count_sockets(dv_window_t *w, uint32_t nsocks)
{
	if (nsocks == 0 || nsocks > UINT16_MAX + 1u || w->inflight > 0 || w->per_sock != NULL)
		return -EINVAL;
	w->per_sock = calloc(nsocks, sizeof(*w->per_sock));
	return w->per_sock == NULL ? -ENOMEM : 0;
}

static void free_push(dv_window_t *w, uint16_t id)
{
	w->freeq[(w->free_head + w->free_count) & RING_MASK] = id;
	w->free_count++;
}

static void unlink_inflight(dv_window_t *w, uint16_t id)
{
	dv_slot_t *s = &w->slot[id];
	if (s->prev != DV_WINDOW_NIL)
		w->slot[s->prev].next = s->next;
	else
		w->head = s->next;
	if (s->next != DV_WINDOW_NIL)
		w->slot[s->next].prev = s->prev;
	else
		w->tail = s->prev;
	s->prev = DV_WINDOW_NIL;
	s->next = DV_WINDOW_NIL;
	w->inflight--;
	if (w->per_sock != NULL)
		w->per_sock[s->sock]--;
}

uint16_t dv_window_acquire(dv_window_t *w, uint32_t qidx, uint16_t sock, uint64_t now_ns)
{
	uint16_t id = w->freeq[w->free_head];
	w->free_head = (w->free_head + 1) & RING_MASK;
	w->free_count--;

	dv_slot_t *s = &w->slot[id];
	s->sent_ns = now_ns;
	s->intended_ns = now_ns;
	s->wire_off_ns = DV_SLOT_NO_STAMP;
	s->tx_asked = 0;
	s->qidx = qidx;
	s->sock = sock;
	s->state = DV_SLOT_INFLIGHT;
	s->next = DV_WINDOW_NIL;
	s->prev = w->tail;
	if (w->tail != DV_WINDOW_NIL)
		w->slot[w->tail].next = id;
	else
		w->head = id;
	w->tail = id;
	w->inflight++;
	if (w->per_sock != NULL)
		w->per_sock[sock]++;
	if (w->inflight > w->peak)
		w->peak = w->inflight;
	return id;
}

/* Leave flight into state st, ID to the FIFO's tail. */
static void retire(dv_window_t *w, uint16_t id, dv_slot_state_t st)
{
	if (w->slot[id].state != DV_SLOT_INFLIGHT)
		return;
	unlink_inflight(w, id);
	w->slot[id].state = (uint8_t)st;
	free_push(w, id);
}

void dv_window_cancel(dv_window_t *w, uint16_t id)
{
	retire(w, id, DV_SLOT_FREE);
}

void dv_window_complete(dv_window_t *w, uint16_t id)
{
	retire(w, id, DV_SLOT_DONE);
}

void dv_window_expire(dv_window_t *w, uint16_t id)
{
	retire(w, id, DV_SLOT_TIMEDOUT);
}

void dv_window_mark_late(dv_window_t *w, uint16_t id)
{
	if (w->slot[id].state == DV_SLOT_TIMEDOUT)
		w->slot[id].state = DV_SLOT_LATE;
}

int32_t dv_window_oldest_expired(const dv_window_t *w, uint64_t deadline_ns)
{
	if (w->head == DV_WINDOW_NIL)
		return -1;
	if (w->slot[w->head].sent_ns <= deadline_ns)
		return (int32_t)w->head;
	return -1;
}
