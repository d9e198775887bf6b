#!/usr/bin/env bash
# dnsvolley capacity as a study: --passes with --repeat runs a search per pass, the results
# file keeps each one's figure ("capacity"), the table and summary show capacity cells,
# report and compare read them back, a cold search flushes before every step, and
# --max-capacity-drop gates the capacity (on figures set to known values, so that the
# verdict does not depend on how busy the machine is).
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"
# A short queue (32 queries): a step passes an overload its queue absorbs, up to
# backlog / step = 64 qps here (doc/methodology.md, "Step length").
start_responder C -T 1 --capacity 3000 --capacity-backlog 32
CAP=("$DV" capacity --no-progress -s 127.0.0.1 -p "$C_PORT" -d "$LIST" --step 0.5 --settle 0.2
	--from 1000 --precision 10%)

"${CAP[@]}" --passes hot --repeat 2 --json "$TMP/a.json" --plot "$TMP/plot" >"$TMP/out" 2>&1 ||
	fail "capacity study failed: $(cat "$TMP/out")"
assert_eq "a search per pass" 2 "$(grep -c '^Capacity: ' "$TMP/out")"
grep -q '^Capacity table' "$TMP/out" || fail "no capacity table: $(cat "$TMP/out")"
grep -q '^  127.0.0.1/soa.txt/hot .* 2 searches' "$TMP/out" || fail "no capacity summary line"
assert_eq "capacity objects in the results" 2 "$(grep -c '"capacity": {' "$TMP/a.json")"
grep -q '"command_line": "dnsvolley capacity .*--precision 10%' "$TMP/a.json" ||
	fail "the command line lacks capacity's options"
steps=$(sed -n 's/.*"steps": \([0-9]*\).*/\1/p' "$TMP/a.json" | awk '{ s += $1 } END { print s }')
assert_eq "steps in the results = step lines" "$(grep -c '^\[Capacity\] step' "$TMP/out")" "$steps"
assert_eq "chart series (one per search)" 2 "$(ls "$TMP"/plot/capacity-*.dat | wc -l)"
# Each search found 3000 within the 10% bracket, unless the generator was the limit (a busy
# machine): then it says so and gives no figure above the server's.
while read -r line; do
	case "$line" in
	*generator-bound*) echo "generator-bound (busy machine): $line" ;;
	*) n=$(echo "$line" | sed -n 's/^Capacity: \([0-9]*\) qps.*/\1/p')
	   assert_ge "capacity found" 2700 "${n:-0}"
	   assert_le "capacity found" 3090 "${n:-0}" ;;
	esac
done < <(grep '^Capacity: ' "$TMP/out")
"$DV" report "$TMP/a.json" >"$TMP/report" || fail "report failed"
grep -q '^  127.0.0.1/soa.txt/hot .* 2 searches' "$TMP/report" || fail "report: no capacity summary"

# A cold search empties the cache before every step (the flush command runs once per step).
"${CAP[@]}" --passes cold --flush "echo flushed >> '$TMP/flushes'" >"$TMP/cold" 2>&1 ||
	fail "cold search failed: $(cat "$TMP/cold")"
assert_eq "flushes = steps" "$(grep -c '^\[Capacity\] step' "$TMP/cold")" "$(wc -l <"$TMP/flushes")"

# The gate, on known figures: base 3000 qps, new 2700 (a 10% drop) or 2900 (3.3%).
with() { # FILE CAPACITY GENERATOR_BOUND: a.json with every search's figure set
	sed -e "s/\"capacity_qps\": [0-9.e+]*/\"capacity_qps\": $2/" \
		-e "s/\"generator_bound\": [a-z]*/\"generator_bound\": $3/" \
		-e 's/"hit_to": [a-z]*/"hit_to": false/' "$TMP/a.json" >"$1"
}
with "$TMP/base.json" 3000.0 false
with "$TMP/drop10.json" 2700.0 false
with "$TMP/drop3.json" 2900.0 false
with "$TMP/bound.json" 2700.0 true
set +e
"$DV" compare --max-capacity-drop 5% "$TMP/base.json" "$TMP/drop10.json" >"$TMP/c1" 2>&1
assert_eq "10% drop: gate fails" 1 $?
"$DV" compare --max-capacity-drop 5% "$TMP/base.json" "$TMP/drop3.json" >"$TMP/c2" 2>&1
assert_eq "3.3% drop: gate holds" 0 $?
"$DV" compare --max-capacity-drop 5% "$TMP/base.json" "$TMP/bound.json" >"$TMP/c3" 2>&1
assert_eq "a lower bound: gate skipped" 0 $?
"$DV" compare --max-capacity-drop x "$TMP/base.json" "$TMP/drop3.json" >/dev/null 2>&1
assert_eq "bad --max-capacity-drop" 2 $?
"${CAP[@]}" --max-capacity-drop 5% >"$TMP/nobase" 2>&1
assert_eq "--max-capacity-drop without --baseline" 2 $?
sed 's/"capacity_qps": [0-9.e+]*/"capacity_qps": -1.0/' "$TMP/a.json" >"$TMP/neg.json"
"$DV" report "$TMP/neg.json" >"$TMP/neg" 2>&1
assert_eq "negative capacity refused" 2 $?
set -e
grep -q 'capacity 3000 qps vs baseline .* drop 10.00% > 5%' "$TMP/c1" ||
	grep -q 'capacity 2700 qps vs baseline 3000 qps: drop 10.00% > 5%' "$TMP/c1" ||
	fail "10% drop: no gate line: $(cat "$TMP/c1")"
grep -q '^  capacity  *3000.0  *2700.0 ' "$TMP/c1" || fail "compare: no capacity row: $(cat "$TMP/c1")"
grep -q 'only a lower bound' "$TMP/c3" || fail "lower bound: no reason given: $(cat "$TMP/c3")"
grep -q 'need --baseline FILE' "$TMP/nobase" || fail "no reason for exit 2: $(cat "$TMP/nobase")"
grep -q 'capacity: "capacity_qps" must be a finite number >= 0' "$TMP/neg" ||
	fail "negative capacity: $(cat "$TMP/neg")"
