/* results_fields: the results file's field tables (key, member, type, bounds), declared once. */
#include "config.h"

#include "results/results_fields.h"

#include <string.h>

#include "base/util.h"
#include "engine/stats.h"
#include "input/input.h"
#include "input/replay.h"

#define JF(T, m, key, type, max)                                                                   \
	{                                                                                          \
		key, type, offsetof(T, m), sizeof(((T *)0)->m), max, false                         \
	}
#define JOPT(T, m, key, type, max)                                                                 \
	{                                                                                          \
		key, type, offsetof(T, m), sizeof(((T *)0)->m), max, true                          \
	}
#define JU(T, m, key, max) JF(T, m, key, J_UINT, max)
#define JD(T, m, key)      JF(T, m, key, J_DBL, 0)
#define JB(T, m, key)      JF(T, m, key, J_BOOL, 0)
#define JS(T, m, key)      JF(T, m, key, J_STR, 0)
#define JL(T, m, key)      JF(T, m, key, J_LABEL, 0)

/* Top level, after "schema", "schema_version" and "tool". */
static const dv_jfield_t meta_fields[] = {
    JS(dv_study_t, cmdline, "command_line"),
    JF(dv_study_t, start_wall_ns, "start_time", J_TIME, 0),
    JU(dv_study_t, start_wall_ns, "start_wall_ns", INT64_MAX),
};
/* "tool", after its constant "name". */
static const dv_jfield_t tool_fields[] = {
    JS(dv_study_t, tool_version, "version"),
};
static const dv_jfield_t host_fields[] = {
    JS(dv_study_t, hostname, "name"),
    JS(dv_study_t, kernel, "kernel"),
    JU(dv_study_t, ncpu, "cpus", UINT32_MAX),
};
/* "config", after "plan"; then the "run" and "query_options" objects. */
static const dv_jfield_t config_fields[] = {
    JU(dv_study_t, repeat, "repeat", 1000000),
    JB(dv_study_t, warmup, "warmup"),
    JU(dv_study_t, ready_timeout_ns, "ready_timeout_ns", INT64_MAX),
    JOPT(dv_study_t, hot_time_ns, "hot_time_ns", J_UINT, INT64_MAX),
    JOPT(dv_study_t, hot_runs, "hot_runs", J_UINT, UINT32_MAX),
    JOPT(dv_study_t, probe_text, "probe", J_STR, 0),
};
static const dv_jfield_t run_fields[] = {
    JU(dv_run_config_t, sockets, "sockets", UINT32_MAX),
    JU(dv_run_config_t, threads, "threads", UINT32_MAX),
    JU(dv_run_config_t, max_outstanding, "max_outstanding", UINT32_MAX),
    JU(dv_run_config_t, timeout_ns, "timeout_ns", INT64_MAX),
    JU(dv_run_config_t, time_limit_ns, "time_limit_ns", INT64_MAX),
    JU(dv_run_config_t, passes, "passes", INT64_MAX),
    JD(dv_run_config_t, max_qps, "max_qps"),
    JU(dv_run_config_t, interval_ns, "interval_ns", INT64_MAX),
    JU(dv_run_config_t, local_port, "local_port", 65535),
    JOPT(dv_run_config_t, stream, "transport", J_MODE, 0),
    JOPT(dv_run_config_t, queries_per_conn, "queries_per_conn", J_UINT, INT64_MAX),
};
/* "query_options"; then "edns_options" (hex) when there are any. */
static const dv_jfield_t qopt_fields[] = {
    JB(dv_querylist_options_t, rd, "rd"),
    JB(dv_querylist_options_t, edns, "edns"),
    JU(dv_querylist_options_t, edns_bufsize, "edns_bufsize", 65535),
    JB(dv_querylist_options_t, dnssec_ok, "dnssec_ok"),
    JB(dv_querylist_options_t, skip_bad, "skip_bad"),
};
static const dv_jfield_t target_fields[] = {
    JL(dv_target_t, label, "label"),
    JS(dv_target_t, spec, "spec"),
    JS(dv_target_t, addr_text, "address"),
    JS(dv_target_t, flush_cmd, "flush_command"),
    JOPT(dv_target_t, after_pass_cmd, "after_pass_command", J_STR, 0),
    JS(dv_target_t, server_version, "server_version"),
};
/* "lists[i]"; then "sha256". */
static const dv_jfield_t list_fields[] = {
    JL(dv_list_t, label, "label"),
    JS(dv_list_t, path, "path"),
    JU(dv_list_t, queries, "queries", INT64_MAX),
    JU(dv_list_t, lines, "lines", INT64_MAX),
};
/* "lists[i]"."input" (optional: files before issue 17 lack it); then its "kind". */
static const dv_jfield_t list_input_fields[] = {
    JU(dv_list_t, malformed, "malformed", INT64_MAX),
    JB(dv_list_t, replay.timed, "timed"),
    JD(dv_list_t, replay.captured_qps, "captured_qps"),
    JD(dv_list_t, replay.schedule_qps, "schedule_qps"),
    JU(dv_list_t, replay.captured_clients, "captured_clients", INT64_MAX),
    JU(dv_list_t, replay.clients, "clients", INT64_MAX),
    JU(dv_list_t, replay.per_client_min, "per_client_min", INT64_MAX),
    JU(dv_list_t, replay.per_client_median, "per_client_median", INT64_MAX),
    JU(dv_list_t, replay.per_client_max, "per_client_max", INT64_MAX),
    JU(dv_list_t, replay.rewritten, "rewritten", INT64_MAX),
};
/* "config"."replay" (optional); then its "timing" and "input". */
static const dv_jfield_t replay_opt_fields[] = {
    JD(dv_replay_options_t, speed, "speed"),
    JU(dv_replay_options_t, multiply, "multiply", 1000),
    JU(dv_replay_options_t, max_clients, "max_clients", UINT32_MAX),
    JB(dv_replay_options_t, strip_edns_options, "strip_edns_options"),
    JB(dv_replay_options_t, strip_ecs, "strip_ecs"),
    JB(dv_replay_options_t, force_rd, "force_rd"),
};
/* "passes[i]"."replay" (optional, --timing original only); then its "lag" histogram. */
static const dv_jfield_t pass_replay_fields[] = {
    JD(dv_pass_result_t, send_qps, "send_qps"),
};
/* "passes[i].capacity" (optional, capacity studies: study/capacity.h). */
static const dv_jfield_t pass_capacity_fields[] = {
    JD(dv_capacity_figure_t, capacity_qps, "capacity_qps"),
    JB(dv_capacity_figure_t, generator_bound, "generator_bound"),
    JB(dv_capacity_figure_t, confirmed, "confirmed"),
    JB(dv_capacity_figure_t, hit_to, "hit_to"),
    JU(dv_capacity_figure_t, steps, "steps", 1000000),
};
/* "passes[i].capacity.search[k]": one step of the search (optional, added with issue 13);
 * then its "verdict" and "why". */
static const dv_jfield_t cap_step_fields[] = {
    JD(dv_capacity_step_t, offered_qps, "offered_qps"),
    JD(dv_capacity_step_t, sent_qps, "sent_qps"),
    JD(dv_capacity_step_t, answered_qps, "answered_qps"),
    JD(dv_capacity_step_t, loss, "loss"),
    JU(dv_capacity_step_t, sent, "sent", INT64_MAX),
    JU(dv_capacity_step_t, completed, "completed", INT64_MAX),
    JU(dv_capacity_step_t, lost, "lost", INT64_MAX),
    JU(dv_capacity_step_t, p50_ns, "p50_ns", INT64_MAX),
    JU(dv_capacity_step_t, p99_ns, "p99_ns", INT64_MAX),
    JU(dv_capacity_step_t, p99_intended_ns, "p99_intended_ns", INT64_MAX),
    JU(dv_capacity_step_t, p999_intended_ns, "p999_intended_ns", INT64_MAX),
    JU(dv_capacity_step_t, lat_ns, "slo_latency_ns", INT64_MAX),
    JD(dv_capacity_step_t, cpu_share, "cpu_share"),
};
/* "passes[i]"; then "counters", "latency", "udp_snmp", "intervals". */
static const dv_jfield_t pass_fields[] = {
    JU(dv_pass_record_t, target, "target", INT64_MAX),
    JU(dv_pass_record_t, list, "list", INT64_MAX),
    JU(dv_pass_record_t, repeat, "repeat", 1000000),
    JF(dv_pass_record_t, kind, "kind", J_KIND, 0),
    JD(dv_pass_record_t, flush_s, "flush_s"),
    JD(dv_pass_record_t, ready_wait_s, "ready_wait_s"),
    JOPT(dv_pass_record_t, probe_queries, "probe_queries", J_UINT, UINT32_MAX),
    JOPT(dv_pass_record_t, names_asked, "names_asked", J_UINT, INT64_MAX),
    JF(dv_pass_record_t, res.end, "end_reason", J_END, 0),
    JB(dv_pass_record_t, res.interrupted, "interrupted"),
    JF(dv_pass_record_t, res.start_wall_ns, "start_time", J_TIME, 0),
    JU(dv_pass_record_t, res.start_wall_ns, "start_wall_ns", INT64_MAX),
    JD(dv_pass_record_t, res.run_time_s, "run_time_s"),
    JD(dv_pass_record_t, res.elapsed_s, "elapsed_s"),
    JD(dv_pass_record_t, res.qps, "qps"),
    JD(dv_pass_record_t, res.cpu_user_s, "cpu_user_s"),
    JD(dv_pass_record_t, res.cpu_sys_s, "cpu_sys_s"),
    JU(dv_pass_record_t, res.sockets, "sockets", UINT32_MAX),
    JU(dv_pass_record_t, res.threads, "threads", UINT32_MAX),
    JU(dv_pass_record_t, res.max_outstanding, "max_outstanding", UINT32_MAX),
    JOPT(dv_pass_record_t, res.stamp_every, "stamp_every", J_UINT, UINT32_MAX),
    JOPT(dv_pass_record_t, res.rx_filter, "rx_stamp_filter", J_BOOL, 0),
    JOPT(dv_pass_record_t, res.wire_workers, "wire_workers", J_UINT, UINT32_MAX),
    JOPT(dv_pass_record_t, res.rx_filter_workers, "rx_stamp_filter_workers", J_UINT, UINT32_MAX),
    JOPT(dv_pass_record_t, res.clock, "clock", J_CLOCK, 0),
};
/* "passes[i]"."xdp" (optional, --xdp passes; added with issue 27): how it ran over AF_XDP. */
static const dv_jfield_t pass_xdp_fields[] = {
    JB(dv_xdp_info_t, native, "native"),
    JB(dv_xdp_info_t, zerocopy, "zerocopy"),
    JU(dv_xdp_info_t, queues, "queues", UINT32_MAX),
    JU(dv_xdp_info_t, rx_queues, "rx_queues", UINT32_MAX),
};
static const dv_jfield_t udp_fields[] = {
    JB(dv_udp_snmp_t, valid, "valid"),
    JU(dv_udp_snmp_t, in_datagrams, "in_datagrams", INT64_MAX),
    JU(dv_udp_snmp_t, no_ports, "no_ports", INT64_MAX),
    JU(dv_udp_snmp_t, in_errors, "in_errors", INT64_MAX),
    JU(dv_udp_snmp_t, out_datagrams, "out_datagrams", INT64_MAX),
    JU(dv_udp_snmp_t, rcvbuf_errors, "rcvbuf_errors", INT64_MAX),
    JU(dv_udp_snmp_t, sndbuf_errors, "sndbuf_errors", INT64_MAX),
};
static const dv_jfield_t interval_fields[] = {
    JD(dv_interval_t, t_s, "t_s"),
    JU(dv_interval_t, sent, "sent", INT64_MAX),
    JU(dv_interval_t, completed, "completed", INT64_MAX),
    JU(dv_interval_t, lost, "lost", INT64_MAX),
    JU(dv_interval_t, inflight, "inflight", INT64_MAX),
    JD(dv_interval_t, qps, "qps"),
    JD(dv_interval_t, lat_mean_ns, "lat_mean_ns"),
    JD(dv_interval_t, lat_p50_ns, "lat_p50_ns"),
    JD(dv_interval_t, lat_p99_ns, "lat_p99_ns"),
};
/* A pass's optional "ranks": each MPI rank's own figures (study/dist.h, doc/scale-out.md). */
static const dv_jfield_t rank_fields[] = {
    JU(dv_rank_pass_t, rank, "rank", INT32_MAX),
    JB(dv_rank_pass_t, reported, "reported"),
    JU(dv_rank_pass_t, sent, "sent", INT64_MAX),
    JU(dv_rank_pass_t, completed, "completed", INT64_MAX),
    JU(dv_rank_pass_t, lost, "lost", INT64_MAX),
    JU(dv_rank_pass_t, kernel_drops, "kernel_drops", INT64_MAX),
    JD(dv_rank_pass_t, qps, "qps"),
    JD(dv_rank_pass_t, cpu_per_query_us, "cpu_per_query_us"),
    JD(dv_rank_pass_t, busy, "busy"),
    JD(dv_rank_pass_t, clock_offset_s, "clock_offset_s"),
    JB(dv_rank_pass_t, generator_bound, "generator_bound"),
    JB(dv_rank_pass_t, clock_off, "clock_off"),
};
/* "counters"."qtype_other": queries of qtypes beyond the tracked slots. */
static const dv_jfield_t qtype_other_fields[] = {
    JU(dv_counters_t, qtype_other_sent, "sent", INT64_MAX),
    JU(dv_counters_t, qtype_other_completed, "completed", INT64_MAX),
};
/* "status", then "failed" and "fail_message". */
static const dv_jfield_t status_fields[] = {
    JB(dv_study_t, interrupted, "interrupted"),
};

#define EXPORT(t)                                                                                  \
	{                                                                                          \
		(t), DV_ARRAY_SIZE(t)                                                              \
	}
const dv_jtable_t dv_jf_meta = EXPORT(meta_fields);
const dv_jtable_t dv_jf_tool = EXPORT(tool_fields);
const dv_jtable_t dv_jf_host = EXPORT(host_fields);
const dv_jtable_t dv_jf_config = EXPORT(config_fields);
const dv_jtable_t dv_jf_run = EXPORT(run_fields);
const dv_jtable_t dv_jf_qopt = EXPORT(qopt_fields);
const dv_jtable_t dv_jf_target = EXPORT(target_fields);
const dv_jtable_t dv_jf_list = EXPORT(list_fields);
const dv_jtable_t dv_jf_list_input = EXPORT(list_input_fields);
const dv_jtable_t dv_jf_replay_opt = EXPORT(replay_opt_fields);
const dv_jtable_t dv_jf_pass_replay = EXPORT(pass_replay_fields);
const dv_jtable_t dv_jf_pass_capacity = EXPORT(pass_capacity_fields);
const dv_jtable_t dv_jf_cap_step = EXPORT(cap_step_fields);
const dv_jtable_t dv_jf_pass = EXPORT(pass_fields);
const dv_jtable_t dv_jf_pass_xdp = EXPORT(pass_xdp_fields);
const dv_jtable_t dv_jf_udp = EXPORT(udp_fields);
const dv_jtable_t dv_jf_interval = EXPORT(interval_fields);
const dv_jtable_t dv_jf_rank = EXPORT(rank_fields);
const dv_jtable_t dv_jf_qtype_other = EXPORT(qtype_other_fields);
const dv_jtable_t dv_jf_status = EXPORT(status_fields);
#undef EXPORT

uint64_t dv_jf_load_uint(const void *p, size_t size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, sizeof(u64));
		return u64;
	}
}

void dv_jf_store_uint(void *p, size_t size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	default:
		memcpy(p, &v, sizeof(v));
		break;
	}
}
