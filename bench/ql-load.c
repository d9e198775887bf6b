/* ql-load: time dv_querylist_load on one file and report memory; optional ldns_pkt baseline. */
#include "config.h"

#include <errno.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "input/querylist.h"
#include "base/util.h"

/*
 * usage: ql-load [--edns] [--do] [--ldns-pkt N] FILE
 * Prints one "key value" per line. With --ldns-pkt N it also compiles the first
 * N queries of the loaded list the slow way (ldns_pkt_query_new + ldns_pkt2wire,
 * names and types parsed again by ldns) and prints both per-query costs and
 * their ratio, measured in the same process one after the other.
 */

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* The ldns_pkt way, over the first n lines of text that hold a query. */
static int ldns_pkt_baseline(const char *path, size_t n, uint64_t *ns, size_t *done)
{
	FILE *in = fopen(path, "r");
	char *line = NULL, name[1100], type[64];
	size_t cap = 0;
	uint64_t t0;

	if (in == NULL)
		return -errno;
	*done = 0;
	t0 = dv_now_ns();
	while (*done < n && getline(&line, &cap, in) >= 0) {
		ldns_rdf *dname = NULL;
		ldns_pkt *pkt;
		uint8_t *wire = NULL;
		size_t wlen;

		if (sscanf(line, "%1099s %63s", name, type) != 2 || name[0] == '#')
			continue;
		if (ldns_str2rdf_dname(&dname, name) != LDNS_STATUS_OK)
			continue;
		pkt = ldns_pkt_query_new(dname, ldns_get_rr_type_by_name(type), LDNS_RR_CLASS_IN,
		                         LDNS_RD);
		ldns_pkt_set_id(pkt, 0);
		if (ldns_pkt2wire(&wire, pkt, &wlen) == LDNS_STATUS_OK)
			(*done)++;
		free(wire);
		ldns_pkt_free(pkt);
	}
	*ns = dv_now_ns() - t0;
	free(line);
	fclose(in);
	return 0;
}

int main(int argc, char **argv)
{
	dv_querylist_options_t opts;
	dv_querylist_t ql;
	dv_err_t err;
	uint64_t t0, load_ns;
	size_t pkt_n = 0;
	long rss0, rss1;
	double cpu0, cpu1;
	int i, rc;

	dv_querylist_options_init(&opts);
	for (i = 1; i < argc - 1; i++) {
		if (strcmp(argv[i], "--edns") == 0)
			opts.edns = true;
		else if (strcmp(argv[i], "--do") == 0)
			opts.dnssec_ok = true;
		else if (strcmp(argv[i], "--ldns-pkt") == 0 && i + 1 < argc - 1)
			pkt_n = strtoul(argv[++i], NULL, 10);
		else
			break;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: ql-load [--edns] [--do] [--ldns-pkt N] FILE\n");
		return 2;
	}
	rss0 = maxrss_kb();
	cpu0 = cpu_s();
	t0 = dv_now_ns();
	rc = dv_querylist_load(&ql, argv[i], &opts, &err);
	load_ns = dv_now_ns() - t0;
	cpu1 = cpu_s();
	rss1 = maxrss_kb();
	if (rc != 0) {
		fprintf(stderr, "ql-load: %s\n", err.msg);
		return 2;
	}
	printf("lines %zu\nqueries %zu\narena_bytes %zu\noff_bytes %zu\n", ql.lines, ql.count,
	       ql.arena_len, (ql.count + 1) * sizeof(uint32_t));
	printf("memory_per_wire %.3f\n",
	       (double)(ql.arena_len + (ql.count + 1) * sizeof(uint32_t)) / (double)ql.arena_len);
	/* wall time suffers when other processes share the cores; CPU time less so */
	printf("load_s %.3f\nload_cpu_s %.3f\nns_per_line %.1f\n", (double)load_ns / 1e9,
	       cpu1 - cpu0, (double)load_ns / (double)(ql.lines ? ql.lines : 1));
	printf("maxrss_before_kb %ld\nmaxrss_after_kb %ld\n", rss0, rss1);
	if (pkt_n > 0) {
		uint64_t pkt_ns = 0, ours_ns;
		size_t done = 0;
		dv_querylist_t q2;

		/* Ours again on the same file, so both figures come from this moment. */
		t0 = dv_now_ns();
		rc = dv_querylist_load(&q2, argv[i], &opts, &err);
		ours_ns = dv_now_ns() - t0;
		if (rc == 0)
			dv_querylist_free(&q2);
		rc = ldns_pkt_baseline(argv[i], pkt_n, &pkt_ns, &done);
		if (rc != 0 || done == 0) {
			fprintf(stderr, "ql-load: baseline failed\n");
			return 1;
		}
		printf("ours_ns_per_query %.1f\n", (double)ours_ns / (double)ql.count);
		printf("ldns_pkt_ns_per_query %.1f\n", (double)pkt_ns / (double)done);
		printf("ldns_pkt_over_ours %.1f\n",
		       ((double)pkt_ns / (double)done) / ((double)ours_ns / (double)ql.count));
	}
	dv_querylist_free(&ql);
	return 0;
}
