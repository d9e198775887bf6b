/* duetimer: a sub-millisecond one-shot timer on the libuv loop (timerfd), for replay schedules. */
#include "config.h"

#include "engine/duetimer.h"

#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/util.h"

static void on_expiry(uv_poll_t *h, int status, int events)
{
	dv_duetimer_t *t = (dv_duetimer_t *)h;
	uint64_t n;

	(void)status;
	(void)events;
	if (read(t->fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return; /* re-armed meanwhile, or spurious: nothing expired */
	t->armed_ns = 0;
	t->cb(t->data);
}

int dv_duetimer_init(dv_duetimer_t *t, uv_loop_t *loop, void (*cb)(void *data), void *data)
{
	int rc;

	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->fd < 0)
		return -errno;
	t->armed_ns = 0;
	t->cb = cb;
	t->data = data;
	rc = uv_poll_init(loop, &t->poll, t->fd);
	if (rc == 0)
		rc = uv_poll_start(&t->poll, UV_READABLE, on_expiry);
	if (rc != 0) {
		close(t->fd);
		t->fd = -1;
		return rc;
	}
	return 0;
}

void dv_duetimer_arm(dv_duetimer_t *t, uint64_t due_ns)
{
	struct itimerspec its = {{0, 0}, {0, 0}};

	if (t->fd < 0 || due_ns == t->armed_ns || due_ns == UINT64_MAX)
		return;
	if (due_ns == 0)
		due_ns = 1; /* 0 would disarm: "now" is any time in the past */
	its.it_value.tv_sec = (time_t)(due_ns / DV_NS_PER_S);
	its.it_value.tv_nsec = (long)(due_ns % DV_NS_PER_S);
	if (timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		t->armed_ns = due_ns;
}

static void on_closed(uv_handle_t *h)
{
	dv_duetimer_t *t = (dv_duetimer_t *)h;

	close(t->fd);
	t->fd = -1;
}

void dv_duetimer_close(dv_duetimer_t *t)
{
	if (t->fd < 0 || uv_is_closing((uv_handle_t *)&t->poll))
		return;
	uv_close((uv_handle_t *)&t->poll, on_closed);
}
