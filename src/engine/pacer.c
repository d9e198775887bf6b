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

static int rate_is_integral(double rate)
{
	return rate >= 1 && rate <= 9007199254740992.0 && floor(rate) == rate;
}

static uint64_t due_count(const dv_pacer_t *p, uint64_t t_ns)
{
	if (t_ns < p->start_ns)
		return 0;
	uint64_t elapsed = t_ns - p->start_ns;
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
}

uint64_t dv_pacer_allowance(dv_pacer_t *p, uint64_t now_ns)
{
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
	p->issued += n;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t dv_pacer_next_due_ns(const dv_pacer_t *p)
{
	if (p->rate_qps == 0)
		return 0;
	return dv_pacer_due_ns(p, p->issued);
}

uint64_t dv_pacer_due_ns(const dv_pacer_t *p, uint64_t k)
{
	if (p->rate_qps == 0 || k == 0)
		return p->start_ns;
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
