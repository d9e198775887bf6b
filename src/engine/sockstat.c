/* sockstat: sums the drops column of the target's sockets in /proc/net/udp and udp6. */
#include "config.h"

#include "engine/sockstat.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A read of /proc/net/udp (or tcp) resumes at a position counted from the table's start
 * for every page it fills (udp_get_idx), so while other sockets are opened and closed a
 * line can be skipped: 6-12% of whole-table reads missed a bound socket while another
 * process opened and closed 300 sockets at a time (measured with a 1 MiB read buffer
 * too). When nothing matched and the target's address is this host's, read again.
 */
#define DV_SOCKSTAT_READS 5

/* Whether server's address is one of this host's (a socket can be bound to it). */
static bool is_local(const struct sockaddr_storage *server)
{
	struct sockaddr_storage a = *server;
	socklen_t len = server->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
	                                              : sizeof(struct sockaddr_in);
	int fd = socket(server->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool local;

	if (fd < 0)
		return false;
	if (a.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a)->sin6_port = 0;
	else
		((struct sockaddr_in *)&a)->sin_port = 0;
	local = bind(fd, (struct sockaddr *)&a, len) == 0;
	close(fd);
	return local;
}

/*
 * A table line (net/ipv4/udp.c, udp4_format_sock; ipv6 likewise):
 *   sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid
 *   timeout inode ref pointer drops
 * Addresses are the raw network-order words printed with %08X (so they read back
 * into the same memory on this host), ports in host order with %04X.
 */
static int parse_addr(const char *text, int v6, uint32_t words[4], unsigned *port)
{
	char buf[8 + 1];
	int n = v6 ? 4 : 1, i;
	const char *colon = strchr(text, ':');

	if (colon == NULL || colon - text != 8 * n)
		return -1;
	for (i = 0; i < n; i++) {
		memcpy(buf, text + 8 * i, 8);
		buf[8] = '\0';
		words[i] = (uint32_t)strtoul(buf, NULL, 16);
	}
	*port = (unsigned)strtoul(colon + 1, NULL, 16);
	return 0;
}

/* Does a socket bound to words (v6 or not) receive what is sent to server? */
static int addr_matches(const uint32_t w[4], int v6, const struct sockaddr_storage *server)
{
	static const uint32_t zero[4];

	if (server->ss_family == AF_INET) {
		uint32_t a = ((const struct sockaddr_in *)server)->sin_addr.s_addr;
		if (!v6)
			return w[0] == 0 || w[0] == a;
		/* ::  or ::ffff:a (dual-stack sockets) */
		return memcmp(w, zero, sizeof(zero)) == 0 ||
		       (w[0] == 0 && w[1] == 0 && w[2] == htonl(0xffff) && w[3] == a);
	}
	if (!v6)
		return 0;
	return memcmp(w, zero, sizeof(zero)) == 0 ||
	       memcmp(w, &((const struct sockaddr_in6 *)server)->sin6_addr, 16) == 0;
}

void dv_sockstat_scan(FILE *f, int v6, const struct sockaddr_storage *server, dv_sockstat_t *st)
{
	char line[512];
	unsigned want =
	    ntohs(server->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)server)->sin6_port
	                                        : ((const struct sockaddr_in *)server)->sin_port);

	while (fgets(line, sizeof(line), f) != NULL) {
		char *save, *tok, *fields[13];
		uint32_t lw[4] = {0}, rw[4] = {0};
		unsigned lport, rport;
		int n = 0;

		for (tok = strtok_r(line, " \t\n", &save); tok != NULL && n < 13;
		     tok = strtok_r(NULL, " \t\n", &save))
			fields[n++] = tok;
		if (n < 13 || parse_addr(fields[1], v6, lw, &lport) != 0 ||
		    parse_addr(fields[2], v6, rw, &rport) != 0)
			continue; /* the header, or not a socket line */
		if (lport != want || rport != 0 || !addr_matches(lw, v6, server))
			continue;
		st->drops += strtoull(fields[12], NULL, 10);
		st->sockets++;
	}
}

static void read_once(const struct sockaddr_storage *server, dv_sockstat_t *st)
{
	FILE *f;

	memset(st, 0, sizeof(*st));
	if (server->ss_family == AF_INET && (f = fopen("/proc/net/udp", "r")) != NULL) {
		dv_sockstat_scan(f, 0, server, st);
		fclose(f);
	}
	if ((f = fopen("/proc/net/udp6", "r")) != NULL) {
		dv_sockstat_scan(f, 1, server, st);
		fclose(f);
	}
}

void dv_sockstat_read(const struct sockaddr_storage *server, dv_sockstat_t *st)
{
	read_once(server, st);
	for (int i = 1; st->sockets == 0 && i < DV_SOCKSTAT_READS && is_local(server); i++)
		read_once(server, st);
}

size_t dv_sockstat_scan_inodes(FILE *f, int v6, int tcp, const struct sockaddr_storage *server,
                               uint64_t *inodes, size_t n, size_t max)
{
	char line[512];
	unsigned want =
	    ntohs(server->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)server)->sin6_port
	                                        : ((const struct sockaddr_in *)server)->sin_port);

	while (n < max && fgets(line, sizeof(line), f) != NULL) {
		char *save, *tok, *fields[10];
		uint32_t lw[4] = {0}, rw[4] = {0};
		unsigned lport, rport;
		int k = 0;

		for (tok = strtok_r(line, " \t\n", &save); tok != NULL && k < 10;
		     tok = strtok_r(NULL, " \t\n", &save))
			fields[k++] = tok;
		if (k < 10 || parse_addr(fields[1], v6, lw, &lport) != 0 ||
		    parse_addr(fields[2], v6, rw, &rport) != 0)
			continue;
		/* UDP: unconnected (state 07, no remote port); TCP: listening (0A) */
		if (lport != want || rport != 0 || strcmp(fields[3], tcp ? "0A" : "07") != 0 ||
		    !addr_matches(lw, v6, server))
			continue;
		inodes[n++] = strtoull(fields[9], NULL, 10);
	}
	return n;
}

static size_t inodes_once(const struct sockaddr_storage *server, int tcp, uint64_t *inodes,
                          size_t max)
{
	static const char *const tables[2][2] = {{"/proc/net/udp", "/proc/net/udp6"},
	                                         {"/proc/net/tcp", "/proc/net/tcp6"}};
	size_t n = 0;
	FILE *f;

	for (int v6 = server->ss_family == AF_INET ? 0 : 1; v6 < 2; v6++) {
		if ((f = fopen(tables[tcp ? 1 : 0][v6], "re")) != NULL) {
			n = dv_sockstat_scan_inodes(f, v6, tcp, server, inodes, n, max);
			fclose(f);
		}
	}
	return n;
}

size_t dv_sockstat_inodes(const struct sockaddr_storage *server, int tcp, uint64_t *inodes,
                          size_t max)
{
	size_t n = inodes_once(server, tcp, inodes, max);

	for (int i = 1; n == 0 && i < DV_SOCKSTAT_READS && is_local(server); i++)
		n = inodes_once(server, tcp, inodes, max);
	return n;
}
