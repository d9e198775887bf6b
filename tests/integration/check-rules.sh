#!/usr/bin/env bash
# check-rules: scripts/check-rules fails on each kind of hand-written DNS wire outside
# src/base/, on a call of abort() anywhere in src/ (a member named abort is no call), and on
# a non-static function nobody calls, naming file, line and rule; it passes a tree that goes
# through base/ and marks its test-only function.
. "$(dirname "$0")/lib.sh"
CHECK="$top_srcdir/scripts/check-rules"

tree="$TMP/tree"
mkdir -p "$tree/src/base" "$tree/src/engine" "$tree/src/input" "$tree/bench"
# base/ may spell everything.
cat >"$tree/src/base/dns.h" <<'EOF'
#define DV_DNS_HEADER_LEN 12
#define DV_DNS_QR         0x80
#define DV_DNS_PTR        0xc0
#define DV_DNS_TYPE_OPT   41
static inline unsigned get16(const unsigned char *p) { return p[0] << 8 | p[1]; }
EOF
cat >"$tree/src/engine/good.h" <<'EOF'
int dv_good_used(const unsigned char *m, unsigned long len);
/* Only the tests call it (tests). */
int dv_good_seam(struct dist *d);
EOF
cat >"$tree/src/engine/good.c" <<'EOF'
/* good: reads the header through base/; 12 and 0x80 in comments do not count. */
#include "engine/good.h"

static const char *why = "len < 12 and 0xc0 in a string do not count";

int dv_good_used(const unsigned char *m, unsigned long len)
{
	unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2]; /* base64 */
	return len < DV_DNS_HEADER_LEN || (m[2] & DV_DNS_QR) != 0 || why == 0 || v == 0;
}

int dv_good_seam(struct dist *d)
{
	return d->abort(d) + d->s.abort + (int)sizeof("abort()"); /* abort() in a comment */
}
EOF
cat >"$tree/bench/use.c" <<'EOF'
int bench_main(void)
{
	return dv_good_used(0, 0);
}
EOF

"$CHECK" "$tree/src" >"$TMP/clean.out" 2>&1 || fail "a clean tree failed: $(cat "$TMP/clean.out")"
[ ! -s "$TMP/clean.out" ] || fail "a clean tree printed: $(cat "$TMP/clean.out")"

# One offence per line, each a rule of its own.
cat >"$tree/src/input/bad.c" <<'EOF'
#include "input/bad.h"
#define DNS_TYPE_OPT 41
static unsigned get16(const unsigned char *p)
{
	return p[0] << 8 | p[1];
}
static unsigned long be32(const unsigned char *p)
{
	return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}
int dv_bad_parse(const unsigned char *m, unsigned long len, unsigned t)
{
	if (len < 12)
		return -1;
	if (!(m[2] & 0x80))
		return -2;
	if ((m[12] & 0xc0) == 0xc0)
		return -3;
	if (t == 41)
		return -4;
	if (m[5] != 1)
		return -5;
	if (m == 0)
		abort();
	return get16(m) + (int)be32(m) + (m[3] & 0x0f);
}
EOF
cat >"$tree/src/input/bad.h" <<'EOF'
int dv_bad_parse(const unsigned char *m, unsigned long len, unsigned t);
EOF
rc=0
"$CHECK" "$tree/src" >"$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc on a bad tree, want 1"
cat >"$TMP/want" <<'EOF'
src/input/bad.c:2: dns-define: #define DNS_TYPE_OPT 41
src/input/bad.c:2: dns-opt: #define DNS_TYPE_OPT 41
src/input/bad.c:3: helper: get16()
src/input/bad.c:5: be16: p[0] << 8 | p[1]
src/input/bad.c:7: helper: be32()
src/input/bad.c:9: be32: (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3]
src/input/bad.c:13: dns-header: len < 12
src/input/bad.c:15: dns-flags: [2] & 0x80
src/input/bad.c:17: dns-ptr: 0xc0
src/input/bad.c:17: dns-ptr: 0xc0
src/input/bad.c:19: dns-opt: == 41
src/input/bad.c:21: dns-count: m[5] != 1
src/input/bad.c:24: abort: abort()
src/input/bad.c:25: dns-flags: [3] & 0x0f
src/input/bad.c:11: dead: dv_bad_parse() is not static and has no caller in src/ or bench/ (make it static or remove it)
EOF
diff -u "$TMP/want" "$TMP/bad.out" || fail "check-rules did not report exactly the offences"

# A caller in src/ clears the dead function; the test-only marker is what keeps the seam.
cat >"$tree/src/engine/user.c" <<'EOF'
static int use(void)
{
	return dv_bad_parse(0, 0, 0);
}
EOF
rm "$tree/src/input/bad.c"
cat >"$tree/src/input/bad.c" <<'EOF'
int dv_bad_parse(const unsigned char *m, unsigned long len, unsigned t)
{
	return m == 0 && len == 0 && t == 0;
}
EOF
"$CHECK" "$tree/src" >"$TMP/called.out" 2>&1 || fail "a called function was flagged: $(cat "$TMP/called.out")"
sed -i 's/ (tests)\././' "$tree/src/engine/good.h"
rc=0
"$CHECK" "$tree/src" >"$TMP/seam.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "an unmarked test-only function passed (exit $rc)"
grep -qx 'src/engine/good.c:[0-9]*: dead: dv_good_seam() is not static and has no caller in src/ or bench/ (make it static or remove it)' \
	"$TMP/seam.out" || fail "dv_good_seam not reported: $(cat "$TMP/seam.out")"
[ "$(wc -l <"$TMP/seam.out")" -eq 1 ] || fail "more than the seam reported: $(cat "$TMP/seam.out")"
echo "check-rules: clean tree passes; 14 offences and 1 dead function reported exactly"
