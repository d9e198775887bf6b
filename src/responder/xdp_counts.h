/* xdp_counts: what responder/xdp.c, responder/xsk.c and their BPF programs share: config, counters.
 */
#ifndef DV_RESPONDER_XDP_COUNTS_H
#define DV_RESPONDER_XDP_COUNTS_H

/* Built by the host compiler and by clang -target bpf: kernel UAPI types only. */
#include <linux/types.h>

/* The XDP sockets' program (xdp_xsk.bpf.c): its map of sockets, one a receive queue. */
#define DV_RXSK_QUEUES_MAX 64

/* The programs' settings (map `conf`, one entry; xdp_xsk.bpf.c reads port and stamp). */
struct dv_rxdp_conf {
	__u16 port;  /* the DNS port answered (host order) */
	__u16 stamp; /* xdp_xsk.bpf.c: a receive stamp before each frame (--capacity) */
	__u16 pad[2];
	__u64 drop_every;    /* 0 = off */
	__u64 garbage_every; /* 0 = off */
};

/* Its counters (map `counts`, one per CPU each): queries by fate. */
enum {
	DV_RXDP_RECEIVED, /* queries to the port (QR clear, a whole header) */
	DV_RXDP_ANSWERED, /* reflected */
	DV_RXDP_DROPPED,  /* --drop-every */
	DV_RXDP_GARBAGE,  /* --garbage-every: the header alone */
	DV_RXDP_NCOUNTS
};

#endif
