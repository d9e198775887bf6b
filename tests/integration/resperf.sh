#!/usr/bin/env bash
# dnsvolley resperf: resperf's flags and summary lines; its "Maximum throughput" is within
# 10% of Debian's resperf against the same server (responder --capacity 20000) in the
# same run, and the plot data has a line per interval.
. "$(dirname "$0")/lib.sh"
# Bad flags: exit 2 (checked first: they need no server and no spare CPU).
set +e
"$DV" resperf -m nope >/dev/null 2>&1
assert_eq "bad -m exit" 2 $?
set -e
# resperf does not replay its list: give it more queries than the ramp sends.
awk '{ for (i = 0; i < 20; i++) print }' "$top_srcdir/querylists/soa.txt" >"$TMP/big.txt"
start_responder R -T 1 --capacity 20000
(cd "$TMP" && "$DV" resperf -s 127.0.0.1 -p "$R_PORT" -d "$TMP/big.txt" -m 40000 -r 6 -t 1 \
	-P "$TMP/dv.plot" -o "$TMP/chart") >"$TMP/dv" 2>&1 || fail "dnsvolley resperf failed: $(cat "$TMP/dv")"
# What holds on any machine: the summary lines, a plot line per interval, the chart.
mt() { sed -n 's/.*Maximum throughput: *\([0-9]*\).*/\1/p' "$1"; }
dv=$(mt "$TMP/dv")
[ -n "$dv" ] || fail "no Maximum throughput line: $(cat "$TMP/dv")"
grep -q '^  Lost at that point: *[0-9.]*%$' "$TMP/dv" || fail "no 'Lost at that point' line"
# -i 0.5 over a 6 s ramp: 12 interval lines (a header, then one per interval).
assert_ge "plot lines" 12 "$(grep -vc '^#' "$TMP/dv.plot")"
[ -s "$TMP/chart/resperf.png" ] || fail "no resperf.png"
# The server never answers more than its capacity (20000; 10% for an interval that
# drains its queue), however busy the machine.
assert_le "dnsvolley Maximum throughput" 22000 "$dv"
# Each generator must have offered more than the server takes (22,000 qps, column 3 of
# both plot files) for its figure to be the server's; a starved generator (a busy
# machine: resperf is one busy-waiting thread) makes the comparison meaningless.
offered() { awk '!/^#/ && $3 > m { m = $3 } END { printf "%d", m }' "$1"; }
o=$(offered "$TMP/dv.plot")
echo "dnsvolley: highest offered rate $o qps, Maximum throughput $dv"
[ "$o" -ge 22000 ] || skip "dnsvolley offered at most $o qps (busy machine): its figure is not the server's"
# The server's capacity is 20000: dnsvolley sees it within 10%.
assert_ge "dnsvolley Maximum throughput" 18000 "$dv"
command -v resperf >/dev/null ||
	skip "resperf (Debian package dnsperf) is not installed: dnsvolley's figure checked, no comparison"
(cd "$TMP" && resperf -s 127.0.0.1 -p "$R_PORT" -d "$TMP/big.txt" -m 40000 -r 6 -t 1 \
	-P "$TMP/rp.plot") >"$TMP/rp" 2>&1 || fail "resperf failed: $(cat "$TMP/rp")"
rp=$(mt "$TMP/rp")
[ -n "$rp" ] || fail "no Maximum throughput line from resperf: $(cat "$TMP/rp")"
o=$(offered "$TMP/rp.plot")
echo "resperf: highest offered rate $o qps, Maximum throughput $rp"
[ "$o" -ge 22000 ] || skip "resperf offered at most $o qps (busy machine): dnsvolley's figure checked, no comparison"
assert_ge "dnsvolley vs resperf (x1000)" 900 $((dv * 1000 / rp))
assert_le "dnsvolley vs resperf (x1000)" 1100 $((dv * 1000 / rp))
