/* xdp_meta: the receive stamp an XDP program writes before each frame it hands to an XDP socket. */
#ifndef DV_BASE_XDP_META_H
#define DV_BASE_XDP_META_H

/*
 * Written by the programs (dv_xdp_meta_stamp, with bpf_xdp_adjust_meta: engine's
 * xdp_steer.bpf.c always, responder's xdp_xsk.bpf.c for --capacity) and read at the
 * frame's data address minus its size (dv_xsk_rx_stamp in base/xsk.h). The kernel allows
 * up to 32 octets of metadata in multiples of 4, and copies them into the UMEM with the
 * frame in copy mode too (net/xdp/xsk.c, xsk_copy_xdp). magic tells a stamp from the
 * bytes an earlier frame left in the UMEM: the reader clears it once read, and a frame
 * that came without metadata (a driver that has none) keeps the cleared word.
 */
#define DV_XDP_META_MAGIC 0x64767473u /* "dvts" */

struct dv_xdp_meta {
	unsigned long long rx_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC at the program's run */
	unsigned int flags;       /* 0; room for a hardware stamp's flag */
	unsigned int magic;       /* DV_XDP_META_MAGIC: the stamp is this frame's */
};

#ifdef __bpf__
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* The frame's stamp put before its data, when the driver has room for metadata. Call it
 * last: adjusting the metadata voids the packet pointers taken before. */
static __always_inline void dv_xdp_meta_stamp(struct xdp_md *ctx)
{
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct dv_xdp_meta)) == 0) {
		struct dv_xdp_meta *m = (void *)(long)ctx->data_meta;
		if ((void *)(m + 1) <= (void *)(long)ctx->data) {
			m->rx_ns = bpf_ktime_get_ns();
			m->magic = DV_XDP_META_MAGIC;
			m->flags = 0;
		}
	}
}
#endif

#endif
