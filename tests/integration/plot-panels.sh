#!/usr/bin/env bash
# plot-panels: the issue 26 layout rules on real runs. A study of 2 targets x 2 lists x
# cold/hot x 2 repeats draws qps and loss over time as small multiples (4 panels, one per
# target/list, each with its legend in the panel's top margin) and its latency curves one
# panel per list; the cold passes (one run through 300 names) are too short to measure, so
# their qps bars are left out with a label, never drawn as measured. A nightly history
# gets a date tick at its first night's time each day; a one-interval resperf ramp draws
# without gnuplot's range warnings. Structure only: no figure is asserted.
source "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "no dnsvolley binary"
[ -x "$RESPONDER" ] || skip "no responder"
command -v gnuplot >/dev/null || skip "gnuplot not installed"

for i in $(seq 300); do echo "s$i.example. SOA"; done >"$TMP/soa.txt"
for i in $(seq 300); do echo "www.a$i.example. A"; done >"$TMP/a.txt"
start_responder r1
start_responder r2
"$DV" -s "v1=127.0.0.1:$r1_PORT" -s "v2=127.0.0.1:$r2_PORT" -d "SOA=$TMP/soa.txt" \
	-d "A=$TMP/a.txt" --passes cold,hot --repeat 2 --hot-time 1 --flush true -q 10 -S 0.25 \
	--quiet --json "$TMP/study.json" --csv "$TMP/h.csv" >"$TMP/run.out" 2>&1 ||
	fail "study: $(cat "$TMP/run.out")"
stop_responder r1
stop_responder r2
out="$TMP/plots"
"$DV" plot "$TMP/study.json" -o "$out" >/dev/null 2>"$TMP/plot.err" || fail "plot: $(cat "$TMP/plot.err")"
assert_eq "gnuplot warnings" "" "$(cat "$out/gnuplot.log")"

# qps and loss over time: 16 passes in 4 panels (2 x 2), drawn once per image (PNG, SVG).
for c in qps-time loss-time; do
	assert_eq "$c: multiplot layouts" 2 "$(grep -c '^set multiplot layout 2,2 title ' "$out/$c.gp")"
	assert_eq "$c: panels" 8 "$(grep -c '^plot ' "$out/$c.gp")"
	assert_eq "$c: series" 32 "$(grep -c "using 7:[23]:" "$out/$c.gp")"
	# Each panel's legend in its top margin, out of the data and off the axis labels.
	assert_eq "$c: legend placement" 2 "$(grep -c '^set key tmargin center horizontal maxrows 1 ' "$out/$c.gp")"
	# A legend entry per target/list/kind, each in its own panel: the first panel holds v1/SOA.
	assert_eq "$c: first panel's entries" "'v1/SOA/cold' 'v1/SOA/hot'" \
		"$(awk '/^plot /{n++} n == 1 && /title /{sub(/.* title /, ""); sub(/, \\$/, ""); printf "%s%s", s, $0; s = " "} /^set ylabel/ && n == 1 {exit}' "$out/$c.gp")"
	grep -q 'set terminal pngcairo size 960,860 ' "$out/$c.gp" ||
		fail "$c: not sized for 2 rows: $(grep terminal "$out/$c.gp")"
done
# Latency: one panel per list (targets compared within it), 1 x 2.
assert_eq "latency layout" 2 "$(grep -c '^set multiplot layout 1,2 ' "$out/latency.gp")"
assert_eq "latency panels" 4 "$(grep -c '^plot ' "$out/latency.gp")"

# The cold passes lasted a few ms: no qps figure, no bar, a label at their clusters (0 and 2).
assert_eq "bars.dat cold qps" "- - - - - -" \
	"$(awk '/^"SOA cold"/ { print $3, $4, $5, $9, $10, $11 }' "$out/bars.dat")"
assert_eq "bars-qps labels" 'set label "too short\n(no qps figure)" at 0, graph 0.1 center front boxed|set label "too short\n(no qps figure)" at 2, graph 0.1 center front boxed' \
	"$(grep '^set label' "$out/bars-qps.gp" | sort -u | paste -sd'|')"
# The hot passes (1 s each) are measured: their bars are there.
awk '/^"SOA hot"/ { if ($3 == "-" || $9 == "-") exit 1 }' "$out/bars.dat" || fail "hot bars missing"
grep -q "<img src=\"bars-qps.png\"" "$out/index.html" || fail "no bars-qps on the page"

# A nightly history: six nights near 22:21 UTC. Ticks every day at the first night's time
# (22:21:00), so each point sits on its own date's tick.
{
	head -1 "$TMP/h.csv"
	n=0
	for d in 24:22:21:00 25:22:21:40 26:22:23:05 27:22:20:10 28:22:22:30 29:22:21:15; do
		awk -F, -v OFS=, -v d="2026-11-${d%%:*}T${d#*:}Z" 'NR == 3 { $1 = d; print }' "$TMP/h.csv"
		n=$((n + 1))
	done
} >"$TMP/nights.csv"
"$DV" plot "$TMP/nights.csv" -o "$TMP/trend" >/dev/null 2>&1 || fail "plot history"
assert_eq "trend gnuplot warnings" "" "$(cat "$TMP/trend/gnuplot.log")"
assert_eq "trend xtics" "set xtics '2026-11-24T22:21:00Z', 86400" \
	"$(grep '^set xtics' "$TMP/trend/trend-qps.gp" | sort -u)"
assert_eq "trend date format" 'set format x "%m-%d"' "$(grep '^set format x' "$TMP/trend/trend-qps.gp" | sort -u)"
grep -q "^set xlabel 'date (UTC; a tick at 22:21 each day" "$TMP/trend/trend-qps.gp" ||
	fail "trend: $(grep xlabel "$TMP/trend/trend-qps.gp")"
# Thirty nights: a tick every 3 days (at most 10 ticks).
{
	head -1 "$TMP/h.csv"
	for i in $(seq 0 29); do
		awk -F, -v OFS=, -v d="$(date -u -d "2026-10-01T22:21:00Z + $i days" +%Y-%m-%dT%H:%M:%SZ)" \
			'NR == 3 { $1 = d; print }' "$TMP/h.csv"
	done
} >"$TMP/month.csv"
"$DV" plot "$TMP/month.csv" -o "$TMP/month" >/dev/null 2>&1 || fail "plot month"
assert_eq "month xtics" "set xtics '2026-10-01T22:21:00Z', 259200" \
	"$(grep '^set xtics' "$TMP/month/trend-qps.gp" | sort -u)"

# resperf: a ramp that runs out of names within its first interval has one row; the chart
# gets ranges around it (no "empty x range"), latency in ms, the legends under the panels.
# 3,000 names at a ramp to 20,000 qps over 3 s last 0.95 s by the schedule: one 0.5 s
# interval ends; 300 names (0.3 s) end inside the first: no row, no chart, a note, exit 0.
for i in $(seq 3000); do echo "r$i.example. SOA"; done >"$TMP/rp.txt"
start_responder R
(cd "$TMP" && "$DV" resperf -s 127.0.0.1 -p "$R_PORT" -d "$TMP/rp.txt" -m 20000 -r 3 \
	-P "$TMP/rp.plot" -o "$TMP/rp") >"$TMP/rp.out" 2>&1 || fail "resperf: $(cat "$TMP/rp.out")"
(cd "$TMP" && "$DV" resperf -s 127.0.0.1 -p "$R_PORT" -d "$TMP/soa.txt" -m 20000 -r 3 \
	-P "$TMP/rp0.plot" -o "$TMP/rp0") >"$TMP/rp0.out" 2>&1 || fail "resperf 0 rows: $(cat "$TMP/rp0.out")"
stop_responder R
grep -q '^dnsvolley resperf: -o: no interval ended before the ramp stopped: no chart' "$TMP/rp0.out" ||
	fail "resperf 0 rows: $(cat "$TMP/rp0.out")"
[ -e "$TMP/rp0/resperf.png" ] && fail "resperf 0 rows: a chart of nothing"
assert_eq "resperf rows" 1 "$(grep -vc '^#' "$TMP/rp.plot")"
assert_eq "resperf gnuplot warnings" "" "$(cat "$TMP/rp/gnuplot.log")"
grep -q '^set xrange \[0:' "$TMP/rp/resperf.gp" || fail "resperf: no x range"
assert_eq "resperf legends under the panels" 1 "$(grep -c '^set key below ' "$TMP/rp/resperf.gp")"
grep -q "using 1:(\$6\*1000) with linespoints" "$TMP/rp/resperf.gp" || fail "resperf latency not in ms points"
echo "PASS: plot-panels"
