#!/usr/bin/env bash
# The cache hit rate a Zipf list gives a real resolver (issue 17), against what
# doc/querylists.md predicts: 10,000 names, a list of 10,000 queries drawn with
# s = 1.0 (dnsvolley-genlist --traffic), one cold pass through unbound, whose stub
# zone is served by the responder (answers with TTL 300 s, longer than the pass).
# The doc's table says 2,813 distinct questions expected, 71.9% hits; unbound's own
# counters (unbound-control stats) must agree within 3 points, and every miss is
# one query to the responder (unbound merges identical queries in flight, so at
# most one per distinct question and at least the distinct questions).
. "$(dirname "$0")/lib.sh"
SERVERS="$top_srcdir/tests/integration/servers"
[ -x "$DV" ] && [ -x "$GENLIST" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
for t in unbound unbound-control; do command -v $t >/dev/null || skip "$t not installed"; done

for i in $(seq 10000); do echo "d$i.zipf.test"; done >"$TMP/domains"
"$GENLIST" --traffic "$TMP/zipf.txt" --queries 10000 --zipf 1 --seed 1 "$TMP/domains" ||
	fail "genlist failed"
distinct=$(sort -u "$TMP/zipf.txt" | wc -l)
echo "list: 10000 queries, $distinct distinct (the doc's expectation: 2813)"
assert_ge "distinct questions (E = 2813)" 2700 "$distinct"
assert_le "distinct questions (E = 2813)" 2930 "$distinct"

start_responder AUTH -T 1
UPORT=$(free_port)
bash "$SERVERS/unbound.conf.sh" "$TMP" "$UPORT" "$AUTH_PORT" zipf.test >"$TMP/unbound.conf"
unbound -d -c "$TMP/unbound.conf" >"$TMP/unbound.out" 2>&1 &
UB=$!
_pids+=("$UB")
UC="unbound-control -c $TMP/unbound.conf"
for i in $(seq 200); do
	$UC status >/dev/null 2>&1 && break
	kill -0 "$UB" 2>/dev/null || fail "unbound exited: $(cat "$TMP/unbound.out" "$TMP/unbound.log" 2>/dev/null)"
	sleep 0.05
done
$UC status >/dev/null || fail "unbound not ready"

"$DV" --no-progress -s "127.0.0.1:$UPORT" -d "$TMP/zipf.txt" -q 20 -t 30 >"$TMP/report" 2>&1 ||
	fail "dnsvolley: $(cat "$TMP/report")"
assert_eq "completed" 10000 "$(report_field "$TMP/report" "Queries completed")"
$UC stats_noreset >"$TMP/stats"
hits=$(awk -F= '$1 == "total.num.cachehits" { print $2 }' "$TMP/stats")
miss=$(awk -F= '$1 == "total.num.cachemiss" { print $2 }' "$TMP/stats")
kill -TERM "$UB"
wait "$UB" || true
stop_responder AUTH
auth=$(resp_count AUTH received)
echo "unbound: $hits cache hits, $miss misses; the responder received $auth queries"
assert_eq "hits + misses = queries" 10000 "$((hits + miss))"
pct=$(awk -v h="$hits" 'BEGIN { printf "%.1f", 100 * h / 10000 }')
echo "measured hit rate: $pct% (predicted 71.9%)"
awk -v p="$pct" 'BEGIN { exit !(p >= 68.9 && p <= 74.9) }' || fail "hit rate $pct% is not 71.9% +- 3"
assert_ge "misses >= distinct questions" "$distinct" "$miss"
assert_le "queries to the responder <= distinct questions" "$distinct" "$auth"
assert_ge "queries to the responder >= 99% of distinct questions" "$((distinct * 99 / 100))" "$auth"
echo "PASS: replay-zipf-unbound"
