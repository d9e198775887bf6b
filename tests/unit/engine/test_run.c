/* test_run: the work split of a pass over -T workers (dv_run_split): sockets, -q, -Q, sequences;
 * the --client-range addresses (dv_run_client_addr). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "engine/run_config.h"

#define MAX_T 64

static void config(dv_run_config_t *cfg, uint32_t sockets, uint32_t threads, uint32_t q, double qps)
{
	dv_run_config_init(cfg);
	cfg->sockets = sockets;
	cfg->threads = threads;
	cfg->max_outstanding = q;
	cfg->max_qps = qps;
}

/* Sequence numbers of one worker below its end: first, first + step, ... */
static uint64_t seq_count(const dv_run_share_t *s)
{
	if (s->end_seq <= s->first_seq)
		return 0;
	return (s->end_seq - s->first_seq + s->step - 1) / s->step;
}

static void split_all(const dv_run_config_t *cfg, uint64_t count, dv_run_share_t *sh)
{
	uint32_t i;

	assert_true(cfg->threads <= MAX_T);
	for (i = 0; i < cfg->threads; i++)
		dv_run_split(cfg, count, i, &sh[i]);
}

static void test_awkward_examples(void **state)
{
	dv_run_config_t cfg;
	dv_run_share_t sh[MAX_T];

	(void)state;
	/* -c 5 -T 2: 3 + 2 sockets, the second worker's first is global socket 3 */
	config(&cfg, 5, 2, 2, 0);
	split_all(&cfg, 10, sh);
	assert_int_equal(sh[0].nsocks, 3);
	assert_int_equal(sh[0].first_sock, 0);
	assert_int_equal(sh[1].nsocks, 2);
	assert_int_equal(sh[1].first_sock, 3);
	assert_true(sh[0].rate_qps == 0 && sh[1].rate_qps == 0);

	/* -q 7 -T 3: windows of 3 + 2 + 2 */
	config(&cfg, 3, 3, 7, 0);
	split_all(&cfg, 10, sh);
	assert_int_equal(sh[0].capacity, 3);
	assert_int_equal(sh[1].capacity, 2);
	assert_int_equal(sh[2].capacity, 2);
	assert_int_equal(sh[0].nsocks + sh[1].nsocks + sh[2].nsocks, 3);

	/* -Q 1000 -T 3: 1000/3 each (a double), adding up to 1000 */
	config(&cfg, 3, 3, 3, 1000);
	split_all(&cfg, 7, sh);
	assert_true(sh[0].rate_qps == 1000.0 / 3);
	assert_true(sh[1].rate_qps == sh[0].rate_qps && sh[2].rate_qps == sh[0].rate_qps);
	assert_true(fabs(sh[0].rate_qps + sh[1].rate_qps + sh[2].rate_qps - 1000.0) < 1e-9);

	/* a 7-query list over 3 workers: sequences 0,3,6 / 1,4 / 2,5 */
	assert_int_equal(sh[0].end_seq, 7);
	assert_int_equal(seq_count(&sh[0]), 3);
	assert_int_equal(seq_count(&sh[1]), 2);
	assert_int_equal(seq_count(&sh[2]), 2);
	assert_int_equal(sh[1].first_seq, 1);
	assert_int_equal(sh[1].step, 3);

	/* more workers than queries: the last ones send nothing */
	config(&cfg, 4, 4, 4, 0);
	split_all(&cfg, 2, sh);
	assert_int_equal(seq_count(&sh[0]) + seq_count(&sh[1]), 2);
	assert_int_equal(seq_count(&sh[2]) + seq_count(&sh[3]), 0);
}

static void test_end_of_sequence(void **state)
{
	dv_run_config_t cfg;
	dv_run_share_t s;

	(void)state;
	config(&cfg, 2, 2, 2, 0);
	dv_run_split(&cfg, 1000, 1, &s); /* neither -n nor -l: one pass */
	assert_int_equal(s.end_seq, 1000);
	cfg.passes = 3; /* -n 3 */
	dv_run_split(&cfg, 1000, 1, &s);
	assert_int_equal(s.end_seq, 3000);
	cfg.time_limit_ns = 1; /* -n 3 -l: -n still bounds the sequence */
	dv_run_split(&cfg, 1000, 1, &s);
	assert_int_equal(s.end_seq, 3000);
	cfg.passes = 0; /* -l only: until the time limit */
	dv_run_split(&cfg, 1000, 1, &s);
	assert_true(s.end_seq == UINT64_MAX);
}

/*
 * The wire clock's sample (dv_run_stamp_every): 1 in 16 unpaced; every query paced, with -v
 * or --latency-histogram, and in a pass of at most DV_STAMP_ALL_MAX queries (its sequence
 * end: -n over a short list); --clock wire:1/N over all of these.
 */
static void test_stamp_every(void **state)
{
	dv_run_config_t cfg;

	(void)state;
	dv_run_config_init(&cfg);
	assert_int_equal(dv_run_stamp_every(&cfg, 0, UINT64_MAX), DV_STAMP_EVERY_DEFAULT);
	assert_int_equal(dv_run_stamp_every(&cfg, 0, DV_STAMP_ALL_MAX + 1), DV_STAMP_EVERY_DEFAULT);
	assert_int_equal(dv_run_stamp_every(&cfg, 0, DV_STAMP_ALL_MAX), 1);
	assert_int_equal(dv_run_stamp_every(&cfg, 0, 1), 1);
	assert_int_equal(dv_run_stamp_every(&cfg, 500, UINT64_MAX), 1); /* paced */
	cfg.verbose = true;
	assert_int_equal(dv_run_stamp_every(&cfg, 0, UINT64_MAX), 1);
	cfg.verbose = false;
	cfg.every_latency = true;
	assert_int_equal(dv_run_stamp_every(&cfg, 0, UINT64_MAX), 1);
	cfg.stamp_every = 16; /* --clock wire:1/16 wins, a short pass too */
	assert_int_equal(dv_run_stamp_every(&cfg, 0, 1), 16);
	assert_int_equal(dv_run_stamp_every(&cfg, 500, UINT64_MAX), 16);
}

/* Every split of n over t: exact totals, contiguous sockets, larger shares first, off by one at
 * most. */
static void test_totals_exact(void **state)
{
	dv_run_config_t cfg;
	dv_run_share_t sh[MAX_T];
	uint32_t t, n, i;

	(void)state;
	for (t = 1; t <= 17; t++) {
		for (n = t; n <= 300; n++) {
			uint64_t socks = 0, cap = 0, seqs = 0;
			uint64_t count =
			    n * 7 + t; /* a list length that is rarely a multiple of t */

			config(&cfg, n, t, n + t / 2, 0);
			cfg.passes = 2;
			split_all(&cfg, count, sh);
			for (i = 0; i < t; i++) {
				assert_int_equal(sh[i].first_sock, socks);
				assert_true(sh[i].nsocks >= 1);
				assert_true(sh[i].capacity >= 1);
				if (i > 0) {
					assert_true(sh[i].nsocks <= sh[i - 1].nsocks);
					assert_true(sh[i - 1].nsocks - sh[i].nsocks <= 1);
					assert_true(sh[i].capacity <= sh[i - 1].capacity);
					assert_true(sh[i - 1].capacity - sh[i].capacity <= 1);
				}
				assert_int_equal(sh[i].first_seq, i);
				assert_int_equal(sh[i].step, t);
				assert_int_equal(sh[i].end_seq, 2 * count);
				socks += sh[i].nsocks;
				cap += sh[i].capacity;
				seqs += seq_count(&sh[i]);
			}
			assert_int_equal(socks, n);
			assert_int_equal(cap, n + t / 2);
			assert_int_equal(seqs, 2 * count);
		}
	}
}

/* Each sequence number below the end belongs to exactly one worker. */
static void test_sequences_disjoint(void **state)
{
	dv_run_config_t cfg;
	dv_run_share_t sh[MAX_T];
	unsigned char seen[200];
	uint32_t t, i;
	uint64_t s;

	(void)state;
	for (t = 1; t <= 9; t++) {
		config(&cfg, t, t, t, 0);
		split_all(&cfg, 173, sh);
		for (s = 0; s < sizeof(seen); s++)
			seen[s] = 0;
		for (i = 0; i < t; i++)
			for (s = sh[i].first_seq; s < sh[i].end_seq; s += sh[i].step)
				seen[s]++;
		for (s = 0; s < 173; s++)
			assert_int_equal(seen[s], 1);
		for (; s < sizeof(seen); s++)
			assert_int_equal(seen[s], 0);
	}
}

/* --client-range: index i is base + (i mod size), port 0; IPv6 carries across bytes. */
static void test_client_addr(void **state)
{
	dv_run_config_t cfg;
	struct sockaddr_storage a;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&cfg.client_base;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&cfg.client_base;
	char text[INET6_ADDRSTRLEN];

	(void)state;
	dv_run_config_init(&cfg);
	cfg.client_base.ss_family = AF_INET;
	cfg.client_base_len = sizeof(*s4);
	inet_pton(AF_INET, "127.0.0.1", &s4->sin_addr);
	s4->sin_port = htons(53);
	cfg.client_range_size = 254; /* 127.0.0.0/24 */
	dv_run_client_addr(&cfg, 0, &a);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, text, sizeof(text));
	assert_string_equal(text, "127.0.0.1");
	assert_int_equal(((struct sockaddr_in *)&a)->sin_port, 0);
	dv_run_client_addr(&cfg, 253, &a);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, text, sizeof(text));
	assert_string_equal(text, "127.0.0.254");
	dv_run_client_addr(&cfg, 254 + 5, &a); /* wraps */
	inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, text, sizeof(text));
	assert_string_equal(text, "127.0.0.6");

	memset(&cfg.client_base, 0, sizeof(cfg.client_base));
	cfg.client_base.ss_family = AF_INET6;
	cfg.client_base_len = sizeof(*s6);
	inet_pton(AF_INET6, "fd00::ff", &s6->sin6_addr);
	cfg.client_range_size = UINT32_MAX;
	dv_run_client_addr(&cfg, 0x101, &a);
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a)->sin6_addr, text, sizeof(text));
	assert_string_equal(text, "fd00::200");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_awkward_examples), cmocka_unit_test(test_end_of_sequence),
	    cmocka_unit_test(test_totals_exact),     cmocka_unit_test(test_sequences_disjoint),
	    cmocka_unit_test(test_client_addr),      cmocka_unit_test(test_stamp_every),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
