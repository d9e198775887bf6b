/* fuzz_compare: libFuzzer target for `compare` with every gate on two results files. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/compare.h"
#include "results/gates.h"
#include "results/results_json.h"
#include "study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: BASE.json "DVFZ" NEW.json (without the separator, the same bytes are both files).
 * Both are read as compare reads them (escaped for the terminal); when both load, the
 * comparison table is printed (to a sink) and all five gates are collected, printed and
 * written as JUnit to memory. Checked: a read error has a message; every gate check either
 * failed, was skipped, or holds with a finite value within its limit (a NaN or inf must
 * never pass: issue 16); failed counts add up.
 */
static FILE *sink(void)
{
	static FILE *f;

	if (f == NULL)
		f = fopen("/dev/null", "w");
	if (f == NULL)
		abort();
	return f;
}

static void check_report(const dv_gate_report_t *rep)
{
	size_t failed = 0, skipped = 0;

	for (size_t i = 0; i < rep->n; i++) {
		const dv_gate_check_t *c = &rep->c[i];
		failed += c->failed;
		skipped += c->skipped;
		if (c->msg[0] == '\0')
			abort();
		if (c->failed || c->skipped)
			continue;
		if (!isfinite(c->value))
			abort(); /* a non-finite figure passed a gate */
		if (strcmp(c->gate, "min-qps") == 0 ? !(c->value >= c->limit)
		                                    : !(c->value <= c->limit))
			abort(); /* a gate held beyond its limit */
	}
	if (failed != rep->failed || skipped != rep->skipped)
		abort();
}

static void compare_two(const dv_study_t *base, const dv_study_t *cur)
{
	dv_gates_t g;
	dv_gate_report_t rep = {0};
	dv_err_t err = {{0}};

	dv_compare_print(base, "base.json", cur, "new.json", sink());
	dv_gates_init(&g);
	g.max_loss_pct = 0.1;
	g.max_p99_ns = 5e6;
	g.min_qps = 1000;
	g.max_qps_drop_pct = 5;
	g.max_p99_rise_pct = 10;
	if (dv_gates_collect(&g, cur, base, "new.json: ", &rep, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
	} else {
		check_report(&rep);
		if (dv_gates_print(&rep, sink()) != (rep.failed > 0 ? 1 : 0))
			abort();
	}
	dv_gate_report_free(&rep);
	dv_gates_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const char *sep = memmem(buf, size, "DVFZ", 4);
	size_t blen = sep ? (size_t)(sep - buf) : size;
	const char *nbuf = sep ? sep + 4 : buf;
	size_t nlen = sep ? size - blen - 4 : size;
	dv_study_t base, cur;
	dv_err_t err;

	memset(&err, 0, sizeof(err));
	if (dv_results_read_buffer(buf, blen, "base.json", &base, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return 0;
	}
	if (dv_results_escape_terminal(&base) != 0)
		abort();
	if (dv_results_read_buffer(nbuf, nlen, "new.json", &cur, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
	} else {
		if (dv_results_escape_terminal(&cur) != 0)
			abort();
		compare_two(&base, &cur);
		dv_study_free(&cur);
	}
	dv_study_free(&base);
	return 0;
}
