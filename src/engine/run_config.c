/* run_config: the defaults of a pass's settings and the split of a pass over its workers. */
#include "config.h"

#include "engine/run_config.h"

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
