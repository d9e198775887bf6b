/* cmd_capacity: dnsvolley capacity's own options, defaults and --plot (main.c runs its searches as
 * a study). */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "cmd/exit_status.h"
#include "results/gates.h"
#include "results/plot_capacity.h"
#include "study/capacity.h"

/* "0.1%" or "0.1" (percent either way) -> 0.001. */
static int parse_pct(const char *s, double *out)
{
	char buf[64];
	size_t n = strlen(s);

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%')
		buf[n - 1] = '\0';
	if (dv_parse_double(buf, 0, 100, out) != 0)
		return -EINVAL;
	*out /= 100;
	return 0;
}

/* "2s", "500ms", or a bare number of seconds. */
static int parse_dur_ns(const char *s, uint64_t *out)
{
	double v;

	if (dv_parse_double(s, 0, 86400, &v) == 0)
		v *= 1e9;
	else if (dv_parse_latency_ns(s, &v) != 0 || v < 0 || v > 86400e9)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

/* "p99.9=20ms" -> quantile 0.999, 20e6 ns. */
static int parse_max_latency(const char *s, dv_capacity_opts_t *o)
{
	const char *eq = strchr(s, '=');
	char q[32];
	double pct;

	if (s[0] != 'p' || eq == NULL || (size_t)(eq - s) >= sizeof(q) || eq - s < 2)
		return -EINVAL;
	memcpy(q, s + 1, (size_t)(eq - s - 1));
	q[eq - s - 1] = '\0';
	if (dv_parse_double(q, 0.001, 100, &pct) != 0 || pct >= 100 + 1e-9)
		return -EINVAL;
	if (dv_parse_latency_ns(eq + 1, &o->max_lat_ns) != 0 || o->max_lat_ns <= 0)
		return -EINVAL;
	o->lat_q = pct / 100;
	return 0;
}

static int bad(const char *flag, const char *val, const char *what)
{
	fprintf(stderr,
	        "dnsvolley capacity: %s: '%s' %s\nTry 'dnsvolley capacity --help' for more "
	        "information.\n",
	        flag, val, what);
	return DV_EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: dnsvolley capacity [CAPACITY OPTIONS] [RUN OPTIONS: -s -p -d -T -c -q -t "
	        "...]\n"
	        "Find the highest open-loop rate each target takes within an SLO.\n\n"
	        "  --max-loss P%%          loss limit (default 0.1%%)\n"
	        "  --max-p99 DUR           p99 latency limit (e.g. 10ms); none by default\n"
	        "  --max-latency pQ=DUR    any percentile, e.g. p99.9=20ms\n"
	        "  --latency-from intended|sent  latency measured from the schedule's send time "
	        "(default) or the actual send\n"
	        "  --step DUR              judged time per step (default 2s)\n"
	        "  --settle DUR            unjudged time at the same rate before it (0.5s)\n"
	        "  --from QPS, --to QPS    rate bounds (from 1000; to none)\n"
	        "  --factor F              growth per step until the SLO breaks (2)\n"
	        "  --precision P%%          stop bisecting at this bracket (2%%)\n"
	        "  --plot DIR              draw the hockey stick (loss, latency against offered "
	        "qps) into DIR\n"
	        "  -h, --help              this help\n\n"
	        "Run and study options as for a plain run (--passes, --repeat, --flush, --json,\n"
	        "--baseline, --max-capacity-drop PCT...); -l and -n are set per step, -q\n"
	        "defaults to 65536 per thread and -t to 1 s here. See dnsvolley(1).\n");
}

enum {
	C_LOSS = 1,
	C_P99,
	C_LAT,
	C_FROM_KIND,
	C_STEP,
	C_SETTLE,
	C_FROM,
	C_TO,
	C_FACTOR,
	C_PREC,
	C_PLOT
};
static const struct {
	const char *name;
	int code;
} cap_opts[] = {{"--max-loss", C_LOSS},   {"--max-p99", C_P99},
                {"--max-latency", C_LAT}, {"--latency-from", C_FROM_KIND},
                {"--step", C_STEP},       {"--settle", C_SETTLE},
                {"--from", C_FROM},       {"--to", C_TO},
                {"--factor", C_FACTOR},   {"--precision", C_PREC},
                {"--plot", C_PLOT}};

static int cap_opt(dv_capacity_cli_t *cc, int code, const char *flag, const char *v)
{
	dv_capacity_opts_t *o = &cc->opts;
	double d;

	switch (code) {
	case C_LOSS:
		return parse_pct(v, &o->max_loss) ? bad(flag, v, "is not a percentage (0.1%)") : 0;
	case C_P99:
		o->lat_q = 0.99;
		return dv_parse_latency_ns(v, &o->max_lat_ns) || o->max_lat_ns <= 0
		           ? bad(flag, v, "is not a latency with a unit (10ms, 800us)")
		           : 0;
	case C_LAT:
		return parse_max_latency(v, o) ? bad(flag, v, "is not pQ=LATENCY (p99.9=20ms)") : 0;
	case C_FROM_KIND:
		if (strcmp(v, "intended") != 0 && strcmp(v, "sent") != 0)
			return bad(flag, v, "is neither 'intended' nor 'sent'");
		o->lat_intended = strcmp(v, "intended") == 0;
		return 0;
	case C_STEP:
	case C_SETTLE:
		if (parse_dur_ns(v, code == C_STEP ? &o->step_ns : &o->settle_ns) != 0 ||
		    (code == C_STEP && o->step_ns < 100 * DV_NS_PER_MS))
			return bad(flag, v, "is not a duration (at least 0.1s for --step)");
		return 0;
	case C_FROM:
	case C_TO:
		if (dv_parse_double(v, 1, 1e9, &d) != 0)
			return bad(flag, v, "is not a rate from 1 to 1e9 qps");
		*(code == C_FROM ? &o->from : &o->to) = d;
		return 0;
	case C_PLOT:
		cc->plot_dir = v;
		return 0;
	case C_FACTOR:
		return dv_parse_double(v, 1.05, 100, &o->factor) ? bad(flag, v, "is not 1.05..100")
		                                                 : 0;
	default:
		if (parse_pct(v, &o->precision) != 0 || o->precision < 0.001)
			return bad(flag, v, "is not a percentage of at least 0.1%");
		return 0;
	}
}

/*
 * Can --plot DIR take the charts (before a search that may take minutes)? DIR a writable
 * directory, or missing in a writable one (dv_plot_capacity makes it). 0 or DV_EXIT_USAGE.
 */
static int check_plot_dir(const char *dir)
{
	struct stat st;
	char *copy;
	int e = 0;

	if (stat(dir, &st) == 0)
		e = !S_ISDIR(st.st_mode) ? ENOTDIR : access(dir, W_OK | X_OK) != 0 ? errno : 0;
	else if (errno != ENOENT)
		e = errno;
	else if ((copy = strdup(dir)) == NULL)
		e = ENOMEM;
	else {
		e = access(dirname(copy), W_OK | X_OK) != 0 ? errno : 0;
		free(copy);
	}
	if (e == 0)
		return 0;
	fprintf(stderr, "dnsvolley capacity: --plot: cannot write the charts into '%s': %s\n", dir,
	        strerror(e));
	return DV_EXIT_USAGE;
}

/* What the options say together, before anything is measured. 0 or DV_EXIT_USAGE. */
static int check_opts(const dv_capacity_cli_t *cc, bool from_given)
{
	const dv_capacity_opts_t *o = &cc->opts;

	if (o->to > 0 && o->to < o->from) {
		fprintf(stderr,
		        "dnsvolley capacity: --to %g is below --from %g%s: nothing to search\n"
		        "Try 'dnsvolley capacity --help' for more information.\n",
		        o->to, o->from, from_given ? "" : " (the default)");
		return DV_EXIT_USAGE;
	}
	return cc->plot_dir != NULL ? check_plot_dir(cc->plot_dir) : 0;
}

int dv_capacity_cli_split(int *argc, char **argv, dv_capacity_cli_t *cc)
{
	int i, n = 1, rc;
	bool from_given = false;

	memset(cc, 0, sizeof(*cc));
	dv_capacity_opts_init(&cc->opts);
	for (i = 1; i < *argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return -1;
		}
	argv[0] = "dnsvolley";

	for (i = 1; i < *argc; i++) {
		const char *a = argv[i], *val = NULL;
		size_t k, len;
		int code = 0;

		if (strcmp(a, "--") == 0)
			break;
		for (k = 0; k < DV_ARRAY_SIZE(cap_opts) && code == 0; k++) {
			len = strlen(cap_opts[k].name);
			if (strncmp(a, cap_opts[k].name, len) == 0 &&
			    (a[len] == '\0' || a[len] == '=')) {
				code = cap_opts[k].code;
				val = a[len] == '=' ? a + len + 1 : NULL;
			}
		}
		if (code == 0) {
			argv[n++] = argv[i];
			continue;
		}
		if (val == NULL) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "dnsvolley capacity: %s needs a value\n", a);
				return DV_EXIT_USAGE;
			}
			val = argv[++i];
		}
		if ((rc = cap_opt(cc, code, a, val)) != 0)
			return rc;
		from_given = from_given || code == C_FROM;
	}
	for (; i < *argc; i++)
		argv[n++] = argv[i];
	*argc = n;
	argv[n] = NULL;
	return check_opts(cc, from_given);
}

void dv_capacity_cli_defaults(dv_run_config_t *run)
{
	dv_run_config_t d;

	dv_run_config_init(&d);
	if (run->max_outstanding == d.max_outstanding)
		run->max_outstanding = 65536 * run->threads;
	if (run->timeout_ns == d.timeout_ns)
		run->timeout_ns = DV_NS_PER_S;
}

int dv_capacity_cli_plot(const dv_capacity_cli_t *cc, const dv_study_t *s)
{
	dv_plot_cap_series_t *ser = calloc(s->n_passes ? s->n_passes : 1, sizeof(*ser));
	dv_capacity_result_t *r = calloc(s->n_passes ? s->n_passes : 1, sizeof(*r));
	char(*labels)[256] = calloc(s->n_passes ? s->n_passes : 1, sizeof(*labels));
	dv_err_t err = {{0}};
	size_t n = 0;
	int rc = -ENOMEM;

	/* One series per search that ran steps: "target / list", plus kind and repeat in a
	 * study of several passes. The results borrow the records' steps. */
	for (size_t i = 0; ser != NULL && r != NULL && labels != NULL && i < s->n_passes; i++) {
		const dv_pass_record_t *p = &s->passes[i];
		if (!p->cap.searched || p->n_cap_steps == 0)
			continue;
		r[n] = (dv_capacity_result_t){.steps = p->cap_steps,
		                              .n_steps = p->n_cap_steps,
		                              .capacity_qps = p->cap.capacity_qps,
		                              .generator_bound = p->cap.generator_bound,
		                              .confirmed = p->cap.confirmed,
		                              .hit_to = p->cap.hit_to};
		if (s->n_passes > 1 && p->kind != DV_PASS_PLAIN)
			snprintf(labels[n], sizeof(labels[n]), "%s / %s / %s rep%u",
			         s->targets[p->target].label, s->lists[p->list].label,
			         dv_pass_kind_name(p->kind), p->repeat + 1);
		else
			snprintf(labels[n], sizeof(labels[n]), "%s / %s",
			         s->targets[p->target].label, s->lists[p->list].label);
		ser[n] = (dv_plot_cap_series_t){.label = labels[n], .r = &r[n]};
		n++;
	}
	if (ser != NULL && r != NULL && labels != NULL)
		rc = n == 0 ? 0 : dv_plot_capacity(cc->plot_dir, NULL, &cc->opts, ser, n, &err);
	free(ser);
	free(r);
	free(labels);
	if (rc != 0) {
		fprintf(stderr, "dnsvolley capacity: --plot: %s\n",
		        err.msg[0] ? err.msg : "out of memory");
		return DV_EXIT_RUN_FAILED;
	}
	if (n > 0)
		printf("[Status] Capacity chart: %s/capacity.png\n", cc->plot_dir);
	return 0;
}
