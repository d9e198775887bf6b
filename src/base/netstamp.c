/* netstamp: wait until the kernel stamps received packets in software (netstamp.h). */
#include "base/netstamp.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/errqueue.h> /* after time.h: it needs struct timespec */
#include <linux/net_tstamp.h>

#include "base/util.h"

#define TRY_WAIT_MS 100 /* a datagram's way through loopback (softirq may be deferred) */

int dv_netstamp_socket(void)
{
	static const int families[] = {AF_INET, AF_INET6};
	int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE, rc = -EAFNOSUPPORT;
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		int fd = socket(families[i], SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0) {
			rc = -errno;
			continue;
		}
		memset(&ss, 0, sizeof(ss));
		if (families[i] == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			len = sizeof(*a);
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			a->sin6_family = AF_INET6;
			a->sin6_addr = in6addr_loopback;
			len = sizeof(*a);
		}
		if (bind(fd, (struct sockaddr *)&ss, len) == 0 &&
		    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) == 0)
			return fd;
		rc = -errno;
		close(fd);
	}
	return rc;
}

/* The next datagram waiting on fd: 1 stamped, 0 not, -EAGAIN none, else -errno. */
static int read_one(int fd)
{
	char byte, ctl[CMSG_SPACE(sizeof(struct scm_timestamping)) + 64];
	struct iovec iov = {&byte, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl};
	struct cmsghdr *c;

	m.msg_controllen = sizeof(ctl);
	if (recvmsg(fd, &m, MSG_DONTWAIT) < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		struct scm_timestamping ts;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_TIMESTAMPING)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		return ts.ts[0].tv_sec != 0 || ts.ts[0].tv_nsec != 0;
	}
	return 0;
}

int dv_netstamp_try(int fd)
{
	struct sockaddr_storage self;
	socklen_t len = sizeof(self);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int rc, stamped = 0, got = 0;

	if (getsockname(fd, (struct sockaddr *)&self, &len) != 0)
		return -errno;
	if (sendto(fd, "s", 1, 0, (struct sockaddr *)&self, len) != 1)
		return -errno;
	/* Every datagram waiting is read (an earlier try's late one too): any stamped one says
	 * the kernel stamps now. */
	while (!got) {
		rc = poll(&p, 1, TRY_WAIT_MS);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc <= 0)
			return stamped;
		while ((rc = read_one(fd)) >= 0) {
			stamped |= rc;
			got = 1;
		}
		if (rc != -EAGAIN && rc != -EINTR)
			return rc;
	}
	return stamped;
}

int dv_netstamp_wait(unsigned timeout_ms, unsigned *tries)
{
	uint64_t end = dv_now_ns() + (uint64_t)timeout_ms * DV_NS_PER_MS;
	const struct timespec ms = {0, 1000000};
	int fd = dv_netstamp_socket(), rc;
	unsigned n = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		n++;
		rc = dv_netstamp_try(fd);
		if (rc != 0)
			break;
		if (dv_now_ns() >= end) {
			rc = -ETIMEDOUT;
			break;
		}
		nanosleep(&ms, NULL);
	}
	close(fd);
	if (tries != NULL)
		*tries = n;
	return rc < 0 ? rc : 0;
}
