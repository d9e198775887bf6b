#!/usr/bin/env bash
# flush-signal: a SIGINT during a --flush (after the first pass) kills the flush's whole process
# group at once (the background jobs it started too), and the study ends as interrupted (exit 3)
# with the passes measured so far in its results file.
source "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "no dnsvolley binary"
[ -x "$RESPONDER" ] || skip "no responder"

for i in $(seq 50); do echo "p$i.example. AAAA"; done >"$TMP/list.txt"
start_responder r
# The first flush returns at once; the second starts two background sleeps and waits for them.
FLUSH="if [ -e $TMP/first ]; then sleep 100 & echo \$! >$TMP/g; sleep 100 & echo \$! >>$TMP/g; wait;"
FLUSH="$FLUSH else touch $TMP/first; fi"
"$DV" -s "a=127.0.0.1:$r_PORT" -d "L=$TMP/list.txt" -n 10 -q 10 --passes cold,hot --repeat 2 \
	--no-progress --no-server-version --json "$TMP/r.json" --flush "$FLUSH" >"$TMP/out" 2>&1 &
dv=$!
_pids+=("$dv")
for i in $(seq 300); do
	[ -s "$TMP/g" ] && [ "$(wc -l <"$TMP/g")" -eq 2 ] && break
	kill -0 "$dv" 2>/dev/null || fail "dnsvolley ended before the second flush: $(cat "$TMP/out")"
	sleep 0.05
done
[ "$(wc -l <"$TMP/g")" -eq 2 ] || fail "the second flush did not start"
kill -INT "$dv"
# Bounded: the flush would take 100 s; dnsvolley must end within 5 s of the SIGINT.
for i in $(seq 100); do kill -0 "$dv" 2>/dev/null || break; sleep 0.05; done
kill -0 "$dv" 2>/dev/null && fail "dnsvolley still waits for the flush 5 s after SIGINT"
rc=0
wait "$dv" || rc=$?
keep=()
for p in "${_pids[@]}"; do [ "$p" = "$dv" ] || keep+=("$p"); done
_pids=("${keep[@]}")
assert_eq "interrupted study: exit status" 3 "$rc"
# No sleep of the flush's group is alive (a zombie waiting for init to reap it is dead).
for g in $(cat "$TMP/g"); do
	for i in $(seq 60); do
		st=$(ps -o stat= -p "$g" 2>/dev/null || true)
		[ -z "$st" ] || [ "${st#Z}" != "$st" ] && break
		sleep 0.05
	done
	[ -z "$st" ] || [ "${st#Z}" != "$st" ] || fail "flush's background job $g survived (state $st)"
done
echo "ok: the flush's background jobs were killed"
stop_responder r
assert_eq "passes kept" 2 "$(grep -c '^   "kind": ' "$TMP/r.json")"
