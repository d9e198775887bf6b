/* fuzz_rstream: libFuzzer target for the responder's stream input: DNS over TCP framing and
 * DoH (HTTP/2) requests, through the connection code of src/responder/stream.c. */
/*
 * stream.c is included, not linked: its connection functions are static, and the target
 * must run them (conn_read, conn_write, the output bound) as a connection does. The
 * client's end is in memory, not a socket pair: read(), send(), shutdown() and close() on
 * the connection's descriptor (FZ_FD) are redefined below for stream.c alone, with a
 * socket's semantics (EAGAIN when nothing is there or no room is left, 0 at the client's
 * end of input, EPIPE after the server's shutdown). A socket pair cost five system calls a
 * turn, two thirds of the time. TLS is left out (OpenSSL's).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/dns.h"
#include "base/util.h"
#include "base/wire.h"
#include "responder/answer.h"
#include "responder/https.h"
#include "responder/stream.h"

#define FZ_FD (1 << 30) /* no real descriptor: a stray system call on it fails */
/* Unsent server output the client's end holds before send() says EAGAIN: the socket pair's
 * 4 KiB SO_SNDBUF (so the output bound is met with little input). */
#define FZ_OUT_ROOM 4096
/* Client bytes written and not read before the client's write() says EAGAIN. */
#define FZ_IN_ROOM ((size_t)128 << 10)

/* The client's end: its bytes (the HTTP/2 preface, then the input), how far it has
 * written them and the server has read them, what the server sent and it has not read. */
static struct {
	const uint8_t *pre, *d;
	size_t npre, len; /* the stream is pre[0..npre) then d[0..len) */
	size_t written, taken;
	bool cli_shut, srv_shut;
	size_t unread;
} P;

static ssize_t fz_read(int fd, void *buf, size_t n)
{
	size_t k, i = 0;

	if (fd != FZ_FD)
		return read(fd, buf, n);
	if (P.taken == P.written) {
		if (P.cli_shut)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	k = DV_MIN(n, P.written - P.taken);
	while (i < k) { /* from the preface, then from the input */
		size_t at = P.taken + i;
		const uint8_t *src = at < P.npre ? P.pre + at : P.d + (at - P.npre);
		size_t m = DV_MIN(k - i, at < P.npre ? P.npre - at : P.npre + P.len - at);
		memcpy((uint8_t *)buf + i, src, m);
		i += m;
	}
	P.taken += k;
	return (ssize_t)k;
}

static ssize_t fz_send(int fd, const void *buf, size_t n, int flags)
{
	size_t k;

	if (fd != FZ_FD)
		return send(fd, buf, n, flags);
	if (P.srv_shut) {
		errno = EPIPE;
		return -1;
	}
	k = DV_MIN(n, FZ_OUT_ROOM - P.unread);
	if (k == 0) {
		errno = EAGAIN;
		return -1;
	}
	P.unread += k;
	return (ssize_t)k;
}

static int fz_shutdown(int fd, int how)
{
	if (fd != FZ_FD)
		return shutdown(fd, how);
	if (how != SHUT_RD)
		P.srv_shut = true;
	return 0;
}

static int fz_close(int fd)
{
	return fd == FZ_FD ? 0 : close(fd);
}

/* The client's side of a turn: write up to n more bytes; returns how many went. */
static size_t client_write(size_t n)
{
	size_t k = DV_MIN(n, P.npre + P.len - P.written);

	k = DV_MIN(k, FZ_IN_ROOM - (P.written - P.taken));
	P.written += k;
	return k;
}

/* ... and read up to n bytes of the server's output; returns how many came. */
static size_t client_read(size_t n)
{
	size_t k = DV_MIN(n, P.unread);

	P.unread -= k;
	return k;
}

#define read     fz_read
#define send     fz_send
#define shutdown fz_shutdown
#define close    fz_close
#include "../../src/responder/stream.c"
#undef read
#undef send
#undef shutdown
#undef close

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STEPS_MAX 4096
/* Writes of the chosen size for this many turns, then each twice the last: an input fed
 * byte by byte took thousands of turns, half of the target's time (the client's reads
 * per turn stay as chosen). */
#define WRITE_TURNS 128
#define WRITE_MAX   ((size_t)1 << 20)
/* What a connection may hold at once: output at the bound plus one answer (TCP) or one
 * nghttp2 send (at most a 16 KiB DATA frame and its header), input of one read plus a cut
 * frame. */
#define OUT_BOUND (DV_STREAM_OUT_MAX + ABUF_LEN + 2 + 16384 + 9)
#define IN_BOUND  (READ_CHUNK + FRAME_MAX + 2)

static const uint8_t PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static dv_stream_t S; /* static: its buffers are large */

/* Byte 0: bit 0 DoH; bits 1..3 a TCP fault (drop every 3, reverse 4, close, reset,
 * half-close or stall after 5); bit 4: --reflect. */
static void configure(uint8_t f)
{
	dv_stream_faults_t *x = &S.cfg.faults;
	static const uint64_t after = 5;

	memset(&S.cfg, 0, sizeof(S.cfg));
	memset(S.l, 0, sizeof(S.l));
	S.nrst = 0;
	S.resume = NULL;
	S.cfg.rcode = -1;
	S.cfg.reflect = (f & 16) != 0;
	x->conn_every = 1;
	switch ((f >> 1) & 7) {
	case 1:
		x->drop_every = 3;
		break;
	case 2:
		x->reverse = 4;
		break;
	case 3:
		x->close_after = after;
		break;
	case 4:
		x->reset_after = after;
		break;
	case 5:
		x->half_close_after = after;
		break;
	case 6:
		x->stall_after = after;
		break;
	default:
		break;
	}
	S.hcfg.path = "/dns-query";
	S.hcfg.max_streams = 100;
	dv_answer_opts_init(&S.hcfg.opts);
	S.hcfg.opts.reflect = S.cfg.reflect;
	S.hcfg.scratch = S.abuf;
	S.hcfg.scratch_len = sizeof(S.abuf);
	S.l[DV_STREAM_HTTPS].https = S.l[DV_STREAM_HTTPS].tls = true;
}

static sconn_t *conn_new(bool h2, int fd)
{
	sconn_t *c = calloc(1, sizeof(*c));

	if (c == NULL)
		abort();
	c->fd = fd;
	c->l = &S.l[h2 ? DV_STREAM_HTTPS : DV_STREAM_TCP];
	c->faulty = !h2;
	if (c->faulty && S.cfg.faults.reverse > 1 &&
	    (c->held_off = calloc(S.cfg.faults.reverse, sizeof(*c->held_off))) == NULL)
		abort();
	if (h2 && dv_https_new(&c->h2, &S.hcfg, &c->l->c.http) != 0)
		abort();
	return c;
}

/* The bounds hold after every turn. */
static void check(const sconn_t *c)
{
	if (c->out.len - c->out_off > OUT_BOUND || c->in.len > IN_BOUND || c->out_off > c->out.len)
		abort();
	if (c->h2 == NULL && c->nq < c->na + c->nd)
		abort();
}

/* Feed the client's bytes to the connection in writes of `chunk` bytes (WRITE_TURNS of
 * them, then growing), reading `drain` x 64 bytes of output per turn (0: a client that
 * never reads), then the end of its input. */
static void run(sconn_t *c, size_t chunk, size_t drain)
{
	bool shut = false;
	unsigned step;

	for (step = 0; step < STEPS_MAX && !c->dead; step++) {
		size_t w = 0, r = 0;
		if (P.written < P.npre + P.len) {
			w = client_write(chunk);
			if (step + 1 >= WRITE_TURNS)
				chunk = DV_MIN(chunk * 2, WRITE_MAX);
		} else if (!shut) {
			P.cli_shut = shut = true;
			w = 1;
		}
		if (wanted(c) & EPOLLIN)
			conn_read(&S, c);
		if (!c->dead)
			conn_write(&S, c);
		check(c);
		if (drain > 0)
			r = client_read(DV_MIN(drain * 64, (size_t)65536));
		/* Neither side can go on: a client that does not read, a server at its bound. */
		if (w == 0 && r == 0 && !(wanted(c) & EPOLLIN))
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sconn_t *c;
	bool h2;

	if (size < 3)
		return 0;
	configure(data[0]);
	h2 = (data[0] & 1) != 0;
	memset(&P, 0, sizeof(P));
	P.pre = PREFACE;
	P.npre = h2 ? sizeof(PREFACE) - 1 : 0;
	P.d = data + 3;
	P.len = size - 3;
	c = conn_new(h2, FZ_FD);
	/* writes of 1..128 bytes, or 1..128 KiB (big inputs in few turns); the preface is
	 * written whole first */
	if (h2)
		P.written = P.npre;
	run(c, data[1] < 128 ? (size_t)data[1] + 1 : (size_t)(data[1] - 127) * 1024, data[2]);
	/* Every request taken got one status; answers never outnumber queries. */
	if (c->l->c.http.received != c->l->c.http.s200 + c->l->c.http.s400 + c->l->c.http.s404 +
	                                 c->l->c.http.s405 + c->l->c.http.s415 ||
	    c->l->c.http.answered > c->l->c.http.s200 || c->l->c.answered > c->l->c.received)
		abort();
	conn_free(c);
	return 0;
}
