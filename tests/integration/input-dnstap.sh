#!/usr/bin/env bash
# A dnstap file written by a real unbound (its dnstap output captured by fstrm_capture)
# while dnsvolley queries it: the dnstap reader (src/input) finds a CLIENT_QUERY per
# query sent (less what unbound's lossy dnstap drops), from as many clients as the
# run had sockets, and exactly the frames libfstrm's fstrm_dump sees.
. "$(dirname "$0")/lib.sh"
DUMP="$top_builddir/tests/helpers/input-dump"
[ -x "$DV" ] && [ -x "$DUMP" ] || fail "binaries not built"
command -v unbound >/dev/null || skip "unbound not installed"
command -v fstrm_capture >/dev/null || skip "fstrm_capture not installed (fstrm-bin)"
unbound -V 2>/dev/null | grep -q dnstap || skip "this unbound has no dnstap"

. "$(dirname "$0")/servers/unbound-dnstap.sh"
N=1000
record_unbound_dnstap "$N" # sets TAP; dnsvolley's report: $TMP/report
sent=$(report_field "$TMP/report" "Queries sent")
assert_eq "sent" "$N" "$sent"
"$DUMP" "$TAP" >"$TMP/dump" 2>"$TMP/dump.err" || fail "input-dump: $(cat "$TMP/dump.err")"
head -1 "$TMP/dump"
read -r _ kind _ queries _ clients _ malformed _ ignored _ records _ <"$TMP/dump"
assert_eq "kind detected" dnstap "$kind"
assert_eq "malformed" 0 "$malformed"
# Every frame read, against libfstrm's own reader: its data frames + our STOP frame.
frames=$( (fstrm_dump "$TAP" 2>&1 || true) | grep -c "^Data frame")  # it prints on stderr
assert_eq "frames read = fstrm_dump's data frames + STOP" "$((frames + 1))" "$records"
assert_eq "queries + ignored (responses, STOP) = frames read" "$records" "$((queries + ignored))"
# Lines after the first: "TS_NS CLIENT QTYPE". The run's queries are the A ones, the
# probes TXT. unbound's dnstap is lossy by design (a bounded queue between the
# workers and its writer thread): it drops a few messages even at 1,000 q/s, so
# the CLIENT_QUERY count is at most what was sent and not far below.
a=$(awk 'NR > 1 && $3 == 1' "$TMP/dump" | wc -l)
assert_le "CLIENT_QUERY A messages <= sent" "$sent" "$a"
assert_ge "CLIENT_QUERY A messages >= 97% of sent" "$((sent * 97 / 100))" "$a"
assert_eq "every query is an A or a TXT probe" "$queries" \
	"$(awk 'NR > 1 && ($3 == 1 || $3 == 16)' "$TMP/dump" | wc -l)"
assert_eq "their clients = the run's sockets" 4 \
	"$(awk 'NR > 1 && $3 == 1 { print $2 }' "$TMP/dump" | sort -u | wc -l)"
# AUTH_QUERY: a resolver logs none.
if "$DUMP" -q -A "$TAP" >/dev/null 2>"$TMP/auth.err"; then fail "AUTH_QUERY found in a resolver's log"; fi
grep -q "no queries" "$TMP/auth.err" || fail "$(cat "$TMP/auth.err")"
echo "PASS: input-dnstap"
