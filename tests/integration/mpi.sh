#!/usr/bin/env bash
# Several generators as one run on MPI (doc/scale-out.md): 3 ranks under mpirun on
# loopback against the responder; exact merged counts, sharding, the merged histogram
# against `dnsvolley merge` of the ranks' own files, -Q split, a killed rank; the server's
# figures taken once (rank 0's reading) over the merged answers.
# Skipped (77) when the build has no MPI (configure --with-mpi).
. "$(dirname "$0")/lib.sh"
grep -q '^#define HAVE_MPI 1' "$top_builddir/config.h" || skip "built without --with-mpi"
command -v mpirun >/dev/null || fail "built --with-mpi but mpirun is missing"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
# Open MPI refuses root unless told; tests run as root in CI containers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --oversubscribe: 3 ranks on this 2-core machine. Every mpirun is bounded by timeout.
MPIRUN=("${MPI_ENV[@]}" timeout -k 5 120 mpirun --oversubscribe)
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
	-d "$LIST" -c 6 -q 300 -t 30 -S 0.05 --json "$TMP/all.json" --rank-json "$TMP/rank" \
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
# 2b. The -S intervals are merged exactly too: each merged interval's histogram is the
#     sum of the ranks' own (from their --rank-json files), and its p50/p99 are those of
#     the sum (dv_hist_quantile_ns's rule, redone here), not the largest rank's; `dnsvolley
#     merge` gives the same intervals.
cat >"$TMP/iv.py" <<'PY'
import json, math, sys
def high(low):
    return low + 1 if low < 256 else low + (1 << (low.bit_length() - 8))
def rank_of(q, n):
    x = q * n; r = round(x)
    k = r if abs(x - r) <= 1e-9 * max(x, 1) else math.ceil(x)
    return min(max(k, 1), n)
def quantile(b, n, lo, hi, q):
    if n == 0: return 0
    want, cum = rank_of(q, n), 0
    for low in sorted(b):
        cum += b[low]
        if cum >= want: break
    return min(max(low + (high(low) - low) // 2, lo), hi)
run = json.load(open(sys.argv[1]))["passes"][0]["intervals"]
mrg = json.load(open(sys.argv[2]))["passes"][0]["intervals"]
ranks = [json.load(open(f))["passes"][0]["intervals"] for f in sys.argv[3:]]
assert len(run) == max(len(r) for r in ranks), "interval count"
busy = upper = 0
for i, iv in enumerate(run):
    b, n, lo, hi = {}, 0, 1 << 64, 0
    for r in ranks:
        if i >= len(r): continue
        lat = r[i]["latency"]
        for low, c in lat["buckets"]: b[low] = b.get(low, 0) + c
        n += lat["count"]
        if lat["count"]: lo, hi = min(lo, lat["min_ns"]), max(hi, lat["max_ns"])
    assert [[k, b[k]] for k in sorted(b)] == iv["latency"]["buckets"], "interval %d buckets" % i
    assert n == iv["latency"]["count"], "interval %d count" % i
    for key, q in (("lat_p50_ns", 0.5), ("lat_p99_ns", 0.99)):
        assert int(iv[key]) == quantile(b, n, lo, hi, q), "interval %d %s: %s != %s" % (i, key, iv[key], quantile(b, n, lo, hi, q))
    assert mrg[i]["latency"] == iv["latency"] and mrg[i]["lat_p99_ns"] == iv["lat_p99_ns"], "merge interval %d" % i
    if n >= 100:
        busy += 1
        upper += int(iv["lat_p99_ns"]) != max(int(r[i]["lat_p99_ns"]) for r in ranks if i < len(r))
print(busy >= 2, "%d (in %d of them the exact p99 is not the largest rank's)" % (len(run), upper))
PY
iv=$(py "$(cat "$TMP/iv.py")" "$TMP/all.json" "$TMP/merged.json" "$TMP"/rank.[012].json) ||
	fail "interval merge: $iv"
assert_eq "intervals: merged exactly, at least two with answers" True "${iv%% *}"
echo "ok: ${iv#* } merged intervals equal the sums of the ranks' interval histograms"
# merge refuses files of another list
cp "$TMP/rank.1.json" "$TMP/other.json"
py 'import json,sys; d=json.load(open(sys.argv[1])); d["lists"][0]["sha256"]="0"*64; json.dump(d,open(sys.argv[1],"w"))' "$TMP/other.json"
if "$DV" merge "$TMP/rank.0.json" "$TMP/other.json" -o "$TMP/x.json" 2>"$TMP/m.err"; then
	fail "merge accepted a file of another list"
fi
grep -q "list (sha256, queries) differs" "$TMP/m.err" || fail "merge error unclear: $(cat "$TMP/m.err")"
echo "ok: merge refuses another list: $(cat "$TMP/m.err")"

# 2c. The server (the responder, on this host: every rank read it) is one: the merged
#     pass keeps rank 0's reading, never the sum of three, and divides it by every rank's
#     answers; `dnsvolley merge` of the ranks' files gives the same figures.
assert_eq "server: taken once, divided by the merged answers" "True True True True" "$(py '
import json, sys
a = json.load(open(sys.argv[1]))["passes"][0]
m = json.load(open(sys.argv[2]))["passes"][0]
r0 = json.load(open(sys.argv[3]))["passes"][0]
s, c = a["server"], a["counters"]
own = {k: v for k, v in r0["server"].items() if k != "answers"}
print(s["ok"], s["answers"] == c["completed"] + c["late"],
      {k: v for k, v in s.items() if k != "answers"} == own, m["server"] == s)' \
	"$TMP/all.json" "$TMP/merged.json" "$TMP/rank.0.json")"
assert_eq "server: rank 0 alone divided by its own answers" "True" "$(py '
import json, sys
r0 = json.load(open(sys.argv[1]))["passes"][0]
print(r0["server"]["answers"] == r0["counters"]["completed"] + r0["counters"]["late"] < 90000)' "$TMP/rank.0.json")"

# 3. The responder drops every 10th query: exactly 81,000 completed, 9,000 lost.
#    Exact only if no answer is read after -t: 0.3 s was within reach of a busy machine,
#    -t 1 is engine-counts.sh's bound. A dropped query holds its slot for -t, so the
#    window grows with it (-q 1500: 4,500 queries at once, well inside the responder's
#    8 MiB buffer) and a rank's 30,000 take ~2 s + -t (were ~1.5 s + 0.3).
start_responder D -T 1 --drop-every 10
"${MPIRUN[@]}" -np 3 "$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$D_PORT" \
	-d "$LIST" -c 6 -q 1500 -t 1 >"$TMP/d.out" 2>"$TMP/d.err" ||
	fail "mpirun exited $?: $(cat "$TMP/d.err")"
stop_responder D
assert_eq "drop: sent" 90000 "$(f "$TMP/d.out" "Queries sent")"
assert_eq "drop: completed" 81000 "$(f "$TMP/d.out" "Queries completed")"
assert_eq "drop: lost" 9000 "$(f "$TMP/d.out" "Queries lost")"
assert_eq "drop: responder dropped" 9000 "$(resp_count D dropped)"

# 4. -Q 30000 is the rate of the whole run: 3 ranks x 10,000 q/s for 5 s.
start_responder Q -T 1
"${MPIRUN[@]}" -np 3 "$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$Q_PORT" \
	-d "$LIST" --replicate -l 5 -Q 30000 -c 6 -q 600 -t 30 >"$TMP/q.out" 2>"$TMP/q.err" ||
	fail "mpirun exited $?: $(cat "$TMP/q.err")"
stop_responder Q
qsent=$(f "$TMP/q.out" "Queries sent")
# Never above the schedule (+0.1%: the ranks' rounding), at any load: the pacer is never
# early. How close below it the ranks end depends on how late their last ticks run (a
# speed figure, 0.1% idle: bench/timing-bounds.sh mpi); half is a gross-error bound only
# a rank denied the CPU for half its run could break.
assert_ge "rate: merged sent (half of 150,000 at least)" 75000 "$qsent"
assert_le "rate: merged sent (150,000 + 0.1%)" 150150 "$qsent"

# Start a 3-rank run of -l 6 under orte_enable_recovery, each rank in a wrapper that
# writes its exit status to $TMP/NAME.status.RANK; sets mpid and victim (rank 1's
# dnsvolley) once rank 0 has started the pass.
start_recovering_run() {
	local name=$1 port=$2
	"${MPIRUN[@]}" --mca orte_enable_recovery 1 -np 3 \
		sh -c '"$@"; echo $? >"$0.$OMPI_COMM_WORLD_RANK"' "$TMP/$name.status" \
		"$DV" --no-progress --no-server-version \
		-s 127.0.0.1 -p "$port" -d "$LIST" --replicate -l 6 -Q 3000 -t 1 \
		--json "$TMP/$name.json" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	mpid=$!
	victim=
	for _ in $(seq 100); do
		# mpirun's children are the wrappers; rank 1's dnsvolley is its wrapper's child
		for p in $(pgrep -P "$(pgrep -P "$mpid" -x mpirun || echo "$mpid")" 2>/dev/null || true); do
			r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
			[ "$r" = 1 ] && victim=$(pgrep -P "$p" || true)
		done
		[ -n "$victim" ] && break
		sleep 0.1
	done
	[ -n "$victim" ] || fail "$name: rank 1's process not found"
	# Mid-run means after the pass started: rank 0 prints its "Started at" line then. (On
	# a loaded machine start-up can take seconds; a rank lost before the start barrier
	# is waited for up to 120 s, which is a different case.)
	for _ in $(seq 600); do
		grep -q "Started at" "$TMP/$name.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "Started at" "$TMP/$name.out" || fail "$name: the pass never started: $(cat "$TMP/$name.err")"
}

# 5. Rank 1 killed mid-run: the run ends within -l + -t + 5 s (+ start-up), names the
#    rank and its host, and keeps the others' counts as a partial result. Open MPI 4
#    ends the whole job when a rank dies unless orte_enable_recovery is on, and then
#    mpirun exits 0 whatever the ranks return: the user's script reads rank 0's own exit
#    status through a wrapper (the recipe of doc/scale-out.md), which must be 3.
start_responder K -T 1
start_recovering_run kill "$K_PORT"
t0=$(date +%s)
sleep 1
kill -KILL "$victim"
mrc=0
wait "$mpid" || mrc=$?
took=$(($(date +%s) - t0))
stop_responder K
# -l 6, then rank 0 waits -t + 5 s + 10% for rank 1; rank 2 may then wait in MPI_Finalize
# (DV_DIST_FINALIZE_S, 10 s): 6 + 6.6 + 10 = 22.6 s. The bound tells those bounded waits
# from a hang (a liveness check, not a speed one): 80 s leaves load over 50 s.
assert_le "killed rank: seconds until the run ended (not hung)" 80 "$took"
grep -q "rank 1 (.*) sent no result" "$TMP/kill.err" || fail "no clear error: $(cat "$TMP/kill.err")"
echo "ok: error: $(grep 'rank 1' "$TMP/kill.err")"
assert_eq "killed rank: rank 0's exit status (the run failed)" 3 "$(cat "$TMP/kill.status.0")"
assert_eq "killed rank: the killed rank's (via its wrapper)" 137 "$(cat "$TMP/kill.status.1")"
echo "ok: mpirun itself exited $mrc (Open MPI 4 with orte_enable_recovery: 0 whatever happens)"
assert_eq "killed rank: partial result (reported ranks; sent: 2 ranks x 1,000 q/s x 6 s)" "True False True 12000" \
	"$(py 'import json,sys; p=json.load(open(sys.argv[1]))["passes"][0]; print(*[r["reported"] for r in p["ranks"]], p["counters"]["sent"])' "$TMP/kill.json")"
assert_eq "killed rank: status failed" "True" \
	"$(py 'import json,sys; print(json.load(open(sys.argv[1]))["status"]["failed"] != 0)' "$TMP/kill.json")"

# 5b. Rank 1 hangs mid-run (stopped, alive): rank 0 reports the partial result and exits
#     3 as above, and rank 2, whose result was taken, ends on its own: MPI_Finalize waits
#     for every rank, rank 1 included, so it is bounded (DV_DIST_FINALIZE_S). Before the
#     bound, rank 2 waited for as long as rank 1 hung (once in CI: mpirun's 120 s).
start_responder H -T 1
start_recovering_run hung "$H_PORT"
sleep 1
kill -STOP "$victim"
t0=$(date +%s)
for _ in $(seq 900); do
	[ -s "$TMP/hung.status.0" ] && [ -s "$TMP/hung.status.2" ] && break
	sleep 0.1
done
took=$(($(date +%s) - t0))
stopped=$(ps -o stat= -p "$victim" | cut -c1)
kill -KILL "$victim"
wait "$mpid" || true
stop_responder H
assert_eq "hung rank: rank 1 was still stopped while the others ended" T "$stopped"
# 5 s of the pass left, rank 0's wait for rank 1 (-t + 5 s + 10%), the finalize bound:
# 21.6 s. Hung, the loop above gives up after 90 s: 80 s tells the bounded waits from a
# hang whatever the load (a liveness check, not a speed one).
assert_le "hung rank: seconds until rank 0 and rank 2 ended (not hung)" 80 "$took"
assert_eq "hung rank: rank 0's exit status (the run failed)" 3 "$(cat "$TMP/hung.status.0" 2>/dev/null)"
assert_eq "hung rank: rank 2 ended on its own, status 0" 0 "$(cat "$TMP/hung.status.2" 2>/dev/null)"
grep -q "rank 1 (.*) sent no result" "$TMP/hung.err" || fail "hung: no clear error: $(cat "$TMP/hung.err")"
assert_eq "hung rank: partial result (reported ranks)" "True False True" \
	"$(py 'import json,sys; p=json.load(open(sys.argv[1]))["passes"][0]; print(*[r["reported"] for r in p["ranks"]])' "$TMP/hung.json")"

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
