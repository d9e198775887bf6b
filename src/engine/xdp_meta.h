/* xdp_meta: the receive stamp the steering program writes before each frame it steers. */
#ifndef DV_ENGINE_XDP_META_H
#define DV_ENGINE_XDP_META_H

/*
 * Shared by xdp_steer.bpf.c (which writes it with bpf_xdp_adjust_meta) and xdp.c
 * (which reads it at the frame's data address minus its size). The kernel allows up
 * to 32 octets of metadata in multiples of 4. magic tells a stamp from the bytes an
 * earlier frame left in the UMEM: xdp.c clears it once read, and a frame that came
 * without metadata (a driver that has none) keeps the cleared word.
 */
#define DV_XDP_META_MAGIC 0x64767473u /* "dvts" */

struct dv_xdp_meta {
	unsigned long long rx_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC at the program's run */
	unsigned int flags;       /* 0; room for a hardware stamp's flag */
	unsigned int magic;       /* DV_XDP_META_MAGIC: the stamp is this frame's */
};

#endif
