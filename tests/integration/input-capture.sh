#!/usr/bin/env bash
# A real dnsvolley run against the bundled responder, captured on lo by tcpdump,
# read back by the pcap reader (src/input): every query sent is read, from as many
# clients as the run had sockets, and nothing is malformed.
. "$(dirname "$0")/lib.sh"
DUMP="$top_builddir/tests/helpers/input-dump"
LIST="$top_srcdir/querylists/soa.txt"   # 10,000 queries
[ -x "$DV" ] && [ -x "$RESPONDER" ] && [ -x "$DUMP" ] || fail "binaries not built"
command -v tcpdump >/dev/null || skip "tcpdump not installed (scripts/packages.txt)"
[ "$(id -u)" -eq 0 ] || skip_lacks "capturing on lo needs root"

start_responder R -T 1
PCAP="$TMP/run.pcap"
capture_lo "$PCAP" "udp and dst host 127.0.0.1 and dst port $R_PORT" # only queries to the responder

# Rate-limited so the capture keeps up (its drops would be the capture's, not ours).
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$LIST" -n 1 -c 8 -Q 20000 -t 30 \
	>"$TMP/report" 2>"$TMP/report.err" || fail "dnsvolley exited $?: $(cat "$TMP/report.err")"
capture_end "$(report_field "$TMP/report" "Queries sent")"
stop_responder R
sent=$(report_field "$TMP/report" "Queries sent")
assert_eq "sent" 10000 "$sent"

"$DUMP" -s "127.0.0.1#$R_PORT" "$PCAP" >"$TMP/dump" 2>"$TMP/dump.err" ||
	fail "input-dump: $(cat "$TMP/dump.err")"
read -r _ kind _ queries _ clients _ malformed _ ignored _ records _ span _ <"$TMP/dump"
assert_eq "kind detected" pcap "$kind"
assert_eq "queries read = sent" "$sent" "$queries"
assert_eq "queries read = responder received" "$(resp_count R received)" "$queries"
assert_eq "clients = sockets (source address + port)" 8 "$clients"
assert_eq "malformed" 0 "$malformed"
assert_eq "records" "$sent" "$records"
# At 20,000 q/s the 10,000 queries span at least 9,999 / 20,000 s: the pacer is never
# early, so no load shortens it (0.4 s allows the capture's clock). How close to 0.5 s
# it stays is a speed figure (bench/timing-bounds.sh input-capture).
assert_ge "capture span (ns)" 400000000 "$span"
# Every query read back is the list's SOA query: the type column is 6 throughout.
assert_eq "all SOA" "$sent" "$(tail -n +2 "$TMP/dump" | awk '$3 == 6' | wc -l)"
# Address only: one client (127.0.0.1).
"$DUMP" -a -q -s "127.0.0.1#$R_PORT" "$PCAP" >"$TMP/dump-a"
assert_eq "clients by address" 1 "$(awk '{ print $6 }' "$TMP/dump-a")"
# As -B the same capture is not a query file: refused with a reason, not a crash.
if "$DUMP" -q -k binary "$PCAP" >/dev/null 2>"$TMP/dump-b.err"; then
	fail "a pcap read as -B loaded"
fi
# (-B stops at its first malformed record, as a text list at its first bad line: issue 28)
grep -q ": record 1: " "$TMP/dump-b.err" || fail "no reason given: $(cat "$TMP/dump-b.err")"
echo "PASS: input-capture"
