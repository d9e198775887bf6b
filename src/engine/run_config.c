/* run_config: the defaults of a pass's settings, the split of a pass over its workers, and
 * the addresses of --client-range. */
#include "config.h"

#include "engine/run_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "base/util.h"

void dv_run_config_init(dv_run_config_t *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->local.ss_family = AF_UNSPEC;
	cfg->sockets = 16;
	cfg->threads = 1;
	cfg->max_outstanding = 100;
	cfg->timeout_ns = 5 * DV_NS_PER_S;
	cfg->interval_ns = DV_NS_PER_S;
	cfg->interrupt_drain_ns = DV_NS_PER_S;
	cfg->speed = 1.0;
	cfg->client_base.ss_family = AF_UNSPEC;
	cfg->socket_buf_bytes = 4 * 1024 * 1024;
	cfg->out = NULL;
	dv_tp_config_init(&cfg->tp);
}

const char *dv_run_transport(const dv_run_config_t *cfg)
{
	return cfg->stream ? dv_tp_kind_name(cfg->tp.kind) : "udp";
}

bool dv_run_over_tcp(const dv_run_config_t *cfg)
{
	return cfg->stream && dv_tp_desc(cfg->tp.kind)->sock_type == SOCK_STREAM;
}

uint32_t dv_run_stamp_every(const dv_run_config_t *cfg, double rate_qps, uint64_t end_seq)
{
	if (cfg->stamp_every > 0)
		return cfg->stamp_every;
	return cfg->verbose || cfg->every_latency || rate_qps > 0 || end_seq <= DV_STAMP_ALL_MAX
	           ? 1
	           : DV_STAMP_EVERY_DEFAULT;
}

/* n divided over T as evenly as possible: the first n % T shares get one more. */
static uint32_t even_share(uint32_t n, uint32_t t, uint32_t i)
{
	return n / t + (i < n % t ? 1 : 0);
}

void dv_run_split(const dv_run_config_t *cfg, uint64_t list_count, uint32_t worker,
                  dv_run_share_t *share)
{
	uint32_t t = cfg->threads;

	memset(share, 0, sizeof(*share));
	/* the shares before this one: worker each, one more for the first sockets % t */
	share->first_sock = worker * (cfg->sockets / t) + DV_MIN(worker, cfg->sockets % t);
	share->nsocks = even_share(cfg->sockets, t, worker);
	share->capacity = even_share(cfg->max_outstanding, t, worker);
	share->rate_qps = cfg->max_qps / t;
	share->first_seq = worker;
	share->step = t;
	if (cfg->passes > 0)
		share->end_seq = cfg->passes * list_count;
	else if (cfg->time_limit_ns > 0)
		share->end_seq = UINT64_MAX;
	else
		share->end_seq = list_count;
}

void dv_run_client_addr(const dv_run_config_t *cfg, uint64_t index, struct sockaddr_storage *out)
{
	uint64_t i = index % cfg->client_range_size;

	*out = cfg->client_base;
	if (out->ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;
		uint64_t low = 0;
		for (int b = 8; b < 16; b++)
			low = low << 8 | s6->sin6_addr.s6_addr[b];
		low += i;
		for (int b = 15; b >= 8; b--, low >>= 8)
			s6->sin6_addr.s6_addr[b] = (uint8_t)low;
		s6->sin6_port = 0;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)out;
		s4->sin_addr.s_addr = htonl(ntohl(s4->sin_addr.s_addr) + (uint32_t)i);
		s4->sin_port = 0;
	}
}
