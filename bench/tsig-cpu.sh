#!/usr/bin/env bash
# tsig-cpu: the generator's CPU per query with -y (signed ahead, every answer's MAC verified)
# against without, rounds interleaved in one run (doc/performance.md "TSIG"). The bundled
# responder with --reflect echoes each query, TSIG RR included, so every answer is walked
# and its MAC computed (and found wrong: BADMAC, the full cost of a check).
# usage: bench/tsig-cpu.sh [-B BUILDDIR] [-r ROUNDS] [-a ALG]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build" rounds=3 alg=hmac-sha256
while getopts "B:r:a:" o; do
	case $o in
	B) build=$OPTARG ;;
	r) rounds=$OPTARG ;;
	a) alg=$OPTARG ;;
	*) echo "usage: $0 [-B BUILDDIR] [-r ROUNDS] [-a ALG]" >&2; exit 2 ;;
	esac
done
DV="$build/dnsvolley" R="$build/dnsvolley-responder"
[ -x "$DV" ] && [ -x "$R" ] || { echo "tsig-cpu: build $build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill "$rpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
taskset -c 1 "$R" -a 127.0.0.1 -p 0 --port-file "$tmp/port" --reflect >/dev/null 2>&1 &
rpid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
secret=$(head -c 32 /dev/urandom | base64)

# cpu_per_query FLAGS...: µs of generator CPU per query sent in one run.
cpu_per_query() {
	taskset -c 0 "$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$port" \
		-d "$top/querylists/soa.txt" -c 8 -q 500 -n 20 --json "$tmp/r.json" "$@" >/dev/null
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["passes"][0]
print("%.3f" % ((p["cpu_user_s"] + p["cpu_sys_s"]) * 1e6 / p["counters"]["sent"]))' "$tmp/r.json"
}

echo "| round | CPU per query, unsigned (µs) | with \`-y $alg\` (µs) |"
echo "| --- | --- | --- |"
u=() s=()
for r in $(seq "$rounds"); do
	u+=("$(cpu_per_query)")
	s+=("$(cpu_per_query -y "$alg:k.:$secret")")
	echo "| $r | ${u[-1]} | ${s[-1]} |"
done
mu=$(printf '%s\n' "${u[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
ms=$(printf '%s\n' "${s[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "| median | $mu | $ms ($(awk -v a="$ms" -v b="$mu" 'BEGIN { printf "%.2f", a / b }')×) |"
