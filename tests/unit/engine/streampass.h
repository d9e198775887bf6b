/* streampass: the engine tests' one stream pass: a list of n names, and -c 1 against a port
 * of 127.0.0.1 (test_stream, test_echo_kind). */
#ifndef DV_TEST_STREAMPASS_H
#define DV_TEST_STREAMPASS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "engine/run.h"
#include "input/querylist.h"

/* ql: "q0.example A" .. "q<n-1>.example A". */
static void load_list(dv_querylist_t *ql, unsigned n)
{
	char text[4096];
	size_t off = 0;
	dv_querylist_options_t o;
	dv_err_t err;

	for (unsigned i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "q%u.example A\n", i);
	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_load_buffer(ql, text, off, "t", &o, &err), 0);
}

/* A stream pass over one connection to 127.0.0.1:port, -q q, -t timeout_ns, no intervals. */
static void stream_config(dv_run_config_t *cfg, uint16_t port, uint32_t q, uint64_t timeout_ns)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&cfg->server;

	dv_run_config_init(cfg);
	cfg->stream = true;
	cfg->sockets = 1;
	cfg->max_outstanding = q;
	cfg->timeout_ns = timeout_ns;
	cfg->interval_ns = 0;
	memset(&cfg->server, 0, sizeof(cfg->server));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg->server_len = sizeof(*a);
}

#endif
