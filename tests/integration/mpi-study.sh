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
for t in nsd nsd-control nsd-checkconf unbound unbound-control unbound-checkconf ss; do
	command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || skip "$t not installed (scripts/install-deps)"
done
PATH=$PATH:/usr/sbin
SERVERS="$top_srcdir/tests/integration/servers"

# A free UDP+TCP port on 127.0.0.1 above 20000 (never 53).
free_port() {
	local p i
	for i in $(seq 100); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if [ -z "$(ss -Hlnu "sport = :$p" 2>/dev/null)" ] && [ -z "$(ss -Hlnt "sport = :$p" 2>/dev/null)" ]; then
			echo "$p"
			return 0
		fi
	done
	fail "no free port"
}

# Names: the bundled domain list (dots made dashes) spread over 4 zones, else generated.
N_PER_ZONE=500
ZONES="z0.test z1.test z2.test z3.test"
if [ -s "$top_srcdir/querylists/domains.txt" ]; then
	awk -v max=$((4 * N_PER_ZONE)) '/^#/ || !NF { next } { l = $1; gsub(/\./, "-", l) }
		!seen[l]++ { print l; if (++n == max) exit }' "$top_srcdir/querylists/domains.txt" >"$TMP/labels"
else
	seq -f 'd%g' $((4 * N_PER_ZONE)) >"$TMP/labels"
fi
N=$(wc -l <"$TMP/labels")
assert_eq "distinct names" $((4 * N_PER_ZONE)) "$N"
k=0
: >"$TMP/soa.txt"
: >"$TMP/a.txt"
for z in $ZONES; do
	sed -n "$((k * N_PER_ZONE + 1)),$(((k + 1) * N_PER_ZONE))p" "$TMP/labels" >"$TMP/labels.$z"
	bash "$SERVERS/zone.sh" "$z" <"$TMP/labels.$z" >"$TMP/$z.zone"
	awk -v z="$z" '{ print $1 "." z " SOA" }' "$TMP/labels.$z" >>"$TMP/soa.txt"
	awk -v z="$z" '{ print "www." $1 "." z " A" }' "$TMP/labels.$z" >>"$TMP/a.txt"
	k=$((k + 1))
done

NPORT=$(free_port)
UPORT=$(free_port)
[ "$NPORT" != "$UPORT" ] || UPORT=$((NPORT + 1))
# shellcheck disable=SC2086
bash "$SERVERS/nsd.conf.sh" "$TMP" "$NPORT" $ZONES >"$TMP/nsd.conf"
# shellcheck disable=SC2086
bash "$SERVERS/unbound.conf.sh" "$TMP" "$UPORT" "$NPORT" $ZONES >"$TMP/unbound.conf"
nsd-checkconf "$TMP/nsd.conf" || fail "nsd.conf rejected"
unbound-checkconf "$TMP/unbound.conf" >/dev/null || fail "unbound.conf rejected"

NSD_PID= UNBOUND_PID=
stop_servers() {
	local p i
	[ -n "$UNBOUND_PID$NSD_PID" ] || return 0
	for p in $UNBOUND_PID $NSD_PID; do kill -TERM "$p" 2>/dev/null || true; done
	for i in $(seq 100); do
		{ kill -0 "$UNBOUND_PID" || kill -0 "$NSD_PID"; } 2>/dev/null || break
		sleep 0.05
	done
	for p in $UNBOUND_PID $NSD_PID; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap 'stop_servers; cleanup' EXIT

nsd -d -c "$TMP/nsd.conf" >"$TMP/nsd.out" 2>&1 &
NSD_PID=$!
unbound -d -c "$TMP/unbound.conf" >"$TMP/unbound.out" 2>&1 &
UNBOUND_PID=$!
nsd_queries() {
	nsd-control -c "$TMP/nsd.conf" stats_noreset | awk -F= '$1 == "num.queries" { print $2 }'
}
for i in $(seq 200); do
	if nsd-control -c "$TMP/nsd.conf" status >/dev/null 2>&1 &&
		unbound-control -c "$TMP/unbound.conf" status >/dev/null 2>&1; then
		break
	fi
	kill -0 "$NSD_PID" 2>/dev/null || fail "nsd exited: $(cat "$TMP/nsd.out" "$TMP/nsd.log" 2>/dev/null)"
	kill -0 "$UNBOUND_PID" 2>/dev/null || fail "unbound exited: $(cat "$TMP/unbound.out" "$TMP/unbound.log" 2>/dev/null)"
	sleep 0.05
done
unbound-control -c "$TMP/unbound.conf" status >/dev/null || fail "unbound not ready"
assert_eq "nsd queries before the study" 0 "$(nsd_queries)"

UC="unbound-control -c $TMP/unbound.conf"
FLUSH="echo flush >> $TMP/flushes && $UC flush_zone test >/dev/null && $UC flush_requestlist >/dev/null && $UC flush_infra all >/dev/null"
AFTER="echo \$DV_PASS_KIND \$(nsd-control -c $TMP/nsd.conf stats_noreset | awk -F= '\$1 == \"num.queries\" { print \$2 }') >> $TMP/nsd-counts"
echo "start 0" >"$TMP/nsd-counts"
rc=0
timeout -k 5 300 mpirun --oversubscribe -np 2 "$DV" -s "unbound=127.0.0.1:$UPORT" -d "SOA=$TMP/soa.txt" \
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
