/* run: one pass: split the work over workers, start them together, watch signals, merge results. */
#include "config.h"

#include "engine/run.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "base/netstamp.h"
#include "engine/sockstat.h"
#include "engine/worker.h"
#include "engine/xdp.h"

#define DV_MAIN_TICK_MS 10

/* SIGINT/SIGTERM: counted here by a process-wide handler; passes poll the count. */
static volatile sig_atomic_t stop_signals;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;

static void on_signal(int sig)
{
	(void)sig;
	if (stop_signals < 100)
		stop_signals++;
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool dv_run_stop_requested(void)
{
	return stop_signals > 0;
}

void dv_run_catch_signals(void)
{
	pthread_once(&handler_once, install_handlers);
}

static void read_udp_snmp(dv_udp_snmp_t *u)
{
	FILE *f = fopen("/proc/net/snmp", "r");
	char names[1024], values[1024];

	memset(u, 0, sizeof(*u));
	if (f == NULL)
		return;
	while (fgets(names, sizeof(names), f) != NULL) {
		char *sn, *sv, *tn, *tv;
		if (strncmp(names, "Udp:", 4) != 0)
			continue;
		if (fgets(values, sizeof(values), f) == NULL || strncmp(values, "Udp:", 4) != 0)
			break;
		tn = strtok_r(names + 4, " \n", &sn);
		tv = strtok_r(values + 4, " \n", &sv);
		while (tn != NULL && tv != NULL) {
			uint64_t v = strtoull(tv, NULL, 10);
			if (strcmp(tn, "InDatagrams") == 0)
				u->in_datagrams = v;
			else if (strcmp(tn, "NoPorts") == 0)
				u->no_ports = v;
			else if (strcmp(tn, "InErrors") == 0)
				u->in_errors = v;
			else if (strcmp(tn, "OutDatagrams") == 0)
				u->out_datagrams = v;
			else if (strcmp(tn, "RcvbufErrors") == 0)
				u->rcvbuf_errors = v;
			else if (strcmp(tn, "SndbufErrors") == 0)
				u->sndbuf_errors = v;
			tn = strtok_r(NULL, " \n", &sn);
			tv = strtok_r(NULL, " \n", &sv);
		}
		u->valid = 1;
		break;
	}
	fclose(f);
}

static void udp_delta(dv_udp_snmp_t *d, const dv_udp_snmp_t *a, const dv_udp_snmp_t *b)
{
	d->valid = a->valid && b->valid;
	d->in_datagrams = b->in_datagrams - a->in_datagrams;
	d->no_ports = b->no_ports - a->no_ports;
	d->in_errors = b->in_errors - a->in_errors;
	d->out_datagrams = b->out_datagrams - a->out_datagrams;
	d->rcvbuf_errors = b->rcvbuf_errors - a->rcvbuf_errors;
	d->sndbuf_errors = b->sndbuf_errors - a->sndbuf_errors;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Raise the soft open-file limit when the sockets need it and the hard limit allows. */
static int ensure_fd_limit(uint32_t sockets, dv_err_t *err)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)sockets + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		return dv_err_set(err, -EMFILE,
		                  "-c %u needs %llu open files but the limit is %llu (hard limit "
		                  "%llu); lower -c or raise the limit (ulimit -n)",
		                  sockets, (unsigned long long)need,
		                  (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return dv_err_set(err, -errno, "cannot raise the open-file limit to %llu: %s",
		                  (unsigned long long)need, strerror(errno));
	return 0;
}

typedef struct dv_pass {
	const dv_run_config_t *cfg;
	dv_worker_t *w;
	uint32_t nw;
	uint64_t end_seq;        /* the workers' common sequence end (dv_run_split) */
	dv_start_barrier_t gate; /* the workers wait on it to start together */
	struct dv_xdp *xdp;      /* --xdp: the interface's program, shared by the workers */
	uv_loop_t loop;
	uv_timer_t tick;
	uv_async_t done;
	int seen_signals;
	uint64_t t0_ns;
	uint64_t next_interval_ns;
	uint64_t next_progress_ns;
	uint64_t epoch;        /* snapshot requests sent to the workers */
	bool interval_pending; /* waiting for the workers' snapshots of this boundary */
	uint64_t pending_t_ns; /* the boundary they were asked at */
	dv_stats_t prev;       /* merged snapshot at the previous interval */
	uint64_t prev_t_ns;
	dv_pass_result_t *res;
	size_t cap_intervals;
	size_t cap_lat_cells;
	bool progress_shown; /* a progress line is on the terminal now */
	bool ended;          /* the workers are joined: no more progress lines */
} dv_pass_t;

static void merge_snapshots(dv_pass_t *p, dv_stats_t *out, uint64_t *inflight, bool *sending)
{
	uint32_t i;

	dv_stats_init(out);
	*inflight = 0;
	*sending = false;
	for (i = 0; i < p->nw; i++) {
		dv_stats_t s;
		uint64_t inf;
		bool snd;
		dv_worker_snapshot(&p->w[i], &s, &inf, &snd);
		dv_stats_merge(out, &s);
		*inflight += inf;
		*sending = *sending || snd;
	}
}

static void show_progress(dv_pass_t *p, uint64_t now);

/*
 * One -S line: ours, or dnsperf's "SECONDS.USEC: QPS" (wall clock at the
 * boundary, completed per second in the interval). The progress line, if shown,
 * is cleared first and drawn again below it, so the two never share a row.
 */
static void print_interval(dv_pass_t *p, const dv_interval_t *iv, uint64_t now)
{
	FILE *out = p->cfg->out != NULL ? p->cfg->out : stdout;
	uint64_t wall = p->res->start_wall_ns + (now - p->t0_ns);

	if (p->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->progress_shown = false;
	}
	if (p->cfg->interval_dnsperf)
		fprintf(out, "%u.%06u: %.6f\n", (unsigned)(wall / DV_NS_PER_S),
		        (unsigned)(wall % DV_NS_PER_S / 1000), iv->qps);
	else
		fprintf(out,
		        "[Interval] %8.3f s  sent %llu  completed %llu  lost %llu  in flight %llu  "
		        "qps %.1f  latency avg %.3f ms p50 %.3f ms p99 %.3f ms\n",
		        iv->t_s, (unsigned long long)iv->sent, (unsigned long long)iv->completed,
		        (unsigned long long)iv->lost, (unsigned long long)iv->inflight, iv->qps,
		        iv->lat_mean_ns / 1e6, iv->lat_p50_ns / 1e6, iv->lat_p99_ns / 1e6);
	fflush(out);
	if (p->cfg->progress && !p->ended)
		show_progress(p, now);
}

/*
 * The interval's histogram delta, sparse, appended to the pass's cells (off the
 * send/receive path: the main thread, once per -S interval); none past
 * DV_RUN_MAX_LAT_CELLS or without memory. Its range is the pass's range so far
 * narrowed to the delta's first and last buckets (the quantiles are unchanged).
 */
static void keep_interval_hist(dv_pass_t *p, const dv_hist_t *delta, dv_interval_t *iv)
{
	dv_pass_result_t *res = p->res;
	dv_hist_cell_t *cells = malloc(DV_HIST_BUCKETS * sizeof(*cells));
	size_t n;

	if (cells == NULL)
		return;
	n = dv_hist_to_cells(delta, cells);
	if (res->n_lat_cells + n > DV_RUN_MAX_LAT_CELLS)
		goto out;
	if (res->n_lat_cells + n > p->cap_lat_cells) {
		size_t cap = p->cap_lat_cells ? p->cap_lat_cells * 2 : 4096;
		while (cap < res->n_lat_cells + n)
			cap *= 2;
		dv_hist_cell_t *grown = realloc(res->lat_cells, cap * sizeof(*grown));
		if (grown == NULL)
			goto out;
		res->lat_cells = grown;
		p->cap_lat_cells = cap;
	}
	if (n > 0)
		memcpy(res->lat_cells + res->n_lat_cells, cells, n * sizeof(*cells));
	iv->lat_kept = true;
	iv->lat_first = res->n_lat_cells;
	iv->lat_n = (uint32_t)n;
	iv->lat_count = delta->count;
	iv->lat_min_ns = UINT64_MAX;
	iv->lat_max_ns = 0;
	if (n > 0) {
		uint64_t lo = dv_hist_bucket_low((int)cells[0].bucket);
		uint64_t hi = cells[n - 1].bucket == DV_HIST_BUCKETS - 1 /* all above the top */
		                  ? delta->max_ns
		                  : dv_hist_bucket_high((int)cells[n - 1].bucket) - 1;
		iv->lat_min_ns = DV_MAX(delta->min_ns, lo);
		iv->lat_max_ns = DV_MIN(delta->max_ns, hi);
	}
	res->n_lat_cells += n;
out:
	free(cells);
}

static void record_interval(dv_pass_t *p, uint64_t now, bool print)
{
	dv_stats_t *cur = malloc(sizeof(*cur));
	dv_hist_t *delta = malloc(sizeof(*delta));
	dv_interval_t iv;
	uint64_t inflight;
	bool sending;
	double len_s;

	if (cur == NULL || delta == NULL)
		goto out;
	merge_snapshots(p, cur, &inflight, &sending);
	dv_hist_diff(delta, &cur->latency, &p->prev.latency);
	len_s = (double)(now - p->prev_t_ns) / 1e9;
	memset(&iv, 0, sizeof(iv));
	iv.t_s = (double)(now - p->t0_ns) / 1e9;
	iv.sent = cur->c.sent - p->prev.c.sent;
	iv.completed = cur->c.completed - p->prev.c.completed;
	iv.lost = cur->c.lost - p->prev.c.lost;
	iv.inflight = inflight;
	iv.qps = len_s > 0 ? (double)iv.completed / len_s : 0;
	iv.lat_mean_ns = dv_hist_mean_ns(delta);
	iv.lat_p50_ns = (double)dv_hist_quantile_ns(delta, 0.50);
	iv.lat_p99_ns = (double)dv_hist_quantile_ns(delta, 0.99);
	keep_interval_hist(p, delta, &iv);
	if (p->res->n_intervals == p->cap_intervals) {
		size_t ncap = p->cap_intervals ? p->cap_intervals * 2 : 64;
		dv_interval_t *n = realloc(p->res->intervals, ncap * sizeof(*n));
		if (n == NULL)
			goto out;
		p->res->intervals = n;
		p->cap_intervals = ncap;
	}
	p->res->intervals[p->res->n_intervals++] = iv;
	if (print)
		print_interval(p, &iv, now);
	p->prev = *cur;
	p->prev_t_ns = now;
out:
	free(cur);
	free(delta);
}

/* The terminal's width in columns: stderr's window size, else $COLUMNS, else 80. */
static unsigned term_width(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	long n;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	n = env != NULL ? strtol(env, NULL, 10) : 0;
	return n > 0 && n < 10000 ? (unsigned)n : 80;
}

/*
 * The live line on stderr: as many fields as fit in the terminal's width less
 * one column (no wrap, so "\r" and clear-to-end-of-line always erase it), most
 * important first.
 */
static void show_progress(dv_pass_t *p, uint64_t now)
{
	dv_stats_t *cur = malloc(sizeof(*cur));
	char field[6][64], line[512];
	uint64_t inflight;
	bool sending;
	double t;
	size_t len, n, i, room = term_width() - 1;

	if (cur == NULL)
		return;
	merge_snapshots(p, cur, &inflight, &sending);
	t = (double)(now - p->t0_ns) / 1e9;
	snprintf(field[0], sizeof(field[0]), sending ? "[%.1fs]" : "[%.1fs, draining]", t);
	snprintf(field[1], sizeof(field[1]), "sent %llu", (unsigned long long)cur->c.sent);
	snprintf(field[2], sizeof(field[2]), "completed %llu",
	         (unsigned long long)cur->c.completed);
	snprintf(field[3], sizeof(field[3]), "qps %.0f", t > 0 ? (double)cur->c.completed / t : 0);
	snprintf(field[4], sizeof(field[4]), "lost %llu", (unsigned long long)cur->c.lost);
	snprintf(field[5], sizeof(field[5]), "in flight %llu", (unsigned long long)inflight);
	if (room > sizeof(line) - 1)
		room = sizeof(line) - 1;
	len = strlen(field[0]) < room ? strlen(field[0]) : room;
	memcpy(line, field[0], len);
	for (i = 1; i < 6; i++) {
		n = strlen(field[i]);
		if (len + 2 + n > room)
			break;
		memcpy(line + len, "  ", 2);
		memcpy(line + len + 2, field[i], n);
		len += 2 + n;
	}
	line[len] = '\0';
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	p->progress_shown = true;
	free(cur);
}

static bool all_finished(const dv_pass_t *p)
{
	uint32_t i;

	for (i = 0; i < p->nw; i++)
		if (!atomic_load(&p->w[i].finished))
			return false;
	return true;
}

static void on_done(uv_async_t *a)
{
	dv_pass_t *p = a->data;

	if (all_finished(p)) {
		uv_close((uv_handle_t *)&p->tick, NULL);
		uv_close((uv_handle_t *)&p->done, NULL);
	}
}

static void on_tick(uv_timer_t *t)
{
	dv_pass_t *p = t->data;
	uint64_t now = dv_now_ns();
	int sigs = stop_signals;
	uint32_t i;

	if (sigs > p->seen_signals) {
		p->seen_signals = sigs;
		for (i = 0; i < p->nw; i++)
			if (!atomic_load(&p->w[i].finished))
				dv_worker_request_stop(&p->w[i], sigs >= 2 ? 2 : 1);
	}
	/*
	 * Interval boundary: ask every worker for a snapshot now, and record the
	 * interval once all have answered (or finished), so each line holds exactly
	 * what happened up to the boundary.
	 */
	if (p->cfg->interval_ns > 0 && !p->interval_pending && now >= p->next_interval_ns) {
		p->epoch++;
		for (i = 0; i < p->nw; i++)
			if (!atomic_load(&p->w[i].finished))
				dv_worker_request_snapshot(&p->w[i], p->epoch);
		p->interval_pending = true;
		p->pending_t_ns = now;
		p->next_interval_ns += p->cfg->interval_ns;
		if (p->next_interval_ns <= now)
			p->next_interval_ns = now + p->cfg->interval_ns;
	}
	if (p->interval_pending) {
		bool ready = true;
		for (i = 0; i < p->nw && ready; i++)
			ready =
			    atomic_load(&p->w[i].finished) || dv_worker_epoch(&p->w[i]) >= p->epoch;
		if (ready) {
			record_interval(p, p->pending_t_ns, p->cfg->interval_print);
			p->interval_pending = false;
		}
	}
	if (p->cfg->progress && now >= p->next_progress_ns) {
		show_progress(p, now);
		p->next_progress_ns = now + 500 * DV_NS_PER_MS;
	}
}

void dv_pass_result_free(dv_pass_result_t *res)
{
	if (res == NULL)
		return;
	free(res->intervals);
	res->intervals = NULL;
	res->n_intervals = 0;
	free(res->lat_cells);
	res->lat_cells = NULL;
	res->n_lat_cells = 0;
}

static int check_pass(const dv_run_config_t *cfg, const dv_querylist_t *ql, dv_err_t *err)
{
	if (ql == NULL || ql->count == 0)
		return dv_err_set(err, -EINVAL, "the query list is empty");
	if (cfg->threads == 0 || cfg->sockets < cfg->threads || cfg->max_outstanding < cfg->threads)
		return dv_err_set(err, -EINVAL,
		                  "need at least one socket and one outstanding query per thread");
	if ((cfg->max_outstanding + cfg->threads - 1) / cfg->threads > DV_WINDOW_IDS)
		return dv_err_set(err, -EINVAL, "at most %u queries outstanding per thread",
		                  DV_WINDOW_IDS);
	return 0;
}

/* Set up main's loop and the workers' shares; on failure nothing is left to free. */
static int pass_init(dv_pass_t *p, const dv_run_config_t *cfg, const dv_querylist_t *ql,
                     dv_pass_result_t *res, dv_err_t *err)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->res = res;
	p->nw = cfg->threads;
	p->w = calloc(p->nw, sizeof(*p->w));
	if (p->w == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	if (uv_loop_init(&p->loop) != 0) {
		free(p->w);
		return dv_err_set(err, -ENOMEM, "cannot create an event loop");
	}
	uv_async_init(&p->loop, &p->done, on_done);
	p->done.data = p;
	uv_timer_init(&p->loop, &p->tick);
	p->tick.data = p;
	for (i = 0; i < p->nw; i++) {
		dv_worker_t *w = &p->w[i];
		w->id = i;
		w->cfg = cfg;
		w->ql = ql;
		dv_run_split(cfg, ql->count, i, &w->share);
		w->gate = &p->gate;
		w->done_async = &p->done;
	}
	p->end_seq = p->w[0].share.end_seq;
	return 0;
}

/*
 * Workers whose sockets take the kernel's software receive stamps (the wire clock without
 * the socket filter, answers read on ticks): the kernel stamps from the first answer on,
 * not from whenever its work item runs (base/netstamp.h; a busy machine left a wire-clock
 * run's first ~3,000 answers untimed).
 */
static void netstamp_ready(const dv_pass_t *p)
{
	unsigned i, tries = 0;
	int rc;

	for (i = 0; i < p->nw; i++)
		if (dv_worker_kernel_rx_stamps(&p->w[i]))
			break;
	if (i == p->nw)
		return;
	rc = dv_netstamp_wait(DV_NETSTAMP_WAIT_MS, &tries);
	if (rc == -ETIMEDOUT)
		fprintf(
		    stderr,
		    "dnsvolley: warning: the kernel did not stamp received packets within %u ms "
		    "(%u tries): answers before it does are %s\n",
		    DV_NETSTAMP_WAIT_MS, tries,
		    p->w[i].wire ? "untimed" : "timed when read, not when they arrived");
	else if (rc != 0)
		fprintf(stderr,
		        "dnsvolley: warning: cannot check that the kernel stamps received packets "
		        "(%s): the first answers may be %s\n",
		        strerror(-rc), p->w[i].wire ? "untimed" : "timed when read");
}

/* Start the worker threads (with the stop signals blocked: main counts them). Returns 0 or the
 * first error; *started says how many run. */
static int start_workers(dv_pass_t *p, uint32_t *started)
{
	sigset_t block, old;
	uint32_t i;
	int rc = 0;

	pthread_mutex_init(&p->gate.lock, NULL);
	pthread_cond_init(&p->gate.cond, NULL);
	p->gate.state = 0;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	*started = 0;
	for (i = 0; i < p->nw; i++) {
		rc = dv_worker_start(&p->w[i]);
		if (rc != 0)
			break;
		(*started)++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Let the workers go (state 1) or call the pass off (-1). */
static void open_gate(dv_start_barrier_t *gate, int state)
{
	pthread_mutex_lock(&gate->lock);
	gate->state = state;
	pthread_cond_broadcast(&gate->cond);
	pthread_mutex_unlock(&gate->lock);
}

static void join_workers(dv_pass_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		pthread_join(p->w[i].thread, NULL);
}

/* Main's loop while the workers run: signals, intervals, progress. Returns when all finished. */
static void watch_pass(dv_pass_t *p)
{
	uint32_t i;

	p->seen_signals = stop_signals;
	if (p->seen_signals > 0) /* a signal came before the pass: stop at once */
		for (i = 0; i < p->nw; i++)
			dv_worker_request_stop(&p->w[i], 1);
	p->t0_ns = p->gate.t0_ns;
	p->res->start_wall_ns = dv_wall_ns();
	p->prev_t_ns = p->t0_ns;
	dv_stats_init(&p->prev);
	p->next_interval_ns = p->t0_ns + p->cfg->interval_ns;
	p->next_progress_ns = p->t0_ns + 500 * DV_NS_PER_MS;
	uv_timer_start(&p->tick, on_tick, DV_MAIN_TICK_MS, DV_MAIN_TICK_MS);
	on_done(&p->done);
	uv_run(&p->loop, UV_RUN_DEFAULT);
}

/*
 * Merge the joined workers' counters into res; *first is the earliest start,
 * *last the latest send or completed answer. Returns the first worker error.
 */
static int merge_workers(dv_pass_t *p, uint32_t started, uint64_t *first, uint64_t *last,
                         uint64_t *last_send, dv_err_t *err)
{
	dv_pass_result_t *res = p->res;
	uint32_t i;
	int rc = 0;

	*first = UINT64_MAX;
	*last = 0;
	*last_send = 0;
	for (i = 0; i < started; i++) {
		dv_worker_t *w = &p->w[i];
		uint64_t wl;
		if (w->rc != 0 && rc == 0) {
			rc = w->rc;
			dv_err_set(err, rc, "worker %u: %s", i, w->err);
		}
		dv_stats_merge(&res->stats, &w->eng.stats);
		if (w->scheduled) {
			res->scheduled = true;
			dv_hist_merge(&res->lag, &w->pacer.lag);
			*last_send = DV_MAX(*last_send, w->eng.last_send_ns);
		}
		res->interrupted = res->interrupted || w->interrupted;
		*first = DV_MIN(*first, w->t0_ns);
		wl = DV_MAX(w->eng.last_send_ns, w->eng.last_complete_ns);
		*last = DV_MAX(*last, wl);
	}
	if (*first == UINT64_MAX)
		*first = p->t0_ns;
	return rc;
}

/* Why the pass ended: interrupted, the time limit, or the planned passes through the list. */
static dv_end_reason_t end_reason(const dv_run_config_t *cfg, const dv_pass_result_t *res,
                                  uint64_t end_seq)
{
	if (res->interrupted)
		return DV_END_INTERRUPT;
	if (cfg->time_limit_ns > 0 &&
	    (cfg->passes == 0 || res->stats.c.sent + res->stats.c.not_sent < end_seq))
		return DV_END_TIME;
	return DV_END_LIST;
}

/* Host-wide and process measurements around a pass. */
typedef struct dv_host_sample {
	struct rusage ru;
	dv_udp_snmp_t udp;
	dv_sockstat_t target; /* the target's own sockets, when on this host */
} dv_host_sample_t;

static void sample_host(const dv_run_config_t *cfg, dv_host_sample_t *h)
{
	dv_sockstat_read(&cfg->server, &h->target);
	read_udp_snmp(&h->udp);
	getrusage(RUSAGE_SELF, &h->ru);
}

/*
 * Intervals by send time: the workers' buckets summed, written over the
 * recorded series' sent, completed and lost (queries sent after the last
 * boundary belong to the last interval), then printed when -S prints in
 * dnsvolley's format (dnsperf's has no such lines).
 */
static void intervals_by_send_time(dv_pass_t *p, uint32_t started)
{
	dv_pass_result_t *res = p->res;
	size_t k, i;

	if (res->n_intervals == 0)
		return;
	for (k = 0; k < res->n_intervals; k++)
		res->intervals[k].sent = res->intervals[k].completed = res->intervals[k].lost =
		    res->intervals[k].failed = 0;
	for (i = 0; i < started; i++) {
		const dv_engine_t *e = &p->w[i].eng;
		for (k = 0; k < e->nbucket; k++) {
			dv_interval_t *iv = &res->intervals[DV_MIN(k, res->n_intervals - 1)];
			iv->sent += e->bucket[k].sent;
			iv->completed += e->bucket[k].completed;
			iv->lost += e->bucket[k].lost;
			iv->failed += e->bucket[k].failed;
		}
	}
	if (!p->cfg->interval_print || p->cfg->interval_dnsperf)
		return; /* dnsperf's format has its "SECONDS.USEC: QPS" lines only */
	FILE *out = p->cfg->out != NULL ? p->cfg->out : stdout;
	for (k = 0; k < res->n_intervals; k++) {
		const dv_interval_t *iv = &res->intervals[k];
		fprintf(out,
		        "[Interval by send time] %8.3f s  sent %llu  completed %llu  lost %llu "
		        "(%.2f%%)\n",
		        iv->t_s, (unsigned long long)iv->sent, (unsigned long long)iv->completed,
		        (unsigned long long)iv->lost,
		        iv->sent ? 100.0 * (double)iv->lost / (double)iv->sent : 0.0);
	}
	fflush(out);
}

/* Fill res's times, rates, CPU and UDP deltas and the end reason. */
static void finish_result(dv_pass_t *p, uint64_t first, uint64_t last, uint64_t t_end,
                          const dv_host_sample_t *h0, const dv_host_sample_t *h1)
{
	const dv_run_config_t *cfg = p->cfg;
	dv_pass_result_t *res = p->res;

	/* The final interval: whatever happened since the last boundary (recorded; dnsperf's
	 * format prints whole intervals only, as dnsperf does). */
	if (cfg->interval_ns > 0 && t_end > p->prev_t_ns + DV_NS_PER_MS)
		record_interval(p, t_end, cfg->interval_print && !cfg->interval_dnsperf);
	res->run_time_s = last > first ? (double)(last - first) / 1e9 : 0;
	res->elapsed_s = (double)(t_end - first) / 1e9;
	res->qps = res->run_time_s > 0 ? (double)res->stats.c.completed / res->run_time_s : 0;
	res->cpu_user_s = tv_s(h1->ru.ru_utime) - tv_s(h0->ru.ru_utime);
	res->cpu_sys_s = tv_s(h1->ru.ru_stime) - tv_s(h0->ru.ru_stime);
	udp_delta(&res->udp, &h0->udp, &h1->udp);
	/* A restarted target starts its counter again: never a negative delta. */
	res->stats.c.target_sockets = h1->target.sockets;
	res->stats.c.target_drops =
	    h1->target.drops > h0->target.drops ? h1->target.drops - h0->target.drops : 0;
	dv_xdp_info(p->xdp, &res->xdp);
	res->clock = res->xdp.used  ? DV_PASS_CLOCK_XDP
	             : p->w[0].wire ? DV_PASS_CLOCK_WIRE
	                            : DV_PASS_CLOCK_APP;
	res->stamp_every = p->w[0].wire ? p->w[0].stamp_every : 0;
	/* A worker whose socket the filter could not be attached to took control messages:
	 * counted apart, so a pass of both kinds says so. */
	res->wire_workers = p->w[0].wire ? p->nw : 0;
	res->rx_filter_workers = 0;
	for (uint32_t i = 0; i < res->wire_workers; i++)
		res->rx_filter_workers += p->w[i].rx_filter ? 1 : 0;
	res->rx_filter = res->wire_workers > 0 && res->rx_filter_workers == res->wire_workers;
	res->sockets = cfg->sockets;
	res->threads = cfg->threads;
	res->max_outstanding = cfg->max_outstanding;
	res->end = end_reason(cfg, res, p->end_seq);
}

bool dv_pass_times_sample(const dv_pass_result_t *r)
{
	return r->stats.c.stamps_asked > 0 ||
	       (r->clock == DV_PASS_CLOCK_WIRE && r->stamp_every > 0);
}

bool dv_pass_sample_partial(const dv_pass_result_t *r)
{
	return dv_pass_times_sample(r) && r->stats.c.stamps_asked < r->stats.c.sent;
}

const char *dv_pass_clock_name(dv_pass_clock_t clock)
{
	switch (clock) {
	case DV_PASS_CLOCK_UNKNOWN:
		return NULL;
	case DV_PASS_CLOCK_APP:
		return "app";
	case DV_PASS_CLOCK_WIRE:
		return "wire";
	case DV_PASS_CLOCK_XDP:
		return "xdp";
	case DV_PASS_CLOCK_MIXED:
		return "mixed";
	}
	return NULL;
}

static void pass_free(dv_pass_t *p)
{
	uint32_t i;

	for (i = 0; i < p->nw; i++)
		dv_worker_cleanup(&p->w[i]);
	dv_xdp_close(p->xdp);
	if (!uv_is_closing((uv_handle_t *)&p->tick)) {
		uv_close((uv_handle_t *)&p->tick, NULL);
		uv_close((uv_handle_t *)&p->done, NULL);
	}
	uv_run(&p->loop, UV_RUN_NOWAIT);
	uv_loop_close(&p->loop);
	free(p->w);
}

int dv_run_pass(const dv_run_config_t *cfg, const dv_querylist_t *ql, dv_pass_result_t *res,
                dv_err_t *err)
{
	dv_pass_t p;
	dv_host_sample_t h0, h1;
	dv_run_config_t spread;
	uint64_t t_end, first, last, last_send;
	uint32_t i, started = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	dv_stats_init(&res->stats);
	dv_hist_init(&res->lag);
	rc = check_pass(cfg, ql, err);
	if (rc != 0)
		return rc;
	if (ql->client != NULL && ql->clients > 0) { /* a socket per client (worker.c) */
		if (cfg->threads > 1)
			return dv_err_set(err, -EINVAL,
			                  "%s has clients: a socket per client replays with one "
			                  "thread (-T 1)",
			                  ql->source != NULL ? ql->source : "the list");
		spread = *cfg;
		spread.sockets = (uint32_t)ql->clients;
		cfg = &spread;
	}
	pthread_once(&handler_once, install_handlers);
	rc = ensure_fd_limit(cfg->sockets, err);
	if (rc != 0)
		return rc;
	rc = pass_init(&p, cfg, ql, res, err);
	if (rc != 0)
		return rc;
	for (i = 0; i < p.nw; i++) {
		if (i == 0 && cfg->xdp_iface != NULL) /* --xdp: the program, before the sockets */
			rc = dv_xdp_open(&p.xdp, cfg, err);
		p.w[i].xdp = p.xdp;
		if (rc == 0)
			rc = dv_worker_open(&p.w[i], err);
		if (rc != 0)
			goto cleanup;
	}

	netstamp_ready(&p);
	rc = start_workers(&p, &started);
	if (cfg->server_cost != NULL)
		dv_srvcost_begin(cfg->server_cost, &cfg->server, dv_run_over_tcp(cfg));
	sample_host(cfg, &h0);
	p.gate.t0_ns = dv_now_ns();
	open_gate(&p.gate, started == p.nw ? 1 : -1);
	if (started < p.nw) {
		dv_err_set(err, rc, "cannot start worker thread %u: %s", started + 1,
		           strerror(-rc));
		join_workers(&p, started);
		goto cleanup_gate;
	}
	watch_pass(&p);
	t_end = dv_now_ns();
	join_workers(&p, started);
	sample_host(cfg, &h1);
	p.ended = true;
	if (p.progress_shown)
		fprintf(stderr, "\r\033[K");
	p.progress_shown = false;
	rc = merge_workers(&p, started, &first, &last, &last_send, err);
	if (cfg->server_cost != NULL)
		dv_srvcost_end(cfg->server_cost, res->stats.c.completed + res->stats.c.late,
		               &res->server);
	finish_result(&p, first, last, t_end, &h0, &h1);
	intervals_by_send_time(&p, started);
	if (res->scheduled && last_send > first && res->stats.c.sent > 1)
		res->send_qps = (double)(res->stats.c.sent - 1) * 1e9 / (double)(last_send - first);

cleanup_gate:
	pthread_cond_destroy(&p.gate.cond);
	pthread_mutex_destroy(&p.gate.lock);
cleanup:
	pass_free(&p);
	if (rc != 0)
		dv_pass_result_free(res);
	return rc;
}
