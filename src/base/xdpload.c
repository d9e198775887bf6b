/* xdpload: a BPF object held in memory loaded, and its XDP program attached to an interface. */
#include "config.h"

#include "base/xdpload.h"

#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/*
 * Why libbpf's links and not libxdp's multi-program dispatcher: the dispatcher needs
 * bpffs mounted and its own object installed, and it would share the interface with
 * programs we did not load; a link is one program that is ours alone, refused (EBUSY)
 * when the interface has another, and gone with the process.
 */

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int dv_xdp_prog_open(dv_xdp_prog_t *p, const void *obj, size_t len, const char *prog_name,
                     const char *ifname, const char *flag, dv_err_t *err)
{
	struct bpf_program *prog;
	int rc;

	memset(p, 0, sizeof(*p));
	p->link_fd = -1;
	p->prog_fd = -1;
	p->flag = flag;
	if (ifname != NULL) {
		snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
		p->ifindex = (int)if_nametoindex(ifname);
		if (p->ifindex == 0)
			return dv_err_set(err, -ENODEV, "%s %s: no such network interface", flag,
			                  ifname);
	}
	libbpf_set_print(silent); /* its messages would be the second line; ours says it */
	p->obj = bpf_object__open_mem(obj, len, NULL);
	if (p->obj == NULL)
		return dv_err_set(err, -errno, "%s: cannot open the built-in BPF program: %s", flag,
		                  strerror(errno));
	rc = bpf_object__load(p->obj);
	if (rc != 0) {
		rc = rc < 0 ? rc : -EINVAL;
		bpf_object__close(p->obj);
		p->obj = NULL;
		if (rc == -EPERM || rc == -EACCES)
			return dv_err_set(err, rc,
			                  "%s: loading a BPF program needs privileges (CAP_BPF and "
			                  "CAP_NET_ADMIN): run as root",
			                  flag);
		return dv_err_set(err, rc, "%s: the kernel refused the BPF program: %s", flag,
		                  strerror(-rc));
	}
	prog = bpf_object__find_program_by_name(p->obj, prog_name);
	p->prog_fd = prog != NULL ? bpf_program__fd(prog) : -1;
	if (p->prog_fd < 0) {
		dv_xdp_prog_close(p);
		return dv_err_set(err, -ENOENT, "%s: no program %s in the BPF object", flag,
		                  prog_name);
	}
	return 0;
}

int dv_xdp_prog_map(const dv_xdp_prog_t *p, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(p->obj, name);

	return m != NULL ? bpf_map__fd(m) : -ENOENT;
}

int dv_xdp_prog_attach(dv_xdp_prog_t *p, dv_err_t *err)
{
	LIBBPF_OPTS(bpf_link_create_opts, o, .flags = XDP_FLAGS_DRV_MODE);
	int fd, rc;

	if (p->ifindex == 0)
		return dv_err_set(err, -EINVAL, "%s: no interface to attach to", p->flag);
	fd = bpf_link_create(p->prog_fd, p->ifindex, BPF_XDP, &o);
	if (fd >= 0) {
		p->link_fd = fd;
		return 0;
	}
	rc = -errno;
	switch (-rc) {
	case EPERM:
	case EACCES:
		return dv_err_set(err, rc,
		                  "%s %s: attaching an XDP program needs privileges "
		                  "(CAP_NET_ADMIN and CAP_BPF): run as root",
		                  p->flag, p->ifname);
	case EBUSY:
	case EEXIST: /* -EADDRINUSE: the caller's -EBUSY may mean something else (run_config.h) */
		return dv_err_set(err, -EADDRINUSE,
		                  "%s %s: the interface is busy: another XDP program is attached "
		                  "(see 'ip link show %s'); detach it or use another interface",
		                  p->flag, p->ifname, p->ifname);
	case EOPNOTSUPP:
	case EINVAL:
		return dv_err_set(err, rc,
		                  "%s %s: the interface's driver has no native XDP mode; use an "
		                  "interface whose driver has it (veth, most 10G+ NICs)",
		                  p->flag, p->ifname);
	default:
		return dv_err_set(err, rc, "%s %s: cannot attach the XDP program: %s", p->flag,
		                  p->ifname, strerror(-rc));
	}
}

void dv_xdp_prog_close(dv_xdp_prog_t *p)
{
	if (p->link_fd >= 0)
		close(p->link_fd);
	if (p->obj != NULL)
		bpf_object__close(p->obj);
	memset(p, 0, sizeof(*p));
	p->link_fd = -1;
	p->prog_fd = -1;
}
