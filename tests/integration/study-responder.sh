#!/usr/bin/env bash
# study-responder: a two-target study (the bundled responder plain and with a 5 ms delay),
# cold/hot x 2 repeats x 2 lists. Asserts the table's shape, the interleaving order, that each
# cell belongs to its target, exact query counts against the responders' own, the results
# file and `dnsvolley report`, and that a failing flush or a silent target stops the study
# (exit 3) keeping what was measured.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
[ -x "$RESPONDER" ] || skip "dnsvolley-responder not built"

# Lists: the bundled ones when present, else generated here.
if [ -f "$top_srcdir/querylists/soa.txt" ] && [ -f "$top_srcdir/querylists/www-a.txt" ]; then
	head -n 400 "$top_srcdir/querylists/soa.txt" >"$TMP/soa.txt"
	head -n 200 "$top_srcdir/querylists/www-a.txt" >"$TMP/a.txt"
else
	for i in $(seq 400); do echo "d$i.example SOA"; done >"$TMP/soa.txt"
	for i in $(seq 200); do echo "www.d$i.example A"; done >"$TMP/a.txt"
fi
N_SOA=$(grep -c . "$TMP/soa.txt")
N_A=$(grep -c . "$TMP/a.txt")

start_responder plain
start_responder delayed --delay 5

# Outstanding 20 with a 5 ms hold: the delayed target cannot exceed 20 / 0.005 = 4000 qps.
rc=0
"$DV" -s "plain=127.0.0.1:$plain_PORT" -s "delayed=127.0.0.1:$delayed_PORT" \
	-d "SOA=$TMP/soa.txt" -d "A=$TMP/a.txt" --passes cold,hot --repeat 2 \
	--flush "echo \"\$DV_TARGET_LABEL \$DV_LIST_LABEL \$DV_REPEAT \$DV_TARGET_ADDR \$DV_TARGET_PORT\" >> $TMP/flush.log" \
	--json "$TMP/r.json" --no-server-version -q 20 -c 4 -t 2 --no-progress \
	>"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
stop_responder plain
stop_responder delayed
[ "$rc" = 0 ] || { cat "$TMP/err.txt" >&2; fail "study exited $rc"; }

# --- interleaving: repeat, list, target; one flush before each cold pass
expected_log=""
for r in 1 2; do
	for l in SOA A; do
		expected_log+="plain $l $r 127.0.0.1 $plain_PORT"$'\n'
		expected_log+="delayed $l $r 127.0.0.1 $delayed_PORT"$'\n'
	done
done
assert_eq "flush order and environment" "$expected_log" "$(cat "$TMP/flush.log")"$'\n'

# --- the table: shape, labels, cells
awk '/^Comparison table/ { on = 1; next } on && NF == 0 { exit } on { print }' "$TMP/out.txt" >"$TMP/table.txt"
assert_eq "table rows (header + targets x lists)" 5 "$(wc -l <"$TMP/table.txt")"
assert_eq "table header" "Target List Run1 cold Run1 hot Run2 cold Run2 hot" \
	"$(head -n 1 "$TMP/table.txt" | tr -s ' ')"
assert_eq "row labels" "plain SOA,plain A,delayed SOA,delayed A," \
	"$(awk 'NR > 1 { printf "%s %s,", $1, $2 }' "$TMP/table.txt")"
bad_cells=$(awk 'NR > 1 { for (i = 3; i <= NF; i += 2) if ($i !~ /^[0-9]+$/ || $(i + 1) != "(lost0)") n++ } END { print n + 0 }' "$TMP/table.txt")
assert_eq "cells shaped 'QPS (lost0)'" 0 "$bad_cells"
assert_eq "cells per row" "10,10,10,10," "$(awk 'NR > 1 { printf "%d,", NF }' "$TMP/table.txt")"
# Every delayed cell is under the physical bound, every plain cell above the delayed maximum.
delayed_max=$(awk '$1 == "delayed" { for (i = 3; i <= NF; i += 2) if ($i > m) m = $i } END { print m + 0 }' "$TMP/table.txt")
plain_min=$(awk '$1 == "plain" { for (i = 3; i <= NF; i += 2) if (m == "" || $i < m) m = $i } END { print m + 0 }' "$TMP/table.txt")
assert_le "delayed target's highest qps (20 in flight / 5 ms)" 4000 "$delayed_max"
assert_ge "plain target's lowest qps (above the delayed maximum)" $((delayed_max + 1)) "$plain_min"

# --- the results file: one key per line; pass order, kinds, counts, latency
[ -s "$TMP/r.json" ] || fail "no results file"
assert_eq "schema_version" 1 "$(awk -F': ' '/^ "schema_version"/ { sub(",", "", $2); print $2 }' "$TMP/r.json")"
assert_eq "passes recorded" 16 "$(grep -c '^   "kind": ' "$TMP/r.json")"
one_repeat="0 0 cold,0 0 hot,1 0 cold,1 0 hot,0 1 cold,0 1 hot,1 1 cold,1 1 hot,"
assert_eq "pass sequence (target list kind)" "$one_repeat$one_repeat" \
	"$(awk -F': ' '/^   "target"/ { t = $2 + 0 } /^   "list"/ { l = $2 + 0 } /^   "kind"/ { gsub(/[",]/, "", $2); printf "%d %d %s,", t, l, $2 }' "$TMP/r.json")"
# sent per target (the first "sent" of each pass is its counter) and p50 per pass
awk -F': ' '/^   "target"/ { t = $2 + 0; want = 1 }
	/"sent": / && want { sent[t] += $2 + 0; want = 0 }
	/^    "p50_ns"/ { print t, $2 + 0 > "'"$TMP/p50.txt"'" }
	END { print sent[0] + 0, sent[1] + 0 }' "$TMP/r.json" >"$TMP/sent.txt"
read -r sent_plain sent_delayed <"$TMP/sent.txt"
assert_eq "plain: queries sent over 8 passes" $((4 * (N_SOA + N_A))) "$sent_plain"
assert_eq "delayed: queries sent over 8 passes" $((4 * (N_SOA + N_A))) "$sent_delayed"
assert_eq "p50 values" 16 "$(wc -l <"$TMP/p50.txt")"
slow_plain=$(awk '$1 == 0 && $2 >= 5000000' "$TMP/p50.txt" | wc -l)
fast_delayed=$(awk '$1 == 1 && $2 < 5000000' "$TMP/p50.txt" | wc -l)
assert_eq "plain passes with p50 >= 5 ms" 0 "$slow_plain"
assert_eq "delayed passes with p50 < 5 ms (the responder holds 5 ms)" 0 "$fast_delayed"

# The responders' own counts: every query sent by a pass, plus the readiness probes (from
# the report: "target ready after X s (N probe queries"), and nothing else.
awk '/^== Run / { t = $5 } /target ready after/ { for (i = 1; i <= NF; i++) if ($i == "probe") { sub(/\(/, "", $(i - 1)); p[t] += $(i - 1) } }
	END { print p["plain"] + 0, p["delayed"] + 0 }' "$TMP/out.txt" >"$TMP/probes.txt"
read -r probes_plain probes_delayed <"$TMP/probes.txt"
assert_ge "plain: probe queries (one per cold pass at least)" 4 "$probes_plain"
assert_ge "delayed: probe queries (one per cold pass at least)" 4 "$probes_delayed"
# ("answered": the responder also counts the empty datagram that wakes it at stop as received.)
assert_eq "plain: responder answered = sent + probes" $((sent_plain + probes_plain)) "$(resp_count plain answered)"
assert_eq "delayed: responder answered = sent + probes" $((sent_delayed + probes_delayed)) "$(resp_count delayed answered)"
assert_eq "plain: nothing dropped" 0 "$(resp_count plain dropped)"

# --- dnsvolley report prints the same table again from the file
"$DV" report "$TMP/r.json" >"$TMP/report.txt" 2>"$TMP/report.err" || fail "report exited $?: $(cat "$TMP/report.err")"
awk '/^Comparison table/ { on = 1; next } on && NF == 0 { exit } on { print }' "$TMP/report.txt" >"$TMP/table2.txt"
cmp -s "$TMP/table.txt" "$TMP/table2.txt" || fail "report's table differs: $(diff "$TMP/table.txt" "$TMP/table2.txt")"
echo "ok: report reprints the identical table"
grep -q '^delayed  SOA   cold  .*(significant)' "$TMP/report.txt" || fail "summary: delayed SOA cold not marked significant"
echo "ok: summary marks the delayed target's change significant"
rc=0
"$DV" report "$TMP/nonexistent.json" >/dev/null 2>"$TMP/report.err" || rc=$?
assert_eq "report of a missing file: exit status" 2 "$rc"
grep -q "nonexistent.json: " "$TMP/report.err" || fail "report error does not name the file"
printf '{"schema": "dnsvolley-results", "schema_version": 1}' >"$TMP/bad.json"
rc=0
"$DV" report "$TMP/bad.json" >/dev/null 2>"$TMP/report.err" || rc=$?
assert_eq "report of a bad file: exit status" 2 "$rc"
grep -q "bad.json: missing \"tool\"" "$TMP/report.err" || fail "report error unclear: $(cat "$TMP/report.err")"

# --- a failing flush stops the study (exit 3), keeping the passes measured so far
start_responder plain
start_responder delayed --delay 5
rc=0
"$DV" -s "plain=127.0.0.1:$plain_PORT" -s "delayed=127.0.0.1:$delayed_PORT" -d "SOA=$TMP/soa.txt" \
	--passes cold,hot --repeat 2 --flush "plain=true" --flush "delayed=echo no; exit 4" \
	--json "$TMP/f.json" --no-server-version -q 20 -t 2 --no-progress >"$TMP/fout.txt" 2>"$TMP/ferr.txt" || rc=$?
stop_responder plain
stop_responder delayed
assert_eq "failing flush: exit status" 3 "$rc"
grep -q "target delayed: flush command failed with exit status 4" "$TMP/ferr.txt" "$TMP/fout.txt" ||
	fail "no clear message: $(cat "$TMP/ferr.txt")"
echo "ok: the failure is named"
assert_eq "failing flush: passes kept" 2 "$(grep -c '^   "kind": ' "$TMP/f.json")"
grep -q '^  "failed": -' "$TMP/f.json" || fail "results file does not record the failure"
plain_sent=$(awk -F': ' '/^   "target"/ { want = 1 } /"sent": / && want { s += $2 + 0; want = 0 } END { print s + 0 }' "$TMP/f.json")
assert_eq "failing flush: plain's cold and hot passes were sent" $((2 * N_SOA)) "$plain_sent"
assert_eq "failing flush: plain answered = sent + 1 probe" $((plain_sent + 1)) "$(resp_count plain answered)"
assert_eq "failing flush: nothing sent to delayed" 0 "$(resp_count delayed answered)"
"$DV" report "$TMP/f.json" | tr -s ' ' | grep -q "^delayed SOA - - - -$" ||
	fail "failed study's table lacks the '-' cells: $("$DV" report "$TMP/f.json")"
echo "ok: the partial table marks missing passes"

# --- a target that never answers: bounded wait, exit 3
start_responder silent --drop-every 1
rc=0
"$DV" -s "silent=127.0.0.1:$silent_PORT" -d "SOA=$TMP/soa.txt" --passes cold,hot --flush true --ready-timeout 0.5 \
	--json "$TMP/s.json" --no-server-version --no-progress >"$TMP/sout.txt" 2>"$TMP/serr.txt" || rc=$?
stop_responder silent
assert_eq "silent target: exit status" 3 "$rc"
grep -q "target silent: 127.0.0.1:$silent_PORT: target not ready" "$TMP/serr.txt" "$TMP/sout.txt" ||
	fail "no clear message: $(cat "$TMP/serr.txt")"
echo "ok: never-ready target named"
assert_eq "silent target: passes" 0 "$(grep -c '^   "kind": ' "$TMP/s.json")"
echo "PASS"
