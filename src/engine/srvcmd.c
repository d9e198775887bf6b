/* srvcmd: parses the "KEY VALUE" lines a --server-cost command prints; runs the command. */
#include "config.h"

#include "engine/srvcmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/capture.h"
#include "base/util.h"

enum {
	K_USER,
	K_SYS,
	K_PID,
	K_COMM,
	K_START,
	K_VCSW,
	K_IVCSW,
	K_RSS,
	K_PEAK,
	K_THREADS,
	K_CPUS,
	K_ALLOWED,
	K_N
};

static const char *const keys[K_N] = {"cpu_user_s",
                                      "cpu_sys_s",
                                      "pid",
                                      "comm",
                                      "start_time",
                                      "voluntary_ctxt_switches",
                                      "involuntary_ctxt_switches",
                                      "rss_kb",
                                      "rss_peak_kb",
                                      "threads",
                                      "cpus",
                                      "cpus_allowed"};

/* One value into its field; 0, or -EINVAL when it is not what the key takes. */
static int set_value(int k, const char *v, dv_procstat_t *ps, int32_t *pid)
{
	uint64_t u = 0;
	double d;
	uint64_t *const u64[K_N] = {[K_START] = &ps->start_ticks,
	                            [K_VCSW] = &ps->vcsw,
	                            [K_IVCSW] = &ps->ivcsw,
	                            [K_RSS] = &ps->rss_kb,
	                            [K_PEAK] = &ps->hwm_kb};

	switch (k) {
	case K_USER:
	case K_SYS:
		if (dv_parse_double(v, 0, 1e12, &d) != 0)
			return -EINVAL;
		*(k == K_USER ? &ps->utime_ticks : &ps->stime_ticks) =
		    (uint64_t)llround(d * DV_SRVCMD_TICKS_PER_S);
		return 0;
	case K_COMM:
		snprintf(ps->comm, sizeof(ps->comm), "%s", v);
		return 0;
	case K_CPUS:
		return dv_cpumask_parse(v, &ps->ran) != 0 ? -EINVAL : 0;
	case K_ALLOWED:
		return dv_cpumask_parse(v, &ps->allowed) != 0 ? -EINVAL : 0;
	default:
		break;
	}
	if (dv_parse_u64(v, 0, UINT64_MAX, &u) != 0)
		return -EINVAL;
	if (k == K_PID || k == K_THREADS) {
		if (u > INT32_MAX)
			return -EINVAL;
		if (k == K_PID)
			*pid = (int32_t)u;
		else
			ps->threads = (uint32_t)u;
		return 0;
	}
	*u64[k] = u;
	return 0;
}

int dv_srvcmd_parse(const char *text, dv_procstat_t *ps, int32_t *pid, char *why, size_t why_len)
{
	bool seen[K_N] = {false};
	unsigned line = 0;

	memset(ps, 0, sizeof(*ps));
	*pid = 0;
	for (const char *p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n"), klen;
		char val[256];
		const char *v;
		int k;

		line++;
		while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		klen = strcspn(p, " \t\n");
		if (klen > len)
			klen = len;
		for (k = 0; len > 0 && p[0] != '#' && k < K_N; k++)
			if (strlen(keys[k]) == klen && strncmp(p, keys[k], klen) == 0)
				break;
		if (len > 0 && p[0] != '#' && k < K_N) {
			for (v = p + klen; v < p + len && (*v == ' ' || *v == '\t'); v++)
				;
			if ((size_t)(p + len - v) >= sizeof(val) ||
			    (snprintf(val, sizeof(val), "%.*s", (int)(p + len - v), v),
			     set_value(k, val, ps, pid) != 0)) {
				snprintf(why, why_len, "line %u: '%s' is not a value for %s", line,
				         val, keys[k]);
				return -EINVAL;
			}
			seen[k] = true;
		}
		p += strcspn(p, "\n");
		if (*p == '\n')
			p++;
	}
	if (!seen[K_USER] || !seen[K_SYS]) {
		snprintf(why, why_len, "it printed no %s line (see doc/numbers.md, --server-cost)",
		         seen[K_USER] ? "cpu_sys_s" : "cpu_user_s");
		return -EINVAL;
	}
	return 0;
}

int dv_srvcmd_read(const char *cmd, dv_procstat_t *ps, int32_t *pid, char *why, size_t why_len)
{
	const char *const argv[] = {"/bin/sh", "-c", cmd, NULL};
	char pwhy[160];
	dv_capture_t c;
	int rc;

	rc = dv_capture_run(argv, DV_SRVCMD_MAX_OUT, DV_SRVCMD_TIMEOUT_MS, &c);
	if (rc != 0) {
		snprintf(why, why_len, "--server-cost: /bin/sh: %s", strerror(-rc));
		return rc;
	}
	if (c.res.end == DV_PROC_TIMED_OUT)
		snprintf(why, why_len, "--server-cost command did not end in %d s (killed)",
		         DV_SRVCMD_TIMEOUT_MS / 1000);
	else if (c.res.end != DV_PROC_EXITED)
		snprintf(why, why_len, "--server-cost command was killed by signal %d", c.res.code);
	else if (c.res.code != 0)
		snprintf(why, why_len, "--server-cost command exited %d", c.res.code);
	else if (c.truncated)
		snprintf(why, why_len, "--server-cost command printed more than %d bytes",
		         DV_SRVCMD_MAX_OUT);
	else if (dv_srvcmd_parse(c.out, ps, pid, pwhy, sizeof(pwhy)) == 0) {
		free(c.out);
		return 0;
	} else
		snprintf(why, why_len, "--server-cost output: %s", pwhy);
	free(c.out);
	return -EPROTO;
}
