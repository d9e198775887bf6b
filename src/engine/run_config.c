/* run_config: the defaults of a pass's settings. */
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
	cfg->socket_buf_bytes = 4 * 1024 * 1024;
	cfg->out = NULL;
}
