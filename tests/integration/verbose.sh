#!/usr/bin/env bash
# verbose: -v's line per query, exactly: "> RCODE NAME TYPE LATENCY" for each answer,
# "> T NAME TYPE" for each query that timed out, in the list's order on one socket; the
# type is its mnemonic, or TYPEn for a type without one; the lines agree with the report.
. "$(dirname "$0")/lib.sh"

# The responder leaves queries 4, 8, 12, ... unanswered. The others must be answered
# within -t (or they would be T lines): -t 1, far beyond the responder's delay; each
# of the 5 dropped ones waits it out, one at a time (-q 1).
start_responder r --drop-every 4
types=(A SOA AAAA TYPE65534 MX)
for i in $(seq 20); do echo "v$i.example ${types[$((i % 5))]}"; done >"$TMP/list"
"$DV" --no-progress -s 127.0.0.1 -p "$r_PORT" -d "$TMP/list" -c 1 -q 1 -n 1 -t 1 -v \
	>"$TMP/v.out" 2>"$TMP/v.err" || fail "dnsvolley failed: $(cat "$TMP/v.err")"
grep '^> ' "$TMP/v.out" >"$TMP/lines"
assert_eq "one line per query" 20 "$(wc -l <"$TMP/lines")"
# -q 1: one query at a time, so the lines come in the list's order.
n=0
while read -r mark status name type lat extra; do
	n=$((n + 1))
	want_type=${types[$((n % 5))]}
	[ "$mark" = ">" ] || fail "line $n: no '>'"
	[ "$name" = "v$n.example" ] || fail "line $n: name $name, expected v$n.example (no trailing dot, as dnsperf prints it)"
	[ "$type" = "$want_type" ] || fail "line $n: type $type, expected $want_type"
	[ -z "$extra" ] || fail "line $n: a sixth field: $extra"
	if [ $((n % 4)) = 0 ]; then
		[ "$status" = T ] || fail "line $n: status $status, expected T (unanswered)"
		[ -z "$lat" ] || fail "line $n: a timed-out query has a latency: $lat"
	else
		[ "$status" = NOERROR ] || fail "line $n: status $status, expected NOERROR"
		[[ $lat =~ ^0\.[0-9]{6}$ ]] || fail "line $n: latency '$lat' is not seconds with 6 decimals"
		# Load-independent: an answer later than -t 1 is lost, never given a latency.
		awk -v l="$lat" 'BEGIN { exit !(l > 0 && l < 1) }' || fail "line $n: latency $lat outside (0, -t)"
	fi
done <"$TMP/lines"
echo "ok: 20 lines in the list's order, names, types and statuses exact"
assert_eq "answer lines = completed" "$(report_field "$TMP/v.out" "Queries completed")" \
	"$(grep -c '^> NOERROR ' "$TMP/lines")"
assert_eq "timeout lines = lost" "$(report_field "$TMP/v.out" "Queries lost")" \
	"$(grep -c '^> T ' "$TMP/lines")"
assert_eq "lost" 5 "$(report_field "$TMP/v.out" "Queries lost")"
