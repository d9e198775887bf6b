/* stats: the counter table, merging per-worker counters, qtype breakdown, rcode names. */
#include "config.h"

#include "engine/stats.h"

#include "base/util.h"

#include <stdio.h>
#include <string.h>

void dv_stats_init(dv_stats_t *s)
{
	memset(&s->c, 0, sizeof(s->c));
	dv_hist_init(&s->latency);
	dv_hist_init(&s->latency_intended);
	dv_hist_init(&s->connect);
	dv_hist_init(&s->handshake);
}

static dv_qtype_count_t *qtype_slot(dv_counters_t *c, uint16_t qtype)
{
	size_t i;

	for (i = 0; i < DV_QTYPE_SLOTS; i++) {
		if (c->qtype[i].qtype == qtype)
			return &c->qtype[i];
		if (c->qtype[i].qtype == 0) {
			c->qtype[i].qtype = qtype;
			return &c->qtype[i];
		}
	}
	return NULL;
}

void dv_stats_qtype_sent(dv_counters_t *c, uint16_t qtype)
{
	dv_qtype_count_t *q = qtype_slot(c, qtype);

	if (q != NULL)
		q->sent++;
	else
		c->qtype_other_sent++;
}

void dv_stats_qtype_completed(dv_counters_t *c, uint16_t qtype)
{
	dv_qtype_count_t *q = qtype_slot(c, qtype);

	if (q != NULL)
		q->completed++;
	else
		c->qtype_other_completed++;
}

const dv_counter_field_t dv_counter_fields[] = {
#define DV_COUNTER_FIELD_(field, csv, metrics, flags)                                              \
	{#field, csv, metrics, flags, offsetof(dv_counters_t, field)},
    DV_COUNTERS(DV_COUNTER_FIELD_)
#undef DV_COUNTER_FIELD_
};
const size_t dv_counter_nfields = sizeof(dv_counter_fields) / sizeof(dv_counter_fields[0]);

static void merge_qtypes(dv_counters_t *a, const dv_counters_t *b)
{
	for (size_t i = 0; i < DV_QTYPE_SLOTS && b->qtype[i].qtype != 0; i++) {
		dv_qtype_count_t *q = qtype_slot(a, b->qtype[i].qtype);
		if (q != NULL) {
			q->sent += b->qtype[i].sent;
			q->completed += b->qtype[i].completed;
		} else {
			a->qtype_other_sent += b->qtype[i].sent;
			a->qtype_other_completed += b->qtype[i].completed;
		}
	}
}

void dv_stats_merge(dv_stats_t *into, const dv_stats_t *from)
{
	dv_counters_t *a = &into->c;
	const dv_counters_t *b = &from->c;

#define DV_COUNTER_ADD_(field, csv, metrics, flags)                                                \
	a->field = ((flags)&DV_CTR_MAX) ? DV_MAX(a->field, b->field) : a->field + b->field;
	DV_COUNTERS(DV_COUNTER_ADD_)
#undef DV_COUNTER_ADD_
	for (size_t i = 0; i < DV_RCODES; i++)
		a->rcode[i] += b->rcode[i];
	a->qtype_other_sent += b->qtype_other_sent;
	a->qtype_other_completed += b->qtype_other_completed;
	merge_qtypes(a, b);
	dv_hist_merge(&into->latency, &from->latency);
	dv_hist_merge(&into->latency_intended, &from->latency_intended);
	dv_hist_merge(&into->connect, &from->connect);
	dv_hist_merge(&into->handshake, &from->handshake);
}

const char *dv_rcode_name(unsigned rcode)
{
	static const char *names[DV_RCODES] = {
	    "NOERROR",  "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP",  "REFUSED",
	    "YXDOMAIN", "YXRRSET", "NXRRSET",  "NOTAUTH",  "NOTZONE", "RCODE11",
	    "RCODE12",  "RCODE13", "RCODE14",  "RCODE15",
	};
	if (rcode < DV_RCODES)
		return names[rcode];
	return "RCODE?";
}
