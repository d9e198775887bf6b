#!/usr/bin/env bash
# -Q: the rate limit is exact over the run (open-loop schedule).
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"
f() { report_field "$1" "$2"; }
start_responder R -T 1
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$LIST" -Q 20000 -l 5 >"$TMP/rate" 2>&1 ||
	fail "dnsvolley failed: $(cat "$TMP/rate")"
stop_responder R
sent=$(f "$TMP/rate" "Queries sent")
# 20,000 qps for 5 s = 100,000 within 0.1%.
assert_ge "Q20000: sent" 99900 "$sent"
assert_le "Q20000: sent" 100100 "$sent"
assert_eq "Q20000: completed" "$sent" "$(f "$TMP/rate" "Queries completed")"

start_responder S -T 1
"$DV" --no-progress -s 127.0.0.1 -p "$S_PORT" -d "$LIST" -Q 7 -l 3 >"$TMP/slow" 2>&1 ||
	fail "dnsvolley failed: $(cat "$TMP/slow")"
stop_responder S
sent=$(f "$TMP/slow" "Queries sent")
# 7 qps for 3 s: queries are due at 0, 1/7, ... so 21 fall inside the limit.
assert_ge "Q7: sent" 20 "$sent"
assert_le "Q7: sent" 22 "$sent"
echo "engine-rate: all assertions hold"
