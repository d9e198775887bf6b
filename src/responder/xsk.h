/* responder xsk: dnsvolley-responder --xdp IFACE: full answers through AF_XDP sockets. */
#ifndef DV_RESPONDER_XSK_H
#define DV_RESPONDER_XSK_H

#include <stdint.h>

#include "base/util.h"
#include "responder/responder.h"

/*
 * The answer mode at the driver (doc/xdp.md): a BPF program on ifname hands every UDP
 * datagram to port (IPv4, IPv6) to the XDP socket of its receive queue; one socket and
 * one thread for each of the queues 0..threads-1, each answering with the socket path's
 * rules (dv_responder_answer: the answers, rcode, TC, the faults; dv_responder_admit:
 * --capacity and --delay) in frames of its own UMEM, fixed at start. Datagrams on queues without
 * a socket, and everything else, reach the responder's UDP sockets as before.
 */
typedef struct dv_rxsk dv_rxsk_t;

typedef struct dv_rxsk_counts {
	/* The sockets' work, summed over threads: received = answered + dropped + faulty +
	 * malformed (+ send_errors, none expected: a thread reads no more than it has
	 * frames to answer with); malformed also counts frames that are no whole UDP
	 * datagram (lengths, IPv4 header checksum). */
	dv_responder_counts_t c;
	/* The kernel's, summed over sockets (XDP_STATISTICS): frames it dropped before the
	 * responder saw them (no room in the receive ring, no frame in the fill ring), and
	 * transmit descriptors it refused. */
	uint64_t rx_dropped, rx_ring_full, rx_fill_ring_empty, tx_invalid;
	/* --capacity: frames read with their arrival stamp (the queue times them by it; the
	 * others by their batch's read). 0 without --capacity. */
	uint64_t stamped;
} dv_rxsk_counts_t;

#ifdef HAVE_XDP
#include "base/xdpload.h"

/* Load the program for ifname and set its port (and stamp: a receive stamp before each
 * frame), not attached, its map of sockets empty (dv_rxsk_open's first part; the tests
 * run it on frames of their own with BPF_PROG_TEST_RUN): *xsks_fd is that map's. 0, or a
 * negative errno with one sentence. */
int dv_rxsk_load(dv_xdp_prog_t *p, const char *ifname, uint16_t port, bool stamp, int *xsks_fd,
                 dv_err_t *err);
/*
 * Load and attach the program, open cfg->threads XDP sockets on queues 0.. (at most the
 * interface's receive queues). 0, or a negative errno with one sentence in err (not
 * root, no native XDP, interface busy, too few queues, queue held by another socket).
 */
int dv_rxsk_open(dv_rxsk_t **out, const char *ifname, uint16_t port,
                 const dv_responder_config_t *cfg, dv_err_t *err);
/* One thread per socket. Call with SIGINT/SIGTERM blocked. */
int dv_rxsk_start(dv_rxsk_t *r, dv_err_t *err);
/* Stop, join (each thread sees the stop within 100 ms) and sum the counts. */
void dv_rxsk_join(dv_rxsk_t *r, dv_rxsk_counts_t *c);
void dv_rxsk_close(dv_rxsk_t *r); /* joins first when needed; detaches; NULL is fine */
#else
#include <errno.h>
#include <string.h>
static inline int dv_rxsk_open(dv_rxsk_t **out, const char *ifname, uint16_t port,
                               const dv_responder_config_t *cfg, dv_err_t *err)
{
	(void)ifname, (void)port, (void)cfg;
	*out = NULL;
	return dv_err_set(err, -ENOTSUP,
	                  "--xdp: built without AF_XDP (configure found no libxdp, libbpf or "
	                  "clang): rebuild with them (doc/xdp.md)");
}
static inline int dv_rxsk_start(dv_rxsk_t *r, dv_err_t *err)
{
	(void)r, (void)err;
	return 0;
}
static inline void dv_rxsk_join(dv_rxsk_t *r, dv_rxsk_counts_t *c)
{
	(void)r;
	memset(c, 0, sizeof(*c));
}
static inline void dv_rxsk_close(dv_rxsk_t *r)
{
	(void)r;
}
#endif

#endif
