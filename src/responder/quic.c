/* quic: the responder's DNS over QUIC listener: an ngtcp2 server on one UDP socket in a
 * thread of its own, each query on its stream answered on it (RFC 9250), with faults and
 * the hostile behaviours the tests' peer needs. Connections are found by a linear walk (the
 * tests and benches hold a few); every connection ID it issues starts with the
 * connection's own 8-byte tag. */
#include "config.h"

#include "responder/quic.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "base/dns.h"
#include "base/doq.h"
#include "base/wire.h"
#include "responder/answer.h"

#define CID_LEN 16
#define TAG_LEN 8

typedef struct qstrm {
	struct qstrm *next;          /* streams with answer bytes to send */
	struct qstrm *onext, *oprev; /* the connection's streams (freed with it) */
	int64_t sid;
	uint8_t *q; /* the query as read: 2-byte length + message */
	size_t qlen, qcap;
	uint8_t a[2 + DV_ANSWER_MAX + 2]; /* the answer with its length (reflect: qlen) */
	uint8_t *ap;
	size_t alen, asent;
	bool read;     /* the query is whole */
	bool answered; /* counted: the answer is ngtcp2's */
	bool dropped;
	bool cancelled; /* the client gave up on it (counted) */
	bool early;     /* some of its query came in 0-RTT data */
	bool done;      /* counted one way or another */
} qstrm_t;

typedef struct qconn {
	struct dv_quic *l;
	ngtcp2_conn *qc;
	gnutls_session_t tls;
	ngtcp2_crypto_conn_ref ref;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	uint8_t tag[TAG_LEN];
	ngtcp2_cid odcid; /* the client's first DCID: its Initials until it learns ours */
	uint64_t index;   /* 1, 2... in accept order (faults: conn_every) */
	uint64_t nq;      /* queries read */
	uint64_t ndone;   /* of them answered, dropped or malformed */
	bool faulty, stalled, gone;
	bool hostile_hit; /* the hostile behaviour was done on it */
	bool zero_rtt;    /* a 0-RTT packet came on it (counted) */
	qstrm_t *sendq, *sendq_tail;
	qstrm_t *streams; /* every stream record (ngtcp2_conn_del calls no stream_close) */
} qconn_t;

struct dv_quic {
	dv_quic_config_t cfg;
	int fd;
	struct sockaddr_storage local;
	socklen_t local_len;
	gnutls_certificate_credentials_t cred;
	uint8_t secret[32];          /* stateless reset tokens */
	gnutls_datum_t ticket_key;   /* session tickets (resumption), one per listener */
	gnutls_anti_replay_t replay; /* with early_data: 0-RTT's anti-replay window */
	qconn_t *conns[DV_QUIC_CONNS_MAX];
	size_t nconns;
	uint64_t accepted;
	dv_quic_counts_t c;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	int stop_fd; /* an eventfd, readable once stopped: wakes the thread's poll */
};

static bool every(uint64_t n, uint64_t i)
{
	return n != 0 && i % n == 0;
}

static uint64_t now_ns(void)
{
	return dv_now_ns();
}

/* --- sending ---------------------------------------------------------------------------- */

static void send_pkt(dv_quic_t *l, const struct sockaddr_storage *to, socklen_t len,
                     const uint8_t *p, size_t n)
{
	(void)sendto(l->fd, p, n, MSG_DONTWAIT, (const struct sockaddr *)to, len);
}

static void sendq_push(qconn_t *c, qstrm_t *st)
{
	st->next = NULL;
	if (c->sendq_tail != NULL)
		c->sendq_tail->next = st;
	else
		c->sendq = st;
	c->sendq_tail = st;
}

static void sendq_pop(qconn_t *c)
{
	c->sendq = c->sendq->next;
	if (c->sendq == NULL)
		c->sendq_tail = NULL;
}

static void sendq_remove(qconn_t *c, qstrm_t *st)
{
	qstrm_t **p = &c->sendq, *prev = NULL;

	while (*p != NULL && *p != st) {
		prev = *p;
		p = &(*p)->next;
	}
	if (*p == NULL)
		return;
	*p = st->next;
	if (c->sendq_tail == st)
		c->sendq_tail = prev;
}

/* Everything ngtcp2 has to send on c. 0, or an ngtcp2 error (the connection ends). */
static int conn_write(qconn_t *c)
{
	uint8_t pkt[DV_DOQ_PKT_MAX];
	uint64_t ts = now_ns();

	for (unsigned guard = 0; guard < 65536; guard++) {
		qstrm_t *st = c->sendq;
		ngtcp2_vec v;
		ngtcp2_ssize n, taken = -1;
		uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;

		if (st != NULL) {
			v.base = st->ap + st->asent;
			v.len = st->alen - st->asent;
			flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
		}
		n = ngtcp2_conn_writev_stream(c->qc, NULL, NULL, pkt, sizeof(pkt), &taken, flags,
		                              st ? st->sid : -1, st ? &v : NULL, st ? 1 : 0, ts);
		if (st != NULL && taken >= 0 && (st->asent += (size_t)taken) == st->alen)
			sendq_pop(c);
		if (n == NGTCP2_ERR_WRITE_MORE)
			continue;
		if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR) {
			sendq_pop(c); /* blocked: again after the next packet read; shut: gone */
			if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED)
				sendq_push(c, st);
			if (c->sendq == st)
				break;
			continue;
		}
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		send_pkt(c->l, &c->peer, c->peer_len, pkt, (size_t)n);
	}
	ngtcp2_conn_update_pkt_tx_time(c->qc, ts);
	return 0;
}

/* CONNECTION_CLOSE with an application code, then the connection is forgotten. */
static void conn_close_app(qconn_t *c, uint64_t code)
{
	uint8_t pkt[DV_DOQ_PKT_MAX];
	ngtcp2_connection_close_error cc;
	ngtcp2_ssize n;

	ngtcp2_connection_close_error_set_application_error(&cc, code, NULL, 0);
	n = ngtcp2_conn_write_connection_close(c->qc, NULL, NULL, pkt, sizeof(pkt), &cc, now_ns());
	if (n > 0)
		send_pkt(c->l, &c->peer, c->peer_len, pkt, (size_t)n);
	c->gone = true;
}

/* --- answering ---------------------------------------------------------------------------- */

static void after_query(qconn_t *c)
{
	const dv_stream_faults_t *f = &c->l->cfg.faults;

	if (!c->faulty)
		return;
	if (f->close_after != 0 && c->nq == f->close_after) {
		c->l->c.closed++;
		(void)conn_write(c); /* the answers first */
		conn_close_app(c, DOQ_NO_ERROR);
	} else if (f->reset_after != 0 && c->nq == f->reset_after) {
		c->l->c.resets++;
		(void)conn_write(c);
		conn_close_app(c, DOQ_INTERNAL_ERROR);
	} else if (f->stall_after != 0 && c->nq == f->stall_after) {
		c->l->c.stalled++;
		(void)conn_write(c);
		c->stalled = true;
	}
}

/* st's query is whole. 0, or NGTCP2_ERR_CALLBACK_FAILURE. */
static int answer(qconn_t *c, qstrm_t *st)
{
	dv_quic_t *l = c->l;
	dv_answer_opts_t o;
	const uint8_t *m = st->q + 2;
	size_t len = st->qlen - 2;
	int n;

	st->read = true;
	l->c.received++;
	c->nq++;
	if (c->faulty && every(l->cfg.faults.drop_every, c->nq)) {
		l->c.dropped++;
		c->ndone++;
		st->dropped = st->done = true;
		after_query(c);
		return 0;
	}
	dv_answer_opts_init(&o);
	o.rcode = l->cfg.rcode;
	o.reflect = l->cfg.reflect;
	st->ap = st->a;
	if (o.reflect && len + 2 > sizeof(st->a) && (st->ap = malloc(len + 2)) == NULL)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	n = len < DV_DNS_HEADER_LEN
	        ? -EBADMSG
	        : dv_answer_build(m, len, st->ap + 2, o.reflect ? len : DV_ANSWER_MAX, &o);
	if (n <= 0) {
		l->c.malformed++;
		c->ndone++;
		st->done = true;
		(void)ngtcp2_conn_shutdown_stream(c->qc, st->sid, DOQ_PROTOCOL_ERROR);
		after_query(c);
		return 0;
	}
	st->ap[0] = (uint8_t)(n >> 8);
	st->ap[1] = (uint8_t)n;
	st->alen = (size_t)n + 2;
	st->answered = st->done = true;
	l->c.answered++;
	if (st->early)
		l->c.early_queries++;
	c->ndone++;
	sendq_push(c, st);
	after_query(c);
	return 0;
}

/* --- ngtcp2 callbacks ---------------------------------------------------------------------- */

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((qconn_t *)ref->user_data)->qc;
}

/* A connection ID of ours: the connection's tag, then random bytes (conn_find knows a
 * connection by its tag), with its stateless reset token made from the listener's secret
 * (send_stateless_reset makes it again from the ID alone). The client's (transport/doq.c)
 * is all random: it finds its connection by its socket and sends no stateless reset. */
static int new_cid_cb(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *user)
{
	qconn_t *c = user;

	(void)qc;
	if (cidlen != CID_LEN)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	memcpy(cid->data, c->tag, TAG_LEN);
	if (gnutls_rnd(GNUTLS_RND_NONCE, cid->data + TAG_LEN, CID_LEN - TAG_LEN) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = CID_LEN;
	return ngtcp2_crypto_generate_stateless_reset_token(token, c->l->secret,
	                                                    sizeof(c->l->secret), cid) == 0
	           ? 0
	           : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int handshake_completed_cb(ngtcp2_conn *qc, void *user)
{
	qconn_t *c = user;

	(void)qc;
	c->l->c.handshakes++;
	if (gnutls_session_is_resumed(c->tls))
		c->l->c.resumed++;
	if (gnutls_session_get_flags(c->tls) & GNUTLS_SFLAGS_EARLY_DATA)
		c->l->c.early++;
	return 0;
}

static void strm_free(qconn_t *c, qstrm_t *st)
{
	if (st->oprev != NULL)
		st->oprev->onext = st->onext;
	else
		c->streams = st->onext;
	if (st->onext != NULL)
		st->onext->oprev = st->oprev;
	if (st->ap != st->a)
		free(st->ap);
	free(st->q);
	free(st);
}

static int stream_open_cb(ngtcp2_conn *qc, int64_t sid, void *user)
{
	qconn_t *c = user;
	qstrm_t *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	st->sid = sid;
	st->onext = c->streams;
	if (c->streams != NULL)
		c->streams->oprev = st;
	c->streams = st;
	if (c->l->cfg.hostile == DV_QUIC_STREAM_RESET) {
		c->l->c.stream_resets++;
		st->done = true;
		(void)ngtcp2_conn_shutdown_stream(qc, sid, DOQ_INTERNAL_ERROR);
	}
	return ngtcp2_conn_set_stream_user_data(qc, sid, st) == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

/* Query bytes into st. 1 whole, 0 more to come, -1 malformed (past one message). */
static int strm_take(qstrm_t *st, const uint8_t *d, size_t len)
{
	size_t need;

	if (st->read)
		return len > 0 ? -1 : 0;
	if (st->qlen + len > st->qcap) {
		size_t cap = DV_MAX(st->qlen + len, 64u);
		uint8_t *b;
		if (cap > 2u + 65535u + 1u)
			return -1;
		if ((b = realloc(st->q, cap)) == NULL)
			return -1;
		st->q = b;
		st->qcap = cap;
	}
	memcpy(st->q + st->qlen, d, len);
	st->qlen += len;
	if (st->qlen < 2)
		return 0;
	need = 2u + dv_wire_get16(st->q);
	if (st->qlen > need)
		return -1;
	return st->qlen == need ? 1 : 0;
}

static int recv_stream_data_cb(ngtcp2_conn *qc, uint32_t flags, int64_t sid, uint64_t offset,
                               const uint8_t *data, size_t len, void *user, void *sud)
{
	qconn_t *c = user;
	qstrm_t *st = sud;
	int r;

	(void)offset;
	ngtcp2_conn_extend_max_offset(qc, len);
	ngtcp2_conn_extend_max_stream_offset(qc, sid, len);
	if (st == NULL || (st->done && !st->read))
		return 0;
	if (flags & NGTCP2_STREAM_DATA_FLAG_EARLY)
		st->early = true;
	switch (c->l->cfg.hostile) {
	case DV_QUIC_CLOSE:
		if (!c->hostile_hit) {
			c->hostile_hit = true;
			c->l->c.conn_closes++;
			conn_close_app(c, DOQ_PROTOCOL_ERROR);
		}
		return 0;
	case DV_QUIC_STATELESS_RESET:
		c->hostile_hit = true; /* the caller answers the packet with a reset */
		return 0;
	default:
		break;
	}
	r = strm_take(st, data, len);
	if (r < 0) {
		if (!st->read) { /* a query that is not one message: received, malformed */
			c->l->c.received++;
			c->l->c.malformed++;
			c->nq++;
			c->ndone++;
		}
		st->done = true;
		(void)ngtcp2_conn_shutdown_stream(qc, sid, DOQ_PROTOCOL_ERROR);
		return 0;
	}
	return r == 1 ? answer(c, st) : 0;
}

/* The client gave up on a stream: counted once. Its RESET_STREAM comes here; its
 * STOP_SENDING (ngtcp2 sends no RESET_STREAM for a query it saw acknowledged whole) makes
 * ngtcp2 reset our side with the client's code, seen when the stream closes. */
static void client_cancel(qconn_t *c, qstrm_t *st)
{
	if (st != NULL && !st->answered && !st->cancelled) {
		st->cancelled = true;
		c->l->c.cancelled++;
	}
}

static int stream_close_cb(ngtcp2_conn *qc, uint32_t flags, int64_t sid, uint64_t code, void *user,
                           void *sud)
{
	qconn_t *c = user;
	qstrm_t *st = sud;

	if (st != NULL && (flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) &&
	    code == DOQ_REQUEST_CANCELLED)
		client_cancel(c, st);
	if (st != NULL) {
		sendq_remove(c, st);
		strm_free(c, st);
	}
	if (!ngtcp2_is_bidi_stream(sid))
		return 0;
	ngtcp2_conn_extend_max_streams_bidi(qc, 1);
	return 0;
}

static int stream_reset_cb(ngtcp2_conn *qc, int64_t sid, uint64_t final_size, uint64_t code,
                           void *user, void *sud)
{
	(void)final_size;
	(void)code;
	client_cancel(user, sud);
	(void)ngtcp2_conn_shutdown_stream(qc, sid, DOQ_REQUEST_CANCELLED);
	return 0;
}

/* The server's half: the client's Initial, tagged connection IDs, streams the client opens. */
static const ngtcp2_callbacks callbacks = {
    DV_DOQ_CALLBACKS_SHARED,
    .recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
    .handshake_completed = handshake_completed_cb,
    .recv_stream_data = recv_stream_data_cb,
    .stream_open = stream_open_cb,
    .stream_close = stream_close_cb,
    .get_new_connection_id = new_cid_cb,
    .stream_reset = stream_reset_cb,
};

/* --- connections --------------------------------------------------------------------------- */

static void conn_free(qconn_t *c)
{
	if (c == NULL)
		return;
	dv_doq_conn_del(c->qc, c->tls);
	while (c->streams != NULL)
		strm_free(c, c->streams);
	free(c);
}

/* The count of c's queries read and neither answered nor dropped, then c freed. Records
 * of streams still open are freed with it (ngtcp2_conn_del calls no stream_close). */
static void conn_end(dv_quic_t *l, size_t i)
{
	qconn_t *c = l->conns[i];

	l->c.unanswered += c->nq - c->ndone;
	conn_free(c);
	l->conns[i] = l->conns[--l->nconns];
}

/* The server's TLS session: the shared QUIC setup (base/doq.h), then what only a server
 * has: its session tickets, and with early_data 0-RTT's anti-replay and size. */
static int tls_new(qconn_t *c)
{
	const dv_quic_t *l = c->l;
	unsigned flags = GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA;

	if (l->cfg.early_data)
		flags |= GNUTLS_ENABLE_EARLY_DATA;
	c->ref.get_conn = get_conn;
	c->ref.user_data = c;
	if (dv_doq_tls_init(&c->tls, flags, l->cred, &c->ref) != 0 ||
	    gnutls_session_ticket_enable_server(c->tls, &l->ticket_key) != 0)
		return -1;
	if (l->cfg.early_data) {
		gnutls_anti_replay_enable(c->tls, l->replay);
		if (gnutls_record_set_max_early_data_size(c->tls, 0xffffffffu) != 0)
			return -1;
	}
	return 0;
}

/* A new connection for the Initial in hd from peer. NULL when it cannot be made. */
static qconn_t *conn_accept(dv_quic_t *l, const ngtcp2_pkt_hd *hd,
                            const struct sockaddr_storage *peer, socklen_t plen)
{
	qconn_t *c;
	ngtcp2_cid scid;
	ngtcp2_settings set;
	ngtcp2_transport_params tp;
	ngtcp2_path path;

	if (l->nconns == DV_QUIC_CONNS_MAX) {
		l->c.refused++;
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->l = l;
	c->peer = *peer;
	c->peer_len = plen;
	c->odcid = hd->dcid;
	c->index = ++l->accepted;
	c->faulty = every(l->cfg.faults.conn_every ? l->cfg.faults.conn_every : 1, c->index);
	(void)gnutls_rnd(GNUTLS_RND_NONCE, c->tag, TAG_LEN);
	memcpy(scid.data, c->tag, TAG_LEN);
	(void)gnutls_rnd(GNUTLS_RND_NONCE, scid.data + TAG_LEN, CID_LEN - TAG_LEN);
	scid.datalen = CID_LEN;
	dv_doq_params_init(&set, &tp, now_ns());
	tp.initial_max_streams_bidi = l->cfg.max_streams ? l->cfg.max_streams : 100;
	tp.initial_max_stream_data_bidi_remote = 2 + 65535 + 1;
	tp.original_dcid = hd->dcid;
	tp.stateless_reset_token_present = 1;
	if (ngtcp2_crypto_generate_stateless_reset_token(tp.stateless_reset_token, l->secret,
	                                                 sizeof(l->secret), &scid) != 0)
		goto fail;
	path.local.addr = (ngtcp2_sockaddr *)&l->local;
	path.local.addrlen = l->local_len;
	path.remote.addr = (ngtcp2_sockaddr *)&c->peer;
	path.remote.addrlen = c->peer_len;
	path.user_data = NULL;
	if (tls_new(c) != 0 || ngtcp2_conn_server_new(&c->qc, &hd->scid, &scid, &path, hd->version,
	                                              &callbacks, &set, &tp, NULL, c) != 0)
		goto fail;
	ngtcp2_conn_set_tls_native_handle(c->qc, c->tls);
	l->conns[l->nconns++] = c;
	l->c.connections++;
	return c;
fail:
	conn_free(c);
	return NULL;
}

static ssize_t conn_find(dv_quic_t *l, const uint8_t *dcid, size_t dcidlen)
{
	for (size_t i = 0; i < l->nconns; i++) {
		const qconn_t *c = l->conns[i];
		if ((dcidlen == CID_LEN && memcmp(dcid, c->tag, TAG_LEN) == 0) ||
		    (dcidlen == c->odcid.datalen && memcmp(dcid, c->odcid.data, dcidlen) == 0))
			return (ssize_t)i;
	}
	return -1;
}

static void send_version_neg(dv_quic_t *l, const ngtcp2_version_cid *vc,
                             const struct sockaddr_storage *peer, socklen_t plen)
{
	static const uint32_t sv[] = {0x1a2a3a4a, 0xff00001d}; /* a grease value, draft-29 */
	uint8_t pkt[256], r;
	ngtcp2_ssize n;

	(void)gnutls_rnd(GNUTLS_RND_NONCE, &r, 1);
	n = ngtcp2_pkt_write_version_negotiation(pkt, sizeof(pkt), r, vc->scid, vc->scidlen,
	                                         vc->dcid, vc->dcidlen, sv, 2);
	if (n > 0) {
		send_pkt(l, peer, plen, pkt, (size_t)n);
		l->c.version_negs++;
	}
}

static void send_stateless_reset(dv_quic_t *l, const uint8_t *dcid, const qconn_t *c)
{
	uint8_t pkt[64], token[NGTCP2_STATELESS_RESET_TOKENLEN], rnd[40];
	ngtcp2_cid cid;
	ngtcp2_ssize n;

	cid.datalen = CID_LEN;
	memcpy(cid.data, dcid, CID_LEN);
	(void)gnutls_rnd(GNUTLS_RND_NONCE, rnd, sizeof(rnd));
	if (ngtcp2_crypto_generate_stateless_reset_token(token, l->secret, sizeof(l->secret),
	                                                 &cid) != 0)
		return;
	n = ngtcp2_pkt_write_stateless_reset(pkt, sizeof(pkt), token, rnd, sizeof(rnd));
	if (n > 0) {
		send_pkt(l, &c->peer, c->peer_len, pkt, (size_t)n);
		l->c.stateless_resets++;
	}
}

/* One datagram from peer. */
static void on_datagram(dv_quic_t *l, const uint8_t *d, size_t len,
                        const struct sockaddr_storage *peer, socklen_t plen)
{
	ngtcp2_version_cid vc;
	ngtcp2_pkt_hd hd;
	ngtcp2_path path;
	ngtcp2_pkt_info pi = {0};
	qconn_t *c;
	ssize_t i;
	int rv;

	l->c.datagrams++;
	if (l->cfg.hostile == DV_QUIC_SILENT)
		return;
	rv = ngtcp2_pkt_decode_version_cid(&vc, d, len, CID_LEN);
	if (rv == NGTCP2_ERR_VERSION_NEGOTIATION ||
	    (rv == 0 && vc.version != 0 && l->cfg.hostile == DV_QUIC_VERSION_NEG)) {
		send_version_neg(l, &vc, peer, plen);
		return;
	}
	if (rv != 0)
		return;
	i = conn_find(l, vc.dcid, vc.dcidlen);
	if (i < 0) {
		if (vc.version == 0 || ngtcp2_accept(&hd, d, len) != 0)
			return; /* not an Initial of a new connection: dropped */
		if ((c = conn_accept(l, &hd, peer, plen)) == NULL)
			return;
		i = (ssize_t)l->nconns - 1;
	}
	c = l->conns[i];
	if (c->stalled)
		return;
	/* QUIC v1 long header, type 1: 0-RTT (RFC 9000 17.2.3) */
	if (!c->zero_rtt && (d[0] & 0x80) && ((d[0] >> 4) & 3) == 1 && vc.version == 1) {
		c->zero_rtt = true;
		l->c.zero_rtt_conns++;
	}
	c->peer = *peer; /* the client's address may change (NAT rebinding) */
	c->peer_len = plen;
	path.local.addr = (ngtcp2_sockaddr *)&l->local;
	path.local.addrlen = l->local_len;
	path.remote.addr = (ngtcp2_sockaddr *)&c->peer;
	path.remote.addrlen = c->peer_len;
	path.user_data = NULL;
	rv = ngtcp2_conn_read_pkt(c->qc, &path, &pi, d, len, now_ns());
	if (c->hostile_hit && l->cfg.hostile == DV_QUIC_STATELESS_RESET) {
		send_stateless_reset(l, vc.dcid, c);
		conn_end(l, (size_t)i);
		return;
	}
	if (rv != 0 && !ngtcp2_conn_get_handshake_completed(c->qc))
		l->c.handshake_failed++;
	if (rv != 0 || c->gone || conn_write(c) != 0) {
		conn_end(l, (size_t)i);
		return;
	}
}

/* Timers of every connection due by now; the next one (UINT64_MAX: none). */
static uint64_t expire(dv_quic_t *l, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < l->nconns;) {
		qconn_t *c = l->conns[i];
		uint64_t at = ngtcp2_conn_get_expiry(c->qc);
		if (at <= now) {
			if (ngtcp2_conn_handle_expiry(c->qc, now) != 0 || conn_write(c) != 0) {
				conn_end(l, i);
				continue;
			}
			at = ngtcp2_conn_get_expiry(c->qc);
		}
		next = DV_MIN(next, at);
		i++;
	}
	return next;
}

/* Asleep in poll() until a datagram, the next timer of a connection (none: no timeout) or
 * the stop. */
static void *run(void *arg)
{
	dv_quic_t *l = arg;
	uint8_t buf[65536];

	while (!atomic_load(&l->stop)) {
		uint64_t now = now_ns(), next = expire(l, now);
		int ms = -1;
		struct pollfd p[2] = {{.fd = l->fd, .events = POLLIN},
		                      {.fd = l->stop_fd, .events = POLLIN}};

		if (next != UINT64_MAX)
			ms =
			    next <= now ? 0 : (int)DV_MIN((next - now) / DV_NS_PER_MS + 1, INT_MAX);
		if (poll(p, 2, ms) <= 0 || p[0].revents == 0) /* POLLERR too: recvfrom clears it */
			continue;
		for (int k = 0; k < 64; k++) {
			struct sockaddr_storage peer;
			socklen_t plen = sizeof(peer);
			ssize_t n = recvfrom(l->fd, buf, sizeof(buf), MSG_DONTWAIT,
			                     (struct sockaddr *)&peer, &plen);
			if (n < 0)
				break;
			on_datagram(l, buf, (size_t)n, &peer, plen);
		}
	}
	return NULL;
}

/* --- the listener ---------------------------------------------------------------------------- */

/* 0-RTT's anti-replay store (RFC 8446 8): GnuTLS checks the ticket's age against its
 * window and asks whether the ClientHello was seen. A test server: none was (nothing is
 * stored), or with early_reject every one was, so that early data is refused. */
static int replay_accept(void *ptr, time_t exp, const gnutls_datum_t *key,
                         const gnutls_datum_t *data)
{
	(void)ptr;
	(void)exp;
	(void)key;
	(void)data;
	return 0;
}

static int replay_refuse(void *ptr, time_t exp, const gnutls_datum_t *key,
                         const gnutls_datum_t *data)
{
	(void)ptr;
	(void)exp;
	(void)key;
	(void)data;
	return GNUTLS_E_DB_ENTRY_EXISTS;
}

/* The session ticket key, and 0-RTT's anti-replay context with cfg->early_data. 0 or -1. */
static int tickets_init(dv_quic_t *l, const dv_quic_config_t *cfg)
{
	if (gnutls_session_ticket_key_generate(&l->ticket_key) != 0)
		return -1;
	if (!cfg->early_data)
		return 0;
	if (gnutls_anti_replay_init(&l->replay) != 0)
		return -1;
	gnutls_anti_replay_set_add_function(l->replay,
	                                    cfg->early_reject ? replay_refuse : replay_accept);
	return 0;
}

int dv_quic_open(dv_quic_t **out, const dv_quic_config_t *cfg, dv_err_t *err)
{
	dv_quic_t *l = calloc(1, sizeof(*l));
	int r;

	*out = NULL;
	if (l == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	l->cfg = *cfg;
	l->fd = -1;
	l->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->stop_fd < 0) {
		r = -errno;
		dv_quic_free(l);
		return dv_err_set(err, r, "DoQ listener: %s", strerror(-r));
	}
	if (gnutls_rnd(GNUTLS_RND_RANDOM, l->secret, sizeof(l->secret)) != 0 ||
	    gnutls_certificate_allocate_credentials(&l->cred) != 0 || tickets_init(l, cfg) != 0) {
		dv_quic_free(l);
		return dv_err_set(err, -ENOMEM, "out of memory");
	}
	if (cfg->hostile == DV_QUIC_SERVE || cfg->hostile == DV_QUIC_STREAM_RESET ||
	    cfg->hostile == DV_QUIC_CLOSE || cfg->hostile == DV_QUIC_STATELESS_RESET) {
		r = cfg->cert_file && cfg->key_file
		        ? gnutls_certificate_set_x509_key_file(l->cred, cfg->cert_file,
		                                               cfg->key_file, GNUTLS_X509_FMT_PEM)
		        : GNUTLS_E_FILE_ERROR;
		if (r < 0) {
			dv_quic_free(l);
			return dv_err_set(err, -EINVAL,
			                  "the DoQ listener's --tls-cert/--tls-key: %s",
			                  gnutls_strerror(r));
		}
	}
	l->fd = socket(cfg->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || bind(l->fd, (const struct sockaddr *)&cfg->addr, cfg->addr_len) != 0) {
		r = -errno;
		dv_quic_free(l);
		return dv_err_set(err, r, "DoQ listener: %s", strerror(-r));
	}
	l->local_len = sizeof(l->local);
	getsockname(l->fd, (struct sockaddr *)&l->local, &l->local_len);
	*out = l;
	return 0;
}

uint16_t dv_quic_port(const dv_quic_t *l)
{
	const struct sockaddr_storage *a = &l->local;

	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return ntohs(((const struct sockaddr_in *)a)->sin_port);
}

int dv_quic_start(dv_quic_t *l, dv_err_t *err)
{
	int r = pthread_create(&l->thread, NULL, run, l);

	if (r != 0)
		return dv_err_set(err, -r, "DoQ listener thread: %s", strerror(r));
	l->started = true;
	return 0;
}

void dv_quic_stop(dv_quic_t *l)
{
	uint64_t one = 1;
	ssize_t rc;

	atomic_store(&l->stop, true);
	rc = write(l->stop_fd, &one, sizeof(one)); /* never read: stays readable */
	(void)rc;
}

void dv_quic_join(dv_quic_t *l, dv_quic_counts_t *counts)
{
	dv_quic_stop(l);
	if (l->started) {
		pthread_join(l->thread, NULL);
		l->started = false;
	}
	while (l->nconns > 0)
		conn_end(l, l->nconns - 1);
	if (counts != NULL)
		*counts = l->c;
}

void dv_quic_free(dv_quic_t *l)
{
	if (l == NULL)
		return;
	dv_quic_join(l, NULL);
	if (l->fd >= 0)
		close(l->fd);
	if (l->stop_fd >= 0)
		close(l->stop_fd);
	if (l->cred != NULL)
		gnutls_certificate_free_credentials(l->cred);
	if (l->replay != NULL)
		gnutls_anti_replay_deinit(l->replay);
	gnutls_free(l->ticket_key.data);
	free(l);
}
