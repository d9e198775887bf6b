/* conn: the inside of a dv_tp_conn_t, shared by conn.c (TCP, DoT) and doh.c. */
#ifndef DV_TP_CONN_H
#define DV_TP_CONN_H

#include "transport/framing.h"
#include "transport/tls.h"
#include "transport/transport.h"

struct dv_tp_shared {
	const dv_tp_config_t *cfg;
	dv_tls_ctx_t *tls; /* DoT/DoH */
	const char *path;  /* DoH */
	size_t out_max;
};

typedef struct dv_doh dv_doh_t;

struct dv_tp_conn {
	dv_tp_shared_t *s;
	dv_tp_event_fn fn;
	void *ctx;
	bool closed; /* CLOSED reported: no more submits */
	bool dead;   /* PROTO_ERROR reported */
	bool hs_reported;
	dv_frame_reader_t rd; /* TCP/DoT: answers */
	dv_bq_t out;          /* TCP: framed queries to write; DoT: plaintext to encrypt */
	dv_tls_t *tls;        /* DoT/DoH */
	dv_doh_t *doh;        /* DoH */
	int cb_rc;            /* a negative event return seen inside a library callback */
	char what[128];       /* the sentence of the last error event */
};

/* Report ev; remembers a negative return in c->cb_rc. */
int dv_tp_emit(dv_tp_conn_t *c, const dv_tp_event_t *ev);
/* Report PROTO_ERROR once (what: a sentence) and mark the connection dead; -EPROTO
 * or the event function's negative value. */
int dv_tp_proto_error(dv_tp_conn_t *c, const char *what);

/* doh.c */
int dv_doh_new(dv_tp_conn_t *c);
void dv_doh_free(dv_doh_t *d);
int dv_doh_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id);
int dv_doh_plain(void *conn, const uint8_t *data, size_t len); /* a dv_tls_plain_fn */
int dv_doh_pump(dv_tp_conn_t *c); /* HTTP/2 frames into the TLS machine */
size_t dv_doh_capacity(const dv_tp_conn_t *c);
size_t dv_doh_in_flight(const dv_tp_conn_t *c);
const char *dv_doh_full_why(const dv_tp_conn_t *c); /* capacity 0: why */
int dv_doh_cancel(dv_tp_conn_t *c, uint64_t id);    /* 1: RST_STREAM queued */
bool dv_doh_settled(const dv_tp_conn_t *c);         /* the server's first SETTINGS came */
void dv_doh_close(dv_tp_conn_t *c);

#endif
