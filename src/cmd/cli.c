/* cli: the command line: dnsperf's short flags where they overlap, long forms for all, strict
 * values. */
#include "config.h"

#include "cmd/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomicfile.h"
#include "base/sockaddr.h"
#include "results/gates.h"
#include "cmd/cli_replay.h"
#include "cmd/cli_server.h"
#include "results/results_json.h"
#include "cmd/target.h"

enum {
	OPT_NO_RD = 256,
	OPT_EDNS_BUFSIZE,
	OPT_SKIP_BAD,
	OPT_PASSES,
	OPT_REPEAT,
	OPT_FLUSH,
	OPT_WARMUP,
	OPT_READY_TIMEOUT,
	OPT_FLUSH_TIMEOUT,
	OPT_JSON,
	OPT_CSV,
	OPT_METRICS,
	OPT_GATE,
	OPT_QUIET,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_INTERRUPT_DRAIN,
	OPT_CLOCK,
	OPT_VERSION,
	OPT_QUERY_VERSION,
	OPT_AFTER_PASS,
	OPT_NO_QUERY_VERSION,
	OPT_HOT_TIME,
	OPT_HOT_RUNS,
	OPT_PROBE,
	OPT_INTERVAL_FORMAT,
	OPT_LATENCY_HISTOGRAM,
	OPT_LONG_HELP,
	OPT_REPLICATE, /* MPI ranks (doc/scale-out.md) */
	OPT_START_AT,
	OPT_RANK_JSON,
	OPT_TLS_SNI,
	OPT_TLS_CA,
	OPT_TLS_NO_RESUME,
	OPT_DOH_METHOD,
	OPT_DOH_PATH,
	OPT_QUERIES_PER_CONN,
	OPT_TC_TCP,
	OPT_XDP,
};

static const struct option long_opts[] = {
    {"server", required_argument, NULL, 's'},
    {"port", required_argument, NULL, 'p'},
    {"datafile", required_argument, NULL, 'd'},
    {"clients", required_argument, NULL, 'c'},
    {"sockets", required_argument, NULL, 'c'},
    {"threads", required_argument, NULL, 'T'},
    {"outstanding", required_argument, NULL, 'q'},
    {"timeout", required_argument, NULL, 't'},
    {"time-limit", required_argument, NULL, 'l'},
    {"passes-through-list", required_argument, NULL, 'n'},
    {"runs", required_argument, NULL, 'n'},
    {"max-qps", required_argument, NULL, 'Q'},
    {"edns", no_argument, NULL, 'e'},
    {"edns-option", required_argument, NULL, 'E'},
    {"family", required_argument, NULL, 'f'},
    {"buffer-size", required_argument, NULL, 'b'},
    {"edns-bufsize", required_argument, NULL, OPT_EDNS_BUFSIZE},
    {"dnssec", no_argument, NULL, 'D'},
    {"no-rd", no_argument, NULL, OPT_NO_RD},
    {"local-address", required_argument, NULL, 'a'},
    {"local-port", required_argument, NULL, 'x'},
    {"stats-interval", required_argument, NULL, 'S'},
    {"verbose", no_argument, NULL, 'v'},
    {"skip-bad", no_argument, NULL, OPT_SKIP_BAD},
    {"passes", required_argument, NULL, OPT_PASSES},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"flush", required_argument, NULL, OPT_FLUSH},
    {"warmup", no_argument, NULL, OPT_WARMUP},
    {"after-pass", required_argument, NULL, OPT_AFTER_PASS},
    {"ready-timeout", required_argument, NULL, OPT_READY_TIMEOUT},
    {"hot-time", required_argument, NULL, OPT_HOT_TIME},
    {"hot-runs", required_argument, NULL, OPT_HOT_RUNS},
    {"probe", required_argument, NULL, OPT_PROBE},
    {"flush-timeout", required_argument, NULL, OPT_FLUSH_TIMEOUT},
    {"json", required_argument, NULL, OPT_JSON},
    {"replicate", no_argument, NULL, OPT_REPLICATE},
    {"start-at", required_argument, NULL, OPT_START_AT},
    {"rank-json", required_argument, NULL, OPT_RANK_JSON},
    {"csv", required_argument, NULL, OPT_CSV},
    {"dns-metrics", required_argument, NULL, OPT_METRICS},
    {"max-loss", required_argument, NULL, OPT_GATE},
    {"max-p99", required_argument, NULL, OPT_GATE},
    {"min-qps", required_argument, NULL, OPT_GATE},
    {"max-qps-drop", required_argument, NULL, OPT_GATE},
    {"max-p99-rise", required_argument, NULL, OPT_GATE},
    {"max-capacity-drop", required_argument, NULL, OPT_GATE},
    {"max-handshake-p99", required_argument, NULL, OPT_GATE},
    {"max-conn-failures", required_argument, NULL, OPT_GATE},
    {"max-server-cpu-rise", required_argument, NULL, OPT_GATE},
    {"max-server-rss-rise", required_argument, NULL, OPT_GATE},
    {"baseline", required_argument, NULL, OPT_GATE},
    {"junit", required_argument, NULL, OPT_GATE},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"interrupt-drain", required_argument, NULL, OPT_INTERRUPT_DRAIN},
    {"clock", required_argument, NULL, OPT_CLOCK},
    {"server-version", no_argument, NULL, OPT_QUERY_VERSION},
    {"no-server-version", no_argument, NULL, OPT_NO_QUERY_VERSION},
    {"interval-format", required_argument, NULL, OPT_INTERVAL_FORMAT},
    {"latency-histogram", no_argument, NULL, OPT_LATENCY_HISTOGRAM},
    {"mode", required_argument, NULL, 'm'},
    {"tls-sni", required_argument, NULL, OPT_TLS_SNI},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-no-resume", no_argument, NULL, OPT_TLS_NO_RESUME},
    {"doh-method", required_argument, NULL, OPT_DOH_METHOD},
    {"doh-path", required_argument, NULL, OPT_DOH_PATH},
    {"queries-per-conn", required_argument, NULL, OPT_QUERIES_PER_CONN},
    {"tc-tcp", no_argument, NULL, OPT_TC_TCP},
    {"xdp", required_argument, NULL, OPT_XDP},
    {"warnings-to-stdout", no_argument, NULL, 'W'},
    {"help", no_argument, NULL, 'h'},
    {"long-options-help", no_argument, NULL, OPT_LONG_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    DV_CLI_REPLAY_LONG_OPTS,
    DV_CLI_SERVER_LONG_OPTS,
    {NULL, 0, NULL, 0},
};

static const char short_opts[] = ":s:p:d:c:T:q:t:l:n:Q:eE:Da:x:S:f:b:vhm:O:WHBy:uV";

/* Where dv_cli_usage prints the -m line. */
static const char mode_marker[] = "-m";

/* The -m line from the transport table: the names and their default ports, UDP's first. */
static void mode_usage(FILE *out)
{
	char names[96] = "udp", ports[96] = "53";
	size_t nl = strlen(names), pl = strlen(ports);

	for (int k = 0; k < DV_TP_NKINDS; k++) {
		const dv_tp_desc_t *d = dv_tp_desc((dv_tp_kind_t)k);
		int a = snprintf(names + nl, sizeof(names) - nl, "|%s", d->name);
		int b = snprintf(ports + pl, sizeof(ports) - pl, ", %u", d->default_port);
		nl = DV_MIN(nl + (size_t)DV_MAX(a, 0), sizeof(names) - 1);
		pl = DV_MIN(pl + (size_t)DV_MAX(b, 0), sizeof(ports) - 1);
	}
	fprintf(out, "  -m, --mode %-22s transport (udp); ports %s;\n", names, ports);
}

void dv_cli_usage(FILE *out)
{
	static const char *const lines[] = {
	    "Usage: dnsvolley [-s [LABEL=]SERVER[:PORT]]... [-p PORT] [-d [LABEL=]FILE]...",
	    "                 [options]",
	    "       dnsvolley capacity [--max-loss P%] [--max-p99 DUR] [run options]  (--help)",
	    "       dnsvolley resperf [-s SERVER] [-d FILE] [-m QPS] [-r SEC]  (--help)",
	    "       dnsvolley compare BASE.json NEW.json... [gates]",
	    "       dnsvolley plot RESULTS.json|HISTORY.csv -o DIR",
	    "       dnsvolley report RESULTS.json",
	    "       dnsvolley merge A.json B.json... -o ALL.json",
	    "       dnsvolley history-upgrade HISTORY.csv",
	    "",
	    "Target and list (dnsperf's letters):",
	    "  -s, --server [LABEL=]ADDR[:PORT]  server, repeatable (127.0.0.1);",
	    "                                    IPv6 with a port: [::1]:5300",
	    "  -p, --port PORT                   default port (53)",
	    "  -d, --datafile [LABEL=]FILE       query list, repeatable (standard input)",
	    "  -f, --family inet|inet6|any       address family for names (any)",
	    "  -a, --local-address ADDR          local address to send from",
	    "  -x, --local-port PORT             first local port (one per socket)",
	    mode_marker, /* -m: the kinds of the table (mode_usage) */
	    "                                    -c is then the number of connections",
	    "  --queries-per-conn N              reopen a connection after N queries",
	    "  --tc-tcp                          UDP: ask truncated answers again over TCP",
	    "  --xdp IFACE                       UDP through AF_XDP on IFACE (root; doc/xdp.md)",
	    "  --tls-sni NAME  --tls-ca FILE (verify)  --tls-no-resume     DoT and DoH",
	    "  --doh-method GET|POST (POST)  --doh-path PATH (/dns-query)  DoH",
	    "Load:",
	    "  -c, --sockets N        UDP sockets (16, at least -T); also --clients N",
	    "  -T, --threads N        worker threads (1; limited by -c and -q when given)",
	    "  -q, --outstanding N    queries in flight (100, at least -T)",
	    "  -t, --timeout S        per query (5)",
	    "  -l, --time-limit S     stop sending after S seconds",
	    "  -n, --runs N, --passes-through-list N  passes through the list (1)",
	    "  -Q, --max-qps N        rate limit",
	    "  --interrupt-drain S    wait for answers after SIGINT (1)",
	    "  -b, --buffer-size KB   socket buffers (4096)",
	    "  --clock wire[:1/N]|app latency clock (auto: wire; unpaced tx stamps 1 in 16)",
	    "Queries:",
	    "  -e, --edns             add EDNS0 OPT",
	    "  --edns-bufsize N       OPT payload size (1232)",
	    "  -D, --dnssec           set DO (implies -e)     --no-rd           clear RD",
	    "  -E, --edns-option CODE:HEX  add an EDNS option (implies -e), repeatable",
	    "  --skip-bad             skip and count malformed list lines instead of failing",
	    "  -y [ALG:]NAME:SECRET   TSIG-sign every query (ALG: hmac-md5)",
	    NULL,
	    "Studies:",
	    "  --passes cold,hot      pass plan per target and list   --repeat N   repeats (1)",
	    "  --flush [LABEL=]CMD    cache flush before each cold pass",
	    "  --warmup               an unreported pass first        --ready-timeout S (30)",
	    "  --after-pass [LABEL=]CMD  shell command after every pass (DV_PASS_KIND etc.)",
	    "  --hot-time S           hot pass length (2, at least 1)",
	    "  --hot-runs N           hot pass: runs through the list instead",
	    "  --probe 'NAME [TYPE] [CLASS]'  readiness probe (version.bind CH TXT)",
	    "  --flush-timeout S      time limit of --flush and --after-pass commands (600)",
	    "  (a cold pass is one run through its list: -l and -n are for plain runs)",
	    "Output:",
	    "  -S, --stats-interval S  interval lines         -v, --verbose  a line per query",
	    "  --interval-format dnsvolley|dnsperf  -S lines: ours (default), or dnsperf's",
	    "                          own 'SECONDS.USEC: QPS'",
	    "  --latency-histogram    latency histogram after each report (as -O)",
	    "  --json FILE|-   results file    --csv FILE   history row per pass",
	    "  --dns-metrics FILE|-  DNS-OARC dns-metrics JSON lines",
	    "  --quiet  no per-pass report   --progress / --no-progress  live line on stderr",
	    "  -W, --warnings-to-stdout  warnings and errors on standard output",
	    "  --server-version / --no-server-version  ask version.bind CH TXT first",
	    "                         (default: only when a results file is written)",
	    "Several generators (doc/scale-out.md):",
	    "  --start-at TIME        start the first pass at this wall-clock time",
	    "  --replicate            under mpirun: every rank the whole list (default: shares)",
	    "  --rank-json PREFIX     under mpirun: each rank's own results, PREFIX.RANK.json",
	    "Gates (exit 1 when one fails):",
	    "  --max-loss PCT  --max-p99 DUR  --min-qps N  --baseline FILE",
	    "  --max-qps-drop PCT  --max-p99-rise PCT  --junit FILE",
	    "  --max-capacity-drop PCT (dnsvolley capacity)",
	    "  --max-server-cpu-rise PCT  --max-server-rss-rise PCT  (server on this host)",
	    "  --max-handshake-p99 DUR  --max-conn-failures N (stream transports)",
	    "Other:",
	    "  -h, --help  this help   -V, --version",
	    "  -H, --long-options-help  dnsperf's -O options and what dnsvolley does",
	    "  -O NAME=VALUE  dnsperf's long options (see -H)",
	    "",
	    "Exit status: 0 ok, 1 a gate failed, 2 usage or input error, 3 the run failed,",
	    "4 not one query was answered.",
	    "See dnsvolley(1).",
	};

	for (size_t i = 0; i < DV_ARRAY_SIZE(lines); i++) {
		if (lines[i] == NULL) { /* the capture-replay options: src/cmd/cli_replay.c */
			dv_cli_replay_usage(out);
			dv_cli_server_usage(out);
		} else if (lines[i] == mode_marker) {
			mode_usage(out);
		} else {
			fprintf(out, "%s\n", lines[i]);
		}
	}
}

/* -H: dnsperf's -O long options and what dnsvolley does with each. */
static void long_options_usage(FILE *out)
{
	fputs(
	    "Usage: dnsvolley ... -O NAME=VALUE ...\n"
	    "\n"
	    "dnsperf's long options:\n"
	    "  suppress=TYPE[,TYPE...]   timeouts, congestion, sendfailed, sockready, unexpected:\n"
	    "                            accepted; dnsvolley prints none of these warnings (it\n"
	    "                            counts them in the report)\n"
	    "  latency-histogram[=yes|no]  print the latency histogram (--latency-histogram)\n"
	    "  num-queries-per-conn=N    reopen a connection after N queries (as\n"
	    "                            --queries-per-conn; a connection transport)\n"
	    "  doh-uri=URI               DoH: the path of the URI (as --doh-path)\n"
	    "  doh-method=GET|POST       DoH: as --doh-method\n",
	    out);
}

static int bad(dv_err_t *err, const char *flag, const char *val, const char *what)
{
	return dv_err_set(err, -EINVAL, "%s: '%s' %s", flag, val, what);
}

static int parse_count(const char *flag, const char *val, uint64_t min, uint64_t max, uint64_t *out,
                       dv_err_t *err)
{
	int rc = dv_parse_u64(val, min, max, out);

	if (rc == -ERANGE)
		return dv_err_set(err, -EINVAL, "%s: '%s' is out of range (%llu-%llu)", flag, val,
		                  (unsigned long long)min, (unsigned long long)max);
	if (rc != 0)
		return bad(err, flag, val, "is not a whole number");
	return 0;
}

static int parse_seconds(const char *flag, const char *val, uint64_t *out_ns, dv_err_t *err)
{
	uint64_t ns;

	int rc = dv_parse_duration_ns(val, &ns);

	if (rc == -ERANGE)
		return dv_err_set(err, -EINVAL, "%s: '%s' is out of range (0 to %.0f s)", flag, val,
		                  DV_DURATION_MAX_S);
	if (rc != 0)
		return bad(err, flag, val, "is not a duration in seconds (e.g. 5, 0.5, 250ms)");
	if (ns == 0)
		return bad(err, flag, val, "must be greater than zero");
	*out_ns = ns;
	return 0;
}

/* Out of memory is an error like any other (doc/architecture.md, "Errors"). */
static int oom(dv_err_t *err)
{
	return dv_err_set(err, -ENOMEM, "out of memory");
}

/* p with room for n elements of size, or NULL (p untouched, still the caller's). */
static void *grow(void *p, size_t n, size_t size)
{
	return realloc(p, n * size);
}

/*
 * "LABEL=VALUE" when the part before '=' looks like a label (no '/', ':' or space):
 * 1 (*label malloc'ed), 0 not a label, -ENOMEM.
 */
static int split_label(const char *arg, char **label, const char **value)
{
	const char *eq = strchr(arg, '=');
	size_t n;

	if (eq == NULL || eq == arg)
		return 0;
	n = (size_t)(eq - arg);
	if (strcspn(arg, "/: \t") < n)
		return 0;
	if ((*label = strndup(arg, n)) == NULL)
		return -ENOMEM;
	*value = eq + 1;
	return 1;
}

static int parse_passes(dv_study_t *st, const char *val, dv_err_t *err)
{
	char *copy = strdup(val), *tok, *save = NULL;
	int rc = 0;

	if (copy == NULL)
		return oom(err);
	free(st->plan);
	st->plan = NULL;
	st->n_plan = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		dv_pass_kind_t k;
		if (strcmp(tok, "cold") == 0)
			k = DV_PASS_COLD;
		else if (strcmp(tok, "hot") == 0)
			k = DV_PASS_HOT;
		else {
			rc = dv_err_set(err, -EINVAL,
			                "--passes: '%s' is not a pass kind (use cold and hot, e.g. "
			                "cold,hot)",
			                tok);
			break;
		}
		dv_pass_kind_t *plan = grow(st->plan, st->n_plan + 1, sizeof(*st->plan));
		if (plan == NULL) {
			rc = oom(err);
			break;
		}
		st->plan = plan;
		st->plan[st->n_plan++] = k;
	}
	if (rc == 0 && st->n_plan == 0)
		rc = dv_err_set(err, -EINVAL, "--passes: empty plan");
	free(copy);
	return rc;
}

static int add_target(dv_study_t *st, const char *arg, dv_err_t *err)
{
	dv_target_t *t;
	char *label = NULL;
	const char *spec = arg;

	if (*arg == '\0')
		return dv_err_set(err, -EINVAL, "-s: empty server");
	if (split_label(arg, &label, &spec) < 0)
		return oom(err);
	if (*spec == '\0') {
		free(label);
		return dv_err_set(err, -EINVAL, "-s: '%s' has no address after the label", arg);
	}
	if ((t = grow(st->targets, st->n_targets + 1, sizeof(*st->targets))) == NULL) {
		free(label);
		return oom(err);
	}
	st->targets = t;
	t = &st->targets[st->n_targets++];
	memset(t, 0, sizeof(*t));
	t->spec = strdup(spec);
	t->label = label != NULL ? label : strdup(spec);
	return t->spec != NULL && t->label != NULL ? 0 : oom(err);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s != NULL ? s + 1 : path;
}

static int add_list(dv_study_t *st, const char *arg, dv_err_t *err)
{
	dv_list_t *l;
	char *label = NULL;
	const char *path = arg;

	if (*arg == '\0')
		return dv_err_set(err, -EINVAL, "-d: empty file name");
	/* A file that exists under the whole name wins over a LABEL=FILE reading. */
	if (access(arg, F_OK) != 0 && split_label(arg, &label, &path) < 0)
		return oom(err);
	if (*path == '\0') {
		free(label);
		return dv_err_set(err, -EINVAL, "-d: '%s' has no file after the label", arg);
	}
	if ((l = grow(st->lists, st->n_lists + 1, sizeof(*st->lists))) == NULL) {
		free(label);
		return oom(err);
	}
	st->lists = l;
	l = &st->lists[st->n_lists++];
	memset(l, 0, sizeof(*l));
	l->path = strdup(path);
	l->label =
	    label != NULL ? label : strdup(strcmp(path, "-") == 0 ? "stdin" : base_name(path));
	return l->path != NULL && l->label != NULL ? 0 : oom(err);
}

static int parse_local_address(dv_run_config_t *run, const char *val, dv_err_t *err)
{
	struct addrinfo hints, *res = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
	hints.ai_socktype = SOCK_DGRAM;
	if (getaddrinfo(val, "0", &hints, &res) != 0 || res == NULL)
		return bad(err, "-a", val, "is not a numeric IPv4 or IPv6 address");
	memcpy(&run->local, res->ai_addr, res->ai_addrlen);
	run->local_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Is PATH a place a results file can be written (before a run that may take hours)? */
static int check_writable(const char *flag, const char *path, dv_err_t *err)
{
	dv_err_t why;
	int rc = dv_atomicfile_check(path, &why);

	return rc != 0 ? dv_err_set(err, rc, "%s: %s", flag, why.msg) : 0;
}

/*
 * Outputs must be writable, and none may be an input (or another output): that
 * would destroy it. Both are refused before anything runs.
 */
static int check_outputs(const dv_config_t *cfg, dv_err_t *err)
{
	const struct {
		const char *flag;
		const char *path;
	} out[] = {
	    {"--json", cfg->json_path},
	    {"--csv", cfg->csv_path},
	    {"--dns-metrics", cfg->metrics_path},
	    {"--junit", cfg->gates.junit_path},
	};
	size_t i, j;
	int rc;

	for (i = 0; i < DV_ARRAY_SIZE(out); i++) {
		if (out[i].path == NULL)
			continue;
		for (j = 0; j < i && strcmp(out[i].path, "-") == 0; j++)
			if (out[j].path != NULL && strcmp(out[j].path, "-") == 0)
				return dv_err_set(
				    err, -EINVAL,
				    "%s: '-' (standard output) is also the %s output: "
				    "two formats would be mixed",
				    out[i].flag, out[j].flag);
		if (strcmp(out[i].path, "-") == 0)
			continue;
		for (j = 0; j < cfg->study.n_lists; j++)
			if (dv_same_file(out[i].path, cfg->study.lists[j].path))
				return dv_err_set(err, -EINVAL,
				                  "%s: '%s' is also a query list (-d); refusing to "
				                  "overwrite it",
				                  out[i].flag, out[i].path);
		if (cfg->gates.baseline_path != NULL &&
		    dv_same_file(out[i].path, cfg->gates.baseline_path))
			return dv_err_set(err, -EINVAL,
			                  "%s: '%s' is also the --baseline file; refusing to "
			                  "overwrite it",
			                  out[i].flag, out[i].path);
		for (j = 0; j < i; j++)
			if (out[j].path != NULL && dv_same_file(out[i].path, out[j].path))
				return dv_err_set(err, -EINVAL, "%s: '%s' is also the %s output",
				                  out[i].flag, out[i].path, out[j].flag);
		rc = check_writable(out[i].flag, out[i].path, err);
		if (rc != 0)
			return rc;
	}
	if (cfg->rank_json != NULL) { /* PREFIX.RANK.json: rank 0's stands for all */
		char *p = NULL;
		if (asprintf(&p, "%s.0.json", cfg->rank_json) < 0)
			return dv_err_set(err, -ENOMEM, "out of memory");
		rc = check_writable("--rank-json", p, err);
		free(p);
		return rc;
	}
	return 0;
}

void dv_config_free(dv_config_t *cfg)
{
	if (cfg == NULL)
		return;
	dv_study_free(&cfg->study);
	free(cfg->flush_all);
	free(cfg->json_path);
	free(cfg->rank_json);
	free(cfg->csv_path);
	free(cfg->metrics_path);
	dv_gates_free(&cfg->gates);
	memset(cfg, 0, sizeof(*cfg));
}

/* *dst replaced by a copy of val: 0 or -ENOMEM with err filled. */
static int set_path(char **dst, const char *val, dv_err_t *err)
{
	free(*dst);
	*dst = strdup(val);
	return *dst != NULL ? 0 : oom(err);
}

/* What parsing the flags leaves for the checks that follow them. */
typedef struct parse_state {
	dv_config_t *cfg;
	const char **flush_args; /* --flush values, in order; resolved once targets are known */
	size_t n_flush;
	const char **after_args; /* --after-pass values, likewise */
	size_t n_after;
	const char *probe; /* --probe, compiled once --no-rd is known */
	uint64_t port;     /* -p: default port for targets without one */
	int family;        /* -f: AF_INET, AF_INET6 or AF_UNSPEC */
	int query_version; /* --server-version 1, --no-server-version 0, unset -1 */
	bool progress_set;
	bool sockets_set, threads_set, outstanding_set; /* -c, -T, -q given */
	bool port_set;                                  /* -p given */
	const char *tls_opt;    /* the first TLS option given (--tls-sni...), for the checks */
	const char *doh_opt;    /* the first DoH option given */
	const char *qpc_opt;    /* --queries-per-conn or -O num-queries-per-conn */
	dv_cli_server_t server; /* --server-pid, --server-syscalls (cli_server.c) */
} parse_state_t;

/* An option handler's answer for an option of another group. */
#define NOT_MINE 2

/* Target and list: -s -p -d -f -a -x. */
static int opt_target(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	dv_study_t *st = &ps->cfg->study;
	uint64_t v;
	int rc;

	switch (c) {
	case 's':
		return add_target(st, val, err);
	case 'p':
		ps->port_set = true;
		return parse_count("-p", val, 1, 65535, &ps->port, err);
	case 'd':
		return add_list(st, val, err);
	case 'f':
		if (strcmp(val, "inet") == 0)
			ps->family = AF_INET;
		else if (strcmp(val, "inet6") == 0)
			ps->family = AF_INET6;
		else if (strcmp(val, "any") == 0)
			ps->family = AF_UNSPEC;
		else
			return bad(err, "-f", val, "is not a family (inet, inet6 or any)");
		return 0;
	case 'a':
		return parse_local_address(&st->run, val, err);
	case 'x':
		rc = parse_count("-x", val, 1, 65535, &v, err);
		st->run.local_port = (uint16_t)v;
		return rc;
	}
	return NOT_MINE;
}

/* Load shape: -c -T -q -t -l -n -Q -b --interrupt-drain. */
static int opt_load(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	dv_run_config_t *run = &ps->cfg->study.run;
	uint64_t v;
	double q;
	int rc;

	switch (c) {
	case 'c':
		rc = parse_count("-c", val, 1, 100000, &v, err);
		run->sockets = (uint32_t)v;
		ps->sockets_set = true;
		return rc;
	case 'T':
		rc = parse_count("-T", val, 1, 256, &v, err);
		run->threads = (uint32_t)v;
		ps->threads_set = true;
		return rc;
	case 'q':
		rc = parse_count("-q", val, 1, 65536ULL * 256, &v, err);
		run->max_outstanding = (uint32_t)v;
		ps->outstanding_set = true;
		return rc;
	case 't':
		return parse_seconds("-t", val, &run->timeout_ns, err);
	case 'l':
		return parse_seconds("-l", val, &run->time_limit_ns, err);
	case 'n':
		return parse_count("-n", val, 1, UINT32_MAX, &run->passes, err);
	case 'Q':
		if (dv_parse_double(val, 1e-6, 1e9, &q) != 0)
			return bad(err, "-Q", val,
			           "is not a rate in queries per second (greater than 0)");
		run->max_qps = q;
		return 0;
	case 'b':
		rc = parse_count("-b", val, 1, 1024 * 1024, &v, err);
		run->socket_buf_bytes = (uint32_t)(v * 1024);
		return rc;
	case OPT_INTERRUPT_DRAIN:
		return parse_seconds("--interrupt-drain", val, &run->interrupt_drain_ns, err);
	case OPT_CLOCK:
		if (strncmp(val, "wire:1/", 7) == 0) {
			uint64_t n;
			rc = parse_count("--clock wire:1/N", val + 7, 1, DV_STAMP_EVERY_MAX, &n,
			                 err);
			run->clock = DV_CLOCK_WIRE;
			run->stamp_every = (uint32_t)n;
			return rc;
		}
		if (strcmp(val, "wire") == 0)
			run->clock = DV_CLOCK_WIRE;
		else if (strcmp(val, "app") == 0)
			run->clock = DV_CLOCK_APP;
		else if (strcmp(val, "auto") == 0)
			run->clock = DV_CLOCK_AUTO;
		else
			return bad(err, "--clock", val, "is not wire, wire:1/N, app or auto");
		return 0;
	}
	return NOT_MINE;
}

/* Queries: -e -E --edns-bufsize -D --no-rd --skip-bad. */
static int opt_query(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	dv_querylist_options_t *ql = &ps->cfg->study.ql;
	uint64_t v;
	int rc;

	switch (c) {
	case 'e':
		ql->edns = true;
		return 0;
	case 'E':
		return dv_querylist_add_edns_option(ql, val, err);
	case OPT_EDNS_BUFSIZE:
		rc = parse_count("--edns-bufsize", val, 512, 65535, &v, err);
		ql->edns = true;
		ql->edns_bufsize = (uint16_t)v;
		return rc;
	case 'D':
		ql->edns = true;
		ql->dnssec_ok = true;
		return 0;
	case OPT_NO_RD:
		ql->rd = false;
		return 0;
	case OPT_SKIP_BAD:
		ql->skip_bad = true;
		return 0;
	}
	return NOT_MINE;
}

/* Study plan: --passes --repeat --flush --warmup --after-pass --ready-timeout --flush-timeout. */
static int opt_study(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	dv_study_t *st = &ps->cfg->study;
	uint64_t v;
	int rc;

	switch (c) {
	case OPT_PASSES:
		return parse_passes(st, val, err);
	case OPT_REPEAT:
		rc = parse_count("--repeat", val, 1, 10000, &v, err);
		st->repeat = (unsigned)v;
		return rc;
	case OPT_FLUSH: {
		const char **args = grow(ps->flush_args, ps->n_flush + 1, sizeof(*args));
		if (args == NULL)
			return oom(err);
		ps->flush_args = args;
		ps->flush_args[ps->n_flush++] = val;
		return 0;
	}
	case OPT_WARMUP:
		st->warmup = true;
		return 0;
	case OPT_AFTER_PASS: {
		const char **args = grow(ps->after_args, ps->n_after + 1, sizeof(*args));
		if (args == NULL)
			return oom(err);
		ps->after_args = args;
		ps->after_args[ps->n_after++] = val;
		return 0;
	}
	case OPT_READY_TIMEOUT:
		return parse_seconds("--ready-timeout", val, &st->ready_timeout_ns, err);
	case OPT_HOT_TIME:
		if ((rc = parse_seconds("--hot-time", val, &st->hot_time_ns, err)) != 0)
			return rc;
		if (st->hot_time_ns < DV_HOT_TIME_MIN_NS)
			return dv_err_set(
			    err, -EINVAL,
			    "--hot-time: '%s' is under %.0f s: so short a pass is mostly "
			    "noise",
			    val, (double)DV_HOT_TIME_MIN_NS / 1e9);
		return 0;
	case OPT_HOT_RUNS:
		return parse_count("--hot-runs", val, 1, 1000000, &st->hot_runs, err);
	case OPT_PROBE:
		ps->probe = val;
		return 0;
	case OPT_FLUSH_TIMEOUT:
		return parse_seconds("--flush-timeout", val, &st->flush_timeout_ns, err);
	}
	return NOT_MINE;
}

/* Output: -S -v --json --csv --dns-metrics --quiet --[no-]progress --[no-]server-version. */
static int opt_output(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	dv_config_t *cfg = ps->cfg;
	dv_run_config_t *run = &cfg->study.run;
	int rc;

	switch (c) {
	case 'S':
		rc = parse_seconds("-S", val, &run->interval_ns, err);
		run->interval_print = true;
		return rc;
	case 'v':
		run->verbose = true;
		return 0;
	case OPT_JSON:
		return set_path(&cfg->json_path, val, err);
	case OPT_REPLICATE:
		cfg->replicate = true;
		return 0;
	case OPT_START_AT:
		return dv_dist_parse_start_at(val, &cfg->start_at_ns, err);
	case OPT_RANK_JSON:
		return set_path(&cfg->rank_json, val, err);
	case OPT_CSV:
		return set_path(&cfg->csv_path, val, err);
	case OPT_METRICS:
		return set_path(&cfg->metrics_path, val, err);
	case OPT_QUIET:
		cfg->quiet = true;
		return 0;
	case OPT_PROGRESS:
	case OPT_NO_PROGRESS:
		run->progress = c == OPT_PROGRESS;
		ps->progress_set = true;
		return 0;
	case OPT_QUERY_VERSION:
	case OPT_NO_QUERY_VERSION:
		ps->query_version = c == OPT_QUERY_VERSION;
		return 0;
	}
	return NOT_MINE;
}

/* -O suppress=TYPE[,TYPE...]: dnsperf's warning types, each checked (cli.h). */
int dv_cli_parse_suppress(const char *val, dv_err_t *err)
{
	static const char *const types[] = {"timeouts", "congestion", "sendfailed", "sockready",
	                                    "unexpected"};
	char *copy = strdup(val), *tok, *save = NULL;
	size_t i;
	int rc = 0;

	if (copy == NULL)
		return oom(err);
	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < DV_ARRAY_SIZE(types); i++)
			if (strcmp(tok, types[i]) == 0)
				break;
		if (i == DV_ARRAY_SIZE(types))
			rc = dv_err_set(err, -EINVAL,
			                "-O suppress: '%s' is not a message type (timeouts, "
			                "congestion, sendfailed, sockready, unexpected)",
			                tok);
	}
	free(copy);
	return rc;
}

/* A boolean -O value: absent, yes/no, true/false, 1/0, on/off. */
static int parse_bool(const char *name, const char *val, bool *out, dv_err_t *err)
{
	if (val == NULL || strcmp(val, "yes") == 0 || strcmp(val, "true") == 0 ||
	    strcmp(val, "1") == 0 || strcmp(val, "on") == 0)
		*out = true;
	else if (strcmp(val, "no") == 0 || strcmp(val, "false") == 0 || strcmp(val, "0") == 0 ||
	         strcmp(val, "off") == 0)
		*out = false;
	else
		return dv_err_set(err, -EINVAL, "-O %s: '%s' is not yes or no", name, val);
	return 0;
}

/* -O NAME=VALUE: dnsperf's long options; those with an equivalent work, the rest say why not. */
static int opt_stream(parse_state_t *ps, int c, const char *val, dv_err_t *err);
static int doh_uri(parse_state_t *ps, const char *val, dv_err_t *err);

static int parse_long_option(parse_state_t *ps, const char *arg, dv_err_t *err)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	const char *val = eq != NULL ? eq + 1 : NULL;
	size_t n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	uint64_t v;

	if (n == 0 || n >= sizeof(name))
		return bad(err, "-O", arg, "is not NAME=VALUE (see -H for the names)");
	memcpy(name, arg, n);
	name[n] = '\0';
	if (strcmp(name, "latency-histogram") == 0)
		return parse_bool(name, val, &ps->cfg->latency_histogram, err);
	if (val == NULL)
		return dv_err_set(err, -EINVAL, "-O %s needs a value (%s=VALUE)", name, name);
	if (strcmp(name, "suppress") == 0)
		return dv_cli_parse_suppress(val, err);
	if (strcmp(name, "num-queries-per-conn") == 0) {
		if (parse_count("-O num-queries-per-conn", val, 1, UINT32_MAX, &v, err) != 0)
			return -EINVAL;
		ps->cfg->study.run.queries_per_conn = v;
		ps->qpc_opt = "-O num-queries-per-conn";
		return 0;
	}
	if (strcmp(name, "doh-method") == 0)
		return opt_stream(ps, OPT_DOH_METHOD, val, err);
	if (strcmp(name, "doh-uri") == 0)
		return doh_uri(ps, val, err);
	return dv_err_set(err, -EINVAL,
	                  "-O: '%s' is not a long option (suppress, latency-histogram, "
	                  "num-queries-per-conn, doh-uri, doh-method; see -H)",
	                  name);
}

/* -m VALUE: udp, or a stream transport. */
static int parse_mode(parse_state_t *ps, const char *val, dv_err_t *err)
{
	dv_run_config_t *run = &ps->cfg->study.run;
	const dv_tp_desc_t *d;
	char why[96];

	if (strcmp(val, "udp") == 0) {
		run->stream = false;
		return 0;
	}
	d = dv_tp_desc_find(val);
	if (d == NULL) {
		snprintf(why, sizeof(why), "is not a mode (%s)",
		         dv_tp_kind_list("udp", false, NULL));
		return bad(err, "-m", val, why);
	}
	run->stream = true;
	run->tp.kind = d->kind;
	return 0;
}

/* Stream transports: --tls-sni --tls-ca --tls-no-resume --doh-method --doh-path
 * --queries-per-conn. The strings stay in argv, which outlives the run. */
static int opt_stream(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	dv_run_config_t *run = &ps->cfg->study.run;
	FILE *f;
	int e;

	switch (c) {
	case OPT_TLS_SNI:
		if (*val == '\0')
			return bad(err, "--tls-sni", val, "is empty (give a server name)");
		run->tp.sni = val;
		ps->tls_opt = ps->tls_opt ? ps->tls_opt : "--tls-sni";
		return 0;
	case OPT_TLS_CA:
		f = fopen(val, "r");
		if (f == NULL) {
			e = errno;
			return dv_err_set(err, -EINVAL, "--tls-ca %s: cannot read it: %s", val,
			                  strerror(e));
		}
		fclose(f);
		run->tp.ca_file = val;
		ps->tls_opt = ps->tls_opt ? ps->tls_opt : "--tls-ca";
		return 0;
	case OPT_TLS_NO_RESUME:
		run->tp.no_resume = true;
		ps->tls_opt = ps->tls_opt ? ps->tls_opt : "--tls-no-resume";
		return 0;
	case OPT_DOH_METHOD:
		if (strcasecmp(val, "GET") == 0)
			run->tp.doh_get = true;
		else if (strcasecmp(val, "POST") == 0)
			run->tp.doh_get = false;
		else
			return bad(err, "--doh-method", val, "is not GET or POST");
		ps->doh_opt = ps->doh_opt ? ps->doh_opt : "--doh-method";
		return 0;
	case OPT_DOH_PATH:
		if (val[0] != '/')
			return bad(err, "--doh-path", val,
			           "does not start with '/' (e.g. /dns-query)");
		run->tp.doh_path = val;
		ps->doh_opt = ps->doh_opt ? ps->doh_opt : "--doh-path";
		return 0;
	case OPT_TC_TCP:
		run->tc_tcp = true;
		return 0;
	case OPT_XDP:
		if (val[0] == '\0' || strlen(val) >= 16) /* IFNAMSIZ */
			return bad(err, "--xdp", val, "is not an interface name");
		run->xdp_iface = val;
		return 0;
	case OPT_QUERIES_PER_CONN:
		ps->qpc_opt = "--queries-per-conn";
		return parse_count("--queries-per-conn", val, 1, UINT32_MAX, &run->queries_per_conn,
		                   err);
	}
	return NOT_MINE;
}

/* -O doh-uri=https://HOST[:PORT]/PATH (dnsperf): the path is what dnsvolley takes from it. */
static int doh_uri(parse_state_t *ps, const char *val, dv_err_t *err)
{
	const char *p = strstr(val, "://");

	p = p != NULL ? strchr(p + 3, '/') : NULL;
	if (p == NULL)
		return bad(err, "-O doh-uri", val, "has no path (https://HOST/dns-query)");
	return opt_stream(ps, OPT_DOH_PATH, p, err);
}

/* The stream options against -m, and the default port of the transport (before the
 * targets are resolved). */
static int check_stream(parse_state_t *ps, dv_err_t *err)
{
	const dv_run_config_t *run = &ps->cfg->study.run;
	const dv_tp_desc_t *d = run->stream ? dv_tp_desc(run->tp.kind) : NULL;
	const char *mode = d != NULL ? d->name : "udp";

	if (run->tc_tcp && run->stream)
		return dv_err_set(err, -EINVAL,
		                  "--tc-tcp asks truncated UDP answers again over TCP: it needs "
		                  "-m udp, not -m %s",
		                  mode);
	if (run->xdp_iface != NULL && run->stream)
		return dv_err_set(err, -EINVAL,
		                  "--xdp sends UDP through AF_XDP: it needs -m udp, not -m %s",
		                  mode);
	if (run->xdp_iface != NULL && run->tc_tcp)
		return dv_err_set(
		    err, -EINVAL,
		    "--xdp and --tc-tcp: the TCP retries need kernel sockets; give one");
	if (run->xdp_iface != NULL && run->clock == DV_CLOCK_WIRE)
		return dv_err_set(err, -EINVAL,
		                  "--clock wire takes the kernel sockets' stamps: --xdp times "
		                  "queries with the app clock");
	if (ps->qpc_opt != NULL && !run->stream)
		return dv_err_set(err, -EINVAL,
		                  "%s needs a connection transport (-m %s), not -m udp",
		                  ps->qpc_opt, dv_tp_kind_list(NULL, false, NULL));
	if (ps->tls_opt != NULL && (d == NULL || !d->tls))
		return dv_err_set(err, -EINVAL, "%s needs TLS (-m %s), not -m %s", ps->tls_opt,
		                  dv_tp_kind_list(NULL, true, "-m "), mode);
	if (ps->doh_opt != NULL && (!run->stream || run->tp.kind != DV_TP_DOH))
		return dv_err_set(err, -EINVAL, "%s needs -m doh, not -m %s", ps->doh_opt, mode);
	if (run->stream && run->client_base.ss_family != AF_UNSPEC &&
	    run->local.ss_family != AF_UNSPEC)
		return dv_err_set(err, -EINVAL,
		                  "-a and --client-range both choose the connections' source "
		                  "address: give one");
	if (!ps->port_set && d != NULL)
		ps->port = d->default_port;
	return 0;
}

/* dnsperf's flags beyond the common ones: -m -O -W -y, --interval-format (-B, -u: cli_replay.c). */
static int opt_dnsperf(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	switch (c) {
	case 'm':
		return parse_mode(ps, val, err);
	case 'O':
		return parse_long_option(ps, val, err);
	case OPT_LATENCY_HISTOGRAM:
		ps->cfg->latency_histogram = true;
		return 0;
	case 'W':
		ps->cfg->warnings_stdout = true;
		return 0;
	case 'y': /* TSIG: the list is signed ahead of the run (src/input/tsig.h) */
		ps->cfg->study.replay.tsig_on = true;
		return dv_tsig_key_parse(&ps->cfg->study.replay.tsig, val, err);
	case OPT_INTERVAL_FORMAT:
		if (strcmp(val, "dnsperf") == 0)
			ps->cfg->study.run.interval_dnsperf = true;
		else if (strcmp(val, "dnsvolley") == 0)
			ps->cfg->study.run.interval_dnsperf = false;
		else
			return bad(err, "--interval-format", val,
			           "is not a format (dnsvolley or dnsperf)");
		return 0;
	}
	return NOT_MINE;
}

/* --help, --version (1: printed, exit 0), and getopt's complaints (usage errors). */
static int opt_meta(int c, char **argv, dv_err_t *err)
{
	switch (c) {
	case 'h':
		dv_cli_usage(stdout);
		return 1;
	case 'H':
	case OPT_LONG_HELP:
		long_options_usage(stdout);
		return 1;
	case 'V':
	case OPT_VERSION:
		printf("dnsvolley %s\n", PACKAGE_VERSION);
		return 1;
	case ':':
		if (optopt != 0)
			return dv_err_set(err, -EINVAL, "-%c needs a value", optopt);
		return dv_err_set(err, -EINVAL, "%s needs a value", argv[optind - 1]);
	}
	if (optopt != 0)
		return dv_err_set(err, -EINVAL, "unknown option -%c", optopt);
	return dv_err_set(err, -EINVAL, "unknown option '%s'", argv[optind - 1]);
}

/* Replay: --input -B --timing --speed --client-range --max-clients --multiply, rewrites. */
static int opt_replay(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	int rc = dv_cli_replay_opt(&ps->cfg->study, c, val, err);
	return rc == DV_CLI_REPLAY_NOT_MINE ? NOT_MINE : rc;
}

/* Server cost: --server-pid --server-syscalls. */
static int opt_server(parse_state_t *ps, int c, const char *val, dv_err_t *err)
{
	int rc = dv_cli_server_opt(&ps->server, c, val, err);
	return rc == DV_CLI_SERVER_NOT_MINE ? NOT_MINE : rc;
}

/* One option: each group's handler in turn, the first that knows c answers. */
static int parse_one(parse_state_t *ps, int c, int idx, char **argv, dv_err_t *err)
{
	static int (*const groups[])(parse_state_t *, int, const char *, dv_err_t *) = {
	    opt_target, opt_load,    opt_query,  opt_study,  opt_output,
	    opt_replay, opt_dnsperf, opt_stream, opt_server,
	};
	size_t i;
	int rc;

	if (c == OPT_GATE)
		return dv_gates_parse_opt(&ps->cfg->gates, long_opts[idx].name, optarg, err);
	for (i = 0; i < DV_ARRAY_SIZE(groups); i++) {
		rc = groups[i](ps, c, optarg, err);
		if (rc != NOT_MINE)
			return rc;
	}
	return opt_meta(c, argv, err);
}

/* Defaults that depend on other flags. */
static int apply_defaults(parse_state_t *ps, dv_err_t *err)
{
	dv_config_t *cfg = ps->cfg;
	dv_study_t *st = &cfg->study;
	int rc;

	if (st->n_targets == 0 && (rc = add_target(st, "127.0.0.1", err)) != 0)
		return rc;
	if (st->n_lists == 0 && (rc = add_list(st, "-", err)) != 0)
		return rc;
	if (st->n_plan == 0) {
		if ((st->plan = grow(NULL, 1, sizeof(*st->plan))) == NULL)
			return oom(err);
		st->plan[0] = DV_PASS_PLAIN;
		st->n_plan = 1;
	}
	if (!ps->progress_set)
		st->run.progress = isatty(cfg->warnings_stdout ? STDOUT_FILENO : STDERR_FILENO) &&
		                   !st->run.verbose;
	/* The wire clock's sample follows it (dv_run_stamp_every). */
	st->run.every_latency = cfg->latency_histogram;
	/* Hidden: the wire clock's fallback receive stamps where the filter would load (tests). */
	st->run.no_rx_filter = getenv("DV_NO_RX_FILTER") != NULL;
	/* The server's version is metadata for results files; a plain run sends nothing extra.
	 * Over a connection kind only when asked: it costs the server a connection (and a
	 * source port of a narrow -a range), which would show in its counts. */
	st->query_version = ps->query_version >= 0 ? ps->query_version == 1
	                                           : !st->run.stream && (cfg->json_path != NULL ||
	                                                                 cfg->csv_path != NULL ||
	                                                                 cfg->metrics_path != NULL);
	return 0;
}

/* Append a sentence to cfg->note (what was chosen automatically). */
static void add_note(dv_config_t *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(dv_config_t *cfg, const char *fmt, ...)
{
	size_t n = strlen(cfg->note);
	va_list ap;

	if (n > 0 && n + 2 < sizeof(cfg->note)) {
		memcpy(cfg->note + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(cfg->note + n, sizeof(cfg->note) - n, fmt, ap);
	va_end(ap);
}

/*
 * A thread needs a socket and a query in flight of its own. What was not given
 * follows -T (-T 32 alone: 32 sockets); what was given limits -T, as in dnsperf
 * (-c 1 -T 4: one thread). Either way the note says so.
 */
static void auto_load(parse_state_t *ps)
{
	dv_config_t *cfg = ps->cfg;
	dv_run_config_t *run = &cfg->study.run;
	uint32_t t = run->threads;

	if (run->threads > run->sockets && !ps->sockets_set) {
		add_note(cfg, "-T %u: using %u sockets (-c), one per thread", t, t);
		run->sockets = t;
	}
	if (run->threads > run->max_outstanding && !ps->outstanding_set) {
		add_note(cfg, "-T %u: using %u queries in flight (-q), one per thread", t, t);
		run->max_outstanding = t;
	}
	if (run->threads > run->sockets) {
		add_note(cfg,
		         "-T %u with -c %u: using %u thread%s (a thread needs a socket of its own)",
		         t, run->sockets, run->sockets, run->sockets == 1 ? "" : "s");
		run->threads = run->sockets;
	}
	if (run->threads > run->max_outstanding) {
		add_note(cfg,
		         "-T %u with -q %u: using %u thread%s (a thread needs a query in flight of "
		         "its own)",
		         run->threads, run->max_outstanding, run->max_outstanding,
		         run->max_outstanding == 1 ? "" : "s");
		run->threads = run->max_outstanding;
	}
}

/* Queries in flight and local ports that fit together (after auto_load). */
static int check_load(const dv_run_config_t *run, dv_err_t *err)
{
	if ((run->max_outstanding + run->threads - 1) / run->threads > 65536)
		return dv_err_set(
		    err, -EINVAL,
		    "-q %u: at most 65536 queries in flight per thread (DNS IDs); add "
		    "threads (-T)",
		    run->max_outstanding);
	if (run->local_port != 0 && (uint64_t)run->local_port + run->sockets - 1 > 65535)
		return dv_err_set(err, -EINVAL, "-x %u with -c %u runs past port 65535",
		                  run->local_port, run->sockets);
	return 0;
}

/* Standard input read at most once; list labels unique. */
static int check_lists(const dv_study_t *st, dv_err_t *err)
{
	bool stdin_used = false;
	size_t i, j;

	for (i = 0; i < st->n_lists; i++) {
		if (strcmp(st->lists[i].path, "-") == 0) {
			if (stdin_used)
				return dv_err_set(err, -EINVAL,
				                  "-d -: standard input can be read once");
			stdin_used = true;
		}
		for (j = 0; j < i; j++)
			if (strcmp(st->lists[i].label, st->lists[j].label) == 0)
				return dv_err_set(err, -EINVAL, "-d: two lists are labelled '%s'",
				                  st->lists[i].label);
	}
	return 0;
}

/* Target labels unique; each address resolved (with -p and -f) and matching -a's family. */
static int resolve_targets(dv_study_t *st, uint64_t port, int family, dv_err_t *err)
{
	const dv_run_config_t *run = &st->run;
	size_t i, j;
	int rc;

	for (i = 0; i < st->n_targets; i++) {
		dv_target_t *t = &st->targets[i];
		char buf[DV_SOCKADDR_TEXT_MAX];
		for (j = 0; j < i; j++)
			if (strcmp(t->label, st->targets[j].label) == 0)
				return dv_err_set(err, -EINVAL, "-s: two targets are labelled '%s'",
				                  t->label);
		rc =
		    dv_resolve_target(t->spec, (uint16_t)port, family, &t->addr, &t->addr_len, err);
		if (rc != 0) {
			char msg[sizeof(err->msg)];
			snprintf(msg, sizeof(msg), "-s: %s", err->msg);
			dv_err_set(err, rc, "%s", msg);
			return rc;
		}
		if (run->local.ss_family != AF_UNSPEC && run->local.ss_family != t->addr.ss_family)
			return dv_err_set(err, -EINVAL,
			                  "-a: the local address and target '%s' are of different "
			                  "address families",
			                  t->label);
		if (run->client_base.ss_family != AF_UNSPEC &&
		    run->client_base.ss_family != t->addr.ss_family)
			return dv_err_set(err, -EINVAL,
			                  "--client-range: the range and target '%s' are of "
			                  "different address families",
			                  t->label);
		dv_sockaddr_text((const struct sockaddr *)&t->addr, buf, sizeof(buf));
		if ((t->addr_text = strdup(buf)) == NULL)
			return oom(err);
	}
	return 0;
}

/*
 * The target labelled like the LABEL= prefix of arg, or -1 (no prefix); -2: an unknown
 * label; -3: out of memory.
 */
static long labelled_target(const dv_study_t *st, const char *arg, const char **cmd)
{
	char *label = NULL;
	long found = -2;
	int sl;

	*cmd = arg;
	if ((sl = split_label(arg, &label, cmd)) <= 0)
		return sl < 0 ? -3 : -1;
	for (size_t j = 0; j < st->n_targets; j++)
		if (strcmp(st->targets[j].label, label) == 0)
			found = (long)j;
	free(label);
	return found;
}

/* The "no target is labelled" error for flag's value arg: names the targets there are. */
static int unknown_label(const dv_study_t *st, const char *flag, const char *arg, dv_err_t *err)
{
	char known[256] = "";
	size_t len = strcspn(arg, "=");

	for (size_t j = 0; j < st->n_targets; j++) {
		size_t at = strlen(known);
		snprintf(known + at, sizeof(known) - at, "%s%s", j ? ", " : "",
		         st->targets[j].label);
	}
	return dv_err_set(err, -EINVAL,
	                  "%s '%s': no target is labelled '%.*s' (targets: %s); for a command "
	                  "that starts with a variable assignment write 'env %.*s=...'",
	                  flag, arg, (int)len, arg, known, (int)len, arg);
}

/*
 * --flush and --after-pass: LABEL=CMD for a known target label, CMD alone for
 * every target; an unknown LABEL= is an error (it would run as a shell variable
 * assignment and do nothing). A cold pass needs a flush command for every target.
 */
static int assign_commands(parse_state_t *ps, dv_err_t *err)
{
	dv_config_t *cfg = ps->cfg;
	dv_study_t *st = &cfg->study;
	const char *cmd;
	long j;
	int rc;

	for (size_t i = 0; i < ps->n_flush; i++) {
		j = labelled_target(st, ps->flush_args[i], &cmd);
		if (j == -3)
			return oom(err);
		if (j == -2)
			return unknown_label(st, "--flush", ps->flush_args[i], err);
		if ((rc = set_path(j >= 0 ? &st->targets[j].flush_cmd : &cfg->flush_all, cmd,
		                   err)) != 0)
			return rc;
	}
	for (size_t i = 0; i < ps->n_after; i++) {
		j = labelled_target(st, ps->after_args[i], &cmd);
		if (j == -3)
			return oom(err);
		if (j == -2)
			return unknown_label(st, "--after-pass", ps->after_args[i], err);
		if ((rc = set_path(j >= 0 ? &st->targets[j].after_pass_cmd : &st->after_pass_cmd,
		                   cmd, err)) != 0)
			return rc;
	}
	for (size_t t = 0; t < st->n_targets; t++)
		if (st->targets[t].flush_cmd == NULL && cfg->flush_all != NULL &&
		    (st->targets[t].flush_cmd = strdup(cfg->flush_all)) == NULL)
			return oom(err);
	for (size_t i = 0; i < st->n_plan; i++) {
		if (st->plan[i] != DV_PASS_COLD)
			continue;
		for (size_t t = 0; t < st->n_targets; t++)
			if (st->targets[t].flush_cmd == NULL)
				return dv_err_set(
				    err, -EINVAL,
				    "--passes cold: target '%s' has no --flush command "
				    "to empty its cache",
				    st->targets[t].label);
		break;
	}
	return 0;
}

/*
 * Pass lengths (doc/methodology.md): a cold pass is one run through its list, a
 * hot pass --hot-time or --hot-runs; -l/-n belong to plain runs. The probe.
 */
static int check_study(parse_state_t *ps, dv_err_t *err)
{
	dv_study_t *st = &ps->cfg->study;
	bool hot = false, study = st->plan[0] != DV_PASS_PLAIN;
	dv_err_t perr;

	for (size_t i = 0; i < st->n_plan; i++)
		hot |= st->plan[i] == DV_PASS_HOT;
	if (study && (st->run.time_limit_ns > 0 || st->run.passes > 0))
		return dv_err_set(err, -EINVAL,
		                  "%s with --passes: a cold pass asks each name of its list once "
		                  "(one run through the list); set a hot pass's length with "
		                  "--hot-time S or --hot-runs N",
		                  st->run.time_limit_ns > 0 ? "-l" : "-n");
	if ((st->hot_time_ns > 0 || st->hot_runs > 0) && !hot)
		return dv_err_set(err, -EINVAL,
		                  "--%s: the plan has no hot pass (--passes cold,hot)",
		                  st->hot_time_ns > 0 ? "hot-time" : "hot-runs");
	if (st->hot_time_ns > 0 && st->hot_runs > 0)
		return dv_err_set(err, -EINVAL, "--hot-time and --hot-runs: give one of them");
	if (ps->probe != NULL && dv_study_set_probe(st, ps->probe, st->ql.rd, &perr) != 0)
		return dv_err_set(err, -EINVAL, "--probe: %s", perr.msg);
	return 0;
}

/* No study of more passes than a results file may hold (results/results_json.h). */
static int check_plan_size(const dv_study_t *st, dv_err_t *err)
{
	uint64_t per = (uint64_t)st->n_plan * (st->repeat ? st->repeat : 1) + (st->warmup ? 1 : 0);
	uint64_t n = (uint64_t)st->n_targets * st->n_lists * per;

	if (n > DV_RESULTS_MAX_PASSES)
		return dv_err_set(err, -EINVAL,
		                  "--repeat: %llu passes planned (targets x lists x passes x "
		                  "repeats), more than the %d a results file holds",
		                  (unsigned long long)n, DV_RESULTS_MAX_PASSES);
	return 0;
}

/* Everything that needs all flags: defaults, then the cross-checks in order. */
static int finish(parse_state_t *ps, dv_err_t *err)
{
	dv_config_t *cfg = ps->cfg;
	int rc;

	if ((rc = apply_defaults(ps, err)) != 0)
		return rc;
	auto_load(ps);
	if ((rc = dv_cli_replay_finish(&cfg->study, err)) != 0 ||
	    (rc = check_load(&cfg->study.run, err)) != 0 || (rc = check_stream(ps, err)) != 0 ||
	    (rc = check_lists(&cfg->study, err)) != 0 ||
	    (rc = resolve_targets(&cfg->study, ps->port, ps->family, err)) != 0 ||
	    (rc = assign_commands(ps, err)) != 0 ||
	    (rc = dv_cli_server_finish(&ps->server, &cfg->study, labelled_target, err)) != 0 ||
	    (rc = check_study(ps, err)) != 0 || (rc = check_outputs(cfg, err)) != 0)
		return rc;
	if ((cfg->gates.max_qps_drop_pct >= 0 || cfg->gates.max_p99_rise_pct >= 0 ||
	     cfg->gates.max_cap_drop_pct >= 0 || cfg->gates.max_srv_cpu_rise_pct >= 0 ||
	     cfg->gates.max_srv_rss_rise_pct >= 0) &&
	    cfg->gates.baseline_path == NULL)
		return dv_err_set(err, -EINVAL,
		                  "--max-qps-drop, --max-p99-rise, --max-capacity-drop and "
		                  "--max-server-cpu/rss-rise need "
		                  "--baseline FILE");
	return check_plan_size(&cfg->study, err);
}

int dv_cli_parse(int argc, char **argv, dv_config_t *cfg, dv_err_t *err)
{
	parse_state_t ps = {.cfg = cfg,
	                    .port = 53,
	                    .family = AF_UNSPEC,
	                    .query_version = -1,
	                    .server.syscalls = -1};
	dv_study_t *st = &cfg->study;
	int c, idx, rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	dv_run_config_init(&st->run);
	dv_querylist_options_init(&st->ql);
	dv_replay_options_init(&st->replay);
	dv_gates_init(&cfg->gates);
	st->repeat = 1;
	st->ready_timeout_ns = 30 * DV_NS_PER_S;
	st->tool_version = strdup(PACKAGE_VERSION);
	st->argv = dv_argv_copy(argc, argv);
	st->cmdline = dv_argv_quote(argc, argv);
	if (st->tool_version == NULL || st->argv == NULL || st->cmdline == NULL)
		return oom(err);

	opterr = 0;
	optind = 1;
	while (rc == 0 && (c = getopt_long(argc, argv, short_opts, long_opts, &idx)) != -1)
		rc = parse_one(&ps, c, idx, argv, err);
	if (rc == 0 && optind < argc)
		rc = dv_err_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
	if (rc == 0)
		rc = finish(&ps, err);
	free(ps.flush_args);
	free(ps.after_args);
	free(ps.server.pid_args);
	return rc;
}
