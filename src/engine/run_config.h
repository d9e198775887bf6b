/* run_config: what one pass is asked to do (the -c/-T/-q/-Q/-t/-l/-n... settings), shared by run and worker. */
#ifndef DV_RUN_CONFIG_H
#define DV_RUN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

typedef struct dv_run_config {
	struct sockaddr_storage server; /* target address and port */
	socklen_t server_len;
	struct sockaddr_storage local;  /* -a / -x; family AF_UNSPEC when not given */
	socklen_t local_len;
	uint16_t local_port;            /* -x: first port of a range, 0 = any */
	uint32_t sockets;               /* -c, total over all workers */
	uint32_t threads;               /* -T */
	uint32_t max_outstanding;       /* -q, total over all workers */
	uint64_t timeout_ns;            /* -t */
	uint64_t time_limit_ns;         /* -l, 0 = none */
	uint64_t passes;                /* -n, 0 = none (then: one pass unless a time limit) */
	double max_qps;                 /* -Q, 0 = unlimited */
	uint64_t interval_ns;           /* -S / snapshot period; 0 = no interval lines */
	bool interval_print;            /* print a line per interval (-S) */
	bool progress;                  /* live progress line on stderr */
	bool verbose;                   /* a line per query on stdout (-v) */
	FILE *out;                      /* where interval and verbose lines go (stdout) */
	uint64_t interrupt_drain_ns;    /* wait after SIGINT before giving up, default 1 s */
	uint32_t socket_buf_bytes;      /* -b: SO_RCVBUF/SO_SNDBUF asked for (default 4 MiB) */
} dv_run_config_t;

/* Defaults as documented in doc/dnsvolley.1 (run_config.c). */
void dv_run_config_init(dv_run_config_t *cfg);

#endif
