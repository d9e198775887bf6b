#!/usr/bin/env bash
# closed-stdout: a standard output nobody reads (`dnsvolley ... | head -1`) must not lose the
# results files. dnsvolley ignores SIGPIPE, keeps running when the report cannot be written,
# writes --json and --csv, and exits 2 (an unwritable output) unless something worse happened.
# compare --junit likewise still writes its JUnit file.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
start_responder R -T 1
S="127.0.0.1:$R_PORT"

# closed_pipe: fd 4 becomes a pipe whose read end is already closed (no race with a reader).
mkfifo fifo
exec 3<>fifo
exec 4>fifo
exec 3<&-

rc=0
"$DV" --no-progress -s "$S" -d l.txt --passes cold,hot --flush true --json r.json --csv h.csv >&4 2>err.txt ||
	rc=$?
assert_eq "run into a closed pipe: exit status" 2 "$rc"
grep -q "standard output" err.txt || fail "no message about standard output: $(cat err.txt)"
[ -s r.json ] || fail "r.json not written: $(cat err.txt)"
[ -s h.csv ] || fail "h.csv not written: $(cat err.txt)"
"$DV" report r.json >report.txt || fail "r.json does not read back"
assert_eq "passes in r.json" 2 "$(grep -c '^   "kind": ' r.json)"
assert_eq "rows in h.csv (header + 2 passes)" 3 "$(wc -l <h.csv)"

# The same with a real `| head -1`: the files are there whatever the timing.
rm -f r.json h.csv
set +o pipefail
"$DV" --no-progress -s "$S" -d l.txt --passes cold,hot --flush true --repeat 2 --json r.json --csv h.csv 2>err2.txt |
	head -1 >first.txt
set -o pipefail
grep -q '^dnsvolley ' first.txt || fail "first line: $(cat first.txt)"
"$DV" report r.json >/dev/null || fail "r.json after | head -1: $(cat err2.txt)"
assert_eq "rows in h.csv after | head -1" 5 "$(wc -l <h.csv)"

cp r.json r2.json
rc=0
"$DV" compare --max-qps-drop 100% --junit j.xml r.json r2.json >&4 2>err3.txt || rc=$?
assert_eq "compare into a closed pipe: exit status" 2 "$rc"
grep -q '<testsuite' j.xml || fail "compare: no JUnit written: $(cat err3.txt)"
exec 4>&-
stop_responder R
echo "closed-stdout: all assertions hold"
