/* stream: a worker's TCP, DoT and DoH connections (any kind of transport/'s table): sockets on
 * its loop, transport machines and their timers, per-connection bounds, losses by connection
 * and reopening. */
#include "config.h"

#include "engine/stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "base/sockaddr.h"
#include "base/wire.h"
#include "transport/transport.h"

#define DV_SW_READ_BUF    65536
#define DV_SW_READ_ROUNDS 8 /* reads per readable event */
/*
 * A connection that ends (or an attempt that fails) without one answer is reopened after a
 * backoff: DV_SW_BACKOFF_NS doubled for each such end in a row, at most DV_SW_BACKOFF_MAX_NS,
 * drawn from [d/2, d] (jitter, so that connections dropped together do not come back
 * together). An answer resets it. Against a server that accepts and closes at once, one
 * connection opens at most 7 times in 3 s instead of thousands (doc/numbers.md conn_backoffs).
 */
#define DV_SW_BACKOFF_NS     (100 * DV_NS_PER_MS)
#define DV_SW_BACKOFF_MAX_NS (2 * DV_NS_PER_S)
#define DV_SW_IOV            16
#define DV_SW_DGRAMS         ((int)(DV_SW_READ_BUF / DV_TP_DGRAM_MAX)) /* per recvmmsg, in rbuf */
#define DV_SW_BATCH          64     /* queries prepared per connection at a time */
#define DV_SW_RQ             65536u /* --tc-tcp: list indexes waiting to be asked over TCP */
#define DV_SW_EVENTS         256    /* connection events per epoll_wait */
/*
 * Connections opened in waves: at most this many per worker in connect() or the TLS
 * handshake at once; the others wait their turn (opened as slots free). A DoT
 * handshake holds ~30 KB of OpenSSL buffers until it ends, so 10,000 at once peaked at
 * 41.6 KB per connection and some missed -t; in waves the peak is what an open
 * connection holds (doc/performance.md).
 */
#define DV_SW_MAX_PENDING 256u
/* Plain TCP: a connect in progress holds no buffers (only the server's backlog bounds it);
 * 256 at a time opened 6,656 of 10,000 in 2 s at full load, the loop busy with answers. */
#define DV_SW_MAX_PENDING_TCP 2048u
/*
 * A plain TCP connection is up when the server's kernel answers the SYN, before the server
 * has accepted it. Up to DV_SW_MAX_UNCONFIRMED per worker may be up with no byte from the
 * server yet (at most DV_SW_CONFIRM_NS each: a silent server confirms none); while that
 * many are, no more open. So the connections waiting in the server's accept queue (where
 * a full queue drops our SYNs, each retried after 1 s) stay within 2 x 2,048 per worker
 * whatever the server's listen backlog (Linux: 4,096 at most by default). TLS kinds are
 * confirmed by their handshake.
 */
#define DV_SW_MAX_UNCONFIRMED 2048u
#define DV_SW_CONFIRM_NS      (100 * DV_NS_PER_MS)

typedef enum dv_cstate {
	C_IDLE = 0,   /* no socket; reopened at t_ns when that is set */
	C_CONNECTING, /* connect() in progress */
	C_HANDSHAKE,  /* established, TLS handshake (DoH: and the server's SETTINGS) to come */
	C_READY,      /* takes queries */
	C_DRAINING,   /* takes no more (--queries-per-conn reached, GOAWAY): ends when empty */
} dv_cstate_t;

typedef enum dv_end {
	END_RESET,   /* reset by the peer, or a write failed */
	END_CLOSED,  /* the peer closed it (EOF, close_notify, GOAWAY) */
	END_PROTO,   /* protocol error on an established connection */
	END_RECYCLE, /* --queries-per-conn: closed by us */
} dv_end_t;

typedef struct dv_sconn {
	struct dv_sw *sw;
	uint32_t gen;      /* opens so far: tells an event of its last socket from a stale one */
	uv_timer_t *timer; /* a kind with timers: at the machine's next deadline; freed by its
	                    * close callback */
	uint64_t deadline; /* what timer is armed at (UINT64_MAX: not armed) */
	dv_tp_conn_t *tp;
	int fd;
	uint16_t index;  /* the engine's socket index of its queries */
	uint8_t state;   /* dv_cstate_t */
	uint32_t events; /* what the worker's epoll set watches on fd (0: not in it) */
	bool want_write;
	bool ev_closed, ev_goaway, ev_proto; /* events seen during dv_tp_input */
	bool closed_busy;                    /* the peer closed it with queries in flight */
	bool ever_open;
	bool answered;      /* an answer came back on it since it opened */
	bool backed_off;    /* C_IDLE: its reopen waits for a backoff (counted when it opens) */
	bool queued;        /* in the wave queue, waiting for a connect slot */
	bool in_ready;      /* in the ring of connections that may have room */
	bool unconfirmed;   /* up, holding its connect slot: no byte from the server yet */
	uint8_t fails;      /* ends and failed attempts in a row without an answer */
	uint32_t inflight;  /* engine slots in flight on it */
	uint64_t submitted; /* queries handed to it since it opened */
	uint64_t open_ns;   /* connect() called */
	uint64_t up_ns;     /* established */
	uint64_t retry_ns;  /* C_IDLE: reopen at this time, UINT64_MAX = not */
} dv_sconn_t;

struct dv_sw {
	dv_sw_host_t h; /* the worker's loop, engine, settings and flags */
	dv_engine_t *e; /* h.eng, or retry mode's own */
	dv_tp_shared_t *sh;
	const dv_tp_desc_t *desc; /* the transport kind's row: socket type, names, facts */
	dv_sconn_t *c;
	uint32_t n;
	uint32_t per_conn; /* queries in flight per connection at most */
	uint32_t nup;      /* READY or DRAINING */
	uint32_t npending; /* CONNECTING or HANDSHAKE */
	uint32_t nunconf;  /* up and unconfirmed (DV_SW_CONFIRM_NS): in the window too */
	uint32_t nretry;   /* IDLE with a reopen time */
	/*
	 * Nothing here is scanned per event: with 10,000 connections a scan of all of them
	 * on every answer cost more than the query (doc/performance.md "Many connections").
	 * timer_lb is a lower bound on the earliest connect or handshake deadline and reopen
	 * time (UINT64_MAX: none): only a turn at or past it scans the connections, and sets
	 * it exact again. wq is the FIFO of connections waiting for a connect slot (each at
	 * most once), opened as slots free. ready is the ring of connections that may take
	 * queries (each at most once), filled after their I/O and read by dv_sw_send.
	 */
	uint64_t timer_lb;
	/*
	 * The connections' sockets are in an epoll set of the worker's own, itself watched by
	 * one uv_poll_t on the loop: a socket costs one epoll_ctl to add and one per change of
	 * what it waits for, and close() takes it out. A uv_poll_t per socket cost 8 epoll_ctl
	 * (uv_poll_init's check, a DEL and an ADD for every uv_poll_start, a DEL or two at
	 * uv_close), an ioctl and a handle to allocate and close (doc/performance.md).
	 */
	int epfd;        /* -1 until the first connection opens */
	uv_poll_t ep;    /* on epfd; closed by dv_sw_close */
	bool ep_started; /* ep initialised (and so to be closed) */
	struct epoll_event *evs;
	uint32_t *wq, wq_head, wq_len;
	uint32_t *ready, ready_head, ready_len;
	bool ever_up;
	bool closing;
	uint64_t down_since_ns; /* when nup last became 0 */
	/* A dv_sw_send that had queries due, none in flight, and handed none on, with none
	 * handed on since (UINT64_MAX: not stalled); -t of it ends the pass
	 * (DV_RUN_NOTHING_SENT). */
	uint64_t stall_ns;
	uint64_t stall_opened;  /* conn_opened when the stall began */
	const char *stall_note; /* a connection ended before it took a query: how */
	uint64_t now;           /* arrival time of the bytes being fed to a machine */
	uint8_t *rbuf;
	uint8_t (*qbuf)[DV_MAX_QUERY_LEN];
	unsigned *qlen;
	char why[200]; /* the last connection failure, a sentence */
	/* --tc-tcp (retry mode): sends only the queries queued by the UDP engine's TC hook,
	 * counted in an engine of its own and folded into the worker's tc_* at the end */
	bool retry;
	dv_engine_t own;
	uint32_t *rq; /* ring of DV_SW_RQ list indexes */
	uint32_t rq_head, rq_len;
	uint64_t rng; /* xorshift state: the backoff's jitter */
};

static void on_epoll(uv_poll_t *h, int status, int events);
static void on_deadline(uv_timer_t *t);
static int on_event(void *ctx, const dv_tp_event_t *ev);
static unsigned conn_room(const struct dv_sw *sw, const struct dv_sconn *c);

static bool is_up(uint8_t s)
{
	return s == C_READY || s == C_DRAINING;
}

static bool is_pending(uint8_t s)
{
	return s == C_CONNECTING || s == C_HANDSHAKE;
}

/* Room in the connect window: fewer than DV_SW_MAX_PENDING in connect or handshake and
 * fewer than DV_SW_MAX_UNCONFIRMED up but unconfirmed. */
static bool window_room(const dv_sw_t *sw)
{
	return sw->npending <
	           (sw->desc->setup_what == NULL ? DV_SW_MAX_PENDING_TCP : DV_SW_MAX_PENDING) &&
	       sw->nunconf < DV_SW_MAX_UNCONFIRMED;
}

/* c's slot in the window is free: the server sent it a byte, DV_SW_CONFIRM_NS passed,
 * or it ended. */
static void confirm(dv_sw_t *sw, dv_sconn_t *c)
{
	if (c->unconfirmed) {
		c->unconfirmed = false;
		sw->nunconf--;
	}
}

static void set_state(dv_sw_t *sw, dv_sconn_t *c, dv_cstate_t st, uint64_t now)
{
	if (!is_up(st))
		confirm(sw, c);
	if (is_up(c->state))
		sw->nup--;
	else if (is_pending(c->state))
		sw->npending--;
	else if (c->retry_ns != UINT64_MAX)
		sw->nretry--;
	c->state = (uint8_t)st;
	c->retry_ns = UINT64_MAX;
	if (is_up(st)) {
		sw->nup++;
		sw->ever_up = true;
	} else if (is_pending(st)) {
		sw->npending++;
		if (sw->npending > sw->e->stats.c.conn_pending_peak)
			sw->e->stats.c.conn_pending_peak = sw->npending;
	}
	if (sw->nup == 0 && !is_up(st) && sw->down_since_ns == UINT64_MAX)
		sw->down_since_ns = now;
	if (sw->nup > 0)
		sw->down_since_ns = UINT64_MAX;
}

static void timer_at(dv_sw_t *sw, uint64_t at)
{
	if (at < sw->timer_lb)
		sw->timer_lb = at;
}

/* c may take queries (its own room, whatever the server's): into the ring, once. */
static void ready_note(dv_sw_t *sw, dv_sconn_t *c)
{
	if (c->in_ready || c->state != C_READY || c->inflight >= sw->per_conn ||
	    (sw->h.cfg->queries_per_conn > 0 && c->submitted >= sw->h.cfg->queries_per_conn))
		return;
	c->in_ready = true;
	sw->ready[(sw->ready_head + sw->ready_len) % sw->n] = c->index;
	sw->ready_len++;
}

/* --tc-tcp with no connection up: the queued retries cannot be made (tc_no_conn). */
static void tc_drop(dv_sw_t *sw)
{
	sw->h.eng->stats.c.tc_no_conn += sw->rq_len;
	sw->rq_len = 0;
}

/* The worker cannot go on: say why and stop the pass (its queries in flight count lost). */
static void fatal(dv_sw_t *sw, uint64_t now, const char *fmt, ...)
{
	va_list ap;

	if (*sw->h.rc == 0) {
		va_start(ap, fmt);
		vsnprintf(sw->h.err, sw->h.err_len, fmt, ap);
		va_end(ap);
		*sw->h.rc = -ECONNABORTED;
	}
	*sw->h.sending = false;
	*sw->h.drain_end_ns = now;
}

static const char *kind_text(const dv_sw_t *sw)
{
	return sw->desc->long_name;
}

/* Watch c's socket for events (never 0): added to the worker's epoll set the first time, then
 * changed. False when epoll_ctl failed (out of memory, the set's limit). */
static bool set_events(dv_sconn_t *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)c->gen << 32 | c->index};

	if (c->fd < 0 || c->events == events)
		return true;
	if (epoll_ctl(c->sw->epfd, c->events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c->fd, &ev) != 0)
		return false;
	c->events = events;
	return true;
}

static bool watch(dv_sconn_t *c)
{
	if (c->state == C_CONNECTING)
		return set_events(c, EPOLLOUT);
	return set_events(c, EPOLLIN | (c->want_write ? EPOLLOUT : 0));
}

static void free_handle(uv_handle_t *h)
{
	free(h);
}

/* Close the socket and free the machine; nothing counted. */
static void conn_shut(dv_sconn_t *c)
{
	if (c->timer != NULL) {
		uv_close((uv_handle_t *)c->timer, free_handle); /* stops it */
		c->timer = NULL;
	}
	if (c->fd >= 0)
		close(c->fd); /* out of the epoll set too: no other descriptor holds the socket */
	c->fd = -1;
	dv_tp_conn_free(c->tp);
	c->tp = NULL;
	c->events = 0;
	c->want_write = false;
}

/* Every query in flight on c is lost because c ended. */
static void lose_all(dv_sw_t *sw, dv_sconn_t *c)
{
	dv_engine_t *e = sw->e;
	uint32_t id = e->win.head;

	while (c->inflight > 0 && id != DV_WINDOW_NIL) {
		dv_slot_t *s = &e->win.slot[id];
		uint32_t next = s->next;
		if (s->sock == c->index) {
			dv_engine_lose(e, (uint16_t)id);
			e->stats.c.conn_lost++;
			c->inflight--;
		}
		id = next;
	}
	c->inflight = 0;
}

static void conn_open(dv_sw_t *sw, dv_sconn_t *c, uint64_t now);

/* Schedule a reopen (at once, or after a backoff) while sending. */
static void reopen(dv_sw_t *sw, dv_sconn_t *c, uint64_t at, uint64_t now)
{
	if (sw->closing || (sw->retry ? !*sw->h.sending && sw->rq_len == 0
	                              : !*sw->h.sending || dv_engine_list_done(sw->e)))
		return;
	if (at <= now) {
		conn_open(sw, c, now);
		return;
	}
	c->retry_ns = at;
	sw->nretry++;
	timer_at(sw, at);
}

/* Reopen c: at once after an answer came on it, else after the backoff (DV_SW_BACKOFF_NS). */
static void reopen_after(dv_sw_t *sw, dv_sconn_t *c, bool answered, uint64_t now)
{
	uint64_t d, cap = DV_MIN(DV_SW_BACKOFF_MAX_NS, sw->h.cfg->timeout_ns / 2);
	unsigned f = DV_MIN(c->fails, 8u);

	if (answered) {
		c->fails = 0;
		reopen(sw, c, now, now);
		return;
	}
	if (c->fails < UINT8_MAX)
		c->fails++;
	/* Capped at -t / 2: a reopen comes before "no connection for -t" could be said. */
	d = DV_MAX(DV_MIN(DV_SW_BACKOFF_NS << f, cap), 2u);
	sw->rng ^= sw->rng << 13;
	sw->rng ^= sw->rng >> 7;
	sw->rng ^= sw->rng << 17;
	d = d / 2 + sw->rng % (d / 2 + 1);
	reopen(sw, c, now + d, now);
	c->backed_off = c->retry_ns != UINT64_MAX;
}

dv_sw_fail_t dv_sw_fail_cause(int err, dv_sw_stage_t stage)
{
	if (err == ECONNREFUSED)
		return DV_SW_FAIL_REFUSED;
	if ((stage == DV_SW_AT_CONNECT && (err == EADDRNOTAVAIL || err == EAGAIN)) ||
	    (stage == DV_SW_AT_BIND_PORT0 && err == EADDRINUSE))
		return DV_SW_FAIL_NO_PORT;
	return DV_SW_FAIL_OTHER;
}

/* An attempt to open c failed before it was usable, with cause (dv_sw_fail_cause). */
static void conn_fail(dv_sw_t *sw, dv_sconn_t *c, dv_sw_fail_t cause, bool timeout, uint64_t now,
                      const char *what)
{
	dv_counters_t *k = &sw->e->stats.c;

	k->conn_failed++;
	if (cause == DV_SW_FAIL_REFUSED)
		k->conn_refused++;
	if (cause == DV_SW_FAIL_NO_PORT)
		k->conn_no_port++;
	if (timeout)
		k->conn_timeouts++;
	if (what != sw->why)
		snprintf(sw->why, sizeof(sw->why), "%s", what);
	lose_all(sw, c);
	conn_shut(c);
	set_state(sw, c, C_IDLE, now);
	if (sw->retry) { /* --tc-tcp: the UDP pass goes on; the retries it cannot make count */
		if (sw->nup == 0)
			tc_drop(sw);
	} else if (!sw->ever_up) {
		fatal(sw, now, "%s connection to the server failed: %s", kind_text(sw), sw->why);
		return;
	}
	reopen_after(sw, c, false, now);
}

/*
 * Send the m iovecs dv_tp_output gave and tell the machine what went: over a stream one
 * sendmsg of them all (a partial write is fine); over a datagram socket one datagram each,
 * in one sendmmsg. 0, or a negative errno (-EAGAIN: the socket is full).
 */
static int send_iov(const dv_sw_t *sw, dv_sconn_t *c, struct iovec *iov, int m)
{
	struct mmsghdr mh[DV_SW_IOV];
	ssize_t r;
	int i;

	if (sw->desc->sock_type == SOCK_STREAM) {
		struct msghdr h = {.msg_iov = iov, .msg_iovlen = (size_t)m};
		r = sendmsg(c->fd, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0)
			return -errno;
		dv_tp_consume(c->tp, (size_t)r);
		return 0;
	}
	memset(mh, 0, sizeof(mh[0]) * (size_t)m);
	for (i = 0; i < m; i++) {
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
	}
	r = sendmmsg(c->fd, mh, (unsigned)m, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (r < 0)
		return -errno;
	dv_tp_consume_dgrams(c->tp, (size_t)r);
	return 0;
}

/* An established connection ended: count why, lose its queries, reopen it. */
/* A clean end: close_notify / GOAWAY / CONNECTION_CLOSE, best effort. */
static void say_goodbye(dv_sw_t *sw, dv_sconn_t *c)
{
	struct iovec iov[DV_SW_IOV];
	int m;

	if (c->tp == NULL)
		return;
	dv_tp_close(c->tp);
	m = dv_tp_output(c->tp, iov, DV_SW_IOV);
	if (m > 0)
		(void)send_iov(sw, c, iov, m);
}

static void conn_end(dv_sw_t *sw, dv_sconn_t *c, dv_end_t why, uint64_t now)
{
	dv_counters_t *k = &sw->e->stats.c;

	switch (why) {
	case END_RESET:
		k->conn_reset++;
		break;
	case END_CLOSED:
		if (c->closed_busy)
			k->conn_closed++;
		else
			k->conn_idle_closed++;
		/* A datagram kind that ends itself (DoQ at the server's stream limit) says so
		 * to the server: there is no socket close the server would see. */
		if (sw->desc->sock_type == SOCK_DGRAM)
			say_goodbye(sw, c);
		break;
	case END_PROTO:
		k->conn_proto_errors++;
		break;
	case END_RECYCLE:
		k->conn_recycled++;
		say_goodbye(sw, c);
		break;
	}
	lose_all(sw, c);
	conn_shut(c);
	set_state(sw, c, C_IDLE, now);
	reopen_after(sw, c, why == END_RECYCLE || c->answered, now);
}

/* End c with why if it is established, else count a failed attempt. */
static void conn_down(dv_sw_t *sw, dv_sconn_t *c, dv_end_t why, int err, uint64_t now,
                      const char *what)
{
	if (is_up(c->state)) {
		if (why == END_PROTO && what != sw->why)
			snprintf(sw->why, sizeof(sw->why), "%s", what);
		conn_end(sw, c, why, now);
	} else {
		conn_fail(sw, c, dv_sw_fail_cause(err, DV_SW_AT_LATER), false, now, what);
	}
}

/* -a, or --client-range: connection i (of its worker) binds to the range's i-th address
 * (mod its size), port 0 chosen at connect() so that 4-tuples, not ports, must differ.
 * 0, or -1 with errno set and what filled. */
static int bind_source(const dv_run_config_t *cfg, uint32_t i, int fd, char *what, size_t cap)
{
	struct sockaddr_storage a;
	char text[INET6_ADDRSTRLEN] = "?";
	int one = 1, e;

	if (cfg->client_base.ss_family == AF_UNSPEC) {
		if (cfg->local.ss_family == AF_UNSPEC ||
		    bind(fd, (const struct sockaddr *)&cfg->local, cfg->local_len) == 0)
			return 0;
		e = errno;
		snprintf(what, cap, "cannot bind to the local address: %s", strerror(e));
		errno = e;
		return -1;
	}
	dv_run_client_addr(cfg, i, &a);
	setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a, cfg->client_base_len) == 0)
		return 0;
	e = errno;
	inet_ntop(a.ss_family,
	          a.ss_family == AF_INET6 ? (void *)&((struct sockaddr_in6 *)&a)->sin6_addr
	                                  : (void *)&((struct sockaddr_in *)&a)->sin_addr,
	          text, sizeof(text));
	snprintf(what, cap, "cannot bind to %s (--client-range): %s", text, strerror(e));
	errno = e;
	return -1;
}

/* The worker's epoll set and its uv_poll_t on the loop, at the first connection. 0, or a
 * negative errno. */
static int ep_start(dv_sw_t *sw)
{
	if (sw->ep_started)
		return 0;
	sw->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sw->epfd < 0)
		return -errno;
	if (uv_poll_init(sw->h.loop, &sw->ep, sw->epfd) != 0)
		return -EIO;
	sw->ep_started = true;
	sw->ep.data = sw;
	return uv_poll_start(&sw->ep, UV_READABLE, on_epoll) == 0 ? 0 : -EIO;
}

/* c's machine and, for a kind with timers, its deadline timer. 0, or a negative errno
 * (nothing left to free but what conn_shut frees). */
static int conn_handles(dv_sw_t *sw, dv_sconn_t *c)
{
	int rc = ep_start(sw);

	if (rc == 0)
		rc = dv_tp_conn_new(&c->tp, sw->sh, on_event, c);
	if (rc != 0)
		return rc;
	c->deadline = UINT64_MAX;
	if (!sw->desc->timers)
		return 0;
	c->timer = malloc(sizeof(*c->timer));
	if (c->timer == NULL)
		return -ENOMEM;
	uv_timer_init(sw->h.loop, c->timer);
	c->timer->data = c;
	return 0;
}

/* Where bind_source's failure came: a bind to port 0 (-a: the kernel picks the port, so
 * EADDRINUSE is a range used up; --client-range's port is picked at connect) or not. */
static dv_sw_stage_t bind_stage(const dv_run_config_t *cfg)
{
	if (cfg->client_base.ss_family == AF_UNSPEC &&
	    dv_sockaddr_port((const struct sockaddr *)&cfg->local) == 0)
		return DV_SW_AT_BIND_PORT0;
	return DV_SW_AT_SOCKET;
}

/* "cannot connect: ..." for errno e into what; no local port named as such, with the way out
 * (the run's report says it again, with the count: report_text.c). */
static void connect_failed(char *what, size_t cap, int e)
{
	if (dv_sw_fail_cause(e, DV_SW_AT_CONNECT) == DV_SW_FAIL_NO_PORT)
		snprintf(what, cap,
		         "cannot connect: no local port left (net.ipv4.ip_local_port_range all in "
		         "use, e.g. by TIME_WAIT)");
	else
		snprintf(what, cap, "cannot connect: %s", strerror(e));
}

static void conn_open(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	const dv_run_config_t *cfg = sw->h.cfg;
	int one = 1, rc, fd;
	char what[160];

	if (!window_room(sw)) { /* its turn comes in admit */
		if (!c->queued) {
			c->queued = true;
			sw->wq[(sw->wq_head + sw->wq_len) % sw->n] = c->index;
			sw->wq_len++;
		}
		return;
	}
	if (c->ever_open)
		sw->e->stats.c.conn_reopened++;
	if (c->backed_off)
		sw->e->stats.c.conn_backoffs++;
	c->ever_open = true;
	c->backed_off = c->answered = false;
	c->open_ns = now;
	c->submitted = 0;
	c->ev_closed = c->ev_goaway = c->ev_proto = c->closed_busy = false;
	set_state(sw, c, C_CONNECTING, now);
	timer_at(sw, now + cfg->timeout_ns);
	fd = socket(cfg->server.ss_family, sw->desc->sock_type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		snprintf(what, sizeof(what), "cannot open a socket: %s", strerror(e));
		conn_fail(sw, c, dv_sw_fail_cause(e, DV_SW_AT_SOCKET), false, now, what);
		return;
	}
	c->fd = fd;
	if (sw->desc->sock_type == SOCK_STREAM)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind_source(cfg, sw->h.first_conn + c->index, fd, what, sizeof(what)) != 0) {
		int e = errno;
		conn_fail(sw, c, dv_sw_fail_cause(e, bind_stage(cfg)), false, now, what);
		return;
	}
	if (connect(fd, (const struct sockaddr *)&cfg->server, cfg->server_len) != 0 &&
	    errno != EINPROGRESS) {
		int e = errno;
		connect_failed(what, sizeof(what), e);
		conn_fail(sw, c, dv_sw_fail_cause(e, DV_SW_AT_CONNECT), false, now, what);
		return;
	}
	c->gen++;
	c->events = 0;
	rc = conn_handles(sw, c);
	if (rc == 0 && !watch(c))
		rc = -errno;
	if (rc != 0) {
		fatal(sw, now, "cannot set up a connection: %s", strerror(-rc));
		conn_shut(c);
		set_state(sw, c, C_IDLE, now);
		return;
	}
}

/* A kind with timers: c's timer at its machine's next deadline (whole milliseconds, at least
 * one, so an item due now cannot spin; on_deadline checks the time it fires at). */
static void deadline_arm(dv_sconn_t *c)
{
	uint64_t at = dv_tp_next_deadline(c->tp), now, ms;

	if (at == c->deadline)
		return;
	c->deadline = at;
	if (at == UINT64_MAX) {
		uv_timer_stop(c->timer);
		return;
	}
	now = dv_now_ns();
	ms = at > now ? (at - now + DV_NS_PER_MS - 1) / DV_NS_PER_MS : 1;
	uv_update_time(c->sw->h.loop);
	uv_timer_start(c->timer, on_deadline, DV_MAX(ms, 1u), 0);
}

/* Write what the machine has queued; 0, or a negative errno (the connection is dead). */
static int conn_flush(dv_sw_t *sw, dv_sconn_t *c)
{
	struct iovec iov[DV_SW_IOV];

	for (;;) {
		int rc, m = dv_tp_output(c->tp, iov, DV_SW_IOV);
		if (m == 0) {
			c->want_write = false;
			break;
		}
		rc = send_iov(sw, c, iov, m);
		sw->e->stats.c.send_calls++;
		if (rc == -EINTR)
			continue;
		if (rc == -EAGAIN || rc == -EWOULDBLOCK) {
			c->want_write = true;
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (!watch(c))
		return -errno;
	if (c->timer != NULL)
		deadline_arm(c);
	return 0;
}

/* Flush, and end c as reset when the write fails. False when c ended. */
static bool flush_or_end(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	int rc = conn_flush(sw, c);
	char what[120];

	if (rc == 0)
		return true;
	snprintf(what, sizeof(what), "connection lost while writing: %s", strerror(-rc));
	conn_down(sw, c, END_RESET, -rc, now, what);
	return false;
}

/* Query id left flight on c without an answer (HTTP status, stream error). */
static void lose_one(dv_sw_t *sw, dv_sconn_t *c, uint64_t id)
{
	dv_slot_t *s;

	if (id >= DV_WINDOW_IDS)
		return;
	s = &sw->e->win.slot[id];
	if (s->state != DV_SLOT_INFLIGHT || s->sock != c->index)
		return;
	dv_engine_lose(sw->e, (uint16_t)id);
	if (c->inflight > 0)
		c->inflight--;
}

static void on_answer(dv_sw_t *sw, dv_sconn_t *c, const uint8_t *msg, size_t len)
{
	dv_slot_t *s = NULL;
	bool was = false;

	if (len >= 2) {
		s = &sw->e->win.slot[dv_wire_get16(msg)];
		was = s->state == DV_SLOT_INFLIGHT && s->sock == c->index;
	}
	dv_engine_receive(sw->e, c->index, msg, len, true, sw->now);
	if (was && s->state != DV_SLOT_INFLIGHT) {
		c->answered = true;
		if (c->inflight > 0)
			c->inflight--;
	}
}

/*
 * DoH: the stream's response is the answer to its own query (ev->id) or to none: one with
 * another DNS ID counts unexpected (malformed when it is not a DNS response), and the
 * query, whose stream has ended, is lost at once instead of holding its slot for -t.
 */
static void on_doh_answer(dv_sw_t *sw, dv_sconn_t *c, const dv_tp_event_t *ev)
{
	size_t rqlen;

	if (ev->len >= 2 && dv_wire_get16(ev->msg) == ev->id)
		on_answer(sw, c, ev->msg, ev->len);
	else if (dv_wire_check_response(ev->msg, ev->len, &rqlen))
		sw->e->stats.c.unexpected++;
	else
		sw->e->stats.c.malformed++;
	lose_one(sw, c, ev->id); /* nothing when it was answered */
}

static int on_event(void *ctx, const dv_tp_event_t *ev)
{
	dv_sconn_t *c = ctx;
	dv_sw_t *sw = c->sw;
	dv_counters_t *k = &sw->e->stats.c;

	switch (ev->kind) {
	case DV_TP_EV_ANSWER:
		if (sw->desc->answer_ids)
			on_doh_answer(sw, c, ev);
		else
			on_answer(sw, c, ev->msg, ev->len);
		break;
	case DV_TP_EV_HTTP_STATUS:
		k->http_non200++;
		if (ev->status >= 400 && ev->status < 500)
			k->http_4xx++;
		else if (ev->status >= 500 && ev->status < 600)
			k->http_5xx++;
		lose_one(sw, c, ev->id);
		break;
	case DV_TP_EV_STREAM_ERROR:
		k->stream_errors++;
		lose_one(sw, c, ev->id);
		break;
	case DV_TP_EV_HANDSHAKE:
		dv_hist_add(&sw->e->stats.handshake, sw->now - c->up_ns);
		if (ev->resumed)
			k->tls_resumed++;
		else
			k->tls_full++;
		/* Ready once TLS is done and (DoH) the server's SETTINGS came, in either order. */
		/* fall through */
	case DV_TP_EV_SETTINGS:
		if (c->state == C_HANDSHAKE && dv_tp_ready(c->tp))
			set_state(sw, c, C_READY, sw->now);
		break;
	case DV_TP_EV_CLOSED:
		c->ev_closed = true;
		c->ev_goaway = ev->goaway;
		c->closed_busy = c->inflight > 0;
		break;
	case DV_TP_EV_PROTO_ERROR:
		c->ev_proto = true;
		snprintf(sw->why, sizeof(sw->why), "%s", ev->what != NULL ? ev->what : "error");
		break;
	}
	return 0;
}

/* c's last query came back: a connection that takes no more closes now. */
static void maybe_done(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	if (c->state != C_DRAINING || c->inflight > 0)
		return;
	conn_end(sw, c, c->ev_closed ? END_CLOSED : END_RECYCLE, now);
}

/* After the bytes read were fed: the events they raised decide c's fate. */
static void after_input(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	if (c->ev_proto) {
		conn_down(sw, c, END_PROTO, EPROTO, now, sw->why);
		return;
	}
	if (c->ev_closed) {
		if (c->submitted == 0)
			sw->stall_note = c->ev_goaway
			                     ? "the server sent GOAWAY before a query"
			                     : "the server closed the connection before a query";
		if (!is_up(c->state)) {
			conn_fail(sw, c, DV_SW_FAIL_OTHER, false, now,
			          "the server closed the connection during the TLS handshake");
		} else if (c->ev_goaway && c->inflight > 0 && dv_tp_in_flight(c->tp) > 0) {
			if (c->state != C_DRAINING) /* streams below GOAWAY's last id may answer */
				set_state(sw, c, C_DRAINING, now);
		} else {
			conn_end(sw, c, END_CLOSED, now);
		}
		return;
	}
	if (flush_or_end(sw, c, now))
		maybe_done(sw, c, now);
}

/* A datagram kind: up to DV_SW_DGRAMS datagrams per recvmmsg, into rbuf's slots of
 * DV_TP_DGRAM_MAX bytes; each goes to the machine as one input. A longer one ends c. */
static void conn_read_dgrams(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	struct mmsghdr mh[DV_SW_DGRAMS];
	struct iovec iov[DV_SW_DGRAMS];
	char what[120];
	int r, i;

	for (unsigned round = 0; round < DV_SW_READ_ROUNDS; round++) {
		memset(mh, 0, sizeof(mh));
		for (i = 0; i < DV_SW_DGRAMS; i++) {
			iov[i].iov_base = sw->rbuf + (size_t)i * DV_TP_DGRAM_MAX;
			iov[i].iov_len = DV_TP_DGRAM_MAX;
			mh[i].msg_hdr.msg_iov = &iov[i];
			mh[i].msg_hdr.msg_iovlen = 1;
		}
		r = recvmmsg(c->fd, mh, DV_SW_DGRAMS, MSG_DONTWAIT, NULL);
		sw->e->stats.c.recv_calls++;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r < 0) {
			snprintf(what, sizeof(what), "connection lost: %s", strerror(errno));
			conn_down(sw, c, END_RESET, errno, now, what);
			return;
		}
		sw->now = dv_now_ns();
		for (i = 0; i < r && !c->ev_proto && !c->ev_closed; i++) {
			if (mh[i].msg_hdr.msg_flags & MSG_TRUNC) {
				snprintf(what, sizeof(what), "a datagram over %u bytes",
				         DV_TP_DGRAM_MAX);
				conn_down(sw, c, END_PROTO, EPROTO, now, what);
				return;
			}
			(void)dv_tp_input(c->tp, iov[i].iov_base, mh[i].msg_len);
		}
		if (c->ev_proto || c->ev_closed || r < DV_SW_DGRAMS)
			break;
	}
	after_input(sw, c, now);
}

static void conn_read(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	unsigned round;
	char what[120];

	if (sw->desc->sock_type == SOCK_DGRAM) {
		conn_read_dgrams(sw, c, now);
		return;
	}
	for (round = 0; round < DV_SW_READ_ROUNDS; round++) {
		ssize_t r = recv(c->fd, sw->rbuf, DV_SW_READ_BUF, MSG_DONTWAIT);
		sw->e->stats.c.recv_calls++;
		if (r > 0) {
			sw->now = dv_now_ns();
			confirm(sw, c);
			(void)dv_tp_input(c->tp, sw->rbuf, (size_t)r);
			if (c->ev_proto || c->ev_closed || (size_t)r < DV_SW_READ_BUF)
				break;
			continue;
		}
		if (r == 0) {
			sw->now = dv_now_ns();
			(void)dv_tp_eof(c->tp);
			if (!c->ev_proto && !c->ev_closed) {
				c->ev_closed = true;
				c->closed_busy = c->inflight > 0;
			}
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		snprintf(what, sizeof(what), "connection lost: %s", strerror(errno));
		conn_down(sw, c, END_RESET, errno, now, what);
		return;
	}
	after_input(sw, c, now);
}

/*
 * The SYNs retransmitted before connect() ended (TCP_INFO): each one a second or more
 * lost, a SYN the server's full accept queue dropped (or the network lost). A connect that
 * took less than DV_SW_SYN_RTO_NS cannot have sent its SYN again (Linux's first SYN timeout
 * is 1 s, RFC 6298): no getsockopt for it, the common case.
 */
#define DV_SW_SYN_RTO_NS (200 * DV_NS_PER_MS) /* TCP_RTO_MIN: no SYN timeout is shorter */
static void count_syn_retries(dv_sw_t *sw, dv_sconn_t *c, uint64_t now)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (sw->desc->sock_type != SOCK_STREAM || now - c->open_ns < DV_SW_SYN_RTO_NS)
		return;
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	    len >= offsetof(struct tcp_info, tcpi_total_retrans) + sizeof(ti.tcpi_total_retrans))
		sw->e->stats.c.conn_syn_retries += ti.tcpi_total_retrans;
}

/*
 * connect() finished (or failed): epoll said writable. Writable with no error and no
 * hang-up is connected (what a failed connect leaves is EPOLLERR, with EPOLLHUP once the
 * socket is closed), so SO_ERROR is read only when one of those is set: one getsockopt
 * less per connection.
 */
static void conn_connected(dv_sw_t *sw, dv_sconn_t *c, uint32_t events, uint64_t now)
{
	int err = 0;
	socklen_t len = sizeof(err);
	char what[120];

	if ((events & (EPOLLERR | EPOLLHUP)) != 0 &&
	    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	count_syn_retries(sw, c, now);
	if (err != 0) {
		connect_failed(what, sizeof(what), err);
		conn_fail(sw, c, dv_sw_fail_cause(err, DV_SW_AT_CONNECT), false, now, what);
		return;
	}
	dv_hist_add(&sw->e->stats.connect, now - c->open_ns);
	sw->e->stats.c.conn_opened++;
	c->up_ns = now;
	set_state(sw, c, dv_tp_ready(c->tp) ? C_READY : C_HANDSHAKE, now);
	if (c->state == C_READY && sw->desc->sock_type == SOCK_STREAM) {
		c->unconfirmed = true; /* accepted? its slot waits for a byte (DV_SW_CONFIRM_NS) */
		sw->nunconf++;
		timer_at(sw, now + DV_SW_CONFIRM_NS);
	}
	flush_or_end(sw, c, now); /* the ClientHello */
}

/* Open the connections waiting for a connect slot while slots are free. */
static void admit(dv_sw_t *sw, uint64_t now)
{
	while (sw->wq_len > 0 && window_room(sw)) {
		dv_sconn_t *c = &sw->c[sw->wq[sw->wq_head]];
		sw->wq_head = (sw->wq_head + 1) % sw->n;
		sw->wq_len--;
		c->queued = false;
		if (c->state == C_IDLE && c->fd < 0 && c->retry_ns == UINT64_MAX)
			reopen(sw, c, now, now);
	}
}

/* epoll's events on c's socket (an error or a hang-up reads, to learn it). */
static void conn_io(dv_sw_t *sw, dv_sconn_t *c, uint32_t events)
{
	uint64_t now = dv_now_ns();
	uint32_t gen = c->gen;

	if (c->state == C_CONNECTING) {
		conn_connected(sw, c, events, now);
	} else {
		if ((events & (EPOLLOUT | EPOLLERR)) == EPOLLOUT)
			flush_or_end(sw, c, now);
		if (c->fd >= 0 && c->gen == gen && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
			conn_read(sw, c, now);
	}
	admit(sw, now);
	ready_note(sw, c);
	sw->h.after_io(sw->h.ctx); /* may close every connection: c is not touched after it */
}

/* The epoll set is readable: each connection's events in turn. One that ended (or ended and
 * opened again) since epoll_wait reported it is skipped: its gen moved on. */
static void on_epoll(uv_poll_t *h, int status, int events)
{
	dv_sw_t *sw = h->data;
	int n, i;

	(void)events;
	if (status < 0) /* libuv stopped watching the set (it cannot fail so): watch it again */
		uv_poll_start(h, UV_READABLE, on_epoll);
	n = epoll_wait(sw->epfd, sw->evs, DV_SW_EVENTS, 0);
	for (i = 0; i < n && !sw->closing; i++) {
		uint64_t d = sw->evs[i].data.u64;
		dv_sconn_t *c = &sw->c[(uint32_t)d];
		if (c->fd >= 0 && c->gen == (uint32_t)(d >> 32))
			conn_io(sw, c, sw->evs[i].events);
	}
}

/* c's machine asked for the time (dv_tp_next_deadline): what fell due, then as after I/O. */
static void on_deadline(uv_timer_t *t)
{
	dv_sconn_t *c = t->data;
	dv_sw_t *sw = c->sw;
	uint64_t now = dv_now_ns(), at = c->deadline;

	c->deadline = UINT64_MAX;
	if (now < at) { /* libuv's millisecond clock ran ahead of ours: not yet */
		deadline_arm(c);
		return;
	}
	sw->now = now;
	(void)dv_tp_on_deadline(c->tp, now);
	after_input(sw, c, now); /* its events; flushes and re-arms while c lives */
	admit(sw, now);
	ready_note(sw, c);
	sw->h.after_io(sw->h.ctx); /* may close every connection: c is not touched after it */
}

/* A worker's stream state for n connections sharing a window of capacity queries. */
static int sw_new(const dv_sw_host_t *h, uint32_t n, dv_sw_t **out, dv_err_t *err)
{
	dv_sw_t *sw;
	uint32_t i;
	int rc;

	if (n == 0 || n > 65535)
		return dv_err_set(err, -EINVAL, "%u connections in one worker: at most 65535 (-T)",
		                  n);
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	*out = sw;
	sw->h = *h;
	sw->e = h->eng;
	sw->n = n;
	sw->per_conn = DV_MAX((h->capacity + n - 1) / n, 1u);
	sw->down_since_ns = UINT64_MAX;
	sw->stall_ns = UINT64_MAX;
	sw->timer_lb = UINT64_MAX;
	sw->epfd = -1;
	sw->rng = (dv_now_ns() ^ ((uint64_t)h->first_conn << 32)) | 1;
	sw->desc = dv_tp_config_desc(&h->cfg->tp);
	rc = dv_tp_shared_new(&sw->sh, &h->cfg->tp, err);
	if (rc != 0)
		return rc;
	sw->c = calloc(n, sizeof(*sw->c));
	sw->rbuf = malloc(DV_SW_READ_BUF);
	sw->qbuf = malloc(DV_SW_BATCH * sizeof(*sw->qbuf));
	sw->qlen = malloc(DV_SW_BATCH * sizeof(*sw->qlen));
	sw->wq = malloc(n * sizeof(*sw->wq));
	sw->ready = malloc(n * sizeof(*sw->ready));
	sw->evs = malloc(DV_SW_EVENTS * sizeof(*sw->evs));
	if (sw->c == NULL || sw->rbuf == NULL || sw->qbuf == NULL || sw->qlen == NULL ||
	    sw->wq == NULL || sw->ready == NULL || sw->evs == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		sw->c[i].sw = sw;
		sw->c[i].fd = -1;
		sw->c[i].index = (uint16_t)i;
		sw->c[i].retry_ns = UINT64_MAX;
	}
	return 0;
}

int dv_sw_open(dv_sw_t **out, const dv_sw_host_t *h, dv_err_t *err)
{
	return sw_new(h, h->conns, out, err);
}

/* The UDP engine's TC hook: queue the query to be asked over TCP. */
static void tc_push(void *ctx, uint32_t qidx)
{
	dv_sw_t *sw = ctx;

	if (sw->rq_len == DV_SW_RQ) {
		sw->h.eng->stats.c.tc_not_sent++;
		return;
	}
	sw->rq[(sw->rq_head + sw->rq_len) % DV_SW_RQ] = qidx;
	sw->rq_len++;
}

int dv_sw_open_tc(dv_sw_t **out, const dv_sw_host_t *h, dv_err_t *err)
{
	dv_sw_t *sw;
	int rc = sw_new(h, 1, out, err);

	if (rc != 0)
		return rc;
	sw = *out;
	sw->retry = true;
	rc = dv_engine_init(&sw->own, h->ql, h->capacity, h->cfg->timeout_ns, 0, 1, 0);
	sw->rq = malloc(DV_SW_RQ * sizeof(*sw->rq));
	if (rc != 0 || sw->rq == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	sw->own.verbose = h->eng->verbose;
	sw->e = &sw->own;
	h->eng->tc_fn = tc_push;
	h->eng->tc_ctx = sw;
	return 0;
}

/* Retry mode: hand queued queries to c; false when c refused one (no room after all). */
static bool send_retries_on(dv_sw_t *sw, dv_sconn_t *c, uint64_t now, unsigned m)
{
	dv_engine_t *e = sw->e;
	unsigned i;

	for (i = 0; i < m; i++) {
		uint32_t qidx = sw->rq[sw->rq_head];
		uint16_t id;
		dv_engine_prepare_qidx(e, c->index, now, qidx, sw->qbuf[0], &sw->qlen[0]);
		id = dv_wire_get16(sw->qbuf[0]);
		if (dv_tp_submit(c->tp, sw->qbuf[0], sw->qlen[0], id) != 0) {
			dv_window_cancel(&e->win, id);
			break;
		}
		(void)dv_engine_sent(e, sw->qbuf, 1, 1, 0, now);
		sw->rq_head = (sw->rq_head + 1) % DV_SW_RQ;
		sw->rq_len--;
		c->inflight++;
		c->submitted++;
	}
	if (c->inflight > e->stats.c.conn_inflight_peak)
		e->stats.c.conn_inflight_peak = c->inflight;
	if (i > 0)
		flush_or_end(sw, c, now);
	return i == m;
}

void dv_sw_send_retries(dv_sw_t *sw, uint64_t now)
{
	uint32_t i;

	for (i = 0; i < sw->n && sw->rq_len > 0; i++) {
		dv_sconn_t *c = &sw->c[i];
		unsigned room = conn_room(sw, c);
		room = DV_MIN(room, DV_MIN(sw->rq_len, dv_window_room(&sw->e->win)));
		if (room > 0)
			send_retries_on(sw, c, now, room);
	}
}

dv_engine_t *dv_sw_engine(dv_sw_t *sw)
{
	return sw->e;
}

bool dv_sw_up(const dv_sw_t *sw)
{
	return sw->nup > 0;
}

bool dv_sw_busy(const dv_sw_t *sw)
{
	return sw->rq_len > 0 || sw->e->win.inflight > 0;
}

void dv_sw_finish(dv_sw_t *sw, bool interrupted)
{
	dv_counters_t *to = &sw->h.eng->stats.c;
	const dv_counters_t *k = &sw->own.stats.c;

	dv_engine_finish(&sw->own, interrupted);
	to->tc_retried += k->sent;
	to->tc_completed += k->completed;
	to->tc_lost += k->lost + k->interrupted;
	if (sw->ever_up)
		to->tc_not_sent += sw->rq_len;
	else
		tc_drop(sw);
	sw->rq_len = 0;
	/* The retry connection's own figures are the connection figures of a UDP pass. */
	to->conn_opened += k->conn_opened;
	to->conn_reopened += k->conn_reopened;
	to->conn_backoffs += k->conn_backoffs;
	to->conn_syn_retries += k->conn_syn_retries;
	to->conn_abandoned += k->conn_abandoned;
	to->conn_failed += k->conn_failed;
	to->conn_refused += k->conn_refused;
	to->conn_timeouts += k->conn_timeouts;
	to->conn_no_port += k->conn_no_port;
	to->conn_reset += k->conn_reset;
	to->conn_closed += k->conn_closed;
	to->conn_idle_closed += k->conn_idle_closed;
	to->conn_proto_errors += k->conn_proto_errors;
	to->conn_inflight_peak = DV_MAX(to->conn_inflight_peak, k->conn_inflight_peak);
	to->conn_pending_peak = DV_MAX(to->conn_pending_peak, k->conn_pending_peak);
	dv_hist_merge(&sw->h.eng->stats.connect, &sw->own.stats.connect);
}

void dv_sw_start(dv_sw_t *sw, uint64_t now)
{
	uint32_t i;

	sw->down_since_ns = now;
	for (i = 0; i < sw->n && *sw->h.sending; i++)
		conn_open(sw, &sw->c[i], now);
}

/*
 * How many queries c takes now. *server (may be NULL) is set when the server's limit, not
 * ours (-q's share per connection, --queries-per-conn, a batch), is what holds it lower:
 * its stream limit (DoH), or a send buffer it does not drain.
 */
static unsigned conn_room_why(const dv_sw_t *sw, const dv_sconn_t *c, bool *server)
{
	uint64_t own, qpc = sw->h.cfg->queries_per_conn;
	size_t cap;

	if (server != NULL)
		*server = false;
	if (c->state != C_READY || c->inflight >= sw->per_conn)
		return 0;
	own = DV_MIN(sw->per_conn - c->inflight, (uint64_t)DV_SW_BATCH);
	if (qpc > 0)
		own = DV_MIN(own, qpc - c->submitted);
	cap = dv_tp_capacity(c->tp);
	if (server != NULL)
		*server = cap < own;
	return (unsigned)DV_MIN(own, (uint64_t)cap);
}

static unsigned conn_room(const dv_sw_t *sw, const dv_sconn_t *c)
{
	return conn_room_why(sw, c, NULL);
}

/*
 * Hand up to n prepared queries to c; returns how many it took. Paced, the i-th of them
 * is the pacer's query issued + taken + i (taken: handed to other connections earlier in
 * this dv_sw_send call), whose due time is its intended send time.
 */
static unsigned send_on(dv_sw_t *sw, dv_sconn_t *c, uint64_t now, unsigned n, unsigned taken)
{
	dv_engine_t *e = sw->e;
	unsigned k, i;
	uint64_t qpc = sw->h.cfg->queries_per_conn;

	k = dv_engine_prepare(e, c->index, now, n, sw->qbuf, sw->qlen);
	if (e->paced)
		for (i = 0; i < k; i++)
			e->win.slot[dv_wire_get16(sw->qbuf[i])].intended_ns =
			    dv_pacer_due_ns(sw->h.pacer, sw->h.pacer->issued + taken + i);
	for (i = 0; i < k; i++)
		if (dv_tp_submit(c->tp, sw->qbuf[i], sw->qlen[i], dv_wire_get16(sw->qbuf[i])) != 0)
			break;
	/* Refused ones (no room after all) are given back and prepared again later. */
	(void)dv_engine_sent(e, sw->qbuf, k, i, EAGAIN, now);
	c->inflight += i;
	c->submitted += i;
	if (c->inflight > e->stats.c.conn_inflight_peak)
		e->stats.c.conn_inflight_peak = c->inflight;
	if (qpc > 0 && c->submitted >= qpc)
		set_state(sw, c, C_DRAINING, now);
	if (i > 0)
		flush_or_end(sw, c, now);
	return i;
}

/* Nothing could be sent for -t: end the pass with DV_RUN_NOTHING_SENT and the cause. */
static void stalled(dv_sw_t *sw, uint64_t now)
{
	const char *why = NULL;
	uint32_t i;

	for (i = 0; i < sw->n && why == NULL; i++)
		if (is_up(sw->c[i].state) && sw->c[i].tp != NULL)
			why = dv_tp_full_why(sw->c[i].tp);
	if (why == NULL)
		why = sw->stall_note != NULL ? sw->stall_note
		      : sw->why[0] != '\0'   ? sw->why
		                             : "no connection took one";
	if (*sw->h.rc == 0) {
		snprintf(sw->h.err, sw->h.err_len,
		         "nothing could be sent over %s for %.3g s (-t): %s (%llu connections "
		         "opened meanwhile)",
		         kind_text(sw), (double)(now - sw->stall_ns) / 1e9, why,
		         (unsigned long long)(sw->e->stats.c.conn_opened - sw->stall_opened));
		*sw->h.rc = DV_RUN_NOTHING_SENT;
	}
	*sw->h.sending = false;
	*sw->h.drain_end_ns = now;
}

/* After a dv_sw_send of n due queries that handed total on: the stall's start or end. */
static void stall_check(dv_sw_t *sw, uint64_t now, unsigned n, unsigned total)
{
	if (total > 0 || sw->retry) {
		sw->stall_ns = UINT64_MAX;
		sw->stall_note = NULL;
		return;
	}
	if (n == 0)
		return;
	if (sw->e->win.inflight > 0) { /* not yet: those end (answered, lost) within -t */
		sw->stall_ns = UINT64_MAX;
		return;
	}
	/*
	 * Not while a first connection is still opening: it fails the pass itself at -t
	 * (conn_fail: "connection to the server failed"), which says more than "nothing
	 * could be sent"; both bounds would otherwise fall at the same moment.
	 */
	if (!sw->ever_up && sw->npending > 0) {
		sw->stall_ns = UINT64_MAX;
		return;
	}
	if (sw->stall_ns == UINT64_MAX) {
		sw->stall_ns = now;
		sw->stall_opened = sw->e->stats.c.conn_opened;
	} else if (now - sw->stall_ns >= sw->h.cfg->timeout_ns) {
		stalled(sw, now);
	}
}

unsigned dv_sw_send(dv_sw_t *sw, uint64_t now, unsigned n)
{
	unsigned total = 0, want, k, room;
	uint32_t tried, lim = sw->ready_len;
	bool server, held = false;

	/* The ring's connections in turn, each once: those with room left go to its back. */
	for (tried = 0; tried < lim && total < n; tried++) {
		dv_sconn_t *c = &sw->c[sw->ready[sw->ready_head]];
		sw->ready_head = sw->ready_head + 1 < sw->n ? sw->ready_head + 1 : 0;
		sw->ready_len--;
		c->in_ready = false;
		room = conn_room_why(sw, c, &server);
		held = held || server;
		if (room > 0) {
			want = DV_MIN(room, n - total);
			k = send_on(sw, c, now, want, total);
			held = held || k < want; /* its send buffer filled on the way */
			total += k;
		}
		ready_note(sw, c);
	}
	stall_check(sw, now, n, total);
	/* Paced and short of what was due: the server's doing, for the capacity verdict. */
	if (held && total < n && sw->e->paced)
		sw->e->stats.c.server_holds++;
	return total;
}

/* Connects and handshakes past -t fail; idle connections due for a reopen open. */
static void conn_timers(dv_sw_t *sw, uint64_t now)
{
	uint64_t t = sw->h.cfg->timeout_ns;
	uint32_t i;
	char what[120];

	if (now < sw->timer_lb)
		return;
	sw->timer_lb = UINT64_MAX; /* made exact again below */
	for (i = 0; i < sw->n && (sw->npending > 0 || sw->nretry > 0 || sw->nunconf > 0); i++) {
		dv_sconn_t *c = &sw->c[i];
		if (c->unconfirmed && now - c->up_ns >= DV_SW_CONFIRM_NS)
			confirm(sw, c);
		else if (c->unconfirmed)
			timer_at(sw, c->up_ns + DV_SW_CONFIRM_NS);
		if (is_pending(c->state) && now - c->open_ns >= t) {
			if (c->state == C_CONNECTING)
				count_syn_retries(sw, c, now);
			snprintf(what, sizeof(what), "%s not done within the timeout (-t %.3g s)",
			         c->state == C_CONNECTING || sw->desc->setup_what == NULL
			             ? "connect"
			             : sw->desc->setup_what,
			         (double)t / 1e9);
			conn_fail(sw, c, DV_SW_FAIL_OTHER, true, now, what);
		} else if (c->state == C_IDLE && c->retry_ns <= now) {
			set_state(sw, c, C_IDLE, now); /* clears the reopen time */
			reopen(sw, c, now, now);
		}
		if (is_pending(c->state))
			timer_at(sw, c->open_ns + t);
		else if (c->state == C_IDLE && c->retry_ns != UINT64_MAX)
			timer_at(sw, c->retry_ns);
	}
}

void dv_sw_turn(dv_sw_t *sw, uint64_t now)
{
	dv_engine_t *e = sw->e;
	uint64_t t = sw->h.cfg->timeout_ns;
	int32_t id;

	if (now >= t) {
		while ((id = dv_window_oldest_expired(&e->win, now - t)) >= 0) {
			dv_sconn_t *c = &sw->c[e->win.slot[id].sock];
			dv_engine_lose(e, (uint16_t)id);
			if (c->inflight > 0)
				c->inflight--;
			/* DoH: its stream is reset and its place under the server's limit freed */
			if (c->tp != NULL && dv_tp_cancel(c->tp, (uint64_t)id) > 0 &&
			    !flush_or_end(sw, c, now))
				continue;
			maybe_done(sw, c, now);
			ready_note(sw, c);
		}
	}
	if (sw->closing)
		return;
	conn_timers(sw, now);
	admit(sw, now);
	if (*sw->h.sending && (!sw->retry || sw->rq_len > 0) && sw->nup == 0 &&
	    sw->down_since_ns != UINT64_MAX && now - sw->down_since_ns >= t && sw->npending == 0) {
		if (sw->retry)
			tc_drop(sw);
		else
			fatal(sw, now, "no %s connection to the server for %.3g s: %s",
			      kind_text(sw), (double)(now - sw->down_since_ns) / 1e9, sw->why);
	}
}

uint64_t dv_sw_next_due(const dv_sw_t *sw)
{
	uint64_t t = sw->h.cfg->timeout_ns, due = sw->timer_lb;

	if (sw->closing)
		return UINT64_MAX;
	if (*sw->h.sending && sw->nup == 0 && sw->down_since_ns != UINT64_MAX)
		due = DV_MIN(due, sw->down_since_ns + t);
	if (*sw->h.sending && sw->stall_ns != UINT64_MAX)
		due = DV_MIN(due, sw->stall_ns + t);
	return due;
}

void dv_sw_close(dv_sw_t *sw)
{
	uint32_t i;

	sw->closing = true;
	for (i = 0; i < sw->n; i++) {
		if (sw->c[i].state == C_CONNECTING)
			sw->e->stats.c.conn_abandoned++;
		conn_shut(&sw->c[i]);
	}
	if (sw->ep_started && !uv_is_closing((uv_handle_t *)&sw->ep))
		uv_close((uv_handle_t *)&sw->ep, NULL); /* sw lives until dv_sw_free */
}

void dv_sw_free(dv_sw_t *sw)
{
	uint32_t i;

	if (sw == NULL)
		return;
	for (i = 0; sw->c != NULL && i < sw->n; i++) {
		if (sw->c[i].fd >= 0)
			close(sw->c[i].fd);
		dv_tp_conn_free(sw->c[i].tp);
	}
	free(sw->c);
	dv_tp_shared_free(sw->sh);
	free(sw->rbuf);
	free(sw->qbuf);
	free(sw->qlen);
	free(sw->wq);
	free(sw->ready);
	free(sw->evs);
	if (sw->epfd >= 0)
		close(sw->epfd);
	free(sw->rq);
	if (sw->retry)
		dv_engine_free(&sw->own);
	free(sw);
}
