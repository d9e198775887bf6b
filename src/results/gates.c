/* gates: parse thresholds, check them on a study's groups (and against a baseline), report, JUnit.
 */
#include "config.h"

#include "results/gates.h"

#include "study/groups.h"
#include "results/connfig.h"
#include "results/junit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dv_gates_init(dv_gates_t *g)
{
	memset(g, 0, sizeof(*g));
	g->max_loss_pct = -1;
	g->max_p99_ns = -1;
	g->min_qps = -1;
	g->max_qps_drop_pct = -1;
	g->max_p99_rise_pct = -1;
	g->max_cap_drop_pct = -1;
	g->max_hs_p99_ns = -1;
	g->max_conn_fail = -1;
	g->max_srv_cpu_rise_pct = -1;
	g->max_srv_rss_rise_pct = -1;
}

bool dv_gates_any(const dv_gates_t *g)
{
	return g->max_loss_pct >= 0 || g->max_p99_ns >= 0 || g->min_qps >= 0 ||
	       g->max_qps_drop_pct >= 0 || g->max_p99_rise_pct >= 0 || g->max_cap_drop_pct >= 0 ||
	       g->max_hs_p99_ns >= 0 || g->max_conn_fail >= 0 || g->max_srv_cpu_rise_pct >= 0 ||
	       g->max_srv_rss_rise_pct >= 0;
}

void dv_gates_free(dv_gates_t *g)
{
	if (g == NULL)
		return;
	free(g->baseline_path);
	free(g->junit_path);
	g->baseline_path = NULL;
	g->junit_path = NULL;
}

static bool relative_gates(const dv_gates_t *g)
{
	return g->max_qps_drop_pct >= 0 || g->max_p99_rise_pct >= 0 || g->max_cap_drop_pct >= 0 ||
	       g->max_srv_cpu_rise_pct >= 0 || g->max_srv_rss_rise_pct >= 0;
}

/* A finite, non-negative number followed by exactly the rest `suffix` (after optional blanks). */
static int parse_num_unit(const char *s, double *v, const char **unit)
{
	char *end;

	if (s == NULL || *s == '\0' || *s == ' ' || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(*v) || *v < 0)
		return -EINVAL;
	*unit = end;
	return 0;
}

int dv_parse_percent(const char *s, double *out)
{
	const char *u;
	double v;

	if (parse_num_unit(s, &v, &u) != 0)
		return -EINVAL;
	if (*u == '%')
		u++;
	if (*u != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

int dv_parse_latency_ns(const char *s, double *out_ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	const char *u;
	double v;

	if (parse_num_unit(s, &v, &u) != 0)
		return -EINVAL;
	for (size_t i = 0; i < DV_ARRAY_SIZE(units); i++)
		if (strcmp(u, units[i].unit) == 0) {
			*out_ns = v * units[i].ns;
			return 0;
		}
	return -EINVAL;
}

static int set_path(char **dst, const char *opt, const char *val, dv_err_t *err)
{
	char *p;

	if (val == NULL || *val == '\0')
		return dv_err_set(err, -EINVAL, "--%s: needs a file name", opt);
	p = strdup(val);
	if (p == NULL)
		return dv_err_set(err, -ENOMEM, "--%s: out of memory", opt);
	free(*dst);
	*dst = p;
	return 0;
}

int dv_gates_parse_opt(dv_gates_t *g, const char *opt, const char *val, dv_err_t *err)
{
	double v;

	while (*opt == '-')
		opt++;
	if (strcmp(opt, "baseline") == 0)
		return set_path(&g->baseline_path, opt, val, err);
	if (strcmp(opt, "junit") == 0)
		return set_path(&g->junit_path, opt, val, err);
	if (strcmp(opt, "max-loss") == 0 || strcmp(opt, "max-qps-drop") == 0 ||
	    strcmp(opt, "max-p99-rise") == 0 || strcmp(opt, "max-capacity-drop") == 0) {
		if (dv_parse_percent(val, &v) != 0)
			return dv_err_set(err, -EINVAL,
			                  "--%s: '%s' is not a percentage (e.g. 0.1%% or 5%%)", opt,
			                  val ? val : "");
		if (strcmp(opt, "max-loss") == 0) {
			if (v > 100)
				return dv_err_set(err, -EINVAL, "--%s: %s is above 100%%", opt,
				                  val);
			g->max_loss_pct = v;
		} else if (strcmp(opt, "max-qps-drop") == 0 ||
		           strcmp(opt, "max-capacity-drop") == 0) {
			if (v > 100)
				return dv_err_set(err, -EINVAL, "--%s: %s is above 100%%", opt,
				                  val);
			*(opt[4] == 'q' ? &g->max_qps_drop_pct : &g->max_cap_drop_pct) = v;
		} else {
			g->max_p99_rise_pct = v;
		}
		return 0;
	}
	if (strcmp(opt, "max-server-cpu-rise") == 0 || strcmp(opt, "max-server-rss-rise") == 0) {
		if (dv_parse_percent(val, &v) != 0)
			return dv_err_set(err, -EINVAL,
			                  "--%s: '%s' is not a percentage (e.g. 0.1%% or 5%%)", opt,
			                  val ? val : "");
		*(opt[11] == 'c' ? &g->max_srv_cpu_rise_pct : &g->max_srv_rss_rise_pct) = v;
		return 0;
	}
	if (strcmp(opt, "max-p99") == 0 || strcmp(opt, "max-handshake-p99") == 0) {
		if (dv_parse_latency_ns(val, &v) != 0)
			return dv_err_set(
			    err, -EINVAL,
			    "--%s: '%s' is not a latency with a unit (e.g. 5ms, 800us, "
			    "2.5s)",
			    opt, val ? val : "");
		*(opt[4] == 'p' ? &g->max_p99_ns : &g->max_hs_p99_ns) = v;
		return 0;
	}
	if (strcmp(opt, "max-conn-failures") == 0) {
		const char *u;
		if (parse_num_unit(val, &v, &u) != 0 || *u != '\0' || v != floor(v) || v > 1e15)
			return dv_err_set(
			    err, -EINVAL,
			    "--%s: '%s' is not a whole number of connections (e.g. 0)", opt,
			    val ? val : "");
		g->max_conn_fail = v;
		return 0;
	}
	if (strcmp(opt, "min-qps") == 0) {
		const char *u;
		if (parse_num_unit(val, &v, &u) != 0 || *u != '\0')
			return dv_err_set(err, -EINVAL,
			                  "--%s: '%s' is not a number of queries per second", opt,
			                  val ? val : "");
		g->min_qps = v;
		return 0;
	}
	return -ENOENT;
}

static dv_gate_check_t *add_check(dv_gate_report_t *rep, const char *gate, const char *prefix,
                                  const dv_group_t *grp)
{
	dv_gate_check_t *c = realloc(rep->c, (rep->n + 1) * sizeof(*rep->c));
	char name[320];

	if (c == NULL)
		return NULL;
	rep->c = c;
	c = &rep->c[rep->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->gate, sizeof(c->gate), "%s", gate);
	snprintf(c->group, sizeof(c->group), "%s%s", prefix ? prefix : "",
	         dv_group_name(grp, name, sizeof(name)));
	return c;
}

static void finish(dv_gate_report_t *rep, dv_gate_check_t *c)
{
	rep->failed += c->failed;
	rep->skipped += c->skipped;
}

/*
 * A figure that is not a finite number (inf from a huge mean, NaN from inf - inf) fails its
 * gate with the reason: comparisons with NaN are all false, so "value > limit" alone would
 * call it ok. Returns true (and fills the check) when it took the decision.
 */
static bool fail_non_finite(dv_gate_check_t *c, const char *what, double v, double base)
{
	if (isfinite(v) && isfinite(base))
		return false;
	c->failed = true;
	c->value = v;
	if (isfinite(base))
		snprintf(c->msg, sizeof(c->msg), "%s: %s %g: not a finite number", c->group, what,
		         v);
	else
		snprintf(c->msg, sizeof(c->msg), "%s: %s %g vs baseline %g: not a finite number",
		         c->group, what, v, base);
	return true;
}

/* Percent change from base to cur; false when base is 0 (no meaningful ratio). */
static bool pct_change(double base, double cur, double *pct)
{
	if (!(base > 0))
		return false;
	*pct = 100.0 * (cur - base) / base;
	return true;
}

/*
 * --max-capacity-drop: the group's mean capacity against the baseline's. A lower bound
 * ("at least": generator-bound) on either side is no figure to gate on: skipped, so a
 * busy generator never passes or fails a server.
 */
static int check_capacity(const dv_gates_t *g, const dv_group_t *grp, const dv_group_t *b,
                          const char *prefix, dv_gate_report_t *rep)
{
	dv_gate_check_t *c;
	bool lb_cur, lb_base = false;
	dv_series_t cur = dv_group_capacity(grp, &lb_cur), base = dv_group_capacity(b, &lb_base);
	double pct;

	if ((c = add_check(rep, "max-capacity-drop", prefix, grp)) == NULL)
		return -ENOMEM;
	c->limit = g->max_cap_drop_pct;
	if (cur.n > 0 && base.n > 0 && fail_non_finite(c, "capacity", cur.mean, base.mean)) {
		/* decided: failed */
	} else if (cur.n == 0 || base.n == 0 || lb_cur || lb_base ||
	           !pct_change(base.mean, cur.mean, &pct)) {
		c->skipped = true;
		snprintf(c->msg, sizeof(c->msg), "%s: %s", c->group,
		         cur.n == 0    ? "not a capacity search"
		         : base.n == 0 ? "no capacity search with this target/list/kind in the "
		                         "baseline"
		         : lb_cur || lb_base
		             ? "a capacity is only a lower bound (generator-bound or --to)"
		             : "baseline capacity is 0, no drop to compute");
	} else {
		c->value = -pct;
		c->failed = !isfinite(c->value) || c->value > c->limit;
		snprintf(c->msg, sizeof(c->msg),
		         "%s: capacity %.0f qps vs baseline %.0f qps: drop %.2f%% %s %.15g%%",
		         c->group, cur.mean, base.mean, c->value, c->failed ? ">" : "<=", c->limit);
	}
	finish(rep, c);
	return 0;
}

/*
 * --max-server-cpu-rise and --max-server-rss-rise: the group's mean server CPU per answer
 * (or peak RSS) against the baseline's. Skipped when either side has no measured server.
 */
static int check_server(double limit, int which, const dv_group_t *grp, const dv_group_t *b,
                        const char *prefix, dv_gate_report_t *rep)
{
	static const char *const what[2] = {"server CPU per answer (us)", "server peak RSS (kB)"};
	dv_gate_check_t *c;
	dv_series_t cur = dv_group_server(grp, which), base = dv_group_server(b, which);
	double pct;

	c = add_check(rep, which == 0 ? "max-server-cpu-rise" : "max-server-rss-rise", prefix, grp);
	if (c == NULL)
		return -ENOMEM;
	c->limit = limit;
	if (cur.n == 0 || base.n == 0 || !pct_change(base.mean, cur.mean, &pct)) {
		c->skipped = true;
		snprintf(c->msg, sizeof(c->msg), "%s: %s", c->group,
		         cur.n == 0    ? "the server was not measured"
		         : base.n == 0 ? "the baseline has no server figure for this group"
		                       : "the baseline figure is 0, no rise to compute");
	} else {
		c->value = pct;
		c->failed = !isfinite(c->value) || c->value > c->limit;
		snprintf(c->msg, sizeof(c->msg),
		         "%s: %s %.3f vs baseline %.3f: rise %.2f%% %s %.15g%%", c->group,
		         what[which], cur.mean, base.mean, c->value,
		         c->failed ? ">" : "<=", c->limit);
	}
	finish(rep, c);
	return 0;
}

static int check_relative(const dv_gates_t *g, const dv_group_t *grp, const dv_group_t *b,
                          const char *prefix, dv_gate_report_t *rep)
{
	dv_gate_check_t *c;
	double pct;

	if (g->max_qps_drop_pct >= 0) {
		c = add_check(rep, "max-qps-drop", prefix, grp);
		if (c == NULL)
			return -ENOMEM;
		c->limit = g->max_qps_drop_pct;
		if (b != NULL &&
		    fail_non_finite(c, "qps", grp->mean[DV_M_QPS], b->mean[DV_M_QPS])) {
			/* decided: failed */
		} else if (b == NULL || !pct_change(b->mean[DV_M_QPS], grp->mean[DV_M_QPS], &pct)) {
			c->skipped = true;
			snprintf(c->msg, sizeof(c->msg), "%s: %s", c->group,
			         b ? "baseline qps is 0, no drop to compute"
			           : "no pass with this target/list/kind in the baseline");
		} else {
			c->value = -pct; /* the drop, positive when qps went down */
			c->failed = !isfinite(c->value) || c->value > c->limit;
			snprintf(c->msg, sizeof(c->msg),
			         "%s: qps %.1f vs baseline %.1f: drop %.2f%% %s %.15g%%", c->group,
			         grp->mean[DV_M_QPS], b->mean[DV_M_QPS], c->value,
			         c->failed ? ">" : "<=", c->limit);
		}
		finish(rep, c);
	}
	if (g->max_p99_rise_pct >= 0) {
		c = add_check(rep, "max-p99-rise", prefix, grp);
		if (c == NULL)
			return -ENOMEM;
		c->limit = g->max_p99_rise_pct;
		if (b != NULL &&
		    fail_non_finite(c, "p99 ms", grp->mean[DV_M_P99_MS], b->mean[DV_M_P99_MS])) {
			/* decided: failed */
		} else if (b == NULL ||
		           !pct_change(b->mean[DV_M_P99_MS], grp->mean[DV_M_P99_MS], &pct)) {
			c->skipped = true;
			snprintf(c->msg, sizeof(c->msg), "%s: %s", c->group,
			         b ? "baseline p99 is 0, no rise to compute"
			           : "no pass with this target/list/kind in the baseline");
		} else {
			c->value = pct;
			c->failed = !isfinite(c->value) || c->value > c->limit;
			snprintf(c->msg, sizeof(c->msg),
			         "%s: p99 %.4f ms vs baseline %.4f ms: rise %.2f%% %s %.15g%%",
			         c->group, grp->mean[DV_M_P99_MS], b->mean[DV_M_P99_MS], c->value,
			         c->failed ? ">" : "<=", c->limit);
		}
		finish(rep, c);
	}
	if (g->max_srv_cpu_rise_pct >= 0 &&
	    check_server(g->max_srv_cpu_rise_pct, 0, grp, b, prefix, rep) != 0)
		return -ENOMEM;
	if (g->max_srv_rss_rise_pct >= 0 &&
	    check_server(g->max_srv_rss_rise_pct, 1, grp, b, prefix, rep) != 0)
		return -ENOMEM;
	if (g->max_cap_drop_pct >= 0)
		return check_capacity(g, grp, b, prefix, rep);
	return 0;
}

/* How many of grp's samples lack figure f (no connection, no handshake). */
static size_t lacking(const dv_group_t *grp, dv_conn_fig_t f)
{
	return grp->n - dv_group_conn_series(grp, f).n;
}

/*
 * --max-handshake-p99: the group's mean TLS handshake p99. Skipped without TLS (udp, tcp);
 * over DoT or DoH a pass with no handshake done has no figure, and fails (a server that
 * never finishes a handshake must not pass).
 */
static int check_handshake(const dv_gates_t *g, const dv_study_t *s, const dv_group_t *grp,
                           const char *prefix, dv_gate_report_t *rep)
{
	dv_gate_check_t *c;
	bool tls = s->run.stream && dv_tp_desc(s->run.tp.kind)->tls;
	size_t miss = lacking(grp, DV_CF_HANDSHAKE_P99_MS);

	if ((c = add_check(rep, "max-handshake-p99", prefix, grp)) == NULL)
		return -ENOMEM;
	c->limit = g->max_hs_p99_ns / 1e6;
	c->value = dv_group_conn_series(grp, DV_CF_HANDSHAKE_P99_MS).mean;
	if (!tls && miss == grp->n) {
		c->skipped = true;
		snprintf(c->msg, sizeof(c->msg), "%s: no TLS handshakes over %s", c->group,
		         dv_study_transport(s));
	} else if (miss > 0) {
		c->failed = true;
		c->value = NAN;
		snprintf(c->msg, sizeof(c->msg),
		         "%s: handshake p99: no TLS handshake done in %zu of %zu passes: not a "
		         "finite number",
		         c->group, miss, grp->n);
	} else if (!fail_non_finite(c, "handshake p99 ms", c->value, 0)) {
		c->failed = c->value > c->limit;
		snprintf(c->msg, sizeof(c->msg), "%s: handshake p99 %.4f ms %s %.15g ms", c->group,
		         c->value, c->failed ? ">" : "<=", c->limit);
	}
	finish(rep, c);
	return 0;
}

/* --max-conn-failures: the group's mean connections failed; skipped for UDP without any. */
static int check_conn_failures(const dv_gates_t *g, const dv_study_t *s, const dv_group_t *grp,
                               const char *prefix, dv_gate_report_t *rep)
{
	dv_gate_check_t *c;
	bool any = s->run.stream;

	for (size_t i = 0; i < grp->n && !any; i++)
		any = dv_pass_has_conns(&grp->passes[i]->res);
	if ((c = add_check(rep, "max-conn-failures", prefix, grp)) == NULL)
		return -ENOMEM;
	c->limit = g->max_conn_fail;
	c->value = dv_group_conn_series(grp, DV_CF_CONN_FAILED).mean;
	if (!any) {
		c->skipped = true;
		snprintf(c->msg, sizeof(c->msg), "%s: no stream connections over udp", c->group);
	} else if (!fail_non_finite(c, "connections failed", c->value, 0)) {
		c->failed = c->value > c->limit;
		snprintf(c->msg, sizeof(c->msg), "%s: connections failed %.15g %s %.15g", c->group,
		         c->value, c->failed ? ">" : "<=", c->limit);
	}
	finish(rep, c);
	return 0;
}

static int check_absolute(const dv_gates_t *g, const dv_study_t *s, const dv_group_t *grp,
                          const char *prefix, dv_gate_report_t *rep)
{
	dv_gate_check_t *c;

	if (g->max_loss_pct >= 0) {
		if ((c = add_check(rep, "max-loss", prefix, grp)) == NULL)
			return -ENOMEM;
		size_t empty = 0;
		for (size_t i = 0; i < grp->n; i++)
			empty += grp->passes[i]->res.stats.c.sent == 0;
		c->value = grp->mean[DV_M_LOST_PCT];
		c->limit = g->max_loss_pct;
		c->failed = c->value > c->limit;
		if (empty > 0) { /* no loss over nothing sent is no measure of loss */
			c->failed = true;
			c->value = NAN;
			snprintf(c->msg, sizeof(c->msg),
			         "%s: lost %%: no query sent in %zu of %zu passes: not a measure",
			         c->group, empty, grp->n);
		} else if (!fail_non_finite(c, "lost %", c->value, 0))
			snprintf(c->msg, sizeof(c->msg), "%s: lost %.4f%% %s %.15g%%", c->group,
			         c->value, c->failed ? ">" : "<=", c->limit);
		finish(rep, c);
	}
	if (g->max_p99_ns >= 0) {
		if ((c = add_check(rep, "max-p99", prefix, grp)) == NULL)
			return -ENOMEM;
		c->value = grp->mean[DV_M_P99_MS];
		c->limit = g->max_p99_ns / 1e6;
		c->failed = c->value > c->limit;
		if (!fail_non_finite(c, "p99 ms", c->value, 0))
			snprintf(c->msg, sizeof(c->msg), "%s: p99 %.4f ms %s %.15g ms", c->group,
			         c->value, c->failed ? ">" : "<=", c->limit);
		finish(rep, c);
	}
	if (g->min_qps >= 0) {
		if ((c = add_check(rep, "min-qps", prefix, grp)) == NULL)
			return -ENOMEM;
		c->value = grp->mean[DV_M_QPS];
		c->limit = g->min_qps;
		c->failed = c->value < c->limit;
		if (!fail_non_finite(c, "qps", c->value, 0))
			snprintf(c->msg, sizeof(c->msg), "%s: qps %.1f %s %.15g", c->group,
			         c->value, c->failed ? "<" : ">=", c->limit);
		finish(rep, c);
	}
	if (g->max_hs_p99_ns >= 0 && check_handshake(g, s, grp, prefix, rep) != 0)
		return -ENOMEM;
	if (g->max_conn_fail >= 0)
		return check_conn_failures(g, s, grp, prefix, rep);
	return 0;
}

int dv_gates_collect(const dv_gates_t *g, const dv_study_t *s, const dv_study_t *baseline,
                     const char *prefix, dv_gate_report_t *rep, dv_err_t *err)
{
	dv_groups_t gs = {0}, gb = {0};
	size_t matched = 0;
	int rc;

	if (relative_gates(g) && baseline == NULL)
		return dv_err_set(err, -EINVAL, "--%s needs a baseline: --baseline FILE",
		                  g->max_qps_drop_pct >= 0   ? "max-qps-drop"
		                  : g->max_p99_rise_pct >= 0 ? "max-p99-rise"
		                                             : "max-capacity-drop");
	if ((rc = dv_groups_build(s, DV_GROUP_BY_KIND, &gs)) != 0)
		return dv_err_set(err, rc, "gates: out of memory");
	if (gs.n == 0 && dv_gates_any(g)) {
		rc = dv_err_set(err, -ENODATA, "gates: %sno reported pass to check%s",
		                prefix ? prefix : "",
		                gs.left_out > 0 ? " (interrupted passes are left out)" : "");
		goto out;
	}
	if (relative_gates(g) && (rc = dv_groups_build(baseline, DV_GROUP_BY_KIND, &gb)) != 0) {
		dv_err_set(err, rc, "gates: out of memory");
		goto out;
	}
	for (size_t i = 0; i < gs.n; i++) {
		rc = check_absolute(g, s, &gs.g[i], prefix, rep);
		if (rc == 0 && relative_gates(g)) {
			const dv_group_t *b = dv_groups_find(&gb, &gs.g[i]);
			matched += b != NULL;
			rc = check_relative(g, &gs.g[i], b, prefix, rep);
		}
		if (rc != 0) {
			dv_err_set(err, rc, "gates: out of memory");
			goto out;
		}
	}
	/* A baseline that matches nothing would let every relative gate pass unseen. */
	if (relative_gates(g) && matched == 0)
		rc = dv_err_set(err, -ENOENT,
		                "gates: %sthe baseline has no pass with the same target, list and "
		                "pass kind labels",
		                prefix ? prefix : "");
out:
	dv_groups_free(&gs);
	dv_groups_free(&gb);
	return rc;
}

int dv_gates_print(const dv_gate_report_t *rep, FILE *out)
{
	for (size_t i = 0; i < rep->n; i++) {
		const dv_gate_check_t *c = &rep->c[i];
		fprintf(out, "gate %-12s %-4s %s\n", c->gate,
		        c->failed    ? "FAIL"
		        : c->skipped ? "skip"
		                     : "ok",
		        c->msg);
	}
	fprintf(out, "gates: %zu checked, %zu failed, %zu skipped\n", rep->n, rep->failed,
	        rep->skipped);
	return rep->failed > 0 ? 1 : 0;
}

int dv_gates_write_junit(const dv_gate_report_t *rep, const char *path, dv_err_t *err)
{
	dv_junit_case_t *cases = calloc(rep->n ? rep->n : 1, sizeof(*cases));
	char(*classes)[64] = calloc(rep->n ? rep->n : 1, sizeof(*classes));
	int rc;

	if (cases == NULL || classes == NULL) {
		free(cases);
		free(classes);
		return dv_err_set(err, -ENOMEM, "%s: out of memory", path);
	}
	for (size_t i = 0; i < rep->n; i++) {
		snprintf(classes[i], sizeof(classes[i]), "dnsvolley.gates.%s", rep->c[i].gate);
		cases[i].classname = classes[i];
		cases[i].name = rep->c[i].group;
		cases[i].failed = rep->c[i].failed;
		cases[i].skipped = rep->c[i].skipped;
		cases[i].message = rep->c[i].msg;
	}
	rc = dv_junit_write(path, "dnsvolley gates", cases, rep->n, err);
	free(cases);
	free(classes);
	return rc;
}

void dv_gate_report_free(dv_gate_report_t *rep)
{
	if (rep == NULL)
		return;
	free(rep->c);
	memset(rep, 0, sizeof(*rep));
}

int dv_gates_eval(const dv_gates_t *g, const dv_study_t *s, const dv_study_t *baseline, FILE *out,
                  dv_err_t *err)
{
	dv_gate_report_t rep = {0};
	int rc = dv_gates_collect(g, s, baseline, NULL, &rep, err);

	if (rc == 0) {
		rc = dv_gates_print(&rep, out);
		if (g->junit_path != NULL) {
			int jrc = dv_gates_write_junit(&rep, g->junit_path, err);
			if (jrc < 0)
				rc = jrc;
		}
	}
	dv_gate_report_free(&rep);
	return rc;
}
