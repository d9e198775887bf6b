/* stream: the responder's DNS over TCP, DNS over TLS and DNS over HTTPS listeners, with
 * deterministic faults (TCP and TLS) and counts. */
#ifndef DV_STREAM_H
#define DV_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/util.h"
#include "responder/https.h"

/* Connections one stream thread holds at once; more are accepted and closed at once
 * (counted as refused). */
#define DV_STREAM_CONNS_MAX 65536
/* Largest --stream-reverse group. */
#define DV_STREAM_REVERSE_MAX 1024
/* A connection whose unsent output reaches this many bytes is not read (nor its read
 * bytes answered) until the client has taken it below: a client that sends and never
 * reads holds at most this (plus one answer) of the responder's memory. */
#define DV_STREAM_OUT_MAX (64u * 1024)
/* Bytes read from one connection per turn of the event loop, in 16 KiB units, so that a
 * client that sends without pause cannot keep the thread from the others. */
#define DV_STREAM_READS_PER_TURN 4
/* Out of descriptors, a listener is not watched until a connection closes or this many
 * milliseconds pass (a level-triggered listener with a client waiting would wake the
 * thread at once, forever). */
#define DV_STREAM_ACCEPT_PAUSE_MS 100

/*
 * Faults, applied to the connections picked by conn_every (the 1st, 2nd... connection
 * of a listener counts 1, 2...: conn_every M picks M, 2M, 3M...; 1 = all). "After N"
 * counts the queries read on that connection; the action happens once the answers
 * to the first N are written. 0 = off for each.
 */
typedef struct dv_stream_faults {
	uint64_t conn_every;
	uint64_t close_after;      /* then close (TLS: close_notify first) */
	uint64_t reset_after;      /* then reset (RST: SO_LINGER 0) */
	uint64_t half_close_after; /* then shutdown(SHUT_WR), keep reading, answer nothing */
	uint64_t stall_after;      /* then never read from it again (it stays open) */
	uint64_t drop_every;       /* queries N, 2N... of the connection get no answer */
	uint64_t reverse;          /* answers in groups of N, each group last-first */
	/* no connection of a listener is read until it has accepted this many (all of them,
	 * whatever conn_every): a client's connections must all be open before any answer */
	uint64_t read_after_conns;
} dv_stream_faults_t;

/* The listeners, for dv_stream_port(). */
enum { DV_STREAM_TCP = 0, DV_STREAM_TLS = 1, DV_STREAM_HTTPS = 2 };

typedef struct dv_stream_config {
	bool tcp, tls, https; /* which listeners (https: DoH, HTTP/2 over TLS, ALPN h2) */
	struct sockaddr_storage tcp_addr, tls_addr, https_addr; /* address and port (0 = any) */
	socklen_t addr_len;
	const char *cert_file, *key_file; /* TLS and HTTPS: PEM */
	const char *doh_path;             /* HTTPS: the path served (NULL = "/dns-query") */
	uint32_t https_max_streams; /* HTTPS: SETTINGS_MAX_CONCURRENT_STREAMS (0: the default) */
	uint64_t https_conn_budget; /* HTTPS: request bytes per connection (0: the default) */
	uint64_t https_budget;      /* HTTPS: request bytes of all connections (0: the default) */
	bool https_record_each;     /* HTTPS: each response in a TLS record of its own (a turn's
	                             * records still in one write), not all of a turn's output
	                             * in as few records as fit (dnsperf takes one response
	                             * per read) */
	dv_stream_faults_t faults;
	int rcode; /* as dv_answer_opts_t */
	bool reflect;
} dv_stream_config_t;

/* Per listener, printed at exit with a "tcp-", "tls-" or "https-" prefix
 * (doc/dnsvolley-responder.1). The faults apply to TCP and TLS only. HTTPS: received =
 * whole requests, answered = 200 answers handed to the TLS library, malformed = 400s. */
typedef struct dv_stream_counts {
	uint64_t connections;      /* accepted */
	uint64_t source_addresses; /* distinct client addresses among them */
	uint64_t refused;          /* accepted past DV_STREAM_CONNS_MAX and closed at once */
	uint64_t deferred;         /* accepts that failed for want of a descriptor or memory
	                            * (EMFILE, ENFILE, ENOBUFS, ENOMEM): each pauses the
	                            * listener (DV_STREAM_ACCEPT_PAUSE_MS); the client waits
	                            * in the listen queue */
	uint64_t throttled;        /* times a connection's reading stopped because its unsent
	                            * output reached DV_STREAM_OUT_MAX */
	uint64_t received;         /* framed queries read */
	uint64_t answered;         /* answers written whole to the socket (TLS: to the library) */
	uint64_t dropped;          /* not answered on purpose (drop_every) */
	uint64_t unanswered;       /* read, not dropped, and no answer written when the
	                            * connection ended (reset, close, half-close, stop, peer gone):
	                            * the queries in flight on it as far as the server knows */
	uint64_t closed;           /* connections closed by close_after */
	uint64_t resets;           /* connections reset by reset_after */
	uint64_t half_closed;      /* connections half-closed by half_close_after */
	uint64_t stalled;          /* connections stalled by stall_after */
	uint64_t malformed;        /* queries under 12 bytes or a zero length prefix (the
	                            * connection is closed) */
	uint64_t tls_failed;       /* TLS handshakes that failed */
	uint64_t tls_resumed;      /* TLS handshakes that resumed a session */
	dv_https_counts_t http;    /* HTTPS: by status (received, answered, malformed = 400s
	                            * are copied from it) */
	uint64_t h2_errors;        /* HTTPS connections ended by an HTTP/2 protocol error */
} dv_stream_counts_t;

typedef struct dv_stream dv_stream_t;

/* Bind and listen. 0, or a negative errno with err filled. */
int dv_stream_open(dv_stream_t **out, const dv_stream_config_t *cfg, dv_err_t *err);
/* The bound port of listener which (DV_STREAM_TCP, _TLS, _HTTPS), 0 if it is off. */
uint16_t dv_stream_port(const dv_stream_t *s, int which);
/* One thread serves every listener. */
int dv_stream_start(dv_stream_t *s, dv_err_t *err);
/* Async-signal-safe. */
void dv_stream_stop(dv_stream_t *s);
/* Wait for the thread; the counts of each listener. */
void dv_stream_join(dv_stream_t *s, dv_stream_counts_t *tcp, dv_stream_counts_t *tls,
                    dv_stream_counts_t *https);
/* Accepts NULL; stops and joins a running thread. */
void dv_stream_free(dv_stream_t *s);

#endif
