/* cli_server: --server-pid and --server-syscalls, turned into each target's server-cost state. */
#include "config.h"

#include "cmd/cli_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/servercost.h"

int dv_cli_server_opt(dv_cli_server_t *cs, int c, const char *val, dv_err_t *err)
{
	const char **grown;

	switch (c) {
	case DV_OPT_SERVER_PID:
		grown = realloc(cs->pid_args, (cs->n_pid + 1) * sizeof(*grown));
		if (grown == NULL)
			return dv_err_set(err, -ENOMEM, "out of memory");
		cs->pid_args = grown;
		cs->pid_args[cs->n_pid++] = val;
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

int dv_cli_server_finish(dv_cli_server_t *cs, dv_study_t *st,
                         long (*label_of)(const dv_study_t *st, const char *arg, const char **rest),
                         dv_err_t *err)
{
	long *pids = calloc(st->n_targets ? st->n_targets : 1, sizeof(*pids));
	int rc = 0;

	if (pids == NULL)
		rc = dv_err_set(err, -ENOMEM, "out of memory");
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
		if (pids[t] < 0)
			continue; /* none: not looked at */
		st->targets[t].cost = calloc(1, sizeof(dv_srvcost_t));
		if (st->targets[t].cost == NULL) {
			rc = dv_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		dv_srvcost_init(st->targets[t].cost, (pid_t)pids[t]);
		st->targets[t].cost->syscalls = cs->syscalls != 0;
	}
	free(pids);
	free(cs->pid_args);
	cs->pid_args = NULL;
	cs->n_pid = 0;
	return rc;
}

void dv_cli_server_usage(FILE *out)
{
	fputs("Server cost (doc/numbers.md \"Server\"):\n"
	      "  --server-pid [LABEL=]PID|none  the server's process (default: the owner of the\n"
	      "                         target's socket when it is on this host)\n"
	      "  --server-syscalls yes|no  count its system calls (yes, when permitted)\n",
	      out);
}
