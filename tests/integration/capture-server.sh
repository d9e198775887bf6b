#!/usr/bin/env bash
# --capture-server ADDR[:PORT]: a capture of traffic to a server on a port other than 53
# replays. tcpdump on lo records a run of 500 queries against the responder on its high
# port; the capture replayed with --capture-server 127.0.0.1:PORT sends and completes
# all 500, exactly. Without the option (port 53) or with another address nothing in the
# capture is a query; a bad value is a usage error.
. "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || skip "tcpdump not installed (scripts/packages.txt)"
[ "$(id -u)" -eq 0 ] || skip_lacks "capturing on lo needs root"

start_responder R -T 1
head -500 "$top_srcdir/querylists/soa.txt" >"$TMP/list.txt"

capture_lo "$TMP/cap.pcap" "udp and dst host 127.0.0.1 and dst port $R_PORT"
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/list.txt" -Q 5000 -t 30 >"$TMP/run" 2>&1 ||
	fail "the captured run: $(cat "$TMP/run")"
assert_eq "captured run: completed" 500 "$(report_field "$TMP/run" "Queries completed")"
capture_end 500
assert_eq "packets captured" 500 "$(awk '/packets captured/ { print $1 }' "$TMP/tcpdump.err")"

# The replay, to the same responder: every captured query sent and answered.
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/cap.pcap" --capture-server "127.0.0.1:$R_PORT" \
	-t 30 --json "$TMP/r.json" >"$TMP/replay" 2>&1 || fail "replay: $(cat "$TMP/replay")"
assert_eq "replay with --capture-server: sent completed lost" "500 500 0" "$(jc "$TMP/r.json" sent completed lost)"

# Port 53 (the default) and another address take nothing from this capture.
for cs in "" "--capture-server 127.0.0.2:$R_PORT" "--capture-server 127.0.0.1"; do
	rc=0
	# shellcheck disable=SC2086
	"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/cap.pcap" $cs -t 1 >"$TMP/none" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "'$cs' replayed queries the filter should not take: $(cat "$TMP/none")"
	grep -q "no queries" "$TMP/none" || fail "'$cs': $(cat "$TMP/none")"
	echo "ok: '${cs:-no --capture-server}' takes no query from the capture (exit $rc)"
done
rc=0
"$DV" --no-progress -s 127.0.0.1 -d "$TMP/cap.pcap" --capture-server nope:99999 >"$TMP/bad" 2>&1 || rc=$?
assert_eq "bad --capture-server: exit" 2 "$rc"
grep -q -- "--capture-server: 'nope:99999' is not ADDR\[:PORT\]" "$TMP/bad" || fail "bad value: $(cat "$TMP/bad")"
echo PASS
