#!/usr/bin/env bash
# signals: SIGINT/SIGTERM while the query list loads end the run with status 3 (as the man
# page says), also when SIGINT was inherited as ignored (a background job of a script); the
# flush time limit is --flush-timeout and applies to --flush and --after-pass (issue 16 item 4).
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
start_responder R -T 1
S="127.0.0.1:$R_PORT"

# during_load NAME SIGNAL [wrapper...]: the list comes from a fifo nobody writes yet, so
# dnsvolley is blocked loading it; the signal must end it with status 3, no results file.
during_load() {
	local name=$1 sig=$2 dv rc=0 i
	shift 2
	rm -f fifo r.json
	mkfifo fifo
	exec 5<>fifo # keeps a writer: the read blocks instead of seeing end of file
	"$@" "$DV" --no-progress -s "$S" -d - --json r.json <fifo >out.txt 2>err.txt &
	dv=$!
	_pids+=("$dv")
	sleep 0.5
	kill -0 "$dv" 2>/dev/null || fail "$name: dnsvolley ended before the signal: $(cat err.txt)"
	kill "-$sig" "$dv"
	for i in $(seq 100); do kill -0 "$dv" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$dv" 2>/dev/null && { exec 5>&-; fail "$name: still loading 5 s after SIG$sig"; }
	wait "$dv" || rc=$?
	exec 5>&-
	assert_eq "$name: exit status" 3 "$rc"
	grep -q "interrupted while loading the query lists" err.txt || fail "$name: message: $(cat err.txt)"
	[ ! -e r.json ] || fail "$name: a results file was written with nothing measured"
}
during_load "SIGINT during the list load" INT
during_load "SIGTERM during the list load" TERM
# A background job of a non-interactive shell inherits SIGINT ignored: reset at start.
ignore_int() { trap '' INT; exec "$@"; } # runs in the background subshell
during_load "SIGINT inherited as ignored" INT ignore_int

echo "== --flush-timeout"
# each value's own message exactly (a grep for "--flush-timeout" passed "unknown option" too)
for bad in "0:'0' must be greater than zero" "-1:'-1' is out of range (0 to 10000000 s)" \
	"soon:'soon' is not a duration in seconds (e.g. 5, 0.5, 250ms)"; do
	rc=0
	"$DV" -s "$S" -d l.txt --flush-timeout "${bad%%:*}" >out.txt 2>err.txt || rc=$?
	assert_eq "--flush-timeout ${bad%%:*}: exit status" 2 "$rc"
	assert_eq "--flush-timeout ${bad%%:*}: message" "dnsvolley: --flush-timeout: ${bad#*:}" \
		"$(head -1 err.txt)"
done
start=$(date +%s%N)
rc=0
"$DV" --no-progress -s "$S" -d l.txt --passes cold,hot --flush 'sleep 30' --flush-timeout 0.3 \
	--json r.json >out.txt 2>err.txt || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "flush past --flush-timeout: exit status" 3 "$rc"
grep -qF "did not finish within 0.3 s" err.txt || fail "flush timeout: message: $(cat err.txt)"
# The bound tells a flush given up at 0.3 s from one waited for (the 30 s sleep): 25 s
# leaves load 24.7 s, so it is a property of the timeout, not of the machine's speed.
assert_le "flush past --flush-timeout 0.3: milliseconds (not the 30 s sleep)" 25000 "$ms"
[ -s r.json ] || fail "flush timeout: no results file"
rc=0
"$DV" --no-progress -s "$S" -d l.txt --after-pass 'sleep 30' --flush-timeout 300ms \
	>out.txt 2>err.txt || rc=$?
assert_eq "after-pass past --flush-timeout: exit status" 3 "$rc"
grep -qF "did not finish within 0.3 s" err.txt || fail "after-pass timeout: message: $(cat err.txt)"
stop_responder R
echo "signals: all assertions hold"
