/* input-dump: load one input with src/input and print what it compiled to (tests, bench). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "input/input.h"

/*
 * input-dump [-k KIND] [-s SERVER] [-a] [-A] [-S] [-q] FILE
 *   -k text|binary|pcap|dnstap (default: detect)  -s server filter (ADDR[#PORT])
 *   -a client = address only   -A dnstap AUTH_QUERY   -S strict   -q counts only
 * Prints "kind K queries N clients C malformed M ignored I records R span_ns T
 * load_ms L", then (without -q) one line per query: "ts_ns client qtype".
 * Exit 0 loaded, 1 load error (message on stderr), 2 bad usage.
 */
int main(int argc, char **argv)
{
	dv_input_options_t o;
	dv_input_kind_t kind = DV_INPUT_AUTO;
	dv_input_stats_t st;
	dv_querylist_t ql;
	dv_err_t err;
	bool quiet = false;
	uint64_t t0, span = 0;
	int i, rc;
	size_t q;

	dv_input_options_init(&o);
	for (i = 1; i < argc - 1; i++) {
		if (strcmp(argv[i], "-k") == 0 && i + 1 < argc - 1) {
			if (dv_input_kind_parse(argv[++i], &kind, &err) != 0)
				goto usage;
		} else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc - 1) {
			if (dv_input_set_server(&o, argv[++i], &err) != 0)
				goto usage;
		} else if (strcmp(argv[i], "-a") == 0) {
			o.client_addr_only = true;
		} else if (strcmp(argv[i], "-A") == 0) {
			o.dnstap_want = DV_DNSTAP_AUTH_QUERY;
		} else if (strcmp(argv[i], "-S") == 0) {
			o.strict = true;
		} else if (strcmp(argv[i], "-q") == 0) {
			quiet = true;
		} else {
			snprintf(err.msg, sizeof(err.msg), "unknown option %s", argv[i]);
			goto usage;
		}
	}
	if (argc < 2) {
		snprintf(err.msg, sizeof(err.msg), "no input");
		goto usage;
	}
	t0 = dv_now_ns();
	rc = dv_input_load(&ql, argv[argc - 1], kind, &o, &st, &err);
	t0 = dv_now_ns() - t0;
	for (i = 0; i < (int)st.bad_kept; i++)
		fprintf(stderr, "malformed: %s %llu: %s\n", st.pos_unit,
		        (unsigned long long)st.bad[i].pos, st.bad[i].what);
	if (rc != 0) {
		fprintf(stderr, "input-dump: %s\n", err.msg);
		return 1;
	}
	for (q = 0; ql.ts_ns != NULL && q < ql.count; q++)
		span = ql.ts_ns[q] > span ? ql.ts_ns[q] : span;
	printf("kind %s queries %zu clients %zu malformed %llu ignored %llu records %llu "
	       "span_ns %llu load_ms %.1f\n",
	       dv_input_kind_name(st.kind), ql.count, ql.clients, (unsigned long long)st.malformed,
	       (unsigned long long)st.ignored, (unsigned long long)st.records,
	       (unsigned long long)span, (double)t0 / 1e6);
	for (q = 0; !quiet && q < ql.count; q++) {
		size_t len;
		const uint8_t *m = dv_querylist_get(&ql, q, &len);
		size_t qe = 12 + dv_querylist_question_len(&ql, q);
		printf("%llu %u %u\n", ql.ts_ns ? (unsigned long long)ql.ts_ns[q] : 0ULL,
		       ql.client ? ql.client[q] : 0u, (unsigned)(m[qe - 4] << 8 | m[qe - 3]));
	}
	dv_querylist_free(&ql);
	return 0;
usage:
	fprintf(
	    stderr,
	    "input-dump: %s\nusage: input-dump [-k KIND] [-s SERVER] [-a] [-A] [-S] [-q] FILE\n",
	    err.msg);
	return 2;
}
