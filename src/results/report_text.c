/* report_text: the per-pass text report, laid out like dnsperf's so its users read it at a glance.
 */
#include "config.h"

#include "results/report.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

static double pct(uint64_t part, uint64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_stop_rule(FILE *out, const dv_run_config_t *run)
{
	if (run->passes > 0 && run->time_limit_ns > 0)
		fprintf(out,
		        "[Status] Stopping after %.3f seconds or %" PRIu64 " run%s through file\n",
		        (double)run->time_limit_ns / 1e9, run->passes, run->passes == 1 ? "" : "s");
	else if (run->time_limit_ns > 0)
		fprintf(out, "[Status] Stopping after %.3f seconds\n",
		        (double)run->time_limit_ns / 1e9);
	else
		fprintf(out, "[Status] Stopping after %" PRIu64 " run%s through file\n",
		        run->passes ? run->passes : 1, run->passes > 1 ? "s" : "");
}

/*
 * Where the lost queries went: dropped by our own sockets (answers that came
 * but found the receive buffer full), at the target's socket on this host
 * (queries it never read), or neither. Each part is capped by what is left of
 * lost, since the target's counter also counts other clients' queries.
 */
static void print_loss_split(FILE *out, const dv_pass_result_t *r)
{
	const dv_counters_t *c = &r->stats.c;
	uint64_t own = DV_MIN(c->client_drops, c->lost), left = c->lost - own;
	uint64_t target = DV_MIN(c->target_drops, left);

	if (c->lost == 0 && c->client_drops == 0)
		return;
	if (c->conn_opened + c->conn_failed > 0) { /* connections: no datagram drops to split */
		fprintf(out,
		        "  Loss split:           lost %" PRIu64 ": %" PRIu64
		        " with their connection, %" PRIu64 " HTTP status or stream error, %" PRIu64
		        " timed out or unanswered at the end\n",
		        c->lost, c->conn_lost, c->http_non200 + c->stream_errors,
		        c->lost -
		            DV_MIN(c->lost, c->conn_lost + c->http_non200 + c->stream_errors));
		return;
	}
	if (c->target_sockets > 0)
		fprintf(out,
		        "  Loss split:           lost %" PRIu64 ": %" PRIu64
		        " dropped by dnsvolley's sockets, %" PRIu64
		        " dropped at the target's socket (local), %" PRIu64
		        " unaccounted (server internal or network)\n",
		        c->lost, own, target, left - target);
	else
		fprintf(out,
		        "  Loss split:           lost %" PRIu64 ": %" PRIu64
		        " dropped by dnsvolley's sockets, %" PRIu64
		        " unaccounted (no socket of the target's found on this host to read: its "
		        "socket, the network or the server)\n",
		        c->lost, own, left);
	if (c->client_drops > 0)
		fprintf(out,
		        "  dnsvolley's own sockets dropped %" PRIu64
		        " answers (receive buffers full): raise -b, or use more sockets (-c) for "
		        "fewer queries in flight per socket\n",
		        c->client_drops);
}

/* --tc-tcp: the truncated answers asked again over TCP, and those that could not be. */
static void print_tc(FILE *out, const dv_counters_t *c)
{
	if (c->tc_retried + c->tc_not_sent + c->tc_no_conn > 0)
		fprintf(out,
		        "  Asked again over TCP: %" PRIu64 " (--tc-tcp): completed %" PRIu64
		        ", lost %" PRIu64 "; not asked (queue full) %" PRIu64 "\n",
		        c->tc_retried, c->tc_completed, c->tc_lost, c->tc_not_sent);
	if (c->tc_no_conn > 0)
		fprintf(out,
		        "  Not asked over TCP:   %" PRIu64 " (--tc-tcp: no TCP connection to the "
		        "server could be made; %" PRIu64 " attempts failed: refused %" PRIu64
		        ", timed out %" PRIu64 ", no local port %" PRIu64 ")\n",
		        c->tc_no_conn, c->conn_failed, c->conn_refused, c->conn_timeouts,
		        c->conn_no_port);
}

/* No answer, but something came back: say what (false when nothing did). */
static bool print_what_came_back(FILE *out, const dv_counters_t *c)
{
	const struct {
		uint64_t n;
		const char *what;
	} seen[] = {
	    {c->unexpected, "unexpected answers (matching no query in flight)"},
	    {c->malformed, "malformed answers (not a parseable DNS response)"},
	    {c->stream_errors, "DoH streams reset, refused or not DNS"},
	    {c->conn_closed, "connections closed by the server with queries in flight"},
	    {c->conn_idle_closed, "connections closed by the server idle"},
	    {c->conn_reset, "connections reset"},
	    {c->conn_proto_errors, "connections ended by a protocol error"},
	    {c->conn_refused, "connection attempts refused"},
	    {c->conn_timeouts, "connection attempts timed out"},
	    {c->conn_no_port, "connection attempts that found no local port"},
	};
	const char *sep = "";
	size_t i;
	bool any = false;

	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		if (seen[i].n == 0)
			continue;
		if (!any)
			fprintf(out, "  NO ANSWERS: not one query was answered; what came back: ");
		fprintf(out, "%s%" PRIu64 " %s", sep, seen[i].n, seen[i].what);
		sep = ", ";
		any = true;
	}
	if (any)
		fprintf(out, "\n");
	return any;
}

/* A pass in which queries went out and not one answer came back: say so, and why it may be. */
static void print_no_answer(FILE *out, const dv_pass_result_t *r)
{
	const dv_counters_t *c = &r->stats.c;

	if (c->sent + c->not_sent == 0 || c->completed > 0 || c->late > 0 || r->interrupted)
		return;
	if (c->http_non200 > 0)
		fprintf(out,
		        "  NO ANSWERS: not one query was answered with DNS; %" PRIu64
		        " HTTP responses had a status other than 200 (the DoH path, --doh-path?)\n",
		        c->http_non200);
	else if (c->icmp_port_unreachable > 0)
		fprintf(out,
		        "  NO ANSWERS: not one query was answered; ICMP port unreachable came back "
		        "%" PRIu64
		        " times: nothing is listening at the target's address and port\n",
		        c->icmp_port_unreachable);
	else if (c->icmp_errors > 0)
		fprintf(out,
		        "  NO ANSWERS: not one query was answered; %" PRIu64
		        " ICMP errors came back (host or network unreachable?)\n",
		        c->icmp_errors);
	else if (!print_what_came_back(out, c))
		fprintf(out,
		        "  NO ANSWERS: not one query was answered, and nothing came back at all "
		        "(silence: a firewall dropping, a wrong address, or a server that does not "
		        "answer)\n");
}

/*
 * Where the wire clock's receive stamps came from, after "receive": the socket filter's
 * (the sample's answers only) on every worker, on none (every answer's control message),
 * or on some: then how many of how many, never the one kind for the whole pass.
 */
static void print_rx_source(FILE *out, const dv_pass_result_t *r, bool sample)
{
	uint32_t n = r->rx_filter_workers, m = r->wire_workers;

	if (n > 0 && n < m && sample)
		fprintf(out,
		        "on those by a socket filter on %" PRIu32 " of %" PRIu32
		        " workers, on all on the other %" PRIu32,
		        n, m, m - n);
	else if (n > 0 && n < m)
		fprintf(out, " by a socket filter on %" PRIu32 " of %" PRIu32 " workers", n, m);
	else if (r->rx_filter)
		fprintf(out, sample ? "on those by a socket filter" : " by a socket filter");
	else if (sample)
		fprintf(out, "on all");
}

/* The wire clock: its sample, where its receive stamps came from, the answers it timed. */
static void print_wire_clock(FILE *out, const dv_pass_result_t *r)
{
	const dv_counters_t *c = &r->stats.c;

	if (!dv_pass_sample_partial(r)) {
		fprintf(out, "  Latency clock:        wire (kernel transmit and receive stamps");
		if (r->rx_filter || r->rx_filter_workers > 0) {
			fprintf(out, ", receive");
			print_rx_source(out, r, false);
		}
		fprintf(out, "), %" PRIu64 " of %" PRIu64 " answers stamped at both ends\n",
		        c->wire_timed, c->completed);
		return;
	}
	fprintf(out, "  Latency clock:        wire (kernel stamps: transmit on ");
	if (r->stamp_every > 0)
		fprintf(out, "1 in %" PRIu32, r->stamp_every);
	else /* merged passes of different samples */
		fprintf(out, "about 1 in %.0f", (double)c->sent / (double)c->stamps_asked);
	fprintf(out, " queries, receive ");
	print_rx_source(out, r, true);
	fprintf(out, "), latency of %" PRIu64 " answers (%" PRIu64 " asked) of %" PRIu64 "\n",
	        c->wire_timed, c->stamps_asked, c->completed);
}

/*
 * --xdp (doc/xdp.md "Clock"): the steering program's receive stamps where it could write
 * them, else the read time; the send side is the app clock.
 */
static void print_xdp_clock(FILE *out, const dv_counters_t *c)
{
	if (c->xdp_stamped > 0)
		fprintf(
		    out,
		    "  Latency clock:        xdp (program receive stamps, send-side app clock), "
		    "%" PRIu64 " of %" PRIu64 " answers stamped%s\n",
		    c->xdp_stamped, c->completed,
		    c->xdp_stamped < c->completed ? " (the rest: read time)" : "");
	else
		fprintf(out, "  Latency clock:        xdp (read time of each batch, send-side app "
		             "clock: no answer carried a receive stamp)\n");
}

void dv_report_clock(FILE *out, const dv_pass_result_t *r, bool stream)
{
	const dv_counters_t *c = &r->stats.c;
	const dv_xdp_info_t *x = &r->xdp;

	switch (r->clock) {
	case DV_PASS_CLOCK_WIRE:
		print_wire_clock(out, r);
		break;
	case DV_PASS_CLOCK_XDP:
		print_xdp_clock(out, c);
		break;
	case DV_PASS_CLOCK_APP:
		if (stream)
			fprintf(out,
			        "  Latency clock:        app (before each write, after each read "
			        "of the connection)\n");
		else
			fprintf(out,
			        "  Latency clock:        app (before sendmmsg, after recvmmsg)\n");
		break;
	case DV_PASS_CLOCK_MIXED:
		fprintf(out, "  Latency clock:        mixed (the ranks merged were timed on "
		             "different clocks)\n");
		break;
	case DV_PASS_CLOCK_UNKNOWN:
		fprintf(out, "  Latency clock:        not recorded (a results file from before "
		             "dnsvolley recorded it)\n");
		break;
	}
	/* How the pass ran over AF_XDP, so no copy-mode figure passes for a zero-copy one. */
	if (x->used)
		fprintf(out,
		        "  AF_XDP:               %s attach, %s bind, %" PRIu32
		        " queue%s of %" PRIu32 "\n",
		        x->native ? "native (driver)" : "generic (skb)",
		        x->zerocopy ? "zero-copy" : "copy", x->queues, x->queues == 1 ? "" : "s",
		        x->rx_queues);
	if (c->rx_stamps_unused > 0)
		fprintf(out,
		        "  Receive stamps unused: %" PRIu64
		        " (taken by a datagram that was not the query's answer: a duplicate, "
		        "forged or stray answer; those queries untimed)\n",
		        c->rx_stamps_unused);
	if (c->untimed_no_tx + c->untimed_no_rx + c->untimed_order > 0)
		fprintf(out,
		        "  Sampled but untimed:  %" PRIu64 " (no transmit stamp %" PRIu64
		        ", no receive stamp %" PRIu64 ", received before sent %" PRIu64 ")\n",
		        c->untimed_no_tx + c->untimed_no_rx + c->untimed_order, c->untimed_no_tx,
		        c->untimed_no_rx, c->untimed_order);
}

/* The wire clock's sample: each percentile's distribution-free 95% interval. */
static void print_sampling_error(FILE *out, const dv_pass_result_t *r)
{
	static const double qs[] = {0.50, 0.90, 0.99, 0.999};
	static const char *names[] = {"p50", "p90", "p99", "p99.9"};

	if (!dv_pass_sample_partial(r) || r->stats.latency.count == 0)
		return;
	fprintf(out, "  Sampling error (95%%):");
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t lo, hi;
		dv_hist_quantile_ci95(&r->stats.latency, qs[i], &lo, &hi);
		fprintf(out, "%s %s %.6f-%.6f", i ? "," : "", names[i], (double)lo / 1e9,
		        (double)hi / 1e9);
	}
	fprintf(out, "\n");
}

/* Paced runs: latency from the intended send time (coordinated omission, doc/numbers.md)
 * and how far the generator kept its schedule. */
static void print_intended(FILE *out, const dv_pass_result_t *r)
{
	const dv_counters_t *c = &r->stats.c;

	if (r->stats.latency_intended.count > 0) {
		const dv_hist_t *hi = &r->stats.latency_intended;
		fprintf(out,
		        "  From intended send (s): p50 %.6f, p90 %.6f, p99 %.6f, p99.9 %.6f, max "
		        "%.6f\n",
		        (double)dv_hist_quantile_ns(hi, 0.50) / 1e9,
		        (double)dv_hist_quantile_ns(hi, 0.90) / 1e9,
		        (double)dv_hist_quantile_ns(hi, 0.99) / 1e9,
		        (double)dv_hist_quantile_ns(hi, 0.999) / 1e9, (double)hi->max_ns / 1e9);
	}
	if (c->sent_behind > 0)
		fprintf(out,
		        "  Sent behind schedule: %" PRIu64 " (%.2f%%, over 2 ms after the intended "
		        "time)\n",
		        c->sent_behind, pct(c->sent_behind, c->sent));
	/* Schedule slots, not list entries: every query of the list may still have gone out. */
	if (c->forfeited > 0 && r->max_outstanding > 0 && c->inflight_peak >= r->max_outstanding)
		fprintf(out,
		        "  Schedule forfeited:   %" PRIu64 " query slots (the window was full: "
		        "%u in flight waited for answers and the schedule fell over 1 s behind; "
		        "-Q was not held; raise -q)\n",
		        c->forfeited, r->max_outstanding);
	else if (c->forfeited > 0)
		fprintf(out,
		        "  Schedule forfeited:   %" PRIu64 " query slots (the generator fell over "
		        "1 s behind its schedule with room in the window; -Q was not held)\n",
		        c->forfeited);
	if (c->server_holds > 0)
		fprintf(out,
		        "  Held by the server:   %" PRIu64 " times the connections took fewer "
		        "queries than due (stream limit or full send buffer)\n",
		        c->server_holds);
}

/* A replayed capture (doc/numbers.md, "Replay"): input, clients, rates, lag. */
static void print_replay(FILE *out, const dv_study_t *s, const dv_list_t *l,
                         const dv_pass_result_t *r)
{
	const dv_replay_info_t *ri = &l->replay;
	uint32_t copies = s->replay.multiply > 1 ? s->replay.multiply : 1;

	if (ri->clients == 0 && !r->scheduled && (l->input[0] == '\0' || !strcmp(l->input, "text")))
		return;
	fprintf(out, "\n  Replay input:         %s, %" PRIu64 " malformed record%s skipped",
	        l->input[0] ? l->input : "?", l->malformed, l->malformed == 1 ? "" : "s");
	fprintf(out, "; timing %s", r->scheduled ? "original" : "list");
	if (r->scheduled)
		fprintf(out, ", speed %g", s->replay.speed);
	if (copies > 1)
		fprintf(out, ", %u copies", copies);
	if (ri->rewritten > 0)
		fprintf(out, "; %" PRIu64 " queries rewritten", ri->rewritten);
	fprintf(out, "\n");
	if (ri->clients > 0) {
		fprintf(out, "  Clients replayed:     %" PRIu64 " (%" PRIu64 " captured",
		        ri->clients, ri->captured_clients);
		if (copies > 1)
			fprintf(out, " x %u copies", copies);
		if (ri->clients < ri->captured_clients * copies)
			fprintf(out, ", merged: client mod %" PRIu64, ri->clients);
		fprintf(out, "), a socket each\n");
		fprintf(out,
		        "  Queries per client:   min %" PRIu64 ", median %" PRIu64 ", max %" PRIu64
		        "\n",
		        ri->per_client_min, ri->per_client_median, ri->per_client_max);
	}
	if (ri->timed)
		fprintf(out, "  Captured rate (q/s):  %.3f; scheduled %.3f\n", ri->captured_qps,
		        r->scheduled ? ri->schedule_qps : 0.0);
	if (r->scheduled) {
		fprintf(out, "  Achieved rate (q/s):  %.3f (%.3f%% of the schedule)\n", r->send_qps,
		        ri->schedule_qps > 0 ? 100.0 * r->send_qps / ri->schedule_qps : 0.0);
		fprintf(out, "  Lag behind schedule (s): p50 %.6f, p99 %.6f, max %.6f\n",
		        (double)dv_hist_quantile_ns(&r->lag, 0.50) / 1e9,
		        (double)dv_hist_quantile_ns(&r->lag, 0.99) / 1e9,
		        (double)r->lag.max_ns / 1e9);
	}
}

/* Stream transports: connection figures (doc/numbers.md, "connections"). */
/* -y: what the answers' TSIG RRs said, their MACs verified (doc/numbers.md). */
static void print_tsig(FILE *out, const dv_counters_t *c)
{
	uint64_t bad = c->tsig_unsigned + c->tsig_badsig + c->tsig_badkey + c->tsig_badtime +
	               c->tsig_other_error + c->tsig_badmac;

	fprintf(out,
	        "  TSIG answers:         %" PRIu64 " verified; unsigned %" PRIu64
	        ", BADSIG %" PRIu64 ", BADKEY %" PRIu64 ", BADTIME %" PRIu64
	        ", other error %" PRIu64 ", MAC wrong %" PRIu64 "\n",
	        c->completed > bad ? c->completed - bad : 0, c->tsig_unsigned, c->tsig_badsig,
	        c->tsig_badkey, c->tsig_badtime, c->tsig_other_error, c->tsig_badmac);
}

void dv_report_connections(FILE *out, const dv_pass_result_t *r)
{
	const dv_counters_t *c = &r->stats.c;
	const dv_hist_t *hc = &r->stats.connect, *hh = &r->stats.handshake;

	if (c->conn_opened + c->conn_failed == 0)
		return;
	fprintf(out,
	        "\n  Connections:          opened %" PRIu64 " (reopened %" PRIu64
	        "), failed %" PRIu64 " (refused %" PRIu64 ", timed out %" PRIu64
	        ", no local port %" PRIu64 "), abandoned %" PRIu64 "\n",
	        c->conn_opened, c->conn_reopened, c->conn_failed, c->conn_refused, c->conn_timeouts,
	        c->conn_no_port, c->conn_abandoned);
	if (c->conn_no_port > 0)
		fprintf(out,
		        "  No local port:        %" PRIu64
		        " attempts (every port of net.ipv4.ip_local_port_range was "
		        "in use toward the server, typically held in TIME_WAIT by connections "
		        "closed before, this run's or earlier ones'): widen the range, open fewer "
		        "connections (-c) or from more addresses (--client-range), reopen less "
		        "(--queries-per-conn), or wait for TIME_WAIT to end (60 s)\n",
		        c->conn_no_port);
	fprintf(out,
	        "  Connections ended:    reset %" PRIu64 ", closed by server %" PRIu64
	        " (idle %" PRIu64 "), protocol errors %" PRIu64 ", by --queries-per-conn %" PRIu64
	        "\n",
	        c->conn_reset, c->conn_closed + c->conn_idle_closed, c->conn_idle_closed,
	        c->conn_proto_errors, c->conn_recycled);
	fprintf(out,
	        "  Reconnections:        %" PRIu64 " (dnsperf's figure: connections opened "
	        "again)\n",
	        c->conn_reopened);
	if (c->conn_backoffs > 0)
		fprintf(
		    out,
		    "  Reopened after a backoff: %" PRIu64
		    " (the connection before ended, or the attempt failed, without an answer)\n",
		    c->conn_backoffs);
	fprintf(out, "  Lost with connection: %" PRIu64 " (in flight when it ended; in lost)\n",
	        c->conn_lost);
	fprintf(out, "  Queries per connection: %.1f; peak in flight on one: %" PRIu64 "\n",
	        c->conn_opened ? (double)c->sent / (double)c->conn_opened : 0.0,
	        c->conn_inflight_peak);
	if (hc->count > 0)
		fprintf(out, "  Connect time (s):     p50 %.6f, p99 %.6f, max %.6f\n",
		        (double)dv_hist_quantile_ns(hc, 0.50) / 1e9,
		        (double)dv_hist_quantile_ns(hc, 0.99) / 1e9, (double)hc->max_ns / 1e9);
	if (c->conn_syn_retries > 0)
		fprintf(out,
		        "  SYNs sent again:      %" PRIu64
		        " (1 s or more each: the server's accept "
		        "queue was full, or SYNs were lost)\n",
		        c->conn_syn_retries);
	if (c->tls_full + c->tls_resumed > 0)
		fprintf(out,
		        "  TLS handshakes:       full %" PRIu64 ", resumed %" PRIu64
		        "; time (s) p50 %.6f, p99 %.6f\n",
		        c->tls_full, c->tls_resumed, (double)dv_hist_quantile_ns(hh, 0.50) / 1e9,
		        (double)dv_hist_quantile_ns(hh, 0.99) / 1e9);
	if (c->http_non200 + c->stream_errors > 0)
		fprintf(out,
		        "  HTTP not 200:         %" PRIu64 " (4xx %" PRIu64 ", 5xx %" PRIu64
		        "); stream errors %" PRIu64 " (both in lost)\n",
		        c->http_non200, c->http_4xx, c->http_5xx, c->stream_errors);
}

void dv_report_pass_head(FILE *out, const dv_study_t *s, const dv_pass_record_t *p)
{
	const dv_pass_result_t *r = &p->res;
	const dv_target_t *t = &s->targets[p->target];
	const dv_list_t *l = &s->lists[p->list];
	/* Before the pass (no result yet): the study's settings and the time now. */
	bool before = r->sockets == 0;
	uint32_t sockets = before ? s->run.sockets : r->sockets;
	uint32_t threads = before ? s->run.threads : r->threads;
	uint32_t outstanding = before ? s->run.max_outstanding : r->max_outstanding;
	time_t start = before ? time(NULL) : (time_t)(r->start_wall_ns / 1000000000ULL);
	char when[64];
	struct tm tm;

	localtime_r(&start, &tm);
	strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(out,
	        "[Status] Sending queries (to %s, target %s, list %s: %s, %" PRIu64 " quer%s)\n",
	        t->addr_text ? t->addr_text : t->spec, t->label, l->label, l->path, l->queries,
	        l->queries == 1 ? "y" : "ies");
	fprintf(out, "[Status] Pass: %s, repeat %u; %u %s%s%s, %u thread%s, %u outstanding\n",
	        dv_pass_kind_name(p->kind), p->repeat + 1, sockets,
	        s->run.stream ? dv_tp_kind_name(s->run.tp.kind) : "",
	        s->run.stream ? " connection" : "socket", sockets == 1 ? "" : "s", threads,
	        threads == 1 ? "" : "s", outstanding);
	if (p->kind == DV_PASS_COLD)
		fprintf(out,
		        "[Status] Flush command took %.3f s; target answered the probe after %.3f "
		        "s (%u probe quer%s)\n",
		        p->flush_s, p->ready_wait_s, p->probe_queries,
		        p->probe_queries == 1 ? "y" : "ies");
	fprintf(out, "[Status] Started at: %s\n", when);
	const dv_run_config_t run = dv_study_pass_config(s, p->kind);
	print_stop_rule(out, &run);
}

void dv_report_pass_body(FILE *out, const dv_study_t *s, const dv_pass_record_t *p)
{
	const dv_pass_result_t *r = &p->res;
	const dv_counters_t *c = &r->stats.c;
	const dv_hist_t *h = &r->stats.latency;
	const dv_list_t *l = &s->lists[p->list];
	uint64_t rc_total = 0, syscalls;
	double cpu = r->cpu_user_s + r->cpu_sys_s;
	unsigned i;
	bool first = true;

	switch (r->end) {
	case DV_END_LIST:
		fprintf(out, "[Status] Testing complete (end of file)\n");
		break;
	case DV_END_TIME:
		fprintf(out, "[Status] Testing complete (time limit)\n");
		break;
	case DV_END_INTERRUPT:
		fprintf(out, "[Status] Testing INTERRUPTED (signal): queries still in flight "
		             "are counted as interrupted, not lost\n");
		break;
	}
	fprintf(out, "\nStatistics:\n\n");
	fprintf(out, "  Queries sent:         %" PRIu64 "\n", c->sent);
	if (c->not_sent > 0)
		fprintf(out, "  Queries not sent:     %" PRIu64 " (local send failures)\n",
		        c->not_sent);
	fprintf(out, "  Queries completed:    %" PRIu64 " (%.2f%%)\n", c->completed,
	        pct(c->completed, c->sent));
	fprintf(out, "  Queries lost:         %" PRIu64 " (%.2f%%)\n", c->lost,
	        pct(c->lost, c->sent));
	if (r->interrupted || c->interrupted > 0)
		fprintf(out,
		        "  Queries interrupted:  %" PRIu64 " (in flight at the interruption)\n",
		        c->interrupted);
	print_loss_split(out, r);
	print_no_answer(out, r);
	fprintf(out, "  Late answers:         %" PRIu64 " (after the timeout; counted lost)\n",
	        c->late);
	fprintf(out, "  Unexpected answers:   %" PRIu64 "\n", c->unexpected);
	fprintf(out, "  Malformed answers:    %" PRIu64 "\n", c->malformed);
	if (s->replay.tsig_on)
		print_tsig(out, c);
	if (c->truncated > 0)
		fprintf(out, "  Truncated (TC) answers: %" PRIu64 "\n", c->truncated);
	print_tc(out, c);
	fprintf(out, "\n  Response codes:       ");
	for (i = 0; i < DV_RCODES; i++)
		rc_total += c->rcode[i];
	for (i = 0; i < DV_RCODES; i++) {
		if (c->rcode[i] == 0)
			continue;
		fprintf(out, "%s%s %" PRIu64 " (%.2f%%)", first ? "" : ", ", dv_rcode_name(i),
		        c->rcode[i], pct(c->rcode[i], rc_total));
		first = false;
	}
	fprintf(out, "%s\n", first ? "none" : "");
	fprintf(out, "  Average packet size:  request %.0f, response %.0f\n",
	        c->sent ? (double)c->bytes_sent / (double)c->sent : 0.0,
	        c->completed ? (double)c->bytes_received / (double)c->completed : 0.0);
	fprintf(out, "  Run time (s):         %.6f\n", r->run_time_s);
	fprintf(out, "  Queries per second:   %.6f\n", r->qps);
	fprintf(out, "\n  Average Latency (s):  %.6f (min %.6f, max %.6f)\n",
	        dv_hist_mean_ns(h) / 1e9, h->count ? (double)h->min_ns / 1e9 : 0.0,
	        (double)h->max_ns / 1e9);
	fprintf(out, "  Latency StdDev (s):   %.6f\n", dv_hist_stddev_ns(h) / 1e9);
	fprintf(out, "  Latency percentiles (s): p50 %.6f, p90 %.6f, p99 %.6f, p99.9 %.6f\n",
	        (double)dv_hist_quantile_ns(h, 0.50) / 1e9,
	        (double)dv_hist_quantile_ns(h, 0.90) / 1e9,
	        (double)dv_hist_quantile_ns(h, 0.99) / 1e9,
	        (double)dv_hist_quantile_ns(h, 0.999) / 1e9);
	print_sampling_error(out, r);
	print_intended(out, r);
	dv_report_clock(out, r, s->run.stream);
	fprintf(out, "  Peak in flight:       %" PRIu64 " (limit %u)\n", c->inflight_peak,
	        r->max_outstanding);
	print_replay(out, s, l, r);
	dv_report_connections(out, r);
	syscalls = c->send_calls + c->recv_calls + c->wait_calls;
	fprintf(out, "\n  Generator CPU (s):    user %.3f, system %.3f\n", r->cpu_user_s,
	        r->cpu_sys_s);
	fprintf(out, "  CPU per query (us):   %.3f\n",
	        c->completed ? cpu * 1e6 / (double)c->completed : 0.0);
	fprintf(out,
	        "  System calls per query: %.3f (%s %" PRIu64 ", %s %" PRIu64
	        ", epoll_wait %" PRIu64 ")\n",
	        c->completed ? (double)syscalls / (double)c->completed : 0.0,
	        s->run.stream ? "send" : "sendmmsg", c->send_calls,
	        s->run.stream ? "receive" : "recvmmsg", c->recv_calls, c->wait_calls);
	if (c->icmp_errors > 0)
		fprintf(out, "  ICMP errors:          %" PRIu64 " (%" PRIu64 " port unreachable)\n",
		        c->icmp_errors, c->icmp_port_unreachable);
	if (r->udp.valid && !dv_run_over_tcp(&s->run)) /* UDP, and DoQ over it */
		fprintf(out,
		        "  Kernel UDP counters:  receive-buffer errors %" PRIu64
		        ", send-buffer errors %" PRIu64 ", no-port %" PRIu64
		        " (host-wide, during the pass)\n",
		        r->udp.rcvbuf_errors, r->udp.sndbuf_errors, r->udp.no_ports);
	dv_report_server(out, r);
	fprintf(out, "\n");
}

void dv_report_latency_histogram(FILE *out, const dv_hist_t *h)
{
	int i;

	fprintf(out, "  Latency bucket (s): answer count\n");
	for (i = 0; i < DV_HIST_BUCKETS; i++)
		if (h->bucket[i] > 0)
			fprintf(out, "  %.9f - %.9f: %" PRIu64 "\n",
			        (double)dv_hist_bucket_low(i) / 1e9,
			        (double)dv_hist_bucket_high(i) / 1e9, h->bucket[i]);
	fprintf(out, "\n");
}
