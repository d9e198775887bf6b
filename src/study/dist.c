/* dist: the single-process distribution and the pure parts of a multi-rank run (split, shard,
 * merge). */
#include "config.h"

#include "study/dist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- one process */

static int single_start_pass(dv_dist_t *d, int *go, uint64_t timeout_ns, dv_err_t *err)
{
	(void)d, (void)go, (void)timeout_ns, (void)err;
	return 0;
}

static int single_bcast(dv_dist_t *d, void *buf, size_t len, uint64_t timeout_ns, dv_err_t *err)
{
	(void)d, (void)buf, (void)len, (void)timeout_ns, (void)err;
	return 0;
}

static int single_reduce(dv_dist_t *d, dv_pass_result_t *res, int own_rc, const char *own_msg,
                         dv_rank_pass_t *ranks, uint64_t timeout_ns, dv_err_t *err)
{
	(void)timeout_ns, (void)err;
	dv_rank_pass_fill(&ranks[0], 0, d->hosts[0], res);
	ranks[0].reported = true;
	ranks[0].error = own_rc;
	if (own_msg != NULL)
		snprintf(ranks[0].error_msg, sizeof(ranks[0].error_msg), "%s", own_msg);
	return 0;
}

static void single_abort(dv_dist_t *d, int status)
{
	(void)d, (void)status;
}

static void single_finish(dv_dist_t *d, int status)
{
	(void)status;
	if (d->hosts != NULL)
		free(d->hosts[0]);
	free(d->hosts);
	d->hosts = NULL;
}

void dv_dist_single(dv_dist_t *d)
{
	char host[256] = "";

	memset(d, 0, sizeof(*d));
	d->rank = 0;
	d->size = 1;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	d->hosts = calloc(1, sizeof(*d->hosts));
	if (d->hosts != NULL)
		d->hosts[0] = strdup(host);
	if (d->hosts != NULL && d->hosts[0] == NULL) {
		free(d->hosts);
		d->hosts = NULL;
	}
	d->start_pass = single_start_pass;
	d->bcast = single_bcast;
	d->reduce_pass = single_reduce;
	d->abort = single_abort;
	d->finish = single_finish;
}

/* ---------------------------------------------------------------- split and shard */

int dv_dist_share_config(dv_run_config_t *cfg, int rank, int size, dv_err_t *err)
{
	dv_run_config_t by_rank = *cfg, threads = *cfg;
	dv_run_share_t share, tshare;
	uint32_t n = (uint32_t)size;

	if (size <= 1)
		return 0;
	if (cfg->sockets < n)
		return dv_err_set(err, -EINVAL,
		                  "-c %u is fewer sockets than the %d ranks (-c is the total of "
		                  "the run; each rank needs at least one)",
		                  cfg->sockets, size);
	if (cfg->max_outstanding < n)
		return dv_err_set(err, -EINVAL,
		                  "-q %u is fewer queries in flight than the %d ranks (-q is the "
		                  "total of the run; each rank needs at least one)",
		                  cfg->max_outstanding, size);
	by_rank.threads = n;
	dv_run_split(&by_rank, 1, (uint32_t)rank, &share);
	/* -T divided the way -c is: split a config whose "sockets" are the threads. */
	threads.threads = n;
	threads.sockets = cfg->threads < n ? n : cfg->threads;
	threads.max_outstanding = threads.sockets;
	dv_run_split(&threads, 1, (uint32_t)rank, &tshare);
	cfg->sockets = share.nsocks;
	cfg->max_outstanding = share.capacity;
	cfg->max_qps = share.rate_qps;
	cfg->threads = tshare.nsocks;
	if (cfg->local_port != 0)
		cfg->local_port = (uint16_t)(cfg->local_port + share.first_sock);
	return 0;
}

int dv_dist_shard_list(dv_querylist_t *ql, int rank, int size, dv_err_t *err)
{
	if (size <= 1)
		return 0;
	if (ql->count < (size_t)size)
		return dv_err_set(err, -EINVAL,
		                  "%s: %zu quer%s cannot be shared by %d ranks (use --replicate to "
		                  "give every rank the whole list)",
		                  ql->source ? ql->source : "list", ql->count,
		                  ql->count == 1 ? "y" : "ies", size);
	/* Rank r takes entries r, r + size, ...: every per-entry array follows (qlen,
	 * capture times and clients of captured inputs too). */
	if (dv_querylist_keep_every(ql, (size_t)rank, (size_t)size) != 0)
		return dv_err_set(err, -ENOMEM, "out of memory sharding the list");
	return 0;
}

/* ---------------------------------------------------------------- per-rank facts */

void dv_rank_pass_fill(dv_rank_pass_t *rp, int rank, const char *host, const dv_pass_result_t *res)
{
	double cpu = res->cpu_user_s + res->cpu_sys_s;

	memset(rp, 0, sizeof(*rp));
	rp->rank = (uint32_t)rank;
	snprintf(rp->host, sizeof(rp->host), "%s", host != NULL ? host : "?");
	rp->sent = res->stats.c.sent;
	rp->completed = res->stats.c.completed;
	rp->lost = res->stats.c.lost;
	rp->kernel_drops = res->udp.valid ? res->udp.rcvbuf_errors + res->udp.sndbuf_errors : 0;
	rp->qps = res->qps;
	rp->cpu_per_query_us =
	    res->stats.c.completed ? cpu * 1e6 / (double)res->stats.c.completed : 0;
	rp->busy = res->elapsed_s > 0 && res->threads > 0
	               ? cpu / (res->elapsed_s * (double)res->threads)
	               : 0;
	/* rank 0 rewrites it from the ranks' start times */
	rp->clock_offset_s = (double)res->start_wall_ns / 1e9;
}

void dv_rank_pass_classify(dv_rank_pass_t *ranks, size_t n)
{
	double t0 = n > 0 ? ranks[0].clock_offset_s : 0;

	for (size_t i = 0; i < n; i++) {
		dv_rank_pass_t *r = &ranks[i];
		if (!r->reported || r->error != 0) {
			r->clock_offset_s = 0;
			continue;
		}
		r->clock_offset_s = i == 0 ? 0 : r->clock_offset_s - t0;
		r->generator_bound = r->busy >= DV_DIST_BUSY_BOUND;
		r->clock_off = fabs(r->clock_offset_s) > DV_DIST_CLOCK_OFF_S;
	}
	if (n > 0 && ranks[0].reported)
		ranks[0].clock_offset_s = 0;
}

/* ---------------------------------------------------------------- merging */

/* The cells of iv's histogram in its pass's pool (NULL when none). */
static const dv_hist_cell_t *cells_of(const dv_hist_cell_t *pool, const dv_interval_t *iv)
{
	return iv->lat_n > 0 && pool != NULL ? pool + iv->lat_first : NULL;
}

/*
 * out = a + b (a's cells in pool_a, b's in pool_b); the merged histogram, when
 * both keep one and it fits the budget, goes to cells[*used ..].
 */
static void merge_interval(dv_interval_t *out, const dv_interval_t *a, const dv_hist_cell_t *pool_a,
                           const dv_interval_t *b, const dv_hist_cell_t *pool_b,
                           dv_hist_cell_t *cells, size_t *used)
{
	bool kept = a->lat_kept && b->lat_kept;
	double wa = kept ? (double)a->lat_count : (double)a->completed;
	double wb = kept ? (double)b->lat_count : (double)b->completed;
	dv_interval_t m = *a;
	size_t n = 0;

	if (wa + wb > 0)
		m.lat_mean_ns = (a->lat_mean_ns * wa + b->lat_mean_ns * wb) / (wa + wb);
	m.t_s = DV_MAX(a->t_s, b->t_s);
	m.sent += b->sent;
	m.completed += b->completed;
	m.lost += b->lost;
	m.inflight += b->inflight;
	m.qps += b->qps;
	m.lat_min_ns = DV_MIN(a->lat_min_ns, b->lat_min_ns);
	m.lat_max_ns = DV_MAX(a->lat_max_ns, b->lat_max_ns);
	if (kept)
		n = dv_hist_cells_merge(cells_of(pool_a, a), a->lat_n, cells_of(pool_b, b),
		                        b->lat_n, cells + *used);
	if (kept && *used + n <= DV_RUN_MAX_LAT_CELLS) {
		m.lat_count = a->lat_count + b->lat_count;
		m.lat_first = *used;
		m.lat_n = (uint32_t)n;
		m.lat_p50_ns = (double)dv_hist_cells_quantile_ns(cells + *used, n, m.lat_count,
		                                                 m.lat_min_ns, m.lat_max_ns, 0.50);
		m.lat_p99_ns = (double)dv_hist_cells_quantile_ns(cells + *used, n, m.lat_count,
		                                                 m.lat_min_ns, m.lat_max_ns, 0.99);
		*used += n;
	} else {
		m.lat_kept = false;
		m.lat_count = 0;
		m.lat_first = 0;
		m.lat_n = 0;
		m.lat_p50_ns = DV_MAX(a->lat_p50_ns, b->lat_p50_ns);
		m.lat_p99_ns = DV_MAX(a->lat_p99_ns, b->lat_p99_ns);
	}
	*out = m;
}

int dv_dist_merge_intervals(dv_pass_result_t *into, const dv_pass_result_t *from)
{
	/* An interval one side lacks (its pass ended before it): no answers, histogram kept. */
	static const dv_interval_t none = {.lat_kept = true, .lat_min_ns = UINT64_MAX};
	size_t n = DV_MAX(into->n_intervals, from->n_intervals), used = 0;
	size_t ncells = into->n_lat_cells + from->n_lat_cells;
	dv_interval_t *iv;
	dv_hist_cell_t *cells;

	if (n == 0)
		return 0;
	iv = calloc(n, sizeof(*iv));
	cells = malloc((ncells ? ncells : 1) * sizeof(*cells));
	if (iv == NULL || cells == NULL) {
		free(iv), free(cells);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		merge_interval(&iv[i], i < into->n_intervals ? &into->intervals[i] : &none,
		               into->lat_cells, i < from->n_intervals ? &from->intervals[i] : &none,
		               from->lat_cells, cells, &used);
	free(into->intervals);
	free(into->lat_cells);
	into->intervals = iv;
	into->n_intervals = n;
	into->lat_cells = cells;
	into->n_lat_cells = used;
	return 0;
}

/* The --server-stats part of a server's figures (its own counters), from src. */
static void copy_server_stats(dv_server_cost_t *dst, const dv_server_cost_t *src)
{
	dst->stats = src->stats;
	dst->stats_ok = src->stats_ok;
	dst->stats_cache = src->stats_cache;
	dst->stats_queries = src->stats_queries;
	dst->stats_hits = src->stats_hits;
	dst->stats_misses = src->stats_misses;
	memcpy(dst->stats_kind, src->stats_kind, sizeof(dst->stats_kind));
	memcpy(dst->stats_error, src->stats_error, sizeof(dst->stats_error));
}

/*
 * The server's figures of a merged pass (doc/scale-out.md, "The server"): one server,
 * read by every rank that could see it over the same pass, so its figures are taken once,
 * never added: into's own when it has them, else from's (a rank on the server's host when
 * rank 0 is not). The per-answer divisor is the merged answers: the server answered every
 * rank. Its counters (--server-stats) the same way, apart: a rank may have read them and
 * not the process.
 */
static void merge_server(dv_server_cost_t *into, const dv_server_cost_t *from, uint64_t answers)
{
	if ((!into->ok && from->ok) || (!into->measured && from->measured)) {
		dv_server_cost_t own = *into;
		*into = *from;
		if (own.stats)
			copy_server_stats(into, &own);
	} else if (into->ok && from->ok) {
		into->shares_cpu = into->shares_cpu || from->shares_cpu; /* any rank beside it */
	}
	if ((!into->stats_ok && from->stats_ok) || (!into->stats && from->stats))
		copy_server_stats(into, from);
	into->measured = into->measured || from->measured;
	if (into->ok)
		into->answers = answers;
}

/* --xdp on several ranks (or results files): native and zero-copy only when every one was,
 * the queues added up; a pass without --xdp adds nothing. */
static void merge_xdp(dv_xdp_info_t *into, const dv_xdp_info_t *from)
{
	if (!from->used)
		return;
	if (!into->used) {
		*into = *from;
		return;
	}
	into->native = into->native && from->native;
	into->zerocopy = into->zerocopy && from->zerocopy;
	into->queues += from->queues;
	into->rx_queues += from->rx_queues;
}

/*
 * The clock of several ranks' (or results files') pass: the same clock, or mixed; not
 * recorded if any side's was not. The wire clock's sample rate when all had the same (else
 * 0: the report then derives it from the counters), its receive stamps by the socket filter
 * only when every one's were (as over a pass's workers, run.c), with the workers of each kind
 * summed so that a pass of both says so.
 */
static void merge_clock(dv_pass_result_t *into, const dv_pass_result_t *from)
{
	if (into->clock == DV_PASS_CLOCK_UNKNOWN || from->clock == DV_PASS_CLOCK_UNKNOWN)
		into->clock = DV_PASS_CLOCK_UNKNOWN;
	else if (into->clock != from->clock)
		into->clock = DV_PASS_CLOCK_MIXED;
	if (into->stamp_every != from->stamp_every)
		into->stamp_every = 0;
	into->rx_filter = into->rx_filter && from->rx_filter;
	into->wire_workers += from->wire_workers;
	into->rx_filter_workers += from->rx_filter_workers;
}

int dv_dist_merge_pass(dv_pass_result_t *into, const dv_pass_result_t *from)
{
	dv_stats_merge(&into->stats, &from->stats);
	if (from->run_time_s > into->run_time_s)
		into->run_time_s = from->run_time_s;
	if (from->elapsed_s > into->elapsed_s)
		into->elapsed_s = from->elapsed_s;
	if (from->start_wall_ns != 0 &&
	    (into->start_wall_ns == 0 || from->start_wall_ns < into->start_wall_ns))
		into->start_wall_ns = from->start_wall_ns;
	if ((int)from->end > (int)into->end)
		into->end = from->end;
	into->interrupted = into->interrupted || from->interrupted;
	into->cpu_user_s += from->cpu_user_s;
	into->cpu_sys_s += from->cpu_sys_s;
	into->udp.in_datagrams += from->udp.in_datagrams;
	into->udp.no_ports += from->udp.no_ports;
	into->udp.in_errors += from->udp.in_errors;
	into->udp.out_datagrams += from->udp.out_datagrams;
	into->udp.rcvbuf_errors += from->udp.rcvbuf_errors;
	into->udp.sndbuf_errors += from->udp.sndbuf_errors;
	into->udp.valid = into->udp.valid && from->udp.valid;
	into->sockets += from->sockets;
	into->threads += from->threads;
	into->max_outstanding += from->max_outstanding;
	merge_xdp(&into->xdp, &from->xdp);
	merge_clock(into, from);
	into->qps = into->run_time_s > 0 ? (double)into->stats.c.completed / into->run_time_s : 0;
	merge_server(&into->server, &from->server, into->stats.c.completed + into->stats.c.late);
	return dv_dist_merge_intervals(into, from);
}

/* ---------------------------------------------------------------- --start-at */

int dv_dist_parse_start_at(const char *text, uint64_t *wall_ns, dv_err_t *err)
{
	struct tm tm;
	char *end;
	double frac = 0, secs;

	memset(&tm, 0, sizeof(tm));
	end = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end != NULL) {
		time_t t = timegm(&tm);
		if (*end == '.') {
			char *e2;
			frac = strtod(end, &e2);
			end = e2;
		}
		if (strcmp(end, "Z") != 0 || t == (time_t)-1)
			return dv_err_set(err, -EINVAL,
			                  "--start-at: '%s' is not YYYY-MM-DDTHH:MM:SS[.F]Z (UTC) "
			                  "or seconds since 1970",
			                  text);
		*wall_ns = (uint64_t)t * DV_NS_PER_S + (uint64_t)(frac * 1e9);
		return 0;
	}
	errno = 0;
	secs = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !(secs > 0) || secs > 4e9)
		return dv_err_set(err, -EINVAL,
		                  "--start-at: '%s' is not YYYY-MM-DDTHH:MM:SS[.F]Z (UTC) or "
		                  "seconds since 1970",
		                  text);
	*wall_ns = (uint64_t)(secs * 1e9);
	return 0;
}

int dv_dist_wait_until(uint64_t wall_ns)
{
	dv_run_catch_signals();
	for (;;) {
		uint64_t now = dv_wall_ns(), step;
		struct timespec ts;
		if (now >= wall_ns)
			return 0;
		if (dv_run_stop_requested())
			return -EINTR;
		step = wall_ns - now;
		if (step > 10 * DV_NS_PER_MS)
			step = 10 * DV_NS_PER_MS;
		ts.tv_sec = (time_t)(step / DV_NS_PER_S);
		ts.tv_nsec = (long)(step % DV_NS_PER_S);
		nanosleep(&ts, NULL);
	}
}

#ifndef HAVE_MPI
int dv_dist_init(dv_dist_t *d, int *argc, char ***argv, dv_err_t *err)
{
	(void)argc, (void)argv, (void)err;
	dv_dist_single(d);
	return d->hosts != NULL ? 0 : -ENOMEM;
}
#endif
