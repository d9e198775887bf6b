/* responder xdp: dnsvolley-responder --xdp IFACE: UDP queries answered in XDP_TX. */
#include "config.h"

#include "responder/xdp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/xdpload.h"
#include "responder/xdp_reflect_obj.h"

struct dv_rxdp {
	dv_xdp_prog_t prog;
	int counts_fd;
};

int dv_rxdp_load(dv_rxdp_t **out, const char *ifname, uint16_t port, uint64_t drop_every,
                 uint64_t garbage_every, dv_err_t *err)
{
	struct dv_rxdp_conf conf;
	dv_rxdp_t *r = calloc(1, sizeof(*r));
	uint32_t zero = 0;
	int rc, conf_fd;

	*out = NULL;
	if (r == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	rc = dv_xdp_prog_open(&r->prog, xdp_reflect_obj, xdp_reflect_obj_len, "dv_reflect", ifname,
	                      "--xdp", err);
	if (rc == 0) {
		memset(&conf, 0, sizeof(conf));
		conf.port = port;
		conf.drop_every = drop_every;
		conf.garbage_every = garbage_every;
		conf_fd = dv_xdp_prog_map(&r->prog, "conf");
		r->counts_fd = dv_xdp_prog_map(&r->prog, "counts");
		if (conf_fd < 0 || r->counts_fd < 0 ||
		    bpf_map_update_elem(conf_fd, &zero, &conf, BPF_ANY) != 0)
			rc = dv_err_set(err, -EINVAL, "--xdp: cannot configure the BPF program");
	}
	if (rc != 0) {
		dv_rxdp_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int dv_rxdp_open(dv_rxdp_t **out, const char *ifname, uint16_t port, uint64_t drop_every,
                 uint64_t garbage_every, dv_err_t *err)
{
	int rc = dv_rxdp_load(out, ifname, port, drop_every, garbage_every, err);

	if (rc == 0 && (rc = dv_xdp_prog_attach(&(*out)->prog, err)) != 0) {
		dv_rxdp_close(*out);
		*out = NULL;
	}
	return rc;
}

int dv_rxdp_prog_fd(const dv_rxdp_t *r)
{
	return r->prog.prog_fd;
}

void dv_rxdp_read(const dv_rxdp_t *r, dv_rxdp_counts_t *c)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	uint32_t k;
	uint64_t *v;

	memset(c, 0, sizeof(*c));
	if (r == NULL || ncpu <= 0 || (v = calloc((size_t)ncpu, sizeof(*v))) == NULL)
		return;
	for (k = 0; k < DV_RXDP_NCOUNTS; k++)
		if (bpf_map_lookup_elem(r->counts_fd, &k, v) == 0)
			for (i = 0; i < ncpu; i++)
				c->n[k] += v[i];
	free(v);
}

void dv_rxdp_close(dv_rxdp_t *r)
{
	if (r == NULL)
		return;
	dv_xdp_prog_close(&r->prog);
	free(r);
}
