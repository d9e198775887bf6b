#!/usr/bin/env bash
# Hostile servers (tests/helpers/hostile): floods of unsolicited answers, answers from
# another port or address, oversized / zero-length / truncated datagrams, silence.
# Every count is exact: the helper sends its extra datagrams before the real answer,
# so all of them are queued at dnsvolley before the query they ride on completes.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt" # 10,000 queries
HOSTILE="$top_builddir/tests/helpers/hostile"
MAXRSS="$top_builddir/tests/helpers/maxrss"
[ -x "$DV" ] && [ -x "$HOSTILE" ] && [ -x "$MAXRSS" ] || fail "binaries not built"
f() { report_field "$1" "$2"; }

# start_hostile NAME [modes...]: like start_responder, for the hostile helper.
start_hostile() {
	local name=$1
	shift
	local pf="$TMP/$name.port"
	rm -f "$pf" # a name used again must not read the previous helper's port
	"$HOSTILE" -a 127.0.0.1 -p 0 --port-file "$pf" --max-seconds 120 "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	started "$name" $! "$pf" hostile
}
run() { # OUT ARGS...
	local out=$1
	shift
	timeout 120 "$DV" --no-progress "$@" >"$out" 2>"$out.err" ||
		fail "dnsvolley $* exited $?: $(cat "$out.err")"
}
run_unanswered() { # OUT ARGS...: a run in which nothing may be answered exits 4 (no answers)
	local out=$1 rc=0
	shift
	timeout 120 "$DV" --no-progress "$@" >"$out" 2>"$out.err" || rc=$?
	[ "$rc" = 4 ] || fail "dnsvolley $* exited $rc, not 4 (no answers): $(cat "$out.err")"
	grep -q "NO ANSWERS" "$out" || fail "dnsvolley $*: no NO ANSWERS line"
}

# 1. A flood: 5 unsolicited (well-formed, unmatched) answers per query, from the
#    server's own address and port: all counted unexpected, every real answer matched.
#    The runs that count every answer completed use -t 10: an answered query may not be
#    declared lost because a busy machine delayed the client (-t 2 was close under a hog).
start_hostile F --flood 5
run "$TMP/flood" -s 127.0.0.1 -p "$F_PORT" -d "$LIST" -n 1 -q 50 -c 4 -t 10
stop_responder F
assert_eq "flood: sent" 10000 "$(f "$TMP/flood" "Queries sent")"
assert_eq "flood: completed" 10000 "$(f "$TMP/flood" "Queries completed")"
assert_eq "flood: lost" 0 "$(f "$TMP/flood" "Queries lost")"
assert_eq "flood: unexpected = 5 x sent" 50000 "$(f "$TMP/flood" "Unexpected answers")"
assert_eq "flood: unexpected = helper's flood" "$(resp_count F extra)" "$(f "$TMP/flood" "Unexpected answers")"
assert_eq "flood: malformed" 0 "$(f "$TMP/flood" "Malformed answers")"

# 2. Memory under a flood is flat: peak RSS of a 10x longer flooded run (600,000
#    datagrams instead of 60,000) within 10% + 1 MiB of the short one.
start_hostile S --flood 5
"$MAXRSS" "$TMP/short.rss" "${RSS_ENV[@]}" timeout 120 "$DV" --no-progress -s 127.0.0.1 -p "$S_PORT" -d "$LIST" \
	-n 1 -q 50 -c 4 -t 10 >"$TMP/short" 2>&1 || fail "short flood: $(cat "$TMP/short")"
"$MAXRSS" "$TMP/long.rss" "${RSS_ENV[@]}" timeout 120 "$DV" --no-progress -s 127.0.0.1 -p "$S_PORT" -d "$LIST" \
	-n 10 -q 50 -c 4 -t 10 >"$TMP/long" 2>&1 || fail "long flood: $(cat "$TMP/long")"
stop_responder S
assert_eq "long flood: completed" 100000 "$(f "$TMP/long" "Queries completed")"
assert_eq "long flood: unexpected" 500000 "$(f "$TMP/long" "Unexpected answers")"
short_kb=$(cat "$TMP/short.rss")
long_kb=$(cat "$TMP/long.rss")
echo "peak RSS: short flood ${short_kb} KiB, long flood ${long_kb} KiB"
assert_le "long flood: peak RSS (KiB)" $((short_kb * 110 / 100 + 1024)) "$long_kb"

# 3. Answers only from another port, or only from another address: never credited.
#    (dnsvolley's sockets are connected, so the kernel drops them; nothing may count.)
for mode in other-port other-addr; do
	start_hostile W "--$mode"
	run_unanswered "$TMP/$mode" -s 127.0.0.1 -p "$W_PORT" -d "$LIST" -q 4 -c 2 -t 0.2 -l 1
	stop_responder W
	sent=$(f "$TMP/$mode" "Queries sent")
	assert_ge "$mode: sent" 4 "$sent"
	assert_eq "$mode: helper received = sent" "$sent" "$(resp_count W received)"
	assert_eq "$mode: helper answered every one from the wrong source" "$sent" "$(resp_count W wrong-source)"
	assert_eq "$mode: completed" 0 "$(f "$TMP/$mode" "Queries completed")"
	assert_eq "$mode: lost = sent" "$sent" "$(f "$TMP/$mode" "Queries lost")"
	assert_eq "$mode: unexpected" 0 "$(f "$TMP/$mode" "Unexpected answers")"
done

# 4. The right answer plus copies from another port and another address: each query
#    completed once, the copies counted nowhere.
start_hostile C --wrong-source
run "$TMP/copies" -s 127.0.0.1 -p "$C_PORT" -d "$LIST" -n 1 -q 50 -c 4 -t 10
stop_responder C
assert_eq "copies: completed" 10000 "$(f "$TMP/copies" "Queries completed")"
assert_eq "copies: helper's wrong-source copies" 20000 "$(resp_count C wrong-source)"
assert_eq "copies: unexpected" 0 "$(f "$TMP/copies" "Unexpected answers")"
assert_eq "copies: lost" 0 "$(f "$TMP/copies" "Queries lost")"

# 5. Every answer padded to 65,507 octets (the largest UDP payload): parsed, not cut.
start_hostile O --oversized
run "$TMP/over" -s 127.0.0.1 -p "$O_PORT" -d "$LIST" -n 1 -q 4 -c 2 -t 10
stop_responder O
assert_eq "oversized: completed" 10000 "$(f "$TMP/over" "Queries completed")"
assert_eq "oversized: malformed" 0 "$(f "$TMP/over" "Malformed answers")"
grep -q 'Average packet size:  request 33, response 65507$' "$TMP/over" ||
	fail "oversized: response size not 65507: $(grep 'packet size' "$TMP/over")"

# 6. Junk before every answer: 65,507-octet malformed, zero-length, truncated copies.
for mode in oversized-junk empty truncated; do
	start_hostile J "--$mode"
	run "$TMP/$mode" -s 127.0.0.1 -p "$J_PORT" -d "$LIST" -n 1 -q 4 -c 2 -t 10
	stop_responder J
	assert_eq "$mode: completed" 10000 "$(f "$TMP/$mode" "Queries completed")"
	assert_eq "$mode: malformed" 10000 "$(f "$TMP/$mode" "Malformed answers")"
	assert_eq "$mode: malformed = helper's junk" "$(resp_count J extra)" "$(f "$TMP/$mode" "Malformed answers")"
	assert_eq "$mode: unexpected" 0 "$(f "$TMP/$mode" "Unexpected answers")"
done

# 7. A target that never answers: the run ends at the limit plus the timeout (queries
#    go out at 20 qps until the 2 s limit; the last ones time out about 1 s later).
start_hostile N --silent
t0=$(date +%s%N)
run_unanswered "$TMP/silent" -s 127.0.0.1 -p "$N_PORT" -d "$LIST" -Q 20 -q 100 -c 2 -t 1 -l 2
t1=$(date +%s%N)
elapsed_ms=$(((t1 - t0) / 1000000))
# Load-independent lower bound: the last query goes out no earlier than its schedule
# (1.95 s) and its 1 s timeout must pass before the run ends, so no load can make it end
# sooner. The upper bound only tells "ended" from a hang (the run takes 3 s idle; load
# adds seconds, not a minute): a liveness check, not a speed one.
assert_ge "silent -l 2 -t 1: elapsed ms" 2900 "$elapsed_ms"
assert_le "silent -l 2 -t 1: elapsed ms (ended, not hung)" 60000 "$elapsed_ms"
sent=$(f "$TMP/silent" "Queries sent")
assert_ge "silent: sent" 39 "$sent"
assert_le "silent: sent" 41 "$sent"
assert_eq "silent: lost = sent" "$sent" "$(f "$TMP/silent" "Queries lost")"
assert_eq "silent: completed" 0 "$(f "$TMP/silent" "Queries completed")"
# -n 1 with a 50-query list and no time limit: the timeout ends it.
head -50 "$LIST" >"$TMP/50.txt"
t0=$(date +%s%N)
run_unanswered "$TMP/silent2" -s 127.0.0.1 -p "$N_PORT" -d "$TMP/50.txt" -n 1 -q 100 -t 1
t1=$(date +%s%N)
elapsed_ms=$(((t1 - t0) / 1000000))
stop_responder N
assert_ge "silent -n 1 -t 1: elapsed ms (the 1 s timeout)" 1000 "$elapsed_ms"
assert_le "silent -n 1 -t 1: elapsed ms (ended, not hung: a liveness bound)" 60000 "$elapsed_ms"
assert_eq "silent -n 1: lost" 50 "$(f "$TMP/silent2" "Queries lost")"
assert_eq "silent: helper received" $((sent + 50)) "$(resp_count N received)"
echo "hostile: all assertions hold"
