/* test_querylist: parsing, errors, header/OPT bytes and an ldns round trip of the list compiler. */
#include "config.h"

#include <errno.h>
#include <ldns/ldns.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "input/querylist.h"

#define SRC "lists/a.txt"

static int load_text(dv_querylist_t *ql, const char *text, const dv_querylist_options_t *opts,
                     dv_err_t *err)
{
	dv_querylist_options_t def;

	if (opts == NULL) {
		dv_querylist_options_init(&def);
		opts = &def;
	}
	memset(err, 0, sizeof(*err));
	return dv_querylist_load_buffer(ql, text, strlen(text), SRC, opts, err);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ---- bad input: exact FILE:LINE prefix and -EINVAL ---- */

typedef struct bad_case {
	const char *text;
	const char *msg; /* the exact message, or its prefix when it ends with '*' */
} bad_case_t;

static void expect_bad(const char *text, const char *want)
{
	dv_querylist_t ql;
	dv_err_t err;
	size_t wl = strlen(want);
	int rc = load_text(&ql, text, NULL, &err);

	if (rc != -EINVAL)
		fail_msg("input '%s': rc %d, want -EINVAL (msg '%s')", text, rc, err.msg);
	if (want[wl - 1] == '*') {
		if (strncmp(err.msg, want, wl - 1) != 0)
			fail_msg("input '%s': message '%s', want prefix '%.*s'", text, err.msg,
			         (int)(wl - 1), want);
	} else if (strcmp(err.msg, want) != 0) {
		fail_msg("input '%s': message '%s', want '%s'", text, err.msg, want);
	}
	/* ql is left empty */
	assert_null(ql.arena);
	assert_null(ql.off);
	assert_int_equal(ql.count, 0);
	dv_querylist_free(&ql);
}

static void test_bad_lines(void **state)
{
	static const bad_case_t cases[] = {
	    {"example.com A\nexample..com A\n", SRC ":2: empty label in name 'example..com'"},
	    {".example.com A\n", SRC ":1: empty label in name '.example.com'"},
	    {"..\tA\n", SRC ":1: empty label in name '..'"},
	    {"example.com FOO\n", SRC ":1: unknown type 'FOO'"},
	    {"example.com TYPE\n", SRC ":1: unknown type 'TYPE'"},
	    {"example.com TYPE65536\n", SRC ":1: unknown type 'TYPE65536'"},
	    {"example.com TYPE1x\n", SRC ":1: unknown type 'TYPE1x'"},
	    {"example.com XX A\n", SRC ":1: unknown type or class 'XX'"},
	    {"example.com CLASS70000 A\n", SRC ":1: unknown type or class 'CLASS70000'"},
	    {"example.com A XX\n", SRC ":1: unknown class 'XX'"},
	    {"example.com IN FOO\n", SRC ":1: unknown type 'FOO'"},
	    {"example.com A AAAA\n",
	     SRC ":1: stray extra field (expected NAME TYPE [CLASS]): 'AAAA'"},
	    {"example.com A IN x\n", SRC ":1: stray extra field (expected NAME TYPE [CLASS]): 'x'"},
	    {"example.com\n", SRC ":1: missing query type after name 'example.com'"},
	    {"example.com # A\n", SRC ":1: missing query type after name 'example.com'"},
	    {"a\\256.com A\n", SRC ":1: bad escape in name 'a\\256.com'"},
	    {"a\\ A\n", SRC ":1: missing query type after name 'a\\ A'"}, /* the name "a A" */
	    {"a\\0.com A\n", SRC ":1: bad escape in name 'a\\0.com'"},
	    {"a..b\\.c A\n", SRC ":1: empty label in name 'a..b\\.c'"},
	    /* line numbers count comments, blanks and CRLF lines */
	    {"# c\n\n  \nexample.com A\r\n; z\nbad..com A\n", SRC ":6: empty label*"},
	};
	char buf[2048];

	for (size_t i = 0; i < DV_ARRAY_SIZE(cases); i++)
		expect_bad(cases[i].text, cases[i].msg);

	/* label of 64 octets: plain and escaped */
	char *l64 = repeat('x', 64), *l63 = repeat('y', 63);
	snprintf(buf, sizeof(buf), "ok.com A\n%s.com A\n", l64);
	expect_bad(buf,
	           SRC ":2: label longer than 63 octets: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
	snprintf(buf, sizeof(buf), "%s.com A\n", l63);
	{
		dv_querylist_t ql;
		dv_err_t err;
		assert_int_equal(load_text(&ql, buf, NULL, &err), 0);
		dv_querylist_free(&ql);
	}
	buf[0] = '\0';
	for (int i = 0; i < 64; i++)
		strcat(buf, "\\065");
	strcat(buf, ".com A\n");
	expect_bad(buf, SRC ":1: label longer than 63 octets in name '\\065*");

	/* names of 255 octets pass, 256 fail (both paths) */
	char *l61 = repeat('b', 61), *l62 = repeat('b', 62);
	snprintf(buf, sizeof(buf), "%s.%s.%s.%s A\n", l63, l63, l63, l61);
	{
		dv_querylist_t ql;
		dv_err_t err;
		assert_int_equal(load_text(&ql, buf, NULL, &err), 0);
		assert_int_equal(ql.arena_len, 12 + 255 + 4);
		dv_querylist_free(&ql);
	}
	snprintf(buf, sizeof(buf), "%s.%s.%s.%s A\n", l63, l63, l63, l62);
	expect_bad(buf, SRC ":1: name longer than 255 octets: 'yyyy*");
	snprintf(buf, sizeof(buf), "%s.%s.%s.%s\\098 A\n", l63, l63, l63, l61);
	expect_bad(buf, SRC ":1: name longer than 255 octets: 'yyyy*");
	/* a huge token must not overrun anything */
	char *huge = repeat('z', 1500);
	snprintf(buf, sizeof(buf), "%s A\n", huge);
	expect_bad(buf, SRC ":1: label longer than 63 octets: 'zzz*");

	/* NUL byte inside a line */
	{
		static const char nul[] = "ok.com A\nexa\0mple.com A\n";
		dv_querylist_t ql;
		dv_err_t err;
		dv_querylist_options_t o;
		dv_querylist_options_init(&o);
		assert_int_equal(dv_querylist_load_buffer(&ql, nul, sizeof(nul) - 1, SRC, &o, &err),
		                 -EINVAL);
		assert_string_equal(err.msg, SRC ":2: NUL byte in line");
	}
	free(l64);
	free(l63);
	free(l61);
	free(l62);
	free(huge);
}

static void test_empty_list(void **state)
{
	dv_querylist_t ql;
	dv_err_t err;
	dv_querylist_options_t o;

	assert_int_equal(load_text(&ql, "", NULL, &err), -EINVAL);
	assert_string_equal(err.msg, SRC ": no queries");
	assert_int_equal(load_text(&ql, "# only\n\n   # comments\n", NULL, &err), -EINVAL);
	assert_string_equal(err.msg, SRC ": no queries");
	dv_querylist_options_init(&o);
	o.skip_bad = true;
	assert_int_equal(load_text(&ql, "a..b A\nx.com FOO\n", &o, &err), -EINVAL);
	assert_string_equal(err.msg, SRC ": no queries (2 malformed lines skipped)");
}

static void test_skip_bad(void **state)
{
	dv_querylist_t ql;
	dv_err_t err;
	dv_querylist_options_t o;

	dv_querylist_options_init(&o);
	o.skip_bad = true;
	assert_int_equal(load_text(&ql,
	                           "a.com A\n"
	                           "a..com A\n"
	                           "# comment\n"
	                           "b.com FOO\n"
	                           "\n"
	                           "c.com MX\n"
	                           "d.com A IN extra\n"
	                           "e.com\n"
	                           "f.com AAAA",
	                           &o, &err),
	                 0);
	assert_int_equal(ql.count, 3);
	assert_int_equal(ql.skipped, 4);
	assert_int_equal(ql.lines, 9);
	assert_string_equal(ql.source, SRC);
	dv_querylist_free(&ql);
	dv_querylist_free(&ql); /* twice is fine */
	dv_querylist_free(NULL);
}

static void test_io_errors(void **state)
{
	dv_querylist_t ql;
	dv_err_t err;
	dv_querylist_options_t o;

	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_load(&ql, "/nonexistent/list.txt", &o, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/list.txt: No such file or directory");
	assert_int_equal(dv_querylist_load(&ql, "/", &o, &err), -EISDIR);
	assert_string_equal(err.msg, "/: Is a directory");
}

/* comments, blanks, classes, tabs, CRLF: what compiles and how many lines were read */
static void test_comments_and_classes(void **state)
{
	dv_querylist_t ql;
	dv_err_t err;
	size_t len;
	const uint8_t *m;

	assert_int_equal(load_text(&ql,
	                           "# header\n"
	                           "\n"
	                           "a.com A # trailing\n"
	                           "\tb.com\tIN\tMX\t\r\n"
	                           "c.com AAAA IN ; zone style\n"
	                           "version.bind CH TXT\n"
	                           "hostname.bind TXT ch\n"
	                           "d.com CLASS1 TYPE65\n"
	                           "e#x.com A\n"
	                           "   \n"
	                           "# end",
	                           NULL, &err),
	                 0);
	assert_int_equal(ql.count, 7);
	assert_int_equal(ql.lines, 11);
	assert_int_equal(ql.skipped, 0);
	m = dv_querylist_get(&ql, 1, &len);
	assert_int_equal(len, 12 + 7 + 4);
	assert_memory_equal(m + 12,
	                    "\x01"
	                    "b"
	                    "\x03"
	                    "com"
	                    "\x00"
	                    "\x00\x0f"
	                    "\x00\x01",
	                    11);
	m = dv_querylist_get(&ql, 3, &len);
	assert_memory_equal(m + 12 + 14, "\x00\x10\x00\x03", 4); /* TXT CH */
	m = dv_querylist_get(&ql, 4, &len);
	assert_memory_equal(m + 12 + 15, "\x00\x10\x00\x03", 4);
	m = dv_querylist_get(&ql, 5, &len);
	assert_memory_equal(m + 12 + 7, "\x00\x41\x00\x01", 4);
	m = dv_querylist_get(&ql, 6, &len); /* '#' inside a token is part of the name */
	assert_memory_equal(m + 12,
	                    "\x03"
	                    "e#x"
	                    "\x03"
	                    "com"
	                    "\x00",
	                    9);
	dv_querylist_free(&ql);
}

/* ---- header and OPT bytes ---- */

static void test_header_default(void **state)
{
	static const uint8_t want[] = {
	    0, 0,   0x01, 0x00, 0,   1,   0,   0,   0, 0,   0,   0, /* ID 0, RD, QD 1 */
	    7, 'E', 'x',  'A',  'm', 'p', 'l', 'e', 3, 'C', 'O', 'm', 0, 0, 1, 0, 1, /* A IN */
	};
	dv_querylist_t ql;
	dv_err_t err;
	size_t len;
	const uint8_t *m;

	assert_int_equal(load_text(&ql, "ExAmple.COm A\nExAmple.COm. a\n", NULL, &err), 0);
	assert_int_equal(ql.count, 2);
	assert_int_equal(ql.arena_len, 2 * 29);
	assert_int_equal(ql.off[0], 0);
	assert_int_equal(ql.off[1], 29);
	assert_int_equal(ql.off[2], 58);
	m = dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 29);
	assert_memory_equal(m, want, 29);
	m = dv_querylist_get(&ql, 1, &len);
	assert_memory_equal(m, want, 29); /* trailing dot: same bytes */
	dv_querylist_free(&ql);
}

static void test_header_options(void **state)
{
	static const uint8_t opt_1232[] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0x00, 0, 0, 0};
	static const uint8_t opt_4096_do[] = {0, 0, 41, 0x10, 0x00, 0, 0, 0x80, 0, 0, 0};
	dv_querylist_t ql;
	dv_err_t err;
	dv_querylist_options_t o;
	size_t len;
	const uint8_t *m;

	dv_querylist_options_init(&o);
	assert_true(o.rd);
	assert_false(o.edns || o.dnssec_ok || o.skip_bad);
	assert_int_equal(o.edns_bufsize, 0);

	o.rd = false;
	assert_int_equal(load_text(&ql, "a.b A\n", &o, &err), 0);
	m = dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 12 + 5 + 4);
	assert_int_equal(ql.opt_len, 0);
	assert_int_equal(dv_querylist_question_len(&ql, 0), 5 + 4);
	assert_int_equal(m[2], 0);
	assert_int_equal(m[3], 0);
	assert_int_equal(m[11], 0);
	dv_querylist_free(&ql);

	dv_querylist_options_init(&o);
	o.edns = true;
	assert_int_equal(load_text(&ql, "a.b A\n", &o, &err), 0);
	m = dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 12 + 5 + 4 + 11);
	assert_int_equal(m[2], 0x01);
	assert_int_equal(m[10], 0);
	assert_int_equal(m[11], 1); /* ARCOUNT 1 */
	assert_memory_equal(m + 21, opt_1232, 11);
	dv_querylist_free(&ql);

	/* dnssec_ok alone implies EDNS */
	dv_querylist_options_init(&o);
	o.dnssec_ok = true;
	o.edns_bufsize = 4096;
	assert_int_equal(load_text(&ql, "a.b A\nc.d MX\n", &o, &err), 0);
	assert_int_equal(ql.count, 2);
	for (size_t i = 0; i < 2; i++) {
		m = dv_querylist_get(&ql, i, &len);
		assert_int_equal(len, 32);
		assert_int_equal(m[11], 1);
		assert_memory_equal(m + 21, opt_4096_do, 11);
	}
	dv_querylist_free(&ql);
}

/* ---- EDNS options (-E CODE:HEX), checked through ldns's parser ---- */

static void test_edns_options(void **state)
{
	static const uint8_t opt_rr[] = {0,    0,  41, 0x04, 0xd0, 0,
	                                 0,    0,  0,  0,    10,         /* rdlen 10 */
	                                 0x00, 10, 0,  2,    0x01, 0x02, /* 10: 0102 */
	                                 0x00, 3,  0,  0};               /* NSID, empty */
	dv_querylist_t ql;
	dv_err_t err;
	dv_querylist_options_t o;
	ldns_pkt *pkt = NULL;
	size_t len;
	const uint8_t *m;

	(void)state;
	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_add_edns_option(&o, "10:0102", &err), 0);
	assert_int_equal(dv_querylist_add_edns_option(&o, "3:", &err), 0);
	assert_true(o.edns);
	assert_int_equal(load_text(&ql, "a.b A\n", &o, &err), 0);
	m = dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 12 + 5 + 4 + sizeof(opt_rr));
	assert_int_equal(ql.opt_len, sizeof(opt_rr));
	assert_int_equal(dv_querylist_question_len(&ql, 0), 5 + 4);
	assert_int_equal(m[11], 1);
	assert_memory_equal(m + 21, opt_rr, sizeof(opt_rr));
	assert_int_equal(ldns_wire2pkt(&pkt, m, len), LDNS_STATUS_OK);
	assert_true(ldns_pkt_edns(pkt));
	assert_int_equal(ldns_rdf_size(ldns_pkt_edns_data(pkt)), 10);
	ldns_pkt_free(pkt);
	dv_querylist_free(&ql);

	/* bad specs: a message naming -E, nothing added */
	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_add_edns_option(&o, "10", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "-E: '10' is not CODE:HEXVALUE"));
	assert_int_equal(dv_querylist_add_edns_option(&o, "70000:00", &err), -EINVAL);
	assert_int_equal(dv_querylist_add_edns_option(&o, "10:012", &err), -EINVAL);
	assert_int_equal(dv_querylist_add_edns_option(&o, "10:0g", &err), -EINVAL);
	assert_int_equal(dv_querylist_add_edns_option(&o, "-1:00", &err), -EINVAL);
	assert_int_equal(o.edns_opts_len, 0);
	/* at most DV_QUERYLIST_EDNS_OPTS_MAX octets */
	for (int i = 0; i < 50; i++)
		if (dv_querylist_add_edns_option(&o, "65001:00000000", &err) != 0)
			break;
	assert_int_equal(o.edns_opts_len, (DV_QUERYLIST_EDNS_OPTS_MAX / 8) * 8);
	assert_int_equal(dv_querylist_add_edns_option(&o, "65001:00000000", &err), -ENOSPC);
}

/* ---- the plain-name fast path gives ldns's bytes ---- */

static void compare_with_ldns(const char *name)
{
	char line[1200];
	dv_querylist_t ql;
	dv_err_t err;
	ldns_rdf *rdf = NULL;
	ldns_status st = ldns_str2rdf_dname(&rdf, name);
	int rc;

	snprintf(line, sizeof(line), "%s A\n", name);
	rc = load_text(&ql, line, NULL, &err);
	if (st != LDNS_STATUS_OK) {
		if (rc != -EINVAL)
			fail_msg("'%s': ldns rejects (%s), we accept", name,
			         ldns_get_errorstr_by_id(st));
		return;
	}
	if (rc != 0)
		fail_msg("'%s': ldns accepts, we reject: %s", name, err.msg);
	size_t len;
	const uint8_t *m = dv_querylist_get(&ql, 0, &len);
	assert_int_equal(len, 12 + ldns_rdf_size(rdf) + 4);
	assert_memory_equal(m + 12, ldns_rdf_data(rdf), ldns_rdf_size(rdf));
	ldns_rdf_deep_free(rdf);
	dv_querylist_free(&ql);
}

static void test_fast_path_matches_ldns(void **state)
{
	static const char *names[] = {
	    ".",
	    "a",
	    "a.",
	    "com.",
	    "www.example.com",
	    "WWW.Example.COM.",
	    "a.b.c.d.e.f.g",
	    "*.wild.example",
	    "_srv._tcp.x",
	    "@",
	    "a@b.c",
	    "h-y_p#e.n",
	    "\xc3\xa9t\xc3\xa9.fr",
	    "x..y",
	    ".x",
	    "x.",
	    "..",
	    "a...",
	    /* escapes (ldns path) against the same names spelled plainly */
	    "\\119ww.example.com",
	    "w\\.w.x",
	    "\\000.x",
	    "\\255\\032.y",
	    "a\\",
	    "a\\25",
	    "\\.",
	    "\\\\.z",
	};
	char buf[1200];
	char *l63 = repeat('q', 63), *l64 = repeat('q', 64);
	char *l61 = repeat('r', 61), *l62 = repeat('r', 62);

	for (size_t i = 0; i < DV_ARRAY_SIZE(names); i++)
		compare_with_ldns(names[i]);
	compare_with_ldns(l63);
	compare_with_ldns(l64);
	snprintf(buf, sizeof(buf), "%s.%s.%s.%s", l63, l63, l63, l61);
	compare_with_ldns(buf); /* 255 */
	strcat(buf, ".");
	compare_with_ldns(buf);
	snprintf(buf, sizeof(buf), "%s.%s.%s.%s", l63, l63, l63, l62);
	compare_with_ldns(buf); /* 256 */
	/* many lengths around the limits, built from labels of every size */
	for (size_t lab = 1; lab <= 64; lab += 3) {
		char *l = repeat('k', lab);
		buf[0] = '\0';
		while (strlen(buf) + lab + 1 < 300) {
			strcat(buf, l);
			compare_with_ldns(buf);
			strcat(buf, ".");
			compare_with_ldns(buf);
		}
		free(l);
	}
	free(l63);
	free(l64);
	free(l61);
	free(l62);
}

/* ---- stream and stdin ---- */

static void test_stream_and_stdin(void **state)
{
	static const char text[] = "# list\na.com A\nb.com AAAA\n\nc.com MX";
	dv_querylist_t ql;
	dv_err_t err;
	dv_querylist_options_t o;
	FILE *f;

	dv_querylist_options_init(&o);
	f = fmemopen((void *)text, sizeof(text) - 1, "r");
	assert_non_null(f);
	assert_int_equal(dv_querylist_load_stream(&ql, f, "mem", &o, &err), 0);
	fclose(f);
	assert_int_equal(ql.count, 3);
	assert_int_equal(ql.lines, 5);
	assert_string_equal(ql.source, "mem");
	/* same bytes as the buffer loader */
	{
		dv_querylist_t q2;
		assert_int_equal(load_text(&q2, text, NULL, &err), 0);
		assert_int_equal(q2.arena_len, ql.arena_len);
		assert_memory_equal(q2.arena, ql.arena, ql.arena_len);
		assert_memory_equal(q2.off, ql.off, (ql.count + 1) * sizeof(uint32_t));
		dv_querylist_free(&q2);
	}
	dv_querylist_free(&ql);

	f = fmemopen((void *)"a.com A\nb..com A\n", 17, "r");
	assert_non_null(f);
	assert_int_equal(dv_querylist_load_stream(&ql, f, "-", &o, &err), -EINVAL);
	fclose(f);
	assert_string_equal(err.msg, "(stdin):2: empty label in name 'b..com'");

	/* path "-" reads stdin */
	char path[] = "/tmp/test_querylist.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	assert_non_null(freopen(path, "r", stdin));
	assert_int_equal(dv_querylist_load(&ql, "-", &o, &err), 0);
	assert_int_equal(ql.count, 3);
	assert_string_equal(ql.source, "-");
	dv_querylist_free(&ql);
	/* and a path by name */
	assert_int_equal(dv_querylist_load(&ql, path, &o, &err), 0);
	assert_int_equal(ql.count, 3);
	assert_string_equal(ql.source, path);
	dv_querylist_free(&ql);
	unlink(path);
}

/* ---- round trip of the bundled lists through ldns_wire2pkt ---- */

typedef struct expect_q {
	ldns_rdf *name;
	uint16_t type;
	uint16_t cls;
} expect_q_t;

/* Independent reading of a list line with ldns only. 1 = a query, 0 = nothing. */
static int expect_line(char *line, expect_q_t *q)
{
	char *tok[4], *save = NULL, *t;
	int n = 0;

	for (t = strtok_r(line, " \t\r\n", &save); t != NULL && n < 4;
	     t = strtok_r(NULL, " \t\r\n", &save)) {
		if (t[0] == '#' || t[0] == ';')
			break;
		tok[n++] = t;
	}
	if (n == 0)
		return 0;
	assert_true(n == 2 || n == 3);
	assert_int_equal(ldns_str2rdf_dname(&q->name, tok[0]), LDNS_STATUS_OK);
	q->cls = LDNS_RR_CLASS_IN;
	if (n == 2) {
		q->type = (uint16_t)ldns_get_rr_type_by_name(tok[1]);
	} else if (ldns_get_rr_class_by_name(tok[1]) != 0) {
		q->cls = (uint16_t)ldns_get_rr_class_by_name(tok[1]);
		q->type = (uint16_t)ldns_get_rr_type_by_name(tok[2]);
	} else {
		q->type = (uint16_t)ldns_get_rr_type_by_name(tok[1]);
		q->cls = (uint16_t)ldns_get_rr_class_by_name(tok[2]);
	}
	assert_true(q->type != 0 && q->cls != 0);
	return 1;
}

static void round_trip(const char *file, const dv_querylist_options_t *o, size_t want_count)
{
	const char *top = getenv("top_srcdir");
	char path[4096], *line = NULL;
	size_t cap = 0, i = 0;
	dv_querylist_t ql;
	dv_err_t err;
	FILE *f;
	bool edns = o->edns || o->dnssec_ok;

	snprintf(path, sizeof(path), "%s/querylists/%s", top != NULL ? top : ".", file);
	if (dv_querylist_load(&ql, path, o, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(ql.count, want_count);
	assert_int_equal(ql.skipped, 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (getline(&line, &cap, f) >= 0) {
		expect_q_t q;
		ldns_pkt *pkt = NULL;
		size_t len;
		const uint8_t *m;

		if (!expect_line(line, &q))
			continue;
		assert_true(i < ql.count);
		m = dv_querylist_get(&ql, i, &len);
		assert_int_equal(len, 12 + ldns_rdf_size(q.name) + 4 + (edns ? 11 : 0));
		assert_int_equal(ldns_wire2pkt(&pkt, m, len), LDNS_STATUS_OK);
		assert_int_equal(ldns_pkt_id(pkt), 0);
		assert_int_equal(ldns_pkt_rd(pkt), o->rd);
		assert_false(ldns_pkt_qr(pkt));
		assert_int_equal(ldns_pkt_get_opcode(pkt), LDNS_PACKET_QUERY);
		assert_int_equal(ldns_pkt_qdcount(pkt), 1);
		assert_int_equal(ldns_pkt_ancount(pkt), 0);
		assert_int_equal(ldns_pkt_nscount(pkt), 0);
		assert_int_equal((m[10] << 8) | m[11], edns ? 1 : 0); /* ARCOUNT on the wire */
		ldns_rr *qr = ldns_rr_list_rr(ldns_pkt_question(pkt), 0);
		ldns_rdf *owner = ldns_rr_owner(qr);
		/* exact bytes: case kept as written */
		assert_int_equal(ldns_rdf_size(owner), ldns_rdf_size(q.name));
		assert_memory_equal(ldns_rdf_data(owner), ldns_rdf_data(q.name),
		                    ldns_rdf_size(q.name));
		assert_int_equal(ldns_rr_get_type(qr), q.type);
		assert_int_equal(ldns_rr_get_class(qr), q.cls);
		assert_int_equal(ldns_pkt_edns(pkt), edns);
		if (edns) {
			assert_int_equal(ldns_pkt_edns_udp_size(pkt),
			                 o->edns_bufsize ? o->edns_bufsize : 1232);
			assert_int_equal(ldns_pkt_edns_do(pkt), o->dnssec_ok);
			assert_int_equal(ldns_pkt_edns_version(pkt), 0);
			assert_int_equal(ldns_pkt_edns_extended_rcode(pkt), 0);
		}
		ldns_pkt_free(pkt);
		ldns_rdf_deep_free(q.name);
		i++;
	}
	assert_int_equal(i, ql.count);
	free(line);
	fclose(f);
	dv_querylist_free(&ql);
}

static void test_round_trip(void **state)
{
	dv_querylist_options_t o;

	dv_querylist_options_init(&o);
	round_trip("mixed.txt", &o, 43);
	round_trip("soa.txt", &o, 10000);
	round_trip("www-a.txt", &o, 10000);
	o.rd = false;
	o.edns = true;
	round_trip("mixed.txt", &o, 43);
	o.rd = true;
	o.dnssec_ok = true;
	o.edns_bufsize = 512;
	round_trip("mixed.txt", &o, 43);
	round_trip("www-a.txt", &o, 10000);
}

/* keep_every: the kept entries' bytes and every per-entry array stay together. */
static void test_keep_every(void **state)
{
	(void)state;
	static const char text[] = "a.example A\nbb.example AAAA\nc.example MX\n"
	                           "dddd.example TXT\ne.example NS\n";
	dv_querylist_t ql;
	dv_querylist_options_t o;
	dv_err_t err;
	uint8_t want[2][512];
	size_t wlen[2], len, i;

	dv_querylist_options_init(&o);
	assert_int_equal(dv_querylist_load_buffer(&ql, text, sizeof(text) - 1, SRC, &o, &err), 0);
	assert_int_equal(ql.count, 5);
	/* As a captured input has them: a question length, a time and a client per entry. */
	ql.qlen = malloc(5 * sizeof(*ql.qlen));
	ql.ts_ns = malloc(5 * sizeof(*ql.ts_ns));
	ql.client = malloc(5 * sizeof(*ql.client));
	assert_non_null(ql.qlen);
	assert_non_null(ql.ts_ns);
	assert_non_null(ql.client);
	for (i = 0; i < 5; i++) {
		ql.qlen[i] = (uint16_t)(ql.off[i + 1] - ql.off[i] - 12 - ql.opt_len);
		ql.ts_ns[i] = 1000 * (i + 1);
		ql.client[i] = (uint32_t)(4 - i);
	}
	ql.clients = 5;
	for (i = 0; i < 2; i++) {
		const uint8_t *q = dv_querylist_get(&ql, 1 + 2 * i, &wlen[i]);
		memcpy(want[i], q, wlen[i]);
	}
	assert_int_equal(dv_querylist_keep_every(&ql, 1, 0), -EINVAL);
	assert_int_equal(dv_querylist_keep_every(&ql, 5, 2), -EINVAL);
	assert_int_equal(dv_querylist_keep_every(&ql, 1, 2), 0); /* entries 1 and 3 */
	assert_int_equal(ql.count, 2);
	assert_int_equal(ql.arena_len, wlen[0] + wlen[1]);
	for (i = 0; i < 2; i++) {
		const uint8_t *q = dv_querylist_get(&ql, i, &len);
		assert_int_equal(len, wlen[i]);
		assert_memory_equal(q, want[i], len);
		assert_int_equal(dv_querylist_question_len(&ql, i), len - 12 - ql.opt_len);
		assert_int_equal(ql.ts_ns[i], 1000 * (2 + 2 * i));
		assert_int_equal(ql.client[i], 3 - 2 * i);
	}
	dv_querylist_free(&ql);
}

/* Query i's question name (wire format) equals want (wlen octets, the final 0 included). */
static void expect_name(const dv_querylist_t *ql, size_t i, const char *want, size_t wlen)
{
	size_t len;
	const uint8_t *q = dv_querylist_get(ql, i, &len);

	assert_true(len >= 12 + wlen + 4);
	assert_memory_equal(q + 12, want, wlen);
}

/* A UTF-8 byte order mark (what Windows editors write first) is not part of the first name;
 * an escaped space (`a\ b`) is one character of a name, as in the presentation format of
 * ldns and dnsperf, not a field separator (issue 28 item 12). */
static void test_bom_and_escaped_space(void **state)
{
	static const char bom[] = "\xEF\xBB\xBF"
	                          "example.com A\nb.example AAAA\n";
	dv_querylist_t ql;
	dv_querylist_options_t o;
	dv_err_t err;
	FILE *f;

	(void)state;
	assert_int_equal(load_text(&ql, bom, NULL, &err), 0);
	assert_int_equal(ql.count, 2);
	expect_name(&ql, 0, "\7example\3com", 13);
	dv_querylist_free(&ql);
	dv_querylist_options_init(&o);
	f = fmemopen((void *)bom, sizeof(bom) - 1, "r");
	assert_non_null(f);
	assert_int_equal(dv_querylist_load_stream(&ql, f, "mem", &o, &err), 0);
	fclose(f);
	assert_int_equal(ql.count, 2);
	expect_name(&ql, 0, "\7example\3com", 13);
	dv_querylist_free(&ql);
	/* A BOM on a line of its own is a blank line; one on a later line is not skipped. */
	assert_int_equal(load_text(&ql, "\xEF\xBB\xBF\na.example A\n", NULL, &err), 0);
	assert_int_equal(ql.count, 1);
	assert_int_equal(ql.lines, 2);
	dv_querylist_free(&ql);
	expect_bad("a.example A\n\xEF\xBB\xBF"
	           "b.example FOO\n",
	           "lists/a.txt:2: unknown type 'FOO'");

	/* Escaped spaces and tabs are in the name; an escaped backslash is not an escape. */
	assert_int_equal(load_text(&ql, "a\\ b.example A\nx\\\tz IN TXT\nc\\\\ A\n", NULL, &err),
	                 0);
	assert_int_equal(ql.count, 3);
	expect_name(&ql, 0, "\3a b\7example", 13);
	expect_name(&ql, 1, "\3x\tz", 5);
	expect_name(&ql, 2, "\2c\\", 4);
	dv_querylist_free(&ql);
	expect_bad("a\\ \n", "lists/a.txt:1: missing query type after name 'a\\ '");
	expect_bad("ab\\", "lists/a.txt:1: bad escape in name 'ab\\'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bad_lines),
	    cmocka_unit_test(test_empty_list),
	    cmocka_unit_test(test_skip_bad),
	    cmocka_unit_test(test_io_errors),
	    cmocka_unit_test(test_comments_and_classes),
	    cmocka_unit_test(test_header_default),
	    cmocka_unit_test(test_header_options),
	    cmocka_unit_test(test_edns_options),
	    cmocka_unit_test(test_fast_path_matches_ldns),
	    cmocka_unit_test(test_stream_and_stdin),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_keep_every),
	    cmocka_unit_test(test_bom_and_escaped_space),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
