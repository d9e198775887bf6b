#!/usr/bin/env bash
# server-cost-cmd: --server-cost CMD, the figures of a server read by a command at each
# pass's edges. scripts/server-cost-ssh --local (its /proc reader without ssh) on the
# bundled responder: the CPU seconds and context switches in the results file agree with
# the test's own reading around the same pass within 2% plus one tick (as server-cost.sh),
# answers = completed. A command that prints garbage, fails or hangs: one clear line, the
# client figures still reported, exit status 0. An empty command: exit 2. report
# --server-table prints a fixed results file's cell with the server's us per answer.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
[ -x "$RESPONDER" ] || skip "dnsvolley-responder not built"
command -v python3 >/dev/null || skip "python3 not installed"
SCRIPT="$top_srcdir/scripts/server-cost-ssh"
seq -f "d%g.example A" 3000 >"$TMP/list.txt"

# the script's own usage errors
rc=0
"$SCRIPT" >/dev/null 2>&1 || rc=$?
assert_eq "script without arguments: exit" 2 "$rc"
rc=0
"$SCRIPT" --local no-such-process-dv >/dev/null 2>&1 || rc=$?
assert_eq "script, no such process: exit" 1 "$rc"

start_responder resp -T 2
c0=$(cpu_ticks "$resp_PID") s0=$(csw "$resp_PID")
"$DV" -s "127.0.0.1:$resp_PORT" -d "$TMP/list.txt" -n 20 -c 4 -q 64 --no-progress \
	--server-cost "$SCRIPT --local $resp_PID" --json "$TMP/r.json" >"$TMP/out.txt" 2>"$TMP/err.txt" ||
	fail "run exited $?: $(cat "$TMP/err.txt")"
c1=$(cpu_ticks "$resp_PID") s1=$(csw "$resp_PID")
assert_eq "ok" true "$(server_field "$TMP/r.json" ok)"
assert_eq "source" cmd "$(server_field "$TMP/r.json" source)"
assert_eq "its PID" "$resp_PID" "$(server_field "$TMP/r.json" pid)"
assert_eq "answers" "$(jc "$TMP/r.json" completed)" "$(server_field "$TMP/r.json" answers)"
assert_eq "threads" "$(awk '$1 == "Threads:" { print $2 }' "/proc/$resp_PID/status")" "$(server_field "$TMP/r.json" threads)"
server_cost_agrees "$TMP/r.json" "$c0" "$c1" "$s0" "$s1"
grep -q "^  Server:               PID $resp_PID (dnsvolley-respo.*), read by --server-cost; " "$TMP/out.txt" ||
	fail "no Server line: $(grep Server "$TMP/out.txt")"
grep -q "^  Server system calls:  not available: not counted by a --server-cost command$" "$TMP/out.txt" ||
	fail "no system-call line"
grep -Eq "^  Server CPUs:          ran on [0-9,-]+ \(allowed [0-9,-]+\)$" "$TMP/out.txt" ||
	fail "CPUs line: $(grep "Server CPUs" "$TMP/out.txt")"

# --server-table: the table's cell from a fixed results file (the file's timing replaced by
# fixed figures: 60000 answers in 2.4 s, 0.6 + 0.3 s of server CPU = 15.0 us per answer)
assert_eq "answers" 60000 "$(server_field "$TMP/r.json" answers)"
python3 - "$TMP/r.json" "$TMP/fixed.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["passes"][0]
p["run_time_s"], p["qps"] = 2.4, 25000.0
p["server"]["cpu_user_s"], p["server"]["cpu_sys_s"] = 0.6, 0.3
json.dump(d, open(sys.argv[2], "w"))
P
"$DV" report --table --server-table "$TMP/fixed.json" >"$TMP/table.txt" 2>"$TMP/e.txt" ||
	fail "report --server-table: $(cat "$TMP/e.txt")"
grep -q "^Comparison table (queries per second, lost queries in brackets, then the server's CPU us per answer (user + system); " "$TMP/table.txt" ||
	fail "report --server-table: heading: $(cat "$TMP/table.txt")"
assert_eq "report --server-table: the cell" "25000 (lost 0), 15.0 us" \
	"$(awk '/^Comparison table/ { getline; getline; sub(/^[^ ]+ +[^ ]+ +/, ""); print; exit }' "$TMP/table.txt")"
"$DV" report --table "$TMP/fixed.json" >"$TMP/table.txt"
assert_eq "report without --server-table: the cell" "25000 (lost 0)" \
	"$(awk '/^Comparison table/ { getline; getline; sub(/^[^ ]+ +[^ ]+ +/, ""); print; exit }' "$TMP/table.txt")"

# bad commands: one line, client figures intact, exit 0
printf '#!/bin/sh\nexec %s 60\n' "$(command -v sleep)" >"$TMP/hang"
chmod +x "$TMP/hang"
bad() { # NAME CMD EXPECTED
	local rc=0
	"$DV" -s "127.0.0.1:$resp_PORT" -d "$TMP/list.txt" -c 1 -q 10 --no-progress \
		--server-cost "$2" --json "$TMP/$1.json" >"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	assert_eq "$1: exit" 0 "$rc"
	assert_eq "$1: client figures" 3000 "$(jc "$TMP/$1.json" completed)"
	assert_eq "$1: not ok" false "$(server_field "$TMP/$1.json" ok)"
	grep -qxF "  Server:               not measured: $3" "$TMP/$1.out" ||
		fail "$1: no clear line: $(grep Server "$TMP/$1.out")"
	assert_eq "$1: one warning" 1 "$(grep -c "^dnsvolley: warning: server not measured: " "$TMP/$1.err")"
}
bad garbage "echo hello; echo cpu_user_s 1" "--server-cost output: it printed no cpu_sys_s line (see doc/numbers.md, --server-cost)"
bad badvalue "printf 'cpu_user_s -1\ncpu_sys_s 0\n'" "--server-cost output: line 1: '-1' is not a value for cpu_user_s"
bad fails "$SCRIPT --local no-such-process-dv" "--server-cost command exited 1"
bad hang "$TMP/hang" "--server-cost command did not end in 10 s (killed)"
rc=0
"$DV" -s "127.0.0.1:$resp_PORT" -d "$TMP/list.txt" --server-cost ' ' >/dev/null 2>"$TMP/e.txt" || rc=$?
assert_eq "empty command: exit" 2 "$rc"
grep -q "server-cost: the command is empty" "$TMP/e.txt" || fail "empty: $(cat "$TMP/e.txt")"
stop_responder resp
echo "server-cost-cmd: ok"
