#!/usr/bin/env bash
# Replaying a dnstap file (issue 17): a real unbound logs its CLIENT_QUERY messages
# (as in input-dnstap.sh) while dnsvolley queries it from 4 sockets; the file is then
# replayed with --timing original against the responder: every CLIENT_QUERY in it is
# sent (exactly the count the reader finds), from one socket per logged client, and
# the responder receives each.
. "$(dirname "$0")/lib.sh"
DUMP="$top_builddir/tests/helpers/input-dump"
[ -x "$DV" ] && [ -x "$DUMP" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
command -v unbound >/dev/null || skip "unbound not installed"
command -v fstrm_capture >/dev/null || skip "fstrm_capture not installed (fstrm-bin)"
command -v kdig >/dev/null || skip "kdig not installed (knot-dnsutils)"
unbound -V 2>/dev/null | grep -q dnstap || skip "this unbound has no dnstap"

. "$(dirname "$0")/servers/unbound-dnstap.sh"
N=1000
record_unbound_dnstap "$N" # sets TAP; dnsvolley's report: $TMP/report
assert_eq "sent to unbound" "$N" "$(report_field "$TMP/report" "Queries sent")"
"$DUMP" -q "$TAP" >"$TMP/dump" 2>"$TMP/dump.err" || fail "input-dump: $(cat "$TMP/dump.err")"
read -r _ kind _ queries _ clients _ malformed _ <"$TMP/dump"
assert_eq "kind" dnstap "$kind"
assert_ge "CLIENT_QUERY messages logged (unbound's dnstap may drop a few)" $((N * 97 / 100)) "$queries"

start_responder R -T 1
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TAP" --timing original --speed 4 -t 30 \
	>"$TMP/replay" 2>"$TMP/replay.err" || fail "replay exited $?: $(cat "$TMP/replay.err")"
stop_responder R
cat "$TMP/replay"
grep -q "Replay input:         dnstap, 0 malformed" "$TMP/replay" || fail "input not reported"
assert_eq "replayed: every CLIENT_QUERY sent" "$queries" "$(report_field "$TMP/replay" "Queries sent")"
assert_eq "replayed: completed" "$queries" "$(report_field "$TMP/replay" "Queries completed")"
assert_eq "replayed: responder received" "$queries" "$(resp_count R received)"
assert_eq "clients replayed = clients logged" "$clients" "$(report_field "$TMP/replay" "Clients replayed")"
echo "PASS: replay-dnstap"
