#!/usr/bin/env bash
# server-stats: the server's own counters read at each pass's edges (--server-stats).
# unbound (stubbing to nsd, servers/nsd-unbound.sh): in a cold pass of N distinct names
# the queries it counted equal the answers we got, its cache misses equal N and its hits
# 0; in the hot pass after it (one run through the list) hits N, misses 0. A "cold" pass
# whose flush empties nothing gets a warning with the server's numbers. knotd with
# mod-stats: the queries it counted equal the answers. Hostile control tools (garbage,
# exit 1, a hang, missing): one clear line, the client's figures intact, exit status 0.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
[ -x "$RESPONDER" ] || skip "dnsvolley-responder not built"
command -v python3 >/dev/null || skip "python3 not installed"
. "$(dirname "$0")/servers/nsd-unbound.sh"
require_nsd_unbound
command -v knotd >/dev/null || skip "knotd not installed (scripts/install-deps)"
command -v knotc >/dev/null || skip "knotc not installed (scripts/install-deps)"

# st FILE PASS KEY: passes[PASS].server.stats.KEY; pc FILE PASS KEY: passes[PASS].counters.KEY
st() {
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["passes"][int(sys.argv[2])]["server"]["stats"][sys.argv[3]]
print(str(v).lower() if isinstance(v,bool) else v)' "$@"
}
pc() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["passes"][int(sys.argv[2])]["counters"][sys.argv[3]])' "$@"
}

make_zone_lists
start_nsd_unbound
UC="unbound:-c $TMP/unbound.conf"

# --- cold then hot, the list once each: the server's counters say cold and hot
rc=0
"$DV" -s "u=127.0.0.1:$UPORT" -d "SOA=$TMP/soa.txt" --passes cold,hot --hot-runs 1 \
	--flush "$UNBOUND_FLUSH" --server-stats "u=$UC" -q 50 -t 5 --no-progress \
	--json "$TMP/r.json" --dns-metrics "$TMP/m.jsonl" >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
[ "$rc" = 0 ] || fail "study exited $rc: $(cat "$TMP/err.txt")"
for p in 0 1; do
	assert_eq "pass $p: counters read" true "$(st "$TMP/r.json" $p ok)"
	assert_eq "pass $p: kind" unbound "$(st "$TMP/r.json" $p kind)"
	assert_eq "pass $p: every query answered" "$N" "$(pc "$TMP/r.json" $p completed)"
	assert_eq "pass $p: queries unbound counted" "$N" "$(st "$TMP/r.json" $p queries)"
done
assert_eq "cold: cache misses" "$N" "$(st "$TMP/r.json" 0 cache_misses)"
assert_eq "cold: cache hits" 0 "$(st "$TMP/r.json" 0 cache_hits)"
assert_eq "hot: cache hits" "$N" "$(st "$TMP/r.json" 1 cache_hits)"
assert_eq "hot: cache misses" 0 "$(st "$TMP/r.json" 1 cache_misses)"
assert_eq "no cold/hot warning" 0 "$(grep -c "was not \(cold\|hot\)" "$TMP/err.txt" || true)"
assert_eq "no table cell marked '!' (cache counters agree)" 0 "$(grep -c "(lost [0-9]*)!" "$TMP/out.txt" || true)"
assert_eq "report: the counters' line per pass" 2 \
	"$(grep -c "^  Server counters (unbound): $N queries counted by the server ($N answers here)$" "$TMP/out.txt")"
grep -q "^  Server cache per query: hits 0.0000, misses 1.0000 (0 hits, $N misses)$" "$TMP/out.txt" ||
	fail "no cache line for the cold pass"
assert_eq "dns-metrics: the queries unbound counted" "$N $N" \
	"$(python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["server"]["stats"]["queries"]) for l in open(sys.argv[1]) if "\"stats_sum\"" in l and "\"server\"" in l))' "$TMP/m.jsonl")"
# read back: report and compare show them again
"$DV" report "$TMP/r.json" >"$TMP/rep.txt" || fail "report failed"
"$DV" compare "$TMP/r.json" "$TMP/r.json" >"$TMP/cmp.txt" || fail "compare failed"
grep -q "^  server misses/query *1.0000 *1.0000 *+0.0000" "$TMP/cmp.txt" ||
	fail "compare: no misses row: $(cat "$TMP/cmp.txt")"
grep -q "^  server queries *$N *$N " "$TMP/cmp.txt" || fail "compare: no queries row"

# --- a "cold" pass whose flush empties nothing: the server counts hits, and says so
rc=0
"$DV" -s "u=127.0.0.1:$UPORT" -d "SOA=$TMP/soa.txt" --passes cold --flush true \
	--server-stats "u=$UC" -q 50 -t 5 --no-progress --json "$TMP/w.json" \
	>"$TMP/wout.txt" 2>"$TMP/werr.txt" || rc=$?
[ "$rc" = 0 ] || fail "warm cold pass exited $rc: $(cat "$TMP/werr.txt")"
grep -q "^dnsvolley: warning: the cold pass of target u, list SOA, repeat 1: the server counted $N cache hits and 0 misses in $N queries (unbound): the pass was not cold (check --flush)$" "$TMP/werr.txt" ||
	fail "no warning for a cold pass with hits: $(cat "$TMP/werr.txt")"
grep -q "^u *SOA *\(too short\|[0-9]*\) (lost 0)!$" "$TMP/wout.txt" ||
	fail "the table's cell is not marked '!': $(grep -A3 '^Comparison table' "$TMP/wout.txt")"
grep -q "^! the server's own cache counters (--server-stats) say the pass was not what its column says" \
	"$TMP/wout.txt" || fail "no '!' legend: $(cat "$TMP/wout.txt")"
# ... and so do the summary and the page that plot makes from the results file.
"$DV" report "$TMP/w.json" >"$TMP/wrep.txt" || fail "report of the warm cold pass failed"
grep -q "^u *SOA *cold! *1 " "$TMP/wrep.txt" || fail "summary row not marked: $(cat "$TMP/wrep.txt")"
"$DV" compare "$TMP/r.json" "$TMP/w.json" >"$TMP/wcmp.txt" || fail "compare with the warm cold pass failed"
grep -q "^  ! the server's cache counters contradict the pass kind in 0 of base's and 1 of new's repeats" \
	"$TMP/wcmp.txt" || fail "compare does not say which repeats: $(cat "$TMP/wcmp.txt")"
"$DV" plot "$TMP/w.json" -o "$TMP/wplot" >/dev/null || fail "plot of the warm cold pass failed"
grep -q "<td class=\"l\">cold!</td>" "$TMP/wplot/index.html" ||
	fail "the page's summary row is not marked: $(grep -n 'cold' "$TMP/wplot/index.html" | head -5)"
grep -q "^<p>!: the server's own cache counters (--server-stats) contradict" "$TMP/wplot/index.html" ||
	fail "the page has no '!' note"
stop_nsd_unbound
UNBOUND_PID= NSD_PID=

# --- knotd with mod-stats: the queries it counted equal the answers
KPORT=$(free_port)
mkdir -p "$TMP/knot"
{
	bash "$top_srcdir/tests/integration/servers/knot.conf.sh" "$TMP/knot" "$KPORT" \
		"udp-workers: 1" "tcp-workers: 1" "background-workers: 1"
	cat <<K
mod-stats:
  - id: default
template:
  - id: default
    storage: $TMP/knot
    global-module: mod-stats/default
zone:
  - domain: example.
K
} >"$TMP/knot/knot.conf"
printf '$ORIGIN example.\n$TTL 60\n@ SOA ns hm 1 60 60 60 60\n@ NS ns\nns A 127.0.0.1\n* A 192.0.2.1\n' >"$TMP/knot/example.zone"
start_knotd "$TMP/knot"
seq -f "k%g.example A" 3000 >"$TMP/k.txt"
rc=0
"$DV" -s "127.0.0.1:$KPORT" -d "$TMP/k.txt" -c 2 -q 20 -t 5 --no-progress \
	--server-stats "knot:-s $TMP/knot/knot.sock" --json "$TMP/k.json" >"$TMP/kout.txt" 2>"$TMP/kerr.txt" || rc=$?
[ "$rc" = 0 ] || fail "knot run exited $rc: $(cat "$TMP/kerr.txt")"
assert_eq "knot: answers" 3000 "$(pc "$TMP/k.json" 0 completed)"
assert_eq "knot: queries knotd counted" 3000 "$(st "$TMP/k.json" 0 queries)"
assert_eq "knot: no cache figures" false "$(st "$TMP/k.json" 0 cache)"
kill "$KNOT_PID"

# --- hostile control tools, against the bundled responder: one line, client figures intact
start_responder resp
seq -f "h%g.example A" 200 >"$TMP/h.txt"
mkdir -p "$TMP/bin" "$TMP/empty"
printf '#!/bin/sh\necho "hello, I am not knotc"\n' >"$TMP/bin/knotc"
printf '#!/bin/sh\necho "error: connection refused" >&2\nexit 1\n' >"$TMP/bin/nsd-control"
printf '#!/bin/sh\necho $$ >"%s"\necho "total.num.queries=1"\nexec %s 60\n' "$TMP/hang.pid" "$(command -v sleep)" >"$TMP/bin/unbound-control"
chmod +x "$TMP/bin/"*
hostile() { # NAME PATH SPEC EXPECTED-LINE
	local rc=0
	PATH="$2" "$DV" -s "127.0.0.1:$resp_PORT" -d "$TMP/h.txt" -c 1 -q 10 --no-progress \
		--server-pid none --server-stats "$3" --json "$TMP/$1.json" >"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	assert_eq "$1: exit" 0 "$rc"
	assert_eq "$1: client figures" 200 "$(pc "$TMP/$1.json" 0 completed)"
	assert_eq "$1: counters not read" false "$(st "$TMP/$1.json" 0 ok)"
	grep -qxF "  Server counters (${3%%:*}): not read: $4" "$TMP/$1.out" ||
		fail "$1: no clear line: $(grep Server "$TMP/$1.out")"
	assert_eq "$1: one warning" 1 "$(grep -c "^dnsvolley: warning: the server's counters (--server-stats $3) not read: " "$TMP/$1.err")"
}
hostile garbage "$TMP/bin" knot "knotc printed no query counter (mod-stats.request-protocol[...]: load mod-stats as a global module): not its statistics output"
hostile refused "$TMP/bin" "nsd:-c /nowhere.conf" "nsd-control exited 1 (refused? check its ARGS: nsd:-c /nowhere.conf)"
hostile missing "$TMP/empty" nsd "nsd-control: no such program (not installed, or not on PATH)"
hostile hang "$TMP/bin" unbound "unbound-control did not end in 5 s (killed)"
# the hung tool's group was killed: no sleep of ours is left
[ -s "$TMP/hang.pid" ] || fail "hang: the tool never ran (no $TMP/hang.pid)"
kill -0 "$(cat "$TMP/hang.pid")" 2>/dev/null && fail "hang: the tool still runs"
echo "ok: hang: the tool was killed"

# --- bad flags: exit 2 with what is wrong
rc=0
"$DV" -s "127.0.0.1:$resp_PORT" -d "$TMP/h.txt" --server-stats unbund >/dev/null 2>"$TMP/bad.txt" || rc=$?
assert_eq "bad kind: exit" 2 "$rc"
grep -q "server-stats 'unbund': 'unbund' is not unbound, knot, nsd, recursor, pdns or bind" "$TMP/bad.txt" ||
	fail "bad kind: $(cat "$TMP/bad.txt")"
stop_responder resp
echo "server-stats: ok"
