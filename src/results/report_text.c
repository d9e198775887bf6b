/* report_text: the per-pass text report, laid out like dnsperf's so its users read it at a glance.
 */
#include "config.h"

#include "results/report.h"

#include <inttypes.h>
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

void dv_report_pass_text(FILE *out, const dv_study_t *s, const dv_pass_record_t *p)
{
	const dv_pass_result_t *r = &p->res;
	const dv_counters_t *c = &r->stats.c;
	const dv_hist_t *h = &r->stats.latency;
	const dv_target_t *t = &s->targets[p->target];
	const dv_list_t *l = &s->lists[p->list];
	time_t start = (time_t)(r->start_wall_ns / 1000000000ULL);
	char when[64];
	struct tm tm;
	uint64_t rc_total = 0, syscalls;
	double cpu = r->cpu_user_s + r->cpu_sys_s;
	unsigned i;
	bool first = true;

	localtime_r(&start, &tm);
	strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(out,
	        "[Status] Sending queries (to %s, target %s, list %s: %s, %" PRIu64 " queries)\n",
	        t->addr_text ? t->addr_text : t->spec, t->label, l->label, l->path, l->queries);
	fprintf(out, "[Status] Pass: %s, repeat %u; %u socket%s, %u thread%s, %u outstanding\n",
	        dv_pass_kind_name(p->kind), p->repeat + 1, r->sockets, r->sockets == 1 ? "" : "s",
	        r->threads, r->threads == 1 ? "" : "s", r->max_outstanding);
	if (p->kind == DV_PASS_COLD)
		fprintf(out, "[Status] Cache flushed in %.3f s; target answered after %.3f s\n",
		        p->flush_s, p->ready_wait_s);
	fprintf(out, "[Status] Started at: %s\n", when);
	print_stop_rule(out, &s->run);
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
	fprintf(out, "  Late answers:         %" PRIu64 " (after the timeout; counted lost)\n",
	        c->late);
	fprintf(out, "  Unexpected answers:   %" PRIu64 "\n", c->unexpected);
	fprintf(out, "  Malformed answers:    %" PRIu64 "\n", c->malformed);
	if (c->truncated > 0)
		fprintf(out, "  Truncated (TC) answers: %" PRIu64 "\n", c->truncated);
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
	if (c->forfeited > 0)
		fprintf(out,
		        "  Queries forfeited:    %" PRIu64 " (the generator fell over 1 s behind "
		        "its schedule; never sent)\n",
		        c->forfeited);
	fprintf(out, "  Peak in flight:       %" PRIu64 " (limit %u)\n", c->inflight_peak,
	        r->max_outstanding);
	syscalls = c->send_calls + c->recv_calls + c->wait_calls;
	fprintf(out, "\n  Generator CPU (s):    user %.3f, system %.3f\n", r->cpu_user_s,
	        r->cpu_sys_s);
	fprintf(out, "  CPU per query (us):   %.3f\n",
	        c->completed ? cpu * 1e6 / (double)c->completed : 0.0);
	fprintf(out,
	        "  System calls per query: %.3f (sendmmsg %" PRIu64 ", recvmmsg %" PRIu64
	        ", epoll_wait %" PRIu64 ")\n",
	        c->completed ? (double)syscalls / (double)c->completed : 0.0, c->send_calls,
	        c->recv_calls, c->wait_calls);
	if (c->icmp_errors > 0)
		fprintf(out, "  ICMP errors:          %" PRIu64 " (e.g. port unreachable)\n",
		        c->icmp_errors);
	if (r->udp.valid)
		fprintf(out,
		        "  Kernel UDP counters:  receive-buffer errors %" PRIu64
		        ", send-buffer errors %" PRIu64 ", no-port %" PRIu64
		        " (host-wide, during the pass)\n",
		        r->udp.rcvbuf_errors, r->udp.sndbuf_errors, r->udp.no_ports);
	fprintf(out, "\n");
}
