/* xdpload: a BPF object held in memory loaded, and its XDP program attached to an interface
 * (the loading alone also serves programs of other kinds: engine/rxstamp.c's socket filter). */
#ifndef DV_XDPLOAD_H
#define DV_XDPLOAD_H

#include <stddef.h>

#include "base/util.h"

struct bpf_object;

typedef struct dv_xdp_prog {
	struct bpf_object *obj;
	int prog_fd;
	int link_fd; /* the BPF link attaching it; -1 until attached */
	int ifindex;
	char ifname[32];
	const char *flag; /* the user's option, for messages ("--xdp") */
} dv_xdp_prog_t;

/*
 * Open and load the BPF object obj (len octets, kept by the caller until close) and
 * find program prog_name, for interface ifname (checked to exist; NULL for a program
 * that is not attached to an interface, dv_xdp_prog_attach then refused). Nothing is attached
 * yet, so its maps can be filled first. 0, or a negative errno with one sentence in
 * err that says what is missing and what to do (no such interface; not root).
 * flag names the user's option in that sentence.
 */
int dv_xdp_prog_open(dv_xdp_prog_t *p, const void *obj, size_t len, const char *prog_name,
                     const char *ifname, const char *flag, dv_err_t *err);

/* The fd of map name (owned by p), or -ENOENT. */
int dv_xdp_prog_map(const dv_xdp_prog_t *p, const char *name);

/*
 * Attach the program to the interface in native (driver) mode through a BPF link: it
 * is detached when the link closes, by dv_xdp_prog_close or by the kernel when the
 * process dies, so nothing is left behind. 0, or a negative errno with one sentence:
 * not root, no native XDP in the interface's driver, or the interface busy (another
 * XDP program on it).
 */
int dv_xdp_prog_attach(dv_xdp_prog_t *p, dv_err_t *err);

/* Detach and free; p zeroed (a closed or never opened p is fine). */
void dv_xdp_prog_close(dv_xdp_prog_t *p);

#endif
