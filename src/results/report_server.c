/* report_server: the "Server" lines of the per-pass text report (doc/numbers.md, "Server"). */
#include "config.h"

#include <inttypes.h>

#include "results/report.h"

static void print_syscalls(FILE *out, const dv_server_cost_t *s)
{
	if (!s->sys_ok) {
		fprintf(out, "  Server system calls:  not available: %s\n", s->sys_why);
		return;
	}
	fprintf(out,
	        "  Server system calls per answer: %.3f (recv %.3f, send %.3f, poll %.3f, "
	        "read/write %.3f; %" PRIu64 " in all)\n",
	        dv_server_per_answer(s, s->sys[DV_SYS_ALL]),
	        dv_server_per_answer(s, s->sys[DV_SYS_RECV]),
	        dv_server_per_answer(s, s->sys[DV_SYS_SEND]),
	        dv_server_per_answer(s, s->sys[DV_SYS_POLL]),
	        dv_server_per_answer(s, s->sys[DV_SYS_RW]), s->sys[DV_SYS_ALL]);
}

/* --server-stats: what the server's own counters say of the pass. */
static void print_stats(FILE *out, const dv_pass_result_t *r)
{
	const dv_server_cost_t *s = &r->server;
	uint64_t answered = r->stats.c.completed + r->stats.c.late;

	if (!s->stats)
		return;
	if (!s->stats_ok) {
		fprintf(out, "  Server counters (%s): not read: %s\n", s->stats_kind,
		        s->stats_error);
		return;
	}
	fprintf(out,
	        "  Server counters (%s): %" PRIu64 " queries counted by the server (%" PRIu64
	        " answers here)\n",
	        s->stats_kind, s->stats_queries, answered);
	if (s->stats_cache)
		fprintf(out,
		        "  Server cache per query: hits %.4f, misses %.4f (%" PRIu64
		        " hits, %" PRIu64 " misses)\n",
		        s->stats_queries ? (double)s->stats_hits / (double)s->stats_queries : 0,
		        s->stats_queries ? (double)s->stats_misses / (double)s->stats_queries : 0,
		        s->stats_hits, s->stats_misses);
}

void dv_report_server(FILE *out, const dv_pass_result_t *r)
{
	const dv_server_cost_t *s = &r->server;

	if (!s->measured)
		return;
	if (!s->proc) {
		fputc('\n', out);
		print_stats(out, r);
		return;
	}
	if (!s->ok) {
		fprintf(out, "\n  Server:               not measured: %s\n", s->error);
		print_stats(out, r);
		return;
	}
	fprintf(out, "\n  Server:               PID %d (%s), %s; %u thread%s\n", (int)s->pid,
	        s->comm,
	        s->source[0] == 'a'   ? "the owner of the target's socket"
	        : s->source[0] == 'c' ? "read by --server-cost"
	                              : "named by --server-pid",
	        s->threads, s->threads == 1 ? "" : "s");
	fprintf(out, "  Server CPU (s):       user %.3f, system %.3f\n", s->cpu_user_s,
	        s->cpu_sys_s);
	fprintf(out,
	        "  Server CPU per answer (us): %.3f (user %.3f, system %.3f; %" PRIu64
	        " answers)\n",
	        dv_server_us_per_answer(s), dv_server_user_us_per_answer(s),
	        dv_server_sys_us_per_answer(s), s->answers);
	fprintf(out,
	        "  Server context switches per answer: voluntary %.4f, involuntary %.4f (%" PRIu64
	        ", %" PRIu64 ")\n",
	        dv_server_per_answer(s, s->vcsw), dv_server_per_answer(s, s->ivcsw), s->vcsw,
	        s->ivcsw);
	print_syscalls(out, s);
	fprintf(out,
	        "  Server memory (kB):   RSS %" PRIu64 " at the start, %" PRIu64
	        " at the end; peak %" PRIu64 " (%s)\n",
	        s->rss_start_kb, s->rss_end_kb, s->rss_peak_kb,
	        s->peak_in_pass ? "during the pass" : "since the process started");
	if (s->gen_cpus[0] != '\0')
		fprintf(out,
		        "  Server CPUs:          ran on %s (allowed %s); generator on %s (allowed "
		        "%s)\n",
		        s->cpus, s->cpus_allowed, s->gen_cpus, s->gen_allowed);
	else if (s->cpus[0] != '\0') /* --server-cost: another host's CPUs */
		fprintf(out, "  Server CPUs:          ran on %s (allowed %s)\n", s->cpus,
		        s->cpus_allowed);
	if (s->shares_cpu)
		fprintf(
		    out,
		    "  Warning: the server (allowed CPUs %s) and the generator (allowed %s) can "
		    "share a CPU: each one's load biases the other's figures (pin them apart, "
		    "e.g. taskset)\n",
		    s->cpus_allowed, s->gen_allowed);
	print_stats(out, r);
}
