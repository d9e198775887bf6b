/* responder: worker threads answering DNS over UDP with batched syscalls, faults and counts. */
#include "config.h"

#include "responder/responder.h"

#include "base/sockaddr.h"
#include "base/wire.h"
#include "responder/answer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/errqueue.h> /* after time.h: it needs struct timespec */
#include <linux/net_tstamp.h>

/*
 * Shape (NSD, wrk): one worker per thread owns its socket, its buffers (allocated
 * once), its hold queue and its counts; main sums the counts after join. The loop
 * is recvmmsg -> build answers in place -> one sendmmsg (loop_direct); with
 * --delay the answers wait in a FIFO and the thread sleeps in ppoll until the
 * next one is due (loop_delayed).
 */

#define RECV_BATCH    128
#define OUT_MAX       (2 * RECV_BATCH) /* an answer and its duplicate per query */
#define RBUF_LEN      4096             /* larger queries are truncated: malformed */
#define ABUF_LEN      (RBUF_LEN + 16)  /* reflect may add 2 bytes ("x" label) */
#define HOLD_CHUNK    (1u << 20)       /* the hold queue grows in chunks of this many bytes */
#define GSO_SEGS_MAX  64               /* UDP_MAX_SEGMENTS is 64 on older kernels */
#define GSO_BYTES_MAX 60000            /* a GSO message is one UDP datagram before it is split */
#define SOCK_RCVBUF   (8 << 20)
#define SOCK_SNDBUF   (4 << 20)

typedef union dv_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
} dv_sockaddr_t;

enum out_kind {
	OUT_ANSWER = DV_RESPONDER_ANSWER,
	OUT_DUPLICATE = DV_RESPONDER_DUPLICATE,
	OUT_FAULT = DV_RESPONDER_FAULT
};

/* A datagram held for --delay, stored inline in a chunk and followed by its bytes. */
typedef struct hold_entry {
	uint64_t due_ns;
	dv_sockaddr_t addr;
	socklen_t addr_len;
	uint16_t len;
	uint8_t kind;
	uint8_t copies; /* 2 = answer and duplicate */
	uint8_t data[];
} hold_entry_t;

typedef struct hold_chunk {
	struct hold_chunk *next;
	size_t head, tail; /* byte offsets of the first entry and of the free space */
	_Alignas(8) uint8_t bytes[HOLD_CHUNK];
} hold_chunk_t;

/* FIFO of held datagrams; the delay is constant, so FIFO order is due order. */
typedef struct hold_fifo {
	hold_chunk_t *first, *last, *spare;
	size_t count;
} hold_fifo_t;

typedef struct worker {
	dv_responder_t *r;
	unsigned idx;
	int fd;
	pthread_t tid;
	bool started;
	int err;
	dv_responder_seq_t seq; /* the sequences the "every N" options count */
	dv_responder_counts_t c;
	uint64_t ports[65536 / 64];
	struct mmsghdr rmsg[RECV_BATCH];
	struct iovec riov[RECV_BATCH];
	dv_sockaddr_t raddr[RECV_BATCH];
	struct mmsghdr omsg[OUT_MAX];
	struct iovec oiov[OUT_MAX];
	uint8_t okind[OUT_MAX];
	unsigned on;
	/* The same batch grouped for UDP GSO (out_flush). */
	bool gso;
	struct mmsghdr gmsg[OUT_MAX];
	unsigned gfirst[OUT_MAX], gcount[OUT_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} gctl[OUT_MAX];
	uint8_t *rbuf; /* RECV_BATCH * RBUF_LEN */
	uint8_t *abuf; /* RECV_BATCH * ABUF_LEN */
	hold_fifo_t hold;
	double busy_until_ns; /* --capacity: when the service queue empties (monotonic) */
	int64_t wall_off;     /* --capacity: realtime minus monotonic, read once per batch */
	union {               /* --capacity: SCM_TIMESTAMPING, the kernel's arrival times */
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} rctl[RECV_BATCH];
} worker_t;

struct dv_responder {
	dv_responder_config_t cfg;
	struct sockaddr_storage bound;
	socklen_t bound_len;
	int stop_pipe[2];
	atomic_int stop;
	atomic_int failed;
	worker_t **w;
	unsigned nw;
	dv_stream_t *stream; /* TCP/TLS listeners, NULL when off */
	dv_quic_t *quic;     /* the DoQ listener, NULL when off */
};

void dv_responder_config_init(dv_responder_config_t *cfg)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&cfg->addr;

	memset(cfg, 0, sizeof(*cfg));
	in->sin_family = AF_INET;
	in->sin_port = htons(53);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg->addr_len = sizeof(*in);
	cfg->threads = 1;
	cfg->hold_max = DV_RESPONDER_HOLD_MAX;
	cfg->capacity_backlog = 256;
	cfg->rcode = -1;
}

static bool every(uint64_t n, uint64_t seq)
{
	return n != 0 && seq % n == 0;
}

/* ---- hold queue ---- */

static size_t hold_entry_size(size_t len)
{
	return (sizeof(hold_entry_t) + len + 7) & ~(size_t)7;
}

static hold_entry_t *hold_head(hold_fifo_t *h)
{
	/* hold_pop() never leaves an emptied chunk at the front while entries remain. */
	if (h->count == 0)
		return NULL;
	return (hold_entry_t *)(h->first->bytes + h->first->head);
}

static int hold_push(hold_fifo_t *h, uint64_t due_ns, const dv_sockaddr_t *addr, socklen_t addr_len,
                     const uint8_t *data, size_t len, uint8_t kind, uint8_t copies)
{
	size_t need = hold_entry_size(len);
	hold_chunk_t *c = h->last;
	hold_entry_t *e;

	if (c == NULL || HOLD_CHUNK - c->tail < need) {
		hold_chunk_t *n = h->spare;
		if (n != NULL) {
			h->spare = n->next;
		} else {
			n = malloc(sizeof(*n));
			if (n == NULL)
				return -ENOMEM;
		}
		n->next = NULL;
		n->head = n->tail = 0;
		if (c != NULL)
			c->next = n;
		else
			h->first = n;
		h->last = c = n;
	}
	e = (hold_entry_t *)(c->bytes + c->tail);
	e->due_ns = due_ns;
	memcpy(&e->addr, addr, addr_len);
	e->addr_len = addr_len;
	e->len = (uint16_t)len;
	e->kind = kind;
	e->copies = copies;
	memcpy(e->data, data, len);
	c->tail += need;
	h->count++;
	return 0;
}

static void hold_pop(hold_fifo_t *h)
{
	hold_entry_t *e = hold_head(h);
	hold_chunk_t *c = h->first;

	c->head += hold_entry_size(e->len);
	h->count--;
	if (c->head == c->tail) {
		if (c == h->last) { /* empty: reuse the chunk from its start */
			c->head = c->tail = 0;
		} else {
			h->first = c->next;
			c->next = h->spare;
			h->spare = c;
		}
	}
}

static void hold_free(hold_fifo_t *h)
{
	hold_chunk_t *lists[2] = {h->first, h->spare};
	unsigned i;

	for (i = 0; i < 2; i++) {
		while (lists[i] != NULL) {
			hold_chunk_t *n = lists[i]->next;
			free(lists[i]);
			lists[i] = n;
		}
	}
	memset(h, 0, sizeof(*h));
}

/* ---- sending ---- */

static void out_add(worker_t *w, const uint8_t *data, size_t len, void *addr, socklen_t addr_len,
                    uint8_t kind)
{
	unsigned i = w->on++;

	w->oiov[i].iov_base = (void *)data;
	w->oiov[i].iov_len = len;
	w->omsg[i].msg_hdr.msg_name = addr;
	w->omsg[i].msg_hdr.msg_namelen = addr_len;
	w->omsg[i].msg_hdr.msg_iov = &w->oiov[i];
	w->omsg[i].msg_hdr.msg_iovlen = 1;
	w->okind[i] = kind;
}

void dv_responder_count_sent(dv_responder_counts_t *c, uint8_t kind, bool ok)
{
	if (!ok)
		c->send_errors++;
	else if (kind == OUT_ANSWER)
		c->answered++;
	else if (kind == OUT_DUPLICATE)
		c->duplicates++;
	else
		c->faulty++;
}

static void out_count(worker_t *w, unsigned i, bool ok)
{
	dv_responder_count_sent(&w->c, w->okind[i], ok);
}

/* Send out[from..on) one datagram per message; one the kernel refuses is counted and skipped. */
static void out_flush_plain(worker_t *w, unsigned from)
{
	unsigned i = from, j;
	int k;

	while (i < w->on) {
		k = sendmmsg(w->fd, w->omsg + i, w->on - i, 0);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			out_count(w, i, false);
			i++;
			continue;
		}
		for (j = i; j < i + (unsigned)k; j++)
			out_count(w, j, true);
		i += (unsigned)k;
	}
	w->on = 0;
}

static bool same_dest(const struct msghdr *a, const struct msghdr *b)
{
	return a->msg_namelen == b->msg_namelen &&
	       memcmp(a->msg_name, b->msg_name, a->msg_namelen) == 0;
}

/*
 * Send the out batch. Runs of datagrams for the same address with the same length
 * (a client socket asking the same kind of question, a duplicate) leave as one UDP
 * GSO message (UDP_SEGMENT): the kernel walks its send path once per run instead of
 * once per datagram and splits it on the way; the receiver still gets separate
 * datagrams. Where the kernel refuses GSO, the worker falls back to one datagram per
 * message for good.
 */
static void out_flush(worker_t *w)
{
	unsigned i, j, g, ng = 0;
	int k;

	if (!w->gso) {
		out_flush_plain(w, 0);
		return;
	}
	for (i = 0; i < w->on; ng++) {
		const struct msghdr *first = &w->omsg[i].msg_hdr;
		struct msghdr *m = &w->gmsg[ng].msg_hdr;
		size_t seg = w->oiov[i].iov_len, total = seg;
		unsigned n = 1;

		while (i + n < w->on && n < GSO_SEGS_MAX && w->oiov[i + n].iov_len == seg &&
		       total + seg <= GSO_BYTES_MAX && same_dest(first, &w->omsg[i + n].msg_hdr)) {
			total += seg;
			n++;
		}
		memset(m, 0, sizeof(*m));
		m->msg_name = first->msg_name;
		m->msg_namelen = first->msg_namelen;
		m->msg_iov = &w->oiov[i];
		m->msg_iovlen = n;
		if (n > 1) {
			uint16_t seg16 = (uint16_t)seg;
			struct cmsghdr *cm;

			m->msg_control = w->gctl[ng].buf;
			m->msg_controllen = sizeof(w->gctl[ng].buf);
			cm = CMSG_FIRSTHDR(m);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(seg16));
			memcpy(CMSG_DATA(cm), &seg16, sizeof(seg16));
		}
		w->gfirst[ng] = i;
		w->gcount[ng] = n;
		i += n;
	}
	for (g = 0; g < ng;) {
		k = sendmmsg(w->fd, w->gmsg + g, ng - g, 0);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (w->gcount[g] > 1 && (errno == EINVAL || errno == EIO ||
			                         errno == ENOPROTOOPT || errno == EOPNOTSUPP)) {
				w->gso = false;
				out_flush_plain(w, w->gfirst[g]);
				return;
			}
			for (j = 0; j < w->gcount[g]; j++)
				out_count(w, w->gfirst[g] + j, false);
			g++;
			continue;
		}
		for (; k > 0; k--, g++)
			for (j = 0; j < w->gcount[g]; j++)
				out_count(w, w->gfirst[g] + j, true);
	}
	w->on = 0;
}

/* Send the held datagrams that are due by now_ns, a batch at a time. */
static void hold_flush(worker_t *w, uint64_t now_ns)
{
	for (;;) {
		hold_chunk_t *c;
		size_t off, n = 0;
		unsigned i;

		if (hold_head(&w->hold) == NULL)
			return;
		/* Gather due entries of the first chunk (they stay in place until sent). */
		c = w->hold.first;
		off = c->head;
		while (off < c->tail && w->on + 2 <= OUT_MAX) {
			hold_entry_t *e = (hold_entry_t *)(c->bytes + off);
			if (e->due_ns > now_ns)
				break;
			out_add(w, e->data, e->len, &e->addr, e->addr_len, e->kind);
			if (e->copies > 1)
				out_add(w, e->data, e->len, &e->addr, e->addr_len, OUT_DUPLICATE);
			off += hold_entry_size(e->len);
			n++;
		}
		if (n == 0)
			return;
		out_flush(w);
		for (i = 0; i < n; i++)
			hold_pop(&w->hold);
	}
}

/* ---- receiving ---- */

static void mark_port(worker_t *w, const dv_sockaddr_t *a)
{
	uint16_t port =
	    a->sa.sa_family == AF_INET6 ? ntohs(a->in6.sin6_port) : ntohs(a->in.sin_port);

	w->ports[port >> 6] |= 1ULL << (port & 63);
}

/*
 * --capacity: query i's arrival on the monotonic clock, from the kernel's software receive
 * stamp (a thread descheduled for a while must not see a burst), else now, the batch's
 * read. SO_TIMESTAMPING, not SO_TIMESTAMPNS: a datagram that came before the kernel
 * switched its stamps on (base/netstamp.h) has none (SO_TIMESTAMPNS would hide that with
 * a stamp of the read), and is counted as unstamped.
 */
static uint64_t arrival_ns(worker_t *w, unsigned i, uint64_t now_ns)
{
	struct msghdr *h = &w->rmsg[i].msg_hdr;
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
			struct scm_timestamping ts;
			int64_t t;
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			if (ts.ts[0].tv_sec == 0 && ts.ts[0].tv_nsec == 0)
				break;
			t = (int64_t)ts.ts[0].tv_sec * (int64_t)DV_NS_PER_S + ts.ts[0].tv_nsec -
			    w->wall_off;
			return t > 0 && (uint64_t)t <= now_ns ? (uint64_t)t : now_ns;
		}
	}
	w->c.unstamped++;
	return now_ns;
}

bool dv_responder_admit(const dv_responder_config_t *cfg, unsigned threads, double *busy_until_ns,
                        uint64_t now_ns, uint64_t *due_ns, dv_responder_counts_t *c)
{
	double service_ns, start;

	if (cfg->capacity_qps <= 0) {
		*due_ns = now_ns + cfg->delay_ns;
		return true;
	}
	service_ns = 1e9 * (double)threads / cfg->capacity_qps;
	start = *busy_until_ns > (double)now_ns ? *busy_until_ns : (double)now_ns;
	if (start - (double)now_ns > service_ns * (double)cfg->capacity_backlog) {
		c->dropped++;
		return false;
	}
	*busy_until_ns = start + service_ns;
	*due_ns = (uint64_t)*busy_until_ns + cfg->delay_ns;
	return true;
}

int dv_responder_answer(const dv_responder_config_t *cfg, dv_responder_seq_t *seq, const uint8_t *q,
                        size_t qlen, bool truncated, uint8_t *a, size_t cap,
                        dv_responder_counts_t *c, uint8_t *kind, uint8_t *copies)
{
	dv_answer_opts_t o;
	uint64_t n;
	int len;

	c->received++;
	n = ++seq->nq;
	*kind = OUT_ANSWER;
	*copies = 1;
	if (truncated || (qlen > DV_DNS_OFF_FLAGS1 && DV_WIRE_QR(q))) {
		c->malformed++; /* QR set: a response; never answered, not even by a fault */
		return 0;
	}
	if (every(cfg->drop_every, n)) {
		c->dropped++;
		return 0;
	}
	dv_answer_opts_init(&o);
	o.rcode = cfg->rcode;
	o.reflect = cfg->reflect;
	if (every(cfg->garbage_every, n)) {
		len = dv_answer_garbage(n, a, cap);
		*kind = OUT_FAULT;
	} else {
		if (qlen < DV_DNS_HEADER_LEN) {
			c->malformed++;
			return 0;
		}
		if (every(cfg->wrong_id_every, n)) {
			o.wrong_id = true;
			*kind = OUT_FAULT;
		} else if (every(cfg->wrong_question_every, n)) {
			o.wrong_question = true;
			*kind = OUT_FAULT;
		} else {
			o.tc = every(cfg->tc_every, ++seq->na);
			if (every(cfg->duplicate_every, n))
				*copies = 2;
		}
		len = dv_answer_build(q, qlen, a, cap, &o);
	}
	if (len <= 0) {
		c->malformed++;
		return 0;
	}
	return len;
}

static void handle(worker_t *w, unsigned i, uint64_t now_ns)
{
	const dv_responder_config_t *cfg = &w->r->cfg;
	struct msghdr *mh = &w->rmsg[i].msg_hdr;
	const uint8_t *q = w->rbuf + (size_t)i * RBUF_LEN;
	size_t qlen = w->rmsg[i].msg_len;
	uint8_t *a = w->abuf + (size_t)i * ABUF_LEN;
	uint64_t due;
	uint8_t kind, copies;
	int len;

	/* After shutdown() (stop) recvmmsg reports an empty "datagram" with no source. */
	if (mh->msg_namelen == 0)
		return;
	mark_port(w, &w->raddr[i]);
	len = dv_responder_answer(cfg, &w->seq, q, qlen, (mh->msg_flags & MSG_TRUNC) != 0, a,
	                          ABUF_LEN, &w->c, &kind, &copies);
	if (len == 0)
		return;
	if (!dv_responder_admit(cfg, w->r->nw, &w->busy_until_ns,
	                        cfg->capacity_qps > 0 ? arrival_ns(w, i, now_ns) : now_ns, &due,
	                        &w->c))
		return;
	if (cfg->delay_ns == 0 && cfg->capacity_qps <= 0) {
		out_add(w, a, (size_t)len, &w->raddr[i], mh->msg_namelen, kind);
		if (copies > 1)
			out_add(w, a, (size_t)len, &w->raddr[i], mh->msg_namelen, OUT_DUPLICATE);
		return;
	}
	if (w->hold.count >= cfg->hold_max ||
	    hold_push(&w->hold, due, &w->raddr[i], mh->msg_namelen, a, (size_t)len, kind, copies) !=
	        0)
		w->c.dropped++;
}

static void recv_reset(worker_t *w, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		w->rmsg[i].msg_hdr.msg_namelen = sizeof(w->raddr[i]);
		w->rmsg[i].msg_hdr.msg_flags = 0;
		if (w->r->cfg.capacity_qps > 0) {
			w->rmsg[i].msg_hdr.msg_control = w->rctl[i].buf;
			w->rmsg[i].msg_hdr.msg_controllen = sizeof(w->rctl[i].buf);
		}
	}
}

static bool recv_error_is_transient(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ENOMEM || e == ENOBUFS;
}

static void handle_batch(worker_t *w, int n, uint64_t now_ns)
{
	int i;

	if (w->r->cfg.capacity_qps > 0) /* the stamps are realtime: one offset for the batch */
		w->wall_off = dv_wall_minus_mono_ns();
	for (i = 0; i < n; i++)
		handle(w, (unsigned)i, now_ns);
	recv_reset(w, (unsigned)n);
	out_flush(w);
}

/*
 * Without --delay: a blocking recvmmsg (MSG_WAITFORONE: it returns as soon as one
 * datagram is there, with all that came with it) and one sendmmsg, two system calls
 * per batch. Idle, the thread sleeps in recvmmsg without a timeout: dv_responder_stop()
 * wakes it with shutdown(), which stays in force, so a recvmmsg entered after the stop
 * returns at once too.
 */
static void loop_direct(worker_t *w)
{
	dv_responder_t *r = w->r;

	while (atomic_load_explicit(&r->stop, memory_order_relaxed) == 0) {
		int n = recvmmsg(w->fd, w->rmsg, RECV_BATCH, MSG_WAITFORONE, NULL);

		if (n > 0) {
			handle_batch(w, n, 0);
		} else if (n < 0 && !recv_error_is_transient(errno)) {
			w->err = -errno;
			return;
		}
	}
}

/* With --delay: non-blocking receive, held datagrams sent when due, ppoll in between. */
static void loop_delayed(worker_t *w)
{
	dv_responder_t *r = w->r;
	struct pollfd pfd[2] = {{.fd = w->fd, .events = POLLIN},
	                        {.fd = r->stop_pipe[0], .events = POLLIN}};

	while (atomic_load_explicit(&r->stop, memory_order_relaxed) == 0) {
		int n = recvmmsg(w->fd, w->rmsg, RECV_BATCH, MSG_DONTWAIT, NULL);
		uint64_t now_ns = dv_now_ns();
		struct timespec ts, *tsp = NULL;
		hold_entry_t *head;

		if (n > 0) {
			handle_batch(w, n, now_ns);
			hold_flush(w, dv_now_ns());
			continue;
		}
		if (n < 0 && !recv_error_is_transient(errno)) {
			w->err = -errno;
			return;
		}
		hold_flush(w, now_ns);
		head = hold_head(&w->hold);
		if (head != NULL) {
			uint64_t wait_ns = head->due_ns > now_ns ? head->due_ns - now_ns : 0;
			ts.tv_sec = (time_t)(wait_ns / DV_NS_PER_S);
			ts.tv_nsec = (long)(wait_ns % DV_NS_PER_S);
			tsp = &ts;
		}
		if (ppoll(pfd, 2, tsp, NULL) < 0 && errno != EINTR) {
			w->err = -errno;
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	dv_responder_t *r = w->r;

	if (r->cfg.delay_ns == 0 && r->cfg.capacity_qps <= 0)
		loop_direct(w);
	else
		loop_delayed(w);
	/* What is still held at stop was never answered: count it as dropped. */
	w->c.dropped += w->hold.count;
	if (w->err != 0) {
		atomic_store(&r->failed, 1);
		dv_responder_stop(r);
	}
	return NULL;
}

/* ---- setup ---- */

static uint16_t get_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

static void set_buffer(int fd, int force_opt, int opt, int bytes)
{
	/* As root the FORCE variant passes net.core.[rw]mem_max; else the kernel caps it. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

static int open_socket(const struct sockaddr_storage *addr, socklen_t len, bool reuseport, int *out,
                       dv_err_t *err)
{
	int one = 1, fd;
	char at[DV_SOCKADDR_TEXT_MAX];

	fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return dv_err_set(err, -errno, "socket: %s", strerror(errno));
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
		int e = errno;
		close(fd);
		return dv_err_set(err, -e, "SO_REUSEPORT: %s", strerror(e));
	}
	set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, SOCK_RCVBUF);
	set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, SOCK_SNDBUF);
	if (bind(fd, (const struct sockaddr *)addr, len) != 0) {
		int e = errno;
		close(fd);
		dv_sockaddr_text((const struct sockaddr *)addr, at, sizeof(at));
		return dv_err_set(err, -e, "cannot bind %s: %s", at, strerror(e));
	}
	*out = fd;
	return 0;
}

/*
 * Bind every worker's socket to one port. With one thread there is no
 * SO_REUSEPORT at all. With several and port 0, the port is first reserved by a
 * socket without SO_REUSEPORT: the kernel may give a port 0 bind WITH
 * SO_REUSEPORT a port that another process of the same user already holds with
 * SO_REUSEPORT (two responders would then share one port and each other's queries).
 */
static int bind_all(dv_responder_t *r, dv_err_t *err)
{
	const socklen_t len = r->cfg.addr_len;
	const bool multi = r->nw > 1, probe_port = multi && get_port(&r->cfg.addr) == 0;
	struct sockaddr_storage a;
	socklen_t bl;
	unsigned i, attempt;
	int rc = 0;

	for (attempt = 0; attempt < 20; attempt++) {
		a = r->cfg.addr;
		if (probe_port) {
			int probe;
			rc = open_socket(&a, len, false, &probe, err);
			if (rc != 0)
				return rc;
			bl = sizeof(a);
			getsockname(probe, (struct sockaddr *)&a, &bl);
			close(probe);
		}
		for (i = 0; i < r->nw; i++) {
			rc = open_socket(&a, len, multi, &r->w[i]->fd, err);
			if (rc != 0)
				break;
			if (i == 0) {
				bl = sizeof(a);
				getsockname(r->w[0]->fd, (struct sockaddr *)&a, &bl);
			}
		}
		if (rc == 0) {
			r->bound = a;
			r->bound_len = len;
			return 0;
		}
		while (i > 0) {
			i--;
			close(r->w[i]->fd);
			r->w[i]->fd = -1;
		}
		/* Only a race lost for a probed port is worth another try. */
		if (rc != -EADDRINUSE || !probe_port)
			return rc;
	}
	return rc;
}

int dv_responder_open(dv_responder_t **out, const dv_responder_config_t *cfg, dv_err_t *err)
{
	dv_responder_t *r;
	unsigned i;
	int rc;

	*out = NULL;
	if (cfg->threads < 1 || cfg->threads > DV_RESPONDER_THREADS_MAX)
		return dv_err_set(err, -EINVAL, "threads must be 1..%d", DV_RESPONDER_THREADS_MAX);
	if (cfg->addr.ss_family != AF_INET && cfg->addr.ss_family != AF_INET6)
		return dv_err_set(err, -EAFNOSUPPORT, "address family not supported");
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	r->cfg = *cfg;
	if (r->cfg.hold_max == 0)
		r->cfg.hold_max = DV_RESPONDER_HOLD_MAX;
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
	r->nw = cfg->threads;
	r->w = calloc(r->nw, sizeof(*r->w));
	if (r->w == NULL || pipe2(r->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		rc = dv_err_set(err, -ENOMEM, "out of memory or descriptors");
		goto fail;
	}
	for (i = 0; i < r->nw; i++) {
		worker_t *w = calloc(1, sizeof(*w));
		unsigned j;

		if (w == NULL) {
			rc = dv_err_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		r->w[i] = w;
		w->r = r;
		w->idx = i;
		w->fd = -1;
		w->gso = !cfg->no_gso;
		w->rbuf = malloc((size_t)RECV_BATCH * RBUF_LEN);
		w->abuf = malloc((size_t)RECV_BATCH * ABUF_LEN);
		if (w->rbuf == NULL || w->abuf == NULL) {
			rc = dv_err_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		for (j = 0; j < RECV_BATCH; j++) {
			w->riov[j].iov_base = w->rbuf + (size_t)j * RBUF_LEN;
			w->riov[j].iov_len = RBUF_LEN;
			w->rmsg[j].msg_hdr.msg_iov = &w->riov[j];
			w->rmsg[j].msg_hdr.msg_iovlen = 1;
			w->rmsg[j].msg_hdr.msg_name = &w->raddr[j];
		}
		recv_reset(w, RECV_BATCH);
	}
	rc = bind_all(r, err);
	if (rc != 0)
		goto fail;
	for (i = 0; cfg->capacity_qps > 0 && i < r->nw; i++) {
		int ts = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
		(void)setsockopt(r->w[i]->fd, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts));
	}
	if (cfg->stream.tcp || cfg->stream.tls || cfg->stream.https) {
		r->cfg.stream.rcode = cfg->rcode;
		r->cfg.stream.reflect = cfg->reflect;
		rc = dv_stream_open(&r->stream, &r->cfg.stream, err);
		if (rc != 0)
			goto fail;
	}
	if (cfg->doq) {
		r->cfg.quic.rcode = cfg->rcode;
		r->cfg.quic.reflect = cfg->reflect;
		r->cfg.quic.cert_file = cfg->stream.cert_file;
		r->cfg.quic.key_file = cfg->stream.key_file;
		r->cfg.quic.faults = cfg->stream.faults;
		rc = dv_quic_open(&r->quic, &r->cfg.quic, err);
		if (rc != 0)
			goto fail;
	}
	*out = r;
	return 0;
fail:
	dv_responder_free(r);
	return rc;
}

uint16_t dv_responder_port(const dv_responder_t *r)
{
	return r == NULL ? 0 : get_port(&r->bound);
}

uint16_t dv_responder_stream_port(const dv_responder_t *r, int which)
{
	return r->stream != NULL ? dv_stream_port(r->stream, which) : 0;
}

uint16_t dv_responder_doq_port(const dv_responder_t *r)
{
	return r->quic != NULL ? dv_quic_port(r->quic) : 0;
}

int dv_responder_start(dv_responder_t *r, dv_err_t *err)
{
	unsigned i;

	if (r->stream != NULL && dv_stream_start(r->stream, err) != 0)
		return -EAGAIN;
	if (r->quic != NULL && dv_quic_start(r->quic, err) != 0)
		return -EAGAIN;
	for (i = 0; i < r->nw; i++) {
		int e = pthread_create(&r->w[i]->tid, NULL, worker_main, r->w[i]);
		if (e != 0) {
			dv_responder_stop(r);
			return dv_err_set(err, -e, "cannot start thread: %s", strerror(e));
		}
		r->w[i]->started = true;
	}
	return 0;
}

void dv_responder_stop(dv_responder_t *r)
{
	char b = 1;
	ssize_t rc;

	unsigned i;

	atomic_store(&r->stop, 1);
	rc = write(r->stop_pipe[1], &b, 1); /* stays readable: wakes every ppoll */
	(void)rc;
	if (r->stream != NULL)
		dv_stream_stop(r->stream);
	if (r->quic != NULL)
		dv_quic_stop(r->quic);
	/* Wakes a blocked recvmmsg at once (Linux does it for unconnected UDP too). */
	for (i = 0; i < r->nw; i++)
		if (r->w[i] != NULL && r->w[i]->fd >= 0)
			(void)shutdown(r->w[i]->fd, SHUT_RD);
}

int dv_responder_stop_fd(const dv_responder_t *r)
{
	return r->stop_pipe[0];
}

bool dv_responder_failed(const dv_responder_t *r)
{
	return atomic_load(&((dv_responder_t *)r)->failed) != 0;
}

int dv_responder_join(dv_responder_t *r, dv_responder_counts_t *counts, dv_err_t *err)
{
	uint64_t ports[65536 / 64];
	unsigned i, j;
	int rc = 0;

	memset(counts, 0, sizeof(*counts));
	memset(ports, 0, sizeof(ports));
	for (i = 0; i < r->nw; i++) {
		worker_t *w = r->w[i];
		if (!w->started)
			continue;
		pthread_join(w->tid, NULL);
		w->started = false;
		if (w->err != 0 && rc == 0)
			rc = dv_err_set(err, w->err, "thread %u: receive failed: %s", i,
			                strerror(-w->err));
		counts->received += w->c.received;
		counts->answered += w->c.answered;
		counts->dropped += w->c.dropped;
		counts->faulty += w->c.faulty;
		counts->duplicates += w->c.duplicates;
		counts->malformed += w->c.malformed;
		counts->send_errors += w->c.send_errors;
		counts->unstamped += w->c.unstamped;
		for (j = 0; j < DV_ARRAY_SIZE(ports); j++)
			ports[j] |= w->ports[j];
	}
	for (j = 0; j < DV_ARRAY_SIZE(ports); j++)
		counts->source_ports += (uint64_t)__builtin_popcountll(ports[j]);
	if (r->stream != NULL)
		dv_stream_join(r->stream, &counts->tcp, &counts->tls, &counts->https);
	if (r->quic != NULL)
		dv_quic_join(r->quic, &counts->doq);
	return rc;
}

void dv_responder_free(dv_responder_t *r)
{
	unsigned i;

	if (r == NULL)
		return;
	if (r->w != NULL) {
		for (i = 0; i < r->nw; i++) {
			if (r->w[i] != NULL && r->w[i]->started) {
				dv_responder_stop(r);
				pthread_join(r->w[i]->tid, NULL);
			}
		}
		for (i = 0; i < r->nw; i++) {
			worker_t *w = r->w[i];
			if (w == NULL)
				continue;
			if (w->fd >= 0)
				close(w->fd);
			hold_free(&w->hold);
			free(w->rbuf);
			free(w->abuf);
			free(w);
		}
		free(r->w);
	}
	dv_stream_free(r->stream);
	dv_quic_free(r->quic);
	if (r->stop_pipe[0] >= 0)
		close(r->stop_pipe[0]);
	if (r->stop_pipe[1] >= 0)
		close(r->stop_pipe[1]);
	free(r);
}
