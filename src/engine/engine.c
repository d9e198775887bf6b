/* engine: sending order, answer matching and timeouts of one worker, independent of sockets. */
#include "config.h"

#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ldns/ldns.h>

#include "base/wire.h"
#include "input/tsig.h"

int dv_engine_init(dv_engine_t *e, const dv_querylist_t *ql, uint32_t capacity, uint64_t timeout_ns,
                   uint64_t first_seq, uint64_t step, uint64_t end_seq)
{
	int rc;

	memset(e, 0, sizeof(*e));
	if (ql == NULL || ql->count == 0 || step == 0)
		return -EINVAL;
	rc = dv_window_init(&e->win, capacity);
	if (rc != 0)
		return rc;
	e->ql = ql;
	if (ql->tsig_key != NULL && (e->tsigv = dv_tsig_verifier_new(ql->tsig_key)) == NULL) {
		dv_window_free(&e->win);
		return -ENOMEM;
	}
	if (e->tsigv != NULL) {
		struct timespec wall, mono;
		clock_gettime(CLOCK_REALTIME, &wall);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		e->tsig_wall_off_ns = (wall.tv_sec - mono.tv_sec) * 1000000000LL +
		                      (wall.tv_nsec - mono.tv_nsec) +
		                      ql->tsig_skew_s * 1000000000LL;
	}
	dv_stats_init(&e->stats);
	e->timeout_ns = timeout_ns;
	e->next_seq = first_seq;
	e->step = step;
	e->end_seq = end_seq;
	return 0;
}

void dv_engine_free(dv_engine_t *e)
{
	if (e == NULL)
		return;
	dv_window_free(&e->win);
	dv_tsig_verifier_free(e->tsigv);
	e->tsigv = NULL;
	free(e->tsig_tail);
	free(e->tsig_own);
	e->tsig_tail = e->tsig_own = NULL;
	free(e->bucket);
	e->bucket = NULL;
	e->nbucket = 0;
}

void dv_engine_track_intervals(dv_engine_t *e, uint64_t t0_ns, uint64_t len_ns)
{
	e->bucket_t0_ns = t0_ns;
	e->bucket_ns = len_ns;
}

/* The send-time bucket of a query sent at sent_ns, grown on demand; NULL when not tracked. */
static dv_send_bucket_t *bucket_at(dv_engine_t *e, uint64_t sent_ns)
{
	size_t k;

	if (e->bucket_ns == 0)
		return NULL;
	k = sent_ns > e->bucket_t0_ns ? (size_t)((sent_ns - e->bucket_t0_ns) / e->bucket_ns) : 0;
	if (k >= e->nbucket) {
		size_t n = DV_MAX(DV_MAX(k + 1, 2 * e->nbucket), (size_t)16);
		dv_send_bucket_t *b = realloc(e->bucket, n * sizeof(*b));
		if (b == NULL) {
			e->bucket_ns = 0; /* out of memory: the live series stays */
			return NULL;
		}
		memset(b + e->nbucket, 0, (n - e->nbucket) * sizeof(*b));
		e->bucket = b;
		e->nbucket = n;
	}
	return &e->bucket[k];
}

static void count_lost(dv_engine_t *e, uint64_t sent_ns)
{
	dv_send_bucket_t *b = bucket_at(e, sent_ns);

	e->stats.c.lost++;
	if (b != NULL)
		b->lost++;
}

void dv_engine_tx_stamp(dv_engine_t *e, uint16_t sock, uint16_t id, uint32_t key, uint64_t stamp_ns)
{
	dv_slot_t *s = &e->win.slot[id];
	uint64_t off;

	if (s->state != DV_SLOT_INFLIGHT || !s->tx_asked || s->sock != sock || s->tx_key != key ||
	    s->wire_off_ns != DV_SLOT_NO_STAMP)
		return;
	/* Read before sendmmsg, stamped inside it: a stamp before it is a conversion error. */
	off = stamp_ns > s->sent_ns ? stamp_ns - s->sent_ns : 0;
	if (off < DV_SLOT_NO_STAMP)
		s->wire_off_ns = (uint32_t)off;
}

uint64_t dv_engine_sendable(const dv_engine_t *e)
{
	uint64_t room = dv_window_room(&e->win), left;

	if (e->next_seq >= e->end_seq)
		return 0;
	/* Sequences next, next + step, ... below end: no overflow when end is UINT64_MAX. */
	left = (e->end_seq - e->next_seq - 1) / e->step + 1;
	return left < room ? left : room;
}

/* The query type of list entry qidx (the question's last four octets are type, class). */
static uint16_t query_qtype(const dv_querylist_t *ql, uint32_t qidx)
{
	size_t len;
	const uint8_t *q = dv_querylist_get(ql, qidx, &len);

	return dv_wire_get16(q + DV_DNS_HEADER_LEN + dv_querylist_question_len(ql, qidx) - 4);
}

/*
 * -y: a list signed over DV_TSIG_RESIGN_S ago is signed again as each query is sent (its
 * time signed would soon fall outside the fudge: BADTIME), and the MAC it went with kept
 * for its answer's check. Cold until then: one comparison per send.
 */
static void tsig_fresh(dv_engine_t *e, uint16_t id, uint8_t *buf, size_t n, uint64_t now_ns)
{
	int64_t now_s = ((int64_t)now_ns + e->tsig_wall_off_ns) / 1000000000LL;
	int64_t age = now_s - (int64_t)e->ql->tsig_time_s;
	size_t tail = DV_TSIG_TAIL(e->ql->tsig_key->mac_len);

	if (e->tsig_own != NULL)
		e->tsig_own[id] = 0;
	if (age <= DV_TSIG_RESIGN_S && age >= -DV_TSIG_RESIGN_S)
		return;
	if (e->tsig_own == NULL) {
		e->tsig_own = calloc(DV_WINDOW_IDS, 1);
		e->tsig_tail = malloc((size_t)DV_WINDOW_IDS * DV_TSIG_TAIL_MAX);
		if (e->tsig_own == NULL || e->tsig_tail == NULL) {
			free(e->tsig_own), free(e->tsig_tail);
			e->tsig_own = e->tsig_tail = NULL;
			return; /* sent as signed at load: its answer says BADTIME once it is late
			         */
		}
	}
	if (dv_tsig_resign(e->tsigv, buf, n, (uint64_t)now_s) != 0)
		return;
	memcpy(e->tsig_tail + (size_t)id * DV_TSIG_TAIL_MAX, buf + n - tail, tail);
	e->tsig_own[id] = 1;
}

void dv_engine_prepare_qidx(dv_engine_t *e, uint16_t sock, uint64_t now_ns, uint32_t qidx,
                            uint8_t *buf, unsigned *len)
{
	size_t n;
	const uint8_t *q = dv_querylist_get(e->ql, qidx, &n);
	uint16_t id = dv_window_acquire(&e->win, qidx, sock, now_ns);

	memcpy(buf, q, n);
	if (e->tsigv != NULL)
		tsig_fresh(e, id, buf, n, now_ns);
	dv_wire_set16(buf, id);
	*len = (unsigned)n;
}

unsigned dv_engine_prepare(dv_engine_t *e, uint16_t sock, uint64_t now_ns, unsigned n,
                           uint8_t (*bufs)[DV_MAX_QUERY_LEN], unsigned *lens)
{
	unsigned i;

	for (i = 0; i < n && dv_window_room(&e->win) > 0 && e->next_seq < e->end_seq; i++) {
		dv_engine_prepare_qidx(e, sock, now_ns, (uint32_t)(e->next_seq % e->ql->count),
		                       bufs[i], &lens[i]);
		e->next_seq += e->step;
	}
	return i;
}

static void verbose_line(dv_engine_t *e, const char *status, uint32_t qidx, double latency_s)
{
	size_t len;
	const uint8_t *q = dv_querylist_get(e->ql, qidx, &len);
	uint16_t qtype = query_qtype(e->ql, qidx);
	const ldns_rr_descriptor *d = ldns_rr_descript(qtype);
	char name[1024], type[16];

	if (d != NULL && d->_name != NULL)
		snprintf(type, sizeof(type), "%s", d->_name);
	else
		snprintf(type, sizeof(type), "TYPE%u", qtype);
	dv_wire_name_to_text(q, len, DV_DNS_HEADER_LEN, name, sizeof(name));
	size_t nlen = strlen(name);
	if (nlen > 1 && name[nlen - 1] == '.')
		name[nlen - 1] = '\0'; /* as dnsperf prints it: no trailing dot but the root's */
	/* One fprintf per line: stdio locks the stream, so worker lines never interleave. */
	if (latency_s >= 0)
		fprintf(e->verbose, "> %s %s %s %.6f\n", status, name, type, latency_s);
	else
		fprintf(e->verbose, "> %s %s %s\n", status, name, type);
}

/* -y: the answer's TSIG outcome, its MAC verified, counted apart (doc/numbers.md). */
static void count_tsig(dv_engine_t *eng, const uint8_t *buf, size_t len, size_t rqlen, uint16_t id,
                       uint32_t qidx)
{
	dv_counters_t *c = &eng->stats.c;
	size_t qlen;
	const uint8_t *q = dv_querylist_get(eng->ql, qidx, &qlen);

	if (eng->tsig_own != NULL && eng->tsig_own[id]) { /* signed again as sent */
		q = eng->tsig_tail + (size_t)id * DV_TSIG_TAIL_MAX;
		qlen = DV_TSIG_TAIL(eng->ql->tsig_key->mac_len);
	}
	int e = eng->tsigv != NULL ? dv_tsig_verify_answer(eng->tsigv, q, qlen, buf, len, rqlen)
	                           : dv_tsig_answer_error(buf, len, rqlen);

	c->tsig_badmac += e == DV_TSIG_BADMAC;
	c->tsig_unsigned += e == DV_TSIG_UNSIGNED;
	c->tsig_badsig += e == DV_TSIG_BADSIG;
	c->tsig_badkey += e == DV_TSIG_BADKEY;
	c->tsig_badtime += e == DV_TSIG_BADTIME;
	c->tsig_other_error +=
	    e > 0 && e != DV_TSIG_BADSIG && e != DV_TSIG_BADKEY && e != DV_TSIG_BADTIME;
}

/*
 * -y: a TSIG error answer without its question (nsd sends BADSIG, BADKEY and BADTIME so):
 * matched by ID and socket alone, with *rqlen 0.
 */
static bool tsig_error_answer(const dv_engine_t *e, const uint8_t *buf, size_t len, size_t *rqlen)
{
	if (!e->ql->tsig || len < DV_DNS_HEADER_LEN || !DV_WIRE_QR(buf) ||
	    DV_WIRE_QDCOUNT(buf) != 0 || dv_tsig_answer_error(buf, len, 0) <= 0)
		return false;
	*rqlen = 0;
	return true;
}

static bool retry_later(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ENOBUFS;
}

bool dv_engine_sent(dv_engine_t *e, uint8_t (*bufs)[DV_MAX_QUERY_LEN], unsigned n, unsigned sent,
                    int err, uint64_t now_ns)
{
	unsigned i;
	bool wait = false;

	for (i = 0; i < sent; i++) {
		uint16_t id = dv_wire_get16(bufs[i]);
		const dv_slot_t *s = &e->win.slot[id];
		dv_send_bucket_t *b = bucket_at(e, s->sent_ns);

		if (b != NULL)
			b->sent++;
		e->stats.c.sent++;
		if (e->paced && s->sent_ns > s->intended_ns + DV_SEND_BEHIND_NS)
			e->stats.c.sent_behind++;
		e->stats.c.bytes_sent += e->ql->off[s->qidx + 1] - e->ql->off[s->qidx];
		dv_stats_qtype_sent(&e->stats.c, query_qtype(e->ql, s->qidx));
	}
	if (sent > 0)
		e->last_send_ns = now_ns;
	if (sent == n)
		return false;
	/* Give the refused IDs back, newest first, and rewind the sequence. */
	for (i = n; i-- > sent;) {
		dv_window_cancel(&e->win, dv_wire_get16(bufs[i]));
		e->next_seq -= e->step;
	}
	if (retry_later(err)) {
		wait = err != EINTR;
	} else {
		/* A hard local failure: this query is not sent, and not retried. */
		e->stats.c.not_sent++;
		if (err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH)
			e->stats.c.icmp_errors++;
		if (err == ECONNREFUSED)
			e->stats.c.icmp_port_unreachable++;
		if (e->verbose != NULL)
			verbose_line(e, "NOTSENT", (uint32_t)(e->next_seq % e->ql->count), -1);
		e->next_seq += e->step;
	}
	return wait;
}

void dv_engine_receive(dv_engine_t *e, uint16_t sock, const uint8_t *buf, size_t len, bool from_ok,
                       uint64_t now_ns)
{
	size_t rqlen, qlen, qwire;
	const uint8_t *q;
	dv_slot_t *s;
	uint16_t id;

	if (!dv_wire_check_response(buf, len, &rqlen) && !tsig_error_answer(e, buf, len, &rqlen)) {
		e->stats.c.malformed++;
		return;
	}
	id = dv_wire_get16(buf);
	s = &e->win.slot[id];
	if (!from_ok || s->sock != sock ||
	    (s->state != DV_SLOT_INFLIGHT && s->state != DV_SLOT_TIMEDOUT)) {
		e->stats.c.unexpected++;
		return;
	}
	q = dv_querylist_get(e->ql, s->qidx, &qwire);
	qlen = dv_querylist_question_len(e->ql, s->qidx);
	if (rqlen > 0 &&
	    !dv_wire_question_equal(q + DV_DNS_HEADER_LEN, qlen, buf + DV_DNS_HEADER_LEN, rqlen)) {
		e->stats.c.unexpected++;
		return;
	}
	/* Arrival times come from the kernel; never before the send (clock steps). */
	if (now_ns < s->sent_ns)
		now_ns = s->sent_ns;
	if (s->state == DV_SLOT_INFLIGHT && now_ns - s->sent_ns > e->timeout_ns) {
		/* Arrived after its deadline but read before expiry ran: lost, and late. */
		count_lost(e, s->sent_ns);
		if (e->verbose != NULL)
			verbose_line(e, "T", s->qidx, -1);
		dv_window_expire(&e->win, id);
	}
	if (s->state == DV_SLOT_TIMEDOUT) {
		e->stats.c.late++;
		dv_window_mark_late(&e->win, id);
		if (e->verbose != NULL)
			verbose_line(e, "LATE", s->qidx, (double)(now_ns - s->sent_ns) / 1e9);
		return;
	}
	/* A valid answer in time. */
	{
		uint64_t lat = now_ns - s->sent_ns;
		unsigned rcode = DV_WIRE_RCODE(buf);
		dv_send_bucket_t *b = bucket_at(e, s->sent_ns);
		/* The wire clock times only its sample: the answers stamped at both ends. */
		bool timed = !e->wire;

		if (e->wire && s->wire_off_ns != DV_SLOT_NO_STAMP) {
			uint64_t tx = s->sent_ns + s->wire_off_ns;
			lat = now_ns > tx ? now_ns - tx : 0;
			/* An answer stamped as arriving before its query left: a stamp not on
			 * the query's clock (a stepped wall clock between the two): untimed, not 0.
			 */
			timed = e->rx_stamped && now_ns > tx;
			e->stats.c.wire_timed += timed;
			e->stats.c.untimed_no_rx += !e->rx_stamped;
			e->stats.c.untimed_order += e->rx_stamped && !timed;
		} else if (e->wire && s->tx_asked) {
			e->stats.c.untimed_no_tx++; /* asked, and no transmit stamp came */
		}
		if (b != NULL) {
			b->completed++;
			b->failed +=
			    rcode != DV_DNS_RCODE_NOERROR && rcode != DV_DNS_RCODE_NXDOMAIN;
		}
		e->stats.c.completed++;
		e->stats.c.rcode[rcode]++;
		if (e->ql->tsig)
			count_tsig(e, buf, len, rqlen, id, s->qidx);
		if (DV_WIRE_TC(buf)) {
			e->stats.c.truncated++;
			if (e->tc_fn != NULL)
				e->tc_fn(e->tc_ctx, s->qidx);
		}
		e->stats.c.bytes_received += len;
		dv_stats_qtype_completed(
		    &e->stats.c, rqlen > 0 ? dv_wire_get16(buf + DV_DNS_HEADER_LEN + rqlen - 4)
		                           : query_qtype(e->ql, s->qidx));
		if (timed)
			dv_hist_add(&e->stats.latency, lat);
		if (e->paced)
			dv_hist_add(&e->stats.latency_intended,
			            now_ns > s->intended_ns ? now_ns - s->intended_ns : 0);
		e->last_complete_ns = now_ns;
		if (e->verbose != NULL)
			verbose_line(e, dv_rcode_name(rcode), s->qidx, (double)lat / 1e9);
		dv_window_complete(&e->win, id);
	}
}

void dv_engine_expire(dv_engine_t *e, uint64_t now_ns)
{
	int32_t id;
	uint64_t deadline;

	if (now_ns < e->timeout_ns)
		return;
	deadline = now_ns - e->timeout_ns;
	while ((id = dv_window_oldest_expired(&e->win, deadline)) >= 0) {
		count_lost(e, e->win.slot[id].sent_ns);
		if (e->verbose != NULL)
			verbose_line(e, "T", e->win.slot[id].qidx, -1);
		dv_window_expire(&e->win, (uint16_t)id);
	}
}

void dv_engine_lose(dv_engine_t *e, uint16_t id)
{
	count_lost(e, e->win.slot[id].sent_ns);
	if (e->verbose != NULL)
		verbose_line(e, "T", e->win.slot[id].qidx, -1);
	dv_window_expire(&e->win, id);
}

uint64_t dv_engine_next_deadline(const dv_engine_t *e)
{
	if (e->win.head == DV_WINDOW_NIL)
		return UINT64_MAX;
	return e->win.slot[e->win.head].sent_ns + e->timeout_ns;
}

void dv_engine_finish(dv_engine_t *e, bool interrupted)
{
	while (e->win.head != DV_WINDOW_NIL) {
		uint16_t id = (uint16_t)e->win.head;
		if (interrupted) {
			e->stats.c.interrupted++;
		} else {
			count_lost(e, e->win.slot[id].sent_ns);
			if (e->verbose != NULL)
				verbose_line(e, "T", e->win.slot[id].qidx, -1);
		}
		dv_window_expire(&e->win, id);
	}
	e->stats.c.inflight_peak = e->win.peak;
}
