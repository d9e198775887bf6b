/* responder xsk: dnsvolley-responder --xdp IFACE: full answers through AF_XDP sockets. */
#include "config.h"

#include "responder/xsk.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "base/netframe.h"
#include "base/xdpload.h"
#include "base/xsk.h"
#include "responder/xdp_counts.h"
#include "responder/xdp_xsk_obj.h"

/*
 * Shape: the socket responder's (responder.c), one thread per XDP socket with its own
 * UMEM, sequences and counts, summed after join. A turn of the loop: take back the
 * transmit frames the kernel is done with; send the held answers that are due; read at
 * most as many queries as there are free transmit frames for their answers (two each:
 * --duplicate-every), so an answer always has a frame and what the responder cannot keep
 * up with waits in the receive ring, then is dropped and counted by the kernel
 * (rx_ring_full, fill ring empty): memory never grows. Each answer is built straight into
 * its transmit frame, after the headers of the datagram back (addresses and ports
 * swapped, lengths and checksums new); the query's frame goes back to the fill ring at
 * once.
 *
 * --capacity and --delay (held mode): an answer's transmit frame waits in a FIFO until it
 * is due (dv_responder_admit, the socket threads' rule), then goes out. --capacity times
 * a query from its arrival, the stamp the program put before its frame (base/xdp_meta.h),
 * as the socket threads take the kernel's, so a thread that was descheduled does not see
 * a burst; a frame without one (a driver without room for metadata), and --delay, from
 * its batch's read. A thread reads on while its frames
 * are held: a query that finds fewer than two free transmit frames is dropped and counted,
 * as the socket threads' full hold queue drops it (the FIFO holds as many as there are
 * transmit frames, DV_XSK_RING).
 */

/* An answer (or its duplicate) waiting in its transmit frame until due. */
typedef struct rxsk_held {
	uint64_t due_ns, addr;
	uint32_t len;
	uint8_t kind;
} rxsk_held_t;

typedef struct rxsk_worker {
	struct dv_rxsk *r;
	dv_xsk_t s;
	pthread_t tid;
	bool started;
	dv_responder_seq_t seq;
	dv_responder_counts_t c;
	uint64_t ports[65536 / 64];
	uint64_t out_addr[2 * DV_XSK_BATCH];
	uint32_t out_len[2 * DV_XSK_BATCH];
	uint8_t out_kind[2 * DV_XSK_BATCH];
	/* held mode: the FIFO (due order), the --capacity queue, an answer without a frame */
	rxsk_held_t held[DV_XSK_RING];
	unsigned hfirst, hcount;
	double busy_until_ns;
	uint64_t stamped;
	uint8_t scratch[DV_XSK_FRAME];
} rxsk_worker_t;

struct dv_rxsk {
	dv_xdp_prog_t prog;
	int xsks_fd;
	dv_responder_config_t cfg;
	bool held; /* --capacity or --delay */
	atomic_int stop;
	int stop_fd; /* an eventfd, readable once stopped: wakes the threads' ppoll */
	rxsk_worker_t **w;
	unsigned nw;
	bool joined;
};

static void hold(rxsk_worker_t *w, uint64_t due_ns, uint64_t addr, uint32_t len, uint8_t kind)
{
	rxsk_held_t *e = &w->held[(w->hfirst + w->hcount++) % DV_XSK_RING];

	e->due_ns = due_ns;
	e->addr = addr;
	e->len = len;
	e->kind = kind;
}

/*
 * A query frame's answer (and its duplicate) queued in out at k, or held until due; the
 * count of entries added to out. now_ns: when it arrived (held mode).
 */
static unsigned answer_frame(rxsk_worker_t *w, const uint8_t *p, size_t len, unsigned k,
                             uint64_t now_ns)
{
	const uint8_t *pl;
	size_t plen, h;
	dv_nf_flow_t f, back;
	uint64_t addr = 0, due = 0;
	uint8_t *out = w->scratch, kind, copies;
	bool framed = w->s.ntx_free >= 2; /* always, unless frames are held */
	int alen;

	if (dv_nf_parse(p, len, &f, &pl, &plen) != 0 || !dv_nf_ip4_csum_ok(p, &f)) {
		w->c.received++; /* steered to the port, but no whole datagram */
		w->c.malformed++;
		return 0;
	}
	w->ports[f.src_port >> 6] |= 1ULL << (f.src_port & 63);
	h = dv_nf_header_len(f.v6);
	if (framed) {
		addr = w->s.tx_free[--w->s.ntx_free];
		out = xsk_umem__get_data(w->s.area, addr);
	}
	alen = dv_responder_answer(&w->r->cfg, &w->seq, pl, plen, false, out + h, DV_XSK_FRAME - h,
	                           &w->c, &kind, &copies);
	if (alen > 0 && w->r->held &&
	    !dv_responder_admit(&w->r->cfg, w->r->nw, &w->busy_until_ns, now_ns, &due, &w->c))
		alen = 0; /* over --capacity: dropped, counted */
	if (alen > 0 && !framed) {
		w->c.dropped++; /* every frame held: as a full hold queue */
		return 0;
	}
	if (alen <= 0) {
		if (framed)
			w->s.tx_free[w->s.ntx_free++] = addr;
		return 0;
	}
	dv_nf_reverse(&f, &back);
	dv_nf_build(out, &back, (size_t)alen);
	if (w->r->held) {
		hold(w, due, addr, (uint32_t)(h + (size_t)alen), kind);
		if (copies > 1) {
			uint64_t dup = w->s.tx_free[--w->s.ntx_free];
			memcpy(xsk_umem__get_data(w->s.area, dup), out, h + (size_t)alen);
			hold(w, due, dup, (uint32_t)(h + (size_t)alen), DV_RESPONDER_DUPLICATE);
		}
		return 0;
	}
	w->out_addr[k] = addr;
	w->out_len[k] = (uint32_t)(h + (size_t)alen);
	w->out_kind[k] = kind;
	if (copies < 2)
		return 1;
	addr = w->s.tx_free[--w->s.ntx_free];
	memcpy(xsk_umem__get_data(w->s.area, addr), out, h + (size_t)alen);
	w->out_addr[k + 1] = addr;
	w->out_len[k + 1] = w->out_len[k];
	w->out_kind[k + 1] = DV_RESPONDER_DUPLICATE;
	return 2;
}

/* The k answers queued on the transmit ring (it has room: as many slots as frames). */
static void send_out(rxsk_worker_t *w, unsigned k)
{
	uint32_t idx = 0, i;
	bool ok = k > 0 && xsk_ring_prod__reserve(&w->s.tx, k, &idx) == k;

	for (i = 0; i < k; i++) {
		if (ok) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&w->s.tx, idx + i);
			d->addr = w->out_addr[i];
			d->len = w->out_len[i];
		} else {
			w->s.tx_free[w->s.ntx_free++] = w->out_addr[i];
		}
		dv_responder_count_sent(&w->c, w->out_kind[i], ok);
	}
	if (ok)
		xsk_ring_prod__submit(&w->s.tx, k);
	dv_xsk_kick_tx(&w->s);
}

/* Held mode: the held answers due by now_ns sent, a batch at a time. */
static void send_due(rxsk_worker_t *w, uint64_t now_ns)
{
	for (;;) {
		unsigned k = 0;

		while (k < 2 * DV_XSK_BATCH && w->hcount > 0 &&
		       w->held[w->hfirst].due_ns <= now_ns) {
			rxsk_held_t *e = &w->held[w->hfirst];
			w->out_addr[k] = e->addr;
			w->out_len[k] = e->len;
			w->out_kind[k++] = e->kind;
			w->hfirst = (w->hfirst + 1) % DV_XSK_RING;
			w->hcount--;
		}
		if (k == 0)
			return;
		send_out(w, k);
	}
}

/* Wait up to wait_ns (UINT64_MAX: no timeout) for events on the socket, or the stop too
 * with stop (ppoll: --delay's fractions of a ms). */
static void wait_fd(rxsk_worker_t *w, short events, uint64_t wait_ns, bool stop)
{
	struct pollfd pfd[2] = {{.fd = w->s.fd, .events = events},
	                        {.fd = w->r->stop_fd, .events = POLLIN}};
	struct timespec ts = {(time_t)(wait_ns / DV_NS_PER_S), (long)(wait_ns % DV_NS_PER_S)};

	ppoll(pfd, stop ? 2 : 1, wait_ns == UINT64_MAX ? NULL : &ts, NULL);
}

/* --capacity: when the frame at addr arrived, by its stamp if it has one (and it is not
 * in the future of now_ns, the batch's read), else now_ns. */
static uint64_t arrival(rxsk_worker_t *w, uint64_t addr, uint64_t now_ns)
{
	uint64_t t;

	if (w->r->cfg.capacity_qps <= 0)
		return now_ns;
	t = dv_xsk_rx_stamp(w->s.area, addr);
	if (t == 0 || t > now_ns)
		return now_ns;
	w->stamped++;
	return t;
}

/* One turn: the held answers due sent, the queries waiting (a batch at most) answered;
 * with none waiting and wait set, wait for some (until the first held answer is due, else
 * with no timeout: the stop wakes it). Returns the frames read. */
static uint32_t turn(rxsk_worker_t *w, bool wait)
{
	uint32_t idx = 0, n, i, budget;
	uint64_t now_ns = 0, wait_ns = UINT64_MAX;
	unsigned k;

	dv_xsk_reclaim(&w->s);
	if (w->r->held) {
		now_ns = dv_now_ns();
		send_due(w, now_ns);
		budget = DV_XSK_BATCH; /* a query without frames is dropped (answer_frame) */
	} else {
		budget = DV_MIN(DV_XSK_BATCH, w->s.ntx_free / 2);
	}
	if (budget == 0) { /* every transmit frame out: let the kernel send them */
		dv_xsk_kick_tx(&w->s);
		/* Not woken by the stop: the turns after it wait for these frames too. */
		wait_fd(w, POLLOUT, DV_NS_PER_MS, false);
		return 0;
	}
	n = xsk_ring_cons__peek(&w->s.rx, budget, &idx);
	if (n == 0) {
		dv_xsk_kick_rx(&w->s);
		if (w->hcount > 0) {
			uint64_t due = w->held[w->hfirst].due_ns;
			wait_ns = DV_MIN(wait_ns, due > now_ns ? due - now_ns : 0);
		}
		/* Answers still in the transmit ring (neither free nor held): in copy mode a
		 * kick, or a poll, sends a batch of them (the kernel's TX_BATCH_SIZE), so push on
		 * and look again within 1 ms; sleep without a timeout only when all are back. */
		if (DV_XSK_RING - w->s.ntx_free > w->hcount) {
			dv_xsk_kick_tx(&w->s);
			wait_ns = DV_MIN(wait_ns, DV_NS_PER_MS);
		}
		if (wait)
			wait_fd(w, POLLIN, wait_ns, true);
		return 0;
	}
	if (w->r->held)
		now_ns = dv_now_ns(); /* after the peek: no frame read arrived later */
	for (i = 0, k = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&w->s.rx, idx + i);
		k += answer_frame(w, xsk_umem__get_data(w->s.area, d->addr), d->len, k,
		                  arrival(w, d->addr, now_ns));
	}
	dv_xsk_rx_done(&w->s, idx, n);
	send_out(w, k);
	return n;
}

/* Until stopped; then what the receive ring holds is answered too (a bounded number of
 * turns: a flood that goes on is the kernel's to drop), so the counts cover every query
 * that reached the socket before the stop. */
static void *run(void *arg)
{
	rxsk_worker_t *w = arg;
	unsigned i;

	while (atomic_load_explicit(&w->r->stop, memory_order_relaxed) == 0)
		turn(w, true);
	for (i = 0; i < 2 * DV_XSK_RING / DV_XSK_BATCH; i++)
		if (turn(w, false) == 0 && (w->r->held || w->s.ntx_free >= 2))
			break;
	/* What is still held at stop was never answered: dropped, as the socket threads
	 * count it (duplicate copies aside: their answer's entry counts). */
	for (; w->hcount > 0; w->hcount--, w->hfirst = (w->hfirst + 1) % DV_XSK_RING)
		if (w->held[w->hfirst].kind != DV_RESPONDER_DUPLICATE)
			w->c.dropped++;
	return NULL;
}

int dv_rxsk_load(dv_xdp_prog_t *p, const char *ifname, uint16_t port, bool stamp, int *xsks_fd,
                 dv_err_t *err)
{
	struct dv_rxdp_conf conf;
	uint32_t zero = 0;
	int rc, conf_fd;

	rc = dv_xdp_prog_open(p, xdp_xsk_obj, xdp_xsk_obj_len, "dv_xsk", ifname, "--xdp", err);
	if (rc != 0)
		return rc;
	memset(&conf, 0, sizeof(conf));
	conf.port = port;
	conf.stamp = stamp;
	conf_fd = dv_xdp_prog_map(p, "conf");
	*xsks_fd = dv_xdp_prog_map(p, "xsks");
	if (conf_fd < 0 || *xsks_fd < 0 || bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY) != 0)
		return dv_err_set(err, -EINVAL, "--xdp: cannot configure the BPF program");
	return 0;
}

int dv_rxsk_open(dv_rxsk_t **out, const char *ifname, uint16_t port,
                 const dv_responder_config_t *cfg, dv_err_t *err)
{
	dv_rxsk_t *r = calloc(1, sizeof(*r));
	unsigned q, i;
	int rc = 0;

	*out = NULL;
	if (r == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->stop_fd < 0) {
		rc = -errno;
		free(r);
		return dv_err_set(err, rc, "--xdp: eventfd: %s", strerror(-rc));
	}
	r->prog.link_fd = -1;
	r->cfg = *cfg;
	r->held = cfg->capacity_qps > 0 || cfg->delay_ns > 0;
	r->nw = cfg->threads;
	q = dv_xsk_rx_queues(ifname);
	if (r->nw > q)
		rc = dv_err_set(err, -EINVAL,
		                "--xdp %s: the interface has %u receive queue%s: -T at most %u "
		                "(one XDP socket per queue)",
		                ifname, q, q == 1 ? "" : "s", q);
	else if (r->nw > DV_RXSK_QUEUES_MAX)
		rc = dv_err_set(err, -EINVAL, "--xdp: -T at most %d", DV_RXSK_QUEUES_MAX);
	if (rc == 0)
		rc = dv_rxsk_load(&r->prog, ifname, port, cfg->capacity_qps > 0, &r->xsks_fd, err);
	if (rc == 0)
		rc = dv_xdp_prog_attach(&r->prog, err);
	if (rc == 0 && (r->w = calloc(r->nw, sizeof(*r->w))) == NULL)
		rc = dv_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; rc == 0 && i < r->nw; i++) {
		r->w[i] = calloc(1, sizeof(*r->w[i]));
		if (r->w[i] == NULL) {
			rc = dv_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		r->w[i]->r = r;
		rc = dv_xsk_open(&r->w[i]->s, ifname, i, r->xsks_fd, "--xdp", err);
	}
	if (rc != 0) {
		r->joined = true;
		dv_rxsk_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int dv_rxsk_start(dv_rxsk_t *r, dv_err_t *err)
{
	unsigned i;
	int rc;

	for (i = 0; i < r->nw; i++) {
		rc = pthread_create(&r->w[i]->tid, NULL, run, r->w[i]);
		if (rc != 0)
			return dv_err_set(err, -rc, "--xdp: cannot start a thread: %s",
			                  strerror(rc));
		r->w[i]->started = true;
	}
	return 0;
}

void dv_rxsk_join(dv_rxsk_t *r, dv_rxsk_counts_t *c)
{
	struct xdp_statistics st;
	uint64_t ports[65536 / 64] = {0};
	unsigned i, j;

	memset(c, 0, sizeof(*c));
	if (r == NULL)
		return;
	atomic_store(&r->stop, 1);
	if (r->stop_fd >= 0) {
		uint64_t one = 1;
		ssize_t n = write(r->stop_fd, &one, sizeof(one)); /* never read: stays readable */
		(void)n;
	}
	for (i = 0; i < r->nw; i++) {
		rxsk_worker_t *w = r->w[i];
		if (w->started && !r->joined)
			pthread_join(w->tid, NULL);
		c->c.received += w->c.received;
		c->c.answered += w->c.answered;
		c->c.dropped += w->c.dropped;
		c->c.faulty += w->c.faulty;
		c->c.duplicates += w->c.duplicates;
		c->c.malformed += w->c.malformed;
		c->c.send_errors += w->c.send_errors;
		for (j = 0; j < 65536 / 64; j++)
			ports[j] |= w->ports[j];
		dv_xsk_stats(&w->s, &st);
		c->rx_dropped += st.rx_dropped;
		c->rx_ring_full += st.rx_ring_full;
		c->rx_fill_ring_empty += st.rx_fill_ring_empty_descs;
		c->tx_invalid += st.tx_invalid_descs;
		c->stamped += w->stamped;
	}
	r->joined = true;
	for (j = 0; j < 65536 / 64; j++)
		c->c.source_ports += (uint64_t)__builtin_popcountll(ports[j]);
}

void dv_rxsk_close(dv_rxsk_t *r)
{
	unsigned i;

	if (r == NULL)
		return;
	if (!r->joined) {
		dv_rxsk_counts_t c;
		dv_rxsk_join(r, &c);
	}
	for (i = 0; r->w != NULL && i < r->nw; i++) {
		if (r->w[i] != NULL)
			dv_xsk_close(&r->w[i]->s);
		free(r->w[i]);
	}
	free(r->w);
	dv_xdp_prog_close(&r->prog);
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	free(r);
}
