/* sockstat: a local UDP server socket's drop counter, from the kernel's socket diagnostics
 * (netlink, as ss(8) reads them) or else /proc/net/udp and /proc/net/udp6. */
#ifndef DV_SOCKSTAT_H
#define DV_SOCKSTAT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/*
 * The sockets of this host (network namespace) that receive what is sent to
 * server: unconnected UDP sockets bound to its port and to its address or the
 * wildcard (0.0.0.0, ::, and for an IPv4 server also ::ffff:ADDR). A server
 * with several (SO_REUSEPORT, one per thread) has them all summed.
 */
typedef struct dv_sockstat {
	uint64_t drops;   /* the sum of their "drops" columns */
	uint32_t sockets; /* how many matched; 0 = the target is not on this host */
} dv_sockstat_t;

/*
 * Add the matching lines of one /proc/net/udp or udp6 table (v6: its format)
 * read from f to *st. Lines that do not parse are skipped.
 */
void dv_sockstat_scan(FILE *f, int v6, const struct sockaddr_storage *server, dv_sockstat_t *st);

/*
 * Through NETLINK_SOCK_DIAG (the udp_diag dump of the sockets bound to server's port, taken
 * under the port's hash-slot lock: every one of them at once): 0, or a negative errno
 * (no udp_diag in this kernel...) with *st zero.
 */
int dv_sockstat_diag(const struct sockaddr_storage *server, dv_sockstat_t *st);

/* This host's sockets for server: dv_sockstat_diag, else both /proc tables; zero when
 * neither can be read. A /proc read can skip a line while sockets come and go, so one
 * that found nothing is made again (up to 5 in all) when the server's address is this
 * host's. */
void dv_sockstat_read(const struct sockaddr_storage *server, dv_sockstat_t *st);

/*
 * The inodes of the sockets that receive what is sent to server (as above; tcp: the
 * listening TCP sockets of /proc/net/tcp{,6} instead), from one table read from f,
 * appended to inodes[n..max). Returns the new count. The process holding one is the
 * server (src/engine/servercost.c).
 */
size_t dv_sockstat_scan_inodes(FILE *f, int v6, int tcp, const struct sockaddr_storage *server,
                               uint64_t *inodes, size_t n, size_t max);
/* The same through NETLINK_SOCK_DIAG (tcp: tcp_diag's listening sockets): 0 with *n
 * found, or a negative errno. */
int dv_sockstat_diag_inodes(const struct sockaddr_storage *server, int tcp, uint64_t *inodes,
                            size_t max, size_t *n);
/* dv_sockstat_diag_inodes, else both tables (v4 and v6, or v6 only for an IPv6 server) of
 * this host; the count found (a /proc read made again as dv_sockstat_read's is when nothing
 * is found). */
size_t dv_sockstat_inodes(const struct sockaddr_storage *server, int tcp, uint64_t *inodes,
                          size_t max);

#endif
