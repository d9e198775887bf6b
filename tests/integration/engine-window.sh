#!/usr/bin/env bash
# The outstanding window and the sockets: -q is a hard bound, -c spreads source ports.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"
f() { report_field "$1" "$2"; }

# -q 10 against answers delayed by 10 ms: never more than 10 in flight, so at most
# ~1,000 qps. How near 1,000 it comes needs the responder's 10 ms timers and dnsvolley's
# wake-ups on time (a speed figure: bench/timing-bounds.sh engine-window).
start_responder R -T 1 --delay 10
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$LIST" -n 1 -l 2 -q 10 -c 4 >"$TMP/q10" 2>&1 ||
	fail "dnsvolley failed: $(cat "$TMP/q10")"
stop_responder R
peak=$(f "$TMP/q10" "Peak in flight")
assert_eq "q10: peak in flight" 10 "$peak"
qps=$(f "$TMP/q10" "Queries per second")
qps_int=${qps%.*}
# 10 in flight / 10 ms = 1,000 qps at most: the delay is a floor under every round trip,
# so load can only lower the rate, never raise it past timer rounding (independent of
# load). That the window is used is the peak above.
assert_le "q10: qps" 1010 "$qps_int"
assert_eq "q10: lost" 0 "$(f "$TMP/q10" "Queries lost")"

# -c 64: the responder sees 64 distinct source ports.
start_responder P -T 1
"$DV" --no-progress -s 127.0.0.1 -p "$P_PORT" -d "$LIST" -n 2 -c 64 -q 256 >"$TMP/c64" 2>&1 ||
	fail "dnsvolley failed: $(cat "$TMP/c64")"
stop_responder P
assert_eq "c64: source ports seen by the responder" 64 "$(resp_count P source-ports)"
assert_eq "c64: completed" 20000 "$(f "$TMP/c64" "Queries completed")"

# -T 2 -c 8: two workers share the list exactly once per pass.
start_responder T -T 1
"$DV" --no-progress -s 127.0.0.1 -p "$T_PORT" -d "$LIST" -n 3 -c 8 -T 2 -q 100 >"$TMP/t2" 2>&1 ||
	fail "dnsvolley failed: $(cat "$TMP/t2")"
stop_responder T
assert_eq "T2: sent" 30000 "$(f "$TMP/t2" "Queries sent")"
assert_eq "T2: completed" 30000 "$(f "$TMP/t2" "Queries completed")"
assert_eq "T2: responder received" 30000 "$(resp_count T received)"
assert_eq "T2: source ports" 8 "$(resp_count T source-ports)"

# IPv6 loopback.
if ip -6 addr show lo 2>/dev/null | grep -q '::1'; then
	pf="$TMP/v6.port"
	"$RESPONDER" -a ::1 -p 0 --port-file "$pf" >"$TMP/v6.out" 2>"$TMP/v6.err" &
	started v6 $! "$pf" responder
	"$DV" --no-progress -s "[::1]:$v6_PORT" -d "$LIST" -n 1 >"$TMP/v6" 2>&1 ||
		fail "IPv6 run failed: $(cat "$TMP/v6")"
	kill -INT "$v6_PID"
	wait "$v6_PID" || true
	assert_eq "v6: completed" 10000 "$(f "$TMP/v6" "Queries completed")"
fi
echo "engine-window: all assertions hold"
