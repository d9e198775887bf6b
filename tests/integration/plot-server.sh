#!/usr/bin/env bash
# plot-server: `dnsvolley plot` draws the server's CPU per answer (bars-server: a bar per
# target in a cluster per list and pass kind, min-max over the repeats) through gnuplot.
# The run's server figures are replaced by fixed ones (no timing in the test): server.dat
# holds exactly their mean, min and max, "- - -" where the server was not measured; a
# results file without server figures gets no such chart and no data file.
source "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "no dnsvolley binary"
[ -x "$RESPONDER" ] || skip "no responder"
command -v gnuplot >/dev/null || skip "gnuplot not installed"
command -v python3 >/dev/null || skip "python3 not installed"

seq -f "s%g.example. A" 300 >"$TMP/list.txt"
start_responder r
"$DV" -s "v1=127.0.0.1:$r_PORT" -s "v2=127.0.0.1:$r_PORT" -d "L=$TMP/list.txt" --hot-runs 1 \
	-q 20 --passes cold,hot --flush true --repeat 2 --quiet --json "$TMP/run.json" \
	>"$TMP/run.out" 2>&1 || fail "run: $(cat "$TMP/run.out")"
stop_responder r

# fixed server figures: us per answer by target, pass kind and repeat (None: not measured)
python3 - "$TMP/run.json" "$TMP/fixed.json" "$TMP/none.json" <<'P'
import json, sys
us = {("v1", "cold"): [10, 14], ("v1", "hot"): [5, 7], ("v2", "cold"): [20, 24], ("v2", "hot"): [None, None]}
d = json.load(open(sys.argv[1]))
targets = [t["label"] for t in d["targets"]]
n = 0
for p in d["passes"]:
    if p["kind"] == "warmup":
        continue
    s, c = p["server"], p["counters"]
    v = us[(targets[p["target"]], p["kind"])][p["repeat"]]
    answers = c["completed"] + c["late"]
    s["answers"] = answers
    s["ok"] = v is not None
    s["error"] = "" if v is not None else "not on this host (test)"
    s["cpu_user_s"] = v * answers / 1e6 if v is not None else 0
    s["cpu_sys_s"] = 0
    n += 1
assert n == 8, n
json.dump(d, open(sys.argv[2], "w"))
for p in d["passes"]:
    p.pop("server", None)
json.dump(d, open(sys.argv[3], "w"))
P

png_ok() {
	[ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e47" ] || fail "$1: not a PNG"
}
out="$TMP/plots"
"$DV" plot "$TMP/fixed.json" -o "$out" >"$TMP/plot.out" 2>&1 || fail "plot: $(cat "$TMP/plot.out")"
assert_eq "server.dat" '"L cold" 12 10 14 22 20 24
"L hot" 6 5 7 - - -' "$(grep -v '^#' "$out/server.dat")"
png_ok "$out/bars-server.png"
grep -q '<svg' "$out/bars-server.svg" || fail "bars-server.svg: no <svg>"
grep -q 'set style histogram errorbars' "$out/bars-server.gp" || fail "bars-server: no error bars"
grep -q "'server.dat' using 2:3:4:xtic(1) lc 1 title 'v1', 'server.dat' using 5:6:7 lc 2 title 'v2'" \
	"$out/bars-server.gp" || fail "bars-server.gp: $(grep plot "$out/bars-server.gp")"
grep -q "set yrange \[0:26.4\]" "$out/bars-server.gp" || fail "bars-server.gp: $(grep yrange "$out/bars-server.gp")"
grep -q '<a href="bars-server.svg"><img src="bars-server.png"' "$out/index.html" ||
	fail "index.html lacks bars-server"
grep -q "<h2>Mean server CPU per answer (us), targets side by side (bars: min-max of 2 repeats) \[udp\]</h2>" \
	"$out/index.html" || fail "index.html: $(grep -o '<h2>[^<]*</h2>' "$out/index.html")"

# no server figures: no chart, no data file; the other charts as before
out="$TMP/plots-none"
"$DV" plot "$TMP/none.json" -o "$out" >"$TMP/plot.out" 2>&1 || fail "plot none: $(cat "$TMP/plot.out")"
[ -e "$out/server.dat" ] && fail "server.dat without server figures"
[ -e "$out/bars-server.png" ] && fail "bars-server.png without server figures"
grep -q "bars-server" "$out/index.html" && fail "index.html names bars-server"
# bars-p99 is drawn for any pass (bars-qps only where a pass lasted long enough for a
# throughput figure, which the fixed passes here need not).
png_ok "$out/bars-p99.png"
echo "plot-server: ok"
