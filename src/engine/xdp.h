/* xdp: --xdp IFACE: a pass's queries sent and answers read through AF_XDP sockets. */
#ifndef DV_ENGINE_XDP_H
#define DV_ENGINE_XDP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"
#include "engine/engine.h"
#include "engine/run_config.h"

/*
 * The UDP path with another I/O (doc/xdp.md). The worker keeps everything else: the
 * window, pacing, timeouts, matching and counting are dv_engine_* as over sockets.
 * Each worker's "sockets" (-c) are kernel UDP sockets connected to the server that
 * only hold their source ports, so nothing else on the host takes them; the frames
 * go out and the answers come in through one XDP socket per worker on the receive
 * queue of the worker's number, which the pass's XDP program fills with the UDP
 * datagrams to those ports (everything else goes on to the kernel).
 */

/* --xdp: how a pass ran over AF_XDP (doc/xdp.md), so that no copy-mode figure passes for a
 * zero-copy one; used false for a pass over kernel sockets. */
typedef struct dv_xdp_info {
	bool used;       /* the pass ran over AF_XDP */
	bool native;     /* the program attached in the driver's (native) mode, not generic (skb) */
	bool zerocopy;   /* every XDP socket bound zero-copy; false: the kernel copies each frame */
	uint32_t queues; /* XDP sockets, one a receive queue and worker (-T) */
	uint32_t rx_queues; /* the interface's receive queues */
} dv_xdp_info_t;

struct dv_xdp; /* a pass's: the interface, the attached program, the frames' headers */
struct dv_xw;  /* a worker's: its XDP socket, UMEM and rings */

#ifdef HAVE_XDP

/*
 * Before the workers open: load and attach the steering program on cfg->xdp_iface, find
 * the route, source address and neighbour of the server (IPv4 or IPv6) through it. 0, or
 * a negative errno with one sentence in err (no route through the interface, no neighbour, not
 * root, no native XDP, interface busy, more threads than receive queues).
 */
int dv_xdp_open(struct dv_xdp **out, const dv_run_config_t *cfg, dv_err_t *err);
void dv_xdp_close(struct dv_xdp *x); /* after every worker's dv_xw_close; NULL is fine */

/* How the pass runs over AF_XDP: the program's attach mode, the sockets' bind mode (copy or
 * zero-copy, as the kernel chose for each dv_xw_open so far), the queues. */
void dv_xdp_info(const struct dv_xdp *x, dv_xdp_info_t *out);

/*
 * Worker queue's XDP socket with nsocks source ports: port i is the local port of fds[i]
 * (a bound UDP socket the caller keeps open). 0 or a negative errno with a sentence.
 */
int dv_xw_open(struct dv_xw **out, struct dv_xdp *x, unsigned queue, const int *fds,
               unsigned nsocks, dv_err_t *err);
void dv_xw_close(struct dv_xw *xw); /* NULL is fine */

/*
 * Queue n prepared queries (bufs[i], lens[i] octets) as frames from source port sock
 * and wake the kernel to send them. Returns how many were queued: fewer than n when
 * the transmit ring or the free frames ran out (try again later).
 */
unsigned dv_xw_send(struct dv_xw *xw, dv_engine_t *e, uint16_t sock,
                    uint8_t (*bufs)[DV_MAX_QUERY_LEN], const unsigned *lens, unsigned n);

/*
 * Read the answers waiting (a batch at most) into e (dv_engine_receive, from_ok when
 * they come from the server's address and port); with nothing waiting, wait up to
 * wait_ns for some first. tick (paced, sending): once answers carry receive stamps,
 * sleep the whole wait_ns instead of waking for the first answer, since the stamps keep
 * the wait out of their latency. Returns the frames read.
 */
unsigned dv_xw_recv(struct dv_xw *xw, dv_engine_t *e, uint64_t wait_ns, bool tick);

/* Frames the kernel dropped for this socket (receive ring full, no free frame). */
uint64_t dv_xw_drops(const struct dv_xw *xw);

/* With several workers: thread t (the worker's) on a CPU of the socket's queue, where a
 * veth returns the answers to its queries (xdp.c says why); NULL is fine. */
void dv_xw_pin(const struct dv_xw *xw, pthread_t t);

#else /* built without libxdp/libbpf (configure): --xdp says so */
#include <errno.h>
#include <string.h>
static inline int dv_xdp_open(struct dv_xdp **out, const dv_run_config_t *cfg, dv_err_t *err)
{
	(void)cfg;
	*out = NULL;
	return dv_err_set(err, -ENOTSUP,
	                  "--xdp: this dnsvolley was built without AF_XDP (configure found no "
	                  "libxdp, libbpf or clang): rebuild with them (doc/xdp.md)");
}
static inline void dv_xdp_close(struct dv_xdp *x)
{
	(void)x;
}
static inline void dv_xdp_info(const struct dv_xdp *x, dv_xdp_info_t *out)
{
	(void)x;
	memset(out, 0, sizeof(*out));
}
static inline int dv_xw_open(struct dv_xw **out, struct dv_xdp *x, unsigned queue, const int *fds,
                             unsigned nsocks, dv_err_t *err)
{
	(void)x, (void)queue, (void)fds, (void)nsocks;
	*out = NULL;
	return dv_err_set(err, -ENOTSUP, "--xdp: built without AF_XDP");
}
static inline void dv_xw_close(struct dv_xw *xw)
{
	(void)xw;
}
static inline unsigned dv_xw_send(struct dv_xw *xw, dv_engine_t *e, uint16_t sock,
                                  uint8_t (*bufs)[DV_MAX_QUERY_LEN], const unsigned *lens,
                                  unsigned n)
{
	(void)xw, (void)e, (void)sock, (void)bufs, (void)lens, (void)n;
	return 0;
}
static inline unsigned dv_xw_recv(struct dv_xw *xw, dv_engine_t *e, uint64_t wait_ns, bool tick)
{
	(void)xw, (void)e, (void)wait_ns, (void)tick;
	return 0;
}
static inline uint64_t dv_xw_drops(const struct dv_xw *xw)
{
	(void)xw;
	return 0;
}
static inline void dv_xw_pin(const struct dv_xw *xw, pthread_t t)
{
	(void)xw, (void)t;
}
#endif

#endif
