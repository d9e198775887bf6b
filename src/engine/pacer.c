/* pacer: open-loop rate control: query k is due at start + k / rate, no drift. */
#include "config.h"

#include "engine/pacer.h"
#include "base/util.h"

#include <math.h>

/*
 * Everything derives from one function, due_count(t): how many queries are due
 * at t, i.e. floor((t - start) * rate / 1e9) + 1 (query 0 is due at start).
 * It is computed from start each time, never by adding increments, so a run of
 * any length is within one query of rate * elapsed.
 *
 * For a whole-number rate (the usual -Q) the product is exact in 128-bit
 * integers: (t - start) up to 2^64 ns times a rate up to 2^53 fits. Other rates
 * use long double (64-bit mantissa), and next_due_ns() corrects its own
 * rounding against due_count() so that "the next one is due at T" and "at T the
 * allowance is at least one" always agree.
 *
 * max_backlog == 0 means no cap (the whole backlog may be sent at once).
 */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int rate_is_integral(double rate)
{
	return rate >= 1 && rate <= 9007199254740992.0 && floor(rate) == rate;
}

/* due_count under a ramp: the integral of the rate from start to t, floored, + 1. */
static uint64_t ramp_due(const dv_pacer_t *p, uint64_t elapsed)
{
	long double r = (long double)p->ramp_ns / 1e9L, t = (long double)elapsed / 1e9L, x;

	if (t < r)
		x = (long double)p->rate_qps * t * t / (2 * r);
	else
		x = (long double)p->rate_qps * (r / 2 + (t - r));
	x = floorl(x);
	return x >= 1.8e19L ? UINT64_MAX : (uint64_t)x + 1;
}

static uint64_t due_count(const dv_pacer_t *p, uint64_t t_ns)
{
	if (t_ns < p->start_ns)
		return 0;
	uint64_t elapsed = t_ns - p->start_ns;
	if (p->ramp_ns != 0)
		return ramp_due(p, elapsed);
	if (rate_is_integral(p->rate_qps)) {
		unsigned __int128 x = (unsigned __int128)elapsed * (uint64_t)p->rate_qps;
		x /= DV_NS_PER_S;
		return x >= UINT64_MAX ? UINT64_MAX : (uint64_t)x + 1;
	}
	long double x = floorl((long double)elapsed * (long double)p->rate_qps / 1e9L);
	if (x >= 1.8e19L)
		return UINT64_MAX;
	return (uint64_t)x + 1;
}

void dv_pacer_init(dv_pacer_t *p, double rate_qps, uint64_t start_ns, uint64_t max_backlog)
{
	p->rate_qps = rate_qps > 0 ? rate_qps : 0;
	p->start_ns = start_ns;
	p->issued = 0;
	p->max_backlog = max_backlog;
	p->forfeited = 0;
	p->ramp_ns = 0;
	p->ts_ns = NULL;
	dv_hist_init(&p->lag);
}

void dv_pacer_set_ramp(dv_pacer_t *p, uint64_t ramp_ns)
{
	p->ramp_ns = p->ts_ns == NULL ? ramp_ns : 0;
}

#define DV_SCHEDULE_ALLOWANCE_MAX 256

void dv_pacer_init_schedule(dv_pacer_t *p, const uint64_t *ts_ns, size_t count, uint64_t period_ns,
                            double speed, uint64_t first_seq, uint64_t step, uint64_t end_seq,
                            uint64_t start_ns)
{
	dv_pacer_init(p, 0, start_ns, 0);
	p->ts_ns = ts_ns;
	p->count = count;
	p->period_ns = period_ns;
	p->speed = speed > 0 ? speed : 1;
	p->first_seq = first_seq;
	p->step = step > 0 ? step : 1;
	p->end_seq = end_seq;
	p->rate_qps = (double)count * 1e9 * p->speed / (double)period_ns;
	if (p->rate_qps <= 0)
		p->rate_qps = 1;
}

/* Due time of this worker's k-th query; UINT64_MAX past its end. */
static uint64_t schedule_due(const dv_pacer_t *p, uint64_t k)
{
	uint64_t seq, pass, t;

	if (k > (UINT64_MAX - p->first_seq) / p->step)
		return UINT64_MAX;
	seq = p->first_seq + k * p->step;
	if (seq >= p->end_seq)
		return UINT64_MAX;
	pass = seq / p->count;
	t = p->ts_ns[seq % p->count];
	if (pass > 0) {
		unsigned __int128 x = (unsigned __int128)pass * p->period_ns + t;
		t = x >= UINT64_MAX ? UINT64_MAX : (uint64_t)x;
	}
	if (p->speed != 1.0) {
		long double x = (long double)t / (long double)p->speed;
		t = x >= 1.8e19L ? UINT64_MAX : (uint64_t)x;
	}
	return add_sat(p->start_ns, t);
}

uint64_t dv_pacer_allowance(dv_pacer_t *p, uint64_t now_ns)
{
	p->now_ns = now_ns;
	if (p->ts_ns != NULL) {
		uint64_t n = 0;
		while (n < DV_SCHEDULE_ALLOWANCE_MAX && schedule_due(p, p->issued + n) <= now_ns)
			n++;
		return n;
	}
	if (p->rate_qps == 0)
		return UINT64_MAX;
	uint64_t due = due_count(p, now_ns);
	if (due <= p->issued)
		return 0;
	uint64_t a = due - p->issued;
	if (p->max_backlog != 0 && a > p->max_backlog) {
		uint64_t excess = a - p->max_backlog;
		p->issued += excess;
		p->forfeited += excess;
		a = p->max_backlog;
	}
	return a;
}

void dv_pacer_take(dv_pacer_t *p, uint64_t n)
{
	for (uint64_t k = 0; p->ts_ns != NULL && k < n; k++) {
		uint64_t due = schedule_due(p, p->issued + k);
		dv_hist_add(&p->lag, p->now_ns > due ? p->now_ns - due : 0);
	}
	p->issued += n;
}

/* Under a ramp: the earliest t with due_count(t) > k, by inverting the integral, then
 * stepping to agree with due_count's rounding (binary search on the last ns). */
static uint64_t ramp_due_ns(const dv_pacer_t *p, uint64_t k)
{
	long double R = (long double)p->rate_qps, r = (long double)p->ramp_ns / 1e9L, t;
	uint64_t lo, hi;

	if ((long double)k < R * r / 2)
		t = sqrtl(2 * r * (long double)k / R);
	else
		t = (long double)k / R + r / 2;
	hi = (uint64_t)(t * 1e9L) + 2;
	lo = hi > 4000 ? hi - 4000 : 0;
	while (lo < hi && due_count(p, p->start_ns + hi) <= k)
		hi += 4000;
	while (lo < hi) { /* smallest elapsed in [lo, hi] with due_count > k */
		uint64_t mid = lo + (hi - lo) / 2;
		if (due_count(p, p->start_ns + mid) > k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return add_sat(p->start_ns, lo);
}

uint64_t dv_pacer_next_due_ns(const dv_pacer_t *p)
{
	if (p->rate_qps == 0 && p->ts_ns == NULL)
		return 0;
	return dv_pacer_due_ns(p, p->issued);
}

uint64_t dv_pacer_due_ns(const dv_pacer_t *p, uint64_t k)
{
	if (p->ts_ns != NULL)
		return schedule_due(p, k);
	if (p->rate_qps == 0 || k == 0)
		return p->start_ns;
	if (p->ramp_ns != 0)
		return ramp_due_ns(p, k);
	uint64_t t;
	if (rate_is_integral(p->rate_qps)) {
		uint64_t r = (uint64_t)p->rate_qps;
		unsigned __int128 x = (unsigned __int128)k * DV_NS_PER_S;
		x = (x + r - 1) / r;
		t = x >= UINT64_MAX ? UINT64_MAX : add_sat(p->start_ns, (uint64_t)x);
		return t;
	}
	long double x = ceill((long double)k * 1e9L / (long double)p->rate_qps);
	if (x >= 1.8e19L)
		return UINT64_MAX;
	t = add_sat(p->start_ns, (uint64_t)x);
	/* Align with due_count()'s rounding; a few ns at most, so the loops are short. */
	for (int i = 0; i < 1000 && t < UINT64_MAX && due_count(p, t) <= k; i++)
		t++;
	for (int i = 0; i < 1000 && t > p->start_ns && due_count(p, t - 1) > k; i++)
		t--;
	return t;
}
