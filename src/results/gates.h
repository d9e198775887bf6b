/* gates: pass/fail thresholds for scripted runs and compare (exit status 1 when one fails). */
#ifndef DV_GATES_H
#define DV_GATES_H

#include <stdbool.h>
#include <stdio.h>

/* Unset thresholds are negative. Units: percent, nanoseconds, queries per second. */
typedef struct dv_gates {
	double max_loss_pct;     /* --max-loss 0.1% */
	double max_p99_ns;       /* --max-p99 5ms */
	double min_qps;          /* --min-qps N */
	double max_qps_drop_pct; /* --max-qps-drop 5%   (needs a baseline) */
	double max_p99_rise_pct; /* --max-p99-rise 10%  (needs a baseline) */
	char *baseline_path;     /* --baseline FILE */
	char *junit_path;        /* --junit FILE */
} dv_gates_t;

void dv_gates_init(dv_gates_t *g);
bool dv_gates_any(const dv_gates_t *g);
void dv_gates_free(dv_gates_t *g);

#endif
