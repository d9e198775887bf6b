#!/usr/bin/env bash
# Failures: nothing listening (ICMP errors), SIGINT mid-run (an interrupted report that adds up),
# and bad flags (exit 2 with a message).
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"
f() { report_field "$1" "$2"; }

for C in 2 1; do
	# A port with nothing behind it: take a free port from the responder, then stop it.
	start_responder Z -T 1
	stop_responder Z
	set +e
	timeout 20 "$DV" --no-progress -s 127.0.0.1 -p "$Z_PORT" -d "$LIST" -n 1 -t 0.1 -q 1000 -c "$C" >"$TMP/closed" 2>&1
	rc=$?
	set -e
	# Not one answer: the no-answer status (doc/dnsvolley.1), and a plain line saying why.
	[ $rc -eq 4 ] || fail "c$C closed port: exit $rc, not 4: $(cat "$TMP/closed")"
	grep -q "NO ANSWERS: .*ICMP port unreachable" "$TMP/closed" || fail "c$C closed port: no NO ANSWERS line"
	sent=$(f "$TMP/closed" "Queries sent")
	notsent=$(f "$TMP/closed" "Queries not sent")
	notsent=${notsent:-0}
	assert_eq "c$C closed: sent + not sent = list" 10000 "$((sent + notsent))"
	assert_eq "c$C closed: completed" 0 "$(f "$TMP/closed" "Queries completed")"
	assert_eq "c$C closed: lost = sent" "$sent" "$(f "$TMP/closed" "Queries lost")"
	icmp=$(f "$TMP/closed" "ICMP errors")
	assert_ge "c$C closed: ICMP errors counted" 1 "${icmp:-0}"

	# SIGINT in the middle of a slow run.
	# The responder is held stopped until dnsvolley's first query is queued
	# (wait_queued), so the 1.5 s before the interrupt are run time at any load.
	start_responder R -T 1 --delay 50
	kill -STOP "$R_PID"
	"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$LIST" -n 10 -q 100 -c "$C" >"$TMP/int" 2>&1 &
	dvpid=$!
	_pids+=("$dvpid")
	wait_queued udp "$R_PORT"
	kill -CONT "$R_PID"
	sleep 1.5
	kill -INT "$dvpid"
	set +e
	wait "$dvpid"
	rc=$?
	set -e
	stop_responder R
	assert_eq "c$C interrupt: exit status" 3 "$rc"
	grep -q 'Testing INTERRUPTED' "$TMP/int" || fail "report not marked interrupted: $(cat "$TMP/int")"
	sent=$(f "$TMP/int" "Queries sent")
	completed=$(f "$TMP/int" "Queries completed")
	lost=$(f "$TMP/int" "Queries lost")
	interrupted=$(f "$TMP/int" "Queries interrupted")
	# At least the first window (100, sent before any answer); never the whole 100,000:
	# 100 in flight / 50 ms caps the run at 2,000 q/s, 50 s for all (both at any load;
	# how many of the ~3,000 idle go out in the 1.5 s is a speed figure).
	assert_ge "c$C interrupt: sent the first window" 100 "$sent"
	assert_le "c$C interrupt: stopped early" 99999 "$sent"
	assert_eq "c$C interrupt: sent = completed + lost + interrupted" "$sent" "$((completed + lost + interrupted))"
	assert_eq "c$C interrupt: responder received = sent" "$sent" "$(resp_count R received)"
done

# Bad flags: a message naming the problem, exit 2.
for args in "-q 0" "-c abc" "-t -1" "-Q 0" "--bogus" "-p 70000" "-m quic" "-y k" "-s" "--passes warm"; do
	set +e
	# shellcheck disable=SC2086
	"$DV" $args -d "$LIST" >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	set -e
	assert_eq "bad flags '$args': exit status" 2 "$rc"
	grep -q '^dnsvolley: ' "$TMP/bad.err" || fail "bad flags '$args': no message: $(cat "$TMP/bad.err")"
done
echo "engine-errors: all assertions hold"
