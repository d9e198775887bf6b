/* xsk: one AF_XDP socket with its UMEM and rings, as dnsvolley --xdp and the responder's --xdp use
 * it. */
#ifndef DV_XSK_H
#define DV_XSK_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "base/util.h"

/*
 * UMEM: DV_XSK_FRAMES frames of DV_XSK_FRAME octets, fixed at open; the first half are
 * transmit frames (a stack of free ones, refilled from the completion ring), the
 * second half belong to the fill and receive rings and go straight back to the fill
 * ring once read (dv_xsk_rx_done). Rings of half the frames each, so none can
 * overflow, and memory never grows: what the rings cannot take, the kernel drops and
 * counts (dv_xsk_stats).
 */
#define DV_XSK_FRAMES 4096
#define DV_XSK_FRAME  2048
#define DV_XSK_RING   (DV_XSK_FRAMES / 2)
#define DV_XSK_BATCH  64

typedef struct dv_xsk {
	void *area; /* the UMEM (frame at offset addr: xsk_umem__get_data(area, addr)) */
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	int fd;         /* -1 until open */
	int xsks_fd;    /* the XSKMAP it is registered in (key: the queue) */
	unsigned queue; /* the interface's receive queue it is bound to */
	bool zerocopy;  /* the kernel bound it zero-copy (else it copies each frame) */
	uint64_t tx_free[DV_XSK_RING]; /* free transmit frames (their UMEM offsets) */
	unsigned ntx_free;
} dv_xsk_t;

/* The receive queues of interface dev (/sys/class/net/DEV/queues/rx-N), at least 1. */
unsigned dv_xsk_rx_queues(const char *dev);

/*
 * The UMEM, its rings and the socket on queue of ifname (copy or zero-copy as the
 * driver allows, wake-ups on demand), registered in XSKMAP xsks_fd under the queue; the
 * fill ring full. The previous socket on that queue may still be let go by the kernel:
 * EBUSY is tried again for up to 2 s. 0, or a negative errno with one sentence starting
 * with flag ("--xdp IFACE: ..."): -EADDRINUSE when another XDP socket holds the queue,
 * "(run as root)" for -EPERM. s is closed by dv_xsk_close either way.
 */
int dv_xsk_open(dv_xsk_t *s, const char *ifname, unsigned queue, int xsks_fd, const char *flag,
                dv_err_t *err);
/* Unregister (the map holds the socket too), close, free the UMEM; a zeroed or closed s
 * is fine. */
void dv_xsk_close(dv_xsk_t *s);

/* Transmit frames the kernel is done with (completion ring) back on the free stack. */
void dv_xsk_reclaim(dv_xsk_t *s);

/* After xsk_ring_prod__submit on the transmit ring: wake the kernel when it asks to be
 * (copy mode transmits only when told). True when a system call was made. */
bool dv_xsk_kick_tx(dv_xsk_t *s);

/* Nothing to read: wake the kernel to fill the receive ring when it asks to be. True
 * when a system call was made. */
bool dv_xsk_kick_rx(dv_xsk_t *s);

/* The n receive descriptors from idx (xsk_ring_cons__peek) are read: their frames go
 * straight back to the fill ring (it has room: it owns them) and the descriptors are
 * released. */
void dv_xsk_rx_done(dv_xsk_t *s, uint32_t idx, uint32_t n);

/*
 * The receive stamp (ns, CLOCK_MONOTONIC) the XDP program wrote before the frame at addr
 * of UMEM area (base/xdp_meta.h), or 0 when it has none (a program that does not stamp, a
 * driver without room for metadata, a frame at its chunk's start); taken once: a second
 * call gives 0.
 */
uint64_t dv_xsk_rx_stamp(void *area, uint64_t addr);

/* The kernel's counts for this socket (XDP_STATISTICS); zeros when it cannot tell. */
void dv_xsk_stats(const dv_xsk_t *s, struct xdp_statistics *st);

#endif
