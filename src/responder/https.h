/* https: the responder's DNS over HTTPS (RFC 8484) side of one connection: an nghttp2
 * server session fed the connection's plain bytes, answering with the answer builder. */
#ifndef DV_HTTPS_H
#define DV_HTTPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "responder/answer.h"

/* SETTINGS_MAX_CONCURRENT_STREAMS the responder announces by default. */
#define DV_HTTPS_MAX_STREAMS 1000
/*
 * Memory budgets of the requests (record and body bytes, held from a request's HEADERS
 * until its stream closes): per connection and over all of them. A request that would go
 * past either is refused (RST_STREAM REFUSED_STREAM) and its bytes freed. 1,000 streams of
 * small queries take ~0.6 MB of a connection's budget.
 */
#define DV_HTTPS_CONN_BUDGET  (1u << 20)
#define DV_HTTPS_TOTAL_BUDGET ((size_t)256 << 20)

typedef struct dv_https_config {
	const char *path;      /* the DoH path, e.g. "/dns-query" (outlives every session) */
	uint32_t max_streams;  /* SETTINGS_MAX_CONCURRENT_STREAMS announced, >= 1 */
	dv_answer_opts_t opts; /* how to answer */
	uint8_t *scratch;      /* an answer buffer of scratch_len bytes, shared (one thread) */
	size_t scratch_len;    /* >= 65535 + 16 */
	size_t conn_budget;    /* bytes of requests per connection (DV_HTTPS_CONN_BUDGET) */
	size_t total_budget;   /* bytes of requests of all connections (DV_HTTPS_TOTAL_BUDGET) */
} dv_https_config_t;

/* What the sessions of one listener did (summed by the caller's one thread). */
typedef struct dv_https_counts {
	uint64_t received; /* whole requests, whatever their status */
	uint64_t answered; /* 200 responses whose last frame was handed to the output */
	uint64_t s200, s400, s404, s405, s415; /* responses made, by status */
	uint64_t refused;  /* requests refused for a memory budget (RST_STREAM REFUSED_STREAM) */
	uint64_t held;     /* bytes held by open requests of all sessions now (not a count) */
	uint64_t held_max; /* the most held at once */
} dv_https_counts_t;

typedef struct dv_https dv_https_t;

/* A server session counting into k. cfg and k outlive it. 0 or -ENOMEM. */
int dv_https_new(dv_https_t **out, const dv_https_config_t *cfg, dv_https_counts_t *k);
/* Feed plain bytes read from the client. 0, or < 0 on an HTTP/2 connection error (the
 * GOAWAY is still in the output: send it, then close). */
int dv_https_recv(dv_https_t *h, const uint8_t *data, size_t len);
/* Next piece of output (valid until the next call): its length, 0 when none, < 0 on
 * error. Call until 0 and write all of it together. */
ssize_t dv_https_send(dv_https_t *h, const uint8_t **data);
/* The session has nothing more to read or write: close the connection. */
bool dv_https_done(const dv_https_t *h);
/* Requests received whose response never went out. */
uint64_t dv_https_unanswered(const dv_https_t *h);
/* Accepts NULL. */
void dv_https_free(dv_https_t *h);

#endif
