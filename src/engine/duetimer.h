/* duetimer: a sub-millisecond one-shot timer on the libuv loop (timerfd), for replay schedules. */
#ifndef DV_DUETIMER_H
#define DV_DUETIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/*
 * libuv's timers count whole milliseconds, so a query due 0.3 ms from now would
 * go out up to 2 ms late. A timerfd armed at an absolute CLOCK_MONOTONIC time
 * (dv_now_ns) and watched by a uv_poll_t wakes the loop at that time, within the
 * kernel's timer slack (50 us by default).
 */
typedef struct dv_duetimer {
	uv_poll_t poll;    /* first member */
	int fd;            /* -1 when not open */
	uint64_t armed_ns; /* 0 when disarmed */
	void (*cb)(void *data);
	void *data;
} dv_duetimer_t;

/* Open and start watching; cb(data) runs once per expiry. 0 or a negative errno. */
int dv_duetimer_init(dv_duetimer_t *t, uv_loop_t *loop, void (*cb)(void *data), void *data);
/* Fire at monotonic due_ns (now if already past); re-arms only when due_ns changes. */
void dv_duetimer_arm(dv_duetimer_t *t, uint64_t due_ns);
/* Stop and close (the descriptor is closed when libuv is done with the handle). No-op if not open.
 */
void dv_duetimer_close(dv_duetimer_t *t);

#endif
