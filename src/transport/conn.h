/* conn: the inside of a dv_tp_conn_t and the operations a transport kind gives (its file:
 * tcp.c, dot.c, doh.c); the event helpers every kind reports through (event.c). A kind's
 * file includes this header only. */
#ifndef DV_TP_CONN_H
#define DV_TP_CONN_H

#include "transport/framing.h"
#include "transport/tls.h"
#include "transport/transport.h"

/* A byte queue with no bound of its own: the connection enforces out_max itself. */
#define DV_TP_UNBOUNDED ((size_t)1 << 30)

struct dv_tp_shared {
	const dv_tp_config_t *cfg;
	const dv_tp_desc_t *d;
	dv_tls_ctx_t *tls; /* kinds with TLS of conn.c's (not own_tls) */
	const char *path;  /* DoH */
	size_t out_max;
	uint8_t alpn[16];               /* the descriptor's ALPN in wire form (length-prefixed) */
	uint64_t own_full, own_resumed; /* own_tls kinds: dv_tp_emit_handshake's counts */
	/* own_tls kinds: the worker's newest resumable session, in the kind's own form (DoQ:
	 * doq.c's); NULL when none. The kind replaces it (malloc'd); dv_tp_shared_free frees
	 * it. */
	uint8_t *session;
	size_t session_len;
};

struct dv_tp_conn {
	dv_tp_shared_t *s;
	const dv_tp_ops_t *ops; /* s->d->ops */
	dv_tp_event_fn fn;
	void *ctx;
	bool closed; /* CLOSED reported: no more submits */
	bool dead;   /* PROTO_ERROR reported */
	bool hs_reported;
	bool dgram;           /* SOCK_DGRAM: c->out holds datagrams, each as a frame */
	dv_frame_reader_t rd; /* the framed kinds (TCP, DoT): answers */
	dv_bq_t out;          /* bytes for the socket, or for TLS to encrypt when c->tls; bound
	                       * out_max unless the kind's attach sets another. SOCK_DGRAM:
	                       * the datagrams to send, each put with dv_frame_put */
	dv_tls_t *tls;        /* kinds with TLS (not with cfg->doh_cleartext) */
	void *proto;          /* the kind's own state (DoH: its HTTP/2 session), from attach */
	int cb_rc;            /* a negative event return seen inside a library callback */
	char what[128];       /* the sentence of the last error event */
};

/*
 * A kind's operations. Every one is set (the table's test checks it): "nothing to do" is a
 * function that says so. conn.c calls them; they call only the helpers below, never
 * another kind nor conn.c's dv_tp_* (no call loop). Plaintext means after TLS when the
 * connection has it.
 */
struct dv_tp_ops {
	/* Per worker, in dv_tp_shared_new after the facts are set: check cfg for this kind
	 * (0, or -EINVAL said in err). */
	int (*shared_init)(dv_tp_shared_t *s, dv_err_t *err);
	/* Per connection: set up c->proto (0 or -ENOMEM); detach frees it (also after a
	 * failed attach). */
	int (*attach)(dv_tp_conn_t *c);
	void (*detach)(dv_tp_conn_t *c);
	/* Queue one query (the connection is open, 1 <= len <= 65535): dv_tp_submit's
	 * returns. */
	int (*submit)(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id);
	/* Plaintext received (a dv_tls_plain_fn; ctx is the connection): events to fn. */
	int (*input)(void *ctx, const uint8_t *data, size_t len);
	/* Once TLS (if any) is up: move what the protocol has to send into c->out. */
	int (*pump)(dv_tp_conn_t *c);
	/* dv_tp_capacity past the bytes bound (SIZE_MAX: none), and why it is 0. */
	size_t (*capacity)(const dv_tp_conn_t *c);
	const char *(*full_why)(const dv_tp_conn_t *c);
	int (*cancel)(dv_tp_conn_t *c, uint64_t id);
	size_t (*in_flight)(const dv_tp_conn_t *c);
	/* Takes queries once TLS (if any) is done: true, or e.g. once SETTINGS came. */
	bool (*settled)(const dv_tp_conn_t *c);
	/* The peer closed: NULL when here is a clean place to end, else why not (a sentence). */
	const char *(*eof_cut)(const dv_tp_conn_t *c);
	/* Queue the protocol's clean close (DoH GOAWAY) before TLS close_notify. */
	void (*close)(dv_tp_conn_t *c);
	/* dv_tp_next_deadline / dv_tp_on_deadline (transport.h): with desc->timers; else
	 * dv_tp_no_deadline / dv_tp_no_expiry. */
	uint64_t (*next_deadline)(const dv_tp_conn_t *c);
	int (*on_deadline)(dv_tp_conn_t *c, uint64_t now_ns);
};

/* The rows (each defined in its kind's file; the table in kinds.c). */
#define DV_TP_ROW_EXTERN(k, row) extern const dv_tp_desc_t row;
DV_TP_KINDS(DV_TP_ROW_EXTERN)
#undef DV_TP_ROW_EXTERN
/* DNS over TCP's framing (RFC 7766) as operations: TCP's, and DoT's inside TLS. */
extern const dv_tp_ops_t dv_tp_framed_ops;

/* event.c: report ev; remembers a negative return in c->cb_rc. */
int dv_tp_emit(dv_tp_conn_t *c, const dv_tp_event_t *ev);
/* Report PROTO_ERROR once (what: a sentence) and mark the connection dead; -EPROTO
 * or the event function's negative value. */
int dv_tp_proto_error(dv_tp_conn_t *c, const char *what);
/* Report CLOSED once (nothing when closed or dead already); fn's value. */
int dv_tp_emit_closed(dv_tp_conn_t *c);
/* An own_tls kind's handshake is done: counted for dv_tp_shared_handshakes, then reported
 * (HANDSHAKE) once; fn's value. Its first caller is the tests' echo kind (tests); DoQ's next. */
int dv_tp_emit_handshake(dv_tp_conn_t *c, bool resumed);

/* Shared "nothing" operations for kinds without them: no per-worker check, no state of its
 * own, nothing to pump (submit queued it all), no limit of its own (SIZE_MAX) and so no
 * why, nothing to cancel or count in flight (the engine's window knows), no clean close
 * of its own, no timers. */
int dv_tp_no_shared_init(dv_tp_shared_t *s, dv_err_t *err);
int dv_tp_no_attach(dv_tp_conn_t *c);
void dv_tp_no_detach(dv_tp_conn_t *c);
int dv_tp_no_pump(dv_tp_conn_t *c);
size_t dv_tp_no_limit(const dv_tp_conn_t *c);
const char *dv_tp_no_why(const dv_tp_conn_t *c);
int dv_tp_no_cancel(dv_tp_conn_t *c, uint64_t id);
size_t dv_tp_no_in_flight(const dv_tp_conn_t *c);
void dv_tp_no_close(dv_tp_conn_t *c);
uint64_t dv_tp_no_deadline(const dv_tp_conn_t *c);
int dv_tp_no_expiry(dv_tp_conn_t *c, uint64_t now_ns);

#endif
