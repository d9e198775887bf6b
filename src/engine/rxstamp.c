/* rxstamp: the receive-stamp filter loaded, attached and its array mapped (rxstamp.h). */
#include "config.h"

#include "engine/rxstamp.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef HAVE_XDP
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/xdpload.h"
#include "engine/rx_stamp_obj.h"
#endif

#define WORDS_LEN ((size_t)DV_RX_IDS * sizeof(uint64_t))

int dv_rxstamp_open(dv_rxstamp_t *r)
{
	memset(r, 0, sizeof(*r));
	r->prog_fd = -1;
#ifdef HAVE_XDP
	dv_xdp_prog_t p;
	dv_err_t err = {{0}};
	void *m;
	int rc, map_fd;

	rc = dv_xdp_prog_open(&p, rx_stamp_obj, sizeof(rx_stamp_obj), "dv_rx_stamp", NULL,
	                      "--clock wire", &err);
	if (rc != 0)
		return rc;
	map_fd = dv_xdp_prog_map(&p, "rx_stamps");
	m = map_fd >= 0 ? mmap(NULL, WORDS_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0)
	                : MAP_FAILED;
	if (m == MAP_FAILED) {
		rc = map_fd >= 0 ? -errno : map_fd;
		dv_xdp_prog_close(&p);
		return rc;
	}
	r->obj = p.obj;
	r->prog_fd = p.prog_fd;
	r->word = m;
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

int dv_rxstamp_attach(const dv_rxstamp_t *r, int fd, uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);

	if (r->prog_fd < 0)
		return -EBADF;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &r->prog_fd, sizeof(r->prog_fd)) != 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) != 0) {
		int rc = -errno;
		setsockopt(fd, SOL_SOCKET, SO_DETACH_BPF, NULL, 0);
		return rc;
	}
	return 0;
}

void dv_rxstamp_close(dv_rxstamp_t *r)
{
#ifdef HAVE_XDP
	if (r->word != NULL)
		munmap(r->word, WORDS_LEN);
	if (r->obj != NULL)
		bpf_object__close(r->obj);
#endif
	memset(r, 0, sizeof(*r));
	r->prog_fd = -1;
}
