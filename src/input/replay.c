/* replay: prepare a loaded list for replay: query rewrites, --multiply copies, time order, client
 * cap. */
#include "config.h"

#include "input/replay.h"

#include "base/wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dv_replay_options_init(dv_replay_options_t *o)
{
	memset(o, 0, sizeof(*o));
	o->timing = DV_TIMING_LIST;
	o->speed = 1.0;
	o->multiply = 1;
	o->max_clients = DV_REPLAY_MAX_CLIENTS_DEFAULT;
}

int dv_replay_timing_parse(const char *s, dv_timing_t *t, dv_err_t *err)
{
	if (strcmp(s, "list") == 0)
		*t = DV_TIMING_LIST;
	else if (strcmp(s, "original") == 0)
		*t = DV_TIMING_ORIGINAL;
	else
		return dv_err_set(err, -EINVAL, "--timing: '%s' is not list or original", s);
	return 0;
}

const char *dv_replay_timing_name(dv_timing_t t)
{
	return t == DV_TIMING_ORIGINAL ? "original" : "list";
}

/* Drop the options o asks to drop from an OPT RR's RDATA at rd (rdlen octets); new length. */
static size_t strip_options(uint8_t *rd, size_t rdlen, const dv_replay_options_t *o)
{
	size_t in = 0, out = 0;

	while (in + 4 <= rdlen) {
		uint16_t code = dv_wire_get16(rd + in), olen = dv_wire_get16(rd + in + 2);
		size_t n = 4u + olen;
		if (in + n > rdlen)
			return rdlen; /* a broken option list is left as it is */
		bool drop = o->strip_edns_options || (o->strip_ecs && code == DV_DNS_EDNS_OPT_ECS);
		if (!drop) {
			memmove(rd + out, rd + in, n);
			out += n;
		}
		in += n;
	}
	return in == rdlen ? out : rdlen;
}

int dv_replay_rewrite(uint8_t *msg, size_t *len, size_t qlen, const dv_replay_options_t *o)
{
	size_t n = *len;
	unsigned rrs, ar_first, i;
	dv_wire_cursor_t c;
	int changed = 0;

	if (n < DV_DNS_HEADER_LEN + qlen)
		return -EINVAL;
	if (o->force_rd && !DV_WIRE_RD(msg)) {
		msg[DV_DNS_OFF_FLAGS1] |= DV_DNS_RD;
		changed = 1;
	}
	if (!o->strip_edns_options && !o->strip_ecs)
		return changed;
	ar_first = (unsigned)DV_WIRE_ANCOUNT(msg) + DV_WIRE_NSCOUNT(msg);
	rrs = ar_first + DV_WIRE_ARCOUNT(msg);
	dv_wire_cursor_init(&c, msg, n, DV_DNS_HEADER_LEN + qlen);
	for (i = 0; i < rrs; i++) {
		uint16_t type, rdlen;
		size_t rd, keep;

		dv_wire_skip_name_unfollowed(&c);
		type = dv_wire_read16(&c);
		dv_wire_skip(&c, 6); /* class, ttl */
		rdlen = dv_wire_read16(&c);
		rd = c.pos;
		dv_wire_skip(&c, rdlen);
		if (!c.ok)
			return -EINVAL;
		if (i < ar_first || type != DV_DNS_TYPE_OPT)
			continue;
		keep = strip_options(msg + rd, rdlen, o);
		if (keep != rdlen) {
			memmove(msg + rd + keep, msg + rd + rdlen, n - (rd + rdlen));
			n -= rdlen - keep;
			dv_wire_set16(msg + rd - 2, (uint16_t)keep); /* RDLENGTH */
			c.len = n;
			c.pos = rd + keep;
			changed = 1;
		}
	}
	*len = n;
	return changed;
}

/* Rewrite every query, compacting the arena (a rewrite only shortens). */
static int rewrite_all(dv_querylist_t *ql, const dv_replay_options_t *o, uint64_t *rewritten)
{
	size_t i, w = 0, start = ql->off[0];

	if (ql->qlen == NULL) { /* a text list: its question lengths before its OPT RRs change */
		ql->qlen = malloc(ql->count * sizeof(*ql->qlen));
		if (ql->qlen == NULL)
			return -ENOMEM;
		for (i = 0; i < ql->count; i++)
			ql->qlen[i] = (uint16_t)dv_querylist_question_len(ql, i);
	}
	for (i = 0; i < ql->count; i++) {
		size_t end = ql->off[i + 1], len = end - start;
		memmove(ql->arena + w, ql->arena + start, len);
		if (dv_replay_rewrite(ql->arena + w, &len, ql->qlen[i], o) == 1)
			(*rewritten)++;
		ql->off[i] = (uint32_t)w;
		w += len;
		start = end;
	}
	ql->off[ql->count] = (uint32_t)w;
	ql->arena_len = w;
	ql->opt_len = 0; /* qlen holds every question length now */
	return 0;
}

typedef struct entry {
	uint64_t ts;  /* due offset in the capture's time */
	uint64_t ord; /* copy * count + index: ties keep copy, then capture order */
} entry_t;

static int entry_cmp(const void *a, const void *b)
{
	const entry_t *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* The arrays of a rebuilt list; all or nothing. */
static int rebuild(dv_querylist_t *ql, const entry_t *e, size_t n, size_t copies)
{
	size_t i, w = 0, count = ql->count, clients = ql->clients;
	dv_ql_arrays_t a;

	if (dv_ql_arrays_alloc(&a, n, ql->arena_len * copies, true, true, ql->client != NULL) != 0)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t src = (size_t)(e[i].ord % count), copy = (size_t)(e[i].ord / count), len;
		const uint8_t *q = dv_querylist_get(ql, src, &len);
		memcpy(a.arena + w, q, len);
		a.off[i] = (uint32_t)w;
		w += len;
		a.qlen[i] = (uint16_t)dv_querylist_question_len(ql, src);
		a.ts_ns[i] = e[i].ts;
		if (a.client != NULL)
			a.client[i] = (uint32_t)(ql->client[src] + copy * clients);
	}
	a.off[n] = (uint32_t)w;
	a.arena_len = w;
	dv_querylist_adopt(ql, &a);
	ql->opt_len = 0;
	if (ql->client != NULL)
		ql->clients = clients * copies;
	return 0;
}

/* Copies (rotated) and time order of a timed list. */
static int order_timed(dv_querylist_t *ql, uint32_t copies, dv_err_t *err)
{
	size_t count = ql->count, n, i;
	uint32_t k;
	entry_t *e;
	int rc;

	if ((uint64_t)ql->arena_len * copies >= UINT32_MAX ||
	    (uint64_t)count * copies >= UINT32_MAX)
		return dv_err_set(err, -E2BIG, "%s: --multiply %u makes the list too large",
		                  ql->source ? ql->source : "list", copies);
	n = count * copies;
	e = malloc(n * sizeof(*e));
	if (e == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	for (k = 0; k < copies; k++) {
		uint64_t shift = (uint64_t)((unsigned __int128)ql->period_ns * k / copies);
		for (i = 0; i < count; i++) {
			e[k * count + i].ts = (ql->ts_ns[i] + shift) % ql->period_ns;
			e[k * count + i].ord = (uint64_t)k * count + i;
		}
	}
	qsort(e, n, sizeof(*e), entry_cmp);
	rc = rebuild(ql, e, n, copies);
	free(e);
	return rc == 0 ? 0 : dv_err_set(err, rc, "out of memory");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Cap the clients (c mod max) and fill the per-client figures. */
static int spread_clients(dv_querylist_t *ql, uint32_t max, dv_replay_info_t *info)
{
	size_t i;
	uint64_t *per;

	if (ql->client == NULL)
		return 0;
	if (max > 0 && ql->clients > max) {
		for (i = 0; i < ql->count; i++)
			ql->client[i] %= max;
		ql->clients = max;
	}
	per = calloc(ql->clients, sizeof(*per));
	if (per == NULL)
		return -ENOMEM;
	for (i = 0; i < ql->count; i++)
		per[ql->client[i]]++;
	qsort(per, ql->clients, sizeof(*per), cmp_u64);
	info->clients = ql->clients;
	info->per_client_min = per[0];
	info->per_client_median = per[(ql->clients - 1) / 2];
	info->per_client_max = per[ql->clients - 1];
	free(per);
	return 0;
}

/* period_ns and captured_qps of a timed list as read. */
static void measure_schedule(dv_querylist_t *ql, dv_replay_info_t *info)
{
	uint64_t span = 0, gap;
	size_t i;

	for (i = 0; i < ql->count; i++)
		span = DV_MAX(span, ql->ts_ns[i]);
	gap = ql->count > 1 ? span / (ql->count - 1) : 0;
	ql->period_ns = span + gap > 0 ? span + gap : DV_NS_PER_MS;
	info->captured_qps = span > 0 ? (double)(ql->count - 1) * 1e9 / (double)span : 0;
}

void dv_replay_duration_text(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		double from, unit_ns; /* this unit from `from` ns on */
		const char *name;
	} units[] = {{365.25 * 86400e9, 365.25 * 86400e9, "years"},
	             {2 * 86400e9, 86400e9, "days"},
	             {2 * 3600e9, 3600e9, "h"},
	             {120e9, 60e9, "min"},
	             {1e9, 1e9, "s"},
	             {1e6, 1e6, "ms"},
	             {0, 1e3, "us"}};
	double v = (double)ns;
	size_t i = 0;

	while (v < units[i].from)
		i++;
	v /= units[i].unit_ns;
	snprintf(buf, size, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[i].name);
}

/*
 * Cut every gap above DV_REPLAY_MAX_GAP_NS in a time-ordered list to the mean of the other
 * gaps. A capture is one stretch of traffic: an hour of silence in it is a clock that
 * jumped (a packet stamped 1970, or 2100), and replaying it would wait that long.
 */
static void cut_gaps(dv_querylist_t *ql, dv_replay_info_t *info)
{
	uint64_t *ts = ql->ts_ns, long_sum = 0, shift = 0, prev;
	size_t n = ql->count, i;

	for (i = 1; i < n; i++) {
		uint64_t gap = ts[i] - ts[i - 1];
		if (gap > DV_REPLAY_MAX_GAP_NS) {
			info->gaps_cut++;
			long_sum += gap;
			info->longest_gap_ns = DV_MAX(info->longest_gap_ns, gap);
		}
	}
	if (info->gaps_cut == 0)
		return;
	if (n - 1 > info->gaps_cut)
		info->gap_kept_ns = (ts[n - 1] - ts[0] - long_sum) / (n - 1 - info->gaps_cut);
	for (prev = ts[0], i = 1; i < n; i++) {
		uint64_t t = ts[i];
		if (t - prev > DV_REPLAY_MAX_GAP_NS)
			shift += t - prev - info->gap_kept_ns;
		prev = t;
		ts[i] = t - shift;
	}
}

int dv_replay_prepare(dv_querylist_t *ql, const dv_replay_options_t *o, dv_replay_info_t *info,
                      dv_err_t *err)
{
	dv_replay_info_t local;
	const char *name = ql->source != NULL ? ql->source : "list";
	bool sorted = true;
	size_t i;
	int rc;

	if (info == NULL)
		info = &local;
	memset(info, 0, sizeof(*info));
	info->timed = ql->ts_ns != NULL;
	info->captured_clients = ql->clients;
	if (!info->timed && o->timing == DV_TIMING_ORIGINAL)
		return dv_err_set(err, -EINVAL,
		                  "%s: --timing original needs capture times (a pcap or dnstap "
		                  "input); this input has none",
		                  name);
	if (!info->timed && o->multiply > 1)
		return dv_err_set(err, -EINVAL,
		                  "%s: --multiply needs capture times (a pcap or dnstap input)",
		                  name);
	if (o->strip_edns_options || o->strip_ecs || o->force_rd) {
		rc = rewrite_all(ql, o, &info->rewritten);
		if (rc != 0)
			return dv_err_set(err, rc, "out of memory");
	}
	if (info->timed) {
		measure_schedule(ql, info);
		for (i = 1; i < ql->count && sorted; i++)
			sorted = ql->ts_ns[i - 1] <= ql->ts_ns[i];
		if (!sorted && (rc = order_timed(ql, 1, err)) != 0)
			return rc;
		cut_gaps(ql, info);
		if (info->gaps_cut > 0)
			measure_schedule(ql, info);
		if (o->multiply > 1 && (rc = order_timed(ql, o->multiply, err)) != 0)
			return rc;
		info->schedule_qps = info->captured_qps * DV_MAX(o->multiply, 1u) * o->speed;
	}
	rc = spread_clients(ql, o->max_clients, info);
	if (rc != 0)
		return dv_err_set(err, rc, "out of memory");
	return 0;
}
