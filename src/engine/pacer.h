/* pacer: open-loop rate control (-Q) on the monotonic clock. */
#ifndef DV_PACER_H
#define DV_PACER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Query k (counting from 0) is due at start + k / rate. The pacer answers "how
 * many may be sent now" so the caller can send them in one batch, and "when is
 * the next one due" so the caller can sleep exactly that long. Because the
 * schedule is anchored at start, rounding never accumulates: over any run the
 * count sent is within one query of rate * elapsed, unless the sender could not
 * keep up. A sender that falls behind by more than max_backlog queries forfeits
 * the excess (it is never sent in a burst later); forfeited counts the loss.
 *
 * rate_qps == 0 means unlimited: allowance is always UINT64_MAX.
 *
 * A ramp (dv_pacer_set_ramp, resperf mode) makes the rate grow linearly from 0 to
 * rate_qps over ramp_ns, then stay: due_count(t) = floor(R t^2 / 2r) + 1 within the
 * ramp, floor(R r / 2 + R (t - r)) + 1 after it (t, r in seconds).
 */
typedef struct dv_pacer {
	double rate_qps;
	uint64_t start_ns;
	uint64_t issued;      /* queries accounted as sent, including forfeited */
	uint64_t max_backlog; /* burst cap, in queries */
	uint64_t forfeited;
	uint64_t ramp_ns; /* 0, or: the rate grows linearly from 0 to rate_qps over ramp_ns */
} dv_pacer_t;

void dv_pacer_init(dv_pacer_t *p, double rate_qps, uint64_t start_ns, uint64_t max_backlog);
/* Ramp the rate up from 0 over ramp_ns (0 = no ramp); call right after init. */
void dv_pacer_set_ramp(dv_pacer_t *p, uint64_t ramp_ns);
/* How many queries are due at now_ns and not yet taken. */
uint64_t dv_pacer_allowance(dv_pacer_t *p, uint64_t now_ns);
/* Record that n queries were sent (n <= the last allowance). */
void dv_pacer_take(dv_pacer_t *p, uint64_t n);
/* Monotonic time at which the next query is due (now_ns or earlier if one is due). */
uint64_t dv_pacer_next_due_ns(const dv_pacer_t *p);
/*
 * The intended send time of query k (from 0): the earliest t with due_count(t) > k,
 * i.e. start + ceil(k * 1e9 / rate) ns. start_ns for an unlimited pacer. The i-th
 * query of the batch after an allowance is query issued + i.
 */
uint64_t dv_pacer_due_ns(const dv_pacer_t *p, uint64_t k);

#endif
