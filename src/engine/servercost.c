/* servercost: finds the server on this host and reads its /proc figures and system-call
 * counters at a pass's two edges; nothing runs in between. */
#include "config.h"

#include "engine/servercost.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/sockstat.h"
#include "engine/srvcmd.h"

#define MAX_INODES 64

double dv_server_per_answer(const dv_server_cost_t *s, uint64_t count)
{
	return s->ok && s->answers > 0 ? (double)count / (double)s->answers : 0;
}

double dv_server_user_us_per_answer(const dv_server_cost_t *s)
{
	return s->ok && s->answers > 0 ? s->cpu_user_s * 1e6 / (double)s->answers : 0;
}

double dv_server_sys_us_per_answer(const dv_server_cost_t *s)
{
	return s->ok && s->answers > 0 ? s->cpu_sys_s * 1e6 / (double)s->answers : 0;
}

double dv_server_us_per_answer(const dv_server_cost_t *s)
{
	return dv_server_user_us_per_answer(s) + dv_server_sys_us_per_answer(s);
}

void dv_srvcost_init(dv_srvcost_t *sc, pid_t pid)
{
	memset(sc, 0, sizeof(*sc));
	sc->pid = pid > 0 ? pid : 0;
	sc->proc = pid >= 0;
	sc->syscalls = true;
}

void dv_srvcost_free(dv_srvcost_t *sc)
{
	if (sc == NULL)
		return;
	if (sc->sys_open)
		dv_syscount_close(&sc->sc);
	sc->sys_open = false;
	dv_srvstats_cfg_free(sc->stats);
	free(sc->stats);
	sc->stats = NULL;
	free(sc->cmd);
	sc->cmd = NULL;
}

/* --server-cost: the command's first reading (its figures replace /proc's). */
static void cmd_begin(dv_srvcost_t *sc)
{
	int32_t pid = 0;

	snprintf(sc->out.source, sizeof(sc->out.source), "cmd");
	sc->out.measured = true;
	if (dv_srvcmd_read(sc->cmd, &sc->p0, &pid, sc->out.error, sizeof(sc->out.error)) != 0)
		return;
	sc->out.pid = pid;
	snprintf(sc->out.comm, sizeof(sc->out.comm), "%s", sc->p0.comm);
	sc->cur = pid > 0 ? pid : 1; /* read: the end edge reads again */
}

static void cmd_end(dv_srvcost_t *sc, uint64_t answers)
{
	dv_procstat_t p1;
	int32_t pid = 0;

	if (sc->cur != 0 &&
	    dv_srvcmd_read(sc->cmd, &p1, &pid, sc->out.error, sizeof(sc->out.error)) == 0) {
		if (pid != sc->out.pid || p1.start_ticks != sc->p0.start_ticks)
			snprintf(sc->out.error, sizeof(sc->out.error),
			         "--server-cost: the server was replaced during the pass (PID %d, "
			         "then %d)",
			         (int)sc->out.pid, (int)pid);
		else {
			dv_server_cost_delta(&sc->p0, &p1, DV_SRVCMD_TICKS_PER_S, &sc->out);
			if (dv_cpumask_empty(&p1.allowed))
				sc->out.cpus_allowed[0] = '\0';
			sc->out.ok = true;
			sc->out.answers = answers;
		}
	}
	snprintf(sc->out.sys_why, sizeof(sc->out.sys_why),
	         "not counted by a --server-cost command");
	if (!sc->out.ok)
		fprintf(stderr,
		        "dnsvolley: warning: server not measured: %s (client figures only)\n",
		        sc->out.error);
	sc->cur = 0;
}

void dv_server_stats_delta(const dv_srvstats_reading_t *a, const dv_srvstats_reading_t *b,
                           dv_server_cost_t *out)
{
	/* a counter that went down: the server restarted or reset them; no figure then */
	out->stats_ok = b->queries >= a->queries && b->hits >= a->hits && b->misses >= a->misses;
	if (!out->stats_ok) {
		snprintf(out->stats_error, sizeof(out->stats_error),
		         "the counters went down during the pass (the server restarted or reset "
		         "them)");
		return;
	}
	out->stats_queries = b->queries - a->queries;
	out->stats_cache = a->has_cache && b->has_cache;
	out->stats_hits = out->stats_cache ? b->hits - a->hits : 0;
	out->stats_misses = out->stats_cache ? b->misses - a->misses : 0;
}

void dv_server_cost_delta(const dv_procstat_t *a, const dv_procstat_t *b, long ticks_per_s,
                          dv_server_cost_t *out)
{
	double tps = ticks_per_s > 0 ? (double)ticks_per_s : 100.0;
	dv_cpumask_t ran = a->ran;

	out->cpu_user_s =
	    b->utime_ticks > a->utime_ticks ? (double)(b->utime_ticks - a->utime_ticks) / tps : 0;
	out->cpu_sys_s =
	    b->stime_ticks > a->stime_ticks ? (double)(b->stime_ticks - a->stime_ticks) / tps : 0;
	/* a thread that ended during the pass takes its switches along: never negative */
	out->vcsw = b->vcsw > a->vcsw ? b->vcsw - a->vcsw : 0;
	out->ivcsw = b->ivcsw > a->ivcsw ? b->ivcsw - a->ivcsw : 0;
	out->rss_start_kb = a->rss_kb;
	out->rss_end_kb = b->rss_kb;
	out->rss_peak_kb = b->hwm_kb;
	out->threads = b->threads;
	dv_cpumask_or(&ran, &b->ran);
	dv_cpumask_format(&ran, out->cpus, sizeof(out->cpus));
	dv_cpumask_format(&b->allowed, out->cpus_allowed, sizeof(out->cpus_allowed));
}

/* The generator's threads' CPUs now (this process's tasks) and its affinity. */
static void generator_cpus(dv_cpumask_t *ran, dv_cpumask_t *allowed)
{
	dv_procstat_t me;
	cpu_set_t set;

	memset(ran, 0, sizeof(*ran));
	memset(allowed, 0, sizeof(*allowed));
	if (dv_procstat_read("/proc", getpid(), &me) == 0) {
		*ran = me.ran;
		*allowed = me.allowed;
	}
	if (dv_cpumask_empty(allowed) && sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				dv_cpumask_set(allowed, c);
	}
}

/* Which process serves the target: the one named, or the owner of its socket. */
static pid_t find_server(dv_srvcost_t *sc, const struct sockaddr_storage *server, bool tcp)
{
	uint64_t inodes[MAX_INODES];
	size_t n;
	unsigned unreadable = 0;
	pid_t owner;

	n = dv_sockstat_inodes(server, tcp ? 1 : 0, inodes, MAX_INODES);
	if (sc->pid > 0) {
		snprintf(sc->out.source, sizeof(sc->out.source), "pid");
		/* a named process must be the target's server when the target is on this host */
		if (n > 0 && kill(sc->pid, 0) == 0 &&
		    dv_procstat_holds("/proc", sc->pid, inodes, n) == 0) {
			owner = dv_procstat_socket_owner("/proc", inodes, n, NULL);
			snprintf(sc->out.error, sizeof(sc->out.error),
			         "server PID %d is not the target's server (it holds none of its "
			         "sockets; PID %d does)",
			         (int)sc->pid, (int)owner);
			return 0;
		}
		return sc->pid;
	}
	snprintf(sc->out.source, sizeof(sc->out.source), "auto");
	if (n == 0)
		return 0; /* not on this host: nothing measured, nothing said */
	owner = dv_procstat_socket_owner("/proc", inodes, n, &unreadable);
	if (owner == 0)
		snprintf(sc->out.error, sizeof(sc->out.error),
		         "the target's socket is on this host but no readable process holds it "
		         "(%u processes' descriptors unreadable; name it with --server-pid)",
		         unreadable);
	return owner;
}

static void open_syscalls(dv_srvcost_t *sc)
{
	int mounted = 0;

	sc->sys_open = false;
	if (!sc->syscalls) {
		snprintf(sc->out.sys_why, sizeof(sc->out.sys_why),
		         "not asked (--server-syscalls no)");
		return;
	}
	if (dv_syscount_open(&sc->sc, sc->cur, &mounted, sc->out.sys_why,
	                     sizeof(sc->out.sys_why)) != 0)
		return;
	if (mounted && !sc->warned_mount)
		fprintf(stderr, "dnsvolley: mounted tracefs on /sys/kernel/tracing to count the "
		                "server's system calls\n");
	sc->warned_mount = sc->warned_mount || mounted;
	if (dv_syscount_read(&sc->sc, sc->sys0) != 0) {
		snprintf(sc->out.sys_why, sizeof(sc->out.sys_why), "reading the counters failed");
		dv_syscount_close(&sc->sc);
		return;
	}
	sc->sys_open = true;
}

static void proc_begin(dv_srvcost_t *sc, const struct sockaddr_storage *server, bool tcp)
{
	int rc;

	sc->cur = find_server(sc, server, tcp);
	if (sc->cur == 0) {
		sc->out.measured = sc->out.error[0] != '\0';
		return;
	}
	sc->out.measured = true;
	sc->out.pid = (int32_t)sc->cur;
	rc = dv_procstat_read("/proc", sc->cur, &sc->p0);
	if (rc != 0) {
		snprintf(sc->out.error, sizeof(sc->out.error), "server PID %d %s", (int)sc->cur,
		         rc == -ESRCH    ? "is gone (no such process)"
		         : rc == -EACCES ? "cannot be read (permission denied)"
		                         : "has unreadable /proc files");
		sc->cur = 0;
		return;
	}
	snprintf(sc->out.comm, sizeof(sc->out.comm), "%s", sc->p0.comm);
	sc->out.peak_in_pass = dv_procstat_reset_peak(sc->cur) == 0;
	open_syscalls(sc);
	dv_cpumask_t allowed;
	generator_cpus(&sc->gen0, &allowed);
	/* the last thing before the gate: the reading the pass is measured from */
	if (dv_procstat_read("/proc", sc->cur, &sc->p0) != 0)
		sc->cur = 0;
	if (sc->sys_open)
		(void)dv_syscount_read(&sc->sc, sc->sys0);
	if (sc->cur == 0)
		snprintf(sc->out.error, sizeof(sc->out.error),
		         "server PID %d is gone (no such process)", (int)sc->out.pid);
}

static void end_syscalls(dv_srvcost_t *sc)
{
	uint64_t now[DV_SYS_FAMILIES];

	if (!sc->sys_open)
		return;
	if (dv_syscount_read(&sc->sc, now) == 0) {
		for (int f = 0; f < DV_SYS_FAMILIES; f++)
			sc->out.sys[f] = now[f] > sc->sys0[f] ? now[f] - sc->sys0[f] : 0;
		sc->out.sys_ok = true;
		sc->out.sys_why[0] = '\0';
	} else {
		snprintf(sc->out.sys_why, sizeof(sc->out.sys_why), "reading the counters failed");
	}
	dv_syscount_close(&sc->sc);
	sc->sys_open = false;
}

static void proc_end(dv_srvcost_t *sc, uint64_t answers)
{
	dv_procstat_t p1;
	dv_cpumask_t gen, gen_allowed, both;
	int rc;

	if (sc->cur == 0) {
		if (sc->out.measured)
			fprintf(stderr,
			        "dnsvolley: warning: server not measured: %s (client figures "
			        "only)\n",
			        sc->out.error);
		return;
	}
	rc = dv_procstat_read("/proc", sc->cur, &p1);
	end_syscalls(sc);
	if (rc != 0 || p1.start_ticks != sc->p0.start_ticks) {
		snprintf(sc->out.error, sizeof(sc->out.error), "server PID %d %s during the pass",
		         (int)sc->cur, rc != 0 ? "ended" : "was replaced");
		sc->out.sys_ok = false;
		memset(sc->out.sys, 0, sizeof(sc->out.sys));
		fprintf(stderr,
		        "dnsvolley: warning: server not measured: %s (client figures only)\n",
		        sc->out.error);
		sc->cur = 0;
		return;
	}
	dv_server_cost_delta(&sc->p0, &p1, sysconf(_SC_CLK_TCK), &sc->out);
	sc->out.ok = true;
	sc->out.answers = answers;
	generator_cpus(&gen, &gen_allowed);
	dv_cpumask_or(&gen, &sc->gen0);
	dv_cpumask_format(&gen, sc->out.gen_cpus, sizeof(sc->out.gen_cpus));
	dv_cpumask_format(&gen_allowed, sc->out.gen_allowed, sizeof(sc->out.gen_allowed));
	both = gen_allowed;
	sc->out.shares_cpu = dv_cpumask_and(&both, &p1.allowed);
	sc->cur = 0;
}

/* The counters at the start edge (before the process is read: the tool's own work on the
 * server stays outside the window). */
static void stats_begin(dv_srvcost_t *sc)
{
	sc->st0_ok = false;
	if (sc->stats == NULL)
		return;
	sc->out.stats = true;
	snprintf(sc->out.stats_kind, sizeof(sc->out.stats_kind), "%s",
	         dv_srvstats_kind_name(sc->stats->kind));
	sc->st0_ok = dv_srvstats_read(sc->stats, &sc->st0, sc->out.stats_error,
	                              sizeof(sc->out.stats_error)) == 0;
}

static void stats_end(dv_srvcost_t *sc)
{
	dv_srvstats_reading_t st1;

	if (sc->stats == NULL)
		return;
	if (sc->st0_ok && dv_srvstats_read(sc->stats, &st1, sc->out.stats_error,
	                                   sizeof(sc->out.stats_error)) == 0)
		dv_server_stats_delta(&sc->st0, &st1, &sc->out);
	if (!sc->out.stats_ok)
		fprintf(
		    stderr,
		    "dnsvolley: warning: the server's counters (--server-stats %s) not read: %s "
		    "(client figures only)\n",
		    sc->stats->spec, sc->out.stats_error);
	sc->st0_ok = false;
}

void dv_srvcost_begin(dv_srvcost_t *sc, const struct sockaddr_storage *server, bool tcp)
{
	if (sc->sys_open) /* a pass that failed before its end edge left them open */
		dv_syscount_close(&sc->sc);
	memset(&sc->out, 0, sizeof(sc->out));
	sc->sys_open = false;
	sc->cur = 0;
	stats_begin(sc);
	if (sc->cmd != NULL)
		cmd_begin(sc);
	else if (sc->proc)
		proc_begin(sc, server, tcp);
}

void dv_srvcost_end(dv_srvcost_t *sc, uint64_t answers, dv_server_cost_t *out)
{
	if (sc->cmd != NULL)
		cmd_end(sc, answers);
	else if (sc->proc)
		proc_end(sc, answers);
	sc->out.proc = sc->out.measured;
	stats_end(sc);
	sc->out.measured = sc->out.measured || sc->out.stats;
	*out = sc->out;
}
