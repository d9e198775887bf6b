#!/usr/bin/env bash
# mpi-cpu: what the MPI merge costs a generator. CPU per query of each rank of a 2-rank
# run against the CPU per query of a 1-rank run at the same per-rank load (-Q per rank,
# -c/-q per rank), against the bundled responder on loopback. The merge happens between
# passes (O(buckets) per rank), never on the send/receive path, so the ratio should be ~1.
# Usage: bench/mpi-cpu.sh [BUILDDIR] [QPS_PER_RANK] [SECONDS] [ROUNDS]
# Prints each round's figures and the median ratio (2-rank per-rank CPU/query over 1-rank).
set -euo pipefail
B=${1:-build}
QPS=${2:-20000}
SECS=${3:-5}
ROUNDS=${4:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
"$B/dnsvolley-responder" -a 127.0.0.1 -p 0 -T 1 --port-file "$tmp/port" >/dev/null 2>&1 &
rpid=$!
trap 'kill -INT $rpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
P=$(cat "$tmp/port")
for i in $(seq 0 99999); do echo "b$i.example. A"; done >"$tmp/list"
cpu() { # JSON -> CPU us per query of each rank (or of the one process)
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["passes"][0]
if p.get("ranks"):
    print(*["%.3f" % r["cpu_per_query_us"] for r in p["ranks"]])
else:
    c = p["counters"]["completed"]
    print("%.3f" % ((p["cpu_user_s"] + p["cpu_sys_s"]) * 1e6 / c))' "$1"
}
ratios=()
for r in $(seq "$ROUNDS"); do
	timeout 120 "$B/dnsvolley" --no-progress --no-server-version -s 127.0.0.1 -p "$P" -d "$tmp/list" \
		-n 100 -l "$SECS" -Q "$QPS" -c 4 -q 200 --quiet --json "$tmp/one.json" >/dev/null
	timeout 120 mpirun --oversubscribe -np 2 "$B/dnsvolley" --no-progress --no-server-version \
		-s 127.0.0.1 -p "$P" -d "$tmp/list" --replicate -n 100 -l "$SECS" -Q $((2 * QPS)) -c 8 \
		-q 400 --quiet --json "$tmp/two.json" >/dev/null
	one=$(cpu "$tmp/one.json")
	read -r a b < <(cpu "$tmp/two.json")
	ratio=$(python3 -c "print('%.3f' % (($a + $b) / 2 / $one))")
	echo "round $r: 1 rank ${one} us/query; 2 ranks ${a} and ${b} us/query; ratio $ratio"
	ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print "median ratio " v[int((NR + 1) / 2)] }'
