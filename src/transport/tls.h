/* tls: a TLS endpoint (OpenSSL) as a byte machine over a BIO of its own: ciphertext in/out,
 * plaintext in/out. */
#ifndef DV_TLS_H
#define DV_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "transport/framing.h"

/*
 * dv_tls_ctx_t is shared by every connection of one worker thread (not thread-safe):
 * the OpenSSL SSL_CTX, the last session ticket the server gave (client side: the
 * next connection resumes with it) and the handshake counters. dv_tls_t is one
 * connection; it never touches a socket: the caller feeds it the bytes read from
 * the socket and writes out the bytes it queues.
 */
typedef struct dv_tls_ctx dv_tls_ctx_t;
typedef struct dv_tls dv_tls_t;

typedef struct dv_tls_ctx_config {
	bool server;
	const char *cert_file; /* server: PEM certificate (chain) */
	const char *key_file;  /* server: PEM private key */
	const char *ca_file;   /* client: verify the server against these CAs; NULL = no check */
	bool no_resume;        /* client: never offer a saved session */
	/* ALPN in wire format ("\x02h2"); client offers it, server insists on it. NULL = none. */
	const char *alpn;
	size_t alpn_len;
	int min_version, max_version; /* TLS1_2_VERSION / TLS1_3_VERSION; 0 = 1.2 .. 1.3 */
	/* Keep each connection's record buffers (about 34 KB) and read records ahead: no
	 * allocation per record, for connections carrying many small records (DoH). */
	bool keep_buffers;
} dv_tls_ctx_config_t;

/* 0, or -EINVAL (bad files, named in err), -ENOMEM. */
int dv_tls_ctx_new(dv_tls_ctx_t **out, const dv_tls_ctx_config_t *cfg, dv_err_t *err);
void dv_tls_ctx_free(dv_tls_ctx_t *c);
/* Handshakes completed on connections of this context: full and resumed. */
void dv_tls_ctx_counts(const dv_tls_ctx_t *c, uint64_t *full, uint64_t *resumed);

/*
 * A connection. sni: server name to send (client; NULL or an IP literal = none; with
 * a CA file it is also the name checked in the certificate). out_max bounds the
 * plaintext a caller may queue ahead of the socket (dv_tls_write, -ENOBUFS past it).
 * A client queues its ClientHello at once: write dv_tls_out() to the socket.
 */
int dv_tls_new(dv_tls_t **out, dv_tls_ctx_t *c, const char *sni, size_t out_max);
void dv_tls_free(dv_tls_t *t);

/* Plaintext received, in order; msg valid only during the call. A negative return
 * stops dv_tls_feed, which returns it. */
typedef int (*dv_tls_plain_fn)(void *ctx, const uint8_t *data, size_t len);

/*
 * Ciphertext read from the socket. Advances the handshake (queueing its answers in
 * dv_tls_out), hands the plaintext to fn. Returns 0; -EPROTO on a TLS error (the
 * connection is dead; dv_tls_error() says why); or fn's negative value.
 */
int dv_tls_feed(dv_tls_t *t, const uint8_t *data, size_t len, dv_tls_plain_fn fn, void *ctx);

/* Plaintext to send: encrypted at once into dv_tls_out, or held until the handshake
 * is done. 0, -ENOBUFS (more than out_max waiting), -EPROTO, -ENOMEM. */
int dv_tls_write(dv_tls_t *t, const uint8_t *data, size_t len);
/* Bytes of plaintext that dv_tls_write would still accept. */
size_t dv_tls_room(const dv_tls_t *t);

/* Ciphertext waiting for the socket: write some, then dv_bq_consume() what went. */
dv_bq_t *dv_tls_out(dv_tls_t *t);

/* Queue a close_notify (the caller then writes dv_tls_out and closes). */
void dv_tls_close(dv_tls_t *t);

bool dv_tls_handshake_done(const dv_tls_t *t);
bool dv_tls_resumed(const dv_tls_t *t);
/* The peer sent close_notify. */
bool dv_tls_peer_closed(const dv_tls_t *t);
/* "TLSv1.3" etc. once the handshake is done (tests). */
const char *dv_tls_version(const dv_tls_t *t);
/* Whether the ALPN protocol chosen is proto. */
bool dv_tls_alpn_is(const dv_tls_t *t, const char *proto);
/* Server side: the name the client sent by SNI (NULL if none) (tests). */
const char *dv_tls_sni(const dv_tls_t *t);
/* The last error, a sentence ("" if none). */
const char *dv_tls_error(const dv_tls_t *t);

#endif
