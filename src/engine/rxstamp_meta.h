/* rxstamp_meta: the words the receive-stamp filter (rx_stamp.bpf.c) and the worker share. */
#ifndef DV_RXSTAMP_META_H
#define DV_RXSTAMP_META_H

/*
 * One 64-bit word per DNS ID in a BPF array the worker maps into its memory:
 * 0                       idle: the filter leaves it alone;
 * DV_RX_ARMED | cookie    armed for the next datagram with this ID that reaches the socket
 *                         whose SO_COOKIE is cookie (its low 63 bits);
 * anything else           the stamp: bpf_ktime_get_ns() (CLOCK_MONOTONIC, below 2^63) of
 *                         the datagram that found the word armed.
 */
#define DV_RX_IDS       65536
#define DV_RX_ARMED     (1ULL << 63)
#define DV_RX_COOKIE(c) ((c) & (DV_RX_ARMED - 1))
#define DV_RX_ID_OFFSET 8 /* the DNS ID in a socket filter's skb: after the UDP header */

#endif
