#!/usr/bin/env bash
# plot: `dnsvolley plot` on a real run (results file with interval snapshots, and its history CSV)
# leaves valid PNG and SVG charts, data files, scripts and index.html; compare/plot input errors
# exit 2 with "FILE: why"; a missing gnuplot is a clear error.
source "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "no dnsvolley binary"
[ -x "$RESPONDER" ] || skip "no responder"
command -v gnuplot >/dev/null || skip "gnuplot not installed"

for i in $(seq 4000); do echo "p$i.example. AAAA"; done >"$TMP/list.txt"
start_responder r
"$DV" -s 'a<&>=127.0.0.1' -p "$r_PORT" -d "L=$TMP/list.txt" --hot-runs 1 -q 20 -S 0.05 \
	--passes cold,hot --flush true --repeat 2 --quiet \
	--json "$TMP/run.json" --csv "$TMP/h.csv" --dns-metrics "$TMP/m.jsonl" >"$TMP/run.out" 2>&1 ||
	fail "run: $(cat "$TMP/run.out")"
stop_responder r
# 2 repeats x (cold, hot) x 4000 queries, all answered.
assert_eq "history sent" 16000 "$(awk -F, 'NR > 1 { s += $9 } END { print s }' "$TMP/h.csv")"
assert_eq "history completed" 16000 "$(awk -F, 'NR > 1 { s += $10 } END { print s }' "$TMP/h.csv")"
# The responder also saw the readiness probes of the cold passes: at least the replayed ones.
assert_ge "responder received" 16000 "$(resp_count r received)"
assert_eq "history rows" 5 "$(wc -l <"$TMP/h.csv" | tr -d ' ')"

png_ok() {
	[ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e47" ] || fail "$1: not a PNG"
	if have_setup file "file(1) not installed: PNGs checked by their magic only"; then
		file "$1" | grep -q 'PNG image data' || fail "$1: $(file "$1")"
	fi
}
svg_ok() {
	if have_setup xmllint "xmllint not installed (libxml2-utils): SVGs not parsed"; then
		xmllint --noout "$1" || fail "$1: not XML"
	fi
	grep -q '<svg' "$1" || fail "$1: no <svg>"
}

out="$TMP/plots"
"$DV" plot "$TMP/run.json" -o "$out" >"$TMP/plot.out" 2>&1 || fail "plot: $(cat "$TMP/plot.out")"
assert_eq "plot says" "dnsvolley plot: wrote $out/index.html" "$(cat "$TMP/plot.out")"
# Every pass here is one run through 4,000 names (tens of ms): too short for a throughput
# figure (doc/methodology.md), so no qps bar is drawn as if measured; the page says why.
grep -q '<p>Not drawn: no pass has a throughput figure (each too short' "$out/index.html" ||
	fail "index: bars-qps drawn or no note"
[ -e "$out/bars-qps.png" ] && fail "bars-qps.png drawn from passes too short to measure"
for c in latency qps-time loss-time bars-p99; do
	png_ok "$out/$c.png"
	svg_ok "$out/$c.svg"
	[ -s "$out/$c.gp" ] || fail "no $c.gp"
	grep -q "<a href=\"$c.svg\"><img src=\"$c.png\"" "$out/index.html" || fail "index lacks $c"
done
echo "ok: 4 charts, PNG and SVG"
# One latency line per target/list/pass, one time series per reported pass (2 x 2).
assert_eq "latency data files" 2 "$(ls "$out"/latency-*.dat | wc -l | tr -d ' ')"
assert_eq "interval data files" 4 "$(ls "$out"/pass-*.dat | wc -l | tr -d ' ')"
# The percentile data start at 100% and decrease; latency never decreases.
awk 'NR == 2 && $1 != 100 { exit 1 } NR > 2 && ($1 > px || $2 < py) { exit 1 } NR > 1 { px = $1; py = $2 }' \
	"$out/latency-1.dat" || fail "latency-1.dat is not a percentile curve"
# bars.dat: a cluster per list and pass kind (L cold, L hot), per target mean min max of qps
# and p99; with two repeats the bars carry min-max error bars.
assert_eq "bars rows" 2 "$(grep -vc '^#' "$out/bars.dat")"
assert_eq "bars labels" '"L cold" "L hot"' "$(grep -v '^#' "$out/bars.dat" | cut -d'"' -f2 | sed 's/.*/"&"/' | paste -sd' ')"
assert_eq "bars columns after the label" 6 "$(awk '!/^#/ { sub(/^"[^"]*"/, ""); print NF; exit }' "$out/bars.dat")"
awk '!/^#/ { sub(/^"[^"]*"/, ""); if (!($1 == "-" && $2 == "-" && $3 == "-")) exit 1 }' "$out/bars.dat" \
	|| fail "bars.dat: a qps figure of a pass too short: $(cat "$out/bars.dat")"
awk '!/^#/ { sub(/^"[^"]*"/, ""); if (!($5 <= $4 && $4 <= $6 && $5 > 0)) exit 1 }' "$out/bars.dat" \
	|| fail "bars.dat: p99 min <= mean <= max: $(cat "$out/bars.dat")"
grep -q 'set style histogram errorbars' "$out/bars-p99.gp" || fail "bars-p99: no error bars"
grep -q "using 5:6:7:xtic(1)" "$out/bars-p99.gp" || fail "bars-p99: $(grep plot "$out/bars-p99.gp")"
grep -q 'set logscale x' "$out/latency.gp" && grep -q 'set logscale y' "$out/latency.gp" \
	|| fail "latency: not log-log"
# gnuplot ran without a warning; each PNG is a real chart (not an empty frame).
assert_eq "gnuplot warnings" "" "$(cat "$out/gnuplot.log")"
for c in latency qps-time loss-time bars-p99; do
	assert_ge "$c.png bytes" 15000 "$(stat -c %s "$out/$c.png")"
done
# The label with markup characters is escaped in the page, never raw.
grep -q '<td class="l">a&lt;&amp;&gt;</td><td class="l">L</td><td class="l">cold</td><td>2</td>' \
	"$out/index.html" || fail "index: summary row missing or unescaped"
grep -q 'a<&>' "$out/index.html" && fail "index: raw label"
if have_setup xmllint "xmllint not installed (libxml2-utils): index.html not parsed"; then
	xmllint --html --noout "$out/index.html" 2>"$TMP/lint" || fail "index.html: $(cat "$TMP/lint")"
fi

# A short pass (one interval snapshot, no loss): no "empty x range" or "empty y range".
# One run through the list (4,000 queries, ~20 ms) ends far inside the first 1 s
# snapshot even on a loaded machine; 30 runs took 0.7 s quiet and spilled into a
# second and third snapshot under load.
start_responder r2
"$DV" -s "127.0.0.1:$r2_PORT" -d "$TMP/list.txt" -n 1 -q 20 -S 600 --quiet --json "$TMP/short.json" \
	>/dev/null 2>&1 || fail "short run"
stop_responder r2
"$DV" plot "$TMP/short.json" -o "$TMP/short" >/dev/null 2>&1 || fail "plot short"
assert_eq "short pass: interval rows" 1 "$(grep -vc '^#' "$TMP/short/pass-1.dat")"
assert_eq "short pass: gnuplot warnings" "" "$(cat "$TMP/short/gnuplot.log")"
assert_ge "short pass: qps-time.png bytes" 10000 "$(stat -c %s "$TMP/short/qps-time.png")"

# History plot.
"$DV" plot "$TMP/h.csv" -o "$TMP/hist" >/dev/null 2>&1 || fail "plot history"
assert_eq "history: gnuplot warnings" "" "$(cat "$TMP/hist/gnuplot.log")"
# Rows of one day: an axis of clock times, the day in its label, a range of minutes, not a year.
grep -q "set format x \"%H:%M" "$TMP/hist/trend-qps.gp" || fail "trend: $(grep 'format x' "$TMP/hist/trend-qps.gp")"
grep -q "set xlabel 'time (UTC) on 20" "$TMP/hist/trend-qps.gp" || fail "trend: no day in the label"
read -r lo hi < <(sed -n "s/^set xrange \['\(.*\)':'\(.*\)'\]/\1 \2/p" "$TMP/hist/trend-qps.gp")
assert_le "history x range (s)" 3600 $(($(date -d "$hi" +%s) - $(date -d "$lo" +%s)))
for c in trend-qps trend-p99; do png_ok "$TMP/hist/$c.png"; svg_ok "$TMP/hist/$c.svg"; done
assert_eq "trend data files" 2 "$(ls "$TMP/hist"/trend-*.dat | wc -l | tr -d ' ')"
assert_eq "trend-1 points" 2 "$(grep -vc '^#' "$TMP/hist/trend-1.dat")"

# dns-metrics: header first, stats_sum last, every line one JSON object.
assert_eq "metrics first type" header "$(head -1 "$TMP/m.jsonl" | sed 's/.*"type":"\([a-z_]*\)".*/\1/')"
assert_eq "metrics stats_sum lines" 5 "$(grep -c '"type":"stats_sum"' "$TMP/m.jsonl")"
if have_setup python3 "python3 not installed: metrics lines not parsed"; then
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$TMP/m.jsonl" ||
		fail "metrics: a line is not JSON"
fi

# Errors: exit 2 with "FILE: why".
st=0; "$DV" plot "$TMP/nope.json" -o "$TMP/x" 2>"$TMP/e1" || st=$?
assert_eq "plot missing input status" 2 "$st"
grep -q "$TMP/nope.json: No such file" "$TMP/e1" || fail "plot missing input: $(cat "$TMP/e1")"
echo "garbage" >"$TMP/g.txt"
st=0; "$DV" plot "$TMP/g.txt" -o "$TMP/x" 2>"$TMP/e2" || st=$?
assert_eq "plot garbage status" 2 "$st"
grep -q "$TMP/g.txt: neither a dnsvolley results file" "$TMP/e2" || fail "$(cat "$TMP/e2")"
st=0; "$DV" plot "$TMP/run.json" -o "$TMP/x" --gnuplot /nonexistent/gnuplot 2>"$TMP/e3" || st=$?
assert_eq "plot without gnuplot status" 2 "$st"
grep -q "not found in PATH; plots need gnuplot" "$TMP/e3" || fail "$(cat "$TMP/e3")"
st=0; "$DV" plot "$TMP/run.json" 2>/dev/null || st=$?
assert_eq "plot without -o status" 2 "$st"
echo '{"not": "results"}' >"$TMP/bad.json"
st=0; "$DV" compare "$TMP/run.json" "$TMP/bad.json" >/dev/null 2>"$TMP/e4" || st=$?
assert_eq "compare bad file status" 2 "$st"
grep -q "^dnsvolley compare: $TMP/bad.json: " "$TMP/e4" || fail "$(cat "$TMP/e4")"
st=0; "$DV" compare "$TMP/run.json" 2>/dev/null || st=$?
assert_eq "compare one file status" 2 "$st"
st=0; "$DV" compare --max-p99 5 "$TMP/run.json" "$TMP/run.json" 2>"$TMP/e5" || st=$?
assert_eq "compare bad gate status" 2 "$st"
# The same file twice: every gate holds, JUnit written.
st=0; "$DV" compare --max-qps-drop 0% --max-p99-rise 0% --junit "$TMP/j.xml" "$TMP/run.json" \
	"$TMP/run.json" >"$TMP/c.out" || st=$?
assert_eq "compare same file status" 0 "$st"
assert_eq "compare same file gates" "gates: 4 checked, 0 failed, 0 skipped" "$(tail -1 "$TMP/c.out")"
grep -q '<testsuites tests="4" failures="0"' "$TMP/j.xml" || fail "junit: $(cat "$TMP/j.xml")"
echo "PASS: plot"
