/* exit_status: the dnsvolley program's exit statuses, one list for main and every subcommand. */
#ifndef DV_EXIT_STATUS_H
#define DV_EXIT_STATUS_H

/*
 * doc/dnsvolley.1 (EXIT STATUS), doc/nightly.md and doc/robustness.md describe these;
 * keep them true together. When several apply, the first found wins, except that an
 * unwritable standard output (2) never hides a gate (1) or a failed run (3).
 */
typedef enum dv_exit_status {
	/* Success; every gate holds. */
	DV_EXIT_OK = 0,
	/* A gate failed (the report says which, with figures). */
	DV_EXIT_GATE_FAILED = 1,
	/* Usage or input error: a bad flag or value, a malformed list, an unreadable or
	 * unwritable file, a bad results file, a standard output that cannot be written;
	 * for plot also gnuplot missing or failing. */
	DV_EXIT_USAGE = 2,
	/* The run itself failed or was interrupted: sockets, a flush command, a target
	 * that never became ready, SIGINT/SIGTERM. */
	DV_EXIT_RUN_FAILED = 3,
	/* Queries were sent and not one was answered (the NO ANSWERS line says why). */
	DV_EXIT_NO_ANSWERS = 4,
	/* A pass could send nothing (no connection would take a query for -t, or no query
	 * sent at all). */
	DV_EXIT_NOTHING_SENT = 5,
} dv_exit_status_t;

#endif
