/* syscount: perf_event_open counters on raw_syscalls:sys_enter, one per family per thread. */
#include "config.h"

#include "base/syscount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *dv_sys_family_name(dv_sys_family_t f)
{
	static const char *const names[DV_SYS_FAMILIES] = {"all", "recv", "send", "poll", "rw"};
	return f < DV_SYS_FAMILIES ? names[f] : "?";
}

/* The system call numbers of each family on this architecture (-1 ends a list). */
static const long recv_calls[] = {
#ifdef SYS_recvfrom
    SYS_recvfrom,
#endif
#ifdef SYS_recvmsg
    SYS_recvmsg,
#endif
#ifdef SYS_recvmmsg
    SYS_recvmmsg,
#endif
    -1};
static const long send_calls[] = {
#ifdef SYS_sendto
    SYS_sendto,
#endif
#ifdef SYS_sendmsg
    SYS_sendmsg,
#endif
#ifdef SYS_sendmmsg
    SYS_sendmmsg,
#endif
    -1};
static const long poll_calls[] = {
#ifdef SYS_poll
    SYS_poll,
#endif
#ifdef SYS_ppoll
    SYS_ppoll,
#endif
#ifdef SYS_select
    SYS_select,
#endif
#ifdef SYS_pselect6
    SYS_pselect6,
#endif
#ifdef SYS_epoll_wait
    SYS_epoll_wait,
#endif
#ifdef SYS_epoll_pwait
    SYS_epoll_pwait,
#endif
#ifdef SYS_epoll_pwait2
    SYS_epoll_pwait2,
#endif
    -1};
static const long rw_calls[] = {
#ifdef SYS_read
    SYS_read,
#endif
#ifdef SYS_write
    SYS_write,
#endif
#ifdef SYS_readv
    SYS_readv,
#endif
#ifdef SYS_writev
    SYS_writev,
#endif
    -1};

void dv_sys_filter(dv_sys_family_t f, char *buf, size_t len)
{
	const long *ids = f == DV_SYS_RECV   ? recv_calls
	                  : f == DV_SYS_SEND ? send_calls
	                  : f == DV_SYS_POLL ? poll_calls
	                  : f == DV_SYS_RW   ? rw_calls
	                                     : NULL;
	size_t used = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; ids != NULL && ids[i] >= 0; i++) {
		int n = snprintf(buf + used, len - used, "%sid == %ld", used ? " || " : "", ids[i]);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

static const char *const tracefs_ids[] = {
    "/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
    "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
};

/* The tracepoint's id, or a negative errno; as root mounts tracefs when it is missing. */
static long tracepoint_id(int *mounted)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		for (size_t i = 0; i < sizeof(tracefs_ids) / sizeof(tracefs_ids[0]); i++) {
			FILE *f = fopen(tracefs_ids[i], "re");
			long id = -1;
			if (f == NULL)
				continue;
			if (fscanf(f, "%ld", &id) != 1)
				id = -1;
			fclose(f);
			if (id >= 0)
				return id;
		}
		if (attempt > 0 || geteuid() != 0)
			break;
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
			return -errno;
		*mounted = 1;
	}
	return geteuid() != 0 ? -EACCES : -ENOENT;
}

static int open_one(long id, pid_t tid, dv_sys_family_t f)
{
	struct perf_event_attr a;
	char filter[512];
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.inherit = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	dv_sys_filter(f, filter, sizeof(filter));
	if (filter[0] != '\0' && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) != 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

static void why_perf(int rc, char *why, size_t why_len)
{
	int paranoid = -9;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	if (f != NULL) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -9;
		fclose(f);
	}
	if (rc == -EACCES || rc == -EPERM)
		snprintf(why, why_len,
		         "perf_event_open: %s (needs root or CAP_PERFMON, or "
		         "kernel.perf_event_paranoid <= 1; it is %d)",
		         strerror(-rc), paranoid);
	else
		snprintf(why, why_len, "perf_event_open: %s", strerror(-rc));
}

/* Open the families' counters of one thread, appended to sc->fds. */
static int open_thread(dv_syscount_t *sc, long id, pid_t tid, size_t *cap)
{
	if (sc->n + DV_SYS_FAMILIES > *cap) {
		size_t ncap = *cap ? *cap * 2 : 8 * DV_SYS_FAMILIES;
		int *nf = realloc(sc->fds, ncap * sizeof(*nf));
		if (nf == NULL)
			return -ENOMEM;
		sc->fds = nf;
		*cap = ncap;
	}
	for (int f = 0; f < DV_SYS_FAMILIES; f++) {
		int fd = open_one(id, tid, (dv_sys_family_t)f);
		if (fd < 0) {
			while (f-- > 0)
				close(sc->fds[--sc->n]);
			return fd;
		}
		sc->fds[sc->n++] = fd;
	}
	return 0;
}

int dv_syscount_open(dv_syscount_t *sc, pid_t pid, int *mounted, char *why, size_t why_len)
{
	char path[64];
	size_t cap = 0;
	long id;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	memset(sc, 0, sizeof(*sc));
	*mounted = 0;
	id = tracepoint_id(mounted);
	if (id < 0) {
		snprintf(why, why_len, "%s",
		         id == -EACCES
		             ? "tracefs (raw_syscalls:sys_enter) is not readable: needs root"
		             : "tracefs is not mounted (mount -t tracefs nodev "
		               "/sys/kernel/tracing)");
		return (int)id;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL) {
		rc = -errno;
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		long tid = strtol(de->d_name, NULL, 10);
		if (tid > 0)
			rc = open_thread(sc, id, (pid_t)tid, &cap);
		if (rc == -ESRCH)
			rc = 0; /* the thread ended meanwhile */
	}
	closedir(d);
	if (rc == 0 && sc->n == 0)
		rc = -ESRCH;
	if (rc != 0) {
		why_perf(rc, why, why_len);
		dv_syscount_close(sc);
	}
	return rc;
}

int dv_syscount_read(const dv_syscount_t *sc, uint64_t out[DV_SYS_FAMILIES])
{
	memset(out, 0, DV_SYS_FAMILIES * sizeof(out[0]));
	for (size_t i = 0; i < sc->n; i++) {
		uint64_t v;
		errno = 0;
		if (read(sc->fds[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			return errno != 0 ? -errno : -EIO;
		out[i % DV_SYS_FAMILIES] += v;
	}
	return 0;
}

void dv_syscount_close(dv_syscount_t *sc)
{
	if (sc == NULL)
		return;
	for (size_t i = 0; i < sc->n; i++)
		close(sc->fds[i]);
	free(sc->fds);
	sc->fds = NULL;
	sc->n = 0;
}
