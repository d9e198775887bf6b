#!/usr/bin/env bash
# responder-tcp-ab.sh: two dnsvolley-responder binaries over TCP, alternating round by round
# (an A/B on a shared machine), driven by the same dnsvolley client.
#
# usage: bench/responder-tcp-ab.sh A_RESPONDER B_RESPONDER [ROUNDS] [SECONDS] ["CONNS..."] [DNSVOLLEY]
# Each round starts A, then B (which goes first alternates), pinned to CPU 1, and runs the
# client pinned to CPU 0 against it at each -c in CONNS (default "16 10000"), -q twice -c,
# -m tcp, closed loop, SECONDS long (default 4); both at SCHED_FIFO 1 where chrt allows.
# Prints per run: responder (A or B), -c, q/s, client and responder CPU µs per completed
# query (/usr/bin/time; /proc/PID/stat), then per -c the median of the rounds' B ÷ A q/s.
# DNSVOLLEY defaults to build/dnsvolley. doc/performance.md ("The responder's reads") has
# the figures this gave.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
a=${1:?usage: responder-tcp-ab.sh A_RESPONDER B_RESPONDER [ROUNDS] [SECONDS] [CONNS] [DNSVOLLEY]}
b=${2:?usage: responder-tcp-ab.sh A_RESPONDER B_RESPONDER [ROUNDS] [SECONDS] [CONNS] [DNSVOLLEY]}
rounds=${3:-3} secs=${4:-4} conns=${5:-16 10000} dv=${6:-$top/build/dnsvolley}
for x in "$a" "$b" "$dv"; do [ -x "$x" ] || { echo "responder-tcp-ab.sh: $x: not an executable" >&2; exit 2; }; done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
rt=()
chrt -f 1 true 2>/dev/null && rt=(chrt -f 1)
. "$top/bench/lib.sh"
bench_tmp rtab
for i in $(seq 10000); do echo "www$((i % 100)).example A"; done >"$tmp/list"

# ticks PID: the process's user + system time in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run NAME BIN: one responder, every -c against it.
run() {
	local name=$1 bin=$2 c t0 t1
	rm -f "$tmp/tcp"
	"${rt[@]}" taskset -c 1 "$bin" -p 0 --tcp-port 0 --tcp-port-file "$tmp/tcp" -q >"$tmp/resp.out" 2>&1 &
	rpid=$!
	bench_bg "$rpid"
	for _ in $(seq 100); do [ -s "$tmp/tcp" ] && break; sleep 0.05; done
	[ -s "$tmp/tcp" ] || { echo "responder-tcp-ab.sh: $bin did not start" >&2; cat "$tmp/resp.out" >&2; exit 1; }
	for c in $conns; do
		t0=$(ticks "$rpid")
		/usr/bin/time -f "%U %S" -o "$tmp/time" "${rt[@]}" taskset -c 0 "$dv" -m tcp -s 127.0.0.1 \
			-p "$(cat "$tmp/tcp")" -d "$tmp/list" -l "$secs" -t 2 -c "$c" -q $((2 * c)) \
			--no-progress --json "$tmp/dv.json" >"$tmp/dv.out" 2>&1 || true
		t1=$(ticks "$rpid")
		python3 - "$tmp/dv.json" "$tmp/time" "$name" "$c" $((t1 - t0)) "$(getconf CLK_TCK)" <<'P' | tee -a "$tmp/all"
import json, sys
p = json.load(open(sys.argv[1]))["passes"][0]
done = p["counters"]["completed"]
u, s = (float(x) for x in open(sys.argv[2]).read().split())
print("%s %s %.0f %.2f %.2f" % (sys.argv[3], sys.argv[4], p["qps"], (u + s) * 1e6 / done,
      int(sys.argv[5]) / int(sys.argv[6]) * 1e6 / done))
P
	done
	bench_stop "$rpid"
}

echo "# responder -c q/s client_us/q responder_us/q (A = $a, B = $b, ${rt[*]:-no chrt})"
for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then run A "$a"; run B "$b"; else run B "$b"; run A "$a"; fi
done
python3 - "$tmp/all" <<'P'
import collections, statistics, sys
q = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    name, c, qps = line.split()[:3]
    q[c][name].append(float(qps))
for c, by in q.items():
    ratios = [b / a for a, b in zip(by["A"], by["B"])]
    print("-c %s: B/A q/s per round %s, median %.2fx" % (c, " ".join("%.2f" % x for x in ratios),
          statistics.median(ratios)))
P
