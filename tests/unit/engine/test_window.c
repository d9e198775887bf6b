/* test_window: ID reuse order, expiry order, cancel, out-of-order completion, capacity, peak,
 * per-socket counts. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>

#include <cmocka.h>

#include "engine/window.h"

/* Walk the in-flight list both ways and check it against the expected send order. */
static void check_list(const dv_window_t *w, const uint16_t *want, uint32_t n)
{
	assert_int_equal(w->inflight, n);
	uint32_t id = w->head, k = 0, prev = DV_WINDOW_NIL;
	while (id != DV_WINDOW_NIL) {
		assert_true(k < n);
		assert_int_equal(id, want[k]);
		assert_int_equal(w->slot[id].state, DV_SLOT_INFLIGHT);
		assert_int_equal(w->slot[id].prev, prev);
		prev = id;
		id = w->slot[id].next;
		k++;
	}
	assert_int_equal(k, n);
	assert_int_equal(w->tail, n ? want[n - 1] : DV_WINDOW_NIL);
	assert_int_equal(w->free_count + w->inflight, DV_WINDOW_IDS);
}

static void test_init_errors(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 0), -EINVAL);
	dv_window_free(&w);
	assert_int_equal(dv_window_init(&w, DV_WINDOW_IDS + 1), -EINVAL);
	dv_window_free(&w);
	assert_int_equal(dv_window_init(&w, DV_WINDOW_IDS), 0);
	assert_int_equal(dv_window_room(&w), DV_WINDOW_IDS);
	assert_int_equal(w.head, DV_WINDOW_NIL);
	assert_int_equal(dv_window_oldest_expired(&w, UINT64_MAX), -1);
	dv_window_free(&w);
	dv_window_free(NULL);
}

static void test_initial_order_and_fields(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 100), 0);
	uint16_t want[10];
	for (uint16_t i = 0; i < 10; i++) {
		uint16_t id = dv_window_acquire(&w, 1000 + i, (uint16_t)(i % 3), 50 + i);
		assert_int_equal(id, i);
		want[i] = i;
		assert_int_equal(w.slot[id].qidx, 1000 + i);
		assert_int_equal(w.slot[id].sock, i % 3);
		assert_int_equal(w.slot[id].sent_ns, 50 + i);
	}
	check_list(&w, want, 10);
	assert_int_equal(dv_window_room(&w), 90);
	dv_window_free(&w);
}

static void test_reuse_oldest_freed_first(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, DV_WINDOW_IDS), 0);
	/* Use all 65536 IDs once, completing each at once: 0..65535 in order. */
	for (uint32_t i = 0; i < DV_WINDOW_IDS; i++) {
		uint16_t id = dv_window_acquire(&w, i, 0, i);
		assert_int_equal(id, i);
		dv_window_complete(&w, id);
		assert_int_equal(w.slot[id].state, DV_SLOT_DONE);
	}
	/* Now they come back in the order they were freed: 0, 1, 2, ... */
	uint16_t a = dv_window_acquire(&w, 0, 0, 0);
	uint16_t b = dv_window_acquire(&w, 0, 0, 0);
	uint16_t c = dv_window_acquire(&w, 0, 0, 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 2);
	/* Free in the order c, a, b: after the other 65533 free ones they come c, a, b. */
	dv_window_complete(&w, c);
	dv_window_complete(&w, a);
	dv_window_complete(&w, b);
	for (uint32_t i = 3; i < DV_WINDOW_IDS; i++) {
		uint16_t id = dv_window_acquire(&w, 0, 0, 0);
		assert_int_equal(id, i);
		dv_window_complete(&w, id);
	}
	/* After 3..65535 were reused and freed again, the head is c, a, b. */
	assert_int_equal(dv_window_acquire(&w, 0, 0, 0), 2);
	assert_int_equal(dv_window_acquire(&w, 0, 0, 0), 0);
	assert_int_equal(dv_window_acquire(&w, 0, 0, 0), 1);
	dv_window_free(&w);
}

static void test_timed_out_id_reused_last(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 10), 0);
	uint16_t t = dv_window_acquire(&w, 7, 0, 100); /* id 0 */
	assert_int_equal(t, 0);
	assert_int_equal(dv_window_oldest_expired(&w, 99), -1);
	assert_int_equal(dv_window_oldest_expired(&w, 100), 0);
	dv_window_expire(&w, t);
	assert_int_equal(w.slot[t].state, DV_SLOT_TIMEDOUT);
	assert_int_equal(w.inflight, 0);
	/* Every other ID (1..65535) is handed out before 0 comes back. */
	for (uint32_t i = 1; i < DV_WINDOW_IDS; i++) {
		uint16_t id = dv_window_acquire(&w, i, 0, 200);
		assert_int_not_equal(id, t);
		assert_int_equal(id, i);
		dv_window_complete(&w, id);
	}
	/* Meanwhile the timed-out slot still remembers its query; a late answer marks it. */
	assert_int_equal(w.slot[t].state, DV_SLOT_TIMEDOUT);
	assert_int_equal(w.slot[t].qidx, 7);
	dv_window_mark_late(&w, t);
	assert_int_equal(w.slot[t].state, DV_SLOT_LATE);
	dv_window_mark_late(&w, t); /* twice: still LATE */
	assert_int_equal(w.slot[t].state, DV_SLOT_LATE);
	/* A stray complete/expire on a slot not in flight changes nothing. */
	dv_window_complete(&w, t);
	dv_window_expire(&w, t);
	assert_int_equal(w.slot[t].state, DV_SLOT_LATE);
	assert_int_equal(w.free_count, DV_WINDOW_IDS);
	assert_int_equal(dv_window_acquire(&w, 0, 0, 300), t);
	assert_int_equal(w.slot[t].state, DV_SLOT_INFLIGHT);
	dv_window_free(&w);
}

static void test_expiry_order(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 1000), 0);
	for (uint32_t i = 0; i < 100; i++)
		dv_window_acquire(&w, i, 0, 1000 + 10 * i);
	/* Answer every third one out of order. */
	for (uint32_t i = 99; i < 100; i -= 3)
		dv_window_complete(&w, (uint16_t)i);
	/* Everything sent at or before 1500 expires, oldest first, one head look each. */
	uint32_t expired = 0;
	int32_t id, last = -1;
	while ((id = dv_window_oldest_expired(&w, 1500)) >= 0) {
		assert_true(id > last);
		assert_true(w.slot[id].sent_ns <= 1500);
		assert_true(id % 3 != 0);
		last = id;
		dv_window_expire(&w, (uint16_t)id);
		expired++;
		assert_true(expired <= 100);
	}
	/* ids 0..50 sent at <= 1500; those with id % 3 == 0 (0,3,...,48: 17) were answered. */
	assert_int_equal(expired, 51 - 17);
	assert_int_equal(w.head, 52); /* 51 was answered */
	assert_int_equal(w.slot[w.head].sent_ns, 1520);
	assert_int_equal(dv_window_oldest_expired(&w, 1519), -1);
	dv_window_free(&w);
}

static void test_cancel(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 4), 0);
	uint16_t a = dv_window_acquire(&w, 0, 0, 1);
	uint16_t b = dv_window_acquire(&w, 1, 0, 2);
	uint16_t c = dv_window_acquire(&w, 2, 0, 3);
	dv_window_cancel(&w, b);
	assert_int_equal(w.slot[b].state, DV_SLOT_FREE);
	uint16_t want[] = {a, c};
	check_list(&w, want, 2);
	dv_window_cancel(&w, a);
	check_list(&w, &c, 1);
	dv_window_cancel(&w, c);
	check_list(&w, NULL, 0);
	assert_int_equal(w.head, DV_WINDOW_NIL);
	dv_window_cancel(&w, c); /* not in flight: no-op */
	assert_int_equal(w.free_count, DV_WINDOW_IDS);
	dv_window_free(&w);
}

static void test_complete_out_of_order(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 8), 0);
	for (uint16_t i = 0; i < 8; i++)
		dv_window_acquire(&w, i, 0, i);
	/* Middle, tail, head. */
	dv_window_complete(&w, 4);
	uint16_t w1[] = {0, 1, 2, 3, 5, 6, 7};
	check_list(&w, w1, 7);
	dv_window_complete(&w, 7);
	uint16_t w2[] = {0, 1, 2, 3, 5, 6};
	check_list(&w, w2, 6);
	dv_window_complete(&w, 0);
	uint16_t w3[] = {1, 2, 3, 5, 6};
	check_list(&w, w3, 5);
	/* New ones go to the tail. */
	uint16_t n = dv_window_acquire(&w, 99, 0, 100);
	assert_int_equal(n, 8);
	uint16_t w4[] = {1, 2, 3, 5, 6, 8};
	check_list(&w, w4, 6);
	assert_int_equal(w.slot[4].state, DV_SLOT_DONE);
	assert_int_equal(w.slot[7].state, DV_SLOT_DONE);
	dv_window_free(&w);
}

static void test_capacity_and_peak(void **state)
{
	(void)state;
	dv_window_t w;
	assert_int_equal(dv_window_init(&w, 3), 0);
	assert_int_equal(dv_window_room(&w), 3);
	uint16_t a = dv_window_acquire(&w, 0, 0, 0);
	dv_window_acquire(&w, 0, 0, 0);
	assert_int_equal(w.peak, 2);
	dv_window_complete(&w, a);
	assert_int_equal(w.peak, 2);
	dv_window_acquire(&w, 0, 0, 0);
	dv_window_acquire(&w, 0, 0, 0);
	assert_int_equal(dv_window_room(&w), 0);
	assert_int_equal(w.inflight, 3);
	assert_int_equal(w.peak, 3);
	dv_window_free(&w);

	/* Full 65536: every ID in flight at once, all distinct. */
	assert_int_equal(dv_window_init(&w, DV_WINDOW_IDS), 0);
	for (uint32_t i = 0; i < DV_WINDOW_IDS; i++)
		assert_int_equal(dv_window_acquire(&w, i, 0, i), i);
	assert_int_equal(dv_window_room(&w), 0);
	assert_int_equal(w.free_count, 0);
	assert_int_equal(w.peak, DV_WINDOW_IDS);
	assert_int_equal(w.head, 0);
	assert_int_equal(w.tail, DV_WINDOW_IDS - 1);
	/* Drain by expiry from the head. */
	uint32_t n = 0;
	int32_t id;
	while ((id = dv_window_oldest_expired(&w, UINT64_MAX)) >= 0 && n <= DV_WINDOW_IDS) {
		assert_int_equal(id, n);
		dv_window_expire(&w, (uint16_t)id);
		n++;
	}
	assert_int_equal(n, DV_WINDOW_IDS);
	assert_int_equal(w.free_count, DV_WINDOW_IDS);
	dv_window_free(&w);
}

/* Random operations against a simple model: the FIFO and the list stay consistent. */
static void test_random_against_model(void **state)
{
	(void)state;
	dv_window_t w;
	const uint32_t cap = 500;
	assert_int_equal(dv_window_init(&w, cap), 0);
	uint16_t *order = malloc(DV_WINDOW_IDS * sizeof(*order)); /* model of the free FIFO */
	uint16_t *fly = malloc(cap * sizeof(*fly));               /* model of flight, send order */
	assert_non_null(order);
	assert_non_null(fly);
	uint32_t qh = 0, qn = DV_WINDOW_IDS, nf = 0;
	for (uint32_t i = 0; i < DV_WINDOW_IDS; i++)
		order[i] = (uint16_t)i;
	uint64_t x = 12345;
	for (int step = 0; step < 300000; step++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t r = (uint32_t)(x >> 33);
		if (nf < cap && (r % 2 == 0 || nf == 0)) {
			uint16_t id = dv_window_acquire(&w, (uint32_t)step, 0, (uint64_t)step);
			assert_int_equal(id, order[qh]);
			qh = (qh + 1) % DV_WINDOW_IDS;
			qn--;
			fly[nf++] = id;
		} else {
			uint32_t k = (r >> 1) % nf;
			if (r % 7 == 1)
				k = 0; /* expire the oldest */
			uint16_t id = fly[k];
			if (k == 0 && r % 7 == 1) {
				assert_int_equal(dv_window_oldest_expired(&w, UINT64_MAX), id);
				dv_window_expire(&w, id);
			} else if (r % 7 == 3) {
				dv_window_cancel(&w, id);
			} else {
				dv_window_complete(&w, id);
			}
			for (uint32_t j = k; j + 1 < nf; j++)
				fly[j] = fly[j + 1];
			nf--;
			order[(qh + qn) % DV_WINDOW_IDS] = id;
			qn++;
		}
		if (step % 9973 == 0)
			check_list(&w, fly, nf);
	}
	check_list(&w, fly, nf);
	free(order);
	free(fly);
	dv_window_free(&w);
}

/*
 * Per-socket counts: every way out of flight (answer, expiry, cancel) takes one
 * off the socket that sent it; a second answer, a late mark or a cancel of a slot
 * no longer in flight takes nothing. Checked against a model through random steps.
 */
static void test_per_socket_counts(void **state)
{
	(void)state;
	dv_window_t w;
	const uint32_t cap = 300, nsocks = 5;
	uint32_t model[5] = {0};
	uint16_t fly[300];
	uint32_t nf = 0;
	uint64_t x = 99;

	assert_int_equal(dv_window_init(&w, cap), 0);
	assert_null(w.per_sock);
	assert_int_equal(dv_window_count_sockets(&w, 0), -EINVAL);
	assert_int_equal(dv_window_count_sockets(&w, 65537), -EINVAL);
	assert_int_equal(dv_window_count_sockets(&w, nsocks), 0);
	assert_int_equal(dv_window_count_sockets(&w, nsocks), -EINVAL); /* once */
	for (int step = 0; step < 100000; step++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		uint32_t r = (uint32_t)(x >> 33);
		if (nf < cap && (r % 2 == 0 || nf == 0)) {
			uint16_t sock = (uint16_t)((r >> 3) % nsocks);
			fly[nf++] = dv_window_acquire(&w, (uint32_t)step, sock, (uint64_t)step);
			model[sock]++;
			continue;
		}
		uint32_t k = (r % 7 == 1) ? 0 : (r >> 1) % nf;
		uint16_t id = fly[k];
		model[w.slot[id].sock]--;
		if (r % 7 == 1) {
			dv_window_expire(&w, id);
			dv_window_mark_late(&w, id);
		} else if (r % 7 == 3) {
			dv_window_cancel(&w, id);
		} else {
			dv_window_complete(&w, id);
		}
		dv_window_complete(&w, id); /* a duplicate answer: no second decrement */
		dv_window_cancel(&w, id);
		for (uint32_t j = k; j + 1 < nf; j++)
			fly[j] = fly[j + 1];
		nf--;
		uint32_t sum = 0;
		for (uint32_t i = 0; i < nsocks; i++) {
			assert_int_equal(w.per_sock[i], model[i]);
			sum += model[i];
		}
		assert_int_equal(sum, w.inflight);
	}
	dv_window_free(&w);
	assert_null(w.per_sock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init_errors),
	    cmocka_unit_test(test_initial_order_and_fields),
	    cmocka_unit_test(test_reuse_oldest_freed_first),
	    cmocka_unit_test(test_timed_out_id_reused_last),
	    cmocka_unit_test(test_expiry_order),
	    cmocka_unit_test(test_cancel),
	    cmocka_unit_test(test_complete_out_of_order),
	    cmocka_unit_test(test_capacity_and_peak),
	    cmocka_unit_test(test_random_against_model),
	    cmocka_unit_test(test_per_socket_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
