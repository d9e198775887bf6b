/* rxstamp: the wire clock's receive stamps taken by a BPF socket filter, for the sample only. */
#ifndef DV_RXSTAMP_H
#define DV_RXSTAMP_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/rxstamp_meta.h"

struct bpf_object;

/*
 * One worker's filter (engine/rx_stamp.bpf.c) and its array of DV_RX_IDS words, one per
 * DNS ID, mapped into the worker's memory: arming, reading and disarming a word are plain
 * memory accesses, no system call. The worker arms the word of a sampled query's ID
 * before the sendmmsg that carries it, reads the stamp when the answer is read, and
 * disarms it (rxstamp_meta.h gives the words' values).
 */
typedef struct dv_rxstamp {
	struct bpf_object *obj;
	int prog_fd;    /* -1 when not loaded */
	uint64_t *word; /* DV_RX_IDS words (mmap), NULL when not loaded */
} dv_rxstamp_t;

/*
 * Load the filter and map its array. 0, or a negative errno (-EOPNOTSUPP built without
 * libbpf; -EPERM without CAP_BPF): the caller then takes receive stamps from the kernel's
 * control messages. r is left closed on error.
 */
int dv_rxstamp_open(dv_rxstamp_t *r);

/* Attach the filter to UDP socket fd; its SO_COOKIE in *cookie (what dv_rxstamp_arm takes).
 * 0 or a negative errno. */
int dv_rxstamp_attach(const dv_rxstamp_t *r, int fd, uint64_t *cookie);

/* Unmap and free; r zeroed (a closed or never opened r is fine). */
void dv_rxstamp_close(dv_rxstamp_t *r);

/* Arm id for the next datagram with that ID reaching the socket of cookie. Before the send:
 * the system call orders the store before the datagram leaves. */
static inline void dv_rxstamp_arm(dv_rxstamp_t *r, uint16_t id, uint64_t cookie)
{
	__atomic_store_n(&r->word[id], DV_RX_ARMED | DV_RX_COOKIE(cookie), __ATOMIC_RELEASE);
}

/* The word of id as it is now: 0, armed (DV_RX_ARMED set) or a stamp. */
static inline uint64_t dv_rxstamp_peek(const dv_rxstamp_t *r, uint16_t id)
{
	return __atomic_load_n(&r->word[id], __ATOMIC_ACQUIRE);
}

/* A word's value is a stamp (monotonic ns). */
static inline bool dv_rxstamp_is_stamp(uint64_t v)
{
	return v != 0 && (v & DV_RX_ARMED) == 0;
}

/* Back to idle: the filter no longer stamps id (its compare-and-swap fails from now on). */
static inline void dv_rxstamp_disarm(dv_rxstamp_t *r, uint16_t id)
{
	__atomic_store_n(&r->word[id], 0, __ATOMIC_RELEASE);
}

#endif
