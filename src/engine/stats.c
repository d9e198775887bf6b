/* stats: merging per-worker counters, qtype breakdown, rcode names. */
#include "config.h"

#include "engine/stats.h"

#include <stdio.h>
#include <string.h>

void dv_stats_init(dv_stats_t *s)
{
	memset(&s->c, 0, sizeof(s->c));
	dv_hist_init(&s->latency);
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

void dv_stats_merge(dv_stats_t *into, const dv_stats_t *from)
{
	dv_counters_t *a = &into->c;
	const dv_counters_t *b = &from->c;
	size_t i;

	a->sent += b->sent;
	a->not_sent += b->not_sent;
	a->completed += b->completed;
	a->lost += b->lost;
	a->late += b->late;
	a->interrupted += b->interrupted;
	a->unexpected += b->unexpected;
	a->malformed += b->malformed;
	a->truncated += b->truncated;
	for (i = 0; i < DV_RCODES; i++)
		a->rcode[i] += b->rcode[i];
	a->icmp_errors += b->icmp_errors;
	a->bytes_sent += b->bytes_sent;
	a->bytes_received += b->bytes_received;
	a->send_calls += b->send_calls;
	a->recv_calls += b->recv_calls;
	a->wait_calls += b->wait_calls;
	a->inflight_peak += b->inflight_peak;
	a->qtype_other_sent += b->qtype_other_sent;
	a->qtype_other_completed += b->qtype_other_completed;
	for (i = 0; i < DV_QTYPE_SLOTS && b->qtype[i].qtype != 0; i++) {
		dv_qtype_count_t *q = qtype_slot(a, b->qtype[i].qtype);
		if (q != NULL) {
			q->sent += b->qtype[i].sent;
			q->completed += b->qtype[i].completed;
		} else {
			a->qtype_other_sent += b->qtype[i].sent;
			a->qtype_other_completed += b->qtype[i].completed;
		}
	}
	dv_hist_merge(&into->latency, &from->latency);
}

const char *dv_rcode_name(unsigned rcode)
{
	static const char *names[DV_RCODES] = {
		"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP",  "REFUSED",
		"YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE", "RCODE11",
		"RCODE12", "RCODE13", "RCODE14", "RCODE15",
	};
	if (rcode < DV_RCODES)
		return names[rcode];
	return "RCODE?";
}
