/* pcap: DNS queries over UDP, and TCP reassembled per flow, from pcap/pcapng via libpcap. */
#include "config.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "input/capbuild.h"

#include "base/wire.h"

/*
 * Link types: Ethernet (with 802.1Q/802.1ad tags), Linux cooked SLL and SLL2,
 * raw IP (DLT_RAW, IPV4, IPV6), BSD loopback (NULL, LOOP). IPv4 without
 * fragments, IPv6 with hop-by-hop / routing / destination options headers
 * skipped (fragments are malformed: not reassembled).
 *
 * A packet is ours when its destination port is the server port (and address,
 * when one is given); other traffic is ignored. UDP: the payload is one query.
 * TCP: segments are appended per flow (4-tuple) in sequence order; each 2-octet
 * length + message is one query, stamped with the time of the segment that
 * completes it. A segment entirely before the expected sequence number is a
 * retransmission (ignored); one after it leaves a gap: malformed, and the flow is
 * dropped (every later segment of it malformed) since message boundaries are lost.
 * A flow starts at its SYN, or at its first data segment when the capture began
 * mid-connection; FIN/RST ends it (left-over octets: malformed).
 */

#define ETH_IP4     0x0800
#define ETH_IP6     0x86dd
#define TCP_FIN     0x01
#define TCP_SYN     0x02
#define TCP_RST     0x04
#define TCP_BUF_MAX 70000 /* a 65535-octet message and its length, with room */

typedef struct pkt {
	uint64_t no; /* packet number, from 1 */
	uint64_t ts;
	uint8_t family;           /* 4 or 6 */
	const uint8_t *src, *dst; /* addresses inside the packet */
	uint8_t proto;
	const uint8_t *l4;
	size_t l4len;
} pkt_t;

typedef struct flow {
	dv_client_key_t src;
	uint8_t dst[16];
	uint16_t dport;
	bool used, dead, synced;
	uint32_t next; /* next expected sequence number */
	uint8_t *buf;
	size_t len;
} flow_t;

typedef struct pcap_rd {
	dv_capbuild_t *b;
	flow_t *flows; /* open addressing, tombstone-free: deleted flows are rehashed */
	size_t nflows, cap;
} pcap_rd_t;

/* Offset and ethertype of the network header for this link type; -1 if not IP. */
static int link_payload(int dlt, const uint8_t *p, size_t len, uint16_t *etype)
{
	size_t off;

	switch (dlt) {
	case DLT_EN10MB:
		if (len < 14)
			return -1;
		off = 14;
		*etype = dv_wire_get16(p + 12);
		while ((*etype == 0x8100 || *etype == 0x88a8) && len >= off + 4) {
			*etype = dv_wire_get16(p + off + 2);
			off += 4;
		}
		return (int)off;
	case DLT_LINUX_SLL:
		if (len < 16)
			return -1;
		*etype = dv_wire_get16(p + 14);
		return 16;
	case DLT_LINUX_SLL2:
		if (len < 20)
			return -1;
		*etype = dv_wire_get16(p);
		return 20;
	case DLT_NULL:
	case DLT_LOOP:
		off = 4;
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		off = 0;
		break;
	default:
		return -1;
	}
	/* No usable ethertype: the IP version nibble says. */
	if (len <= off)
		return -1;
	*etype = (p[off] >> 4) == 4 ? ETH_IP4 : (p[off] >> 4) == 6 ? ETH_IP6 : 0;
	return (int)off;
}

/* Fill family, addresses, proto, l4. NULL or why the packet is malformed; *ours false = ignore. */
static const char *parse_ip(pkt_t *k, const uint8_t *p, size_t len, uint16_t etype, bool *ours)
{
	*ours = true;
	if (etype == ETH_IP4) {
		size_t ihl, tot;
		if (len < 20 || p[0] >> 4 != 4)
			return "IPv4 header cut short";
		ihl = (size_t)(p[0] & 15) * 4;
		tot = dv_wire_get16(p + 2);
		if (ihl < 20 || tot < ihl || tot > len)
			return "IPv4 lengths inconsistent or packet cut short";
		k->family = 4;
		k->proto = p[9];
		k->src = p + 12;
		k->dst = p + 16;
		if (k->proto != 6 && k->proto != 17) {
			*ours = false;
			return NULL;
		}
		if ((dv_wire_get16(p + 6) & 0x3fff) != 0)
			return "IPv4 fragment (not reassembled)";
		k->l4 = p + ihl;
		k->l4len = tot - ihl;
		return NULL;
	}
	if (etype == ETH_IP6) {
		size_t plen, off = 40;
		uint8_t nh;
		if (len < 40 || p[0] >> 4 != 6)
			return "IPv6 header cut short";
		plen = dv_wire_get16(p + 4);
		if (plen > len - 40)
			return "IPv6 packet cut short";
		k->family = 6;
		k->src = p + 8;
		k->dst = p + 24;
		nh = p[6];
		while (nh == 0 || nh == 43 || nh == 60) {
			if (off + 8 > 40 + plen)
				return "IPv6 extension header cut short";
			nh = p[off];
			off += 8 + (size_t)p[off + 1] * 8;
		}
		if (off > 40 + plen)
			return "IPv6 extension header cut short";
		if (nh == 44)
			return "IPv6 fragment (not reassembled)";
		k->proto = nh;
		if (nh != 6 && nh != 17) {
			*ours = false;
			return NULL;
		}
		k->l4 = p + off;
		k->l4len = 40 + plen - off;
		return NULL;
	}
	*ours = false;
	return NULL;
}

static bool to_server(const dv_input_options_t *o, const pkt_t *k, uint16_t dport)
{
	uint16_t want = o->server_port != 0 ? o->server_port : 53;

	if (dport != want)
		return false;
	if (o->server_family == 0)
		return true;
	if ((o->server_family == 4) != (k->family == 4))
		return false;
	return memcmp(o->server_addr, k->dst, k->family == 4 ? 4 : 16) == 0;
}

static void key_of(const pkt_t *k, uint16_t sport, dv_client_key_t *key)
{
	memset(key, 0, sizeof(*key));
	key->family = k->family;
	memcpy(key->addr, k->src, k->family == 4 ? 4 : 16);
	key->port = sport;
}

static uint64_t flow_hash(const dv_client_key_t *s, const uint8_t *dst, uint16_t dport)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;
	for (i = 0; i < 16; i++)
		h = (h ^ s->addr[i] ^ dst[i]) * 1099511628211ULL + i;
	h ^= (uint64_t)s->port << 16 | dport;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 29);
}

static int flows_grow(pcap_rd_t *r);

/* The flow of this segment, created when absent; NULL on ENOMEM. */
static flow_t *flow_get(pcap_rd_t *r, const dv_client_key_t *s, const uint8_t *dst, uint16_t dport,
                        bool create)
{
	uint8_t d[16] = {0};
	size_t j;

	memcpy(d, dst, s->family == 4 ? 4 : 16);
	if (create && (r->nflows + 1) * 2 > r->cap && flows_grow(r) != 0)
		return NULL;
	if (r->cap == 0)
		return NULL;
	j = flow_hash(s, d, dport) & (r->cap - 1);
	while (r->flows[j].used) {
		flow_t *f = &r->flows[j];
		if (f->dport == dport && f->src.port == s->port && f->src.family == s->family &&
		    memcmp(f->src.addr, s->addr, 16) == 0 && memcmp(f->dst, d, 16) == 0)
			return f;
		j = (j + 1) & (r->cap - 1);
	}
	if (!create)
		return NULL;
	memset(&r->flows[j], 0, sizeof(flow_t));
	r->flows[j].used = true;
	r->flows[j].src = *s;
	memcpy(r->flows[j].dst, d, 16);
	r->flows[j].dport = dport;
	r->nflows++;
	r->b->st->tcp_flows++;
	return &r->flows[j];
}

static int flows_rehash(pcap_rd_t *r, size_t cap)
{
	flow_t *old = r->flows, *nf = calloc(cap, sizeof(*nf));
	size_t i, ocap = r->cap;

	if (nf == NULL)
		return -ENOMEM;
	r->flows = nf;
	r->cap = cap;
	for (i = 0; i < ocap; i++) {
		size_t j;
		if (!old[i].used)
			continue;
		j = flow_hash(&old[i].src, old[i].dst, old[i].dport) & (cap - 1);
		while (nf[j].used)
			j = (j + 1) & (cap - 1);
		nf[j] = old[i];
	}
	free(old);
	return 0;
}

static int flows_grow(pcap_rd_t *r)
{
	return flows_rehash(r, r->cap ? r->cap * 2 : 256);
}

/* Forget a flow (its buffer freed); later entries of its probe run shift back (no tombstones). */
static void flow_end(pcap_rd_t *r, flow_t *f)
{
	size_t mask = r->cap - 1, i = (size_t)(f - r->flows), k = i;

	free(f->buf);
	memset(f, 0, sizeof(*f));
	r->nflows--;
	for (;;) {
		size_t home;
		k = (k + 1) & mask;
		if (!r->flows[k].used)
			return;
		home = flow_hash(&r->flows[k].src, r->flows[k].dst, r->flows[k].dport) & mask;
		/* move k to the hole i unless its home lies cyclically in (i, k] */
		if (((k - home) & mask) >= ((k - i) & mask)) {
			r->flows[i] = r->flows[k];
			memset(&r->flows[k], 0, sizeof(flow_t));
			i = k;
		}
	}
}

/* Cut complete length-prefixed messages out of the flow buffer. */
static int flow_drain(pcap_rd_t *r, flow_t *f, const pkt_t *k, dv_err_t *err)
{
	size_t pos = 0;
	int rc = 0;

	while (f->len - pos >= 2) {
		size_t mlen = dv_wire_get16(f->buf + pos);
		if (f->len - pos - 2 < mlen)
			break;
		rc = dv_capbuild_add(r->b, f->buf + pos + 2, mlen, k->ts, &f->src, k->no, err);
		if (rc < 0)
			return rc;
		pos += 2 + mlen;
	}
	memmove(f->buf, f->buf + pos, f->len - pos);
	f->len -= pos;
	return 0;
}

static int tcp_segment(pcap_rd_t *r, const pkt_t *k, dv_err_t *err)
{
	const uint8_t *t = k->l4;
	dv_client_key_t src;
	size_t hl, dlen;
	uint32_t seq;
	uint8_t fl;
	flow_t *f;
	int rc = 0;

	if (k->l4len < 20 || (hl = (size_t)(t[12] >> 4) * 4) < 20 || hl > k->l4len)
		return dv_capbuild_bad(r->b, k->no, err, "TCP header cut short");
	if (!to_server(r->b->opts, k, dv_wire_get16(t + 2))) {
		r->b->st->ignored++;
		return 0;
	}
	key_of(k, dv_wire_get16(t), &src);
	seq = dv_wire_get32(t + 4);
	fl = t[13];
	dlen = k->l4len - hl;
	f = flow_get(r, &src, k->dst, dv_wire_get16(t + 2), dlen > 0 || (fl & TCP_SYN));
	if (f == NULL) {
		if (dlen > 0 || (fl & TCP_SYN))
			return dv_err_set(err, -ENOMEM, "%s: out of memory", r->b->name);
		r->b->st->ignored++; /* a lone FIN/RST/ACK of a flow we never saw */
		return 0;
	}
	if (fl & TCP_SYN) {
		seq++; /* data on a SYN (TCP Fast Open) starts after it */
		f->next = seq;
		f->synced = true;
	} else if (!f->synced && dlen > 0) {
		f->next = seq; /* capture began mid-connection: trust the first data */
		f->synced = true;
	}
	if (f->dead) {
		if (dlen > 0)
			rc = dv_capbuild_bad(r->b, k->no, err, "TCP segment of a flow with a gap");
		else
			r->b->st->ignored++;
	} else if (dlen == 0) {
		r->b->st->ignored++;
	} else if ((int32_t)(seq + (uint32_t)dlen - f->next) <= 0) {
		r->b->st->ignored++; /* retransmission of what we have */
	} else if (seq != f->next) {
		f->dead = true;
		rc = dv_capbuild_bad(r->b, k->no, err,
		                     (int32_t)(seq - f->next) > 0
		                         ? "TCP segment out of order or missing before it"
		                         : "TCP segment overlaps what was read");
	} else if (f->len + dlen > TCP_BUF_MAX) {
		f->dead = true;
		rc = dv_capbuild_bad(r->b, k->no, err, "TCP stream buffer over %d octets",
		                     TCP_BUF_MAX);
	} else {
		uint8_t *nb = realloc(f->buf, f->len + dlen);
		if (nb == NULL)
			return dv_err_set(err, -ENOMEM, "%s: out of memory", r->b->name);
		f->buf = nb;
		memcpy(f->buf + f->len, t + hl, dlen);
		f->len += dlen;
		f->next = seq + (uint32_t)dlen;
		rc = flow_drain(r, f, k, err);
	}
	if (rc < 0)
		return rc;
	if (fl & (TCP_FIN | TCP_RST)) {
		if (f->len > 0 && !f->dead &&
		    (rc = dv_capbuild_bad(r->b, k->no, err,
		                          "TCP flow ended inside a message (%zu octets left)",
		                          f->len)) < 0)
			return rc;
		flow_end(r, f);
	}
	return 0;
}

static int udp_datagram(pcap_rd_t *r, const pkt_t *k, dv_err_t *err)
{
	const uint8_t *u = k->l4;
	dv_client_key_t src;
	size_t ulen;
	int rc;

	if (k->l4len < 8)
		return dv_capbuild_bad(r->b, k->no, err, "UDP header cut short");
	if (!to_server(r->b->opts, k, dv_wire_get16(u + 2))) {
		r->b->st->ignored++;
		return 0;
	}
	ulen = dv_wire_get16(u + 4);
	if (ulen < 8 || ulen > k->l4len)
		return dv_capbuild_bad(r->b, k->no, err, "UDP length %zu does not fit the packet",
		                       ulen);
	key_of(k, dv_wire_get16(u), &src);
	rc = dv_capbuild_add(r->b, u + 8, ulen - 8, k->ts, &src, k->no, err);
	return rc < 0 ? rc : 0;
}

static int packet(pcap_rd_t *r, int dlt, const struct pcap_pkthdr *h, const uint8_t *p,
                  dv_err_t *err)
{
	pkt_t k;
	uint16_t etype = 0;
	const char *why;
	bool ours;
	int off, rc;

	memset(&k, 0, sizeof(k));
	k.no = r->b->st->records;
	k.ts =
	    (uint64_t)h->ts.tv_sec * 1000000000ULL + (uint64_t)h->ts.tv_usec; /* nano precision */
	off = link_payload(dlt, p, h->caplen, &etype);
	if (off < 0 || (etype != ETH_IP4 && etype != ETH_IP6)) {
		r->b->st->ignored++;
		return 0;
	}
	why = parse_ip(&k, p + off, h->caplen - (size_t)off, etype, &ours);
	if (why != NULL)
		return dv_capbuild_bad(r->b, k.no, err, "%s", why);
	if (!ours) {
		r->b->st->ignored++;
		return 0;
	}
	rc = k.proto == 17 ? udp_datagram(r, &k, err) : tcp_segment(r, &k, err);
	return rc < 0 ? rc : 0;
}

static bool dlt_known(int dlt)
{
	return dlt == DLT_EN10MB || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2 ||
	       dlt == DLT_NULL || dlt == DLT_LOOP || dlt == DLT_RAW || dlt == DLT_IPV4 ||
	       dlt == DLT_IPV6;
}

/* Packets ending inside a message are reported after the last packet. */
static int flows_close(pcap_rd_t *r, dv_err_t *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < r->cap; i++) {
		flow_t *f = &r->flows[i];
		if (f->used && f->len > 0 && !f->dead && rc == 0)
			rc = dv_capbuild_bad(r->b, r->b->st->records, err,
			                     "capture ended inside a TCP message (%zu octets)",
			                     f->len);
		free(f->buf);
	}
	free(r->flows);
	return rc;
}

int dv_read_pcap(dv_capbuild_t *b, FILE *f, dv_err_t *err)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_rd_t r;
	pcap_t *pc;
	int dlt, rc = 0, n;

	b->st->pos_unit = "packet";
	pc = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (pc == NULL) {
		fclose(f);
		return dv_err_set(err, -EINVAL, "%s: %s", b->name, ebuf);
	}
	dlt = pcap_datalink(pc);
	if (!dlt_known(dlt)) {
		rc = dv_err_set(
		    err, -EINVAL,
		    "%s: link type %s is not supported (Ethernet, Linux SLL/SLL2, raw "
		    "IP, loopback are)",
		    b->name, pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?");
		pcap_close(pc);
		return rc;
	}
	memset(&r, 0, sizeof(r));
	r.b = b;
	while ((n = pcap_next_ex(pc, &h, &data)) == 1) {
		b->st->records++;
		if ((rc = packet(&r, dlt, h, data, err)) != 0)
			break;
	}
	if (rc == 0 && n == PCAP_ERROR)
		rc =
		    dv_capbuild_bad(b, b->st->records + 1, err, "unreadable (%s)", pcap_geterr(pc));
	if (flows_close(&r, rc == 0 ? err : NULL) != 0 && rc == 0)
		rc = -EINVAL;
	pcap_close(pc);
	return rc;
}
