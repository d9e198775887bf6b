#!/usr/bin/env bash
# genlist.sh: dnsvolley-genlist end to end: outputs, dedupe, seeded shuffle, errors and
# exit codes, and that the bundled querylists/ are exactly what the generator makes.
. "$(dirname "$0")/lib.sh"

[ -x "$GENLIST" ] || fail "no $GENLIST"
Q="$top_srcdir/querylists"

cat >"$TMP/dom.txt" <<'DOM'
# test domains
example.com
Example.COM.
b.org   # trailing comment

c.net
DOM

# SOA and www A lists, to files and to stdout
"$GENLIST" --soa "$TMP/soa.txt" --www-a "$TMP/www.txt" "$TMP/dom.txt"
assert_eq "soa list" "$(printf 'example.com SOA\nExample.COM. SOA\nb.org SOA\nc.net SOA')" "$(cat "$TMP/soa.txt")"
assert_eq "www-a list" "$(printf 'www.example.com A\nwww.Example.COM. A\nwww.b.org A\nwww.c.net A')" "$(cat "$TMP/www.txt")"
out=$("$GENLIST" --dedupe --type MX:mail=- "$TMP/dom.txt")
assert_eq "dedupe + --type to stdout" "$(printf 'mail.example.com MX\nmail.b.org MX\nmail.c.net MX')" "$out"
out=$(grep -v '^#' "$TMP/dom.txt" | "$GENLIST" --soa - -)
assert_eq "stdin input lines" 4 "$(printf '%s\n' "$out" | wc -l)"

# seeded shuffle: same seed, same order; a permutation of the input
"$GENLIST" --seed 7 --soa "$TMP/s1.txt" "$Q/domains.txt"
"$GENLIST" --shuffle --seed 7 --soa "$TMP/s2.txt" "$Q/domains.txt"
"$GENLIST" --seed 8 --soa "$TMP/s3.txt" "$Q/domains.txt"
cmp -s "$TMP/s1.txt" "$TMP/s2.txt" || fail "same seed gave different orders"
cmp -s "$TMP/s1.txt" "$TMP/s3.txt" && fail "different seeds gave the same order"
cmp -s "$TMP/s1.txt" "$Q/soa.txt" && fail "shuffle left the order unchanged"
assert_eq "shuffle is a permutation" "$(LC_ALL=C sort "$Q/soa.txt" | md5sum)" "$(LC_ALL=C sort "$TMP/s1.txt" | md5sum)"

# the committed lists are reproducible
"$top_srcdir/querylists/make-domains.sh" >"$TMP/domains.txt"
cmp "$TMP/domains.txt" "$Q/domains.txt" || fail "make-domains.sh no longer makes querylists/domains.txt"
"$GENLIST" --soa "$TMP/soa2.txt" --www-a "$TMP/www2.txt" "$Q/domains.txt"
cmp "$TMP/soa2.txt" "$Q/soa.txt" || fail "querylists/soa.txt differs from the generator's output"
cmp "$TMP/www2.txt" "$Q/www-a.txt" || fail "querylists/www-a.txt differs from the generator's output"
assert_eq "domains" 10000 "$(wc -l <"$Q/domains.txt")"

# errors: exit 2 with FILE:LINE, and no output file made
printf 'a.com\n# c\nbad..com\n' >"$TMP/bad.txt"
rc=0
"$GENLIST" --soa "$TMP/never.txt" "$TMP/bad.txt" 2>"$TMP/err" || rc=$?
assert_eq "bad line exit" 2 "$rc"
assert_eq "bad line message" "dnsvolley-genlist: $TMP/bad.txt:3: empty label in domain 'bad..com'" "$(cat "$TMP/err")"
[ ! -e "$TMP/never.txt" ] || fail "output written despite a bad input line"

printf 'a.com extra\n' >"$TMP/bad2.txt"
rc=0
"$GENLIST" --soa - "$TMP/bad2.txt" >/dev/null 2>"$TMP/err" || rc=$?
assert_eq "extra field exit" 2 "$rc"
assert_eq "extra field message" "dnsvolley-genlist: $TMP/bad2.txt:1: stray extra field (expected one domain per line): 'extra'" "$(cat "$TMP/err")"

l63=$(printf 'x%.0s' $(seq 63))
printf 'ok.com\n%s.%s.%s.%s\n' "$l63" "$l63" "$l63" "${l63:0:58}" >"$TMP/long.txt"
rc=0
"$GENLIST" --soa "$TMP/long-soa.txt" --www-a "$TMP/long-www.txt" "$TMP/long.txt" 2>"$TMP/err" || rc=$?
assert_eq "too long with www. exit" 2 "$rc"
grep -q "^dnsvolley-genlist: $TMP/long.txt:2: name longer than 255 octets with prefix 'www.'" "$TMP/err" || fail "message: $(cat "$TMP/err")"
[ ! -e "$TMP/long-soa.txt" ] || fail "output written before all outputs were checked"

rc=0; "$GENLIST" --soa - "$TMP/missing.txt" 2>"$TMP/err" || rc=$?
assert_eq "missing input exit" 2 "$rc"
assert_eq "missing input message" "dnsvolley-genlist: $TMP/missing.txt: No such file or directory" "$(cat "$TMP/err")"
rc=0; "$GENLIST" "$TMP/dom.txt" 2>/dev/null || rc=$?
assert_eq "no output exit" 2 "$rc"
rc=0; "$GENLIST" --type FOO=- "$TMP/dom.txt" 2>"$TMP/err" || rc=$?
assert_eq "bad type exit" 2 "$rc"
assert_eq "bad type message" "dnsvolley-genlist: unknown query type 'FOO'" "$(cat "$TMP/err")"
rc=0; "$GENLIST" --soa "$TMP/nodir/x.txt" "$TMP/dom.txt" 2>/dev/null || rc=$?
assert_eq "unwritable output exit" 1 "$rc"
"$GENLIST" --help | grep -q -- '--www-a FILE' || fail "--help"
echo "PASS"
