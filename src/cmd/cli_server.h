/* cli_server: the server-cost option group of the command line (--server-pid,
 * --server-syscalls, --server-stats, --server-cost). */
#ifndef DV_CLI_SERVER_H
#define DV_CLI_SERVER_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "study/study.h"
#include "base/util.h"

enum {
	DV_OPT_SERVER_PID = 640, /* above cli.c's and cli_replay's option codes */
	DV_OPT_SERVER_SYSCALLS,
	DV_OPT_SERVER_STATS,
	DV_OPT_SERVER_COST,
	DV_OPT_SERVER_TABLE,
};

#define DV_CLI_SERVER_LONG_OPTS                                                                    \
	{"server-pid", required_argument, NULL, DV_OPT_SERVER_PID},                                \
	    {"server-syscalls", required_argument, NULL, DV_OPT_SERVER_SYSCALLS},                  \
	    {"server-stats", required_argument, NULL, DV_OPT_SERVER_STATS},                        \
	    {"server-table", no_argument, NULL, DV_OPT_SERVER_TABLE},                              \
	{                                                                                          \
		"server-cost", required_argument, NULL, DV_OPT_SERVER_COST                         \
	}

#define DV_CLI_SERVER_NOT_MINE 2

/* What the group's flags leave until the targets are known. */
typedef struct dv_cli_server {
	const char **pid_args; /* --server-pid values in order (borrowed from argv) */
	size_t n_pid;
	const char **stats_args; /* --server-stats values in order (borrowed) */
	size_t n_stats;
	const char **cost_args; /* --server-cost values in order (borrowed) */
	size_t n_cost;
	int syscalls; /* --server-syscalls: -1 unset (yes), 0 no, 1 yes */
	bool table;   /* --server-table: the study table shows the server's us per answer */
} dv_cli_server_t;

/* One option of the group: 0, a negative code with err, or DV_CLI_SERVER_NOT_MINE. */
int dv_cli_server_opt(dv_cli_server_t *cs, int c, const char *val, dv_err_t *err);
/*
 * After the targets are resolved: each target's server-cost state (st->targets[i].cost),
 * automatic unless --server-pid named a PID or "none" for it, with its --server-stats and
 * --server-cost. label_of(arg) gives the target index of a LABEL= prefix (-1: none, -2:
 * unknown, -3: out of memory). Frees cs's lists.
 */
int dv_cli_server_finish(dv_cli_server_t *cs, dv_study_t *st,
                         long (*label_of)(const dv_study_t *st, const char *arg, const char **rest),
                         dv_err_t *err);
void dv_cli_server_usage(FILE *out);

#endif
