/* results_server: writes and reads the "server" object of a pass (its figures over the pass). */
#include "config.h"

#include "results/results_server.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum { F_U64, F_DBL, F_BOOL, F_STR } ftype_t;

typedef struct sfield {
	const char *key;
	ftype_t type;
	size_t off, size;
} sfield_t;

#define SF(m, key, t)                                                                              \
	{                                                                                          \
		key, t, offsetof(dv_server_cost_t, m), sizeof(((dv_server_cost_t *)0)->m)          \
	}

/* Every plain key, in file order; sys is the "syscalls" object (below). */
static const sfield_t fields[] = {
    SF(ok, "ok", F_BOOL),
    SF(source, "source", F_STR),
    SF(pid, "pid", F_U64),
    SF(comm, "comm", F_STR),
    SF(error, "error", F_STR),
    SF(answers, "answers", F_U64),
    SF(cpu_user_s, "cpu_user_s", F_DBL),
    SF(cpu_sys_s, "cpu_sys_s", F_DBL),
    SF(vcsw, "voluntary_ctxt_switches", F_U64),
    SF(ivcsw, "involuntary_ctxt_switches", F_U64),
    SF(rss_start_kb, "rss_start_kb", F_U64),
    SF(rss_end_kb, "rss_end_kb", F_U64),
    SF(rss_peak_kb, "rss_peak_kb", F_U64),
    SF(peak_in_pass, "peak_in_pass", F_BOOL),
    SF(threads, "threads", F_U64),
    SF(cpus, "cpus", F_STR),
    SF(cpus_allowed, "cpus_allowed", F_STR),
    SF(gen_cpus, "generator_cpus", F_STR),
    SF(gen_allowed, "generator_cpus_allowed", F_STR),
    SF(shares_cpu, "shares_cpu", F_BOOL),
};

static uint64_t get_uint(const void *p, size_t size)
{
	return size == 8 ? *(const uint64_t *)p : *(const uint32_t *)p;
}

static void put_uint(void *p, size_t size, uint64_t v)
{
	if (size == 8)
		*(uint64_t *)p = v;
	else
		*(uint32_t *)p = (uint32_t)v;
}

static json_t *field_json(const dv_server_cost_t *s, const sfield_t *f)
{
	const char *p = (const char *)s + f->off;

	switch (f->type) {
	case F_U64:
		return json_integer((json_int_t)get_uint(p, f->size));
	case F_DBL:
		return json_real(*(const double *)p);
	case F_BOOL:
		return json_boolean(*(const bool *)p);
	case F_STR:
		return json_string(p);
	}
	return NULL;
}

/* The "stats" object (--server-stats): its keys, in file order, after the plain ones. */
static const sfield_t stats_fields[] = {
    SF(stats_kind, "kind", F_STR),           SF(stats_ok, "ok", F_BOOL),
    SF(stats_error, "error", F_STR),         SF(stats_queries, "queries", F_U64),
    SF(stats_cache, "cache", F_BOOL),        SF(stats_hits, "cache_hits", F_U64),
    SF(stats_misses, "cache_misses", F_U64),
};

static json_t *stats_json(const dv_server_cost_t *s)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && i < sizeof(stats_fields) / sizeof(stats_fields[0]); i++)
		if (json_object_set_new(o, stats_fields[i].key, field_json(s, &stats_fields[i])) !=
		    0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

json_t *dv_results_server_to_json(const dv_server_cost_t *s)
{
	json_t *o = json_object(), *sys;
	size_t i;

	if (o == NULL)
		return NULL;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (json_object_set_new(o, fields[i].key, field_json(s, &fields[i])) != 0)
			goto fail;
	sys = json_object();
	if (sys == NULL || json_object_set_new(o, "syscalls", sys) != 0)
		goto fail;
	if (json_object_set_new(sys, "ok", json_boolean(s->sys_ok)) != 0 ||
	    json_object_set_new(sys, "why_not", json_string(s->sys_why)) != 0)
		goto fail;
	for (int f = 0; f < DV_SYS_FAMILIES; f++)
		if (json_object_set_new(sys, dv_sys_family_name((dv_sys_family_t)f),
		                        json_integer((json_int_t)s->sys[f])) != 0)
			goto fail;
	if (json_object_set_new(o, "process", json_boolean(s->proc)) != 0 ||
	    (s->stats && json_object_set_new(o, "stats", stats_json(s)) != 0))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static int read_field(const json_t *v, const sfield_t *f, dv_server_cost_t *s)
{
	char *p = (char *)s + f->off;

	switch (f->type) {
	case F_U64:
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (f->size == 4 && json_integer_value(v) > (json_int_t)UINT32_MAX))
			return -EINVAL;
		put_uint(p, f->size, (uint64_t)json_integer_value(v));
		return 0;
	case F_DBL:
		if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
		    !isfinite(json_number_value(v)))
			return -EINVAL;
		*(double *)p = json_number_value(v);
		return 0;
	case F_BOOL:
		if (!json_is_boolean(v))
			return -EINVAL;
		*(bool *)p = json_is_true(v);
		return 0;
	case F_STR:
		if (!json_is_string(v))
			return -EINVAL;
		snprintf(p, f->size, "%s", json_string_value(v));
		return 0;
	}
	return -EINVAL;
}

static int read_syscalls(const json_t *sys, dv_server_cost_t *s, char *why, size_t why_len)
{
	const json_t *v;

	if (!json_is_object(sys))
		return snprintf(why, why_len, "server.syscalls: must be an object"), -EINVAL;
	v = json_object_get(sys, "ok");
	s->sys_ok = json_is_true(v);
	v = json_object_get(sys, "why_not");
	if (json_is_string(v))
		snprintf(s->sys_why, sizeof(s->sys_why), "%s", json_string_value(v));
	for (int f = 0; f < DV_SYS_FAMILIES; f++) {
		const char *k = dv_sys_family_name((dv_sys_family_t)f);
		v = json_object_get(sys, k);
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(why, why_len, "server.syscalls.%s: must be an integer >= 0", k);
			return -EINVAL;
		}
		s->sys[f] = (uint64_t)json_integer_value(v);
	}
	return 0;
}

/* The optional "stats" object (added after the first server objects: files before lack it). */
static int read_stats(const json_t *st, dv_server_cost_t *s, char *why, size_t why_len)
{
	if (st == NULL)
		return 0;
	if (!json_is_object(st))
		return snprintf(why, why_len, "server.stats: must be an object"), -EINVAL;
	s->stats = true;
	for (size_t i = 0; i < sizeof(stats_fields) / sizeof(stats_fields[0]); i++) {
		const json_t *v = json_object_get(st, stats_fields[i].key);
		if (v == NULL || read_field(v, &stats_fields[i], s) != 0) {
			snprintf(why, why_len, "server.stats.%s: %s", stats_fields[i].key,
			         v == NULL ? "missing" : "wrong type or out of range");
			return -EINVAL;
		}
	}
	return 0;
}

int dv_results_server_from_json(const json_t *o, dv_server_cost_t *s, char *why, size_t why_len)
{
	const json_t *proc;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o)) {
		snprintf(why, why_len, "server: must be an object");
		return -EINVAL;
	}
	s->measured = true;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const json_t *v = json_object_get(o, fields[i].key);
		if (v == NULL || read_field(v, &fields[i], s) != 0) {
			snprintf(why, why_len, "server.%s: %s", fields[i].key,
			         v == NULL ? "missing" : "wrong type or out of range");
			return -EINVAL;
		}
	}
	/* "process" (optional: files before --server-stats always looked at the process) */
	proc = json_object_get(o, "process");
	if (proc != NULL && !json_is_boolean(proc))
		return snprintf(why, why_len, "server.process: must be true or false"), -EINVAL;
	s->proc = proc == NULL || json_is_true(proc);
	if (read_syscalls(json_object_get(o, "syscalls"), s, why, why_len) != 0)
		return -EINVAL;
	return read_stats(json_object_get(o, "stats"), s, why, why_len);
}
