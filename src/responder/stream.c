/* stream: one thread serving DNS over TCP, TLS (OpenSSL) and HTTPS (https.c) with epoll: framing,
 * faults, counts. */
#include "config.h"

#include "responder/stream.h"

#include "base/dns.h"
#include "base/wire.h"
#include "responder/answer.h"

#include "base/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define READ_CHUNK  16384
#define FRAME_MAX   65535u
#define ABUF_LEN    (FRAME_MAX + 16) /* reflect may add 2 bytes */
#define RST_WAIT_MS 1000
#define EP_BATCH    256
#define NLIST       3 /* listeners: DV_STREAM_TCP, _TLS, _HTTPS */
/* epoll data of the stop pipe and the listeners (connections carry their sconn_t *) */
#define EP_STOP    ((void *)(uintptr_t)1)
#define EP_LIST(i) ((void *)(uintptr_t)(2 + (i)))
/* Connections accepted per turn of the event loop (a listener with more stays readable). */
#define ACCEPTS_PER_TURN 1024

enum action { ACT_NONE = 0, ACT_CLOSE, ACT_RESET, ACT_HALF };

/* The distinct peer addresses seen (IPv4 as v4-mapped; all zeros = an empty slot). */
typedef struct addrset {
	uint8_t (*k)[16];
	size_t cap, n;
} addrset_t;

typedef struct listener {
	int fd;
	bool tls, https; /* https: TLS too */
	uint64_t seq;    /* connections accepted */
	bool paused;     /* out of descriptors: not watched (DV_STREAM_ACCEPT_PAUSE_MS) */
	bool hold_reads; /* --stream-read-after-conns: fewer accepted yet, none is read */
	addrset_t src;
	dv_stream_counts_t c;
} listener_t;

typedef struct buf {
	uint8_t *p;
	size_t len, cap;
} buf_t;

typedef struct sconn {
	int fd;
	SSL *ssl;
	dv_https_t *h2; /* the HTTPS listener's connections: their HTTP/2 session */
	listener_t *l;
	bool faulty, hs_done, want_write, stalled, eof, half, dead, rst;
	bool unflushed;     /* --https-record-each: TLS records wait in the write buffer BIO */
	bool throttled;     /* not read: its unsent output is at DV_STREAM_OUT_MAX */
	bool on_resume;     /* in the resume list (rprev, rnext) */
	unsigned rst_wait;  /* > 0: reset due once the client has acked every answer (ms left) */
	enum action action; /* pending until the answers before it are written */
	buf_t in;           /* bytes read, not yet framed */
	buf_t out;          /* framed answers; out_off written, walk = start of the first
	                     * frame not yet written whole */
	size_t out_off, walk;
	buf_t held; /* reverse: this group's framed answers */
	uint32_t *held_off;
	unsigned held_n;
	uint64_t nq, na, nd; /* queries read, answers written, queries never to be answered */
	unsigned idx;        /* its place in conns[] */
	uint32_t ev;         /* the events epoll watches for it */
	struct sconn *rprev, *rnext;
} sconn_t;

struct dv_stream {
	dv_stream_config_t cfg;
	listener_t l[NLIST];   /* by DV_STREAM_TCP, _TLS, _HTTPS */
	SSL_CTX *tls, *tls_h2; /* tls_h2: the HTTPS listener's (ALPN h2) */
	dv_https_config_t hcfg;
	int stop_pipe[2];
	atomic_int stop;
	pthread_t tid;
	bool started;
	sconn_t **conns;
	unsigned nconns;
	unsigned nrst; /* connections waiting to reset (rst_wait > 0): 1 ms wake-ups */
	/* TLS connections with decrypted input OpenSSL holds and epoll cannot see: served
	 * again after this turn's events */
	sconn_t *resume;
	unsigned npaused;   /* listeners paused for want of descriptors */
	uint64_t accept_at; /* CLOCK_MONOTONIC ms when paused listeners are watched again */
	int epfd;
	uint8_t abuf[ABUF_LEN];
	uint8_t rbuf[READ_CHUNK];
};

static bool every(uint64_t n, uint64_t seq)
{
	return n != 0 && seq % n == 0;
}

/* Unsent output at the bound: read nothing more from c until the client takes some. */
static bool full(const sconn_t *c)
{
	return c->out.len - c->out_off >= DV_STREAM_OUT_MAX;
}

static int buf_put(buf_t *b, const void *data, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 1024;
		uint8_t *np;
		while (cap - b->len < n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (np == NULL)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

static int put_frame(buf_t *b, const uint8_t *m, size_t len)
{
	uint8_t h[2] = {(uint8_t)(len >> 8), (uint8_t)len};
	if (buf_put(b, h, 2) != 0 || buf_put(b, m, len) != 0)
		return -ENOMEM;
	return 0;
}

static size_t addr_slot(const addrset_t *a, const uint8_t key[16])
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	size_t i;

	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * 1099511628211ull;
	for (i = h & (a->cap - 1); memcmp(a->k[i], (uint8_t[16]){0}, 16) != 0;
	     i = (i + 1) & (a->cap - 1))
		if (memcmp(a->k[i], key, 16) == 0)
			break;
	return i;
}

/* Remember peer's address in a (counted once); out of memory: not counted. */
static void addr_add(addrset_t *a, const struct sockaddr_storage *peer)
{
	uint8_t key[16] = {0};
	size_t i;

	if (peer->ss_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
	} else if (peer->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)peer)->sin_addr, 4);
	} else {
		return;
	}
	if ((a->n + 1) * 2 > a->cap) { /* grow: rehash into twice the slots */
		addrset_t b = {.cap = a->cap ? a->cap * 2 : 256, .n = a->n};
		b.k = calloc(b.cap, 16);
		if (b.k == NULL)
			return;
		for (i = 0; i < a->cap; i++)
			if (memcmp(a->k[i], (uint8_t[16]){0}, 16) != 0)
				memcpy(b.k[addr_slot(&b, a->k[i])], a->k[i], 16);
		free(a->k);
		*a = b;
	}
	i = addr_slot(a, key);
	if (memcmp(a->k[i], key, 16) != 0) {
		memcpy(a->k[i], key, 16);
		a->n++;
	}
}

/* ---- answers ---- */

static void flush_held(sconn_t *c)
{
	unsigned i;

	for (i = c->held_n; i > 0; i--) {
		const uint8_t *f = c->held.p + c->held_off[i - 1];
		size_t len = dv_wire_get16(f);
		if (buf_put(&c->out, f, len + 2) != 0)
			c->dead = true;
	}
	c->held.len = 0;
	c->held_n = 0;
}

static void after_query(dv_stream_t *s, sconn_t *c)
{
	const dv_stream_faults_t *f = &s->cfg.faults;

	if (!c->faulty)
		return;
	if (f->stall_after == c->nq) {
		c->stalled = true;
		c->l->c.stalled++;
	}
	if (f->close_after == c->nq)
		c->action = ACT_CLOSE;
	else if (f->reset_after == c->nq)
		c->action = ACT_RESET;
	else if (f->half_close_after == c->nq)
		c->action = ACT_HALF;
	if (c->action != ACT_NONE)
		flush_held(c);
}

static void answer(dv_stream_t *s, sconn_t *c, const uint8_t *q, size_t len)
{
	const dv_stream_faults_t *f = &s->cfg.faults;
	dv_answer_opts_t o;
	int n;

	c->l->c.received++;
	c->nq++;
	if (c->action != ACT_NONE || c->half)
		return; /* read, never answered: counted at the end of the connection */
	if (c->faulty && every(f->drop_every, c->nq)) {
		c->l->c.dropped++;
		c->nd++;
		goto out;
	}
	dv_answer_opts_init(&o);
	o.rcode = s->cfg.rcode;
	o.reflect = s->cfg.reflect;
	n = len < DV_DNS_HEADER_LEN ? -EBADMSG
	                            : dv_answer_build(q, len, s->abuf, sizeof(s->abuf), &o);
	if (n <= 0) {
		c->l->c.malformed++;
		c->nd++;
		goto out;
	}
	if (c->faulty && f->reverse > 1) {
		c->held_off[c->held_n++] = (uint32_t)c->held.len;
		if (put_frame(&c->held, s->abuf, (size_t)n) != 0)
			c->dead = true;
		if (c->held_n == f->reverse)
			flush_held(c);
	} else if (put_frame(&c->out, s->abuf, (size_t)n) != 0) {
		c->dead = true;
	}
out:
	after_query(s, c);
}

/* Answer every whole frame of d[0..len); returns the bytes taken. */
static size_t unframe(dv_stream_t *s, sconn_t *c, const uint8_t *d, size_t len)
{
	size_t pos = 0;

	while (!c->stalled && !c->dead && !full(c) && len - pos >= 2) {
		size_t n = dv_wire_get16(d + pos);
		if (n == 0) {
			c->l->c.malformed++;
			c->dead = true;
			break;
		}
		if (len - pos - 2 < n)
			break;
		answer(s, c, d + pos + 2, n);
		pos += 2 + n;
	}
	return pos;
}

/* Answer the whole frames kept in c->in (as far as the output bound lets). */
static void unframe_in(dv_stream_t *s, sconn_t *c)
{
	size_t used = unframe(s, c, c->in.p, c->in.len);

	memmove(c->in.p, c->in.p + used, c->in.len - used);
	c->in.len -= used;
	if (c->in.len == 0) {
		free(c->in.p);
		c->in = (buf_t){0};
	}
}

/*
 * New bytes arrived in s->rbuf: frames whole in them are answered in place; only
 * a frame cut by the end of a read, and the frames the output bound stopped, are kept
 * in c->in (so an idle connection holds no read buffer).
 */
static void take(dv_stream_t *s, sconn_t *c, size_t n)
{
	size_t used;

	if (c->h2 != NULL) {
		if (dv_https_recv(c->h2, s->rbuf, n) != 0) {
			c->l->c.h2_errors++;
			c->eof = true; /* write the GOAWAY, then close */
		}
		return;
	}
	if (c->in.len == 0) {
		used = unframe(s, c, s->rbuf, n);
		if (used < n && buf_put(&c->in, s->rbuf + used, n - used) != 0)
			c->dead = true;
		return;
	}
	if (buf_put(&c->in, s->rbuf, n) != 0) {
		c->dead = true;
		return;
	}
	unframe_in(s, c);
}

/* ---- connection I/O ---- */

static int tls_handshake(sconn_t *c)
{
	int rc = SSL_accept(c->ssl), e;

	c->want_write = false;
	if (rc == 1) {
		c->hs_done = true;
		if (SSL_session_reused(c->ssl))
			c->l->c.tls_resumed++;
		return 0;
	}
	e = SSL_get_error(c->ssl, rc);
	if (e == SSL_ERROR_WANT_READ)
		return 0;
	if (e == SSL_ERROR_WANT_WRITE) {
		c->want_write = true;
		return 0;
	}
	c->l->c.tls_failed++;
	c->dead = true;
	ERR_clear_error();
	return -EPROTO;
}

/* One read into s->rbuf: > 0 bytes, 0 would block, -1 EOF, -2 error. */
static ssize_t read_some(dv_stream_t *s, sconn_t *c)
{
	ssize_t n;

	if (c->ssl == NULL) {
		n = read(c->fd, s->rbuf, sizeof(s->rbuf));
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -2;
		return n == 0 ? -1 : n;
	}
	n = SSL_read(c->ssl, s->rbuf, (int)sizeof(s->rbuf));
	if (n > 0)
		return n;
	switch (SSL_get_error(c->ssl, (int)n)) {
	case SSL_ERROR_WANT_READ:
		return 0;
	case SSL_ERROR_WANT_WRITE:
		c->want_write = true;
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		return -1;
	default:
		ERR_clear_error();
		return -1; /* a reset or a close without close_notify: the peer is gone */
	}
}

/* The HTTP/2 output of this turn into c->out (one write for every frame), up to the
 * output bound: the rest waits in the session until the client takes some. */
static void h2_pump(sconn_t *c)
{
	const uint8_t *d;
	ssize_t n = 0;

	while (!c->dead && !full(c) && (n = dv_https_send(c->h2, &d)) > 0)
		if (buf_put(&c->out, d, (size_t)n) != 0)
			c->dead = true;
	if (n < 0)
		c->dead = true;
}

/* What c sent and was not answered yet (frames kept in c->in, the output the HTTP/2
 * session holds) into c->out, up to the output bound. */
static void refill(dv_stream_t *s, sconn_t *c)
{
	if (c->dead)
		return;
	if (c->h2 != NULL)
		h2_pump(c);
	else if (c->in.len > 0)
		unframe_in(s, c);
}

/* Read up to budget bytes (TLS: one record a read, perhaps a few bytes), none while the
 * output is at its bound. */
static void conn_read_up_to(dv_stream_t *s, sconn_t *c, size_t budget)
{
	if (c->ssl != NULL && !c->hs_done && (tls_handshake(c) != 0 || !c->hs_done))
		return;
	refill(s, c);
	while (budget > 0) {
		ssize_t n;
		if (c->stalled || c->dead || c->eof || full(c))
			break;
		n = read_some(s, c);
		if (n == 0)
			break;
		if (n == -1) {
			c->eof = true;
			flush_held(c);
		} else if (n < 0) {
			c->dead = true;
		} else {
			budget -= DV_MIN((size_t)n, budget);
			take(s, c, (size_t)n);
			if (c->h2 != NULL && !c->dead)
				h2_pump(c);
			/* A plain socket's short read emptied its queue: another read would
			 * only say EAGAIN (one wasted system call per event; epoll is level-
			 * triggered and reports what arrives next). TLS reads a record at a
			 * time, so it reads on. */
			if (c->ssl == NULL && (size_t)n < sizeof(s->rbuf))
				break;
		}
	}
}

/* A turn's reads: DV_STREAM_READS_PER_TURN x 16 KiB at most. */
static void conn_read(dv_stream_t *s, sconn_t *c)
{
	conn_read_up_to(s, c, (size_t)DV_STREAM_READS_PER_TURN * READ_CHUNK);
}

/* Count the frames that went out whole. */
static void walk_written(sconn_t *c)
{
	while (c->out_off - c->walk >= 2) {
		size_t len = dv_wire_get16(c->out.p + c->walk);
		if (c->out_off - c->walk < len + 2)
			break;
		c->walk += len + 2;
		c->na++;
		c->l->c.answered++;
	}
}

/*
 * --https-record-each: where the write that starts at c->out_off ends: after the next
 * HTTP/2 frame that ends a stream (a response's last), so that each response goes in its
 * own TLS record (c->walk: the first frame not yet written whole).
 */
static size_t h2_record_end(const sconn_t *c)
{
	size_t p = c->walk;

	while (c->out.len - p >= 9) {
		const uint8_t *h = c->out.p + p;
		size_t flen = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
		if (c->out.len - p - 9 < flen)
			break;
		p += 9 + flen;
		if (h[3] <= 1 && (h[4] & 1)) /* DATA or HEADERS with END_STREAM */
			return p;
	}
	return c->out.len;
}

static ssize_t write_some(dv_stream_t *s, sconn_t *c)
{
	size_t end = c->h2 != NULL && s->cfg.https_record_each ? h2_record_end(c) : c->out.len;
	size_t n = end - c->out_off;
	ssize_t w;
	int e;

	if (c->ssl == NULL) {
		w = send(c->fd, c->out.p + c->out_off, n, MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		return w;
	}
	w = SSL_write(c->ssl, c->out.p + c->out_off, n > INT32_MAX ? INT32_MAX : (int)n);
	if (w > 0)
		return w;
	e = SSL_get_error(c->ssl, (int)w);
	if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
		return 0;
	ERR_clear_error();
	return -1;
}

static void do_action(dv_stream_t *s, sconn_t *c)
{
	enum action a = c->action;

	c->action = ACT_NONE;
	if (a == ACT_RESET) {
		c->half = true; /* read on, answer nothing */
		c->rst_wait = RST_WAIT_MS;
		s->nrst++;
		return;
	}
	if (c->ssl != NULL)
		SSL_shutdown(c->ssl); /* close_notify */
	if (a == ACT_CLOSE) {
		c->l->c.closed++;
		c->dead = true;
	} else {
		c->l->c.half_closed++;
		c->half = true;
		shutdown(c->fd, SHUT_WR);
	}
}

/* A reset throws away what the client has not acked: wait (1 ms polls, bounded) until
 * the answers written before it are acked, so the client has them all. */
static void reset_when_acked(dv_stream_t *s, sconn_t *c)
{
	int unacked = 0;

	if (ioctl(c->fd, SIOCOUTQ, &unacked) == 0 && unacked > 0 && --c->rst_wait > 0)
		return;
	/* What already waits in the socket was sent by the client: read and count it all
	 * (it answers nothing now, so the output does not grow). */
	conn_read_up_to(s, c, SIZE_MAX);
	c->rst_wait = 0;
	s->nrst--;
	c->l->c.resets++;
	c->rst = true;
	c->dead = true;
}

/* --https-record-each: the records of this turn, one per response, in one write. 0 done,
 * 1 the socket is full (EPOLLOUT: again), -1 the connection failed. */
static int flush_records(sconn_t *c)
{
	BIO *b = SSL_get_wbio(c->ssl);

	if (BIO_flush(b) > 0) {
		c->unflushed = false;
		return 0;
	}
	if (BIO_should_retry(b))
		return 1;
	c->dead = true;
	return -1;
}

static void conn_write(dv_stream_t *s, sconn_t *c)
{
	if (c->ssl != NULL && !c->hs_done) {
		if (c->want_write)
			tls_handshake(c);
		return;
	}
	/* Write, and refill while the socket takes it: bounded by what was read. */
	while (!c->dead && c->out_off < c->out.len) {
		ssize_t n = write_some(s, c);
		if (n > 0)
			c->unflushed = s->cfg.https_record_each && c->h2 != NULL;
		if (n == 0)
			return;
		if (n < 0) {
			c->dead = true;
			return;
		}
		c->out_off += (size_t)n;
		if (c->h2 == NULL)
			walk_written(c);
		else if (s->cfg.https_record_each && c->out_off == h2_record_end(c))
			c->walk = c->out_off;
		if (c->out_off == c->out.len) {
			c->out.len = c->out_off = c->walk = 0;
			refill(s, c);
		}
	}
	if (c->dead)
		return;
	c->out.len = c->out_off = c->walk = 0;
	if (c->unflushed && flush_records(c) != 0)
		return;
	if (c->h2 != NULL && dv_https_done(c->h2))
		c->dead = true;
	if (c->action != ACT_NONE)
		do_action(s, c);
	if (c->eof && c->rst_wait == 0)
		c->dead = true;
}

static void conn_free(sconn_t *c)
{
	dv_stream_counts_t *k = &c->l->c;

	k->unanswered += c->h2 != NULL ? dv_https_unanswered(c->h2) : c->nq - c->na - c->nd;
	dv_https_free(c->h2);
	if (c->rst) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	} else if (c->ssl != NULL && c->hs_done && !c->half) {
		SSL_shutdown(c->ssl);
	}
	SSL_free(c->ssl);
	ERR_clear_error();
	close(c->fd);
	free(c->in.p);
	free(c->out.p);
	free(c->held.p);
	free(c->held_off);
	free(c);
}

/* The events c waits for: input unless stalled, at EOF or at the output bound (counted
 * as throttled when it gets there), output while answers wait. */
static uint32_t wanted(sconn_t *c)
{
	uint32_t ev = 0;

	if (full(c) && !c->throttled)
		c->l->c.throttled++;
	c->throttled = full(c);
	if (!c->stalled && !c->eof && !c->throttled && !c->l->hold_reads)
		ev |= EPOLLIN;
	if (c->want_write || c->unflushed || c->out_off < c->out.len)
		ev |= EPOLLOUT;
	return ev;
}

static void watch(dv_stream_t *s, sconn_t *c, bool add)
{
	struct epoll_event e = {.events = wanted(c), .data.ptr = c};

	if (!add && e.events == c->ev)
		return;
	c->ev = e.events;
	if (epoll_ctl(s->epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c->fd, &e) != 0 && add)
		c->dead = true; /* cannot watch it: dropped at once */
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Watch the paused listeners again: a descriptor was freed, or the pause is over. */
static void resume_accepting(dv_stream_t *s)
{
	struct epoll_event e = {.events = EPOLLIN};
	int i;

	for (i = 0; i < NLIST; i++) {
		if (!s->l[i].paused)
			continue;
		e.data.ptr = EP_LIST(i);
		epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->l[i].fd, &e);
		s->l[i].paused = false;
	}
	s->npaused = 0;
}

/* accept() failed for want of a descriptor or memory: the client waiting stays in the
 * listen queue and keeps the listener readable, so stop watching it for a while (else
 * epoll_wait would return at once, forever). */
static void pause_accepting(dv_stream_t *s, listener_t *l)
{
	struct epoll_event e = {.events = 0, .data.ptr = EP_LIST(l - s->l)};

	l->c.deferred++;
	if (l->paused)
		return;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, l->fd, &e) != 0)
		return;
	l->paused = true;
	if (s->npaused++ == 0)
		s->accept_at = now_ms() + DV_STREAM_ACCEPT_PAUSE_MS;
}

static void resume_push(dv_stream_t *s, sconn_t *c)
{
	if (c->on_resume)
		return;
	c->on_resume = true;
	c->rprev = NULL;
	c->rnext = s->resume;
	if (s->resume != NULL)
		s->resume->rprev = c;
	s->resume = c;
}

static void resume_unlink(dv_stream_t *s, sconn_t *c)
{
	if (!c->on_resume)
		return;
	if (c->rprev != NULL)
		c->rprev->rnext = c->rnext;
	else
		s->resume = c->rnext;
	if (c->rnext != NULL)
		c->rnext->rprev = c->rprev;
	c->on_resume = false;
	c->rprev = c->rnext = NULL;
}

/* Free a dead connection and take it out of conns[] (the last one takes its place). */
static void drop(dv_stream_t *s, sconn_t *c)
{
	sconn_t *last = s->conns[--s->nconns];

	last->idx = c->idx;
	s->conns[c->idx] = last;
	if (c->rst_wait > 0)
		s->nrst--;
	resume_unlink(s, c);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	conn_free(c);
	if (s->npaused > 0)
		resume_accepting(s); /* a descriptor is free */
}

/* --https-record-each: ssl reads from fd and writes through a buffer that conn_write
 * flushes once a turn (each response its own record, all of them in one write). */
static void buffer_writes(SSL *ssl, int fd)
{
	BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE), *buf = BIO_new(BIO_f_buffer());

	if (sock == NULL || buf == NULL || BIO_set_write_buffer_size(buf, READ_CHUNK * 16) != 1 ||
	    BIO_up_ref(sock) != 1) {
		BIO_free(sock);
		BIO_free(buf);
		SSL_set_fd(ssl, fd);
		return;
	}
	BIO_push(buf, sock);
	SSL_set_bio(ssl, sock, buf);
}

/* accept4() failed with e: go on accepting (true) or not. */
static bool accept_failed(dv_stream_t *s, listener_t *l, int e)
{
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)
		pause_accepting(s, l);
	/* a connection reset while it waited, a signal: try the next one */
	return e == ECONNABORTED || e == EINTR || e == EPROTO;
}

/* --stream-read-after-conns: the listener has accepted enough, its connections are read. */
static void release_reads(dv_stream_t *s, listener_t *l)
{
	unsigned i = 0;

	l->hold_reads = false;
	while (i < s->nconns) {
		sconn_t *c = s->conns[i];
		if (c->l == l)
			watch(s, c, false);
		if (c->dead) {
			drop(s, c); /* the last one moved to i: look at it next */
			continue;
		}
		i++;
	}
}

/* At most ACCEPTS_PER_TURN (the listener stays readable if more wait). */
static void accept_all(dv_stream_t *s, listener_t *l)
{
	const dv_stream_faults_t *f = &s->cfg.faults;
	int one = 1, k;

	for (k = 0; k < ACCEPTS_PER_TURN; k++) {
		struct sockaddr_storage peer = {0};
		socklen_t plen = sizeof(peer);
		int fd =
		    accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		sconn_t *c;
		if (fd < 0 && accept_failed(s, l, errno))
			continue;
		if (fd < 0)
			return;
		addr_add(&l->src, &peer);
		l->c.source_addresses = l->src.n;
		if (s->nconns >= DV_STREAM_CONNS_MAX || (c = calloc(1, sizeof(*c))) == NULL) {
			l->c.refused++;
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		l->c.connections++;
		c->fd = fd;
		c->l = l;
		c->faulty = !l->https && every(f->conn_every ? f->conn_every : 1, ++l->seq);
		if (c->faulty && f->reverse > 1)
			c->held_off = calloc(f->reverse, sizeof(*c->held_off));
		if (l->tls) {
			c->ssl = SSL_new(l->https ? s->tls_h2 : s->tls);
			if (c->ssl != NULL && l->https && s->cfg.https_record_each)
				buffer_writes(c->ssl, fd);
			else if (c->ssl != NULL)
				SSL_set_fd(c->ssl, fd);
		}
		if (l->https && dv_https_new(&c->h2, &s->hcfg, &l->c.http) != 0)
			c->dead = true;
		if ((l->tls && c->ssl == NULL) || (c->faulty && f->reverse > 1 && !c->held_off) ||
		    c->dead) {
			conn_free(c);
			continue;
		}
		c->idx = s->nconns;
		s->conns[s->nconns++] = c;
		c->ev = 0;
		watch(s, c, true);
		if (c->dead)
			drop(s, c);
		if (l->hold_reads && l->c.connections >= f->read_after_conns)
			release_reads(s, l);
	}
}

/* ---- the thread ---- */

/* One connection's events: read, write, then its pending reset; dropped when dead. */
static void serve(dv_stream_t *s, sconn_t *c, uint32_t re)
{
	if (c->stalled && (re & (EPOLLHUP | EPOLLERR)))
		c->dead = true; /* a stalled peer that is gone: no busy loop */
	if (!c->dead && (re & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		conn_read(s, c);
	if (!c->dead && (re & (EPOLLOUT | EPOLLIN | EPOLLHUP | EPOLLERR)))
		conn_write(s, c);
	if (c->dead) {
		drop(s, c);
		return;
	}
	watch(s, c, false);
	/* OpenSSL may hold decrypted input that epoll cannot see: serve it next turn. */
	if (c->ssl != NULL && c->hs_done && !c->stalled && !c->eof && !c->throttled &&
	    SSL_pending(c->ssl) > 0)
		resume_push(s, c);
}

/* The TLS connections of resume_push(), each once (serving may push it again). */
static void serve_resumed(dv_stream_t *s)
{
	sconn_t *list = s->resume;

	s->resume = NULL;
	for (sconn_t *c = list; c != NULL; c = c->rnext)
		c->on_resume = false;
	while (list != NULL) {
		sconn_t *c = list;
		list = c->rnext;
		c->rprev = c->rnext = NULL;
		serve(s, c, EPOLLIN);
	}
}

/* epoll_wait's timeout: 0 with connections to resume, 1 ms with resets pending, until
 * the pause ends with listeners paused, else none. */
static int wait_ms(const dv_stream_t *s)
{
	int t = s->nrst > 0 ? 1 : -1;

	if (s->resume != NULL)
		return 0;
	if (s->npaused > 0) {
		uint64_t now = now_ms();
		int left = now >= s->accept_at ? 0 : (int)(s->accept_at - now);
		if (t < 0 || left < t)
			t = left;
	}
	return t;
}

/* Connections waiting to reset are checked every 1 ms (rare: the reset fault only). */
static void pending_resets(dv_stream_t *s)
{
	unsigned i = 0;

	while (s->nrst > 0 && i < s->nconns) {
		sconn_t *c = s->conns[i];
		if (!c->dead && c->rst_wait > 0)
			reset_when_acked(s, c);
		if (c->dead) {
			drop(s, c); /* the last one moved to i: look at it next */
			continue;
		}
		i++;
	}
}

static void *stream_main(void *arg)
{
	dv_stream_t *s = arg;
	struct epoll_event ev[EP_BATCH];
	unsigned i;
	bool stop = false;

	pthread_setname_np(pthread_self(), "dv-stream"); /* for ps, top and the tests */
	while (!stop && !atomic_load(&s->stop)) {
		int n = epoll_wait(s->epfd, ev, EP_BATCH, wait_ms(s)), k;
		for (k = 0; k < n; k++) {
			void *p = ev[k].data.ptr;
			if (p == EP_STOP)
				stop = true;
			else if ((uintptr_t)p < 2 + NLIST)
				accept_all(s, &s->l[(uintptr_t)p - 2]);
			else
				serve(s, p, ev[k].events);
		}
		if (s->nrst > 0)
			pending_resets(s);
		if (s->resume != NULL)
			serve_resumed(s);
		if (s->npaused > 0 && now_ms() >= s->accept_at)
			resume_accepting(s);
	}
	for (i = 0; i < s->nconns; i++)
		conn_free(s->conns[i]);
	s->nconns = 0;
	return NULL;
}

/* ---- setup ---- */

/*
 * The listen backlog: the kernel's ceiling (net.core.somaxconn, 4096 since Linux 5.4), not
 * a fixed 1024. A full accept queue drops the client's SYN and costs it a 1 s retransmit;
 * 10,000 clients connecting at once against a thread busy answering overflowed 1024
 * (doc/performance.md "Opening 10,000 connections"). Half-open connections have their own
 * bound, net.ipv4.tcp_max_syn_backlog (SYN cookies past it).
 */
static int listen_backlog(void)
{
	FILE *f = fopen("/proc/sys/net/core/somaxconn", "r");
	int n = 0;

	if (f != NULL) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n > 0 ? n : SOMAXCONN;
}

static int listen_on(listener_t *l, const struct sockaddr_storage *a, socklen_t len, dv_err_t *err)
{
	int one = 1;

	l->fd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return dv_err_set(err, -errno, "socket: %s", strerror(errno));
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l->fd, (const struct sockaddr *)a, len) != 0 ||
	    listen(l->fd, listen_backlog()) != 0) {
		int e = errno;
		uint16_t port =
		    ntohs(a->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port
		                                   : ((const struct sockaddr_in *)a)->sin_port);
		return dv_err_set(err, -e, "cannot listen on %s port %u: %s",
		                  l->https ? "HTTPS"
		                  : l->tls ? "TLS"
		                           : "TCP",
		                  port, strerror(e));
	}
	return 0;
}

/* ALPN of the HTTPS listener: h2, or no agreement (the handshake goes on). */
static int alpn_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                   const unsigned char *in, unsigned inlen, void *arg)
{
	unsigned char *o;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&o, outlen, (const unsigned char *)"\x02h2", 3, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* A server context into *ctx (h2: the HTTPS listener's, ALPN h2). */
static int tls_setup(dv_stream_t *s, SSL_CTX **ctx, bool h2, dv_err_t *err)
{
	char r[160] = "";
	SSL_CTX *x;

	if (s->cfg.cert_file == NULL || s->cfg.key_file == NULL)
		return dv_err_set(err, -EINVAL, "the %s listener needs --tls-cert and --tls-key",
		                  h2 ? "HTTPS" : "TLS");
	x = *ctx = SSL_CTX_new(TLS_server_method());
	if (x == NULL)
		return dv_err_set(err, -ENOMEM, "TLS: cannot create a context");
	SSL_CTX_set_min_proto_version(x, TLS1_2_VERSION);
	/* RELEASE_BUFFERS: an idle connection gives its record buffers back. */
	SSL_CTX_set_mode(x, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	                        SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_id_context(x, (const unsigned char *)"dnsvolley", 9);
	/* A client that shuts its TCP write side without close_notify is at EOF, as over
	 * TCP: the answers still due are written (else OpenSSL would fail the connection). */
	SSL_CTX_set_options(x, SSL_OP_IGNORE_UNEXPECTED_EOF);
	if (h2) { /* DoH connections are busy: keep their record buffers (no 16 KB per turn) */
		SSL_CTX_set_alpn_select_cb(x, alpn_h2, NULL);
		SSL_CTX_clear_mode(x, SSL_MODE_RELEASE_BUFFERS);
	}
	if (SSL_CTX_use_certificate_chain_file(x, s->cfg.cert_file) != 1) {
		ERR_error_string_n(ERR_get_error(), r, sizeof(r));
		return dv_err_set(err, -EINVAL, "--tls-cert %s: %s", s->cfg.cert_file, r);
	}
	if (SSL_CTX_use_PrivateKey_file(x, s->cfg.key_file, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(x) != 1) {
		ERR_error_string_n(ERR_get_error(), r, sizeof(r));
		return dv_err_set(err, -EINVAL, "--tls-key %s: %s", s->cfg.key_file, r);
	}
	return 0;
}

/* The stop pipe and the listeners into the epoll set. */
static int watch_fixed(dv_stream_t *s, dv_err_t *err)
{
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = EP_STOP};
	int i;

	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->stop_pipe[0], &e) != 0)
		return dv_err_set(err, -errno, "epoll: %s", strerror(errno));
	for (i = 0; i < NLIST; i++) {
		e.data.ptr = EP_LIST(i);
		if (s->l[i].fd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->l[i].fd, &e) != 0)
			return dv_err_set(err, -errno, "epoll: %s", strerror(errno));
	}
	return 0;
}

/* Room for DV_STREAM_CONNS_MAX connections when the hard limit allows it (best effort:
 * past the limit, accept fails and the client sees its connect refused or timed out). */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	rlim_t need = DV_STREAM_CONNS_MAX + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int dv_stream_open(dv_stream_t **out, const dv_stream_config_t *cfg, dv_err_t *err)
{
	dv_stream_t *s = calloc(1, sizeof(*s));
	int rc = 0;

	*out = NULL;
	if (s == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	s->cfg = *cfg;
	s->l[0].fd = s->l[1].fd = s->l[2].fd = s->stop_pipe[0] = s->stop_pipe[1] = s->epfd = -1;
	s->l[DV_STREAM_TLS].tls = s->l[DV_STREAM_HTTPS].tls = s->l[DV_STREAM_HTTPS].https = true;
	s->hcfg.path = cfg->doh_path != NULL ? cfg->doh_path : "/dns-query";
	s->hcfg.max_streams =
	    cfg->https_max_streams ? cfg->https_max_streams : DV_HTTPS_MAX_STREAMS;
	dv_answer_opts_init(&s->hcfg.opts);
	s->hcfg.opts.rcode = cfg->rcode;
	s->hcfg.opts.reflect = cfg->reflect;
	s->hcfg.scratch = s->abuf;
	s->hcfg.scratch_len = sizeof(s->abuf);
	s->hcfg.conn_budget =
	    cfg->https_conn_budget ? cfg->https_conn_budget : DV_HTTPS_CONN_BUDGET;
	s->hcfg.total_budget = cfg->https_budget ? cfg->https_budget : DV_HTTPS_TOTAL_BUDGET;
	if (cfg->faults.reverse > DV_STREAM_REVERSE_MAX) {
		rc = dv_err_set(err, -EINVAL, "reverse groups hold at most %d answers",
		                DV_STREAM_REVERSE_MAX);
		goto out;
	}
	s->conns = calloc(DV_STREAM_CONNS_MAX, sizeof(*s->conns));
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->conns == NULL || s->epfd < 0 || pipe2(s->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		rc = dv_err_set(err, -ENOMEM, "out of memory or descriptors");
		goto out;
	}
	if ((cfg->tls && (rc = tls_setup(s, &s->tls, false, err)) != 0) ||
	    (cfg->https && (rc = tls_setup(s, &s->tls_h2, true, err)) != 0))
		goto out;
	if (cfg->tcp && (rc = listen_on(&s->l[0], &cfg->tcp_addr, cfg->addr_len, err)) != 0)
		goto out;
	if (cfg->tls && (rc = listen_on(&s->l[1], &cfg->tls_addr, cfg->addr_len, err)) != 0)
		goto out;
	if (cfg->https && (rc = listen_on(&s->l[2], &cfg->https_addr, cfg->addr_len, err)) != 0)
		goto out;
	if ((rc = watch_fixed(s, err)) != 0)
		goto out;
	for (int i = 0; i < NLIST; i++)
		s->l[i].hold_reads = cfg->faults.read_after_conns > 0;
	raise_fd_limit();
	*out = s;
out:
	ERR_clear_error();
	if (rc != 0)
		dv_stream_free(s);
	return rc;
}

uint16_t dv_stream_port(const dv_stream_t *s, int which)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	const listener_t *l = &s->l[which];

	if (l->fd < 0 || getsockname(l->fd, (struct sockaddr *)&a, &len) != 0)
		return 0;
	return ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
	                                     : ((struct sockaddr_in *)&a)->sin_port);
}

int dv_stream_start(dv_stream_t *s, dv_err_t *err)
{
	int e;

	/* OpenSSL writes TLS records with write(): a client that closed must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	e = pthread_create(&s->tid, NULL, stream_main, s);

	if (e != 0)
		return dv_err_set(err, -e, "cannot start the stream thread: %s", strerror(e));
	s->started = true;
	return 0;
}

void dv_stream_stop(dv_stream_t *s)
{
	char b = 1;
	ssize_t rc;

	atomic_store(&s->stop, 1);
	rc = write(s->stop_pipe[1], &b, 1);
	(void)rc;
}

void dv_stream_join(dv_stream_t *s, dv_stream_counts_t *tcp, dv_stream_counts_t *tls,
                    dv_stream_counts_t *https)
{
	if (s->started) {
		pthread_join(s->tid, NULL);
		s->started = false;
	}
	*tcp = s->l[0].c;
	*tls = s->l[1].c;
	*https = s->l[2].c;
	https->received = https->http.received;
	https->answered = https->http.answered;
	https->malformed = https->http.s400;
}

void dv_stream_free(dv_stream_t *s)
{
	unsigned i;

	if (s == NULL)
		return;
	if (s->started) {
		dv_stream_stop(s);
		pthread_join(s->tid, NULL);
	}
	for (i = 0; i < s->nconns; i++)
		conn_free(s->conns[i]);
	for (i = 0; i < NLIST; i++) {
		if (s->l[i].fd >= 0)
			close(s->l[i].fd);
		free(s->l[i].src.k);
	}
	if (s->stop_pipe[0] >= 0)
		close(s->stop_pipe[0]);
	if (s->stop_pipe[1] >= 0)
		close(s->stop_pipe[1]);
	SSL_CTX_free(s->tls);
	SSL_CTX_free(s->tls_h2);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->conns);
	free(s);
}
