#!/usr/bin/env bash
# flush-signal: a SIGINT during a --flush (the first one, or one after passes) kills the flush's
# whole process group at once (the background jobs it started too), and the study ends as
# interrupted (exit 3) with the passes measured so far in its results file.
source "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "no dnsvolley binary"
[ -x "$RESPONDER" ] || skip "no responder"

for i in $(seq 50); do echo "p$i.example. AAAA"; done >"$TMP/list.txt"
start_responder r

# interrupt_flush NAME SKIP_FIRST PASSES_KEPT: the flush starts two background sleeps and waits
# for them (SKIP_FIRST=1: the first flush returns at once, the second one is interrupted).
interrupt_flush() {
	local name=$1 d="$TMP/$1" dv rc i g st p keep=()
	mkdir "$d"
	[ "$2" = 1 ] || touch "$d/first"
	local flush="if [ -e $d/first ]; then sleep 100 & echo \$! >$d/g; sleep 100 & echo \$! >>$d/g; wait;"
	flush="$flush else touch $d/first; fi"
	"$DV" -s "a=127.0.0.1:$r_PORT" -d "L=$TMP/list.txt" --hot-runs 10 -q 10 --passes cold,hot --repeat 2 \
		--no-progress --no-server-version --json "$d/r.json" --flush "$flush" >"$d/out" 2>&1 &
	dv=$!
	_pids+=("$dv")
	for i in $(seq 300); do
		[ -s "$d/g" ] && [ "$(wc -l <"$d/g")" -eq 2 ] && break
		kill -0 "$dv" 2>/dev/null || fail "$name: dnsvolley ended before the flush: $(cat "$d/out")"
		sleep 0.05
	done
	[ "$(wc -l <"$d/g")" -eq 2 ] || fail "$name: the flush did not start its jobs"
	kill -INT "$dv"
	# Bounded: the flush would take 100 s; dnsvolley must end within 5 s of the SIGINT.
	for i in $(seq 100); do kill -0 "$dv" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$dv" 2>/dev/null && fail "$name: dnsvolley still waits for the flush 5 s after SIGINT"
	rc=0
	wait "$dv" || rc=$?
	for p in "${_pids[@]}"; do [ "$p" = "$dv" ] || keep+=("$p"); done
	_pids=("${keep[@]}")
	assert_eq "$name: exit status" 3 "$rc"
	# No sleep of the flush's group is alive (a zombie waiting for init to reap it is dead).
	for g in $(cat "$d/g"); do
		for i in $(seq 60); do
			st=$(ps -o stat= -p "$g" 2>/dev/null || true)
			[ -z "$st" ] || [ "${st#Z}" != "$st" ] && break
			sleep 0.05
		done
		[ -z "$st" ] || [ "${st#Z}" != "$st" ] || fail "$name: flush's background job $g survived (state $st)"
	done
	echo "ok: $name: the flush's background jobs were killed"
	assert_eq "$name: passes kept" "$3" "$(grep -c '^   "kind": ' "$d/r.json" || true)"
}

interrupt_flush first-flush 0 0
interrupt_flush later-flush 1 2
stop_responder r
