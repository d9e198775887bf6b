/* capture: a command's standard output read by a thread while base/proc waits for it. */
#include "config.h"

#include "base/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLL_MS 50 /* the reader looks at the done flag this often */

typedef struct reader {
	int fd;
	char *buf;
	size_t len, cap;
	int truncated;
	atomic_int done; /* the command was reaped: read what is there and stop */
} reader_t;

/*
 * Read what is there; 1 at EOF, past the cap or on an error (the reader stops). At the cap
 * one more octet says the output was cut; an empty pipe says nothing yet (the writer may
 * not have written past the cap so far), so the reader waits for an octet or EOF.
 */
static int drain(reader_t *r)
{
	for (;;) {
		ssize_t n;

		if (r->len == r->cap) {
			char b;
			ssize_t k = read(r->fd, &b, 1);
			if (k > 0)
				r->truncated = 1;
			if (k < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			return 1;
		}
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n > 0) {
			r->len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n == 0 || errno != EAGAIN;
	}
}

static void *read_out(void *arg)
{
	reader_t *r = arg;

	for (;;) {
		struct pollfd p = {.fd = r->fd, .events = POLLIN};
		int last = atomic_load(&r->done);

		if (poll(&p, 1, last ? 0 : POLL_MS) < 0 && errno != EINTR)
			break;
		if (drain(r) || last)
			break;
	}
	/* closing it makes a writer past the cap get EPIPE: it cannot block us */
	close(r->fd);
	r->fd = -1;
	return NULL;
}

int dv_capture_run(const char *const *argv, size_t cap, uint64_t timeout_ms, dv_capture_t *c)
{
	reader_t r = {.fd = -1, .cap = cap};
	dv_proc_opts_t o;
	pthread_t th;
	int fds[2], null_fd, rc;

	memset(c, 0, sizeof(*c));
	if ((r.buf = malloc(cap + 1)) == NULL)
		return -ENOMEM;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		free(r.buf);
		return -errno;
	}
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	r.fd = fds[0];
	atomic_init(&r.done, 0);
	if ((rc = pthread_create(&th, NULL, read_out, &r)) != 0) {
		close(fds[0]);
		close(fds[1]);
		if (null_fd >= 0)
			close(null_fd);
		free(r.buf);
		return -rc;
	}
	dv_proc_opts_init(&o);
	o.argv = argv;
	o.stdin_fd = null_fd;
	o.stdout_fd = fds[1];
	o.stderr_fd = null_fd;
	o.timeout_ms = timeout_ms;
	o.grace_ms = 200;
	rc = dv_proc_run(&o, &c->res);
	close(fds[1]);
	if (null_fd >= 0)
		close(null_fd);
	/* a background child of the command may hold the pipe open: read what is there, stop */
	atomic_store(&r.done, 1);
	pthread_join(th, NULL);
	r.buf[r.len] = '\0';
	c->out = r.buf;
	c->len = r.len;
	c->truncated = r.truncated;
	if (rc != 0) {
		free(c->out);
		c->out = NULL;
	}
	return rc;
}
