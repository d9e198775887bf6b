/* genlist_main: the dnsvolley-genlist command: domain list in, query lists out. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlist/genlist.h"
#include "genlist/model.h"
#include "base/util.h"

#define MAX_OUTPUTS 32

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: dnsvolley-genlist [options] DOMAINS\n"
	    "Make query lists from a list of domains (one per line, '#' comments; '-' = stdin).\n"
	    "  --soa FILE            write 'DOMAIN SOA' for every domain ('-' = stdout)\n"
	    "  --www-a FILE          write 'www.DOMAIN A' for every domain\n"
	    "  --type T[:P]=FILE     write 'P.DOMAIN T' (or 'DOMAIN T' without P); repeatable\n"
	    "  --dedupe              drop repeated domains (case-insensitive), keep the first\n"
	    "  --shuffle             shuffle the domains (the same order for every output)\n"
	    "  --seed N              seed of the shuffle and of --traffic (default 1);\n"
	    "                        implies --shuffle unless --traffic is given\n"
	    "Realistic traffic (domains in popularity order, the first most asked):\n"
	    "  --traffic FILE        write a list drawn by Zipf popularity ('-' = stdout)\n"
	    "  --zipf S              Zipf exponent s >= 0 (default 1; 0 = uniform)\n"
	    "  --queries L           list length (default: the number of domains)\n"
	    "  --mix T:W,...         type mix, e.g. A:60,AAAA:25,HTTPS:10,MX:5 (default A)\n"
	    "  --nxdomain PCT        share of names that do not exist (RANDOM.DOMAIN), 0-100\n"
	    "  --nx-zone ZONE        put those names under ZONE instead (RANDOM.ZONE)\n"
	    "  -h, --help            this help\n"
	    "  -V, --version         print the version\n"
	    "Exit status: 0 done, 1 an output could not be written, 2 bad usage or input.\n");
}

static int write_one(const dv_domains_t *d, const dv_genlist_spec_t *spec)
{
	FILE *out = strcmp(spec->path, "-") == 0 ? stdout : fopen(spec->path, "w");
	int rc;

	if (out == NULL) {
		fprintf(stderr, "dnsvolley-genlist: %s: %s\n", spec->path, strerror(errno));
		return -1;
	}
	rc = dv_genlist_write(out, d, spec);
	if (out != stdout && fclose(out) != 0 && rc == 0)
		rc = errno != 0 ? -errno : -EIO;
	if (rc != 0) {
		fprintf(stderr, "dnsvolley-genlist: %s: %s\n", spec->path, strerror(-rc));
		return -1;
	}
	return 0;
}

static int write_model(const dv_domains_t *d, const dv_model_t *m, const char *path)
{
	FILE *out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	int rc;

	if (out == NULL) {
		fprintf(stderr, "dnsvolley-genlist: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = dv_model_write(out, d, m);
	if (out != stdout && fclose(out) != 0 && rc == 0)
		rc = errno != 0 ? -errno : -EIO;
	if (rc != 0) {
		fprintf(stderr, "dnsvolley-genlist: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	return 0;
}

/* What the command line asks for. */
typedef struct genlist_args {
	dv_genlist_spec_t *specs; /* MAX_OUTPUTS of them, nspecs set */
	size_t nspecs, nstdout;   /* nstdout: outputs that are '-' */
	bool dedupe, shuffle, seeded, model_opt;
	uint64_t seed;
	const char *traffic; /* --traffic FILE, or NULL */
	dv_model_t model;
	const char *input; /* the DOMAINS file ('-' = stdin) */
} genlist_args_t;

/* parse_*() return GO_ON to go on, or the exit status to stop with. */
#define GO_ON (-1)

/* --soa, --www-a, --type: one more output list. */
static int parse_output(genlist_args_t *a, int c, const char *arg)
{
	dv_genlist_spec_t *spec;
	dv_err_t err;
	int rc;

	if (a->nspecs == MAX_OUTPUTS) {
		fprintf(stderr, "dnsvolley-genlist: at most %d outputs\n", MAX_OUTPUTS);
		return 2;
	}
	spec = &a->specs[a->nspecs];
	if (c == 's')
		rc = dv_genlist_spec_set(spec, "SOA", "", arg, &err);
	else if (c == 'w')
		rc = dv_genlist_spec_set(spec, "A", "www.", arg, &err);
	else
		rc = dv_genlist_spec_parse(spec, arg, &err);
	if (rc != 0) {
		fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
		return 2;
	}
	if (strcmp(spec->path, "-") == 0)
		a->nstdout++;
	a->nspecs++;
	return GO_ON;
}

/* --zipf, --queries, --mix, --nxdomain, --nx-zone: the shape of --traffic. */
static int parse_model(genlist_args_t *a, int c, const char *arg)
{
	dv_model_t *m = &a->model;
	dv_err_t err;
	double v;
	int rc = 0;

	a->model_opt = true;
	switch (c) {
	case 'z':
		if (dv_parse_double(arg, 0, 10, &m->s) != 0) {
			fprintf(stderr, "dnsvolley-genlist: --zipf wants 0-10, got '%s'\n", arg);
			return 2;
		}
		break;
	case 'L':
		if (dv_parse_u64(arg, 1, UINT64_MAX, &m->length) != 0) {
			fprintf(stderr,
			        "dnsvolley-genlist: --queries wants a number >= 1, got '%s'\n",
			        arg);
			return 2;
		}
		break;
	case 'm':
		rc = dv_model_parse_mix(m, arg, &err);
		break;
	case 'x':
		if (dv_parse_double(arg, 0, 100, &v) != 0) {
			fprintf(
			    stderr,
			    "dnsvolley-genlist: --nxdomain wants a percentage 0-100, got '%s'\n",
			    arg);
			return 2;
		}
		m->nx_share = v / 100;
		break;
	default: /* 'X' */
		rc = dv_model_set_nx_zone(m, arg, &err);
		break;
	}
	if (rc != 0) {
		fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
		return 2;
	}
	return GO_ON;
}

/* One option from getopt_long(). */
static int parse_option(genlist_args_t *a, int c, const char *arg)
{
	switch (c) {
	case 's':
	case 'w':
	case 't':
		return parse_output(a, c, arg);
	case 'z':
	case 'L':
	case 'm':
	case 'x':
	case 'X':
		return parse_model(a, c, arg);
	case 'd':
		a->dedupe = true;
		return GO_ON;
	case 'S':
		a->shuffle = true;
		return GO_ON;
	case 'r':
		if (dv_parse_u64(arg, 0, UINT64_MAX, &a->seed) != 0) {
			fprintf(stderr, "dnsvolley-genlist: --seed wants a number, got '%s'\n",
			        arg);
			return 2;
		}
		a->seeded = true;
		return GO_ON;
	case 'T':
		a->traffic = arg;
		return GO_ON;
	case 'h':
		usage(stdout);
		return 0;
	case 'V':
		printf("dnsvolley-genlist %s\n", PACKAGE_VERSION);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
}

/* Checks that need the whole command line. */
static int check_args(genlist_args_t *a, int argc, char **argv)
{
	if (optind != argc - 1) {
		fprintf(stderr, "dnsvolley-genlist: expected one DOMAINS file (or '-')\n");
		usage(stderr);
		return 2;
	}
	a->input = argv[optind];
	if (a->nspecs == 0 && a->traffic == NULL) {
		fprintf(stderr,
		        "dnsvolley-genlist: no output: give --soa, --www-a, --type or --traffic\n");
		return 2;
	}
	if (a->model_opt && a->traffic == NULL) {
		fprintf(stderr, "dnsvolley-genlist: --zipf, --queries, --mix, --nxdomain and "
		                "--nx-zone shape --traffic: give --traffic FILE\n");
		return 2;
	}
	if (a->traffic != NULL && strcmp(a->traffic, "-") == 0)
		a->nstdout++;
	if (a->seeded && a->traffic == NULL)
		a->shuffle = true;
	a->model.seed = a->seed;
	if (a->nstdout > 1) {
		fprintf(stderr, "dnsvolley-genlist: only one output can be '-' (stdout)\n");
		return 2;
	}
	return GO_ON;
}

static int parse_args(genlist_args_t *a, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"soa", required_argument, NULL, 's'},
	    {"www-a", required_argument, NULL, 'w'},
	    {"type", required_argument, NULL, 't'},
	    {"dedupe", no_argument, NULL, 'd'},
	    {"shuffle", no_argument, NULL, 'S'},
	    {"seed", required_argument, NULL, 'r'},
	    {"traffic", required_argument, NULL, 'T'},
	    {"zipf", required_argument, NULL, 'z'},
	    {"queries", required_argument, NULL, 'L'},
	    {"mix", required_argument, NULL, 'm'},
	    {"nxdomain", required_argument, NULL, 'x'},
	    {"nx-zone", required_argument, NULL, 'X'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int c, status;

	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		status = parse_option(a, c, optarg);
		if (status != GO_ON)
			return status;
	}
	return check_args(a, argc, argv);
}

/* The domains of a->input, deduplicated and shuffled as asked. Returns GO_ON or the exit status. */
static int load_domains(const genlist_args_t *a, dv_domains_t *doms)
{
	dv_err_t err;
	FILE *in;
	int rc;

	in = strcmp(a->input, "-") == 0 ? stdin : fopen(a->input, "r");
	if (in == NULL) {
		fprintf(stderr, "dnsvolley-genlist: %s: %s\n", a->input, strerror(errno));
		return 2;
	}
	rc = dv_domains_load_stream(doms, in, a->input, &err);
	if (in != stdin)
		fclose(in);
	if (rc != 0) {
		fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
		return 2;
	}
	if (a->dedupe && dv_domains_dedupe(doms) < 0) {
		fprintf(stderr, "dnsvolley-genlist: out of memory\n");
		dv_domains_free(doms);
		return 1;
	}
	if (a->shuffle)
		dv_domains_shuffle(doms, a->seed);
	return GO_ON;
}

/* Check every output before writing any, so a bad name leaves no half-made files. */
static int check_outputs(const genlist_args_t *a, const dv_domains_t *doms)
{
	dv_err_t err;

	for (size_t i = 0; i < a->nspecs; i++) {
		if (dv_genlist_check(doms, &a->specs[i], &err) != 0) {
			fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
			return -1;
		}
	}
	if (a->traffic != NULL && dv_model_check(doms, &a->model, &err) != 0) {
		fprintf(stderr, "dnsvolley-genlist: --nxdomain: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Load the domains and write every output. Returns the exit status. */
static int generate(const genlist_args_t *a)
{
	dv_domains_t doms;
	int status;

	status = load_domains(a, &doms);
	if (status != GO_ON)
		return status;
	status = 2;
	if (check_outputs(a, &doms) != 0)
		goto out;
	status = 0;
	for (size_t i = 0; i < a->nspecs; i++)
		if (write_one(&doms, &a->specs[i]) != 0)
			status = 1;
	if (a->traffic != NULL && write_model(&doms, &a->model, a->traffic) != 0)
		status = 1;
out:
	dv_domains_free(&doms);
	return status;
}

int main(int argc, char **argv)
{
	genlist_args_t a;
	int status;

	memset(&a, 0, sizeof(a));
	a.seed = 1;
	a.specs = calloc(MAX_OUTPUTS, sizeof(*a.specs));
	if (a.specs == NULL) {
		fprintf(stderr, "dnsvolley-genlist: out of memory\n");
		return 1;
	}
	dv_model_init(&a.model);
	status = parse_args(&a, argc, argv);
	if (status == GO_ON)
		status = generate(&a);
	free(a.specs);
	return status;
}
