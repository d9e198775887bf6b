/* fuzz_rstream: libFuzzer target for the responder's stream input: DNS over TCP framing and
 * DoH (HTTP/2) requests, through the connection code of src/responder/stream.c. */
/*
 * stream.c is included, not linked: its connection functions are static, and the target
 * must run them (conn_read, conn_write, the output bound) as a connection does, on a
 * socket pair in place of the client's TCP connection. TLS is left out (OpenSSL's).
 */
#include "../../src/responder/stream.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STEPS_MAX 4096
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

/* Feed the input to the connection in writes of `chunk` bytes, reading `drain` x 64 bytes
 * of output per turn (0: a client that never reads), then the end of the input. */
static void run(sconn_t *c, int peer, const uint8_t *d, size_t len, size_t chunk, size_t drain)
{
	static uint8_t sink[65536];
	size_t pos = 0;
	bool shut = false;
	unsigned step;

	for (step = 0; step < STEPS_MAX && !c->dead; step++) {
		ssize_t w = 0, r = 0;
		if (pos < len) {
			w = write(peer, d + pos, DV_MIN(chunk, len - pos));
			pos += w > 0 ? (size_t)w : 0;
		} else if (!shut) {
			shutdown(peer, SHUT_WR);
			shut = true;
			w = 1;
		}
		if (wanted(c) & EPOLLIN)
			conn_read(&S, c);
		if (!c->dead)
			conn_write(&S, c);
		check(c);
		if (drain > 0)
			r = read(peer, sink, DV_MIN(drain * 64, sizeof(sink)));
		/* Neither side can go on: a client that does not read, a server at its bound. */
		if (w <= 0 && r <= 0 && !(wanted(c) & EPOLLIN))
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sp[2];
	sconn_t *c;
	bool h2;

	if (size < 3)
		return 0;
	configure(data[0]);
	h2 = (data[0] & 1) != 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) != 0)
		return 0;
	/* A small socket buffer: the output bound is met with little input. */
	setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &(int){4096}, sizeof(int));
	c = conn_new(h2, sp[0]);
	if (h2 && write(sp[1], PREFACE, sizeof(PREFACE) - 1) != (ssize_t)sizeof(PREFACE) - 1)
		abort();
	/* writes of 1..128 bytes, or 1..128 KiB (big inputs in few turns) */
	run(c, sp[1], data + 3, size - 3,
	    data[1] < 128 ? (size_t)data[1] + 1 : (size_t)(data[1] - 127) * 1024, data[2]);
	/* Every request taken got one status; answers never outnumber queries. */
	if (c->l->c.http.received != c->l->c.http.s200 + c->l->c.http.s400 + c->l->c.http.s404 +
	                                 c->l->c.http.s405 + c->l->c.http.s415 ||
	    c->l->c.http.answered > c->l->c.http.s200 || c->l->c.answered > c->l->c.received)
		abort();
	conn_free(c);
	close(sp[1]);
	return 0;
}
