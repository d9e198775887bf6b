/* test_study: table and summary from hand-built studies; flush failures; probes against a peer. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/probe.h"
#include "study/study.h"
#include "study/summary.h"

static char *xs(const char *s)
{
	char *d = strdup(s);
	assert_non_null(d);
	return d;
}

/* A pass with this qps, lost count and a constant latency (every answer takes lat_ns). */
static void add_pass(dv_study_t *s, size_t t, size_t l, unsigned r, dv_pass_kind_t k, double qps,
                     uint64_t lost, uint64_t lat_ns)
{
	s->passes = realloc(s->passes, (s->n_passes + 1) * sizeof(*s->passes));
	assert_non_null(s->passes);
	dv_pass_record_t *p = &s->passes[s->n_passes++];
	memset(p, 0, sizeof(*p));
	p->target = t;
	p->list = l;
	p->repeat = r;
	p->kind = k;
	dv_stats_init(&p->res.stats);
	p->res.qps = qps;
	p->res.stats.c.lost = lost;
	p->res.stats.c.completed = 100;
	for (int i = 0; i < 100; i++)
		dv_hist_add(&p->res.stats.latency, lat_ns);
}

/* The field's study: two versions, SOA and A lists, cold/hot, two repeats. */
static void build(dv_study_t *s, const char *const *targets, size_t nt, unsigned reps)
{
	memset(s, 0, sizeof(*s));
	s->n_targets = nt;
	s->targets = calloc(nt, sizeof(*s->targets));
	for (size_t i = 0; i < nt; i++)
		s->targets[i].label = xs(targets[i]);
	s->n_lists = 2;
	s->lists = calloc(2, sizeof(*s->lists));
	s->lists[0].label = xs("SOA");
	s->lists[1].label = xs("A");
	s->n_plan = 2;
	s->plan = calloc(2, sizeof(*s->plan));
	s->plan[0] = DV_PASS_COLD;
	s->plan[1] = DV_PASS_HOT;
	s->repeat = reps;
}

static char *capture(const dv_study_t *s, bool table)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (table)
		dv_study_print_table(s, f);
	else
		dv_study_print_summary(s, f);
	fclose(f);
	return buf;
}

static void test_table_shape(void **state)
{
	(void)state;
	static const char *const t[] = {"3.4.11", "4.0.4"};
	dv_study_t s;
	build(&s, t, 2, 2);
	/* In the order a study runs them: repeat, list, target, pass. */
	double q = 1000;
	for (unsigned r = 0; r < 2; r++)
		for (size_t l = 0; l < 2; l++)
			for (size_t ti = 0; ti < 2; ti++) {
				add_pass(&s, ti, l, r, DV_PASS_COLD, q, (uint64_t)q / 2, 1000000);
				add_pass(&s, ti, l, r, DV_PASS_HOT, q + 0.5, 7, 100000);
				q += 111.25;
			}
	char *out = capture(&s, true);
	const char *want =
	    "\nComparison table (queries per second, lost queries in brackets):\n"
	    "Target  List       Run1 cold      Run1 hot       Run2 cold      Run2 hot\n"
	    "3.4.11  SOA   1000 (lost500)  1000 (lost7)  1445 (lost722)  1446 (lost7)\n"
	    "3.4.11  A     1222 (lost611)  1223 (lost7)  1668 (lost833)  1668 (lost7)\n"
	    "4.0.4   SOA   1111 (lost555)  1112 (lost7)  1556 (lost778)  1557 (lost7)\n"
	    "4.0.4   A     1334 (lost666)  1334 (lost7)  1779 (lost889)  1779 (lost7)\n";
	assert_string_equal(out, want);
	free(out);
	dv_study_free(&s);
}

static void test_table_partial_and_repeated_kind(void **state)
{
	(void)state;
	static const char *const t[] = {"x"};
	dv_study_t s;
	build(&s, t, 1, 2);
	s.n_lists = 1;
	free(s.lists[1].label);
	s.plan = realloc(s.plan, 3 * sizeof(*s.plan));
	s.plan[2] = DV_PASS_HOT;
	s.n_plan = 3;
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 10, 1, 1000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 20, 2, 1000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 30, 3, 1000);
	add_pass(&s, 0, 0, 1, DV_PASS_COLD, 40, 4, 1000);
	s.passes[3].res.interrupted = true;
	s.interrupted = true;
	char *out = capture(&s, true);
	const char *want =
	    "\nComparison table (queries per second, lost queries in brackets):\n"
	    "Target  List   Run1 cold    Run1 hot   Run1 hot2    Run2 cold  Run2 hot  Run2 hot2\n"
	    "x       SOA   10 (lost1)  20 (lost2)  30 (lost3)  40 (lost4)*         -          -\n"
	    "* interrupted pass: partial figures\n"
	    "The study was interrupted; '-' marks passes not run.\n";
	assert_string_equal(out, want);
	free(out);
	s.failed = -ECANCELED;
	snprintf(s.fail_msg, sizeof(s.fail_msg), "target x: flush command failed");
	out = capture(&s, true);
	assert_non_null(strstr(out, "The study stopped early: target x: flush command failed\n"));
	free(out);
	dv_study_free(&s);
}

static void test_summary(void **state)
{
	(void)state;
	static const char *const t[] = {"old", "new"};
	dv_study_t s;
	build(&s, t, 2, 2);
	/* SOA cold: old 1000/1010, new 1100/1110: +9.5%, pooled sd 7.07 -> significant.
	 * SOA hot: old 2000/2100, new 2010/2090: +0.0%, within noise.
	 * Latency: old cold 2 ms both, new cold 1 ms / 3 ms. */
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 1000, 0, 2000000);
	add_pass(&s, 0, 0, 0, DV_PASS_HOT, 2000, 0, 100000);
	add_pass(&s, 1, 0, 0, DV_PASS_COLD, 1100, 0, 1000000);
	add_pass(&s, 1, 0, 0, DV_PASS_HOT, 2010, 0, 100000);
	add_pass(&s, 0, 1, 0, DV_PASS_COLD, 500, 0, 1000000);
	add_pass(&s, 0, 1, 0, DV_PASS_HOT, 1000, 0, 100000);
	add_pass(&s, 0, 0, 1, DV_PASS_COLD, 1010, 0, 2000000);
	add_pass(&s, 0, 0, 1, DV_PASS_HOT, 2100, 0, 100000);
	add_pass(&s, 1, 0, 1, DV_PASS_COLD, 1110, 0, 3000000);
	add_pass(&s, 1, 0, 1, DV_PASS_HOT, 2110, 0, 100000);
	/* list A of "new" never ran (study stopped) */
	char *out = capture(&s, false);
	const char *lines[] = {
	    "Target  List  Pass  N                      qps                         p50 ms         "
	    "                p99 ms\n",
	    "old     SOA   cold  2   1005 +- 7 (1000..1010)  2.000 +- 0.000 (2.000..2.000)  2.000 "
	    "+- 0.000 (2.000..2.000)\n",
	    "old     SOA   hot   2  2050 +- 71 (2000..2100)  0.100 +- 0.000 (0.100..0.100)  0.100 "
	    "+- 0.000 (0.100..0.100)\n",
	    "old     A     cold  1                      500                          1.000         "
	    "                 1.000\n",
	    "new     SOA   cold  2   1105 +- 7 (1100..1110)  2.000 +- 1.414 (1.000..3.000)  2.000 "
	    "+- 1.414 (1.000..3.000)\n",
	    "new     SOA   hot   2  2060 +- 71 (2010..2110)  0.100 +- 0.000 (0.100..0.100)  0.100 "
	    "+- 0.000 (0.100..0.100)\n",
	    "new     A     hot   0                        -                              -         "
	    "                     -\n",
	    "Target  List  qps hot/cold  p50 cold/hot\n",
	    "old     SOA           2.04         20.00\n",
	    "old     A             2.00         10.00\n",
	    "new     A                -             -\n",
	    "\nChange against the first target, old (significant: |difference of means| > 2 x "
	    "pooled sample stddev; see doc/methodology.md):\n",
	    "new     SOA   cold  +10.0% (significant)  +0.0% (within noise)  +0.0% (within "
	    "noise)\n",
	    "new     SOA   hot   +0.5% (within noise)  +0.0% (within noise)  +0.0% (within "
	    "noise)\n",
	    "new     A     cold  -                     -                     -\n",
	};
	for (size_t i = 0; i < DV_ARRAY_SIZE(lines); i++)
		if (strstr(out, lines[i]) == NULL) {
			fprintf(stderr, "summary lacks line %zu:\n%s\n--- got:\n%s", i, lines[i],
			        out);
			fail();
		}
	free(out);
	dv_study_free(&s);

	/* One repeat: the spread is unknown, and the summary says so. */
	build(&s, t, 2, 1);
	add_pass(&s, 0, 0, 0, DV_PASS_COLD, 1000, 0, 2000000);
	add_pass(&s, 1, 0, 0, DV_PASS_COLD, 900, 0, 2000000);
	out = capture(&s, false);
	assert_non_null(strstr(out, "new     SOA   cold  -10.0% (one repeat: spread unknown)"));
	free(out);
	dv_study_free(&s);
}

/* ---------------------------------------------------------------- a UDP peer */

typedef struct peer {
	int fd;
	uint16_t port;
	int answer_from; /* answer the Nth query and later (1-based); 0 = never */
	int version;     /* answer with a version.bind TXT */
	int received;
	pthread_t th;
} peer_t;

static void *peer_main(void *arg)
{
	peer_t *p = arg;
	uint8_t buf[1500];
	for (int turns = 0; turns < 400; turns++) { /* bounded: 400 x 10 ms */
		struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
		if (poll(&pfd, 1, 10) <= 0)
			continue;
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n =
		    recvfrom(p->fd, buf, sizeof(buf) - 64, 0, (struct sockaddr *)&from, &fl);
		if (n < 12)
			continue;
		if (buf[0] == 0xff && buf[1] == 0xff && n == 12)
			break; /* stop */
		p->received++;
		if (p->answer_from == 0 || p->received < p->answer_from)
			continue;
		buf[2] |= 0x80;
		if (p->version) {
			static const uint8_t rr[] = {0xc0, 0x0c, 0,   16,  0,   3,   0,   0,
			                             0,    0,    0,   12,  4,   't', 'e', 's',
			                             't',  6,    'v', '1', '.', '2', '"', 1};
			memcpy(buf + n, rr, sizeof(rr));
			n += (ssize_t)sizeof(rr);
			buf[7] = 1; /* ANCOUNT */
		}
		sendto(p->fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static void peer_start(peer_t *p, int answer_from, int version)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	memset(p, 0, sizeof(*p));
	p->answer_from = answer_from;
	p->version = version;
	p->fd = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(p->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(p->fd, (struct sockaddr *)&a, &al);
	p->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&p->th, NULL, peer_main, p), 0);
}

static void peer_stop(peer_t *p)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(p->port)};
	uint8_t stop[12] = {0xff, 0xff};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sendto(fd, stop, sizeof(stop), 0, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	pthread_join(p->th, NULL);
	close(p->fd);
}

static void loopback(struct sockaddr_storage *ss, socklen_t *len, uint16_t port)
{
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	memset(ss, 0, sizeof(*ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*len = sizeof(*a);
}

static void test_probe_ready_retries(void **state)
{
	(void)state;
	peer_t p;
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t q[512];
	dv_probe_result_t res;
	dv_err_t err;

	size_t qlen = dv_probe_build_query(q, sizeof(q), "example.com", 6, 1, true);
	assert_int_equal(qlen, 12 + 13 + 4);
	assert_int_equal(dv_probe_build_query(q, sizeof(q), "bad..name", 6, 1, true), 0);
	peer_start(&p, 3, 0);
	loopback(&ss, &len, p.port);
	/* Tries every 10, 20, 40 ms...: the third is answered. */
	int rc = dv_probe_ready((struct sockaddr *)&ss, len, q, qlen, 3 * DV_NS_PER_S,
	                        10 * DV_NS_PER_MS, &res, &err);
	peer_stop(&p);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(res.attempts, 3);
	assert_int_equal(res.rcode, 0);
	assert_int_equal(p.received, 3);

	/* A peer that never answers: a bounded wait and a clear message. */
	peer_start(&p, 0, 0);
	loopback(&ss, &len, p.port);
	rc = dv_probe_ready((struct sockaddr *)&ss, len, q, qlen, 300 * DV_NS_PER_MS,
	                    20 * DV_NS_PER_MS, &res, &err);
	peer_stop(&p);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(res.attempts >= 3 && res.attempts <= 6);
	assert_int_equal(p.received, (int)res.attempts);
	assert_non_null(
	    strstr(err.msg, "target not ready: no answer to the readiness probe after"));
	assert_true(res.wait_s >= 0.3 && res.wait_s < 5);
}

static void test_probe_version(void **state)
{
	(void)state;
	peer_t p;
	struct sockaddr_storage ss;
	socklen_t len;
	char *v = NULL;
	dv_err_t err;

	peer_start(&p, 1, 1);
	loopback(&ss, &len, p.port);
	int rc = dv_probe_version((struct sockaddr *)&ss, len, 2, 500 * DV_NS_PER_MS, &v, &err);
	peer_stop(&p);
	if (rc != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(v, "test v1.2\"\\001"); /* strings joined; odd bytes escaped */
	free(v);
	/* Answered without a TXT: -ENOENT, no version. */
	peer_start(&p, 1, 0);
	loopback(&ss, &len, p.port);
	rc = dv_probe_version((struct sockaddr *)&ss, len, 2, 500 * DV_NS_PER_MS, &v, &err);
	peer_stop(&p);
	assert_int_equal(rc, -ENOENT);
	assert_null(v);
}

/* A one-target, one-list study whose list is never sent (the flush or probe fails first). */
static void study_for(dv_study_t *s, uint16_t port, const char *flush, uint64_t ready_ns)
{
	memset(s, 0, sizeof(*s));
	s->n_targets = 1;
	s->targets = calloc(1, sizeof(*s->targets));
	s->targets[0].label = xs("lbl");
	loopback(&s->targets[0].addr, &s->targets[0].addr_len, port);
	s->targets[0].flush_cmd = flush ? xs(flush) : NULL;
	s->n_lists = 1;
	s->lists = calloc(1, sizeof(*s->lists));
	s->lists[0].label = xs("SOA");
	s->n_plan = 2;
	s->plan = calloc(2, sizeof(*s->plan));
	s->plan[0] = DV_PASS_COLD;
	s->plan[1] = DV_PASS_HOT;
	s->repeat = 2;
	s->ready_timeout_ns = ready_ns;
	s->query_version = true;
}

static void test_flush_failure_stops(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_study.XXXXXX", cmd[512], path[300], line[256] = "";
	dv_study_t s;
	peer_t p;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/env", dir);
	snprintf(cmd, sizeof(cmd),
	         "echo \"$DV_TARGET_LABEL $DV_TARGET_ADDR $DV_TARGET_PORT $DV_LIST_LABEL "
	         "$DV_REPEAT\" > %s; "
	         "echo to-stderr-not-stdout; exit 3",
	         path);
	peer_start(&p, 1, 0);
	study_for(&s, p.port, cmd, DV_NS_PER_S);
	FILE *devnull = fopen("/dev/null", "w");
	int rc = dv_study_run(&s, devnull, false, NULL);
	fclose(devnull);
	peer_stop(&p);
	assert_int_equal(rc, -ECANCELED);
	assert_int_equal(s.failed, -ECANCELED);
	assert_int_equal(s.n_passes, 0);
	assert_non_null(
	    strstr(s.fail_msg, "target lbl: flush command failed with exit status 3: echo"));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	char want[128];
	snprintf(want, sizeof(want), "lbl 127.0.0.1 %u SOA 1\n", p.port);
	assert_string_equal(line, want);
	/* The study's metadata was completed on the way. */
	assert_non_null(s.hostname);
	assert_non_null(s.kernel);
	assert_true(s.ncpu >= 1);
	snprintf(want, sizeof(want), "127.0.0.1:%u", p.port);
	assert_string_equal(s.targets[0].addr_text, want);
	dv_study_free(&s);

	/* Killed by a signal: said so. */
	study_for(&s, p.port, "kill -TERM $$", DV_NS_PER_S);
	rc = dv_study_run(&s, stdout, true, NULL);
	assert_int_equal(rc, -ECANCELED);
	assert_non_null(strstr(s.fail_msg, "killed by signal 15"));
	dv_study_free(&s);
	unlink(path);
	rmdir(dir);
}

static void test_never_ready_stops(void **state)
{
	(void)state;
	dv_study_t s;
	peer_t p;

	peer_start(&p, 0, 0); /* receives, never answers */
	study_for(&s, p.port, "true", 250 * DV_NS_PER_MS);
	int rc = dv_study_run(&s, stdout, true, NULL);
	peer_stop(&p);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_int_equal(s.failed, -ETIMEDOUT);
	assert_int_equal(s.n_passes, 0);
	assert_non_null(strstr(s.fail_msg, "target lbl: 127.0.0.1:"));
	assert_non_null(strstr(s.fail_msg, "target not ready"));
	assert_null(s.targets[0].server_version);
	/* The probe used ". SOA" (the list is empty) and the version query came first. */
	if (p.received < 3)
		fail_msg("peer received %d queries; %s", p.received, s.fail_msg);
	dv_study_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_shape),
	    cmocka_unit_test(test_table_partial_and_repeated_kind),
	    cmocka_unit_test(test_summary),
	    cmocka_unit_test(test_probe_ready_retries),
	    cmocka_unit_test(test_probe_version),
	    cmocka_unit_test(test_flush_failure_stops),
	    cmocka_unit_test(test_never_ready_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
