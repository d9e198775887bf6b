/* test_cli: flags to configuration, defaults, labels, and the message for each bad value. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/cli.h"
#include "cmd/exit_status.h"
#include "transport/transport.h"

#define ARGV(...)            ((char *[]){"dnsvolley", __VA_ARGS__, NULL})
#define ARGC(...)            ((int)(sizeof((char *[]){"dnsvolley", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(cfg, err, ...) dv_cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), cfg, err)

static void test_defaults(void **state)
{
	dv_config_t cfg;
	dv_err_t err;
	const struct sockaddr_in *sin;

	(void)state;
	assert_int_equal(PARSE(&cfg, &err, "--no-progress"), 0);
	assert_int_equal(cfg.study.n_targets, 1);
	sin = (const struct sockaddr_in *)&cfg.study.targets[0].addr;
	assert_int_equal(ntohs(sin->sin_port), 53);
	assert_string_equal(cfg.study.targets[0].addr_text, "127.0.0.1:53");
	assert_int_equal(cfg.study.n_lists, 1);
	assert_string_equal(cfg.study.lists[0].path, "-");
	assert_int_equal(cfg.study.run.sockets, 16);
	assert_int_equal(cfg.study.run.threads, 1);
	assert_int_equal(cfg.study.run.max_outstanding, 100);
	assert_int_equal(cfg.study.run.timeout_ns, 5000000000ULL);
	assert_int_equal(cfg.study.n_plan, 1);
	assert_int_equal(cfg.study.plan[0], DV_PASS_PLAIN);
	assert_true(cfg.study.ql.rd);
	assert_false(cfg.study.query_version);
	dv_config_free(&cfg);
}

static void test_dnsperf_flags(void **state)
{
	dv_config_t cfg;
	dv_err_t err;

	(void)state;
	assert_int_equal(PARSE(&cfg, &err, "-s", "::1", "-p", "5300", "-d", "x.txt", "-c", "64",
	                       "-T", "2", "-q", "500", "-t", "0.25", "-l", "10", "-n", "3", "-Q",
	                       "20000", "-e", "-D", "-S", "2", "-x", "20000", "--no-rd"),
	                 0);
	assert_string_equal(cfg.study.targets[0].addr_text, "[::1]:5300");
	assert_int_equal(cfg.study.run.sockets, 64);
	assert_int_equal(cfg.study.run.threads, 2);
	assert_int_equal(cfg.study.run.max_outstanding, 500);
	assert_int_equal(cfg.study.run.timeout_ns, 250000000ULL);
	assert_int_equal(cfg.study.run.time_limit_ns, 10000000000ULL);
	assert_int_equal(cfg.study.run.passes, 3);
	assert_true(cfg.study.run.max_qps == 20000.0);
	assert_true(cfg.study.ql.edns && cfg.study.ql.dnssec_ok && !cfg.study.ql.rd);
	assert_true(cfg.study.run.interval_print);
	assert_int_equal(cfg.study.run.local_port, 20000);
	dv_config_free(&cfg);
	assert_int_equal(
	    PARSE(&cfg, &err, "-f", "inet6", "-s", "::1", "-b", "256", "-E", "10:00ff"), 0);
	assert_string_equal(cfg.study.targets[0].addr_text, "[::1]:53");
	assert_int_equal(cfg.study.run.socket_buf_bytes, 256 * 1024);
	assert_true(cfg.study.ql.edns);
	assert_int_equal(cfg.study.ql.edns_opts_len, 6);
	dv_config_free(&cfg);
}

static void test_study_flags(void **state)
{
	dv_config_t cfg;
	dv_err_t err;

	(void)state;
	assert_int_equal(PARSE(&cfg, &err, "-s", "v3=127.0.0.1:5301", "-s", "v4=127.0.0.2:5302",
	                       "-d", "SOA=querylists/soa.txt", "-d", "A=querylists/www-a.txt",
	                       "--passes", "cold,hot", "--repeat", "2", "--flush", "true",
	                       "--flush", "v4=echo flush v4", "--json", "out.json"),
	                 0);
	assert_int_equal(cfg.study.n_targets, 2);
	assert_string_equal(cfg.study.targets[0].label, "v3");
	assert_string_equal(cfg.study.targets[1].addr_text, "127.0.0.2:5302");
	assert_string_equal(cfg.study.targets[0].flush_cmd, "true");
	assert_string_equal(cfg.study.targets[1].flush_cmd, "echo flush v4");
	assert_string_equal(cfg.study.lists[1].label, "A");
	assert_string_equal(cfg.study.lists[1].path, "querylists/www-a.txt");
	assert_int_equal(cfg.study.n_plan, 2);
	assert_int_equal(cfg.study.plan[0], DV_PASS_COLD);
	assert_int_equal(cfg.study.plan[1], DV_PASS_HOT);
	assert_int_equal(cfg.study.repeat, 2);
	assert_true(cfg.study.query_version); /* a results file records the server version */
	dv_config_free(&cfg);
}

static void expect_error(int argc, char **argv, const char *needle)
{
	dv_config_t cfg;
	dv_err_t err;

	err.msg[0] = '\0';
	assert_int_equal(dv_cli_parse(argc, argv, &cfg, &err), -EINVAL);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("message '%s' does not contain '%s'", err.msg, needle);
	dv_config_free(&cfg);
}

#define EXPECT_ERROR(needle, ...) expect_error(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), needle)

static void test_bad_values(void **state)
{
	(void)state;
	EXPECT_ERROR("-q: '0' is out of range", "-q", "0");
	EXPECT_ERROR("-c: 'x' is not a whole number", "-c", "x");
	EXPECT_ERROR("-t: '-1' is out of range (0 to 10000000 s)", "-t", "-1");
	EXPECT_ERROR("-l: '1000000000' is out of range (0 to 10000000 s)", "-l", "1000000000");
	EXPECT_ERROR("-t: 'x' is not a duration", "-t", "x");
	EXPECT_ERROR("--flush-timeout: '0' must be greater than zero", "--flush-timeout", "0");
	EXPECT_ERROR("-t: '0' must be greater than zero", "-t", "0");
	EXPECT_ERROR("-Q: '0' is not a rate", "-Q", "0");
	EXPECT_ERROR("-p: '70000' is out of range", "-p", "70000");
	EXPECT_ERROR("unknown option '--bogus'", "--bogus");
	EXPECT_ERROR("-s needs a value", "-s");
	EXPECT_ERROR("--passes: 'warm' is not a pass kind", "--passes", "warm");
	EXPECT_ERROR("has no --flush command", "--passes", "cold,hot");
	EXPECT_ERROR("at most 65536 queries in flight per thread", "-q", "70000");
	EXPECT_ERROR("runs past port 65535", "-x", "65530", "-c", "16");
	EXPECT_ERROR("two targets are labelled 'a'", "-s", "a=127.0.0.1", "-s", "a=127.0.0.2");
	EXPECT_ERROR("port must be 1-65535", "-s", "127.0.0.1:0");
	EXPECT_ERROR("unexpected argument 'extra'", "extra");
	EXPECT_ERROR("need --baseline", "--max-qps-drop", "5%");
	EXPECT_ERROR("-a: 'nowhere' is not a numeric", "-a", "nowhere");
	EXPECT_ERROR("-f: 'ipx' is not a family", "-f", "ipx");
	EXPECT_ERROR("-E: '10' is not CODE:HEXVALUE", "-E", "10");
	EXPECT_ERROR("-b: '0' is out of range", "-b", "0");
	EXPECT_ERROR("'127.0.0.1' is an IPv4 address, but -f inet6 asks for IPv6", "-f", "inet6",
	             "-s", "127.0.0.1");
	EXPECT_ERROR("'::1' is an IPv6 address, but -f inet asks for IPv4", "-f", "inet", "-s",
	             "::1");
	EXPECT_ERROR("'::1:40653' is not an IPv6 address; for port 40653 write [::1]:40653", "-s",
	             "::1:40653");
	EXPECT_ERROR("'::1:5450' is ambiguous: write [::1]:5450 for port 5450 of ::1, or "
	             "[::1:5450] for the address",
	             "-s", "::1:5450");
	EXPECT_ERROR("'2001:db8::1:53' is ambiguous", "-s", "2001:db8::1:53");
	EXPECT_ERROR("--json: './x.txt' is also a query list", "-d", "x.txt", "--json", "./x.txt");
	EXPECT_ERROR("--csv: 'o' is also the --json output", "--json", "o", "--csv", "o");
	EXPECT_ERROR("--junit: 'b' is also the --baseline file", "--baseline", "b", "--junit", "b");
}

/* dnsperf's flags: each works or says precisely why not. */
static void test_dnsperf_only_flags(void **state)
{
	dv_config_t cfg;
	dv_err_t err;

	(void)state;
	assert_int_equal(PARSE(&cfg, &err, "-m", "udp", "-O", "suppress=timeouts,unexpected", "-O",
	                       "latency-histogram", "-W", "--interval-format", "dnsperf"),
	                 0);
	assert_true(cfg.latency_histogram);
	assert_true(cfg.warnings_stdout);
	assert_true(cfg.study.run.interval_dnsperf);
	dv_config_free(&cfg);
	assert_int_equal(
	    PARSE(&cfg, &err, "-O", "latency-histogram=no", "--interval-format", "dnsvolley"), 0);
	assert_false(cfg.latency_histogram);
	assert_false(cfg.study.run.interval_dnsperf);
	dv_config_free(&cfg);
	/* Stream transports: the mode, its default port, the TLS and DoH options. */
	assert_int_equal(PARSE(&cfg, &err, "-m", "tcp", "-O", "num-queries-per-conn=100"), 0);
	assert_true(cfg.study.run.stream);
	assert_int_equal(cfg.study.run.tp.kind, DV_TP_TCP);
	assert_int_equal(cfg.study.run.queries_per_conn, 100);
	assert_string_equal(cfg.study.targets[0].addr_text, "127.0.0.1:53");
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-m", "dot", "--tls-sni", "a.test", "--tls-no-resume"),
	                 0);
	assert_int_equal(cfg.study.run.tp.kind, DV_TP_DOT);
	assert_string_equal(cfg.study.run.tp.sni, "a.test");
	assert_true(cfg.study.run.tp.no_resume);
	assert_string_equal(cfg.study.targets[0].addr_text, "127.0.0.1:853");
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-m", "doh", "-O", "doh-method=GET", "-O",
	                       "doh-uri=https://x:8443/q", "-p", "8443"),
	                 0);
	assert_int_equal(cfg.study.run.tp.kind, DV_TP_DOH);
	assert_true(cfg.study.run.tp.doh_get);
	assert_string_equal(cfg.study.run.tp.doh_path, "/q");
	assert_string_equal(cfg.study.targets[0].addr_text, "127.0.0.1:8443");
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-m", "doh"), 0);
	assert_string_equal(cfg.study.targets[0].addr_text, "127.0.0.1:443");
	dv_config_free(&cfg);
	EXPECT_ERROR("--tls-sni needs TLS (-m dot, -m doh or -m doq), not -m tcp", "-m", "tcp",
	             "--tls-sni", "x");
	EXPECT_ERROR("--doh-path needs -m doh, not -m dot", "-m", "dot", "--doh-path", "/q");
	EXPECT_ERROR("--doh-path: 'q' does not start with '/'", "-m", "doh", "--doh-path", "q");
	EXPECT_ERROR("--tls-ca /nonexistent/ca.pem: cannot read it", "-m", "dot", "--tls-ca",
	             "/nonexistent/ca.pem");
	EXPECT_ERROR("-m: 'quic' is not a mode (udp, tcp, dot, doh or doq)", "-m", "quic");
	EXPECT_ERROR("-y: 'hmac-foo' is not a TSIG algorithm", "-y", "hmac-foo:k:c2VjcmV0");
	EXPECT_ERROR("-y: 'k' is not [ALG:]NAME:SECRET", "-y", "k");
	EXPECT_ERROR("-B and -u: a list is either -B messages or -u updates", "-u", "-B");
	EXPECT_ERROR("-B and -u: a list is either -B messages or -u updates", "-B", "-u");
	EXPECT_ERROR("-O suppress: 'noise' is not a message type", "-O", "suppress=timeouts,noise");
	EXPECT_ERROR(
	    "-O num-queries-per-conn needs a connection transport (-m tcp, dot, doh or doq), "
	    "not -m udp",
	    "-O", "num-queries-per-conn=100");
	EXPECT_ERROR("-O num-queries-per-conn: 'x' is not a whole number", "-O",
	             "num-queries-per-conn=x");
	EXPECT_ERROR("--doh-path needs -m doh, not -m udp", "-O", "doh-uri=https://x/");
	EXPECT_ERROR("-O: 'colour' is not a long option", "-O", "colour=red");
	EXPECT_ERROR("-O suppress needs a value", "-O", "suppress");
	EXPECT_ERROR("--interval-format: 'csv' is not a format", "--interval-format", "csv");
}

/* -T without -c/-q raises them; with them given, they limit -T (as dnsperf); a note says so. */
static void test_threads_auto(void **state)
{
	dv_config_t cfg;
	dv_err_t err;

	(void)state;
	assert_int_equal(PARSE(&cfg, &err, "-T", "32", "--no-progress"), 0);
	assert_int_equal(cfg.study.run.threads, 32);
	assert_int_equal(cfg.study.run.sockets, 32);
	assert_int_equal(cfg.study.run.max_outstanding, 100);
	assert_string_equal(cfg.note, "-T 32: using 32 sockets (-c), one per thread");
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-c", "1", "-T", "4"), 0);
	assert_int_equal(cfg.study.run.threads, 1);
	assert_int_equal(cfg.study.run.sockets, 1);
	assert_string_equal(cfg.note,
	                    "-T 4 with -c 1: using 1 thread (a thread needs a socket of its own)");
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-T", "200", "-c", "300"), 0);
	assert_int_equal(cfg.study.run.threads, 200);
	assert_int_equal(cfg.study.run.max_outstanding, 200);
	assert_string_equal(cfg.note, "-T 200: using 200 queries in flight (-q), one per thread");
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-T", "8", "-q", "3"), 0);
	assert_int_equal(cfg.study.run.threads, 3);
	assert_int_equal(cfg.study.run.sockets, 16);
	dv_config_free(&cfg);
	assert_int_equal(PARSE(&cfg, &err, "-T", "2"), 0);
	assert_string_equal(cfg.note, "");
	dv_config_free(&cfg);
}

/* argv is kept word for word (copied); the one-line form quotes only the words that need it. */
static void test_argv_kept(void **state)
{
	dv_config_t cfg;
	dv_err_t err;
	char *const want[] = {"dnsvolley", "--no-progress", "--after-pass", "echo 'done'"};

	(void)state;
	assert_int_equal(PARSE(&cfg, &err, "--no-progress", "--after-pass", "echo 'done'"), 0);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(cfg.study.argv[i], want[i]);
		assert_ptr_not_equal(cfg.study.argv[i], want[i]);
	}
	assert_null(cfg.study.argv[4]);
	assert_string_equal(cfg.study.cmdline,
	                    "dnsvolley --no-progress --after-pass 'echo '\\''done'\\'''");
	dv_config_free(&cfg);
}

/* The numbers doc/dnsvolley.1's EXIT STATUS promises (scripts and CI jobs test them). */
static void test_exit_statuses(void **state)
{
	(void)state;
	assert_int_equal(DV_EXIT_OK, 0);
	assert_int_equal(DV_EXIT_GATE_FAILED, 1);
	assert_int_equal(DV_EXIT_USAGE, 2);
	assert_int_equal(DV_EXIT_RUN_FAILED, 3);
	assert_int_equal(DV_EXIT_NO_ANSWERS, 4);
	assert_int_equal(DV_EXIT_NOTHING_SENT, 5);
}

/* --help's -m line is the table's: every kind's name after "udp|" and its default port. */
static void test_mode_help(void **state)
{
	char *text = NULL, *line, names[128] = "udp", ports[128] = "53";
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	dv_cli_usage(f);
	fclose(f);
	for (int k = 0; k < DV_TP_NKINDS; k++) {
		const dv_tp_desc_t *d = dv_tp_desc((dv_tp_kind_t)k);
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "|%s", d->name);
		snprintf(ports + strlen(ports), sizeof(ports) - strlen(ports), ", %u",
		         d->default_port);
	}
	line = strstr(text, "  -m, --mode ");
	assert_non_null(line);
	*strchr(line, '\n') = '\0';
	assert_non_null(strstr(line, names));
	assert_non_null(strstr(line, ports));
	assert_string_equal(line,
	                    "  -m, --mode udp|tcp|dot|doh|doq    transport (udp); ports 53, 53, "
	                    "853, 443, 853;");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),     cmocka_unit_test(test_dnsperf_flags),
	    cmocka_unit_test(test_study_flags),  cmocka_unit_test(test_bad_values),
	    cmocka_unit_test(test_argv_kept),    cmocka_unit_test(test_dnsperf_only_flags),
	    cmocka_unit_test(test_threads_auto), cmocka_unit_test(test_exit_statuses),
	    cmocka_unit_test(test_mode_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
