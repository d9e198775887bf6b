/* xdp: --xdp IFACE: a pass's queries sent and answers read through AF_XDP sockets. */
#include "config.h"

#include "engine/xdp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <bpf/bpf.h>
#include <xdp/xsk.h>

#include "base/netframe.h"
#include "base/sockaddr.h"
#include "base/xsk.h"
#include "base/xdpload.h"
#include "engine/xdp_steer_obj.h"

/* A worker's UMEM and rings: base/xsk.h (its frames fixed at open). */
#define DV_XW_NOPORT      0xffff
#define DV_XDP_QUEUES_MAX 64 /* the steering program's xsks map */

struct dv_xdp {
	dv_xdp_prog_t prog;
	int xsks_fd, ports_fd;
	dv_nf_flow_t flow; /* to the server; src_port set per socket */
	bool native;       /* the kernel says the program runs in the driver (bpf_xdp_query) */
	unsigned rx_queues, socks, zc_socks; /* the interface's; XDP sockets, zero-copy ones */
	unsigned socks_planned;              /* -T: one socket a worker */
};

struct dv_xw {
	struct dv_xdp *x;
	dv_xsk_t s; /* the socket, its UMEM and rings */
	unsigned queue, nsocks;
	bool stamped;        /* the last answer read carried a receive stamp */
	dv_nf_flow_t *flow;  /* per socket */
	uint16_t *port_sock; /* 65,536 entries: socket index by port, DV_XW_NOPORT */
};

/* --- the route and the neighbour: /proc and a netlink dump ------------------------- */

/* A prefix of plen bits of a and b agree (addresses of len octets, network order). */
static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	return rest == 0 || ((a[full] ^ b[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/*
 * The route to dst (IPv4 or IPv6, network order) from /proc/net/route or
 * /proc/net/ipv6_route: the longest matching prefix that is up. Sets *dev and *gw
 * (all zero = on link). 0 or -ENOENT.
 */
static int route(bool v6, const uint8_t *dst, char *dev, size_t devlen, uint8_t gw[16])
{
	FILE *f = fopen(v6 ? "/proc/net/ipv6_route" : "/proc/net/route", "r");
	char line[512], name[IFNAMSIZ + 1], d6[33], g6[33], s6[33];
	unsigned d, g, flags, refc, use, metric, mask, dlen, slen, i;
	uint8_t net[16], hop[16];
	int best = -1, plen;

	if (f == NULL)
		return -ENOENT;
	while (fgets(line, sizeof(line), f) != NULL) {
		memset(net, 0, sizeof(net));
		memset(hop, 0, sizeof(hop));
		if (v6) {
			if (sscanf(line, "%32s %x %32s %x %32s %x %x %x %x %16s", d6, &dlen, s6,
			           &slen, g6, &metric, &refc, &use, &flags, name) != 10)
				continue;
			for (i = 0; i < 16; i++) {
				sscanf(d6 + 2 * i, "%2hhx", &net[i]);
				sscanf(g6 + 2 * i, "%2hhx", &hop[i]);
			}
			plen = (int)dlen;
		} else {
			if (sscanf(line, "%16s %x %x %x %u %u %u %x", name, &d, &g, &flags, &refc,
			           &use, &metric, &mask) != 8)
				continue;
			memcpy(net, &d, 4); /* printed in host order of a network-order word */
			memcpy(hop, &g, 4);
			plen = __builtin_popcount(mask);
		}
		if (!(flags & 1) || plen > (v6 ? 128 : 32) ||
		    !prefix_match(net, dst, (unsigned)plen) || plen <= best) /* RTF_UP */
			continue;
		best = plen;
		snprintf(dev, devlen, "%s", name);
		memcpy(gw, hop, 16);
	}
	fclose(f);
	return best >= 0 ? 0 : -ENOENT;
}

/* One RTM_NEWNEIGH message: the MAC of ip on ifindex when it is usable. */
static bool neigh_msg(struct nlmsghdr *h, bool v6, const uint8_t *ip, int ifindex, uint8_t mac[6])
{
	struct ndmsg *nd = NLMSG_DATA(h);
	struct rtattr *a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd));
	const uint8_t *dst = NULL, *ll = NULL;

	if (h->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != ifindex ||
	    nd->ndm_family != (v6 ? AF_INET6 : AF_INET) ||
	    !(nd->ndm_state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT)))
		return false;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == (v6 ? 16u : 4u))
			dst = RTA_DATA(a);
		else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6)
			ll = RTA_DATA(a);
	}
	if (dst == NULL || ll == NULL || memcmp(dst, ip, v6 ? 16 : 4) != 0)
		return false;
	memcpy(mac, ll, 6);
	return true;
}

/* The neighbour table's MAC of ip on ifindex (a netlink dump: IPv6's is not in /proc). */
static int neigh(bool v6, const uint8_t *ip, int ifindex, uint8_t mac[6])
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
	} req = {.h = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
	               .nlmsg_type = RTM_GETNEIGH,
	               .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	         .nd = {.ndm_family = v6 ? AF_INET6 : AF_INET}};
	static _Thread_local char buf[32768];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), rc = -ENOENT;
	bool done = false;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0)
		done = true;
	while (!done && (n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int len = (int)n;
		for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = true;
			else if (rc != 0 && neigh_msg(h, v6, ip, ifindex, mac))
				rc = 0;
		}
	}
	close(fd);
	return rc;
}

/* Make the kernel resolve ip's MAC: one empty datagram to its discard port (9), sent by
 * the kernel (which resolves the neighbour first); wait up to a second for the entry. */
static int resolve(bool v6, const uint8_t *ip, const char *dev, int ifindex, uint8_t mac[6])
{
	struct sockaddr_storage ss;
	struct timespec tick = {0, 20 * 1000 * 1000};
	socklen_t len;
	int fd, i;

	if (neigh(v6, ip, ifindex, mac) == 0)
		return 0;
	memset(&ss, 0, sizeof(ss));
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(9);
		s6->sin6_scope_id = (uint32_t)ifindex;
		memcpy(&s6->sin6_addr, ip, 16);
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(9);
		memcpy(&s4->sin_addr, ip, 4);
		len = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev));
		sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&ss, len);
		close(fd);
	}
	for (i = 0; i < 50; i++) {
		if (neigh(v6, ip, ifindex, mac) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	return -EHOSTUNREACH;
}

/* The interface's own MAC. */
static int iface_mac(const char *dev, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0)
		rc = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return rc;
}

/* The source address the kernel would use towards the server (network order). */
static int source(const dv_run_config_t *cfg, uint8_t src[16])
{
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);
	int fd = socket(cfg->server.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&cfg->server, cfg->server_len) != 0 ||
	    getsockname(fd, (struct sockaddr *)&me, &len) != 0)
		rc = -errno;
	else if (me.ss_family == AF_INET6)
		memcpy(src, &((struct sockaddr_in6 *)&me)->sin6_addr, 16);
	else
		memcpy(src, &((struct sockaddr_in *)&me)->sin_addr, 4);
	close(fd);
	return rc;
}

/* The frames' headers towards the server through iface (cfg->xdp_iface). */
static int find_path(struct dv_xdp *x, const dv_run_config_t *cfg, dv_err_t *err)
{
	static const uint8_t zero[16];
	const char *iface = cfg->xdp_iface;
	char dev[IFNAMSIZ + 1] = "", addr[INET6_ADDRSTRLEN];
	bool v6 = cfg->server.ss_family == AF_INET6;
	uint8_t gw[16] = {0}, dst[16] = {0};
	const uint8_t *hop;
	int rc;

	if (v6)
		memcpy(dst, &((const struct sockaddr_in6 *)&cfg->server)->sin6_addr, 16);
	else
		memcpy(dst, &((const struct sockaddr_in *)&cfg->server)->sin_addr, 4);
	inet_ntop(cfg->server.ss_family, dst, addr, sizeof(addr));
	if (route(v6, dst, dev, sizeof(dev), gw) != 0 || strcmp(dev, iface) != 0)
		return dv_err_set(err, -ENETUNREACH,
		                  "--xdp %s: the route to %s goes %s%s, not through %s: give the "
		                  "interface the server is reached through",
		                  iface, addr, dev[0] ? "through " : "nowhere", dev, iface);
	rc = source(cfg, x->flow.src_ip);
	if (rc == 0)
		rc = iface_mac(iface, x->flow.src_mac);
	if (rc != 0)
		return dv_err_set(err, rc, "--xdp %s: cannot read the interface's addresses: %s",
		                  iface, strerror(-rc));
	hop = memcmp(gw, zero, 16) != 0 ? gw : dst;
	if (resolve(v6, hop, iface, x->prog.ifindex, x->flow.dst_mac) != 0) {
		inet_ntop(cfg->server.ss_family, hop, addr, sizeof(addr));
		return dv_err_set(
		    err, -EHOSTUNREACH,
		    "--xdp %s: no neighbour entry for %s (it did not answer %s within "
		    "1 s): is it up on that link?",
		    iface, addr, v6 ? "neighbour solicitation" : "ARP");
	}
	x->flow.v6 = v6;
	memcpy(x->flow.dst_ip, dst, 16);
	x->flow.dst_port = dv_sockaddr_port((const struct sockaddr *)&cfg->server);
	return 0;
}

int dv_xdp_open(struct dv_xdp **out, const dv_run_config_t *cfg, dv_err_t *err)
{
	struct dv_xdp *x;
	unsigned q;
	int rc;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	x->prog.link_fd = -1;
	/* The program first: "run as root", "no native XDP" and "busy" before the path. */
	x->rx_queues = q = dv_xsk_rx_queues(cfg->xdp_iface);
	x->socks_planned = cfg->threads;
	rc = cfg->threads > q
	         ? dv_err_set(err, -EINVAL,
	                      "--xdp %s: the interface has %u receive queue%s: -T at most %u "
	                      "(one XDP socket per queue)",
	                      cfg->xdp_iface, q, q == 1 ? "" : "s", q)
	         : 0;
	if (rc == 0 && cfg->threads > DV_XDP_QUEUES_MAX)
		rc = dv_err_set(err, -EINVAL, "--xdp: -T at most %d", DV_XDP_QUEUES_MAX);
	if (rc == 0)
		rc = dv_xdp_prog_open(&x->prog, xdp_steer_obj, xdp_steer_obj_len, "dv_steer",
		                      cfg->xdp_iface, "--xdp", err);
	if (rc == 0) {
		x->xsks_fd = dv_xdp_prog_map(&x->prog, "xsks");
		x->ports_fd = dv_xdp_prog_map(&x->prog, "ports");
		if (x->xsks_fd < 0 || x->ports_fd < 0)
			rc = dv_err_set(err, -ENOENT, "--xdp: the BPF program lacks its maps");
	}
	if (rc == 0)
		rc = dv_xdp_prog_attach(&x->prog, err);
	if (rc == 0) {
		LIBBPF_OPTS(bpf_xdp_query_opts, qo);
		x->native = bpf_xdp_query(x->prog.ifindex, 0, &qo) == 0 &&
		            qo.attach_mode == XDP_ATTACHED_DRV;
		rc = find_path(x, cfg, err);
	}
	if (rc != 0) {
		dv_xdp_close(x);
		return rc;
	}
	*out = x;
	return 0;
}

void dv_xdp_info(const struct dv_xdp *x, dv_xdp_info_t *out)
{
	memset(out, 0, sizeof(*out));
	if (x == NULL)
		return;
	out->used = true;
	out->native = x->native;
	out->zerocopy = x->socks > 0 && x->zc_socks == x->socks;
	out->queues = x->socks;
	out->rx_queues = x->rx_queues;
}

void dv_xdp_close(struct dv_xdp *x)
{
	if (x == NULL)
		return;
	dv_xdp_prog_close(&x->prog);
	free(x);
}

/* --- a worker's XDP socket -------------------------------------------------------- */

/* Socket i's source address and port: the kernel socket fds[i] holds them (bound by -a,
 * -x or --client-range, else chosen by the route); the program steers the port. */
static int add_port(struct dv_xw *xw, unsigned i, int fd, dv_err_t *err)
{
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);
	dv_nf_flow_t *f = &xw->flow[i];
	uint32_t key;
	uint8_t one = 1;

	if (getsockname(fd, (struct sockaddr *)&me, &len) != 0)
		return dv_err_set(err, -errno, "--xdp: cannot read socket %u's address", i + 1);
	key = dv_sockaddr_port((const struct sockaddr *)&me);
	*f = xw->x->flow;
	f->src_port = (uint16_t)key;
	if (me.ss_family == AF_INET6 && f->v6)
		memcpy(f->src_ip, &((struct sockaddr_in6 *)&me)->sin6_addr, 16);
	else if (me.ss_family == AF_INET && !f->v6)
		memcpy(f->src_ip, &((struct sockaddr_in *)&me)->sin_addr, 4);
	xw->port_sock[key] = (uint16_t)i;
	if (bpf_map_update_elem(xw->x->ports_fd, &key, &one, BPF_ANY) != 0)
		return dv_err_set(err, -errno, "--xdp: cannot steer port %u: %s", key,
		                  strerror(errno));
	return 0;
}

/* The worker's XDP socket on its queue, registered in the program's map. */
static int xw_socket(struct dv_xw *xw, dv_err_t *err)
{
	int rc = dv_xsk_open(&xw->s, xw->x->prog.ifname, xw->queue, xw->x->xsks_fd, "--xdp", err);

	if (xw->s.fd >= 0) {
		xw->x->socks++;
		if (xw->s.zerocopy)
			xw->x->zc_socks++;
	}
	return rc;
}

int dv_xw_open(struct dv_xw **out, struct dv_xdp *x, unsigned queue, const int *fds,
               unsigned nsocks, dv_err_t *err)
{
	struct dv_xw *xw = calloc(1, sizeof(*xw));
	unsigned i;
	int rc = 0;

	*out = NULL;
	if (xw != NULL) {
		xw->flow = calloc(nsocks, sizeof(*xw->flow));
		xw->port_sock = malloc(65536 * sizeof(*xw->port_sock));
	}
	if (xw == NULL || xw->flow == NULL || xw->port_sock == NULL) {
		dv_xw_close(xw);
		return dv_err_set(err, -ENOMEM, "out of memory");
	}
	memset(xw->port_sock, 0xff, 65536 * sizeof(*xw->port_sock));
	xw->x = x;
	xw->queue = queue;
	xw->nsocks = nsocks;
	xw->s.fd = -1;
	for (i = 0; rc == 0 && i < nsocks; i++)
		rc = add_port(xw, i, fds[i], err);
	if (rc == 0)
		rc = xw_socket(xw, err);
	if (rc != 0) {
		dv_xw_close(xw);
		return rc;
	}
	*out = xw;
	return 0;
}

void dv_xw_close(struct dv_xw *xw)
{
	if (xw == NULL)
		return;
	dv_xsk_close(&xw->s);
	free(xw->flow);
	free(xw->port_sock);
	free(xw);
}

unsigned dv_xw_send(struct dv_xw *xw, dv_engine_t *e, uint16_t sock,
                    uint8_t (*bufs)[DV_MAX_QUERY_LEN], const unsigned *lens, unsigned n)
{
	const dv_nf_flow_t *f = &xw->flow[sock];
	size_t h = dv_nf_header_len(f->v6);
	uint32_t idx = 0, i;

	dv_xsk_reclaim(&xw->s);
	n = DV_MIN(n, xw->s.ntx_free);
	n = n > 0 ? xsk_ring_prod__reserve(&xw->s.tx, n, &idx) : 0;
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&xw->s.tx, idx + i);
		uint64_t addr = xw->s.tx_free[--xw->s.ntx_free];
		uint8_t *p = xsk_umem__get_data(xw->s.area, addr);
		memcpy(p + h, bufs[i], lens[i]);
		dv_nf_build(p, f, lens[i]);
		d->addr = addr;
		d->len = (uint32_t)(h + lens[i]);
	}
	xsk_ring_prod__submit(&xw->s.tx, n);
	/* Copy mode (veth) transmits only when told: one wake-up call per batch. */
	if (dv_xsk_kick_tx(&xw->s))
		e->stats.c.send_calls++;
	return n;
}

/* One answer frame into the engine, timed by its receive stamp when it has one (else by
 * the batch's read time, now); xdp_stamped counts the completed answers stamped. */
static void receive(struct dv_xw *xw, dv_engine_t *e, const uint8_t *p, size_t len, uint64_t now,
                    uint64_t stamp)
{
	const dv_nf_flow_t *srv = &xw->x->flow;
	uint64_t completed = e->stats.c.completed;
	const uint8_t *pl;
	size_t plen;
	dv_nf_flow_t f;
	uint16_t sock;

	if (dv_nf_parse(p, len, &f, &pl, &plen) != 0) {
		e->stats.c.malformed++; /* steered, so UDP to our port, but not whole */
		return;
	}
	sock = xw->port_sock[f.dst_port];
	if (sock == DV_XW_NOPORT) { /* another worker's port, on this worker's queue */
		e->stats.c.unexpected++;
		return;
	}
	dv_engine_receive(e, sock, pl, plen,
	                  f.v6 == srv->v6 && memcmp(f.src_ip, srv->dst_ip, 16) == 0 &&
	                      f.src_port == srv->dst_port,
	                  stamp != 0 ? stamp : now);
	if (stamp != 0 && e->stats.c.completed != completed)
		e->stats.c.xdp_stamped++;
}

unsigned dv_xw_recv(struct dv_xw *xw, dv_engine_t *e, uint64_t wait_ns, bool tick)
{
	uint32_t idx = 0, n, i;
	uint64_t now, stamp;

	n = xsk_ring_cons__peek(&xw->s.rx, DV_XSK_BATCH, &idx);
	if (n == 0 && wait_ns > 0) {
		struct pollfd pfd = {.fd = xw->s.fd, .events = POLLIN};
		struct timespec ts = {(time_t)(wait_ns / DV_NS_PER_S),
		                      (long)(wait_ns % DV_NS_PER_S)};
		/* Paced with stamps: no wake-up per answer; they wait in the ring until the
		 * next due time (the window holds 4 ms of them, the ring 2,048). */
		if (tick && xw->stamped)
			nanosleep(&ts, NULL);
		else
			ppoll(&pfd, 1, &ts, NULL);
		e->stats.c.recv_calls++;
		n = xsk_ring_cons__peek(&xw->s.rx, DV_XSK_BATCH, &idx);
	}
	if (n == 0) {
		if (dv_xsk_kick_rx(&xw->s))
			e->stats.c.recv_calls++;
		return 0;
	}
	now = dv_now_ns();
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&xw->s.rx, idx + i);
		stamp = dv_xsk_rx_stamp(xw->s.area, d->addr);
		xw->stamped = stamp != 0;
		receive(xw, e, xsk_umem__get_data(xw->s.area, d->addr), d->len, now, stamp);
	}
	dv_xsk_rx_done(&xw->s, idx, n);
	return n;
}

/*
 * Several queues: worker thread t on a CPU of its queue. A veth puts a frame sent back
 * to it with XDP_TX (the responder's program) on the receive queue numbered by the CPU
 * that handled it modulo the queues (veth_select_rxq), and that CPU is the one whose
 * wake-up call sent the query; kxdpgun pins its threads to their queues' CPUs as well.
 * The first allowed CPU c with c % rx_queues == queue, else none (the kernel schedules).
 */
void dv_xw_pin(const struct dv_xw *xw, pthread_t t)
{
	cpu_set_t allowed, one;
	int c;

	if (xw == NULL || xw->x->socks_planned < 2 ||
	    sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return;
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed) || (unsigned)c % xw->x->rx_queues != xw->queue)
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		pthread_setaffinity_np(t, sizeof(one), &one);
		return;
	}
}

uint64_t dv_xw_drops(const struct dv_xw *xw)
{
	struct xdp_statistics st;

	if (xw == NULL)
		return 0;
	dv_xsk_stats(&xw->s, &st);
	return st.rx_dropped + st.rx_ring_full;
}
