/* transport: one interface for DNS over TCP, TLS (DoT) and HTTPS (DoH) connections, sans I/O;
 * the table of kinds. */
#ifndef DV_TRANSPORT_H
#define DV_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "base/util.h"

/*
 * The engine owns sockets, timers and the window; a dv_tp_conn_t only frames and
 * unframes (doc/transports.md). Per connection the engine:
 *   1. after connect(): writes dv_tp_output() until empty (a TLS ClientHello);
 *   2. dv_tp_submit() each query it sends (an id of its own choosing);
 *   3. writes what dv_tp_output() gives with writev/send, then dv_tp_consume(n);
 *   4. feeds every read to dv_tp_input() (and dv_tp_eof() on a read of 0), which
 *      calls the event function for each answer and connection event;
 * and after each of 2 and 4 checks dv_tp_output() again. Single-threaded: one
 * dv_tp_shared_t per worker, shared by that worker's connections.
 */

/*
 * The kinds in the program, in table order: each its value and the row its own file defines
 * (tcp.c, dot.c, doh.c). A new kind is one line here and its file (doc/transports.md); the
 * enum below and kinds.c's table are made from this list.
 */
#define DV_TP_KINDS(X)                                                                             \
	X(DV_TP_TCP, dv_tp_tcp_desc)                                                               \
	X(DV_TP_DOT, dv_tp_dot_desc)                                                               \
	X(DV_TP_DOH, dv_tp_doh_desc)                                                               \
	X(DV_TP_DOQ, dv_tp_doq_desc)

#define DV_TP_KIND_ENUM(k, row) k,
typedef enum dv_tp_kind { DV_TP_KINDS(DV_TP_KIND_ENUM) DV_TP_NKINDS } dv_tp_kind_t;
#undef DV_TP_KIND_ENUM

/* A kind's protocol operations (transport/conn.h): what the engine reaches through dv_tp_*. */
typedef struct dv_tp_ops dv_tp_ops_t;

/* One kind's facts and operations. Every caller that would switch on a kind reads this. */
typedef struct dv_tp_desc {
	dv_tp_kind_t kind;
	const char *name;       /* -m value and results' "transport": "tcp" */
	const char *alias;      /* also read (results files, -m of old versions): "tls"; or NULL */
	const char *long_name;  /* in sentences: "DNS over TLS" */
	uint16_t default_port;  /* without -p */
	bool tls;               /* --tls-* apply; handshakes are counted and gated */
	const char *alpn;       /* the TLS ALPN protocol offered and required ("h2"), or NULL */
	const char *alpn_label; /* what a server refusing it did not agree to: "HTTP/2" */
	const char *setup_what; /* what follows connect before queries go, for a timeout's
	                         * sentence ("TLS handshake"); NULL when nothing does */
	int sock_type;          /* what the engine opens and connects: SOCK_STREAM, or SOCK_DGRAM
	                         * (QUIC): then each dv_tp_input is one datagram and each iovec
	                         * of dv_tp_output one datagram to send (dv_tp_consume_dgrams) */
	bool own_tls;           /* with tls: the kind does TLS itself (QUIC, inside its library):
	                         * conn.c adds no TLS layer nor context; the kind reports its
	                         * handshake (conn.h's dv_tp_emit_handshake) and checks its ALPN */
	bool timers;            /* the kind has timers of its own (dv_tp_next_deadline): the
	                         * engine arms one per connection; false: the operations are
	                         * dv_tp_no_deadline / dv_tp_no_expiry and no timer exists */
	bool answer_ids;        /* ANSWER events carry the query's id (the transport matched
	                         * it to its query, as DoH's streams do); else id is 0 and the
	                         * engine matches by DNS ID and question, as for UDP */
	const dv_tp_ops_t *ops;
} dv_tp_desc_t;

/* The row of kind k (k below DV_TP_NKINDS). */
const dv_tp_desc_t *dv_tp_desc(dv_tp_kind_t k);
/* The row named name exactly (case and all, aliases not): the command line's way. NULL
 * when no kind has that name. */
const dv_tp_desc_t *dv_tp_desc_find(const char *name);
/* The names in table order as a phrase, after first when not NULL: with first "udp",
 * "udp, tcp, dot, doh or doq"; only the kinds with TLS when tls_only ("dot, doh or doq"); each
 * (e.g. "-m ") before every name but the first ("dot or -m doh"). Returns a static buffer,
 * valid until the next call. */
const char *dv_tp_kind_list(const char *first, bool tls_only, const char *each);

typedef struct dv_tp_config {
	dv_tp_kind_t kind;
	const char *sni;      /* DoT/DoH: TLS server name (NULL = none); DoH :authority too */
	const char *ca_file;  /* DoT/DoH: verify the server against it; NULL = verification off */
	bool no_resume;       /* DoT/DoH: full handshake every time */
	bool doh_get;         /* DoH: GET with ?dns=<base64url> instead of POST */
	const char *doh_path; /* DoH: path, starts with '/'; NULL = "/dns-query" */
	bool doh_cleartext;   /* DoH without TLS (HTTP/2 with prior knowledge): the fuzz
	                       * target's way past the handshake; no option sets it */
	size_t out_max;       /* bytes of queries queued ahead of the socket; 0 = 256 KiB */
	int tls_min, tls_max; /* TLS1_2_VERSION / TLS1_3_VERSION; 0 = 1.2 .. 1.3 */
	const dv_tp_desc_t *desc; /* a kind that is not in the table (a test's own kind, which
	                           * is then the file it would be); NULL: kind's row */
} dv_tp_config_t;

/* The row cfg uses: cfg->desc, else kind's. */
const dv_tp_desc_t *dv_tp_config_desc(const dv_tp_config_t *cfg);

/* Largest datagram a SOCK_DGRAM kind is given whole: the engine ends a connection whose
 * peer sends a longer one (a protocol error). A QUIC kind announces it as its
 * max_udp_payload_size. */
#define DV_TP_DGRAM_MAX 4096u

/* Defaults: TCP, no TLS options, POST to /dns-query. */
void dv_tp_config_init(dv_tp_config_t *cfg);
/* A kind's name or alias, any case ("tcp", "DoT", "https"). 0 or -EINVAL. */
int dv_tp_kind_parse(const char *s, dv_tp_kind_t *out);
/* dv_tp_desc(k)->name. */
const char *dv_tp_kind_name(dv_tp_kind_t k);

/* Per worker: the TLS context, the resumption ticket, the handshake counters. */
typedef struct dv_tp_shared dv_tp_shared_t;
/* cfg (and its strings) must outlive the shared state and its connections.
 * 0, or -EINVAL (an unreadable CA file, a bad path: said in err), -ENOMEM. */
int dv_tp_shared_new(dv_tp_shared_t **out, const dv_tp_config_t *cfg, dv_err_t *err);
void dv_tp_shared_free(dv_tp_shared_t *s);
/* TLS handshakes completed by this worker's connections (0 for TCP) (tests). */
void dv_tp_shared_handshakes(const dv_tp_shared_t *s, uint64_t *full, uint64_t *resumed);

typedef enum dv_tp_event_kind {
	DV_TP_EV_ANSWER,       /* msg/len: one DNS message; id: DoH stream's query id, TCP/DoT 0
	                        * (match by DNS ID and question, as for UDP) */
	DV_TP_EV_HTTP_STATUS,  /* DoH: query id got HTTP status (non-200): not an answer */
	DV_TP_EV_STREAM_ERROR, /* DoH: query id's stream was reset or refused (e.g. past
	                        * GOAWAY's last stream), or its response was not DNS */
	DV_TP_EV_HANDSHAKE,    /* TLS handshake done; resumed says how */
	DV_TP_EV_SETTINGS,     /* DoH: the server's first SETTINGS came (its stream limit) */
	DV_TP_EV_CLOSED,       /* the peer closed (EOF, close_notify, DoH GOAWAY): no more
	                        * submits; queries not answered by now are lost */
	DV_TP_EV_PROTO_ERROR,  /* bad framing, TLS or HTTP/2 error; what says it; the
	                        * connection is dead, its unanswered queries lost */
} dv_tp_event_kind_t;

typedef struct dv_tp_event {
	dv_tp_event_kind_t kind;
	uint64_t id;
	const uint8_t *msg; /* ANSWER: valid only during the call */
	size_t len;
	int status;       /* HTTP_STATUS: the status; CLOSED by GOAWAY: its error code */
	bool resumed;     /* HANDSHAKE */
	bool goaway;      /* CLOSED: by DoH GOAWAY (in-flight ids may still be answered
	                   * or come back as STREAM_ERROR) */
	const char *what; /* PROTO_ERROR, STREAM_ERROR: a sentence */
} dv_tp_event_t;

/* Called from dv_tp_input / dv_tp_eof. A negative return stops the input and is
 * returned by it. The callee must not free the connection. */
typedef int (*dv_tp_event_fn)(void *ctx, const dv_tp_event_t *ev);

typedef struct dv_tp_conn dv_tp_conn_t;

int dv_tp_conn_new(dv_tp_conn_t **out, dv_tp_shared_t *s, dv_tp_event_fn fn, void *ctx);
void dv_tp_conn_free(dv_tp_conn_t *c);

/*
 * Queue one DNS query (len 1..65535). id is returned in DoH events for it. 0, or
 *   -EAGAIN   no room now: DoH streams at the server's SETTINGS_MAX_CONCURRENT_STREAMS,
 *             or out_max bytes already queued (retry after output/input);
 *   -EMSGSIZE len 0 or over 65535;
 *   -EPIPE    the connection is closed or dead.
 */
int dv_tp_submit(dv_tp_conn_t *c, const uint8_t *msg, size_t len, uint64_t id);
/* How many more queries dv_tp_submit would take now (DoH: free streams; TCP/DoT:
 * SIZE_MAX; both 0 while out_max bytes wait for the socket). */
size_t dv_tp_capacity(const dv_tp_conn_t *c);
/* Why dv_tp_capacity is 0, a phrase (NULL when it is not): the server's stream limit,
 * bytes it does not read, a closed connection. */
const char *dv_tp_full_why(const dv_tp_conn_t *c);
/*
 * The engine gave up on query id (its -t passed): DoH resets its stream (RST_STREAM
 * CANCEL), reports nothing more for it, and frees the stream, its record and its place
 * under the server's stream limit once the reset is written (dv_tp_output). Returns 1
 * when there is a reset to write, else 0 (TCP/DoT: nothing to do; an unknown id).
 */
int dv_tp_cancel(dv_tp_conn_t *c, uint64_t id);
/* DoH: the queries submitted and not yet reported (0 for TCP/DoT: the engine's own
 * window knows). */
size_t dv_tp_in_flight(const dv_tp_conn_t *c);

/* Bytes read from the socket. Events go to fn. 0 or fn's negative value; after a
 * PROTO_ERROR it returns -EPROTO. */
int dv_tp_input(dv_tp_conn_t *c, const uint8_t *data, size_t len);
/* The socket read 0 bytes (the peer closed): a CLOSED event (or PROTO_ERROR when a
 * TLS stream ends without close_notify mid-record or a TCP frame is cut). */
int dv_tp_eof(dv_tp_conn_t *c);

/* Bytes to write, as up to max iovecs; returns how many were filled (0 = nothing). A
 * SOCK_DGRAM kind: each iovec is one datagram, in order (sendmmsg them). */
int dv_tp_output(dv_tp_conn_t *c, struct iovec *iov, int max);
size_t dv_tp_output_len(dv_tp_conn_t *c); /* bytes waiting to be written (tests) */
/* n bytes of dv_tp_output were written (SOCK_STREAM). */
void dv_tp_consume(dv_tp_conn_t *c, size_t n);
/* The first n datagrams of dv_tp_output were sent (SOCK_DGRAM). */
void dv_tp_consume_dgrams(dv_tp_conn_t *c, size_t n);

/* Ask for a clean close (TLS close_notify, DoH GOAWAY): write dv_tp_output, then close. */
void dv_tp_close(dv_tp_conn_t *c);

/*
 * Takes queries: TLS handshake done (TCP: true at once) and, for DoH, the server's first
 * SETTINGS frame read, so no query is sent past a stream limit below nghttp2's assumed
 * 100 (the server would refuse it).
 */
bool dv_tp_ready(const dv_tp_conn_t *c);

/*
 * Timers (Knot's knot_quic_conn_next_timeout / knot_quic_handle_expiry): the monotonic time
 * in ns (dv_now_ns's clock) at which the connection wants dv_tp_on_deadline, UINT64_MAX for
 * none. Only a kind with desc->timers has any (TCP, DoT and DoH have none: the engine's -t
 * covers them). The engine keeps one timer per connection of such a kind, re-armed at this
 * time after every input, output and expiry; dv_tp_on_deadline(c, now) then does what fell
 * due (a QUIC retransmission, an ACK, an idle close; its events go to fn) and returns 0 or
 * fn's negative value; the engine checks dv_tp_output after it.
 */
uint64_t dv_tp_next_deadline(const dv_tp_conn_t *c);
int dv_tp_on_deadline(dv_tp_conn_t *c, uint64_t now_ns);

#endif
