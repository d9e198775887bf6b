/* xsk: one AF_XDP socket with its UMEM and rings, as dnsvolley --xdp and the responder's --xdp use
 * it. */
#include "config.h"

#include "base/xsk.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <xdp/libxdp.h>

#include "base/xdp_meta.h"

unsigned dv_xsk_rx_queues(const char *dev)
{
	char path[128];
	unsigned n;

	for (n = 0; n < 1024; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u", dev, n);
		if (access(path, F_OK) != 0)
			break;
	}
	return n > 0 ? n : 1;
}

static int silent(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/*
 * The UMEM and the socket on the queue. The kernel lets go of a queue some time after
 * its last XDP socket closed (a work queue frees the buffer pool), so the previous
 * socket can still hold it: EBUSY is tried again for up to DV_XSK_BUSY_TRIES * 20 ms
 * before it is reported.
 */
#define DV_XSK_BUSY_TRIES 100
static int create(dv_xsk_t *s, const char *ifname, size_t size, const struct xsk_umem_config *uc,
                  const struct xsk_socket_config *sc)
{
	const struct timespec tick = {0, 20 * 1000 * 1000};
	int rc = 0, i;

	for (i = 0; i < DV_XSK_BUSY_TRIES; i++) {
		rc = xsk_umem__create(&s->umem, s->area, size, &s->fill, &s->comp, uc);
		if (rc != 0)
			return rc;
		rc = xsk_socket__create(&s->xsk, ifname, s->queue, s->umem, &s->rx, &s->tx, sc);
		if (rc != -EBUSY)
			break;
		xsk_umem__delete(s->umem);
		s->umem = NULL;
		s->xsk = NULL;
		nanosleep(&tick, NULL);
	}
	return rc;
}

int dv_xsk_open(dv_xsk_t *s, const char *ifname, unsigned queue, int xsks_fd, const char *flag,
                dv_err_t *err)
{
	struct xsk_umem_config uc = {.fill_size = DV_XSK_RING,
	                             .comp_size = DV_XSK_RING,
	                             .frame_size = DV_XSK_FRAME,
	                             .frame_headroom = 0,
	                             .flags = 0};
	struct xsk_socket_config sc = {.rx_size = DV_XSK_RING,
	                               .tx_size = DV_XSK_RING,
	                               .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	                               .bind_flags = XDP_USE_NEED_WAKEUP};
	size_t size = (size_t)DV_XSK_FRAMES * DV_XSK_FRAME;
	struct xdp_options opt = {0};
	socklen_t optlen = sizeof(opt);
	uint32_t idx = 0, i;
	int rc;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->xsks_fd = -1;
	s->queue = queue;
	s->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->area == MAP_FAILED) {
		s->area = NULL;
		return dv_err_set(err, -ENOMEM, "%s: out of memory for the UMEM", flag);
	}
	libxdp_set_print(silent);
	rc = create(s, ifname, size, &uc, &sc);
	if (rc == -EBUSY) /* not -EBUSY: a pass that sent nothing (DV_RUN_NOTHING_SENT) */
		return dv_err_set(err, -EADDRINUSE,
		                  "%s %s: cannot open an XDP socket on queue %u: another "
		                  "program's XDP socket holds that queue",
		                  flag, ifname, queue);
	if (rc != 0)
		return dv_err_set(err, rc, "%s %s: cannot open an XDP socket on queue %u: %s%s",
		                  flag, ifname, queue, strerror(-rc),
		                  rc == -EPERM ? " (run as root)" : "");
	s->fd = xsk_socket__fd(s->xsk);
	if (getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &opt, &optlen) == 0 &&
	    (opt.flags & XDP_OPTIONS_ZEROCOPY))
		s->zerocopy = true; /* the kernel chose zero-copy (a driver with it); else copy */
	rc = xsk_socket__update_xskmap(s->xsk, xsks_fd);
	if (rc != 0)
		return dv_err_set(err, rc, "%s: cannot register the XDP socket: %s", flag,
		                  strerror(-rc));
	s->xsks_fd = xsks_fd;
	if (xsk_ring_prod__reserve(&s->fill, DV_XSK_RING, &idx) != DV_XSK_RING)
		return dv_err_set(err, -ENOMEM, "%s: cannot fill the fill ring", flag);
	for (i = 0; i < DV_XSK_RING; i++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + i) =
		    (uint64_t)(DV_XSK_RING + i) * DV_XSK_FRAME;
	xsk_ring_prod__submit(&s->fill, DV_XSK_RING);
	for (i = 0; i < DV_XSK_RING; i++)
		s->tx_free[i] = (uint64_t)i * DV_XSK_FRAME;
	s->ntx_free = DV_XSK_RING;
	return 0;
}

void dv_xsk_close(dv_xsk_t *s)
{
	if (s->xsk != NULL) {
		uint32_t key = s->queue; /* the map holds the socket too: let go first */
		if (s->xsks_fd >= 0)
			bpf_map_delete_elem(s->xsks_fd, &key);
		xsk_socket__delete(s->xsk);
	}
	if (s->umem != NULL)
		xsk_umem__delete(s->umem);
	if (s->area != NULL)
		munmap(s->area, (size_t)DV_XSK_FRAMES * DV_XSK_FRAME);
	s->xsk = NULL;
	s->umem = NULL;
	s->area = NULL;
	s->fd = -1;
}

void dv_xsk_reclaim(dv_xsk_t *s)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&s->comp, DV_XSK_RING, &idx), i;

	for (i = 0; i < n; i++)
		s->tx_free[s->ntx_free++] = *xsk_ring_cons__comp_addr(&s->comp, idx + i);
	xsk_ring_cons__release(&s->comp, n);
}

bool dv_xsk_kick_tx(dv_xsk_t *s)
{
	if (!xsk_ring_prod__needs_wakeup(&s->tx))
		return false;
	sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
	return true;
}

bool dv_xsk_kick_rx(dv_xsk_t *s)
{
	if (!xsk_ring_prod__needs_wakeup(&s->fill))
		return false;
	recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return true;
}

void dv_xsk_rx_done(dv_xsk_t *s, uint32_t idx, uint32_t n)
{
	uint32_t fidx = 0, i;

	if (xsk_ring_prod__reserve(&s->fill, n, &fidx) == n) {
		for (i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&s->fill, fidx + i) =
			    xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&s->rx, idx + i)->addr);
		xsk_ring_prod__submit(&s->fill, n);
	}
	xsk_ring_cons__release(&s->rx, n);
}

void dv_xsk_stats(const dv_xsk_t *s, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	if (s == NULL || s->fd < 0 || getsockopt(s->fd, SOL_XDP, XDP_STATISTICS, st, &len) != 0)
		memset(st, 0, sizeof(*st));
}

/* The magic word is cleared once read, so the frame's next use cannot take this stamp for
 * its own; only when the frame's offset in its chunk leaves room, so that the octets
 * before it are this frame's. */
uint64_t dv_xsk_rx_stamp(void *area, uint64_t addr)
{
	struct dv_xdp_meta *m;
	uint64_t ns;

	if (addr % DV_XSK_FRAME < sizeof(*m)) /* aligned chunks: addr is the offset in the UMEM */
		return 0;
	m = (struct dv_xdp_meta *)((uint8_t *)xsk_umem__get_data(area, addr) - sizeof(*m));
	if (m->magic != DV_XDP_META_MAGIC)
		return 0;
	ns = m->rx_ns;
	m->magic = 0;
	return ns;
}
