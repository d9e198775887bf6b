/* cli_replay: the replay option group of the command line (--input, -B, --timing, clients,
 * rewrites). */
#ifndef DV_CLI_REPLAY_H
#define DV_CLI_REPLAY_H

#include <getopt.h>

#include "study/study.h"
#include "base/util.h"

enum {
	DV_OPT_INPUT = 512, /* above cli.c's own option codes */
	DV_OPT_TIMING,
	DV_OPT_SPEED,
	DV_OPT_CLIENT_RANGE,
	DV_OPT_MAX_CLIENTS,
	DV_OPT_MULTIPLY,
	DV_OPT_STRIP_EDNS_OPTIONS,
	DV_OPT_STRIP_ECS,
	DV_OPT_FORCE_RD,
	DV_OPT_CAPTURE_SERVER,
};

/* The long options of the group, for cli.c's table (short: -B). */
#define DV_CLI_REPLAY_LONG_OPTS                                                                    \
	{"input", required_argument, NULL, DV_OPT_INPUT},                                          \
	    {"timing", required_argument, NULL, DV_OPT_TIMING},                                    \
	    {"speed", required_argument, NULL, DV_OPT_SPEED},                                      \
	    {"client-range", required_argument, NULL, DV_OPT_CLIENT_RANGE},                        \
	    {"max-clients", required_argument, NULL, DV_OPT_MAX_CLIENTS},                          \
	    {"multiply", required_argument, NULL, DV_OPT_MULTIPLY},                                \
	    {"strip-edns-options", no_argument, NULL, DV_OPT_STRIP_EDNS_OPTIONS},                  \
	    {"strip-ecs", no_argument, NULL, DV_OPT_STRIP_ECS},                                    \
	    {"capture-server", required_argument, NULL, DV_OPT_CAPTURE_SERVER},                    \
	{                                                                                          \
		"force-rd", no_argument, NULL, DV_OPT_FORCE_RD                                     \
	}

#define DV_CLI_REPLAY_NOT_MINE 2

/* One option of the group: 0, a negative code with err ("--speed: ..."), or NOT_MINE. */
int dv_cli_replay_opt(dv_study_t *st, int c, const char *val, dv_err_t *err);
/* After all flags: the run settings the replay options imply, and the --client-range cap. */
int dv_cli_replay_finish(dv_study_t *st, dv_err_t *err);
/* The usage lines of the group. */
void dv_cli_replay_usage(FILE *out);

#endif
