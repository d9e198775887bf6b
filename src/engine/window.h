/* window: the outstanding-query table of one worker: a slot per DNS ID, oldest-first ID reuse, O(1)
 * timeouts. */
#ifndef DV_WINDOW_H
#define DV_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One window per worker. Slot i is the query that carries DNS ID i.
 *
 * - Free IDs sit in a FIFO: a freed ID (answered or timed out) goes to the tail
 *   and the next query takes the head, so an ID is reused as late as possible
 *   and a late answer meets its own timed-out slot, not a new query.
 * - In-flight slots sit on a doubly linked list in send order; the head is the
 *   oldest, so expiry looks only at the head: O(1) per expired query.
 * - A slot remembers its last query after it leaves flight (state DONE or
 *   TIMEDOUT) until the ID is reused, so a duplicate or late answer is told apart.
 *
 * capacity: at most this many in flight (<= 65536). All IDs 0..65535 are used
 * for reuse distance even when capacity is smaller.
 */

#define DV_WINDOW_IDS 65536u
#define DV_WINDOW_NIL 0xffffffffu

typedef enum dv_slot_state {
	DV_SLOT_FREE = 0, /* never used since init */
	DV_SLOT_INFLIGHT, /* sent, waiting for its answer */
	DV_SLOT_DONE,     /* answered in time */
	DV_SLOT_TIMEDOUT, /* timed out, no answer yet */
	DV_SLOT_LATE,     /* timed out, then answered */
} dv_slot_state_t;

#define DV_SLOT_NO_STAMP UINT32_MAX /* wire_off_ns: no kernel transmit stamp (yet) */

typedef struct dv_slot {
	uint64_t sent_ns;     /* monotonic send time (read just before the sendmmsg call) */
	uint64_t intended_ns; /* when the pacer's schedule wanted it sent; = sent_ns unpaced */
	uint32_t qidx;        /* index into the query list */
	uint32_t prev;        /* in-flight list links (slot ids), DV_WINDOW_NIL at ends */
	uint32_t next;
	uint32_t tx_key;      /* the kernel's SOF_TIMESTAMPING_OPT_ID key, when tx_asked */
	uint32_t wire_off_ns; /* kernel transmit stamp - sent_ns, or DV_SLOT_NO_STAMP */
	uint16_t sock;        /* worker-local socket index that sent it */
	uint8_t state;        /* dv_slot_state_t */
	uint8_t tx_asked; /* its datagram asked for a transmit stamp (the wire clock's sample) */
} dv_slot_t;

typedef struct dv_window {
	dv_slot_t *slot;    /* DV_WINDOW_IDS slots */
	uint16_t *freeq;    /* ring of free ids, DV_WINDOW_IDS entries */
	uint32_t free_head; /* ring positions (mod DV_WINDOW_IDS) */
	uint32_t free_count;
	uint32_t head;      /* oldest in flight, DV_WINDOW_NIL when empty */
	uint32_t tail;      /* newest in flight */
	uint32_t inflight;  /* number in flight */
	uint32_t capacity;  /* maximum in flight */
	uint32_t peak;      /* highest inflight seen */
	uint32_t *per_sock; /* in flight per socket index, when counted (else NULL) */
} dv_window_t;

/* Allocate; ids are handed out 0, 1, 2, ... at first. Returns 0 or -ENOMEM/-EINVAL. */
int dv_window_init(dv_window_t *w, uint32_t capacity);
void dv_window_free(dv_window_t *w);

/*
 * Count the queries in flight per socket index (0..nsocks-1) from now on, in
 * per_sock[]; every later acquire must name a socket below nsocks. Call while
 * nothing is in flight. Returns 0 or -ENOMEM/-EINVAL.
 */
int dv_window_count_sockets(dv_window_t *w, uint32_t nsocks);

static inline uint32_t dv_window_room(const dv_window_t *w)
{
	return w->capacity - w->inflight;
}

/*
 * Take the oldest free ID for a query being sent now; the slot becomes INFLIGHT
 * and the newest on the in-flight list. Requires dv_window_room(w) > 0.
 */
uint16_t dv_window_acquire(dv_window_t *w, uint32_t qidx, uint16_t sock, uint64_t now_ns);

/*
 * Give back an ID that was acquired but whose datagram was not sent after all
 * (a local send failure): it leaves flight and returns to the free FIFO's tail
 * as FREE, as if never used.
 */
void dv_window_cancel(dv_window_t *w, uint16_t id);

/* An in-flight query was answered: state DONE, ID to the free FIFO's tail. */
void dv_window_complete(dv_window_t *w, uint16_t id);

/* A TIMEDOUT slot received its late answer: state LATE (its ID is already free). */
void dv_window_mark_late(dv_window_t *w, uint16_t id);

/*
 * The oldest in-flight ID if it was sent at or before deadline_ns (i.e. it has
 * timed out), else -1. The caller then calls dv_window_expire() on it.
 */
int32_t dv_window_oldest_expired(const dv_window_t *w, uint64_t deadline_ns);
/* An in-flight query timed out: state TIMEDOUT, ID to the free FIFO's tail. */
void dv_window_expire(dv_window_t *w, uint16_t id);

#endif
