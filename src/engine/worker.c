/* worker: one thread's event loop: batched sends under the window and pacer, batched receives,
 * expiry. */
#include "config.h"

#include "engine/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/wire.h"

/*
 * Why uv_poll_t on our own sockets rather than uv_udp_t: libuv 1.44 sends one
 * datagram per system call (uv_udp_try_send) and receives one per recvmsg
 * unless recvmmsg is enabled, and it cannot send a batch at all. With raw
 * sockets we call sendmmsg/recvmmsg with up to DV_BATCH datagrams each and
 * libuv only tells us when a socket is readable (or writable after EAGAIN).
 * doc/architecture.md has the benchmark that decided it.
 */

#define DV_RECV_BUF       65536 /* any UDP datagram fits: oversized answers are parsed, not cut */
#define DV_RECV_ROUNDS    4     /* recvmmsg calls per readable event before sending again */
#define DV_SEND_ROUNDS    16    /* sendmmsg calls per pump */
#define DV_PUBLISH_NS     (50 * DV_NS_PER_MS)
#define DV_DIRECT_WAIT_US 1000               /* direct mode: longest wait in recvmmsg */
#define DV_DIRECT_TURN_NS (2 * DV_NS_PER_MS) /* direct mode: back to the loop after this */

/* Per-thread batch buffers (allocated once, reused for every batch). */
typedef struct dv_batch {
	uint8_t sbuf[DV_BATCH][DV_MAX_QUERY_LEN];
	unsigned slen[DV_BATCH];
	struct iovec siov[DV_BATCH];
	struct mmsghdr smsg[DV_BATCH];
	struct iovec riov[DV_BATCH];
	struct mmsghdr rmsg[DV_BATCH];
	union { /* SCM_TIMESTAMPNS: the kernel's receive time of each datagram */
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} rctl[DV_BATCH];
	uint8_t *rbuf; /* DV_BATCH * DV_RECV_BUF */
} dv_batch_t;

static _Thread_local dv_batch_t *tl_batch;

static int open_socket(dv_worker_t *w, uint32_t global_index, int *out_fd, dv_err_t *err)
{
	const dv_run_config_t *cfg = w->cfg;
	int fd, bufsize = (int)cfg->socket_buf_bytes, one = 1, rc;

	/* Direct mode blocks in recvmmsg (bounded by SO_RCVTIMEO); every other call says
	 * MSG_DONTWAIT. */
	fd = socket(cfg->server.ss_family,
	            SOCK_DGRAM | SOCK_CLOEXEC | (w->direct ? 0 : SOCK_NONBLOCK), 0);
	if (fd < 0)
		return dv_err_set(err, -errno, "cannot open socket %u of %u: %s", global_index + 1,
		                  cfg->sockets, strerror(errno));
	if (w->direct) {
		struct timeval tv = {0, DV_DIRECT_WAIT_US};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	/* Ask for large buffers; the kernel caps them at net.core.[rw]mem_max. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
	/*
	 * Receive timestamps where answers are read on ticks (coalesced), so latency
	 * ends when the answer arrived, not when the tick came. Not otherwise: any
	 * socket asking for them makes the kernel stamp every packet on the host,
	 * which cost 15-20% more CPU per query at saturation (doc/performance.md),
	 * and a worker that wakes per answer reads it within its batch anyway.
	 */
	if (w->coalesce)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (cfg->local.ss_family != AF_UNSPEC || cfg->local_port != 0) {
		struct sockaddr_storage local;
		socklen_t llen;
		if (cfg->local.ss_family != AF_UNSPEC) {
			local = cfg->local;
			llen = cfg->local_len;
		} else {
			memset(&local, 0, sizeof(local));
			local.ss_family = cfg->server.ss_family;
			llen = cfg->server.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
			                                         : sizeof(struct sockaddr_in);
		}
		if (cfg->local_port != 0) {
			uint16_t port = (uint16_t)(cfg->local_port + global_index);
			if (local.ss_family == AF_INET6)
				((struct sockaddr_in6 *)&local)->sin6_port = htons(port);
			else
				((struct sockaddr_in *)&local)->sin_port = htons(port);
		}
		if (bind(fd, (struct sockaddr *)&local, llen) != 0) {
			rc = -errno;
			close(fd);
			return dv_err_set(
			    err, rc, "cannot bind socket %u to the local address%s: %s",
			    global_index + 1, cfg->local_port ? " and port" : "", strerror(-rc));
		}
	}
	if (connect(fd, (const struct sockaddr *)&cfg->server, cfg->server_len) != 0) {
		rc = -errno;
		close(fd);
		return dv_err_set(err, rc, "cannot connect socket %u to the server: %s",
		                  global_index + 1, strerror(-rc));
	}
	*out_fd = fd;
	return 0;
}

static void on_timer(uv_timer_t *t);

static void publish(dv_worker_t *w);
static void coalesced_recv(dv_worker_t *w);

/* Main asked for a snapshot or a stop: publish now; the timer callback reads stop_level. */
static void on_wake(uv_async_t *a)
{
	dv_worker_t *w = a->data;

	if (uv_is_closing((uv_handle_t *)&w->timer))
		return;
	if (atomic_load(&w->publish_req) > w->snap_epoch_seen) {
		if (w->coalesce)
			coalesced_recv(w); /* count what has arrived by now */
		publish(w);
	}
	if (atomic_load(&w->stop_level) > 0)
		uv_timer_start(&w->timer, on_timer, 0, 0);
}

int dv_worker_open(dv_worker_t *w, dv_err_t *err)
{
	uint32_t i;
	int rc;

	pthread_mutex_init(&w->snap_lock, NULL);
	/*
	 * Paced runs collect answers on the pacer's 1 ms ticks when the window holds
	 * at least four ticks' worth of queries (so ticks never starve it); otherwise,
	 * and always while draining, each answer wakes the loop.
	 */
	w->coalesce =
	    w->share.rate_qps >= 1000 && (double)w->share.capacity >= 4 * w->share.rate_qps / 1000;
	/*
	 * One socket and no pacing: wait for answers in recvmmsg itself, like a
	 * blocking client. The socket is then on no epoll wait queue, so the kernel
	 * makes no wake-up call for each datagram sent or received, and a turn costs
	 * two system calls (sendmmsg, recvmmsg) instead of three.
	 */
	w->direct = w->share.rate_qps <= 0 && w->share.nsocks == 1;
	rc = uv_loop_init(&w->loop);
	if (rc != 0)
		return dv_err_set(err, -ENOMEM, "cannot create an event loop: %s", uv_strerror(rc));
	w->loop_ok = true;
	dv_stats_init(&w->snap);
	w->socks = calloc(w->share.nsocks, sizeof(*w->socks));
	if (w->socks == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < w->share.nsocks; i++)
		w->socks[i].fd = -1;
	for (i = 0; i < w->share.nsocks; i++) {
		rc = open_socket(w, w->share.first_sock + i, &w->socks[i].fd, err);
		if (rc != 0)
			return rc;
		w->socks[i].w = w;
		w->socks[i].index = (uint16_t)i;
	}
	rc = dv_engine_init(&w->eng, w->ql, w->share.capacity, w->cfg->timeout_ns,
	                    w->share.first_seq, w->share.step, w->share.end_seq);
	if (rc != 0)
		return dv_err_set(err, rc, "cannot set up the outstanding-query window: %s",
		                  strerror(-rc));
	if (w->cfg->verbose)
		w->eng.verbose = w->cfg->out != NULL ? w->cfg->out : stdout;
	return 0;
}

static void publish(dv_worker_t *w)
{
	uint64_t req = atomic_load(&w->publish_req);

	w->snap_epoch_seen = req;
	pthread_mutex_lock(&w->snap_lock);
	if (req > w->snap_epoch)
		w->snap_epoch = req;
	w->eng.stats.c.inflight_peak = w->eng.win.peak;
	w->snap = w->eng.stats;
	w->snap_inflight = w->eng.win.inflight;
	w->snap_sending = w->sending;
	pthread_mutex_unlock(&w->snap_lock);
}

void dv_worker_snapshot(dv_worker_t *w, dv_stats_t *out, uint64_t *inflight, bool *sending)
{
	pthread_mutex_lock(&w->snap_lock);
	*out = w->snap;
	*inflight = w->snap_inflight;
	*sending = w->snap_sending;
	pthread_mutex_unlock(&w->snap_lock);
}

void dv_worker_request_snapshot(dv_worker_t *w, uint64_t epoch)
{
	atomic_store(&w->publish_req, epoch);
	uv_async_send(&w->wake);
}

uint64_t dv_worker_epoch(dv_worker_t *w)
{
	uint64_t e;

	pthread_mutex_lock(&w->snap_lock);
	e = w->snap_epoch;
	pthread_mutex_unlock(&w->snap_lock);
	return e;
}

void dv_worker_request_stop(dv_worker_t *w, int level)
{
	int cur = atomic_load(&w->stop_level);

	while (cur < level && !atomic_compare_exchange_weak(&w->stop_level, &cur, level))
		;
	uv_async_send(&w->wake);
}

static void set_events(dv_sock_t *s, int events);
static void on_poll(uv_poll_t *h, int status, int events);

static void set_events(dv_sock_t *s, int events)
{
	if (s->events == events)
		return;
	s->events = events;
	if (events == 0)
		uv_poll_stop(&s->poll);
	else
		uv_poll_start(&s->poll, events, on_poll);
}

/* The events a socket is watched for: readable unless answers are coalesced. */
static int sock_events(const dv_worker_t *w, const dv_sock_t *s)
{
	return (w->coalesce ? 0 : UV_READABLE) | (s->want_write ? UV_WRITABLE : 0);
}

static dv_sock_t *pick_socket(dv_worker_t *w)
{
	uint32_t i;

	for (i = 0; i < w->share.nsocks; i++) {
		dv_sock_t *s = &w->socks[w->next_sock];
		w->next_sock = (w->next_sock + 1) % w->share.nsocks;
		if (!s->want_write)
			return s;
	}
	return NULL;
}

static void end_sending(dv_worker_t *w, uint64_t now, uint64_t drain_ns)
{
	uint32_t i;

	if (!w->sending)
		return;
	w->sending = false;
	w->drain_end_ns = now + drain_ns;
	if (w->coalesce) {
		/* Draining: take each answer as it comes, so the pass ends as soon as it can. */
		w->coalesce = false;
		for (i = 0; i < w->share.nsocks; i++)
			set_events(&w->socks[i], sock_events(w, &w->socks[i]));
	}
}

/* Send as much as the window, the pacer and the list allow, in batches. */
static void pump(dv_worker_t *w, uint64_t now)
{
	dv_batch_t *b = tl_batch;
	unsigned round;
	uint64_t pace_now;

	if (!w->sending)
		return;
	/* At the time limit, still send what the schedule had due before it. */
	pace_now = now < w->send_end_ns ? now : w->send_end_ns - 1;
	if (now >= w->send_end_ns && w->share.rate_qps <= 0) {
		end_sending(w, now, w->cfg->timeout_ns);
		return;
	}
	for (round = 0; round < DV_SEND_ROUNDS; round++) {
		uint64_t n = dv_engine_sendable(&w->eng), before;
		unsigned k, i;
		int r, err = 0;
		dv_sock_t *s;
		bool wait;

		if (n == 0)
			break;
		if (w->share.rate_qps > 0) {
			uint64_t a = dv_pacer_allowance(&w->pacer, pace_now);
			if (a == 0)
				break;
			n = DV_MIN(n, a);
		}
		n = DV_MIN(n, DV_BATCH);
		s = pick_socket(w);
		if (s == NULL)
			break;
		k = dv_engine_prepare(&w->eng, s->index, now, (unsigned)n, b->sbuf, b->slen);
		for (i = 0; i < k; i++)
			b->siov[i].iov_len = b->slen[i];
		if (w->share.rate_qps > 0) /* the schedule's time of each: query issued + i */
			for (i = 0; i < k; i++)
				w->eng.win.slot[dv_wire_get16(b->sbuf[i])].intended_ns =
				    dv_pacer_due_ns(&w->pacer, w->pacer.issued + i);
		r = sendmmsg(s->fd, b->smsg, k, MSG_DONTWAIT);
		w->eng.stats.c.send_calls++;
		if (r < 0) {
			err = errno;
			r = 0;
		} else if ((unsigned)r < k) {
			err = EINTR; /* the kernel stopped early without an error code: retry */
		}
		before = w->eng.stats.c.sent + w->eng.stats.c.not_sent;
		wait = dv_engine_sent(&w->eng, b->sbuf, k, (unsigned)r, err, now);
		if (w->share.rate_qps > 0)
			dv_pacer_take(&w->pacer,
			              w->eng.stats.c.sent + w->eng.stats.c.not_sent - before);
		if (wait && !w->direct) { /* direct mode simply tries again next turn */
			s->want_write = true;
			set_events(s, sock_events(w, s));
		}
		/* A hard error skipped one query; the next round goes on with the rest. */
	}
	if (dv_engine_list_done(&w->eng) || now >= w->send_end_ns)
		end_sending(w, now, w->cfg->timeout_ns);
}

/* Monotonic arrival time of a received datagram from its SCM_TIMESTAMPNS, else now. */
static uint64_t arrival_ns(struct msghdr *h, int64_t wall_minus_mono, uint64_t now)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			int64_t mono;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			mono = (int64_t)ts.tv_sec * (int64_t)DV_NS_PER_S + ts.tv_nsec -
			       wall_minus_mono;
			/* A stepped wall clock must not produce times from the future. */
			return mono > 0 && (uint64_t)mono <= now ? (uint64_t)mono : now;
		}
	}
	return now;
}

/*
 * Read up to DV_RECV_ROUNDS batches from s. With wait (direct mode), the first
 * call blocks until an answer comes or SO_RCVTIMEO passes.
 */
static void do_recv_wait(dv_worker_t *w, dv_sock_t *s, bool wait)
{
	dv_batch_t *b = tl_batch;
	unsigned round;

	/*
	 * The sockets are connected: the kernel hands them only datagrams from the
	 * server's address and port (others go to no socket and count as NoPorts),
	 * so the source is not fetched per datagram.
	 */
	for (round = 0; round < DV_RECV_ROUNDS; round++) {
		int r, i;
		uint64_t now;
		int64_t offset;

		for (i = 0; i < DV_BATCH; i++)
			b->rmsg[i].msg_hdr.msg_controllen = sizeof(b->rctl[i].buf);
		r = recvmmsg(s->fd, b->rmsg, DV_BATCH,
		             wait && round == 0 ? MSG_WAITFORONE : MSG_DONTWAIT, NULL);
		w->eng.stats.c.recv_calls++;
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			/* A pending ICMP error (port unreachable...) is reported once, here. */
			w->eng.stats.c.icmp_errors++;
			continue;
		}
		now = dv_now_ns();
		offset = (int64_t)dv_wall_ns() - (int64_t)now;
		for (i = 0; i < r; i++) {
			if (b->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC) {
				w->eng.stats.c.malformed++; /* larger than any UDP datagram */
				continue;
			}
			dv_engine_receive(&w->eng, s->index, b->rbuf + (size_t)i * DV_RECV_BUF,
			                  b->rmsg[i].msg_len, true,
			                  arrival_ns(&b->rmsg[i].msg_hdr, offset, now));
		}
		if (r < DV_BATCH)
			break;
	}
}

static void do_recv(dv_worker_t *w, dv_sock_t *s)
{
	do_recv_wait(w, s, false);
}

/*
 * Coalesced receiving (paced runs): the sockets sit in a private epoll set and
 * are read on the pacer's ticks instead of waking the loop for every answer;
 * the kernel's receive timestamps keep the latencies exact.
 */
static void coalesced_recv(dv_worker_t *w)
{
	struct epoll_event ev[64];
	int n, i;

	if (w->epfd < 0)
		return;
	n = epoll_wait(w->epfd, ev, (int)DV_ARRAY_SIZE(ev), 0);
	w->eng.stats.c.wait_calls++;
	for (i = 0; i < n; i++)
		do_recv(w, &w->socks[ev[i].data.u32]);
}

static void close_all(dv_worker_t *w);
static void reschedule(dv_worker_t *w, uint64_t now);

/* True (and everything closed) when the pass is over for this worker. */
static bool maybe_finish(dv_worker_t *w, uint64_t now)
{
	if (w->sending)
		return false;
	if (w->eng.win.inflight > 0 && now < w->drain_end_ns)
		return false;
	close_all(w);
	return true;
}

static void check_stop(dv_worker_t *w, uint64_t now);

/*
 * One turn of the timer and direct-mode callbacks: expire overdue queries,
 * send what may be sent, publish the counters when due, and finish the pass
 * if it is over. Returns true when the worker finished (its handles closing).
 */
static inline bool turn(dv_worker_t *w, uint64_t now)
{
	dv_engine_expire(&w->eng, now);
	pump(w, now);
	if (now >= w->next_publish_ns) {
		publish(w);
		w->next_publish_ns = now + DV_PUBLISH_NS;
	}
	return maybe_finish(w, now);
}

/*
 * Direct mode: turns of expire, send, wait-and-receive in recvmmsg, for up to
 * DV_DIRECT_TURN_NS, then back to the loop so its timer and wake-ups run.
 */
static void on_direct(uv_idle_t *h)
{
	dv_worker_t *w = h->data;
	uint64_t start = dv_now_ns(), now = start;

	do {
		check_stop(w, now);
		if (turn(w, now))
			return;
		do_recv_wait(w, &w->socks[0], true);
		now = dv_now_ns();
	} while (now - start < DV_DIRECT_TURN_NS);
}

static void check_stop(dv_worker_t *w, uint64_t now)
{
	int level = atomic_load(&w->stop_level);

	if (level == 0)
		return;
	if (!w->interrupted) {
		w->interrupted = true;
		if (w->sending) {
			end_sending(w, now, DV_MIN(w->cfg->interrupt_drain_ns, w->cfg->timeout_ns));
		} else {
			uint64_t end = now + DV_MIN(w->cfg->interrupt_drain_ns, w->cfg->timeout_ns);
			if (end < w->drain_end_ns)
				w->drain_end_ns = end;
		}
	}
	if (level >= 2) {
		w->sending = false;
		w->drain_end_ns = now;
	}
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	dv_sock_t *s = (dv_sock_t *)h;
	dv_worker_t *w = s->w;
	uint64_t now;

	if (status < 0) {
		/*
		 * libuv reports EPOLLERR (a pending ICMP error on a connected UDP
		 * socket) as UV_EBADF and stops the handle. Reading consumes the
		 * error (counted in do_recv); then watch the socket again.
		 */
		s->events = 0;
		do_recv(w, s);
		set_events(s, sock_events(w, s));
	} else {
		if (events & UV_WRITABLE) {
			s->want_write = false;
			set_events(s, sock_events(w, s));
		}
		if (events & UV_READABLE)
			do_recv(w, s);
	}
	now = dv_now_ns();
	check_stop(w, now);
	pump(w, now);
	if (maybe_finish(w, now))
		return;
	reschedule(w, now);
}

static void on_timer(uv_timer_t *t)
{
	dv_worker_t *w = t->data;
	uint64_t now = dv_now_ns();

	check_stop(w, now);
	if (w->coalesce) {
		coalesced_recv(w);
		now = dv_now_ns();
	}
	if (turn(w, now))
		return;
	reschedule(w, now);
}

static uint64_t armed_due_ns(const dv_worker_t *w)
{
	return uv_is_active((const uv_handle_t *)&w->timer) ? uv_timer_get_due_in(&w->timer)
	                                                    : UINT64_MAX;
}

static void reschedule(dv_worker_t *w, uint64_t now)
{
	uint64_t next = w->next_publish_ns, delay_ms, due_ms;

	if (w->sending) {
		next = DV_MIN(next, w->send_end_ns);
		if (w->share.rate_qps > 0 && dv_engine_sendable(&w->eng) > 0)
			next = DV_MIN(next, dv_pacer_next_due_ns(&w->pacer));
	} else {
		next = DV_MIN(next, w->drain_end_ns);
	}
	next = DV_MIN(next, dv_engine_next_deadline(&w->eng));
	if (w->coalesce && w->eng.win.inflight > 0)
		next = DV_MIN(next, now + DV_NS_PER_MS); /* collect answers every tick */
	/* Millisecond timers: never less than 1 ms, so a due-now item cannot spin. */
	delay_ms = next > now ? (next - now + DV_NS_PER_MS - 1) / DV_NS_PER_MS : 0;
	if (delay_ms == 0)
		delay_ms = 1;
	uv_update_time(&w->loop);
	due_ms = armed_due_ns(w);
	if (due_ms != UINT64_MAX && due_ms <= delay_ms)
		return; /* already armed to fire no later */
	uv_timer_start(&w->timer, on_timer, delay_ms, 0);
}

static void on_prepare(uv_prepare_t *p)
{
	dv_worker_t *w = p->data;
	w->eng.stats.c.wait_calls++;
}

static void close_all(dv_worker_t *w)
{
	uint32_t i;

	if (uv_is_closing((uv_handle_t *)&w->timer))
		return;
	uv_close((uv_handle_t *)&w->timer, NULL);
	uv_close((uv_handle_t *)&w->prepare, NULL);
	/* w->wake stays open (unreferenced) until dv_worker_cleanup: main may still send to it. */
	if (w->direct) {
		uv_close((uv_handle_t *)&w->idle, NULL);
		return;
	}
	for (i = 0; i < w->share.nsocks; i++)
		uv_close((uv_handle_t *)&w->socks[i].poll, NULL);
}

static int gate_wait(dv_start_barrier_t *g)
{
	int state;

	pthread_mutex_lock(&g->lock);
	while (g->state == 0)
		pthread_cond_wait(&g->cond, &g->lock);
	state = g->state;
	pthread_mutex_unlock(&g->lock);
	return state;
}

static void *worker_main(void *arg)
{
	dv_worker_t *w = arg;
	dv_batch_t *b;
	uint32_t i;
	uint64_t now;

	b = calloc(1, sizeof(*b));
	if (b != NULL)
		b->rbuf = malloc((size_t)DV_BATCH * DV_RECV_BUF);
	if (b == NULL || b->rbuf == NULL) {
		w->rc = -ENOMEM;
		snprintf(w->err, sizeof(w->err), "out of memory");
		if (b != NULL)
			free(b);
		gate_wait(w->gate);
		atomic_store(&w->finished, 1);
		uv_async_send(w->done_async);
		return NULL;
	}
	for (i = 0; i < DV_BATCH; i++) {
		b->siov[i].iov_base = b->sbuf[i];
		b->smsg[i].msg_hdr.msg_iov = &b->siov[i];
		b->smsg[i].msg_hdr.msg_iovlen = 1;
		b->riov[i].iov_base = b->rbuf + (size_t)i * DV_RECV_BUF;
		b->riov[i].iov_len = DV_RECV_BUF;
		b->rmsg[i].msg_hdr.msg_iov = &b->riov[i];
		b->rmsg[i].msg_hdr.msg_iovlen = 1;
		b->rmsg[i].msg_hdr.msg_control = b->rctl[i].buf;
	}
	tl_batch = b;

	uv_timer_init(&w->loop, &w->timer);
	w->timer.data = w;
	uv_prepare_init(&w->loop, &w->prepare);
	w->prepare.data = w;
	uv_prepare_start(&w->prepare, on_prepare);
	w->epfd = -1;
	if (w->coalesce) {
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		for (i = 0; w->epfd >= 0 && i < w->share.nsocks; i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
			if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->socks[i].fd, &ev) != 0) {
				close(w->epfd);
				w->epfd = -1;
			}
		}
		w->coalesce = w->epfd >= 0;
	}
	if (w->direct) {
		uv_idle_init(&w->loop, &w->idle);
		w->idle.data = w;
		uv_idle_start(&w->idle, on_direct);
	}
	for (i = 0; !w->direct && i < w->share.nsocks; i++) {
		uv_poll_init(&w->loop, &w->socks[i].poll, w->socks[i].fd);
		w->socks[i].events = 0;
		set_events(&w->socks[i], sock_events(w, &w->socks[i]));
	}

	if (gate_wait(w->gate) < 0) {
		close_all(w);
		uv_run(&w->loop, UV_RUN_DEFAULT);
		goto out;
	}
	now = dv_now_ns();
	w->t0_ns = now;
	w->send_end_ns = w->cfg->time_limit_ns ? now + w->cfg->time_limit_ns : UINT64_MAX;
	w->next_publish_ns = now + DV_PUBLISH_NS;
	w->sending = true;
	w->drain_end_ns = UINT64_MAX;
	if (w->share.rate_qps > 0) {
		/*
		 * Catch up at most 1 s of schedule after a stall (a busy machine can
		 * deschedule us for tens of ms); the window still bounds any burst.
		 */
		uint64_t backlog = (uint64_t)(w->share.rate_qps * 1.0);
		dv_pacer_init(&w->pacer, w->share.rate_qps, now, DV_MAX(backlog, DV_BATCH));
		dv_pacer_set_ramp(&w->pacer, w->cfg->ramp_ns);
		w->eng.paced = true;
	}
	check_stop(w, now);
	pump(w, now);
	if (!maybe_finish(w, now))
		reschedule(w, now);
	uv_run(&w->loop, UV_RUN_DEFAULT);

	dv_engine_finish(&w->eng, w->interrupted);
	w->eng.stats.c.forfeited = w->pacer.forfeited;
out:
	if (w->epfd >= 0)
		close(w->epfd);
	publish(w);
	tl_batch = NULL;
	free(b->rbuf);
	free(b);
	atomic_store(&w->finished, 1);
	uv_async_send(w->done_async);
	return NULL;
}

int dv_worker_start(dv_worker_t *w)
{
	int rc;

	rc = uv_async_init(&w->loop, &w->wake, on_wake);
	if (rc != 0)
		return -ENOMEM;
	w->wake.data = w;
	uv_unref((uv_handle_t *)&w->wake);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	return rc == 0 ? 0 : -rc;
}

void dv_worker_cleanup(dv_worker_t *w)
{
	uint32_t i;

	if (w->socks != NULL) {
		for (i = 0; i < w->share.nsocks; i++)
			if (w->socks[i].fd >= 0)
				close(w->socks[i].fd);
		free(w->socks);
		w->socks = NULL;
	}
	dv_engine_free(&w->eng);
	if (w->loop_ok) {
		if (w->wake.loop != NULL)
			uv_close((uv_handle_t *)&w->wake, NULL);
		uv_run(&w->loop, UV_RUN_DEFAULT);
		uv_loop_close(&w->loop);
		w->loop_ok = false;
	}
	pthread_mutex_destroy(&w->snap_lock);
}
