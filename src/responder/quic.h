/* quic: the responder's DNS over QUIC listener (RFC 9250; ngtcp2 0.12 with GnuTLS): one
 * thread, one UDP socket, the stream listeners' faults where they mean something for QUIC,
 * exact counts; and the hostile behaviours of tests/helpers/hostile-doq. */
#ifndef DV_QUIC_H
#define DV_QUIC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/util.h"
#include "responder/stream.h"

/* Connections one listener holds at once; Initials past it are dropped (counted refused). */
#define DV_QUIC_CONNS_MAX 4096

/* What a hostile peer does instead of serving (tests/helpers/hostile-doq.c). */
typedef enum dv_quic_hostile {
	DV_QUIC_SERVE = 0,       /* a DoQ server */
	DV_QUIC_SILENT,          /* reads every datagram, sends nothing */
	DV_QUIC_STREAM_RESET,    /* every query's stream: RESET_STREAM + STOP_SENDING,
	                          * DOQ_INTERNAL_ERROR */
	DV_QUIC_CLOSE,           /* the first query of a connection: CONNECTION_CLOSE with
	                          * DOQ_PROTOCOL_ERROR */
	DV_QUIC_VERSION_NEG,     /* every Initial: a Version Negotiation offering no version 1 */
	DV_QUIC_STATELESS_RESET, /* the first query of a connection: a stateless reset, and
	                          * the connection forgotten */
} dv_quic_hostile_t;

typedef struct dv_quic_config {
	struct sockaddr_storage addr; /* address and port (0 = any) */
	socklen_t addr_len;
	const char *cert_file, *key_file; /* PEM */
	uint32_t max_streams;             /* bidirectional streams per connection (0: 100) */
	/* Of the stream faults (stream.h): conn_every, close_after (CONNECTION_CLOSE with
	 * DOQ_NO_ERROR), reset_after (CONNECTION_CLOSE with DOQ_INTERNAL_ERROR, QUIC's
	 * abortive close), stall_after (the connection's datagrams are never read again),
	 * drop_every (the query's stream gets no answer). The others do not apply. */
	dv_stream_faults_t faults;
	dv_quic_hostile_t hostile;
	int rcode;
	bool reflect;
	/* --doq-0rtt: tickets allow early data; accept it from a resuming client, or (reject)
	 * refuse every one as a replay (the client sends its queries again in 1-RTT). */
	bool early_data, early_reject;
} dv_quic_config_t;

/* Printed at exit with a "doq-" prefix (doc/dnsvolley-responder.1). */
typedef struct dv_quic_counts {
	uint64_t datagrams;      /* received */
	uint64_t connections;    /* accepted (an Initial made a connection) */
	uint64_t refused;        /* Initials past DV_QUIC_CONNS_MAX */
	uint64_t handshakes;     /* completed */
	uint64_t resumed;        /* of them, resuming a session ticket of the listener's */
	uint64_t early;          /* of them, with the client's 0-RTT data accepted */
	uint64_t zero_rtt_conns; /* connections a datagram starting with a 0-RTT packet came on
	                          * (read or not: a refused one is dropped) */
	uint64_t early_queries;  /* answered queries that came (in part) in 0-RTT data */
	uint64_t handshake_failed;
	uint64_t received;         /* whole queries read (one per stream) */
	uint64_t answered;         /* answers handed to ngtcp2 whole */
	uint64_t dropped;          /* drop_every */
	uint64_t unanswered;       /* read, not dropped, not answered when the connection ended */
	uint64_t cancelled;        /* streams the client reset or stopped (DOQ_REQUEST_CANCELLED) */
	uint64_t closed;           /* close_after */
	uint64_t resets;           /* reset_after */
	uint64_t stalled;          /* stall_after */
	uint64_t malformed;        /* under 12 bytes, or more than one message on a stream */
	uint64_t stream_resets;    /* hostile: streams reset */
	uint64_t conn_closes;      /* hostile: CONNECTION_CLOSE with an error */
	uint64_t version_negs;     /* hostile: Version Negotiation packets sent */
	uint64_t stateless_resets; /* hostile: stateless resets sent */
} dv_quic_counts_t;

typedef struct dv_quic dv_quic_t;

/* Bind, read the certificate. 0, or a negative errno with err filled. */
int dv_quic_open(dv_quic_t **out, const dv_quic_config_t *cfg, dv_err_t *err);
uint16_t dv_quic_port(const dv_quic_t *s);
int dv_quic_start(dv_quic_t *s, dv_err_t *err);
/* Async-signal-safe: a flag and a write to an eventfd that wakes the thread. */
void dv_quic_stop(dv_quic_t *s);
/* Wait for the thread (stopped first); the counts. */
void dv_quic_join(dv_quic_t *s, dv_quic_counts_t *counts);
/* Accepts NULL; stops and joins a running thread. */
void dv_quic_free(dv_quic_t *s);

#endif
