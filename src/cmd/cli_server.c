/* cli_server: --server-pid, --server-syscalls and --server-stats, turned into each target's
 * server-cost state. */
#include "config.h"

#include "cmd/cli_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/servercost.h"

/* Append val to a list; 0 or -ENOMEM with err (doc/architecture.md "Errors"). */
static int push(const char ***list, size_t *n, const char *val, dv_err_t *err)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (grown == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	*list = grown;
	(*list)[(*n)++] = val;
	return 0;
}

int dv_cli_server_opt(dv_cli_server_t *cs, int c, const char *val, dv_err_t *err)
{
	switch (c) {
	case DV_OPT_SERVER_PID:
		return push(&cs->pid_args, &cs->n_pid, val, err);
	case DV_OPT_SERVER_STATS:
		return push(&cs->stats_args, &cs->n_stats, val, err);
	case DV_OPT_SERVER_COST:
		if (strspn(val, " 	") == strlen(val))
			return dv_err_set(err, -EINVAL, "--server-cost: the command is empty");
		return push(&cs->cost_args, &cs->n_cost, val, err);
	case DV_OPT_SERVER_TABLE:
		cs->table = true;
		return 0;
	case DV_OPT_SERVER_SYSCALLS:
		if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0)
			return dv_err_set(err, -EINVAL, "--server-syscalls: '%s' is not yes or no",
			                  val);
		cs->syscalls = strcmp(val, "yes") == 0;
		return 0;
	}
	return DV_CLI_SERVER_NOT_MINE;
}

/* PID or "none" (-1). */
static int parse_pid(const char *arg, const char *text, long *pid, dv_err_t *err)
{
	uint64_t v;

	if (strcmp(text, "none") == 0) {
		*pid = -1;
		return 0;
	}
	if (dv_parse_u64(text, 1, 4194304, &v) != 0)
		return dv_err_set(err, -EINVAL,
		                  "--server-pid: '%s' is not a process ID (1..4194304) or 'none'",
		                  arg);
	*pid = (long)v;
	return 0;
}

/* --server-stats [LABEL=]KIND[:ARGS]: each target's configuration into stats[] (owned). */
static int parse_stats(dv_cli_server_t *cs, dv_study_t *st,
                       long (*label_of)(const dv_study_t *st, const char *arg, const char **rest),
                       dv_srvstats_cfg_t **stats, dv_err_t *err)
{
	char why[200];

	for (size_t i = 0; i < cs->n_stats; i++) {
		const char *text;
		long j = label_of(st, cs->stats_args[i], &text);

		if (j == -3)
			return dv_err_set(err, -ENOMEM, "out of memory");
		if (j == -2)
			return dv_err_set(err, -EINVAL,
			                  "--server-stats '%s': no target has that label",
			                  cs->stats_args[i]);
		if (j < 0 && st->n_targets > 1)
			return dv_err_set(err, -EINVAL,
			                  "--server-stats '%s': with several targets say whose "
			                  "(LABEL=KIND[:ARGS])",
			                  cs->stats_args[i]);
		if (j < 0)
			j = 0;
		if (stats[j] == NULL && (stats[j] = calloc(1, sizeof(*stats[j]))) == NULL)
			return dv_err_set(err, -ENOMEM, "out of memory");
		dv_srvstats_cfg_free(stats[j]);
		int rc = dv_srvstats_cfg_parse(text, stats[j], why, sizeof(why));
		if (rc != 0)
			return dv_err_set(err, rc, "--server-stats '%s': %s", cs->stats_args[i],
			                  why);
	}
	return 0;
}

/* --server-cost [LABEL=]CMD: each target's command into cmds[] (borrowed from argv). */
static int parse_cost(dv_cli_server_t *cs, dv_study_t *st,
                      long (*label_of)(const dv_study_t *st, const char *arg, const char **rest),
                      const char **cmds, dv_err_t *err)
{
	for (size_t i = 0; i < cs->n_cost; i++) {
		const char *text;
		long j = label_of(st, cs->cost_args[i], &text);

		if (j == -3)
			return dv_err_set(err, -ENOMEM, "out of memory");
		if (j == -2)
			return dv_err_set(err, -EINVAL,
			                  "--server-cost '%s': no target has that label",
			                  cs->cost_args[i]);
		if (j < 0 && st->n_targets > 1)
			return dv_err_set(err, -EINVAL,
			                  "--server-cost '%s': with several targets say whose "
			                  "(LABEL=CMD)",
			                  cs->cost_args[i]);
		cmds[j < 0 ? 0 : j] = text;
	}
	return 0;
}

int dv_cli_server_finish(dv_cli_server_t *cs, dv_study_t *st,
                         long (*label_of)(const dv_study_t *st, const char *arg, const char **rest),
                         dv_err_t *err)
{
	size_t nt = st->n_targets ? st->n_targets : 1;
	long *pids = calloc(nt, sizeof(*pids));
	dv_srvstats_cfg_t **stats = calloc(nt, sizeof(*stats));
	const char **cmds = calloc(nt, sizeof(*cmds));
	int rc = 0;

	if (pids == NULL || stats == NULL || cmds == NULL)
		rc = dv_err_set(err, -ENOMEM, "out of memory");
	st->table_server = cs->table;
	if (rc == 0)
		rc = parse_stats(cs, st, label_of, stats, err);
	if (rc == 0)
		rc = parse_cost(cs, st, label_of, cmds, err);
	for (size_t i = 0; rc == 0 && i < cs->n_pid; i++) {
		const char *text;
		long j = label_of(st, cs->pid_args[i], &text), pid = 0;

		if (j == -3)
			rc = dv_err_set(err, -ENOMEM, "out of memory");
		else if (j == -2)
			rc = dv_err_set(err, -EINVAL, "--server-pid '%s': no target has that label",
			                cs->pid_args[i]);
		else if ((rc = parse_pid(cs->pid_args[i], text, &pid, err)) == 0 && j < 0 &&
		         st->n_targets > 1 && pid > 0)
			rc = dv_err_set(err, -EINVAL,
			                "--server-pid '%s': with several targets say whose "
			                "(LABEL=PID)",
			                cs->pid_args[i]);
		for (size_t t = 0; rc == 0 && t < st->n_targets; t++)
			if (j < 0 || (size_t)j == t)
				pids[t] = pid;
	}
	for (size_t t = 0; rc == 0 && t < st->n_targets; t++) {
		if (pids[t] < 0 && stats[t] == NULL && cmds[t] == NULL)
			continue; /* none: not looked at */
		st->targets[t].cost = calloc(1, sizeof(dv_srvcost_t));
		if (st->targets[t].cost == NULL) {
			rc = dv_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		dv_srvcost_init(st->targets[t].cost, (pid_t)pids[t]);
		st->targets[t].cost->syscalls = cs->syscalls != 0;
		st->targets[t].cost->stats = stats[t];
		stats[t] = NULL;
		if (cmds[t] != NULL && (st->targets[t].cost->cmd = strdup(cmds[t])) == NULL)
			rc = dv_err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t t = 0; stats != NULL && t < nt; t++) {
		dv_srvstats_cfg_free(stats[t]);
		free(stats[t]);
	}
	free(stats);
	free(cmds);
	free(pids);
	free(cs->pid_args);
	free(cs->stats_args);
	free(cs->cost_args);
	cs->pid_args = NULL;
	cs->stats_args = NULL;
	cs->cost_args = NULL;
	cs->n_pid = cs->n_stats = cs->n_cost = 0;
	return rc;
}

void dv_cli_server_usage(FILE *out)
{
	fputs("Server cost (doc/numbers.md \"Server\"):\n"
	      "  --server-pid [LABEL=]PID|none  the server's process (default: the owner of the\n"
	      "                         target's socket when it is on this host)\n"
	      "  --server-syscalls yes|no  count its system calls (yes, when permitted)\n"
	      "  --server-stats [LABEL=]KIND[:ARGS]  read the server's own counters before and\n"
	      "                         after each pass with its control tool; KIND: unbound,\n"
	      "                         knot, nsd, recursor, pdns, bind (ARGS: the tool's own\n"
	      "                         options, e.g. 'unbound:-c /etc/unbound/unbound.conf';\n"
	      "                         bind: the statistics channel's ADDRESS:PORT)\n"
	      "  --server-cost [LABEL=]CMD  a command (sh -c) run at each pass's start and end\n"
	      "                         that prints the server's figures as KEY VALUE lines\n"
	      "                         (a server on another host: scripts/server-cost-ssh)\n"
	      "  --server-table         the study table's cells add the server's CPU us per\n"
	      "                         answer: 'QPS (lost N), US us'\n",
	      out);
}
