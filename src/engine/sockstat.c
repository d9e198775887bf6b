/* sockstat: the target's sockets and their drops, from the kernel's socket diagnostics
 * (netlink) or else /proc/net/udp and udp6. */
#include "config.h"

#include "engine/sockstat.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* The server's port, network order. */
static uint16_t server_port(const struct sockaddr_storage *server)
{
	return server->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)server)->sin6_port
	                                     : ((const struct sockaddr_in *)server)->sin_port;
}

void dv_sockstat_scan(FILE *f, int v6, const struct sockaddr_storage *server, dv_sockstat_t *st)
{
	char line[512];
	unsigned want = ntohs(server_port(server));

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

/*
 * The socket diagnostics (NETLINK_SOCK_DIAG, the interface of ss(8)) dump the sockets
 * bound to one port from the port's hash slot under its lock, so a dump that fits one
 * message sees every one of them at once: no line skipped while other sockets come and
 * go, as a /proc read can. /proc stays the fallback (no udp_diag module, a kernel
 * without it).
 */
#define DIAG_TRIES 3
/* Socket states (include/net/tcp_states.h): an unconnected UDP socket is CLOSE. */
#define STATE_CLOSE  7
#define STATE_LISTEN 10

typedef void (*diag_fn)(const struct inet_diag_msg *m, const uint32_t *meminfo, unsigned nmem,
                        void *ctx);

/* Read one dump's answers; 0 at its end, 1 when the kernel says it was interrupted (sockets
 * came and went during a multi-part dump: make it again), a negative errno else. */
static int diag_read(int fd, uint32_t seq, diag_fn fn, void *ctx)
{
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool intr = false;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPROTO;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			intr = intr || (h->nlmsg_flags & NLM_F_DUMP_INTR) != 0;
			if (h->nlmsg_type == NLMSG_DONE)
				return intr ? 1 : 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				return h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error < 0
				           ? e->error
				           : -EPROTO;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				continue;
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			const uint32_t *mem = NULL;
			unsigned nmem = 0;
			int alen = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
			for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, alen);
			     a = RTA_NEXT(a, alen))
				if (a->rta_type == INET_DIAG_SKMEMINFO) {
					mem = RTA_DATA(a);
					nmem = (unsigned)(RTA_PAYLOAD(a) / sizeof(uint32_t));
				}
			fn(m, mem, nmem, ctx);
		}
	}
}

/*
 * Dump family's sockets of protocol in one of states bound to port (network order), each
 * to fn with its memory counters. 0, or a negative errno (the caller then reads /proc).
 * fn may be called again for the same sockets when a dump is made again: ctx is reset by
 * reset(ctx) before each try.
 */
static int diag_dump(int family, int protocol, uint32_t states, uint16_t port, diag_fn fn,
                     void (*reset)(void *), void *ctx)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), rc = -EPROTO;

	if (fd < 0)
		return -errno;
	for (int t = 0; t < DIAG_TRIES; t++) {
		memset(&req, 0, sizeof(req));
		req.h.nlmsg_len = sizeof(req);
		req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
		req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		req.h.nlmsg_seq = (uint32_t)t + 1;
		req.r.sdiag_family = (uint8_t)family;
		req.r.sdiag_protocol = (uint8_t)protocol;
		req.r.idiag_ext = 1u << (INET_DIAG_SKMEMINFO - 1);
		req.r.idiag_states = states;
		req.r.id.idiag_sport = port;
		req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
		reset(ctx);
		if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) <
		    0) {
			rc = -errno;
			break;
		}
		rc = diag_read(fd, req.h.nlmsg_seq, fn, ctx);
		if (rc <= 0)
			break;
		rc = -EAGAIN; /* interrupted every time */
	}
	close(fd);
	return rc;
}

/* What one dump collects: the target and what matched so far. */
typedef struct diag_ctx {
	const struct sockaddr_storage *server;
	dv_sockstat_t st;
	uint64_t *inodes;
	size_t n, n0, max;
	bool bad; /* a socket without its memory counters (drops unknown) */
} diag_ctx_t;

static void diag_reset(void *p)
{
	diag_ctx_t *c = p;

	memset(&c->st, 0, sizeof(c->st));
	c->n = c->n0;
	c->bad = false;
}

static void diag_one(const struct inet_diag_msg *m, const uint32_t *mem, unsigned nmem, void *p)
{
	diag_ctx_t *c = p;
	uint32_t w[4] = {0};

	memcpy(w, m->id.idiag_src, m->idiag_family == AF_INET6 ? 16 : 4);
	/* the kernel filters by port only when it is not 0 */
	if (m->id.idiag_sport != server_port(c->server) || m->id.idiag_dport != 0 ||
	    !addr_matches(w, m->idiag_family == AF_INET6, c->server))
		return;
	if (c->inodes != NULL) {
		if (c->n < c->max)
			c->inodes[c->n++] = m->idiag_inode;
		return;
	}
	if (mem == NULL || nmem <= SK_MEMINFO_DROPS)
		c->bad = true;
	else
		c->st.drops += mem[SK_MEMINFO_DROPS];
	c->st.sockets++;
}

/* The v4 table (IPv4 servers) then the v6 one, as the /proc tables are read. */
static int diag_both(const struct sockaddr_storage *server, int tcp, diag_ctx_t *c)
{
	int protocol = tcp ? IPPROTO_TCP : IPPROTO_UDP;
	uint32_t states = 1u << (tcp ? STATE_LISTEN : STATE_CLOSE);
	dv_sockstat_t v4 = {0, 0};
	int rc;

	c->server = server;
	c->n0 = c->n = 0;
	if (server->ss_family == AF_INET) {
		rc = diag_dump(AF_INET, protocol, states, server_port(server), diag_one, diag_reset,
		               c);
		if (rc != 0 || c->bad)
			return rc != 0 ? rc : -EPROTO;
		v4 = c->st;
		c->n0 = c->n;
	}
	rc = diag_dump(AF_INET6, protocol, states, server_port(server), diag_one, diag_reset, c);
	if (rc != 0 || c->bad)
		return rc != 0 ? rc : -EPROTO;
	c->st.drops += v4.drops;
	c->st.sockets += v4.sockets;
	return 0;
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

int dv_sockstat_diag(const struct sockaddr_storage *server, dv_sockstat_t *st)
{
	diag_ctx_t c = {0};
	int rc = diag_both(server, 0, &c);

	*st = rc == 0 ? c.st : (dv_sockstat_t){0, 0};
	return rc;
}

int dv_sockstat_diag_inodes(const struct sockaddr_storage *server, int tcp, uint64_t *inodes,
                            size_t max, size_t *n)
{
	diag_ctx_t c = {.inodes = inodes, .max = max};
	int rc = diag_both(server, tcp, &c);

	*n = rc == 0 ? c.n : 0;
	return rc;
}

void dv_sockstat_read(const struct sockaddr_storage *server, dv_sockstat_t *st)
{
	if (dv_sockstat_diag(server, st) == 0)
		return;
	read_once(server, st);
	for (int i = 1; st->sockets == 0 && i < DV_SOCKSTAT_READS && is_local(server); i++)
		read_once(server, st);
}

size_t dv_sockstat_scan_inodes(FILE *f, int v6, int tcp, const struct sockaddr_storage *server,
                               uint64_t *inodes, size_t n, size_t max)
{
	char line[512];
	unsigned want = ntohs(server_port(server));

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
	size_t n;

	if (dv_sockstat_diag_inodes(server, tcp, inodes, max, &n) == 0)
		return n;
	n = inodes_once(server, tcp, inodes, max);

	for (int i = 1; n == 0 && i < DV_SOCKSTAT_READS && is_local(server); i++)
		n = inodes_once(server, tcp, inodes, max);
	return n;
}
