/* worker: one thread's event loop: batched sends under the window and pacer, batched receives,
 * expiry. */
#include "config.h"

#include "engine/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <linux/sock_diag.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/sockaddr.h"
#include "base/wire.h"
#include "engine/stream.h"
#include "engine/xdp.h"

/*
 * Why uv_poll_t on our own sockets rather than uv_udp_t: libuv 1.44 sends one
 * datagram per system call (uv_udp_try_send) and receives one per recvmsg
 * unless recvmmsg is enabled, and it cannot send a batch at all. With raw
 * sockets we call sendmmsg/recvmmsg with up to DV_BATCH datagrams each and
 * libuv only tells us when a socket is readable (or writable after EAGAIN).
 * doc/architecture.md has the benchmark that decided it.
 */

#define DV_RECV_BUF    65536 /* any UDP datagram fits: oversized answers are parsed, not cut */
#define DV_RECV_ROUNDS 4     /* recvmmsg calls per readable event before sending again */
#define DV_SEND_ROUNDS 16    /* sendmmsg calls per pump */
#define DV_PUBLISH_NS  (50 * DV_NS_PER_MS)
/*
 * -Q: the due timer (timerfd) wakes the loop once per DV_PACE_PER_WAKE queries due,
 * between DV_PACE_TICK_MIN_NS and DV_PACE_TICK_MAX_NS apart; the lag it adds is at most
 * that tick. libuv's millisecond timer added 1-2 ms and pushed 16% of a 120k qps
 * schedule over the 2 ms sent_behind bound on an idle machine; a fixed 200 us tick
 * tripled the CPU per query at 20k qps (doc/performance.md).
 */
#define DV_PACE_PER_WAKE    32.0
#define DV_PACE_TICK_MIN_NS (50 * DV_NS_PER_US)
#define DV_PACE_TICK_MAX_NS DV_NS_PER_MS
#define DV_DIRECT_WAIT_US   1000               /* direct mode: longest wait in recvmmsg */
#define DV_DIRECT_TURN_NS   (2 * DV_NS_PER_MS) /* direct mode: back to the loop after this */

/* Per-thread batch buffers (allocated once, reused for every batch). */
typedef struct dv_batch {
	uint8_t sbuf[DV_BATCH][DV_MAX_QUERY_LEN];
	unsigned slen[DV_BATCH];
	struct iovec siov[DV_BATCH];
	struct mmsghdr smsg[DV_BATCH];
	struct iovec riov[DV_BATCH];
	struct mmsghdr rmsg[DV_BATCH];
	union { /* SCM_TIMESTAMPNS or SCM_TIMESTAMPING: the kernel's receive time */
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} rctl[DV_BATCH];
	struct mmsghdr emsg[DV_BATCH]; /* the error queue: transmit stamps (wire clock) */
	union {
		char
		    buf[CMSG_SPACE(sizeof(struct scm_timestamping)) +
		        CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))];
		struct cmsghdr align;
	} ectl[DV_BATCH];
	union { /* wire clock: SO_TIMESTAMPING asking one datagram's transmit stamp */
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ask;
	bool asked[DV_BATCH]; /* wire clock: smsg[i] carries ask */
	uint8_t *rbuf;        /* DV_BATCH * DV_RECV_BUF */
} dv_batch_t;

static _Thread_local dv_batch_t *tl_batch;

/* --client-range: bind client index's socket to the range's index-th address (port 0). */
static int bind_client(int fd, const dv_run_config_t *cfg, uint32_t index, dv_err_t *err)
{
	struct sockaddr_storage a;
	char text[DV_SOCKADDR_TEXT_MAX];
	int rc;

	dv_run_client_addr(cfg, index, &a);
	if (bind(fd, (struct sockaddr *)&a, cfg->client_base_len) == 0)
		return 0;
	rc = -errno;
	dv_sockaddr_host((const struct sockaddr *)&a, text, sizeof(text));
	return dv_err_set(err, rc, "cannot bind client %u's socket to %s (--client-range): %s",
	                  index + 1, text, strerror(-rc));
}

/* Linux 6.12: software receive stamps only where this socket asked for them (not because
 * another socket of the host turned them on); the 6.1 headers lack it. */
#define DV_SOF_OPT_RX_FILTER (1 << 17)

/*
 * The wire clock's socket-wide flags: transmit stamps numbered by OPT_ID and returned alone
 * on the error queue (OPT_TSONLY); receive stamps from the socket filter (rx_filter: none
 * in recvmmsg's control data, OPT_RX_FILTER where the kernel has it), else software
 * receive stamps on every answer (RX_SOFTWARE, which also makes the kernel read the clock
 * for every packet of the host). The transmit stamp itself is asked per datagram by a
 * control message on the sampled queries (stamp_every > 1), or socket-wide when every
 * query is sampled (a control message makes udp_sendmsg look the route up again for that
 * datagram). opt_id false turns OPT_ID off: turning it on again restarts the kernel's key
 * at 0. Returns 0 or -errno.
 */
static int stamp_flags(const dv_worker_t *w, int fd, bool opt_id)
{
	int flags = SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY |
	            (opt_id ? SOF_TIMESTAMPING_OPT_ID : 0) |
	            (w->stamp_every <= 1 ? SOF_TIMESTAMPING_TX_SOFTWARE : 0) |
	            (w->rx_filter ? DV_SOF_OPT_RX_FILTER : SOF_TIMESTAMPING_RX_SOFTWARE);

	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) == 0)
		return 0;
	if (errno != EINVAL || !w->rx_filter)
		return -errno;
	flags &= ~DV_SOF_OPT_RX_FILTER; /* a kernel before 6.12 */
	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) == 0 ? 0 : -errno;
}

/* errno e of a socket's bind or connect at stage, for a message: a range of local ports used
 * up is said as such (a datagram socket's connect autobinds: EAGAIN), where strerror's
 * "Resource temporarily unavailable" would not name the cause. */
static const char *sock_error(int e, dv_sw_stage_t stage)
{
	if (dv_sw_fail_cause(e, stage) == DV_SW_FAIL_NO_PORT)
		return "no local port left (every port of net.ipv4.ip_local_port_range is in use)";
	return strerror(e);
}

/*
 * The receive-stamp filter could not be attached to a socket: the worker takes every
 * receive stamp from control messages, as without the filter (its sockets so far
 * detached and their flags set again).
 */
static void rx_filter_off(dv_worker_t *w, uint32_t opened)
{
	uint32_t i;

	w->rx_filter = false;
	dv_rxstamp_close(&w->rxs);
	for (i = 0; i < opened; i++) {
		setsockopt(w->socks[i].fd, SOL_SOCKET, SO_DETACH_BPF, NULL, 0);
		stamp_flags(w, w->socks[i].fd, true);
	}
}

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
	 * ends when the answer arrived, not when the tick came, and for the wire clock.
	 */
	if (w->rx_filter &&
	    dv_rxstamp_attach(&w->rxs, fd, &w->socks[global_index - w->share.first_sock].cookie) !=
	        0)
		rx_filter_off(w, global_index - w->share.first_sock);
	if (w->wire) {
		rc = stamp_flags(w, fd, true);
		if (rc != 0) {
			close(fd);
			return dv_err_set(err, rc,
			                  "cannot ask for kernel timestamps (--clock wire): %s",
			                  strerror(-rc));
		}
	} else if (w->coalesce) {
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	}
	if (w->by_client && cfg->client_base.ss_family != AF_UNSPEC) {
		rc = bind_client(fd, cfg, global_index, err);
		if (rc != 0) {
			close(fd);
			return rc;
		}
	} else if (cfg->local.ss_family != AF_UNSPEC || cfg->local_port != 0) {
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
			return dv_err_set(err, rc,
			                  "cannot bind socket %u to the local address%s: %s",
			                  global_index + 1, cfg->local_port ? " and port" : "",
			                  sock_error(-rc, cfg->local_port ? DV_SW_AT_SOCKET
			                                                  : DV_SW_AT_BIND_PORT0));
		}
	}
	if (connect(fd, (const struct sockaddr *)&cfg->server, cfg->server_len) != 0) {
		rc = -errno;
		close(fd);
		return dv_err_set(err, rc, "cannot connect socket %u to the server: %s",
		                  global_index + 1, sock_error(-rc, DV_SW_AT_CONNECT));
	}
	*out_fd = fd;
	return 0;
}

static void on_timer(uv_timer_t *t);

/* The receive-stamp filter's word of id: armed for socket s, or back to idle. rx_set keeps
 * which words may not be idle (the filter writes only armed words), so an ID sent outside
 * the sample is disarmed, and its answer read, without touching the 512 KiB of words. */
static inline bool rx_maybe(const dv_worker_t *w, uint16_t id)
{
	return (w->rx_set[id / 64] & (1ULL << (id % 64))) != 0;
}

static void rx_arm(dv_worker_t *w, uint16_t id, const dv_sock_t *s)
{
	dv_rxstamp_arm(&w->rxs, id, s->cookie);
	w->rx_set[id / 64] |= 1ULL << (id % 64);
}

static void rx_disarm(dv_worker_t *w, uint16_t id)
{
	dv_rxstamp_disarm(&w->rxs, id);
	w->rx_set[id / 64] &= ~(1ULL << (id % 64));
}

/*
 * The wire clock's sample of the k datagrams about to go out on s in one sendmmsg: each
 * draws whether it asks for a transmit stamp (a control message; none when every query
 * asks, the socket then asks for all). With the receive-stamp filter, a sampled query's ID
 * is armed now, before the send (its answer may come before sendmmsg returns); any other
 * ID's word is made idle (a query that expired leaves its word armed). A worker that
 * reads on ticks arms every query: its answers are read up to a tick after they came,
 * and the receive stamp keeps what is measured from the arrival exact for all of them
 * (latency from the intended send, late or lost), not only for the sample.
 */
static void tx_sample(dv_worker_t *w, dv_sock_t *s, unsigned k)
{
	dv_batch_t *b = tl_batch;
	unsigned i;

	for (i = 0; i < k; i++) {
		bool ask = dv_sampler_take(&w->sampler);
		b->asked[i] = ask;
		if (w->stamp_every > 1) {
			b->smsg[i].msg_hdr.msg_control = ask ? b->ask.buf : NULL;
			b->smsg[i].msg_hdr.msg_controllen = ask ? sizeof(b->ask.buf) : 0;
		}
		if (w->rx_filter) {
			uint16_t id = dv_wire_get16(b->sbuf[i]);
			if (ask || w->coalesce)
				rx_arm(w, id, s);
			else if (rx_maybe(w, id))
				rx_disarm(w, id);
		}
	}
}

static void drain_tx_stamps(dv_worker_t *w, dv_sock_t *s, int64_t wall_minus_mono);

/*
 * The first r of k sampled datagrams were accepted by the kernel on s: those that asked
 * took the next stamp keys. On loopback their stamps are already on the error queue
 * (made inside sendmmsg): a worker whose sockets epoll watches reads them now, before
 * epoll reports the queue (EPOLLERR, which libuv answers by stopping and restarting the
 * poll handle). The others (direct mode, ticks) are on no wait queue: do_recv_wait
 * reads them before the answers, one drain for all of a turn's sends. When the kernel
 * refused datagram r and it had asked, the key it may have taken is unknown (kernels
 * before the tskey fix of __ip_append_data kept it on an error): restart the kernel's
 * count, after reading what it stamped under the old one.
 */
static void tx_sent(dv_worker_t *w, dv_sock_t *s, unsigned r, unsigned k)
{
	dv_batch_t *b = tl_batch;
	unsigned i, asked = 0;

	for (i = 0; i < r; i++)
		if (b->asked[i]) {
			dv_txmap_sent(&s->tx, &w->eng.win, dv_wire_get16(b->sbuf[i]));
			asked++;
		}
	for (i = r; w->rx_filter && i < k; i++) /* not sent: no answer to stamp */
		if (b->asked[i] || w->coalesce)
			rx_disarm(w, dv_wire_get16(b->sbuf[i]));
	w->eng.stats.c.stamps_asked += asked;
	if ((asked > 0 && !w->direct && !w->coalesce) || (r < k && b->asked[r]))
		drain_tx_stamps(w, s, dv_wall_minus_mono_ns());
	if (r < k && b->asked[r] && stamp_flags(w, s->fd, false) == 0 &&
	    stamp_flags(w, s->fd, true) == 0)
		dv_txmap_restart(&s->tx);
}

/* Read the kernel's software stamp (ts[0]) or SCM_TIMESTAMPNS of h as realtime ns; 0 if none. */
static int64_t cmsg_stamp(struct msghdr *h, uint32_t *key, bool *have_key)
{
	struct cmsghdr *c;
	int64_t t = 0;

	for (c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    (c->cmsg_type == SCM_TIMESTAMPNS || c->cmsg_type == SCM_TIMESTAMPING)) {
			struct timespec ts; /* the first timespec of either */
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			t = (int64_t)ts.tv_sec * (int64_t)DV_NS_PER_S + ts.tv_nsec;
		} else if (key != NULL &&
		           ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
		            (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR))) {
			struct sock_extended_err ee;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_errno == ENOMSG && ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING &&
			    ee.ee_info == SCM_TSTAMP_SND) {
				*key = ee.ee_data;
				*have_key = true;
			}
		}
	}
	return t;
}

/* Take every transmit stamp waiting on s's error queue (wire clock). */
static void drain_tx_stamps(dv_worker_t *w, dv_sock_t *s, int64_t wall_minus_mono)
{
	dv_batch_t *b = tl_batch;
	int r, i;

	do {
		for (i = 0; i < DV_BATCH; i++)
			b->emsg[i].msg_hdr.msg_controllen = sizeof(b->ectl[i].buf);
		r = recvmmsg(s->fd, b->emsg, DV_BATCH, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
		w->eng.stats.c.recv_calls++;
		for (i = 0; i < r; i++) {
			uint32_t key = 0;
			bool have_key = false;
			int64_t t = cmsg_stamp(&b->emsg[i].msg_hdr, &key, &have_key);
			if (!have_key)
				continue;
			uint16_t id = dv_txmap_take(&s->tx, key);
			if (t > 0 && t - wall_minus_mono > 0)
				dv_engine_tx_stamp(&w->eng, s->index, id, key,
				                   (uint64_t)(t - wall_minus_mono));
		}
	} while (r == DV_BATCH);
}

static void publish(dv_worker_t *w);
static void after_io(void *ctx);
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

/* Replay (run_config.h): a timed list paces itself at its schedule's rate; clients. */
static void replay_setup(dv_worker_t *w)
{
	const dv_querylist_t *ql = w->ql;

	w->due.fd = -1;
	w->scheduled = w->cfg->timing_original && ql->ts_ns != NULL && ql->period_ns > 0;
	if (w->scheduled)
		w->share.rate_qps = (double)ql->count * 1e9 * w->cfg->speed /
		                    (double)ql->period_ns / w->cfg->threads;
	w->by_client = ql->client != NULL && ql->clients > 0;
}

/* --xdp: this worker's XDP socket, sending from its sockets' ports (engine/xdp.h). */
static int xdp_open(dv_worker_t *w, dv_err_t *err)
{
	int *fds = calloc(w->share.nsocks, sizeof(*fds)), rc;
	uint32_t i;

	if (fds == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < w->share.nsocks; i++)
		fds[i] = w->socks[i].fd;
	rc = dv_xw_open(&w->xw, w->xdp, w->id, fds, w->share.nsocks, err);
	free(fds);
	return rc;
}

int dv_worker_open(dv_worker_t *w, dv_err_t *err)
{
	uint32_t i;
	int rc;

	pthread_mutex_init(&w->snap_lock, NULL);
	replay_setup(w);
	/*
	 * Paced runs collect answers on the pacer's ticks (at most 1 ms apart) when the
	 * window holds at least 4 ms' worth of queries (so ticks never starve it); otherwise,
	 * and always while draining, each answer wakes the loop.
	 */
	w->coalesce = !w->cfg->stream && w->share.rate_qps >= 1000 &&
	              (double)w->share.capacity >= 4 * w->share.rate_qps / 1000;
	/*
	 * One socket and no pacing: wait for answers in recvmmsg itself, like a
	 * blocking client. The socket is then on no epoll wait queue, so the kernel
	 * makes no wake-up call for each datagram sent or received, and a turn costs
	 * two system calls (sendmmsg, recvmmsg) instead of three.
	 */
	w->direct = !w->cfg->stream && w->share.rate_qps <= 0 && w->share.nsocks == 1;
	/* The clock (--clock): auto is the wire clock on UDP sockets (doc/performance.md). */
	w->wire = !w->cfg->stream && w->cfg->clock != DV_CLOCK_APP;
	/* The sample (run_config.h's rule: every query paced, with -v or --latency-histogram,
	 * or in a short pass). */
	w->stamp_every = dv_run_stamp_every(w->cfg, w->share.rate_qps, w->share.end_seq);
	dv_sampler_init(&w->sampler,
	                0x64766f6c6c657921ULL ^ ((uint64_t)w->share.first_sock << 32) ^ w->id,
	                w->stamp_every);
	if (w->xdp != NULL) { /* --xdp: direct turns on the XDP socket; no kernel stamps */
		w->xdp_tick = w->coalesce; /* the same rule: the window holds 4 ms of queries */
		w->coalesce = w->wire = false;
		w->direct = true;
	}
	/* Receive stamps for the sample only, by the socket filter, where it loads (root or
	 * CAP_BPF, built with libbpf); else from every answer's control message. */
	w->rx_filter = w->wire && !w->cfg->no_rx_filter && dv_rxstamp_open(&w->rxs) == 0;
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
	for (i = 0; !w->cfg->stream && i < w->share.nsocks; i++) {
		rc = open_socket(w, w->share.first_sock + i, &w->socks[i].fd, err);
		if (rc != 0)
			return rc;
		w->socks[i].w = w;
		w->socks[i].index = (uint16_t)i;
		if (w->wire && dv_txmap_init(&w->socks[i].tx, w->share.capacity) != 0)
			return dv_err_set(err, -ENOMEM, "out of memory");
	}
	if (w->xdp != NULL) {
		rc = xdp_open(w, err);
		if (rc != 0)
			return rc;
	}
	rc = dv_engine_init(&w->eng, w->ql, w->share.capacity, w->cfg->timeout_ns,
	                    w->share.first_seq, w->share.step, w->share.end_seq);
	if (rc != 0)
		return dv_err_set(err, rc, "cannot set up the outstanding-query window: %s",
		                  strerror(-rc));
	if (w->coalesce) {
		rc = dv_window_count_sockets(&w->eng.win, w->share.nsocks);
		if (rc != 0)
			return dv_err_set(err, rc, "cannot count queries per socket: %s",
			                  strerror(-rc));
	}
	if (w->cfg->verbose)
		w->eng.verbose = w->cfg->out != NULL ? w->cfg->out : stdout;
	w->eng.wire = w->wire;
	if (w->cfg->stream || w->cfg->tc_tcp) {
		dv_sw_host_t h = {.loop = &w->loop,
		                  .eng = &w->eng,
		                  .cfg = w->cfg,
		                  .ql = w->ql,
		                  .conns = w->share.nsocks,
		                  .first_conn = w->share.first_sock,
		                  .capacity = w->share.capacity,
		                  .pacer = &w->pacer,
		                  .sending = &w->sending,
		                  .drain_end_ns = &w->drain_end_ns,
		                  .rc = &w->rc,
		                  .err = w->err,
		                  .err_len = sizeof(w->err),
		                  .after_io = after_io,
		                  .ctx = w};
		return w->cfg->stream ? dv_sw_open(&w->sw, &h, err)
		                      : dv_sw_open_tc(&w->tc, &h, err);
	}
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

/*
 * A list with clients: the socket of the next query's client, and *n cut to the
 * run of queries of that client (one sendmmsg goes out of one socket). NULL when
 * that socket waits to be writable.
 */
static dv_sock_t *client_socket(dv_worker_t *w, uint64_t *n)
{
	const dv_querylist_t *ql = w->ql;
	uint64_t seq = w->eng.next_seq, step = w->eng.step, k;
	uint32_t c = ql->client[seq % ql->count];
	dv_sock_t *s = &w->socks[c % w->share.nsocks];

	for (k = 1; k < *n && seq + k * step < w->eng.end_seq &&
	            ql->client[(seq + k * step) % ql->count] == c;
	     k++)
		;
	*n = k;
	return s->want_write ? NULL : s;
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

static void start_pacing(dv_worker_t *w, uint64_t now);

/*
 * Stream transports, paced: the schedule (and -l) starts once a connection takes
 * queries, or -t after the pass started if none does, so the connect and TLS set-up
 * (reported apart) do not make the first queries late. True once started.
 */
static bool pace_begin(dv_worker_t *w, uint64_t now)
{
	if (!dv_sw_up(w->sw) && now < w->pace_wait_end_ns)
		return false;
	w->pace_pending = false;
	start_pacing(w, now);
	if (w->cfg->time_limit_ns)
		w->send_end_ns = now + w->cfg->time_limit_ns;
	return true;
}

/* Send as much as the window, the pacer and the list allow, in batches. */
static void pump(dv_worker_t *w, uint64_t now)
{
	dv_batch_t *b = tl_batch;
	unsigned round;
	uint64_t pace_now;

	if (!w->sending || (w->pace_pending && !pace_begin(w, now)))
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
		if (w->sw != NULL) { /* stream transports: connections instead of sendmmsg */
			k = dv_sw_send(w->sw, now, (unsigned)n);
			if (w->share.rate_qps > 0)
				dv_pacer_take(&w->pacer, k);
			if (k == 0)
				break;
			continue;
		}
		s = w->by_client ? client_socket(w, &n) : pick_socket(w);
		if (s == NULL)
			break;
		k = dv_engine_prepare(&w->eng, s->index, now, (unsigned)n, b->sbuf, b->slen);
		for (i = 0; i < k; i++)
			b->siov[i].iov_len = b->slen[i];
		if (w->wire)
			tx_sample(w, s, k);
		if (w->share.rate_qps > 0) /* the schedule's time of each: query issued + i */
			for (i = 0; i < k; i++)
				w->eng.win.slot[dv_wire_get16(b->sbuf[i])].intended_ns =
				    dv_pacer_due_ns(&w->pacer, w->pacer.issued + i);
		if (w->xw != NULL) { /* --xdp: frames on the ring; the call to send is its own */
			r = (int)dv_xw_send(w->xw, &w->eng, s->index, b->sbuf, b->slen, k);
		} else {
			r = sendmmsg(s->fd, b->smsg, k, MSG_DONTWAIT);
			w->eng.stats.c.send_calls++;
		}
		if (r < 0) {
			err = errno;
			r = 0;
		} else if ((unsigned)r < k) {
			err = EINTR; /* the kernel stopped early without an error code: retry */
		}
		before = w->eng.stats.c.sent + w->eng.stats.c.not_sent;
		if (w->wire)
			tx_sent(w, s, (unsigned)r, k);
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
	if (w->tc != NULL)
		dv_sw_send_retries(w->tc, now);
	if (dv_engine_list_done(&w->eng) || now >= w->send_end_ns)
		end_sending(w, now, w->cfg->timeout_ns);
}

/*
 * Monotonic arrival time of a received datagram from its kernel receive stamp
 * (*stamped true), else now.
 */
static uint64_t arrival_ns(struct msghdr *h, int64_t wall_minus_mono, uint64_t now, bool *stamped)
{
	int64_t t = cmsg_stamp(h, NULL, NULL), mono = t - wall_minus_mono;

	/* A stepped wall clock must not produce times from the future. */
	*stamped = t > 0 && mono > 0 && (uint64_t)mono <= now;
	return *stamped ? (uint64_t)mono : now;
}

/*
 * One datagram (len octets at buf, truncated: larger than the buffer) read from s at now,
 * its receive stamp from the filter's word of its DNS ID. The word is settled after the
 * engine took it: a stamp was this answer's, or it may be this datagram's (another
 * datagram with the ID: a duplicate, a late or forged answer, one on another socket) and
 * then belongs to nobody: idle again, the slot's answer, when it comes, is left untimed
 * rather than timed by a wrong stamp. An armed word whose slot is no longer in flight
 * has no answer to wait for.
 */
static void receive_filtered(dv_worker_t *w, dv_sock_t *s, const uint8_t *buf, size_t len,
                             bool truncated, uint64_t now)
{
	uint16_t id = len >= 2 ? dv_wire_get16(buf) : 0;
	uint64_t v = len >= 2 && rx_maybe(w, id) ? dv_rxstamp_peek(&w->rxs, id) : 0;
	uint64_t completed = w->eng.stats.c.completed;

	w->eng.rx_stamped = dv_rxstamp_is_stamp(v) && v <= now;
	if (truncated)
		w->eng.stats.c.malformed++; /* larger than any UDP datagram */
	else
		dv_engine_receive(&w->eng, s->index, buf, len, true, w->eng.rx_stamped ? v : now);
	if (dv_rxstamp_is_stamp(v) && w->eng.stats.c.completed == completed)
		w->eng.stats.c.rx_stamps_unused++; /* not the answer it was armed for */
	if (v != 0 && (dv_rxstamp_is_stamp(v) || w->eng.win.slot[id].state != DV_SLOT_INFLIGHT))
		rx_disarm(w, id);
}

/* A failed receive: count the ICMP error it reports, by kind. */
static void count_recv_error(dv_worker_t *w, int e)
{
	w->eng.stats.c.icmp_errors++;
	if (e == ECONNREFUSED)
		w->eng.stats.c.icmp_port_unreachable++;
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
	/* Stamps still to come (a NIC stamps later than loopback): before the answers they time */
	if (w->wire && s->tx.pending > 0)
		drain_tx_stamps(w, s, dv_wall_minus_mono_ns());
	for (round = 0; round < DV_RECV_ROUNDS; round++) {
		int r, i;
		uint64_t now;
		int64_t offset;

		for (i = 0; i < DV_BATCH; i++) /* the filter's runs take no control data */
			b->rmsg[i].msg_hdr.msg_controllen =
			    w->rx_filter ? 0 : sizeof(b->rctl[i].buf);
		r = recvmmsg(s->fd, b->rmsg, DV_BATCH,
		             wait && round == 0 ? MSG_WAITFORONE : MSG_DONTWAIT, NULL);
		w->eng.stats.c.recv_calls++;
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			/* A pending ICMP error (port unreachable...) is reported once, here. */
			count_recv_error(w, errno);
			continue;
		}
		now = dv_now_ns();
		/* Only the kernel's realtime stamps need it (the filter's are monotonic). */
		offset = dv_worker_kernel_rx_stamps(w) ? dv_wall_minus_mono_ns() : 0;
		for (i = 0; i < r; i++) {
			if (w->rx_filter) {
				receive_filtered(
				    w, s, b->rbuf + (size_t)i * DV_RECV_BUF, b->rmsg[i].msg_len,
				    (b->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC) != 0, now);
				continue;
			}
			if (b->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC) {
				w->eng.stats.c.malformed++; /* larger than any UDP datagram */
				continue;
			}
			uint64_t at =
			    arrival_ns(&b->rmsg[i].msg_hdr, offset, now, &w->eng.rx_stamped);
			dv_engine_receive(&w->eng, s->index, b->rbuf + (size_t)i * DV_RECV_BUF,
			                  b->rmsg[i].msg_len, true, at);
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
 * Coalesced receiving (paced runs): on the pacer's ticks, read each socket that
 * has queries in flight (the window counts them per socket); the kernel's
 * receive timestamps keep the latencies exact. Meanwhile no socket is on any
 * epoll wait queue, so the kernel makes no wake-up call for each query's
 * transmit stamp, each answer or each freed send buffer: 5-12% less CPU per
 * query at -Q 20000 than a private epoll set polled on the ticks
 * (doc/performance.md).
 * A socket with nothing in flight is read once it sends again, or in the drain.
 */
static void coalesced_recv(dv_worker_t *w)
{
	const uint32_t *out = w->eng.win.per_sock;
	uint32_t i;

	for (i = 0; out != NULL && i < w->share.nsocks; i++)
		if (out[i] > 0)
			do_recv(w, &w->socks[i]);
}

static void close_all(dv_worker_t *w);
static void reschedule(dv_worker_t *w, uint64_t now);

/*
 * The pass is over: read once more every UDP socket of the worker, without waiting, so
 * what reached them during the pass is counted (a duplicate queued behind an answer
 * already read, on a socket the last answer did not come on, went unread when the last
 * answer ended the pass: CI under load counted 1,426 of 1,428 duplicates).
 */
static void sweep(dv_worker_t *w)
{
	uint32_t i;

	if (w->interrupted || w->sw != NULL || w->xdp != NULL)
		return;
	for (i = 0; i < w->share.nsocks; i++)
		if (w->socks[i].fd >= 0)
			do_recv(w, &w->socks[i]);
}

/* True (and everything closed) when the pass is over for this worker. */
static bool maybe_finish(dv_worker_t *w, uint64_t now)
{
	if (w->sending)
		return false;
	if (w->eng.win.inflight > 0 && now < w->drain_end_ns)
		return false;
	/* --tc-tcp: retries asked during the drain get their own timeout, once */
	if (w->tc != NULL && dv_sw_busy(w->tc) && !w->interrupted &&
	    now < w->drain_end_ns + w->cfg->timeout_ns)
		return false;
	sweep(w);
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
	if (w->sw != NULL)
		dv_sw_turn(w->sw, now); /* expires first, keeping the per-connection counts */
	if (w->tc != NULL) {
		dv_sw_turn(w->tc, now);
		dv_sw_send_retries(w->tc, now);
	}
	dv_engine_expire(&w->eng, now);
	pump(w, now);
	if (now >= w->next_publish_ns) {
		publish(w);
		w->next_publish_ns = now + DV_PUBLISH_NS;
	}
	return maybe_finish(w, now);
}

/* --xdp: how long a turn may wait for answers: DV_DIRECT_WAIT_US, or until the next
 * paced query is due when the window has room for it. */
static uint64_t xdp_wait_ns(dv_worker_t *w, uint64_t now)
{
	uint64_t wait = DV_DIRECT_WAIT_US * DV_NS_PER_US, due;

	if (w->sending && w->share.rate_qps > 0 && dv_engine_sendable(&w->eng) > 0) {
		due = dv_pacer_next_due_ns(&w->pacer);
		wait = due > now ? DV_MIN(wait, due - now) : 0;
	}
	return wait;
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
		if (w->xw != NULL)
			dv_xw_recv(w->xw, &w->eng, xdp_wait_ns(w, now), w->xdp_tick && w->sending);
		else
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

/* Stream transports: after a connection's I/O, as on_poll does after a socket's. */
static void after_io(void *ctx)
{
	dv_worker_t *w = ctx;
	uint64_t now = dv_now_ns();

	check_stop(w, now);
	pump(w, now);
	if (maybe_finish(w, now))
		return;
	reschedule(w, now);
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
		/* The wire clock: a stamp nobody waits for any more (pending 0) would raise
		 * EPOLLERR again and again until read. */
		if (w->wire && s->tx.pending == 0)
			drain_tx_stamps(w, s, dv_wall_minus_mono_ns());
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

static void on_due(void *data)
{
	dv_worker_t *w = data;

	on_timer(&w->timer);
}

static uint64_t armed_due_ns(const dv_worker_t *w)
{
	return uv_is_active((const uv_handle_t *)&w->timer) ? uv_timer_get_due_in(&w->timer)
	                                                    : UINT64_MAX;
}

static void reschedule(dv_worker_t *w, uint64_t now)
{
	uint64_t next = w->next_publish_ns, delay_ms, due_ms;
	bool due_armed = false;

	if (w->sending && w->pace_pending) {
		next = DV_MIN(next, w->pace_wait_end_ns); /* or a connection's event, sooner */
	} else if (w->sending) {
		next = DV_MIN(next, w->send_end_ns);
		if (w->share.rate_qps > 0 && dv_engine_sendable(&w->eng) > 0) {
			uint64_t due = dv_pacer_next_due_ns(&w->pacer);
			if (!w->scheduled) /* -Q: a tick, not a wake per query */
				due = DV_MAX(due, now + w->pace_tick_ns);
			if (w->due.fd >= 0) { /* to the microsecond */
				dv_duetimer_arm(&w->due, due);
				due_armed = due <= now + DV_NS_PER_MS;
			} else {
				next = DV_MIN(next, due);
			}
		}
	} else {
		next = DV_MIN(next, w->drain_end_ns);
	}
	next = DV_MIN(next, dv_engine_next_deadline(&w->eng));
	if (w->sw != NULL)
		next = DV_MIN(next, dv_sw_next_due(w->sw));
	if (w->tc != NULL)
		next = DV_MIN(next, DV_MIN(dv_sw_next_due(w->tc),
		                           dv_engine_next_deadline(dv_sw_engine(w->tc))));
	/* Collect answers every tick: the due timer's, when it wakes within the tick. */
	if (w->coalesce && w->eng.win.inflight > 0 && !due_armed)
		next = DV_MIN(next, now + DV_NS_PER_MS);
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
	dv_duetimer_close(&w->due);
	/* w->wake stays open (unreferenced) until dv_worker_cleanup: main may still send to it. */
	if (w->tc != NULL)
		dv_sw_close(w->tc);
	if (w->direct) {
		uv_close((uv_handle_t *)&w->idle, NULL);
		return;
	}
	if (w->sw != NULL)
		dv_sw_close(w->sw);
	for (i = 0; w->sw == NULL && i < w->share.nsocks; i++)
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

/* What the kernel dropped at this worker's sockets (full receive buffers), from SO_MEMINFO. */
static void count_client_drops(dv_worker_t *w)
{
	uint32_t i;

	for (i = 0; i < w->share.nsocks; i++) {
		uint32_t mem[SK_MEMINFO_VARS];
		socklen_t len = sizeof(mem);
		if (w->socks[i].fd < 0) /* a stream run's slots: its connections are its own */
			continue;
		memset(mem, 0, sizeof(mem));
		if (getsockopt(w->socks[i].fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
		    len > SK_MEMINFO_DROPS * sizeof(uint32_t))
			w->eng.stats.c.client_drops += mem[SK_MEMINFO_DROPS];
	}
	w->eng.stats.c.client_drops += dv_xw_drops(w->xw); /* --xdp: its rings' drops */
}

/*
 * The pacer at the start of sending: a replay's schedule, or -Q's rate (and a ramp).
 * Paced, every query keeps its intended send time (latency_intended, sent_behind): pump
 * sets it for UDP batches, dv_sw_send (send_on) for stream connections.
 */
static void start_pacing(dv_worker_t *w, uint64_t now)
{
	if (w->scheduled) {
		dv_pacer_init_schedule(&w->pacer, w->ql->ts_ns, w->ql->count, w->ql->period_ns,
		                       w->cfg->speed, w->share.first_seq, w->share.step,
		                       w->share.end_seq, now);
		w->eng.paced = true;
	} else if (w->share.rate_qps > 0) {
		/*
		 * Catch up at most 1 s of schedule after a stall (a busy machine can
		 * deschedule us for tens of ms); the window still bounds any burst.
		 */
		uint64_t backlog = (uint64_t)(w->share.rate_qps * 1.0);
		dv_pacer_init(&w->pacer, w->share.rate_qps, now, DV_MAX(backlog, DV_BATCH));
		dv_pacer_set_ramp(&w->pacer, w->cfg->ramp_ns);
		w->eng.paced = true;
	}
}

/* -m tcp|dot|doh, --tc-tcp: open the connections as the pass starts. */
static void start_streams(dv_worker_t *w, uint64_t now)
{
	if (w->sw != NULL)
		dv_sw_start(w->sw, now);
	if (w->tc != NULL)
		dv_sw_start(w->tc, now);
}

/* The pass is over: what is still in flight, --tc-tcp's retries, the sockets' drops. */
static void finish_counts(dv_worker_t *w)
{
	dv_engine_finish(&w->eng, w->interrupted);
	if (w->tc != NULL)
		dv_sw_finish(w->tc, w->interrupted);
	w->eng.stats.c.forfeited = w->pacer.forfeited;
	count_client_drops(w);
}

/* The thread's batch buffers (one allocation, its iovecs pointing into it); NULL: no memory. */
static dv_batch_t *batch_new(void)
{
	dv_batch_t *b = calloc(1, sizeof(*b));
	uint32_t i;

	if (b != NULL)
		b->rbuf = malloc((size_t)DV_BATCH * DV_RECV_BUF);
	if (b == NULL || b->rbuf == NULL) {
		free(b);
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
		b->emsg[i].msg_hdr.msg_control = b->ectl[i].buf;
	}
	{
		struct cmsghdr *c = &b->ask.align;
		uint32_t tx = SOF_TIMESTAMPING_TX_SOFTWARE;
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SO_TIMESTAMPING;
		c->cmsg_len = CMSG_LEN(sizeof(tx));
		memcpy(CMSG_DATA(c), &tx, sizeof(tx));
	}
	return b;
}

/* The loop's handles: timer, prepare, due timer, idle or polls. */
static void loop_setup(dv_worker_t *w)
{
	uint32_t i;

	uv_timer_init(&w->loop, &w->timer);
	w->timer.data = w;
	uv_prepare_init(&w->loop, &w->prepare);
	w->prepare.data = w;
	uv_prepare_start(&w->prepare, on_prepare);
	if (w->share.rate_qps > 0) {
		double tick = DV_PACE_PER_WAKE * 1e9 / w->share.rate_qps;
		w->pace_tick_ns = (uint64_t)DV_MIN(DV_MAX(tick, (double)DV_PACE_TICK_MIN_NS),
		                                   (double)DV_PACE_TICK_MAX_NS);
	}
	if (w->share.rate_qps > 0 && dv_duetimer_init(&w->due, &w->loop, on_due, w) != 0)
		w->due.fd = -1; /* no timerfd: the millisecond timer paces it */
	if (w->direct) {
		uv_idle_init(&w->loop, &w->idle);
		w->idle.data = w;
		uv_idle_start(&w->idle, on_direct);
	}
	for (i = 0; !w->direct && w->sw == NULL && i < w->share.nsocks; i++) {
		uv_poll_init(&w->loop, &w->socks[i].poll, w->socks[i].fd);
		w->socks[i].events = 0;
		set_events(&w->socks[i], sock_events(w, &w->socks[i]));
	}
}

/* The start barrier opened: the clock starts, the schedule with it; first sends. */
static void pass_start(dv_worker_t *w, uint64_t now)
{
	w->t0_ns = now;
	if (w->cfg->interval_ns > 0)
		dv_engine_track_intervals(&w->eng, w->gate->t0_ns, w->cfg->interval_ns);
	w->send_end_ns = w->cfg->time_limit_ns ? now + w->cfg->time_limit_ns : UINT64_MAX;
	w->next_publish_ns = now + DV_PUBLISH_NS;
	w->sending = true;
	w->drain_end_ns = UINT64_MAX;
	w->pace_pending = w->sw != NULL && w->share.rate_qps > 0;
	w->pace_wait_end_ns = now + w->cfg->timeout_ns;
	if (!w->pace_pending)
		start_pacing(w, now);
	start_streams(w, now);
	check_stop(w, now);
	pump(w, now);
	if (!maybe_finish(w, now))
		reschedule(w, now);
}

static void *worker_main(void *arg)
{
	dv_worker_t *w = arg;
	dv_batch_t *b = batch_new();

	if (b == NULL) {
		w->rc = -ENOMEM;
		snprintf(w->err, sizeof(w->err), "out of memory");
		gate_wait(w->gate);
		atomic_store(&w->finished, 1);
		uv_async_send(w->done_async);
		return NULL;
	}
	tl_batch = b;
	loop_setup(w);
	if (gate_wait(w->gate) < 0) {
		close_all(w);
		uv_run(&w->loop, UV_RUN_DEFAULT);
	} else {
		pass_start(w, dv_now_ns());
		uv_run(&w->loop, UV_RUN_DEFAULT);
		finish_counts(w);
	}
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
	if (rc == 0)
		dv_xw_pin(w->xw, w->thread); /* --xdp -T over 1: its queue's CPU (engine/xdp.h) */
	return rc == 0 ? 0 : -rc;
}

void dv_worker_cleanup(dv_worker_t *w)
{
	uint32_t i;

	if (w->socks != NULL) {
		for (i = 0; i < w->share.nsocks; i++) {
			if (w->socks[i].fd >= 0)
				close(w->socks[i].fd);
			dv_txmap_free(&w->socks[i].tx);
		}
		free(w->socks);
		w->socks = NULL;
	}
	dv_xw_close(w->xw);
	dv_rxstamp_close(&w->rxs); /* after its sockets: they hold the program too */
	w->xw = NULL;
	dv_engine_free(&w->eng);
	if (w->loop_ok) {
		if (w->wake.loop != NULL)
			uv_close((uv_handle_t *)&w->wake, NULL);
		uv_run(&w->loop, UV_RUN_DEFAULT);
		uv_loop_close(&w->loop);
		w->loop_ok = false;
	}
	dv_sw_free(w->sw); /* after the loop closed its handles */
	w->sw = NULL;
	dv_sw_free(w->tc);
	w->tc = NULL;
	pthread_mutex_destroy(&w->snap_lock);
}
