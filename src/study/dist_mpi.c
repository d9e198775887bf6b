/* dist_mpi: the study's distribution over the ranks of an MPI job (built with --with-mpi only). */
#include "config.h"

#include "study/dist.h"

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_READY  101 /* rank -> 0: at the start of a pass */
#define TAG_GO     102 /* 0 -> rank: the pass runs (0) or the run stops (code) */
#define TAG_RESULT 103 /* rank -> 0: its pass result */
#define HOST_LEN   64
#define POLL_NS    (200 * DV_NS_PER_US)

static void nap(void)
{
	struct timespec ts = {0, (long)POLL_NS};
	nanosleep(&ts, NULL);
}

/* Wait for one request until deadline (monotonic ns). 0, -ETIMEDOUT or -EIO. */
static int wait_req(MPI_Request *req, uint64_t deadline)
{
	for (;;) {
		int done = 0;
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		if (done)
			return 0;
		if (dv_now_ns() >= deadline)
			return -ETIMEDOUT;
		nap();
	}
}

/* "rank 2 (hostB), rank 3 (hostC)" of the ranks with missing[r] set. */
static void name_ranks(const dv_dist_t *d, const bool *missing, char *buf, size_t cap)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int r = 0; r < d->size && used + 1 < cap; r++) {
		if (!missing[r])
			continue;
		int n = snprintf(buf + used, cap - used, "%srank %d (%s)", used ? ", " : "", r,
		                 d->hosts[r]);
		if (n < 0)
			break;
		used += (size_t)n < cap - used ? (size_t)n : cap - used - 1;
	}
}

/* Ranks tell rank 0 they are at the start; rank 0 answers each with *go. */
static int mpi_start_pass(dv_dist_t *d, int *go, uint64_t timeout_ns, dv_err_t *err)
{
	uint64_t deadline = dv_now_ns() + timeout_ns;
	int one = 1, rc;
	MPI_Request req;

	if (d->rank != 0) {
		MPI_Isend(&one, 1, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD, &req);
		if ((rc = wait_req(&req, deadline)) != 0 ||
		    (MPI_Irecv(go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, &req),
		     (rc = wait_req(&req, deadline)) != 0))
			return dv_err_set(err, rc,
			                  "rank %d (%s): rank 0 (%s) did not start the next pass "
			                  "within %.0f s",
			                  d->rank, d->hosts[d->rank], d->hosts[0],
			                  (double)timeout_ns / 1e9);
		return 0;
	}
	bool *missing = calloc((size_t)d->size, sizeof(*missing));
	int *flags = calloc((size_t)d->size, sizeof(*flags));
	MPI_Request *reqs = calloc((size_t)d->size, sizeof(*reqs));
	int left = d->size - 1;
	rc = 0;
	if (missing == NULL || flags == NULL || reqs == NULL) {
		rc = dv_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (int r = 1; r < d->size; r++) {
		MPI_Irecv(&flags[r], 1, MPI_INT, r, TAG_READY, MPI_COMM_WORLD, &reqs[r]);
		missing[r] = true;
	}
	while (left > 0) {
		for (int r = 1; r < d->size; r++) {
			int done = 0;
			if (missing[r] &&
			    MPI_Test(&reqs[r], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
				missing[r] = false;
				left--;
			}
		}
		if (left == 0)
			break;
		if (dv_now_ns() >= deadline) {
			char names[400];
			name_ranks(d, missing, names, sizeof(names));
			rc = dv_err_set(err, -ETIMEDOUT,
			                "%s did not reach the start of the pass within %.0f s",
			                names, (double)timeout_ns / 1e9);
			goto out;
		}
		nap();
	}
	for (int r = 1; r < d->size; r++)
		MPI_Isend(go, 1, MPI_INT, r, TAG_GO, MPI_COMM_WORLD, &reqs[r]);
	for (int r = 1; r < d->size && rc == 0; r++)
		if (wait_req(&reqs[r], deadline) != 0)
			rc = dv_err_set(err, -ETIMEDOUT,
			                "rank %d (%s) did not take the start signal", r,
			                d->hosts[r]);
out:
	free(missing);
	free(flags);
	free(reqs);
	return rc;
}

static int mpi_bcast(dv_dist_t *d, void *buf, size_t len, uint64_t timeout_ns, dv_err_t *err)
{
	MPI_Request req;
	int rc;

	if (len > (size_t)INT32_MAX)
		return dv_err_set(err, -E2BIG, "broadcast of %zu bytes is too large", len);
	MPI_Ibcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
	rc = wait_req(&req, dv_now_ns() + timeout_ns);
	if (rc != 0)
		return dv_err_set(err, rc,
		                  "rank %d (%s): the broadcast from rank 0 did not complete "
		                  "within %.0f s",
		                  d->rank, d->hosts[d->rank], (double)timeout_ns / 1e9);
	return 0;
}

/* A rank's result as one message: its facts, its pass result, its intervals, their cells. */
static void *pack_result(const dv_rank_pass_t *rp, const dv_pass_result_t *res, size_t *len)
{
	size_t iv = res->n_intervals * sizeof(dv_interval_t);
	size_t cells = res->n_lat_cells * sizeof(dv_hist_cell_t);
	size_t head = sizeof(*rp) + sizeof(*res);
	uint8_t *buf = malloc(head + iv + cells);
	dv_pass_result_t copy = *res;

	if (buf == NULL)
		return NULL;
	copy.intervals = NULL;
	copy.lat_cells = NULL;
	memcpy(buf, rp, sizeof(*rp));
	memcpy(buf + sizeof(*rp), &copy, sizeof(copy));
	if (iv > 0)
		memcpy(buf + head, res->intervals, iv);
	if (cells > 0)
		memcpy(buf + head + iv, res->lat_cells, cells);
	*len = head + iv + cells;
	return buf;
}

/* Every interval's cells inside the message's, in bucket order. */
static bool cells_valid(const dv_pass_result_t *from)
{
	for (size_t i = 0; i < from->n_intervals; i++) {
		const dv_interval_t *iv = &from->intervals[i];
		if (!iv->lat_kept || iv->lat_n == 0)
			continue;
		if (iv->lat_first > from->n_lat_cells ||
		    iv->lat_n > from->n_lat_cells - iv->lat_first)
			return false;
		for (uint32_t k = 0; k < iv->lat_n; k++) {
			const dv_hist_cell_t *c = &from->lat_cells[iv->lat_first + k];
			if (c->bucket >= DV_HIST_BUCKETS || (k > 0 && c[-1].bucket >= c->bucket))
				return false;
		}
	}
	return true;
}

/* Rank 0: take rank r's message (len bytes in buf) into the merge. */
static int unpack_merge(const uint8_t *buf, size_t len, dv_pass_result_t *res, dv_rank_pass_t *rp)
{
	size_t head = sizeof(*rp) + sizeof(dv_pass_result_t), iv, cells;
	dv_pass_result_t from;

	if (len < head)
		return -EPROTO;
	memcpy(rp, buf, sizeof(*rp));
	memcpy(&from, buf + sizeof(*rp), sizeof(from));
	if (from.n_intervals > (len - head) / sizeof(dv_interval_t))
		return -EPROTO;
	iv = from.n_intervals * sizeof(dv_interval_t);
	cells = from.n_lat_cells * sizeof(dv_hist_cell_t);
	if (from.n_lat_cells > (len - head - iv) / sizeof(dv_hist_cell_t) ||
	    len != head + iv + cells)
		return -EPROTO;
	from.intervals = (dv_interval_t *)(void *)(buf + head);
	from.lat_cells = (dv_hist_cell_t *)(void *)(buf + head + iv);
	if (!cells_valid(&from))
		return -EPROTO;
	rp->reported = true;
	if (rp->error != 0)
		return 0;
	return dv_dist_merge_pass(res, &from);
}

/* Rank 0: collect every other rank's message until deadline; missing[r] for those that never came.
 */
static int collect(dv_dist_t *d, dv_pass_result_t *res, dv_rank_pass_t *ranks, bool *missing,
                   uint64_t deadline)
{
	int left = d->size - 1, rc = 0;

	for (int r = 1; r < d->size; r++)
		missing[r] = true;
	while (left > 0 && dv_now_ns() < deadline) {
		bool got = false;
		for (int r = 1; r < d->size; r++) {
			int flag = 0, count = 0;
			MPI_Status st;
			if (!missing[r])
				continue;
			MPI_Iprobe(r, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
			if (!flag)
				continue;
			MPI_Get_count(&st, MPI_BYTE, &count);
			uint8_t *buf = malloc(count > 0 ? (size_t)count : 1);
			if (buf == NULL)
				return -ENOMEM;
			MPI_Recv(buf, count, MPI_BYTE, r, TAG_RESULT, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			int mrc = unpack_merge(buf, (size_t)count, res, &ranks[r]);
			free(buf);
			if (mrc != 0 && rc == 0)
				rc = mrc;
			missing[r] = false;
			left--;
			got = true;
		}
		if (!got)
			nap();
	}
	return rc;
}

static int rank0_reduce(dv_dist_t *d, dv_pass_result_t *res, dv_rank_pass_t *ranks,
                        uint64_t timeout_ns, dv_err_t *err)
{
	bool *missing = calloc((size_t)d->size, sizeof(*missing));
	char names[400];
	int rc, nfail = 0;

	if (missing == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	rc = collect(d, res, ranks, missing, dv_now_ns() + timeout_ns);
	if (rc != 0) {
		free(missing);
		return dv_err_set(err, rc, "a rank's result could not be merged: %s",
		                  strerror(-rc));
	}
	for (int r = 1; r < d->size; r++) {
		if (missing[r]) {
			ranks[r].rank = (uint32_t)r;
			snprintf(ranks[r].host, sizeof(ranks[r].host), "%s", d->hosts[r]);
			nfail++;
		}
	}
	if (nfail > 0) {
		name_ranks(d, missing, names, sizeof(names));
		rc = dv_err_set(err, -ETIMEDOUT,
		                "%s sent no result within %.0f s (the rank died or hangs); the "
		                "results are partial: %d of %d ranks",
		                names, (double)timeout_ns / 1e9, d->size - nfail, d->size);
	}
	for (int r = 0; r < d->size && rc == 0; r++)
		if (ranks[r].error != 0)
			rc = dv_err_set(err, -EIO, "rank %d (%s): %s", r, ranks[r].host,
			                ranks[r].error_msg);
	free(missing);
	return rc;
}

static int mpi_reduce(dv_dist_t *d, dv_pass_result_t *res, int own_rc, const char *own_msg,
                      dv_rank_pass_t *ranks, uint64_t timeout_ns, dv_err_t *err)
{
	dv_rank_pass_t me;
	MPI_Request req;
	size_t len;
	void *buf;
	int rc;

	dv_rank_pass_fill(&me, d->rank, d->hosts[d->rank], res);
	me.error = own_rc;
	if (own_msg != NULL)
		snprintf(me.error_msg, sizeof(me.error_msg), "%s", own_msg);
	if (d->rank == 0) {
		memset(ranks, 0, (size_t)d->size * sizeof(*ranks));
		ranks[0] = me;
		ranks[0].reported = true;
		return rank0_reduce(d, res, ranks, timeout_ns, err);
	}
	buf = pack_result(&me, res, &len);
	if (buf == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	MPI_Isend(buf, (int)len, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD, &req);
	rc = wait_req(&req, dv_now_ns() + timeout_ns);
	free(buf);
	if (rc != 0)
		return dv_err_set(err, rc,
		                  "rank %d (%s): rank 0 (%s) did not take the result "
		                  "within %.0f s",
		                  d->rank, d->hosts[d->rank], d->hosts[0],
		                  (double)timeout_ns / 1e9);
	return 0;
}

static void mpi_abort(dv_dist_t *d, int status)
{
	fflush(stdout);
	fflush(stderr);
	/*
	 * Under mpirun --mca orte_enable_recovery 1 (what keeps a partial run's results,
	 * doc/scale-out.md) Open MPI 4's mpirun exits 0 whatever the ranks do (neither
	 * MPI_Abort's code nor a rank's exit status reaches it): each rank ends with its
	 * own exit status, which a wrapper around dnsvolley records (rank 0's is the
	 * run's). Otherwise rank 0 exits and MPI_Abort ends the rest.
	 */
	if (getenv("OMPI_MCA_orte_enable_recovery") != NULL || d->rank == 0)
		_exit(status);
	MPI_Abort(MPI_COMM_WORLD, status);
}

static volatile sig_atomic_t finish_status;

static void finalize_overdue(int sig)
{
	(void)sig;
	_exit(finish_status);
}

/*
 * MPI_Finalize is a fence over every rank. When a rank is lost mid-run (dead or hung)
 * under orte_enable_recovery, a rank whose result rank 0 took can wait in that fence for
 * as long as the lost one hangs (Open MPI 4 does not end the job): after
 * DV_DIST_FINALIZE_S the process ends with its own status. Nothing is lost: the results
 * were written before, and rank 0's status is the run's.
 */
static void mpi_finish(dv_dist_t *d, int status)
{
	struct sigaction sa;

	for (int r = 0; d->hosts != NULL && r < d->size; r++)
		free(d->hosts[r]);
	free(d->hosts);
	d->hosts = NULL;
	fflush(stdout);
	fflush(stderr);
	finish_status = status;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = finalize_overdue;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(DV_DIST_FINALIZE_S);
	MPI_Finalize();
	alarm(0);
}

/* Started by mpirun/mpiexec (Open MPI, or a PMI launcher)? */
static bool under_mpi(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL ||
	       getenv("PMIX_RANK") != NULL;
}

int dv_dist_init(dv_dist_t *d, int *argc, char ***argv, dv_err_t *err)
{
	char me[HOST_LEN] = "", *all;
	int provided = 0;

	if (!under_mpi()) {
		dv_dist_single(d);
		return d->hosts != NULL ? 0 : dv_err_set(err, -ENOMEM, "out of memory");
	}
	memset(d, 0, sizeof(*d));
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return dv_err_set(err, -EIO, "MPI_Init_thread failed");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	if (gethostname(me, sizeof(me)) != 0)
		snprintf(me, sizeof(me), "?");
	me[HOST_LEN - 1] = '\0';
	all = calloc((size_t)d->size, HOST_LEN);
	d->hosts = calloc((size_t)d->size, sizeof(*d->hosts));
	if (all == NULL || d->hosts == NULL) {
		free(all);
		return dv_err_set(err, -ENOMEM, "out of memory");
	}
	MPI_Allgather(me, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR, MPI_COMM_WORLD);
	for (int r = 0; r < d->size; r++)
		d->hosts[r] = strndup(all + (size_t)r * HOST_LEN, HOST_LEN - 1);
	free(all);
	d->start_pass = mpi_start_pass;
	d->bcast = mpi_bcast;
	d->reduce_pass = mpi_reduce;
	d->abort = mpi_abort;
	d->finish = mpi_finish;
	return 0;
}
