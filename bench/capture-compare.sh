#!/usr/bin/env bash
# capture-compare.sh: run dnsvolley under tcpdump and compare its report with the packets on the wire.
#
# usage: bench/capture-compare.sh [-i IFACE] [-B DIR] -p PORT -- DNSVOLLEY-ARGS...
# Captures UDP to and from PORT on IFACE (default lo) while dnsvolley runs with
# DNSVOLLEY-ARGS (give it -s ADDR -p PORT and the rest), then prints, from the
# capture: query packets, answer packets matched to a query (same client port
# and DNS ID, first unanswered query first) and the percentiles of the wire
# latency (query packet -> its answer packet); and beside them the report's
# sent, completed, late, unexpected and p50/p90/p99. The last line is
# "capture-compare: ok" when counts agree and each percentile is within
# max(5 us, 5%) (TOL_US and TOL_PCT override), else "capture-compare: DIFFERS". When the
# wire clock timed a sample (its report has a "Sampling error (95%)" line), the distance
# is from the capture's percentile (all queries) to the report percentile's 95% interval.
# The target must send each answer in a datagram of its own (dnsvolley-responder --no-gso,
# as tests/integration/capture.sh starts it: with UDP GSO, lo's capture holds one packet
# per batch of answers, and the counts and percentiles differ).
# Needs tcpdump and the right to capture (root or CAP_NET_RAW).
# Exit status: 0 ok, 1 differs, 2 usage or capture problem.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
iface=lo
build="$top/build"
port=""
while [ $# -gt 0 ]; do
	case $1 in
	-i) iface=$2; shift 2 ;;
	-B) build=$(cd "$2" && pwd); shift 2 ;;
	-p) port=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: bench/capture-compare.sh [-i IFACE] [-B DIR] -p PORT -- DNSVOLLEY-ARGS..." >&2; exit 2 ;;
	esac
done
[ -n "$port" ] && [ $# -gt 0 ] || { echo "capture-compare: need -p PORT and dnsvolley's arguments after --" >&2; exit 2; }
command -v tcpdump >/dev/null || { echo "capture-compare: needs tcpdump (Debian package tcpdump)" >&2; exit 2; }
tol_us=${TOL_US:-5}
tol_pct=${TOL_PCT:-5}
. "$top/bench/lib.sh"
bench_tmp cap

tcpdump -i "$iface" -nn -U -B 16384 -s 128 --immediate-mode --time-stamp-precision=nano -w "$tmp/cap.pcap" \
	"udp port $port" 2>"$tmp/tcpdump.err" &
tpid=$!
bench_bg "$tpid"
for _ in $(seq 200); do
	grep -q "listening on" "$tmp/tcpdump.err" 2>/dev/null && break
	kill -0 "$tpid" 2>/dev/null || { echo "capture-compare: tcpdump: $(cat "$tmp/tcpdump.err")" >&2; exit 2; }
	sleep 0.025
done
sleep 0.1
rc=0
"$build/dnsvolley" "$@" >"$tmp/report" 2>&1 || rc=$?
# Stop the capture once it holds every packet the report counts (queries sent, and
# answers completed, late or unexpected; -U writes each at once), up to 30 s: a fixed
# sleep could end a tcpdump descheduled on a busy machine before it read them all.
want=$(awk -F: '/^ *(Queries sent|Queries completed|Late answers|Unexpected answers):/ {
	split($2, a, " "); s += a[1] } END { print s + 0 }' "$tmp/report")
for _ in $(seq 150); do
	[ "$(tcpdump -r "$tmp/cap.pcap" 2>/dev/null | wc -l)" -ge "$want" ] && break
	sleep 0.2
done
kill -INT "$tpid"
wait "$tpid" 2>/dev/null || true
bench_stop "$tpid"
kdrop=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$tmp/tcpdump.err")
if [ "${kdrop:-0}" != 0 ]; then
	echo "capture-compare: tcpdump lost $kdrop packets; the capture is incomplete (a busy machine?)" >&2
	exit 2
fi

# The report's figures.
rf() { sed -n "s/^ *$1: *\([0-9.]*\).*/\1/p" "$tmp/report" | head -n 1; }
sent=$(rf "Queries sent"); completed=$(rf "Queries completed"); late=$(rf "Late answers")
unexpected=$(rf "Unexpected answers")
read -r r50 r90 r99 < <(sed -n 's/^ *Latency percentiles (s): p50 \([0-9.]*\), p90 \([0-9.]*\), p99 \([0-9.]*\),.*/\1 \2 \3/p' "$tmp/report")
clock=$(sed -n 's/^ *Latency clock: *\([a-z]*\).*/\1/p' "$tmp/report")
# The wire clock's sample: each percentile's 95% interval (none when every query was timed).
read -r l50 h50 l90 h90 l99 h99 < <(sed -n 's/^ *Sampling error (95%): p50 \([0-9.]*\)-\([0-9.]*\), p90 \([0-9.]*\)-\([0-9.]*\), p99 \([0-9.]*\)-\([0-9.]*\),.*/\1 \2 \3 \4 \5 \6/p' "$tmp/report") || true

# The wire's figures: queries go to PORT, answers come from it. -T domain: tcpdump decodes
# DNS (and so prints the ID) only on port 53 unless told.
tcpdump -T domain -nn -tt --time-stamp-precision=nano -r "$tmp/cap.pcap" 2>/dev/null | awk -v port="$port" -v lat="$tmp/lat" '
function portof(a,   n, p) { sub(/:$/, "", a); n = split(a, p, "."); return p[n] }
$2 == "IP" || $2 == "IP6" {
	src = portof($3); dst = portof($5); id = $6; sub(/[^0-9].*/, "", id)
	if (dst == port) { k = src " " id; q[k, qn[k]++] = $1; queries++ }
	else if (src == port) {
		answers++; k = dst " " id
		if (qa[k] < qn[k]) { printf "%.3f\n", ($1 - q[k, qa[k]++]) * 1e6 > lat; matched++ }
	}
}
END { printf "%d %d %d\n", queries, answers, matched }' >"$tmp/wire"
touch "$tmp/lat"
# Percentile q of the sorted latencies: the value at rank ceil(q * n).
pctl() { sort -g "$tmp/lat" | awk -v q="$1" '{ v[NR] = $1 } END { r = int(q * NR + 0.999999); if (r < 1) r = 1; print NR ? v[r] : 0 }'; }
read -r wq wa wm <"$tmp/wire"
w50=$(pctl 0.5); w90=$(pctl 0.9); w99=$(pctl 0.99)


awk -v c="${clock:-?}" -v s="$sent" -v d="$completed" -v l="$late" -v u="$unexpected" -v a="$r50" -v b="$r90" -v e="$r99" \
	'BEGIN { printf "report (clock %s): sent %s, completed %s, late %s, unexpected %s; p50 %.1f us, p90 %.1f us, p99 %.1f us\n", c, s, d, l, u, a * 1e6, b * 1e6, e * 1e6 }'
printf 'wire:               query packets %s, answer packets %s, matched %s; p50 %.1f us, p90 %.1f us, p99 %.1f us\n' \
	"$wq" "$wa" "$wm" "$w50" "$w90" "$w99"
verdict=$(awk -v s="$sent" -v c="$completed" -v l="$late" -v u="$unexpected" -v wq="$wq" -v wa="$wa" -v wm="$wm" \
	-v r50="$r50" -v r90="$r90" -v r99="$r99" -v w50="$w50" -v w90="$w90" -v w99="$w99" -v tu="$tol_us" -v tp="$tol_pct" \
	-v l50="${l50:-}" -v h50="${h50:-}" -v l90="${l90:-}" -v h90="${h90:-}" -v l99="${l99:-}" -v h99="${h99:-}" '
# A sampled report: the distance from the wire figure to the report percentile'"'"'s 95% interval.
function chk(name, r, w, lo, hi,   d, t, ci) { r *= 1e6; d = r - w; if (d < 0) d = -d; t = w * tp / 100; if (t < tu) t = tu
	ci = ""
	if (lo != "") { lo *= 1e6; hi *= 1e6; d = w < lo ? lo - w : (w > hi ? w - hi : 0)
		ci = sprintf(" (sample: 95%% interval %.1f-%.1f us)", lo, hi) }
	printf "  %s: report %.1f us%s, wire %.1f us, difference %.1f us (allowed %.1f)%s\n", name, r, ci, w, d, t, d <= t ? "" : "  <- outside"
	return d <= t }
BEGIN {
	ok = 1
	if (wq != s) { printf "  query packets %d != sent %d\n", wq, s; ok = 0 }
	if (wm != c + l) { printf "  matched answers %d != completed + late %d\n", wm, c + l; ok = 0 }
	if (wa != wm + u) { printf "  answer packets %d != matched + unexpected %d\n", wa, wm + u; ok = 0 }
	ok = chk("p50", r50, w50, l50, h50) && ok; ok = chk("p90", r90, w90, l90, h90) && ok
	ok = chk("p99", r99, w99, l99, h99) && ok
	print ok ? "ok" : "DIFFERS"
}')
echo "$verdict" | sed '$d'
echo "capture-compare: $(echo "$verdict" | tail -n 1)"
[ "$(echo "$verdict" | tail -n 1)" = ok ] || exit 1
[ "$rc" = 0 ] || echo "capture-compare: dnsvolley exited with status $rc" >&2
exit 0
