/* doq: DNS over QUIC (RFC 9250) as a kind of the table: an ngtcp2 0.12 client connection with
 * its GnuTLS crypto helpers inside the engine's connected UDP socket; one query per
 * bidirectional stream, each a 2-byte length and the message with DNS ID 0. */
#include "config.h"

#include "transport/conn.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "base/doq.h"
#include "base/wire.h"

/* The packets written are of DV_DOQ_PKT_MAX bytes at most (base/doq.h): under
 * DV_TP_DGRAM_MAX, the datagram the engine's socket takes. */

/* A query's bytes kept in the stream record (its length prefix included) without a heap
 * buffer; and an answer's. Larger ones are allocated. */
#define DOQ_INLINE 514u
/* Spare stream records kept per connection for reuse. */
#define DOQ_SPARE_MAX 256u
/* Bytes of answers the server may send on one stream (one answer: 2 + 65535); on the
 * connection, DV_DOQ_CONN_WINDOW (we open it again after each answer). */
#define DOQ_STREAM_WINDOW (2u + 65535u)

/* One query's stream: its bytes until the stream closes (ngtcp2 does not copy stream data
 * and may resend it), its answer as it comes. */
typedef struct doq_strm {
	struct doq_strm *next;          /* the send queue, or the spare list */
	struct doq_strm *onext, *oprev; /* the open streams */
	int64_t sid;
	uint64_t id; /* the engine's id of the query (its window slot, its DNS ID) */
	uint8_t *q;  /* 2-byte length + message with ID 0 */
	size_t qlen, qsent;
	uint8_t *a; /* the answer gathered: 2-byte length + message */
	size_t alen, acap;
	bool reported;       /* an answer or a stream error went to the engine */
	bool cancelled;      /* the engine gave up on it: nothing more is reported */
	bool queued;         /* in the send queue */
	uint64_t reset_code; /* the server's RESET_STREAM code (UINT64_MAX: none) */
	uint8_t qbuf[DOQ_INLINE];
	uint8_t abuf[DOQ_INLINE];
} doq_strm_t;

typedef struct doq {
	dv_tp_conn_t *c;
	ngtcp2_conn *qc;
	gnutls_session_t tls;
	gnutls_certificate_credentials_t cred;
	ngtcp2_crypto_conn_ref ref;
	struct sockaddr_in6 local, remote; /* a fixed path: the engine's socket is connected */
	doq_strm_t *sendq, *sendq_tail;    /* streams with bytes not yet in a packet */
	doq_strm_t *spare;
	doq_strm_t *opened;  /* the open streams' records */
	size_t nspare, open; /* spare records; records of open streams */
	bool handshake_done;
	bool early_ok;      /* the session's ticket allows early data (and its parameters are
	                     * known): 0-RTT may be used */
	bool early_key;     /* GnuTLS made 0-RTT keys (it may with any ticket) */
	bool early;         /* and early_ok: queries go before the handshake is done */
	bool nst_early;     /* the NewSessionTicket being read allows early data */
	bool early_batch;   /* the first flight is out, the first queries not yet: one batch
	                     * for ngtcp2's pacing (they go at once, not a pacing gap later) */
	bool quiet_end;     /* ended without a CONNECTION_CLOSE of ours (idle, the server's) */
	uint64_t spent_due; /* the stream limit used up, nothing open: the end, unless the
	                     * server raises it by then (UINT64_MAX: not so) */
	uint64_t first_answer_ns; /* when the first answer came (0: none yet) */
	uint64_t initial_streams; /* the server's initial_max_streams_bidi */
	bool raised;              /* the server raised the stream limit (MAX_STREAMS) */
	bool stateless_reset;     /* recv_stateless_reset came */
	bool version_neg;         /* the server offered only other versions */
	uint32_t vn_version;      /* the first version it offered */
	char what[160];
} doq_t;

/* --- stream records ---------------------------------------------------------------- */

static doq_strm_t *strm_get(doq_t *q)
{
	doq_strm_t *st = q->spare;

	if (st != NULL) {
		q->spare = st->next;
		q->nspare--;
	} else if ((st = malloc(sizeof(*st))) == NULL) {
		return NULL;
	}
	st->next = NULL;
	st->sid = -1;
	st->q = st->qbuf;
	st->a = st->abuf;
	st->acap = sizeof(st->abuf);
	st->qlen = st->qsent = st->alen = 0;
	st->reported = st->cancelled = st->queued = false;
	st->reset_code = UINT64_MAX;
	st->oprev = NULL;
	st->onext = q->opened;
	if (q->opened != NULL)
		q->opened->oprev = st;
	q->opened = st;
	q->open++;
	return st;
}

static void strm_put(doq_t *q, doq_strm_t *st)
{
	if (st->q != st->qbuf)
		free(st->q);
	if (st->a != st->abuf)
		free(st->a);
	if (st->oprev != NULL)
		st->oprev->onext = st->onext;
	else
		q->opened = st->onext;
	if (st->onext != NULL)
		st->onext->oprev = st->oprev;
	q->open--;
	if (q->nspare >= DOQ_SPARE_MAX) {
		free(st);
		return;
	}
	st->next = q->spare;
	q->spare = st;
	q->nspare++;
}

/* The query as it goes on the stream (RFC 9250 4.2: the 2-byte length, DNS ID 0).
 * 0 or -ENOMEM. */
static int strm_set_query(doq_strm_t *st, const uint8_t *msg, size_t len)
{
	if (len + 2 > sizeof(st->qbuf) && (st->q = malloc(len + 2)) == NULL)
		return -ENOMEM;
	st->q[0] = (uint8_t)(len >> 8);
	st->q[1] = (uint8_t)len;
	memcpy(st->q + 2, msg, len);
	st->q[2] = st->q[3] = 0;
	st->qlen = len + 2;
	return 0;
}

/* Answer bytes of a stream, in order. 1 when the answer is whole (its message at
 * st->a + 2, st->alen - 2 bytes), 0 when more is to come, -EPROTO for bytes past it (one
 * message per stream), -ENOMEM. */
static int strm_take(doq_strm_t *st, const uint8_t *data, size_t len)
{
	size_t want = st->alen >= 2 ? 2u + dv_wire_get16(st->a) : 2;
	uint8_t *b;

	while (len > 0) {
		size_t n = DV_MIN(len, want - st->alen);
		if (st->alen == want && st->alen > 2)
			return -EPROTO;
		if (want > st->acap) {
			if ((b = malloc(want)) == NULL)
				return -ENOMEM;
			memcpy(b, st->a, st->alen);
			if (st->a != st->abuf)
				free(st->a);
			st->a = b;
			st->acap = want;
		}
		memcpy(st->a + st->alen, data, n);
		st->alen += n;
		data += n;
		len -= n;
		if (st->alen == 2)
			want = 2u + dv_wire_get16(st->a);
		if (st->alen == want && want > 2 && len > 0)
			return -EPROTO;
	}
	return st->alen >= 2 && st->alen == 2u + dv_wire_get16(st->a) && st->alen > 2 ? 1 : 0;
}

static void sendq_push(doq_t *q, doq_strm_t *st)
{
	st->next = NULL;
	st->queued = true;
	if (q->sendq_tail != NULL)
		q->sendq_tail->next = st;
	else
		q->sendq = st;
	q->sendq_tail = st;
}

static void sendq_pop(doq_t *q)
{
	doq_strm_t *st = q->sendq;

	q->sendq = st->next;
	if (q->sendq == NULL)
		q->sendq_tail = NULL;
	st->next = NULL;
	st->queued = false;
}

/* --- ngtcp2 callbacks --------------------------------------------------------------- */

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((doq_t *)ref->user_data)->qc;
}

/* A connection ID of ours and its stateless reset token, random: the connection is found by
 * the engine's socket, and a client sends no stateless reset. The responder's
 * (responder/quic.c) is tagged and derived: a server finds connections by their IDs and
 * resets them. */
static int new_cid_cb(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t cidlen, void *user)
{
	(void)qc;
	(void)user;
	if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = cidlen;
	return 0;
}

/* An event's negative return, or a dead connection, stops ngtcp2's read. */
static int cb_status(const doq_t *q, int rc)
{
	return rc < 0 || q->c->dead ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int early_rejected(doq_t *q);

static int handshake_completed_cb(ngtcp2_conn *qc, void *user)
{
	doq_t *q = user;
	gnutls_datum_t alpn;
	int rc;

	const ngtcp2_transport_params *tp = ngtcp2_conn_get_remote_transport_params(qc);

	q->handshake_done = true;
	q->initial_streams = tp != NULL ? tp->initial_max_streams_bidi : 0;
	if (gnutls_alpn_get_selected_protocol(q->tls, &alpn) != 0 || alpn.size != 3 ||
	    memcmp(alpn.data, "doq", 3) != 0) {
		rc = dv_tp_proto_error(q->c, "the server did not agree to DoQ (ALPN doq)");
		return cb_status(q, rc);
	}
	if (q->early_key && !(gnutls_session_get_flags(q->tls) & GNUTLS_SFLAGS_EARLY_DATA)) {
		rc = early_rejected(q);
		if (rc < 0 || q->c->dead)
			return cb_status(q, rc);
	}
	rc = dv_tp_emit_handshake(q->c, gnutls_session_is_resumed(q->tls) != 0);
	return cb_status(q, rc);
}

/* GnuTLS made the 0-RTT keys (a session resumed): when its ticket allows early data the
 * connection takes queries now, on the streams the server's remembered parameters allow.
 * GnuTLS offers early data with any ticket; RFC 8446 4.2.10 allows it only with a ticket
 * that says so, and a server without it refuses (handshake_completed_cb). */
static int recv_tx_key_cb(ngtcp2_conn *qc, ngtcp2_crypto_level level, void *user)
{
	doq_t *q = user;

	(void)qc;
	if (level == NGTCP2_CRYPTO_LEVEL_EARLY) {
		q->early_key = true;
		q->early = q->early_ok;
	}
	return 0;
}

/* The server grants streams with MAX_STREAMS as they close (RFC 9000 4.6); a server that
 * grants a fixed number per connection and never more (knotd 3.2: 100) leaves a connection
 * that can carry no more queries. When the limit is used up and no stream is open (a
 * cancelled query's too: a server that never closes them, not reading, is left to -t), the
 * connection ends (counted as closed by the server, idle) and another carries the queries:
 * at once when the server has raised no limit on it though its first answer came over a
 * PTO ago (it will not), else one PTO later unless the server raises the limit by then. */
static void spent_check(doq_t *q)
{
	uint64_t now, pto;

	if (!q->handshake_done || q->open > 0 || ngtcp2_conn_get_streams_bidi_left(q->qc) > 0) {
		q->spent_due = UINT64_MAX;
		return;
	}
	if (q->spent_due != UINT64_MAX)
		return;
	now = dv_now_ns();
	pto = ngtcp2_conn_get_pto(q->qc);
	q->spent_due = !q->raised && q->first_answer_ns + pto < now ? now : now + pto;
}

/* Query st's stream ended without its answer: a stream error, once. */
static int strm_error(doq_t *q, doq_strm_t *st, const char *why)
{
	dv_tp_event_t ev = {.kind = DV_TP_EV_STREAM_ERROR, .id = st->id, .what = why};

	if (st->reported || st->cancelled)
		return 0;
	st->reported = true;
	return dv_tp_emit(q->c, &ev);
}

/* The server did not take our 0-RTT data: ngtcp2 forgets those streams (no stream_close)
 * and each query not given up goes again on a new stream, in 1-RTT, in the order sent;
 * the server never read the first copy, so nothing is counted twice. A cancelled query's
 * record goes; one the server's new limit has no room for is a stream error. */
static int early_rejected(doq_t *q)
{
	doq_strm_t *st, *prev;
	int rc = 0;

	if (ngtcp2_conn_early_data_rejected(q->qc) != 0)
		return dv_tp_proto_error(q->c, "QUIC: the 0-RTT data could not be dropped");
	q->sendq = q->sendq_tail = NULL;
	for (st = q->opened; st != NULL && st->onext != NULL; st = st->onext)
		; /* the oldest: records are pushed at the head */
	for (; st != NULL; st = prev) {
		prev = st->oprev;
		st->queued = false;
		st->qsent = 0;
		if (!st->cancelled && !st->reported &&
		    ngtcp2_conn_open_bidi_stream(q->qc, &st->sid, st) == 0) {
			sendq_push(q, st);
			continue;
		}
		rc = strm_error(q, st, "the server refused 0-RTT and allows fewer streams");
		strm_put(q, st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int recv_stream_data_cb(ngtcp2_conn *qc, uint32_t flags, int64_t sid, uint64_t offset,
                               const uint8_t *data, size_t len, void *user, void *sud)
{
	doq_t *q = user;
	doq_strm_t *st = sud;
	dv_tp_event_t ev = {.kind = DV_TP_EV_ANSWER};
	int rc = 0, r;

	(void)offset;
	ngtcp2_conn_extend_max_offset(qc, len);
	ngtcp2_conn_extend_max_stream_offset(qc, sid, len);
	if (st == NULL || st->cancelled || st->reported)
		return 0;
	r = strm_take(st, data, len);
	if (r == -EPROTO) {
		rc = dv_tp_proto_error(q->c, "the server sent more than one message on a stream");
		return cb_status(q, rc);
	}
	if (r < 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	if (r == 1) {
		/* The query's own ID, for the engine to match: the server must send 0
		 * (RFC 9250 4.2.1); any other ID is left for the engine to count. */
		uint8_t *m = st->a + 2;
		if (dv_wire_get16(m) == 0) {
			m[0] = (uint8_t)(st->id >> 8);
			m[1] = (uint8_t)st->id;
		}
		st->reported = true;
		if (q->first_answer_ns == 0)
			q->first_answer_ns = dv_now_ns();
		ev.id = st->id;
		ev.msg = m;
		ev.len = st->alen - 2;
		rc = dv_tp_emit(q->c, &ev);
	} else if (flags & NGTCP2_STREAM_DATA_FLAG_FIN) {
		rc = strm_error(q, st, "the stream ended inside the answer");
	}
	spent_check(q);
	return cb_status(q, rc);
}

static int stream_reset_cb(ngtcp2_conn *qc, int64_t sid, uint64_t final_size, uint64_t code,
                           void *user, void *sud)
{
	doq_strm_t *st = sud;

	(void)qc;
	(void)sid;
	(void)final_size;
	(void)user;
	if (st != NULL)
		st->reset_code = code;
	return 0;
}

static int stream_close_cb(ngtcp2_conn *qc, uint32_t flags, int64_t sid, uint64_t code, void *user,
                           void *sud)
{
	doq_t *q = user;
	doq_strm_t *st = sud;
	int rc = 0;

	(void)qc;
	(void)sid;
	if (st == NULL)
		return 0;
	if (!st->reported && !st->cancelled) {
		if (st->reset_code == UINT64_MAX &&
		    (flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
			st->reset_code = code;
		snprintf(q->what, sizeof(q->what),
		         "the server reset the stream with %s (0x%" PRIx64 ")",
		         dv_doq_code_name(st->reset_code), st->reset_code);
		rc = strm_error(
		    q, st, st->reset_code == UINT64_MAX ? "the stream closed unanswered" : q->what);
	}
	if (st->queued) { /* out of the send queue first */
		doq_strm_t **p = &q->sendq, *prev = NULL;
		while (*p != st) {
			prev = *p;
			p = &(*p)->next;
		}
		*p = st->next;
		if (q->sendq_tail == st)
			q->sendq_tail = prev;
	}
	strm_put(q, st);
	spent_check(q);
	return cb_status(q, rc);
}

static int extend_streams_cb(ngtcp2_conn *qc, uint64_t max_streams, void *user)
{
	doq_t *q = user;

	(void)qc;
	if (q->handshake_done && max_streams > q->initial_streams)
		q->raised = true;
	return 0;
}

static int stateless_reset_cb(ngtcp2_conn *qc, const ngtcp2_pkt_stateless_reset *sr, void *user)
{
	(void)qc;
	(void)sr;
	((doq_t *)user)->stateless_reset = true;
	return 0;
}

static int version_neg_cb(ngtcp2_conn *qc, const ngtcp2_pkt_hd *hd, const uint32_t *sv, size_t nsv,
                          void *user)
{
	doq_t *q = user;

	(void)qc;
	(void)hd;
	q->version_neg = true;
	q->vn_version = nsv > 0 ? sv[0] : 0;
	return 0;
}

/* The client's half: its Initial, a Retry, version negotiation, 0-RTT keys, random
 * connection IDs, the streams it opens and the server's limit on them. */
static const ngtcp2_callbacks doq_callbacks = {
    DV_DOQ_CALLBACKS_SHARED,
    .client_initial = ngtcp2_crypto_client_initial_cb,
    .handshake_completed = handshake_completed_cb,
    .recv_version_negotiation = version_neg_cb,
    .recv_tx_key = recv_tx_key_cb,
    .recv_stream_data = recv_stream_data_cb,
    .stream_close = stream_close_cb,
    .recv_stateless_reset = stateless_reset_cb,
    .recv_retry = ngtcp2_crypto_recv_retry_cb,
    .extend_max_local_streams_bidi = extend_streams_cb,
    .get_new_connection_id = new_cid_cb,
    .stream_reset = stream_reset_cb,
};

/* --- the connection's end -------------------------------------------------------------- */

/* ngtcp2 refused a packet or a timer with rv: the sentence, then a protocol error or (the
 * server's CONNECTION_CLOSE with DOQ_NO_ERROR, an idle end with nothing in flight) a
 * clean close. */
static int conn_failed(doq_t *q, int rv)
{
	dv_tp_conn_t *c = q->c;
	ngtcp2_connection_close_error cc;

	if (c->dead || c->closed)
		return c->cb_rc < 0 ? c->cb_rc : 0;
	q->quiet_end = true;
	if (q->stateless_reset) {
		snprintf(q->what, sizeof(q->what), "the server sent a QUIC stateless reset");
	} else if (rv == NGTCP2_ERR_RECV_VERSION_NEGOTIATION || q->version_neg) {
		snprintf(q->what, sizeof(q->what),
		         "the server does not speak QUIC version 1 (version negotiation offered "
		         "0x%08" PRIx32 ")",
		         q->vn_version);
	} else if (rv == NGTCP2_ERR_DRAINING) {
		ngtcp2_conn_get_connection_close_error(q->qc, &cc);
		if (cc.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION &&
		    cc.error_code == DOQ_NO_ERROR)
			return dv_tp_emit_closed(c);
		if (cc.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION)
			snprintf(q->what, sizeof(q->what),
			         "the server closed the QUIC connection with %s (0x%" PRIx64 ")",
			         dv_doq_code_name(cc.error_code), cc.error_code);
		else if (cc.error_code == NGTCP2_NO_ERROR)
			return dv_tp_emit_closed(c);
		else
			snprintf(
			    q->what, sizeof(q->what),
			    "the server closed the QUIC connection with transport error 0x%" PRIx64,
			    cc.error_code);
	} else if (rv == NGTCP2_ERR_IDLE_CLOSE) {
		if (q->open == 0)
			return dv_tp_emit_closed(c);
		snprintf(q->what, sizeof(q->what), "the QUIC connection was idle for %u s",
		         (unsigned)(DV_DOQ_IDLE_NS / DV_NS_PER_S));
	} else if (rv == NGTCP2_ERR_CRYPTO && !q->handshake_done) {
		uint8_t alert = ngtcp2_conn_get_tls_alert(q->qc);
		const char *a = gnutls_alert_get_name((gnutls_alert_description_t)alert);
		snprintf(q->what, sizeof(q->what), "TLS handshake failed: %s (TLS alert %u)",
		         a != NULL ? a : "a TLS error", alert);
	} else {
		snprintf(q->what, sizeof(q->what), "QUIC: %s", ngtcp2_strerror(rv));
	}
	return dv_tp_proto_error(c, q->what);
}

/* --- the worker's session (resumption) ------------------------------------------------- */

/* The worker's session in s->session: the server's transport parameters (ngtcp2's struct,
 * its pointer fields cleared; 0-RTT opens streams on them before the handshake, RFC 9000
 * 7.4.1), a byte saying whether the ticket allows early data, then GnuTLS's session
 * data. */

/* RFC 8446 4.6.1, a NewSessionTicket's body: lifetime (4), age_add (4), nonce<0..255>,
 * ticket<1..2^16-1>, extensions<0..2^16-2>. True when early_data (42) is among its
 * extensions: the ticket allows 0-RTT. */
static bool nst_allows_early(const uint8_t *m, size_t len)
{
	size_t i = 8, n, end;

	if (len < i + 1)
		return false;
	i += 1u + m[i];
	if (i + 2 > len)
		return false;
	i += 2u + dv_wire_get16(m + i);
	if (i + 2 > len)
		return false;
	n = dv_wire_get16(m + i);
	i += 2;
	if (i + n > len)
		return false;
	for (end = i + n; i + 4 <= end; i += 4u + dv_wire_get16(m + i + 2))
		if (dv_wire_get16(m + i) == 42)
			return true;
	return false;
}

/* Keep tp (NULL: none known, no 0-RTT), whether the ticket allows early data, and the
 * session data (len bytes) as the worker's newest, in place of the one before. 0, -EINVAL for no
 * data, or -ENOMEM with the one before kept. */
static int session_keep(dv_tp_shared_t *s, const ngtcp2_transport_params *tp, bool early_ok,
                        const uint8_t *data, size_t len)
{
	ngtcp2_transport_params t;
	uint8_t *b;

	if (len == 0)
		return -EINVAL;
	if ((b = malloc(sizeof(t) + 1 + len)) == NULL)
		return -ENOMEM;
	memset(&t, 0, sizeof(t));
	if (tp != NULL) {
		t = *tp;
		memset(&t.version_info, 0, sizeof(t.version_info));
		t.version_info_present = 0;
	}
	memcpy(b, &t, sizeof(t));
	b[sizeof(t)] = early_ok && tp != NULL && tp->initial_max_streams_bidi > 0;
	memcpy(b + sizeof(t) + 1, data, len);
	free(s->session);
	s->session = b;
	s->session_len = sizeof(t) + 1 + len;
	return 0;
}

/* The parts of the worker's session: false when there is none. *early_ok: its ticket
 * allows 0-RTT and the server's parameters are known. */
static bool session_parts(const dv_tp_shared_t *s, ngtcp2_transport_params *tp, bool *early_ok,
                          const uint8_t **data, size_t *len)
{
	if (s->session == NULL || s->session_len <= sizeof(*tp) + 1)
		return false;
	memcpy(tp, s->session, sizeof(*tp));
	*early_ok = s->session[sizeof(*tp)] != 0;
	*data = s->session + sizeof(*tp) + 1;
	*len = s->session_len - sizeof(*tp) - 1;
	return true;
}

/* GnuTLS reads the server's NewSessionTicket (a TLS 1.3 post-handshake message): before,
 * whether it allows early data (the message whole); after, the session it makes
 * resumable becomes the worker's newest. A failure keeps the one before (the next
 * connection resumes that, or makes a full handshake). */
static int ticket_hook(gnutls_session_t tls, unsigned int htype, unsigned when,
                       unsigned int incoming, const gnutls_datum_t *msg)
{
	ngtcp2_crypto_conn_ref *ref = gnutls_session_get_ptr(tls);
	doq_t *q = ref->user_data;
	gnutls_datum_t d;

	if (htype != GNUTLS_HANDSHAKE_NEW_SESSION_TICKET || !incoming)
		return 0;
	if (when == GNUTLS_HOOK_PRE) {
		q->nst_early = msg != NULL && nst_allows_early(msg->data, msg->size);
		return 0;
	}
	if (gnutls_session_get_data2(tls, &d) != 0)
		return 0;
	(void)session_keep(q->c->s, ngtcp2_conn_get_remote_transport_params(q->qc), q->nst_early,
	                   d.data, d.size);
	gnutls_free(d.data);
	return 0;
}

/* Unless --tls-no-resume: offer the worker's newest session, keep the next the server
 * gives. A session GnuTLS refuses (expired, damaged) leaves a full handshake. True when
 * one is offered; *tp then has the server's transport parameters that came with it and
 * q->early_ok says whether 0-RTT may be used. */
static bool session_resume(doq_t *q, const dv_tp_shared_t *s, ngtcp2_transport_params *tp)
{
	const uint8_t *data;
	size_t len;

	q->early_ok = false;
	if (s->cfg->no_resume)
		return false;
	gnutls_handshake_set_hook_function(q->tls, GNUTLS_HANDSHAKE_NEW_SESSION_TICKET,
	                                   GNUTLS_HOOK_BOTH, ticket_hook);
	if (!session_parts(s, tp, &q->early_ok, &data, &len) ||
	    gnutls_session_set_data(q->tls, data, len) != 0) {
		q->early_ok = false;
		return false;
	}
	return true;
}

/* --- operations ------------------------------------------------------------------------ */

/* Queries go once the handshake is done, or before with 0-RTT keys. */
static bool takes_queries(const doq_t *q)
{
	return q->handshake_done || q->early;
}

static int doq_shared_init(dv_tp_shared_t *s, dv_err_t *err)
{
	const dv_tp_config_t *cfg = s->cfg;
	gnutls_certificate_credentials_t cred;
	int r;

	if (cfg->tls_max != 0 && cfg->tls_max < 0x0304) /* TLS1_3_VERSION */
		return dv_err_set(err, -EINVAL, "DNS over QUIC is TLS 1.3 only (--tls-max)");
	if (cfg->ca_file == NULL)
		return 0;
	/* Read once here, so a bad file is said before the run (each connection reads it). */
	if (gnutls_certificate_allocate_credentials(&cred) != 0)
		return dv_err_set(err, -ENOMEM, "out of memory");
	r = gnutls_certificate_set_x509_trust_file(cred, cfg->ca_file, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (r <= 0)
		return dv_err_set(err, -EINVAL, "--tls-ca %s: %s", cfg->ca_file,
		                  r < 0 ? gnutls_strerror(r) : "no certificate in it");
	return 0;
}

/* The client's TLS session: the trust file, the shared QUIC setup (base/doq.h) with early
 * data offered, then what only a client has: the name it asks for and checks. */
static int tls_session(doq_t *q, const dv_tp_config_t *cfg)
{
	int rc;

	if (gnutls_certificate_allocate_credentials(&q->cred) != 0 ||
	    (cfg->ca_file != NULL && gnutls_certificate_set_x509_trust_file(
	                                 q->cred, cfg->ca_file, GNUTLS_X509_FMT_PEM) <= 0))
		return -ENOMEM;
	rc = dv_doq_tls_init(&q->tls,
	                     GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA | GNUTLS_ENABLE_EARLY_DATA,
	                     q->cred, &q->ref);
	if (rc != 0)
		return rc;
	if (cfg->sni != NULL &&
	    gnutls_server_name_set(q->tls, GNUTLS_NAME_DNS, cfg->sni, strlen(cfg->sni)) != 0)
		return -EINVAL;
	if (cfg->ca_file != NULL)
		gnutls_session_set_verify_cert(q->tls, cfg->sni, 0);
	return 0;
}

static int write_one(doq_t *q, uint64_t now, bool *no_streams);

/* A resumed session whose server parameters are known: they are set as the server's for
 * now, and the first flight (the ClientHello) is made at once, so that GnuTLS derives the
 * 0-RTT keys (recv_tx_key_cb) when the ticket allows early data and the connection takes
 * queries as soon as it is open. Its datagrams wait in c->out. 0 or -EIO. */
static int early_start(doq_t *q, const ngtcp2_transport_params *tp)
{
	uint64_t now = dv_now_ns();
	bool no_streams = true;
	unsigned guard = 0;
	int r;

	ngtcp2_conn_set_early_remote_transport_params(q->qc, tp);
	while ((r = write_one(q, now, &no_streams)) == 1 && ++guard < 16)
		;
	if (q->early)
		q->early_batch = true; /* the pacing time is set once the queries are written */
	else
		ngtcp2_conn_update_pkt_tx_time(q->qc, now);
	return r < 0 ? -EIO : 0;
}

static void fixed_path(doq_t *q, ngtcp2_path *p)
{
	p->local.addr = (ngtcp2_sockaddr *)&q->local;
	p->local.addrlen = sizeof(q->local);
	p->remote.addr = (ngtcp2_sockaddr *)&q->remote;
	p->remote.addrlen = sizeof(q->remote);
	p->user_data = NULL;
}

static int doq_attach(dv_tp_conn_t *c)
{
	doq_t *q = calloc(1, sizeof(*q));
	ngtcp2_cid dcid, scid;
	ngtcp2_settings set;
	ngtcp2_transport_params tp, early_tp;
	ngtcp2_path path;
	bool resuming;
	int rc;

	if (q == NULL)
		return -ENOMEM;
	c->proto = q;
	q->c = c;
	q->ref.get_conn = get_conn;
	q->ref.user_data = q;
	q->spent_due = UINT64_MAX;
	q->local.sin6_family = q->remote.sin6_family = AF_INET6;
	q->local.sin6_port = htons(1);
	q->remote.sin6_port = htons(c->s->d->default_port);
	rc = tls_session(q, c->s->cfg);
	if (rc != 0)
		return rc;
	resuming = session_resume(q, c->s, &early_tp);
	dcid.datalen = NGTCP2_MIN_INITIAL_DCIDLEN;
	scid.datalen = 8;
	if (gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) != 0)
		return -EIO;
	dv_doq_params_init(&set, &tp, dv_now_ns());
	set.handshake_timeout = UINT64_MAX; /* the engine's -t bounds the handshake */
	tp.initial_max_streams_bidi = 0;    /* the server opens none (RFC 9250 4.2) */
	tp.initial_max_streams_uni = 0;
	tp.initial_max_stream_data_bidi_local = DOQ_STREAM_WINDOW;
	tp.max_udp_payload_size = DV_TP_DGRAM_MAX;
	fixed_path(q, &path);
	if (ngtcp2_conn_client_new(&q->qc, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &doq_callbacks,
	                           &set, &tp, NULL, q) != 0)
		return -ENOMEM;
	ngtcp2_conn_set_tls_native_handle(q->qc, q->tls);
	if (resuming && q->early_ok)
		return early_start(q, &early_tp);
	return 0;
}

static void doq_detach(dv_tp_conn_t *c)
{
	doq_t *q = c->proto;
	doq_strm_t *st;

	if (q == NULL)
		return;
	dv_doq_conn_del(q->qc, q->tls); /* the open records are freed here */
	if (q->cred != NULL)
		gnutls_certificate_free_credentials(q->cred);
	while (q->opened != NULL)
		strm_put(q, q->opened);
	while ((st = q->spare) != NULL) {
		q->spare = st->next;
		free(st);
	}
	free(q);
	c->proto = NULL;
}

static int doq_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id)
{
	doq_t *q = c->proto;
	doq_strm_t *st;
	int64_t sid;
	int rv;

	if (!takes_queries(q) || ngtcp2_conn_get_streams_bidi_left(q->qc) == 0)
		return -EAGAIN;
	if ((st = strm_get(q)) == NULL)
		return -EAGAIN;
	if (strm_set_query(st, msg, len) != 0) {
		strm_put(q, st);
		return -EAGAIN;
	}
	rv = ngtcp2_conn_open_bidi_stream(q->qc, &sid, st);
	if (rv != 0) {
		strm_put(q, st);
		return -EAGAIN;
	}
	st->sid = sid;
	st->id = id;
	sendq_push(q, st);
	return 0;
}

/* One QUIC packet into c->out (its datagram), with the queued streams' bytes unless
 * *no_streams. 1 written (or more to write), 0 nothing more to write now, or a negative
 * ngtcp2 error. A stream the server's flow control blocks goes to the back of the queue,
 * and no stream is tried again in this pump (the control frames still go). */
static int write_one(doq_t *q, uint64_t now, bool *no_streams)
{
	doq_strm_t *st = *no_streams ? NULL : q->sendq;
	uint8_t *p = dv_bq_reserve(&q->c->out, DV_DOQ_PKT_MAX + 2);
	ngtcp2_vec v;
	ngtcp2_ssize n, taken = -1;
	uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;

	if (p == NULL)
		return 0; /* out_max: the socket takes the datagrams queued first */
	if (st != NULL) {
		v.base = st->q + st->qsent;
		v.len = st->qlen - st->qsent;
		flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
	}
	n = ngtcp2_conn_writev_stream(q->qc, NULL, NULL, p + 2, DV_DOQ_PKT_MAX, &taken, flags,
	                              st != NULL ? st->sid : -1, st != NULL ? &v : NULL,
	                              st != NULL ? 1 : 0, now);
	if (st != NULL && taken >= 0) {
		st->qsent += (size_t)taken;
		if (st->qsent == st->qlen)
			sendq_pop(q);
	}
	if (n == NGTCP2_ERR_WRITE_MORE)
		return 1; /* room left in the packet: the next stream's bytes join it */
	if (n == NGTCP2_ERR_STREAM_SHUT_WR) { /* cancelled before its bytes went: gone */
		if (st != NULL && st == q->sendq)
			sendq_pop(q);
		return 1;
	}
	if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
		if (st != NULL && st == q->sendq) {
			sendq_pop(q);
			sendq_push(q, st);
		}
		*no_streams = true;
		return 1;
	}
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	p[0] = (uint8_t)(n >> 8);
	p[1] = (uint8_t)n;
	dv_bq_commit(&q->c->out, (size_t)n + 2);
	return 1;
}

static int doq_pump(dv_tp_conn_t *c)
{
	doq_t *q = c->proto;
	uint64_t now = dv_now_ns();
	unsigned guard = 0;
	bool no_streams = false;
	int r;

	if (c->closed || ngtcp2_conn_is_in_closing_period(q->qc) ||
	    ngtcp2_conn_is_in_draining_period(q->qc))
		return 0;
	/* Bounded: a packet per round, and out_max bounds the datagrams queued. */
	while ((r = write_one(q, now, &no_streams)) == 1 && ++guard < 4096)
		;
	if (!q->early_batch || q->open > 0 || q->handshake_done) { /* else it waits for them */
		q->early_batch = false;
		ngtcp2_conn_update_pkt_tx_time(q->qc, now);
	}
	if (r < 0)
		return conn_failed(q, r);
	return 0;
}

static int doq_input(void *ctx, const uint8_t *data, size_t len)
{
	dv_tp_conn_t *c = ctx;
	doq_t *q = c->proto;
	ngtcp2_path path;
	ngtcp2_pkt_info pi = {0};
	int rv;

	fixed_path(q, &path);
	rv = ngtcp2_conn_read_pkt(q->qc, &path, &pi, data, len, dv_now_ns());
	if (c->cb_rc < 0)
		return c->cb_rc;
	if (rv == 0 || c->dead)
		return c->dead ? -EPROTO : 0;
	return conn_failed(q, rv);
}

static size_t doq_capacity(const dv_tp_conn_t *c)
{
	const doq_t *q = c->proto;

	if (!takes_queries(q))
		return 0;
	return (size_t)ngtcp2_conn_get_streams_bidi_left(q->qc);
}

static const char *doq_full_why(const dv_tp_conn_t *c)
{
	const doq_t *q = c->proto;

	return takes_queries(q) ? "the server's QUIC stream limit (MAX_STREAMS) is reached"
	                        : "the QUIC handshake is not done";
}

static int doq_cancel(dv_tp_conn_t *c, uint64_t id)
{
	doq_t *q = c->proto;
	doq_strm_t *st;

	/* The open streams are few (under the server's limit): a walk finds the query. */
	for (st = q->opened; st != NULL && (st->id != id || st->cancelled); st = st->onext)
		;
	if (st == NULL || st->reported)
		return 0;
	st->cancelled = true;
	spent_check(q);
	/* RESET_STREAM and STOP_SENDING with DOQ_REQUEST_CANCELLED (RFC 9250 4.5); ngtcp2
	 * closes the stream (stream_close frees the record) once both are done. */
	if (ngtcp2_conn_shutdown_stream(q->qc, st->sid, DOQ_REQUEST_CANCELLED) != 0)
		return 0;
	return 1;
}

static size_t doq_in_flight(const dv_tp_conn_t *c)
{
	return ((const doq_t *)c->proto)->open;
}

static bool doq_settled(const dv_tp_conn_t *c)
{
	return takes_queries(c->proto);
}

static const char *doq_eof_cut(const dv_tp_conn_t *c)
{
	(void)c;
	return NULL; /* datagrams have no end of stream: never called */
}

/* A clean end: CONNECTION_CLOSE with DOQ_NO_ERROR (RFC 9250 4.3). */
static void doq_close(dv_tp_conn_t *c)
{
	doq_t *q = c->proto;
	ngtcp2_connection_close_error cc;
	uint8_t *p;
	ngtcp2_ssize n;

	if (c->dead || q->quiet_end || ngtcp2_conn_is_in_closing_period(q->qc) ||
	    ngtcp2_conn_is_in_draining_period(q->qc) || !q->handshake_done)
		return;
	if ((p = dv_bq_reserve(&c->out, DV_DOQ_PKT_MAX + 2)) == NULL)
		return;
	ngtcp2_connection_close_error_set_application_error(&cc, DOQ_NO_ERROR, NULL, 0);
	n = ngtcp2_conn_write_connection_close(q->qc, NULL, NULL, p + 2, DV_DOQ_PKT_MAX, &cc,
	                                       dv_now_ns());
	if (n <= 0)
		return;
	p[0] = (uint8_t)(n >> 8);
	p[1] = (uint8_t)n;
	dv_bq_commit(&c->out, (size_t)n + 2);
}

static uint64_t doq_next_deadline(const dv_tp_conn_t *c)
{
	const doq_t *q = c->proto;

	return q->qc != NULL ? DV_MIN(ngtcp2_conn_get_expiry(q->qc), q->spent_due) : UINT64_MAX;
}

static int doq_on_deadline(dv_tp_conn_t *c, uint64_t now)
{
	doq_t *q = c->proto;
	int rv = ngtcp2_conn_handle_expiry(q->qc, now);

	if (rv != 0)
		return conn_failed(q, rv);
	if (q->spent_due <= now) {
		spent_check(q); /* raised meanwhile: goes on */
		if (q->spent_due != UINT64_MAX)
			return dv_tp_emit_closed(c);
	}
	return 0;
}

static const dv_tp_ops_t doq_ops = {
    .shared_init = doq_shared_init,
    .attach = doq_attach,
    .detach = doq_detach,
    .submit = doq_submit,
    .input = doq_input,
    .pump = doq_pump,
    .capacity = doq_capacity,
    .full_why = doq_full_why,
    .cancel = doq_cancel,
    .in_flight = doq_in_flight,
    .settled = doq_settled,
    .eof_cut = doq_eof_cut,
    .close = doq_close,
    .next_deadline = doq_next_deadline,
    .on_deadline = doq_on_deadline,
};

const dv_tp_desc_t dv_tp_doq_desc = {
    .kind = DV_TP_DOQ,
    .name = "doq",
    .long_name = "DNS over QUIC",
    .default_port = 853,
    .tls = true,
    .alpn = "doq",
    .alpn_label = "DoQ",
    .setup_what = "QUIC handshake",
    .sock_type = SOCK_DGRAM,
    .own_tls = true,
    .timers = true,
    .answer_ids = true,
    .ops = &doq_ops,
};
