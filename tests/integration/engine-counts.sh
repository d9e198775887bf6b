#!/usr/bin/env bash
# Engine counts against the bundled responder's ground truth: drops, hostile
# answers (wrong ID, wrong question, garbage, duplicates), answers after the timeout.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"   # 10,000 queries
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"

run() { # OUT ARGS...: run dnsvolley, keep its report
	local out=$1
	shift
	"$DV" --no-progress "$@" >"$out" 2>"$out.err" || fail "dnsvolley $* exited $?: $(cat "$out.err")"
}
f() { report_field "$1" "$2"; }

# Each case runs with many sockets (epoll-driven workers) and with one socket
# (a worker that waits for answers in recvmmsg itself: "direct" mode).
for C in 16 1; do
	# 1. Every 10th query dropped over a 100,000-query pass (10 runs through the list).
	start_responder R -T 1 --drop-every 10
	run "$TMP/drop" -s 127.0.0.1 -p "$R_PORT" -d "$LIST" -n 10 -t 0.2 -c "$C" -q 2000
	stop_responder R
	assert_eq "c$C drop: sent" 100000 "$(f "$TMP/drop" "Queries sent")"
	assert_eq "c$C drop: completed" 90000 "$(f "$TMP/drop" "Queries completed")"
	assert_eq "c$C drop: lost" 10000 "$(f "$TMP/drop" "Queries lost")"
	assert_eq "c$C drop: unexpected" 0 "$(f "$TMP/drop" "Unexpected answers")"
	assert_eq "c$C drop: responder received = sent" 100000 "$(resp_count R received)"
	assert_eq "c$C drop: responder dropped = lost" 10000 "$(resp_count R dropped)"

	# 2. Hostile answers every 7th query: never completed, counted, sums hold.
	for mode in wrong-id wrong-question garbage duplicate; do
		start_responder H -T 1 "--$mode-every" 7
		run "$TMP/$mode" -s 127.0.0.1 -p "$H_PORT" -d "$LIST" -n 1 -t 0.2 -c "$C" -q 1000
		stop_responder H
		sent=$(f "$TMP/$mode" "Queries sent")
		completed=$(f "$TMP/$mode" "Queries completed")
		lost=$(f "$TMP/$mode" "Queries lost")
		unexpected=$(f "$TMP/$mode" "Unexpected answers")
		malformed=$(f "$TMP/$mode" "Malformed answers")
		m="c$C $mode"
		assert_eq "$m: sent" 10000 "$sent"
		assert_eq "$m: completed + lost = sent" "$sent" "$((completed + lost))"
		assert_eq "$m: responder received = sent" "$sent" "$(resp_count H received)"
		assert_eq "$m: completed = responder's correct answers" "$(resp_count H answered)" "$completed"
		case $mode in
		duplicate)
			assert_eq "$m: completed" 10000 "$completed"
			assert_eq "$m: unexpected = duplicates" "$(resp_count H duplicates)" "$unexpected"
			assert_eq "$m: unexpected" 1428 "$unexpected"
			;;
		garbage)
			assert_eq "$m: lost" 1428 "$lost"
			assert_eq "$m: malformed = faulty" "$(resp_count H faulty)" "$malformed"
			assert_eq "$m: unexpected" 0 "$unexpected"
			;;
		*)
			assert_eq "$m: lost" 1428 "$lost"
			assert_eq "$m: unexpected = faulty" "$(resp_count H faulty)" "$unexpected"
			assert_eq "$m: malformed" 0 "$malformed"
			;;
		esac
	done
done

# 3. Answers slower than the timeout: all lost, the late ones counted as late.
start_responder D -T 1 --delay 300
run "$TMP/late" -s 127.0.0.1 -p "$D_PORT" -d "$LIST" -n 1 -t 0.1 -c 4 -q 200 -Q 2000 -l 1
stop_responder D
sent=$(f "$TMP/late" "Queries sent")
late=$(f "$TMP/late" "Late answers")
assert_eq "late: completed" 0 "$(f "$TMP/late" "Queries completed")"
assert_eq "late: lost = sent" "$sent" "$(f "$TMP/late" "Queries lost")"
# Every answer that came back before the drain ended is late; those sent in the
# last 200 ms (timeout + the remaining delay) come back after the pass ended.
assert_ge "late: late answers" $((sent - 500)) "$late"
assert_le "late: late answers" "$sent" "$late"
echo "engine-counts: all assertions hold"
