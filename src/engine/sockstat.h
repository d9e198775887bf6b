/* sockstat: a local UDP server socket's drop counter from /proc/net/udp and /proc/net/udp6. */
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

/* Both tables of this host; zero when neither can be read. */
void dv_sockstat_read(const struct sockaddr_storage *server, dv_sockstat_t *st);

#endif
