/* pacer: open-loop rate control (-Q) on the monotonic clock. */
#ifndef DV_PACER_H
#define DV_PACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"

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
	/*
	 * Schedule mode (--timing original, dv_pacer_init_schedule): this worker's
	 * k-th query is sequence first_seq + k * step, i.e. list entry s mod count of
	 * pass s / count, due at start + (pass * period_ns + ts_ns[s mod count]) /
	 * speed. Nothing is ever forfeited: a sender that falls behind sends late,
	 * and lag records by how much.
	 */
	const uint64_t *ts_ns; /* NULL: rate mode */
	size_t count;
	uint64_t period_ns, first_seq, step, end_seq;
	double speed;
	uint64_t now_ns; /* time of the last allowance: the send time of what is taken next */
	dv_hist_t lag;   /* schedule mode: ns from each query's due time to its send */
} dv_pacer_t;

void dv_pacer_init(dv_pacer_t *p, double rate_qps, uint64_t start_ns, uint64_t max_backlog);
/* Ramp the rate up from 0 over ramp_ns (0 = no ramp); call right after init (rate mode
 * only: ignored in schedule mode). */
void dv_pacer_set_ramp(dv_pacer_t *p, uint64_t ramp_ns);
/*
 * Schedule mode over a time-ordered list (ts_ns, count, period_ns > 0: see
 * src/input/replay.h) for the sequence numbers first_seq, first_seq + step, ...
 * below end_seq; rate_qps is set to the schedule's mean rate over one period.
 */
void dv_pacer_init_schedule(dv_pacer_t *p, const uint64_t *ts_ns, size_t count, uint64_t period_ns,
                            double speed, uint64_t first_seq, uint64_t step, uint64_t end_seq,
                            uint64_t start_ns);
/* How many queries are due at now_ns and not yet taken (schedule mode: at most 256). */
uint64_t dv_pacer_allowance(dv_pacer_t *p, uint64_t now_ns);
/* Record that n queries were sent (n <= the last allowance); schedule mode adds their lag
 * (the last allowance's now_ns minus each one's due time) to lag. */
void dv_pacer_take(dv_pacer_t *p, uint64_t n);
/* Monotonic time at which the next query is due (now_ns or earlier if one is due). */
uint64_t dv_pacer_next_due_ns(const dv_pacer_t *p);
/*
 * The intended send time of query k (from 0): the earliest t with due_count(t) > k,
 * i.e. start + ceil(k * 1e9 / rate) ns (schedule mode: this worker's k-th query's due
 * time, UINT64_MAX past its end). start_ns for an unlimited pacer. The i-th
 * query of the batch after an allowance is query issued + i.
 */
uint64_t dv_pacer_due_ns(const dv_pacer_t *p, uint64_t k);

#endif
