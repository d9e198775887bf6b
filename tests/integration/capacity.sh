#!/usr/bin/env bash
# dnsvolley capacity: the search's verdicts and their structure against the responder's
# --capacity N, at any machine speed; the intended-time latency shows a server stall.
# How close the figure comes to N (within 3% on an idle machine) is a speed figure:
# bench/capacity-responder.sh measures it (doc/performance.md). Nothing here skips for a
# busy machine: a search the generator could not finish says so, and what it says is
# checked.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"

# capacity_of FILE: the figure of the "Capacity: N qps" line (empty when there is none).
capacity_of() { sed -n 's/^Capacity: \([0-9][0-9]*\) qps.*/\1/p' "$1"; }
# verdict NAME N FILE: the search ended on one "Capacity:" line, a figure or
# "generator-bound: at least X"; either number is no more than N + 3%. That bound holds at
# any speed: the responder answers at most N a second by its own clock, so a step offered
# over N + 3% loses over 3% of it whatever the load (a generator that fell behind its
# schedule makes the step generator-bound, never a pass). The lower bound (the figure is
# N within 3%) needs the generator and server on time: bench/capacity-responder.sh.
verdict() {
	local found
	assert_eq "$1: one Capacity line" 1 "$(grep -c '^Capacity' "$3")"
	if grep -q '^Capacity: generator-bound' "$3"; then
		echo "generator-bound (busy machine): $(grep '^Capacity' "$3")"
		found=$(sed -n 's/.*at least \([0-9]*\) qps.*/\1/p' "$3")
		assert_le "$1: at least" $(($2 * 103 / 100)) "${found:-0}"
		return
	fi
	found=$(capacity_of "$3")
	[ -n "$found" ] || fail "$1: no capacity found: $(cat "$3")"
	assert_ge "$1: a figure" 1 "$found"
	assert_le "$1: no more than the server's capacity + 3%" $(($2 * 103 / 100)) "$found"
}

start_responder C20 -T 1 --capacity 20000
"$DV" capacity --no-progress -s 127.0.0.1 -p "$C20_PORT" -d "$LIST" --step 1 --settle 0.3 \
	--from 8000 --plot "$TMP/plot" >"$TMP/loss" 2>&1 || fail "capacity failed: $(cat "$TMP/loss")"
# The hockey stick: a data line per step, and the chart.
assert_eq "plot data lines = steps" "$(grep -c '^\[Capacity\] step' "$TMP/loss")" \
	"$(grep -vc '^#' "$TMP/plot/capacity-1.dat")"
[ -s "$TMP/plot/capacity.png" ] || fail "no capacity.png"
verdict "20000 loss SLO" 20000 "$TMP/loss"
# Every query was timed from its arrival, by the kernel's stamp: the responder waited for
# the kernel to switch its receive stamps on before it wrote its port file.
stop_responder C20
assert_eq "20000: queries without the kernel's arrival stamp" 0 "$(resp_count C20 unstamped)"
# The p99 SLO: a deeper queue (1024 queries, 51 ms at 20,000 qps): a step offered over
# the capacity fills it, and every answer then waits the queue's length, over the 20 ms
# SLO, at any speed.
start_responder C20B -T 1 --capacity 20000 --capacity-backlog 1024
"$DV" capacity --no-progress -s 127.0.0.1 -p "$C20B_PORT" -d "$LIST" --step 2 --settle 0.3 \
	--from 8000 --max-loss 100% --max-p99 20ms >"$TMP/p99" 2>&1 || fail "capacity failed: $(cat "$TMP/p99")"
verdict "20000 p99 SLO" 20000 "$TMP/p99"
stop_responder C20B
assert_eq "20000 p99: queries without the kernel's arrival stamp" 0 "$(resp_count C20B unstamped)"
grep -q '^Capacity: generator-bound' "$TMP/p99" || grep -q 'FAIL (p99 ' "$TMP/p99" ||
	fail "p99 SLO: no step failed on latency: $(cat "$TMP/p99")"
start_responder FAST -T 1

# Generator-bound: one thread cannot offer 3,000,000 qps; never a server figure.
"$DV" capacity --no-progress -s 127.0.0.1 -p "$FAST_PORT" -d "$LIST" -T 1 --step 0.5 --settle 0 \
	--from 3000000 --to 3000000 >"$TMP/gb" 2>&1 || fail "capacity failed: $(cat "$TMP/gb")"
grep -q '^Capacity: generator-bound' "$TMP/gb" || fail "no generator-bound result: $(cat "$TMP/gb")"
assert_eq "generator-bound: no server figure" "" "$(capacity_of "$TMP/gb")"
# A generator-bound step is run twice more before it ends the search: the search ends on
# three generator-bound steps in a row and no run of them is longer. (On a loaded
# machine a step can instead fill the window and fail on loss; the search then goes on
# lower, so the number of steps varies, never this rule.)
grep '^\[Capacity\] step [0-9]*: ' "$TMP/gb" | sed 's/.*: \(generator-bound\) (.*/G/; t; s/.*/o/' |
	tr -d '\n' >"$TMP/gb.seq"
echo "steps (G = generator-bound): $(cat "$TMP/gb.seq")"
[[ $(cat "$TMP/gb.seq") =~ GGG$ ]] || fail "the search did not end on three generator-bound steps"
[[ $(cat "$TMP/gb.seq") != *GGGG* ]] || fail "more than two retries of a generator-bound step"

# Coordinated omission: the responder is stopped before a -Q 10000 run starts and kept
# stopped 0.5 s after dnsvolley's first query reached its socket (wait_queued). That
# query waits at least 0.5 s for its answer whatever the load, and its latency from the
# intended send time shows it: the maximum is at least 0.5 s (0.45 s allowed for the
# clocks). The percentiles depend on how many queries the generator sent in the stall (a
# speed figure, bench/capacity-responder.sh).
# max_intended FILE: the maximum latency from the intended send time, in ms.
max_intended() {
	local m
	m=$(sed -n 's/.*From intended send (s):.*max \([0-9.]*\).*/\1/p' "$1")
	[ -n "$m" ] || fail "no intended-time line: $(cat "$1")"
	awk -v v="$m" 'BEGIN { printf "%d", v * 1000 }'
}
start_responder CO -T 1
kill -STOP "$CO_PID"
"$DV" --no-progress -s 127.0.0.1 -p "$CO_PORT" -d "$LIST" -Q 10000 -l 2 >"$TMP/co" 2>&1 &
dv=$!
wait_queued udp "$CO_PORT"
sleep 0.5
kill -CONT "$CO_PID"
wait "$dv" || fail "dnsvolley failed: $(cat "$TMP/co")"
# Load-independent floor: the server is stopped after a query is queued at it and
# resumed no sooner than 0.5 s later, so that query's answer comes at least 0.5 s after
# its intended send; a busy machine only adds to it (450: the histogram's bucket width).
assert_ge "stalled 0.5 s: max latency from the intended send (ms)" 450 "$(max_intended "$TMP/co")"
# The same over TCP (-m tcp -Q 5000, a window of 2 x 100): once the window is full the
# queries due are held back until the responder runs again; each keeps its intended send
# time, so the stall shows in the maximum, and the held ones count in sent_behind: of
# the ~2,500 due in the stall at most 200 (the window) went out on time whatever the
# generator's speed (a generator too slow to fill the window was itself over 2 ms late),
# so at least 15 (a tenth of a percent of the run) is a bound no load can break.
start_responder COT -T 1 --tcp-port 0 --tcp-port-file "$TMP/COT.tcp"
kill -STOP "$COT_PID"
"$DV" --no-progress -m tcp -s 127.0.0.1 -p "$(cat "$TMP/COT.tcp")" -d "$LIST" -Q 5000 -l 3 \
	-c 2 -q 100 >"$TMP/cot" 2>&1 &
dv=$!
wait_queued tcp "$(cat "$TMP/COT.tcp")"
sleep 0.5
kill -CONT "$COT_PID"
wait "$dv" || fail "dnsvolley -m tcp failed: $(cat "$TMP/cot")"
# Load-independent floor: the server is stopped after a query is queued at it and
# resumed no sooner than 0.5 s later, so that query's answer comes at least 0.5 s after
# its intended send; a busy machine only adds to it (450: the histogram's bucket width).
assert_ge "tcp: stalled 0.5 s: max latency from the intended send (ms)" 450 "$(max_intended "$TMP/cot")"
behind=$(sed -n 's/^ *Sent behind schedule: *\([0-9]*\) .*/\1/p' "$TMP/cot")
assert_ge "tcp: sent behind schedule" 15 "${behind:-0}"
assert_eq "tcp: lost" 0 "$(report_field "$TMP/cot" "Queries lost")"
# An unpaced run has no intended time (the line is absent).
"$DV" --no-progress -s 127.0.0.1 -p "$CO_PORT" -d "$LIST" -n 1 >"$TMP/unpaced" 2>&1
assert_eq "unpaced: no intended line" 0 "$(grep -c 'From intended send' "$TMP/unpaced" || true)"
