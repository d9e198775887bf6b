#!/usr/bin/env bash
# mpi-study: a cold/hot study over 2 MPI ranks against a real cache (unbound in front of
# nsd, set up as in study-real-servers.sh). The ranks share the list (disjoint halves), so
# the cold pass still asks the backend about each name once in total and the hot pass
# about none; --flush and --after-pass run once per pass, on rank 0 only.
# Ranks on separate "hosts" (network namespaces): tests/integration/mpi-netns.sh.
. "$(dirname "$0")/lib.sh"
grep -q '^#define HAVE_MPI 1' "$top_builddir/config.h" || skip "built without --with-mpi"
command -v mpirun >/dev/null || fail "built --with-mpi but mpirun is missing"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -x "$DV" ] || skip "dnsvolley not built"
. "$(dirname "$0")/servers/nsd-unbound.sh"
require_nsd_unbound
make_zone_lists
start_nsd_unbound

FLUSH="echo flush >> $TMP/flushes && $UNBOUND_FLUSH"
AFTER=$(nsd_count_hook "$TMP/nsd-counts")
echo "start 0" >"$TMP/nsd-counts"
rc=0
"${MPI_ENV[@]}" timeout -k 5 300 mpirun --oversubscribe -np 2 "$DV" -s "unbound=127.0.0.1:$UPORT" -d "SOA=$TMP/soa.txt" \
	--passes cold,hot --hot-runs 1 --flush "$FLUSH" --after-pass "$AFTER" --json "$TMP/r.json" -q 50 -t 5 \
	--no-progress >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
[ "$rc" = 0 ] || fail "study exited $rc: $(cat "$TMP/err.txt")"
assert_eq "flush ran once (on rank 0)" 1 "$(wc -l <"$TMP/flushes")"
assert_eq "after-pass ran once per pass (start + 2)" 3 "$(wc -l <"$TMP/nsd-counts")"
awk 'NR > 1 { print $1, $2 - prev } { prev = $2 }' "$TMP/nsd-counts" >"$TMP/deltas"
assert_eq "pass kinds in order" "cold hot" "$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }' "$TMP/deltas")"
read -r _ cold < <(sed -n 1p "$TMP/deltas")
read -r _ hot < <(sed -n 2p "$TMP/deltas")
# Cold: about one nsd query per name (between 0.9 N and 1.5 N as in
# study-real-servers.sh); hot: about none. That each name was sent once in total is
# shown by the ranks' disjoint shares below (N/2 each, merged N): unbound alone would
# hide a name asked twice, so the nsd count cannot show it by itself.
assert_ge "cold: nsd queries (>= 0.9 x $N names)" $((N * 9 / 10)) "$cold"
assert_le "cold: nsd queries (<= 1.5 x $N names)" $((N * 3 / 2)) "$cold"
assert_le "hot: nsd queries (< 1% of $N names)" $((N / 100)) "$hot"
assert_eq "merged sent per pass (N each)" "$N $N" \
	"$(python3 -c 'import json,sys; print(*[p["counters"]["sent"] for p in json.load(open(sys.argv[1]))["passes"]])' "$TMP/r.json")"
assert_eq "per-rank shares of the cold pass" "$((N / 2)) $((N / 2))" \
	"$(python3 -c 'import json,sys; print(*[r["sent"] for r in json.load(open(sys.argv[1]))["passes"][0]["ranks"]])' "$TMP/r.json")"
echo "PASS"
