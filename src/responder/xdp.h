/* responder xdp: dnsvolley-responder --xdp IFACE: UDP queries answered in XDP_TX. */
#ifndef DV_RESPONDER_XDP_H
#define DV_RESPONDER_XDP_H

#include <stdint.h>

#include "base/util.h"
#include "responder/xdp_counts.h"

/*
 * The reflect mode at the driver: the program answers the UDP queries (IPv4, IPv6) to
 * port on ifname with XDP_TX before the kernel sees them (doc/xdp.md); everything
 * else (other ports, TCP) reaches the responder's sockets as before. Its
 * counters are exact, per CPU, summed when read.
 */
typedef struct dv_rxdp dv_rxdp_t;

typedef struct dv_rxdp_counts {
	uint64_t n[DV_RXDP_NCOUNTS]; /* indexed by DV_RXDP_RECEIVED... */
} dv_rxdp_counts_t;

#ifdef HAVE_XDP
/* Load and attach; 0, or a negative errno with one sentence in err (not root, no native
 * XDP, interface busy...). */
int dv_rxdp_open(dv_rxdp_t **out, const char *ifname, uint16_t port, uint64_t drop_every,
                 uint64_t garbage_every, dv_err_t *err);
/* Load and configure only, not attached (dv_rxdp_open's first half; the tests run the
 * program on frames of their own with BPF_PROG_TEST_RUN). */
int dv_rxdp_load(dv_rxdp_t **out, const char *ifname, uint16_t port, uint64_t drop_every,
                 uint64_t garbage_every, dv_err_t *err);
/* The loaded program's fd (tests). */
int dv_rxdp_prog_fd(const dv_rxdp_t *r);
void dv_rxdp_read(const dv_rxdp_t *r, dv_rxdp_counts_t *c);
void dv_rxdp_close(dv_rxdp_t *r); /* detaches; NULL is fine */
#else
#include <errno.h>
#include <string.h>
static inline int dv_rxdp_open(dv_rxdp_t **out, const char *ifname, uint16_t port,
                               uint64_t drop_every, uint64_t garbage_every, dv_err_t *err)
{
	(void)ifname, (void)port, (void)drop_every, (void)garbage_every;
	*out = NULL;
	return dv_err_set(err, -ENOTSUP,
	                  "--xdp: built without AF_XDP (configure found no libxdp, libbpf or "
	                  "clang): rebuild with them (doc/xdp.md)");
}
static inline void dv_rxdp_read(const dv_rxdp_t *r, dv_rxdp_counts_t *c)
{
	(void)r;
	memset(c, 0, sizeof(*c));
}
static inline void dv_rxdp_close(dv_rxdp_t *r)
{
	(void)r;
}
#endif

#endif
