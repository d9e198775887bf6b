#!/usr/bin/env bash
# paced-cpu: the generator's CPU per answered query in paced mode (-Q), dnsvolley against
# dnsperf at the same rate, same responder, same run (interleaved rounds); and the wall
# time of a default `dnsvolley capacity` search. Figures for doc/performance.md.
#
# usage: bench/paced-cpu.sh [BUILD_DIR] [QPS] [SECONDS] [ROUNDS]
#   defaults: build, 20000, 5, 3
# With two CPUs or more the responder runs on CPU 1 and each client on CPU 0, as in the
# other benches (PIN=0: let the scheduler place them; on two cores that placement, the
# responder beside the client or not, moves both clients' figures from run to run).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
qps=${2:-20000}
secs=${3:-5}
rounds=${4:-3}
command -v dnsperf >/dev/null || { echo "dnsperf is not installed (Debian: dnsperf)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvpaced.XXXXXX")
rpid=""
cpin=() spin=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	cpin=(taskset -c 0) spin=(taskset -c 1)
fi
trap '[ -n "$rpid" ] && kill -9 "$rpid" 2>/dev/null; rm -rf "$tmp"' EXIT
"${spin[@]}" "$build/dnsvolley-responder" -a 127.0.0.1 -p 0 --port-file "$tmp/port" -T 1 >/dev/null 2>&1 &
rpid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
list="$top/querylists/soa.txt"

# cpu_per_query NAME CMD...: user+system seconds of CMD over its answered queries, in us.
cpu_per_query() {
	local name=$1
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/time" "${cpin[@]}" "$@" >"$tmp/out" 2>&1
	local answered
	answered=$(awk -F: '/Queries completed/ { split($2, a, " "); print a[1]; exit }' "$tmp/out")
	awk -v n="$name" -v d="$answered" '{ printf "%s %.3f\n", n, ($1 + $2) * 1e6 / d }' "$tmp/time"
}
for _ in $(seq "$rounds"); do
	cpu_per_query dnsvolley "$build/dnsvolley" --no-progress -s 127.0.0.1 -p "$port" -d "$list" \
		-Q "$qps" -l "$secs" -q 1000
	cpu_per_query dnsperf dnsperf -s 127.0.0.1 -p "$port" -d "$list" -Q "$qps" -l "$secs" -q 1000
done | awk -v qps="$qps" -v pin="$([ ${#cpin[@]} -gt 0 ] && echo "pinned (clients CPU 0, responder CPU 1)" || echo unpinned)" '
function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
$1 == "dnsvolley" { v[++n] = $2 } $1 == "dnsperf" { p[n] = $2; r[n] = v[n] / $2; line = line sprintf(" %.2f/%.2f", v[n], $2) }
END {
	printf "paced -Q %s, %s, %d rounds, CPU per query (us, dnsvolley/dnsperf):%s\n", qps, pin, n, line
	mv = med(v, n); mp = med(p, n); mr = med(r, n) # each sorts its array: r[1], r[n] are min, max
	printf "median: dnsvolley %.3f us, dnsperf %.3f us; ratio %.2f (rounds %.2f-%.2f)\n", mv, mp, mr, r[1], r[n] }'
kill -INT "$rpid"; wait "$rpid" 2>/dev/null || true
rpid=""

# A default capacity search of a 100,000-qps responder: its wall time.
"${spin[@]}" "$build/dnsvolley-responder" -a 127.0.0.1 -p 0 --port-file "$tmp/port2" -T 1 --capacity 100000 \
	>/dev/null 2>&1 &
rpid=$!
for _ in $(seq 100); do [ -s "$tmp/port2" ] && break; sleep 0.05; done
start=$(date +%s.%N)
"${cpin[@]}" "$build/dnsvolley" capacity --no-progress -s 127.0.0.1 -p "$(cat "$tmp/port2")" -d "$list" \
	>"$tmp/cap" 2>&1 || true
end=$(date +%s.%N)
echo "capacity search, defaults, --capacity 100000: $(grep -c '^\[Capacity\] step' "$tmp/cap") steps, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s wall: $(grep '^Capacity' "$tmp/cap")"
kill -INT "$rpid"; wait "$rpid" 2>/dev/null || true
rpid=""
