#!/usr/bin/env bash
# study-real-servers: a cold/hot study against a real cache. nsd (authoritative) serves
# zones built from the bundled domain list; unbound (resolver) stubs them to nsd; both on
# loopback high ports, run from this test's directory. dnsvolley runs cold,hot x 2 repeats
# x 2 lists (SOA, www A) with --flush emptying unbound's cache. Ground truth from nsd's own
# query counter, read after every pass (--after-pass): each cold pass costs exactly one
# authoritative query per name (the default probe, version.bind CH TXT, is answered by
# unbound itself), each hot pass none; a p50 per pass (hot below cold: a bench figure). Then: -l 5, -l 1
# and a mistyped flush label are refused before any query (nsd and unbound count 0); with
# --probe NAME the probe's name is the only extra authoritative query of a cold pass; the
# same study over DoT (unbound's TLS port) with the version asked over TLS.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
. "$(dirname "$0")/servers/nsd-unbound.sh"
require_nsd_unbound
make_zone_lists
UNBOUND_TLS=1 start_nsd_unbound

# The flush empties unbound's cache for the zones; the after-pass hook notes nsd's own
# query counter after every pass, so each pass's cost at the authoritative server is known.
FLUSH="$UNBOUND_FLUSH"
AFTER=$(nsd_count_hook "$TMP/nsd-counts")
echo "start 0" >"$TMP/nsd-counts"
rc=0
"$DV" -s "unbound=127.0.0.1:$UPORT" -d "SOA=$TMP/soa.txt" -d "A=$TMP/a.txt" --passes cold,hot \
	--repeat 2 --hot-time 1 --flush "$FLUSH" --after-pass "$AFTER" --json "$TMP/r.json" -q 50 -t 5 \
	--no-progress >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
[ "$rc" = 0 ] || fail "study exited $rc: $(cat "$TMP/err.txt")"
assert_eq "nsd counter snapshots (start + 8 passes)" 9 "$(wc -l <"$TMP/nsd-counts")"

# Each cold pass: exactly one authoritative query per name. Each hot pass right after
# it (1 s, round the list as often as it takes): none.
awk 'NR > 1 { print $1, $2 - prev } { prev = $2 }' "$TMP/nsd-counts" >"$TMP/deltas"
assert_eq "pass kinds in order" "cold hot cold hot cold hot cold hot" "$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }' "$TMP/deltas")"
i=0
while read -r kind d; do
	i=$((i + 1))
	if [ "$kind" = cold ]; then
		assert_eq "pass $i (cold): nsd queries (one per name)" "$N" "$d"
	else
		assert_eq "pass $i (hot): nsd queries" 0 "$d"
	fi
done <"$TMP/deltas"

# Hot passes on the warm cache, alone: about nothing reaches nsd (< 1% of the names). The
# study's last flush emptied the cache before list A's cold pass, so A is the warm list.
before=$(nsd_queries)
rc=0
"$DV" -s "unbound=127.0.0.1:$UPORT" -d "A=$TMP/a.txt" --passes hot --repeat 2 \
	--hot-time 1 --json "$TMP/hot.json" -q 50 -t 5 --no-progress >"$TMP/hot.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "hot study exited $rc: $(tail -n 5 "$TMP/hot.txt")"
after=$(nsd_queries)
assert_eq "hot passes x 2: nsd queries" 0 $((after - before))

# Latency: a p50 per pass, paired cold/hot. That each hot p50 is below its cold one (the
# cache at work) is a speed comparison a loaded machine can reverse: printed here,
# asserted in bench/timing-bounds.sh study; the cache's work is asserted above as counts
# (nsd's queries per pass), which hold at any load.
awk -F': ' '/^   "kind"/ { gsub(/[",]/, "", $2); kind = $2 } /^    "p50_ns"/ { v = $2 + 0; if (kind == "cold") c = v; else if (kind == "hot") printf "%d %d\n", c, v }' \
	"$TMP/r.json" >"$TMP/p50"
assert_eq "cold/hot p50 pairs" 4 "$(wc -l <"$TMP/p50")"
i=0
while read -r cold hot; do
	i=$((i + 1))
	echo "pair $i: hot p50 $hot ns, cold p50 $cold ns"
done <"$TMP/p50"

# Every query answered NOERROR, nothing lost; the table has its 2 rows x 4 cells.
awk '/^Comparison table/ { on = 1; next } on && NF == 0 { exit } on { print }' "$TMP/out.txt" >"$TMP/table.txt"
assert_eq "table header" "Target List rep1 cold rep1 hot rep2 cold rep2 hot" "$(head -n 1 "$TMP/table.txt" | tr -s ' ')"
assert_eq "table rows" "unbound SOA,unbound A," "$(awk 'NR > 1 { printf "%s %s,", $1, $2 }' "$TMP/table.txt")"
assert_eq "cells without loss" 8 "$(grep -o '(lost 0)' "$TMP/table.txt" | wc -l)"
sent=$(awk -F': ' '/^   "kind"/ { k = $2; want = 1 } /"sent": / && want { if (k ~ /cold/) s += $2 + 0; else h += $2 + 0; want = 0 } END { print s + 0, h + 0 }' "$TMP/r.json")
assert_eq "queries sent by the 4 cold passes (one run through $N names each)" $((4 * N)) "${sent% *}"
# A hot pass of --hot-time 1 stops at 1 s wherever it is in the list: how far it got is
# a rate (N names a second idle, easily). At any load each sends at least its first
# window (-q 50, or the whole list when shorter) before any answer can come back.
w=$((N < 50 ? N : 50))
assert_ge "queries sent by the 4 hot passes (a window each at least)" $((4 * w)) "${sent#* }"
noerror=$(awk '/"rcode": \[/ { getline; s += $1 + 0 } END { print s + 0 }' "$TMP/r.json")
assert_eq "NOERROR answers" $((4 * N + ${sent#* })) "$noerror"
# The resolver said who it is (version.bind), and the results file kept it.
grep -q '^   "server_version": "unbound ' "$TMP/r.json" || fail "server version not recorded"
echo "ok: server version recorded: $(grep -m1 '"server_version"' "$TMP/r.json")"
"$DV" report "$TMP/r.json" >"$TMP/report.txt" || fail "report failed"
grep -q "^unbound  SOA " "$TMP/report.txt" || fail "report lacks the table"

# Refused before any query: -l 5, -l 1 (a cold pass is one run through its list) and a
# mistyped flush label (it would run as a shell assignment and flush nothing).
nb=$(nsd_queries)
ub=$(unbound_queries)
for args in "-l 5" "-l 1"; do
	rc=0
	# shellcheck disable=SC2086
	"$DV" -s "unbound=127.0.0.1:$UPORT" -d "A=$TMP/a.txt" --passes cold,hot --flush "$FLUSH" $args \
		-q 50 --no-progress >"$TMP/l.txt" 2>&1 || rc=$?
	assert_eq "$args with --passes: exit status" 2 "$rc"
	grep -q -- "-l with --passes: a cold pass asks each name of its list once" "$TMP/l.txt" || fail "$args: $(cat "$TMP/l.txt")"
done
rc=0
"$DV" -s "unbound=127.0.0.1:$UPORT" -d "A=$TMP/a.txt" --passes cold,hot --flush "unbund=$FLUSH" \
	-q 50 --no-progress >"$TMP/m.txt" 2>&1 || rc=$?
assert_eq "mistyped flush label: exit status" 2 "$rc"
grep -q "no target is labelled 'unbund' (targets: unbound)" "$TMP/m.txt" || fail "mistyped label: $(cat "$TMP/m.txt")"
assert_eq "refused studies: nsd queries" 0 $(($(nsd_queries) - nb))
assert_eq "refused studies: unbound queries" 0 $(($(unbound_queries) - ub))

# --probe NAME (served by nsd, in no list): the only extra authoritative query of a cold
# pass; its queries are in the results file.
echo "start $(nsd_queries)" >"$TMP/probe-counts"
rc=0
"$DV" -s "unbound=127.0.0.1:$UPORT" -d "A=$TMP/a.txt" --passes cold,hot --hot-runs 1 --repeat 2 \
	--flush "$FLUSH" --probe "probe.z0.test A" --after-pass "$(nsd_count_hook "$TMP/probe-counts")" \
	--json "$TMP/p.json" -q 50 -t 5 --no-progress >"$TMP/p.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "probe study exited $rc: $(tail -n 5 "$TMP/p.txt")"
awk 'NR > 1 { print $1, $2 - prev } { prev = $2 }' "$TMP/probe-counts" >"$TMP/pdeltas"
assert_eq "--probe: nsd queries per pass (cold: names + the probe; hot: none)" \
	"cold $((N_PER_ZONE * 4 + 1)),hot 0,cold $((N_PER_ZONE * 4 + 1)),hot 0," "$(awk '{ printf "%s %s,", $1, $2 }' "$TMP/pdeltas")"
grep -q '^  "probe": "probe.z0.test A",$' "$TMP/p.json" || fail "results file lacks the probe"
assert_ge "--probe: probe queries recorded (one per cold pass at least)" 2 \
	"$(awk -F': ' '/^   "probe_queries"/ { s += $2 } END { print s + 0 }' "$TMP/p.json")"

# Over DNS over TLS (unbound's DoT port): the probe and version.bind go over TLS (before
# 2026-12-03 both were UDP or nothing: unbound's DoT port happens to answer datagrams too,
# but the version was never asked over a stream; study-streams.sh shows the probe against
# a port with no datagram listener). The ground truth is the same: each cold pass costs
# nsd one query per name and the probe's name, each hot pass none.
echo "start $(nsd_queries)" >"$TMP/dot-counts"
rc=0
"$DV" -s "unbound=127.0.0.1:$UTLS" -m dot --tls-sni dnsvolley.test -d "A=$TMP/a.txt" \
	--passes cold,hot --hot-runs 1 --repeat 2 --flush "$FLUSH" --probe "probe.z0.test A" \
	--server-version --after-pass "$(nsd_count_hook "$TMP/dot-counts")" --json "$TMP/dot.json" \
	-q 50 -t 5 --no-progress >"$TMP/dot.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "DoT study exited $rc: $(tail -n 5 "$TMP/dot.txt")"
awk 'NR > 1 { print $1, $2 - prev } { prev = $2 }' "$TMP/dot-counts" >"$TMP/ddeltas"
assert_eq "DoT: nsd queries per pass (cold: names + the probe; hot: none)" \
	"cold $((N_PER_ZONE * 4 + 1)),hot 0,cold $((N_PER_ZONE * 4 + 1)),hot 0," "$(awk '{ printf "%s %s,", $1, $2 }' "$TMP/ddeltas")"
grep -q '^   "server_version": "unbound ' "$TMP/dot.json" || fail "DoT: server version not recorded"
grep -q '^   "transport": "dot",$' "$TMP/dot.json" || fail "DoT: results file does not say dot"
assert_ge "DoT: probe queries recorded (one per cold pass at least)" 2 \
	"$(awk -F': ' '/^   "probe_queries"/ { s += $2 } END { print s + 0 }' "$TMP/dot.json")"
echo "PASS"
