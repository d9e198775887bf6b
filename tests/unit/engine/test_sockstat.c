/* test_sockstat: the target's drop counter read from /proc/net/udp and udp6 text, and from
 * the kernel's socket diagnostics (netlink) against the live tables. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/sockstat.h"

/* Real lines (kernel 6.x layout): 127.0.0.1:53 bound twice (SO_REUSEPORT), a client
 * socket connected to it, 0.0.0.0:5353, and 127.0.0.2:53. */
static const char udp4[] =
    "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode ref pointer drops\n"
    "  100: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        "
    "0 1001 2 0000000000000000 611\n"
    "  100: 0100007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        "
    "0 1002 2 0000000000000000 3\n"
    "  200: 0100007F:A2C4 0100007F:0035 01 00000000:00000000 00:00000000 00000000     0        "
    "0 1003 2 0000000000000000 7\n"
    "  300: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        "
    "0 1004 2 0000000000000000 5\n"
    "  400: 0200007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        "
    "0 1005 2 0000000000000000 9\n";

/* [::]:5353 (dual stack) and [::1]:53. */
static const char udp6[] =
    "  sl  local_address                         remote_address                        st "
    "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
    "  10: 00000000000000000000000000000000:14E9 00000000000000000000000000000000:0000 07 "
    "00000000:00000000 00:00000000 00000000     0        0 2001 2 0000000000000000 40\n"
    "  11: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 07 "
    "00000000:00000000 00:00000000 00000000     0        0 2002 2 0000000000000000 2\n";

static dv_sockstat_t scan(const char *text, int v6, const char *addr, unsigned port)
{
	struct sockaddr_storage ss;
	dv_sockstat_t st = {0, 0};
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':') != NULL) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
	}
	assert_non_null(f);
	dv_sockstat_scan(f, v6, &ss, &st);
	fclose(f);
	return st;
}

static void test_v4_reuseport_summed_client_ignored(void **state)
{
	dv_sockstat_t st = scan(udp4, 0, "127.0.0.1", 53);
	(void)state;
	assert_int_equal(st.sockets, 2);
	assert_int_equal(st.drops, 614);
}

static void test_v4_wildcard_and_other_address(void **state)
{
	dv_sockstat_t st = scan(udp4, 0, "127.0.0.1", 5353);
	(void)state;
	assert_int_equal(st.sockets, 1);
	assert_int_equal(st.drops, 5);
	st = scan(udp4, 0, "127.0.0.2", 53);
	assert_int_equal(st.sockets, 1);
	assert_int_equal(st.drops, 9);
	st = scan(udp4, 0, "127.0.0.3", 53);
	assert_int_equal(st.sockets, 0);
	assert_int_equal(st.drops, 0);
}

static void test_v6(void **state)
{
	dv_sockstat_t st = scan(udp6, 1, "::1", 53);
	(void)state;
	assert_int_equal(st.sockets, 1);
	assert_int_equal(st.drops, 2);
	/* An IPv4 target is also served by a dual-stack [::] socket. */
	st = scan(udp6, 1, "127.0.0.1", 5353);
	assert_int_equal(st.sockets, 1);
	assert_int_equal(st.drops, 40);
	st = scan(udp6, 1, "127.0.0.1", 53);
	assert_int_equal(st.sockets, 0);
}

/* The live tables: a socket bound on loopback is found (sockets 1, its inode); an address
 * that is not this host's (192.0.2.1, TEST-NET-1) finds nothing, without the re-reads. */
static void test_live_tables(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;
	socklen_t len = sizeof(*a);
	dv_sockstat_t st;
	uint64_t inodes[4];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	(void)state;
	assert_true(fd >= 0);
	memset(&ss, 0, sizeof(ss));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)a, sizeof(*a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)a, &len), 0);
	dv_sockstat_read(&ss, &st);
	assert_int_equal(st.sockets, 1);
	assert_int_equal(dv_sockstat_inodes(&ss, 0, inodes, 4), 1);
	inet_pton(AF_INET, "192.0.2.1", &a->sin_addr);
	dv_sockstat_read(&ss, &st);
	assert_int_equal(st.sockets, 0);
	assert_int_equal(dv_sockstat_inodes(&ss, 0, inodes, 4), 0);
	close(fd);
}

/* Both /proc tables, read the old way (the fallback), for comparison. */
static dv_sockstat_t proc_read(const struct sockaddr_storage *ss)
{
	dv_sockstat_t st = {0, 0};
	FILE *f;

	if (ss->ss_family == AF_INET && (f = fopen("/proc/net/udp", "r")) != NULL) {
		dv_sockstat_scan(f, 0, ss, &st);
		fclose(f);
	}
	if ((f = fopen("/proc/net/udp6", "r")) != NULL) {
		dv_sockstat_scan(f, 1, ss, &st);
		fclose(f);
	}
	return st;
}

/* A socket of type bound to a (SO_REUSEPORT with reuse); -1 when a's port is taken. */
static int bind_to(int type, const struct sockaddr_in *a, int reuse)
{
	int fd = socket(AF_INET, type, 0), one = 1;

	assert_true(fd >= 0);
	if (reuse)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
	if (bind(fd, (const struct sockaddr *)a, sizeof(*a)) != 0) {
		assert_int_equal(errno, EADDRINUSE);
		close(fd);
		return -1;
	}
	return fd;
}

static int bound(int type, const struct sockaddr_in *a, int reuse)
{
	int fd = bind_to(type, a, reuse);

	assert_true(fd >= 0);
	return fd;
}

/*
 * The netlink dump against /proc on live sockets: two SO_REUSEPORT sockets on one port, one
 * of them overflowed (a small receive buffer, 2,000 datagrams sent, none read), a client
 * connected to that port (not the server's), and another port's socket: sockets 2, the
 * same drops as /proc's, more than zero; the inodes are the sockets' own; a TCP listener's
 * inode likewise.
 */
static void test_diag_matches_proc(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a = (struct sockaddr_in *)&ss, other;
	socklen_t len = sizeof(*a);
	int small = 2048, s1, s2, cli, far, lis, i;
	dv_sockstat_t st, pr;
	uint64_t inodes[8];
	size_t n;
	struct stat sb1, sb2, sbl;
	char dgram[200];

	(void)state;
	memset(&ss, 0, sizeof(ss));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* One port number for UDP and TCP (the listener below): the TCP port first, the UDP
	 * sockets on its number; another process may hold that number over UDP (tried again). */
	for (i = 0;; i++) {
		a->sin_port = 0;
		lis = bound(SOCK_STREAM, a, 0);
		len = sizeof(*a);
		assert_int_equal(getsockname(lis, (struct sockaddr *)a, &len), 0);
		if ((s1 = bind_to(SOCK_DGRAM, a, 1)) >= 0)
			break;
		close(lis);
		assert_true(i < 100);
	}
	s2 = bound(SOCK_DGRAM, a, 1);
	assert_int_equal(setsockopt(s1, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	assert_int_equal(setsockopt(s2, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	cli = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(connect(cli, (struct sockaddr *)a, sizeof(*a)), 0);
	memset(dgram, 'x', sizeof(dgram));
	for (i = 0; i < 2000; i++)
		assert_int_equal(send(cli, dgram, sizeof(dgram), 0), (ssize_t)sizeof(dgram));
	other = *a;
	other.sin_port = 0;
	far = bound(SOCK_DGRAM, &other, 0);

	if (dv_sockstat_diag(&ss, &st) != 0) {
		/* a kernel without udp_diag: only the fallback exists; it must still count */
		pr = proc_read(&ss);
		assert_int_equal(pr.sockets, 2);
		skip();
	}
	pr = proc_read(&ss);
	assert_int_equal(st.sockets, 2);
	assert_int_equal(pr.sockets, 2);
	assert_true(st.drops > 0);
	assert_int_equal(st.drops, pr.drops);
	dv_sockstat_read(&ss, &pr);
	assert_int_equal(pr.sockets, 2);
	assert_int_equal(pr.drops, st.drops);

	assert_int_equal(dv_sockstat_diag_inodes(&ss, 0, inodes, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(fstat(s1, &sb1), 0);
	assert_int_equal(fstat(s2, &sb2), 0);
	assert_true((inodes[0] == sb1.st_ino && inodes[1] == sb2.st_ino) ||
	            (inodes[0] == sb2.st_ino && inodes[1] == sb1.st_ino));
	/* max bounds what is written */
	assert_int_equal(dv_sockstat_diag_inodes(&ss, 0, inodes, 1, &n), 0);
	assert_int_equal(n, 1);

	/* TCP: the listener on the same port number is found, a connected one is not */
	assert_int_equal(listen(lis, 4), 0);
	assert_int_equal(fstat(lis, &sbl), 0);
	assert_int_equal(dv_sockstat_diag_inodes(&ss, 1, inodes, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(inodes[0], sbl.st_ino);
	assert_int_equal(dv_sockstat_inodes(&ss, 1, inodes, 8), 1);
	close(lis);
	assert_int_equal(dv_sockstat_diag_inodes(&ss, 1, inodes, 8, &n), 0);
	assert_int_equal(n, 0);

	close(far);
	close(cli);
	close(s2);
	close(s1);
	/* gone: nothing bound there now */
	assert_int_equal(dv_sockstat_diag(&ss, &st), 0);
	assert_int_equal(st.sockets, 0);
	assert_int_equal(st.drops, 0);
	/* port 0 (the kernel's "any port" in a dump request) matches no socket, though the
	 * client's wildcard-bound socket above would match any port */
	cli = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(sendto(cli, "x", 1, 0, (struct sockaddr *)a, sizeof(*a)), 1);
	a->sin_port = 0;
	assert_int_equal(dv_sockstat_diag(&ss, &st), 0);
	assert_int_equal(st.sockets, 0);
	assert_int_equal(dv_sockstat_diag_inodes(&ss, 0, inodes, 8, &n), 0);
	assert_int_equal(n, 0);
	close(cli);
}

/* IPv6: a socket bound on ::1 is found with its inode; a v4-only dump does not see it. */
static void test_diag_v6(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);
	dv_sockstat_t st;
	uint64_t inode;
	size_t n;
	struct stat sb;

	(void)state;
	assert_true(fd >= 0);
	memset(&ss, 0, sizeof(ss));
	a->sin6_family = AF_INET6;
	a->sin6_addr = in6addr_loopback;
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0) {
		close(fd);
		skip(); /* no IPv6 on this host */
	}
	assert_int_equal(getsockname(fd, (struct sockaddr *)a, &len), 0);
	if (dv_sockstat_diag(&ss, &st) != 0) {
		close(fd);
		skip(); /* no udp_diag: the /proc tests cover the fallback */
	}
	assert_int_equal(st.sockets, 1);
	assert_int_equal(st.drops, 0);
	assert_int_equal(dv_sockstat_diag_inodes(&ss, 0, &inode, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(inode, sb.st_ino);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4_reuseport_summed_client_ignored),
	    cmocka_unit_test(test_v4_wildcard_and_other_address),
	    cmocka_unit_test(test_v6),
	    cmocka_unit_test(test_live_tables),
	    cmocka_unit_test(test_diag_matches_proc),
	    cmocka_unit_test(test_diag_v6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
