/* responder: the bundled loopback DNS responder: sockets, threads, fault injection, counts. */
#ifndef DV_RESPONDER_H
#define DV_RESPONDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/util.h"
#include "responder/quic.h"
#include "responder/stream.h"

/* Answers a thread may hold for --delay before dropping (and counting) more. */
#define DV_RESPONDER_HOLD_MAX    (1u << 20)
#define DV_RESPONDER_THREADS_MAX 256

typedef struct dv_responder_config {
	struct sockaddr_storage addr; /* address and port to bind (port 0 = any free port) */
	socklen_t addr_len;
	unsigned threads; /* worker threads, one SO_REUSEPORT socket each */
	/* "every N" options: 0 = off; counted per thread on the received queries 1, 2, 3...
	 * (tc_every on the answers built). When several hit the same query, the first in
	 * this order wins: drop, garbage, wrong_id, wrong_question; duplicate applies to
	 * correct answers only. */
	uint64_t drop_every;
	uint64_t garbage_every;
	uint64_t wrong_id_every;
	uint64_t wrong_question_every;
	uint64_t duplicate_every;
	uint64_t tc_every;
	uint64_t delay_ns; /* hold every outgoing datagram this long, 0 = none */
	uint32_t hold_max; /* per thread; DV_RESPONDER_HOLD_MAX by default */
	/* --capacity: serve at most this many queries per second in all (each thread
	 * capacity_qps / threads), one at a time in arrival order with a fixed service
	 * time; a query that finds more than capacity_backlog (per thread) waiting is
	 * dropped; the wait shows as latency. 0 = off. UDP only (not the stream listeners). */
	double capacity_qps;
	uint32_t capacity_backlog;
	int rcode;    /* -1 = natural, else 0..15 */
	bool reflect; /* echo queries with QR set */
	bool no_gso;  /* one datagram per send, never UDP GSO (for comparisons) */
	/* TCP, TLS and HTTPS listeners (stream.h), off unless stream.tcp / .tls / .https;
	 * their rcode and reflect are taken from the fields above. */
	dv_stream_config_t stream;
	/* The DNS over QUIC listener (quic.h), off unless doq; rcode, reflect, the certificate
	 * and the stream faults are taken from the fields above. */
	bool doq;
	dv_quic_config_t quic;
} dv_responder_config_t;

/* Defaults: 127.0.0.1:53, one thread, no faults. */
void dv_responder_config_init(dv_responder_config_t *cfg);

/* The counts printed at exit, summed over threads (see doc/dnsvolley-responder.1). */
typedef struct dv_responder_counts {
	uint64_t received; /* query datagrams received */
	uint64_t answered; /* correct answers the kernel accepted (a duplicate counts once) */
	uint64_t dropped;  /* not answered on purpose: --drop-every, hold overflow, held at stop */
	uint64_t faulty;   /* garbage / wrong-id / wrong-question datagrams sent instead */
	uint64_t duplicates;   /* extra copies sent by --duplicate-every */
	uint64_t malformed;    /* datagrams that got no response at all (< 12 bytes, truncated) */
	uint64_t send_errors;  /* datagrams the kernel refused */
	uint64_t source_ports; /* distinct source ports seen */
	/* --capacity: queries timed from their read, not their arrival: the kernel had not
	 * stamped them (it switches its stamps on late, base/netstamp.h) */
	uint64_t unstamped;
	dv_stream_counts_t tcp, tls, https; /* the stream listeners (zero when off) */
	dv_quic_counts_t doq;               /* the DoQ listener (zero when off) */
} dv_responder_counts_t;

typedef struct dv_responder dv_responder_t;

/*
 * The UDP rules, one query at a time: shared by the worker threads' sockets and by the
 * XDP sockets of --xdp (responder/xsk.h). seq holds a thread's sequences (queries
 * received: what the "every N" options count; correct answers built: --tc-every's).
 */
typedef struct dv_responder_seq {
	uint64_t nq, na;
} dv_responder_seq_t;

/* What a datagram sent is, for the counts (dv_responder_count_sent). */
enum { DV_RESPONDER_ANSWER = 0, DV_RESPONDER_DUPLICATE, DV_RESPONDER_FAULT };

/*
 * Query q (qlen octets; truncated: it did not fit the receive buffer) under cfg's
 * faults, rcode, TC and reflect: counted as received in c, and as malformed or dropped
 * when nothing is to be sent. Otherwise the datagram to send is written to a (cap
 * octets, 100 at least), with its kind (DV_RESPONDER_ANSWER or _FAULT) and copies (2:
 * --duplicate-every, the second one a DV_RESPONDER_DUPLICATE). Returns its length, or
 * 0: nothing to send. --delay and --capacity are the caller's (dv_responder_admit).
 */
int dv_responder_answer(const dv_responder_config_t *cfg, dv_responder_seq_t *seq, const uint8_t *q,
                        size_t qlen, bool truncated, uint8_t *a, size_t cap,
                        dv_responder_counts_t *c, uint8_t *kind, uint8_t *copies);

/*
 * When an answer built for a query arriving at now_ns (monotonic) leaves: --capacity, a
 * single server of fixed service time 1 / (capacity_qps / threads) per thread, first come
 * first served: the query starts service when the thread's queue empties (*busy_until_ns,
 * the thread's own, or now if idle) and its answer is due when service ends, plus
 * --delay. A query that finds more than capacity_backlog queries' worth of work waiting
 * is dropped, as a full socket buffer would (counted in c as dropped; false). Without
 * --capacity: due at now_ns + --delay. Arrival order is due order, so a thread's held
 * answers stay sorted. Shared by the socket threads and the XDP sockets' (xsk.h).
 */
bool dv_responder_admit(const dv_responder_config_t *cfg, unsigned threads, double *busy_until_ns,
                        uint64_t now_ns, uint64_t *due_ns, dv_responder_counts_t *c);

/* A datagram of kind handed to the network (ok) or refused, in c: answered,
 * duplicates, faulty or send_errors. */
void dv_responder_count_sent(dv_responder_counts_t *c, uint8_t kind, bool ok);

/* Bind the sockets (all of them on the same port). No thread runs yet. */
int dv_responder_open(dv_responder_t **out, const dv_responder_config_t *cfg, dv_err_t *err);

uint16_t dv_responder_port(const dv_responder_t *r);

/* The bound port of stream listener which (DV_STREAM_TCP, _TLS, _HTTPS), 0 if it is off. */
uint16_t dv_responder_stream_port(const dv_responder_t *r, int which);

/* The bound port of the DoQ listener, 0 if it is off. */
uint16_t dv_responder_doq_port(const dv_responder_t *r);

/* Start the worker threads. Call with SIGINT/SIGTERM blocked: the threads inherit it. */
int dv_responder_start(dv_responder_t *r, dv_err_t *err);

/* Ask every thread to stop (async-signal-safe: a flag and a write to a pipe). */
void dv_responder_stop(dv_responder_t *r);

/* A descriptor that turns readable (for good) once dv_responder_stop() ran: a thread that
 * failed runs it. For a poll() that sleeps until then. */
int dv_responder_stop_fd(const dv_responder_t *r);

/* True once a thread has ended on its own (a fatal socket error). */
bool dv_responder_failed(const dv_responder_t *r);

/* Wait for every thread and sum their counts. Returns 0, or the first thread's error. */
int dv_responder_join(dv_responder_t *r, dv_responder_counts_t *counts, dv_err_t *err);

/* Close and free; accepts NULL. Stops and joins threads still running. */
void dv_responder_free(dv_responder_t *r);

#endif
