#!/usr/bin/env bash
# Several generators as one run on MPI (doc/scale-out.md): 3 ranks under mpirun on
# loopback against the responder; exact merged counts, sharding, the merged histogram
# against `dnsvolley merge` of the ranks' own files, -Q split, a killed rank.
# Skipped (77) when the build has no MPI (configure --with-mpi).
. "$(dirname "$0")/lib.sh"
grep -q '^#define HAVE_MPI 1' "$top_builddir/config.h" || skip "built without --with-mpi"
command -v mpirun >/dev/null || fail "built --with-mpi but mpirun is missing"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
# Open MPI refuses root unless told; tests run as root in CI containers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --oversubscribe: 3 ranks on this 2-core machine. Every mpirun is bounded by timeout.
MPIRUN=(timeout -k 5 120 mpirun --oversubscribe)
f() { report_field "$1" "$2"; }
py() { python3 -c "$@"; }

LIST="$TMP/unique.txt"
for i in $(seq 0 89999); do echo "n$i.mpi.example. A"; done >"$LIST"

# 1. One pass of 90,000 unique queries over 3 ranks: the responder got exactly what the
#    merged report says was sent, sent = completed + lost, each name asked once (-v
#    prints a line per query on every rank, into a file per rank: mpirun's gathered
#    stdout can splice two ranks' lines).
start_responder R -T 1
"${MPIRUN[@]}" --output-filename "$TMP/ranks" -np 3 "$DV" --no-progress --no-server-version -v -s 127.0.0.1 -p "$R_PORT" \
	-d "$LIST" -c 6 -q 300 -t 1 --json "$TMP/all.json" --rank-json "$TMP/rank" \
	>/dev/null 2>"$TMP/u.err" || fail "mpirun exited $?: $(cat "$TMP/u.err")"
cp "$TMP/ranks/1/rank.0/stdout" "$TMP/u.out"
cat "$TMP"/ranks/1/rank.*/stdout >"$TMP/v.out"
stop_responder R
sent=$(f "$TMP/u.out" "Queries sent")
completed=$(f "$TMP/u.out" "Queries completed")
lost=$(f "$TMP/u.out" "Queries lost")
assert_eq "unique: merged sent" 90000 "$sent"
assert_eq "unique: responder received = merged sent" "$sent" "$(resp_count R received)"
assert_eq "unique: sent = completed + lost" "$sent" "$((completed + lost))"
assert_eq "unique: lines of -v" 90000 "$(grep -c '^> ' "$TMP/v.out")"
assert_eq "unique: distinct names asked" 90000 \
	"$(grep '^> ' "$TMP/v.out" | awk '{print $3}' | sort -u | wc -l)"
assert_eq "unique: per-rank lines" 3 "$(grep -c '^  Rank [0-2] ' "$TMP/u.out")"
assert_eq "unique: each rank sent its share" "30000 30000 30000" \
	"$(py 'import json,sys; d=json.load(open(sys.argv[1])); print(*[r["sent"] for r in d["passes"][0]["ranks"]])' "$TMP/all.json")"

# 2. The merged histogram equals `dnsvolley merge` of the three ranks' own files of the
#    same run, bucket for bucket (and every counter).
"$DV" merge "$TMP/rank.0.json" "$TMP/rank.1.json" "$TMP/rank.2.json" -o "$TMP/merged.json" ||
	fail "dnsvolley merge failed"
assert_eq "merge: buckets and counters equal the run's" "True True" "$(py '
import json, sys
a = json.load(open(sys.argv[1]))["passes"][0]
m = json.load(open(sys.argv[2]))["passes"][0]
print(a["latency"]["buckets"] == m["latency"]["buckets"], a["counters"] == m["counters"])' \
	"$TMP/all.json" "$TMP/merged.json")"
# merge refuses files of another list
cp "$TMP/rank.1.json" "$TMP/other.json"
py 'import json,sys; d=json.load(open(sys.argv[1])); d["lists"][0]["sha256"]="0"*64; json.dump(d,open(sys.argv[1],"w"))' "$TMP/other.json"
if "$DV" merge "$TMP/rank.0.json" "$TMP/other.json" -o "$TMP/x.json" 2>"$TMP/m.err"; then
	fail "merge accepted a file of another list"
fi
grep -q "list (sha256, queries) differs" "$TMP/m.err" || fail "merge error unclear: $(cat "$TMP/m.err")"
echo "ok: merge refuses another list: $(cat "$TMP/m.err")"

# 3. The responder drops every 10th query: exactly 81,000 completed, 9,000 lost.
start_responder D -T 1 --drop-every 10
"${MPIRUN[@]}" -np 3 "$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$D_PORT" \
	-d "$LIST" -c 6 -q 600 -t 0.3 >"$TMP/d.out" 2>"$TMP/d.err" ||
	fail "mpirun exited $?: $(cat "$TMP/d.err")"
stop_responder D
assert_eq "drop: sent" 90000 "$(f "$TMP/d.out" "Queries sent")"
assert_eq "drop: completed" 81000 "$(f "$TMP/d.out" "Queries completed")"
assert_eq "drop: lost" 9000 "$(f "$TMP/d.out" "Queries lost")"
assert_eq "drop: responder dropped" 9000 "$(resp_count D dropped)"

# 4. -Q 30000 is the rate of the whole run: 3 ranks x 10,000 q/s for 5 s.
start_responder Q -T 1
"${MPIRUN[@]}" -np 3 "$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$Q_PORT" \
	-d "$LIST" --replicate -l 5 -Q 30000 -c 6 -q 600 -t 1 >"$TMP/q.out" 2>"$TMP/q.err" ||
	fail "mpirun exited $?: $(cat "$TMP/q.err")"
stop_responder Q
qsent=$(f "$TMP/q.out" "Queries sent")
assert_ge "rate: merged sent (150,000 - 0.1%)" 149850 "$qsent"
assert_le "rate: merged sent (150,000 + 0.1%)" 150150 "$qsent"

# 5. Rank 1 killed mid-run: the run ends within -l + -t + 5 s (+ start-up), names the
#    rank and its host, and keeps the others' counts as a partial result. Open MPI 4
#    ends the whole job when a rank dies unless orte_enable_recovery is on (then it
#    exits 0 whatever happens: the results file's status says the run failed).
start_responder K -T 1
t0=$(date +%s)
"${MPIRUN[@]}" --mca orte_enable_recovery 1 -np 3 "$DV" --no-progress --no-server-version \
	-s 127.0.0.1 -p "$K_PORT" -d "$LIST" --replicate -l 6 -Q 3000 -t 1 \
	--json "$TMP/kill.json" >"$TMP/k.out" 2>"$TMP/k.err" &
mpid=$!
victim=
for _ in $(seq 100); do
	for p in $(pgrep -P "$(pgrep -P "$mpid" -x mpirun || echo "$mpid")" 2>/dev/null || true); do
		r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
		[ "$r" = 1 ] && victim=$p
	done
	[ -n "$victim" ] && break
	sleep 0.1
done
[ -n "$victim" ] || fail "rank 1's process not found"
sleep 2
kill -KILL "$victim"
wait "$mpid" || true
took=$(($(date +%s) - t0))
stop_responder K
assert_le "killed rank: seconds until the run ended" 20 "$took"
grep -q "rank 1 (.*) sent no result" "$TMP/k.err" || fail "no clear error: $(cat "$TMP/k.err")"
echo "ok: error: $(grep 'rank 1' "$TMP/k.err")"
assert_eq "killed rank: partial result (reported ranks; sent: 2 ranks x 1,000 q/s x 6 s)" "True False True 12000" \
	"$(py 'import json,sys; p=json.load(open(sys.argv[1]))["passes"][0]; print(*[r["reported"] for r in p["ranks"]], p["counters"]["sent"])' "$TMP/kill.json")"
assert_eq "killed rank: status failed" "True" \
	"$(py 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["failed"] != 0)' "$TMP/kill.json")"
# 6. Usage errors: every rank stops, rank 0 says why once, exit status 2.
rc=0
"${MPIRUN[@]}" -np 3 "$DV" -s 127.0.0.1 -p 9 -d "$LIST" -c 2 >"$TMP/b.out" 2>&1 || rc=$?
assert_eq "-c below the ranks: exit status" 2 "$rc"
assert_eq "-c below the ranks: said once" 1 "$(grep -c 'dnsvolley: -c 2 is fewer sockets than the 3 ranks' "$TMP/b.out")"
head -n 2 "$LIST" >"$TMP/two.txt"
rc=0
"${MPIRUN[@]}" -np 3 "$DV" -s 127.0.0.1 -p 9 -d "$TMP/two.txt" >"$TMP/b.out" 2>&1 || rc=$?
assert_eq "list shorter than the ranks: exit status" 2 "$rc"
assert_eq "list shorter than the ranks: said once" 1 "$(grep -c 'cannot be shared by 3 ranks (use --replicate' "$TMP/b.out")"
echo "PASS"
