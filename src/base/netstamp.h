/* netstamp: wait until the kernel stamps received packets in software. */
#ifndef DV_NETSTAMP_H
#define DV_NETSTAMP_H

#define DV_NETSTAMP_WAIT_MS 2000 /* how long a run waits for the stamps at most */

/*
 * Linux stamps received packets (skb->tstamp, what SOF_TIMESTAMPING_RX_SOFTWARE returns)
 * only while some socket of the host asks for it, behind a static key. When the first
 * socket asks, the key is switched on by a work item on that CPU, later: until then
 * packets arrive unstamped, and a busy machine can leave the work item waiting for tens
 * of milliseconds (a wire-clock run lost its first ~3,000 answers' stamps so in CI).
 *
 * Call after the sockets that need the stamps asked for them, and before the load
 * starts: sends one-byte datagrams over loopback to a socket asking for software receive
 * stamps until one comes back stamped, sleeping 1 ms between tries (which lets the work
 * item run), for at most timeout_ms. Returns 0 when stamped, -ETIMEDOUT when none came
 * stamped in time, or the -errno that kept the probe from running (no loopback).
 * *tries (may be NULL) gets the datagrams that went.
 */
int dv_netstamp_wait(unsigned timeout_ms, unsigned *tries);

/* The probe's one try on fd (bound, asking for RX_SOFTWARE): 1 stamped, 0 not, -errno. */
int dv_netstamp_try(int fd);

/* A loopback UDP socket asking for software receive stamps (IPv4, else IPv6): fd or -errno. */
int dv_netstamp_socket(void);

#endif
