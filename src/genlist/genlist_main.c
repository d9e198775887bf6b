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

int main(int argc, char **argv)
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
	dv_genlist_spec_t *specs;
	size_t nspecs = 0, nstdout = 0;
	bool dedupe = false, shuffle = false, seeded = false, model_opt = false;
	uint64_t seed = 1;
	const char *traffic = NULL;
	dv_model_t model;
	double v;
	dv_domains_t doms;
	dv_err_t err;
	const char *input;
	FILE *in;
	int c, rc, status = 2;

	specs = calloc(MAX_OUTPUTS, sizeof(*specs));
	if (specs == NULL) {
		fprintf(stderr, "dnsvolley-genlist: out of memory\n");
		return 1;
	}
	dv_model_init(&model);
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		if (strchr("zLmxX", c) != NULL)
			model_opt = true;
		if ((c == 's' || c == 'w' || c == 't') && nspecs == MAX_OUTPUTS) {
			fprintf(stderr, "dnsvolley-genlist: at most %d outputs\n", MAX_OUTPUTS);
			goto out;
		}
		switch (c) {
		case 's':
			rc = dv_genlist_spec_set(&specs[nspecs], "SOA", "", optarg, &err);
			break;
		case 'w':
			rc = dv_genlist_spec_set(&specs[nspecs], "A", "www.", optarg, &err);
			break;
		case 't':
			rc = dv_genlist_spec_parse(&specs[nspecs], optarg, &err);
			break;
		case 'd':
			dedupe = true;
			continue;
		case 'S':
			shuffle = true;
			continue;
		case 'r':
			if (dv_parse_u64(optarg, 0, UINT64_MAX, &seed) != 0) {
				fprintf(stderr,
				        "dnsvolley-genlist: --seed wants a number, got '%s'\n",
				        optarg);
				goto out;
			}
			seeded = true;
			continue;
		case 'T':
			traffic = optarg;
			continue;
		case 'z':
			if (dv_parse_double(optarg, 0, 10, &model.s) != 0) {
				fprintf(stderr, "dnsvolley-genlist: --zipf wants 0-10, got '%s'\n",
				        optarg);
				goto out;
			}
			continue;
		case 'L':
			if (dv_parse_u64(optarg, 1, UINT64_MAX, &model.length) != 0) {
				fprintf(
				    stderr,
				    "dnsvolley-genlist: --queries wants a number >= 1, got '%s'\n",
				    optarg);
				goto out;
			}
			continue;
		case 'm':
			rc = dv_model_parse_mix(&model, optarg, &err);
			if (rc != 0)
				break;
			continue;
		case 'x':
			if (dv_parse_double(optarg, 0, 100, &v) != 0) {
				fprintf(
				    stderr,
				    "dnsvolley-genlist: --nxdomain wants a percentage 0-100, got "
				    "'%s'\n",
				    optarg);
				goto out;
			}
			model.nx_share = v / 100;
			continue;
		case 'X':
			rc = dv_model_set_nx_zone(&model, optarg, &err);
			if (rc != 0)
				break;
			continue;
		case 'h':
			usage(stdout);
			status = 0;
			goto out;
		case 'V':
			printf("dnsvolley-genlist %s\n", PACKAGE_VERSION);
			status = 0;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
		if (rc != 0) {
			fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
			goto out;
		}
		if (strcmp(specs[nspecs].path, "-") == 0)
			nstdout++;
		nspecs++;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dnsvolley-genlist: expected one DOMAINS file (or '-')\n");
		usage(stderr);
		goto out;
	}
	if (nspecs == 0 && traffic == NULL) {
		fprintf(stderr,
		        "dnsvolley-genlist: no output: give --soa, --www-a, --type or --traffic\n");
		goto out;
	}
	if (model_opt && traffic == NULL) {
		fprintf(stderr, "dnsvolley-genlist: --zipf, --queries, --mix, --nxdomain and "
		                "--nx-zone shape --traffic: give --traffic FILE\n");
		goto out;
	}
	if (traffic != NULL && strcmp(traffic, "-") == 0)
		nstdout++;
	if (seeded && traffic == NULL)
		shuffle = true;
	model.seed = seed;
	if (nstdout > 1) {
		fprintf(stderr, "dnsvolley-genlist: only one output can be '-' (stdout)\n");
		goto out;
	}

	input = argv[optind];
	in = strcmp(input, "-") == 0 ? stdin : fopen(input, "r");
	if (in == NULL) {
		fprintf(stderr, "dnsvolley-genlist: %s: %s\n", input, strerror(errno));
		goto out;
	}
	rc = dv_domains_load_stream(&doms, in, input, &err);
	if (in != stdin)
		fclose(in);
	if (rc != 0) {
		fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
		goto out;
	}
	if (dedupe && dv_domains_dedupe(&doms) < 0) {
		fprintf(stderr, "dnsvolley-genlist: out of memory\n");
		status = 1;
		goto out_doms;
	}
	if (shuffle)
		dv_domains_shuffle(&doms, seed);
	/* Check every output before writing any, so a bad name leaves no half-made files. */
	for (size_t i = 0; i < nspecs; i++) {
		if (dv_genlist_check(&doms, &specs[i], &err) != 0) {
			fprintf(stderr, "dnsvolley-genlist: %s\n", err.msg);
			goto out_doms;
		}
	}
	if (traffic != NULL && dv_model_check(&doms, &model, &err) != 0) {
		fprintf(stderr, "dnsvolley-genlist: --nxdomain: %s\n", err.msg);
		goto out_doms;
	}
	status = 0;
	for (size_t i = 0; i < nspecs; i++)
		if (write_one(&doms, &specs[i]) != 0)
			status = 1;
	if (traffic != NULL && write_model(&doms, &model, traffic) != 0)
		status = 1;
out_doms:
	dv_domains_free(&doms);
out:
	free(specs);
	return status;
}
