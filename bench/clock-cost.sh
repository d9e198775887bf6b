#!/usr/bin/env bash
# clock-cost.sh: CPU per query and queries/s of --clock wire against --clock app and bench/floor, paired rounds.
#
# Rounds interleave the three clients against one dnsvolley-responder (--reflect
# --no-gso, pinned to core 1; clients on core 0), so machine noise hits them
# alike; the per-round ratios and their medians are the figures to trust.
# usage: bench/clock-cost.sh [BUILD_DIR] [ROUNDS] [SECONDS] [EXTRA dnsvolley ARGS...]
# WIRE_CLOCK (environment) sets the wire run's --clock (default wire: the default sample;
# e.g. WIRE_CLOCK=wire:1/1 stamps every query). BASE_DV (environment): another dnsvolley
# binary (e.g. the main branch's) whose wire run joins each round, for an A/B on a busy
# machine: its columns base_qps, base_us, base/floor and wire/base (CPU per query).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
secs=${3:-3}
shift $(($# < 3 ? $# : 3))
extra=("$@")
[ ${#extra[@]} -gt 0 ] || extra=(-c 1 -q 100)
list="$top/querylists/soa.txt"
. "$top/bench/lib.sh"
bench_tmp clock
bench_pins
bench_responder "$build/dnsvolley-responder" "$tmp/port" --reflect --no-gso

# run NAME CMD...: prints "qps cpu_us_per_query" of one run
run() {
	shift
	/usr/bin/time -f '%U %S' -o "$tmp/time" "${cpin[@]}" "$@" >"$tmp/out" 2>&1 || true
	local done
	done=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$tmp/out" | head -n 1)
	awk -v d="${done:-0}" -v s="$secs" '{ c = $1 + $2; printf "%.0f %.3f\n", d / s, d ? c * 1e6 / d : 0 }' "$tmp/time"
}

base=${BASE_DV:-}
printf '%-6s %10s %8s %10s %8s %10s %8s %8s %8s %8s' round app_qps app_us wire_qps wire_us floor_qps floor_us wire/app wire/floor qps_w/f
[ -z "$base" ] || printf ' %10s %8s %8s %8s' base_qps base_us base/floor wire/base
printf '\n'
for r in $(seq "$rounds"); do
	a=$(run app "$build/dnsvolley" -s 127.0.0.1 -p "$port" -d "$list" -l "$secs" "${extra[@]}" --clock app)
	w=$(run wire "$build/dnsvolley" -s 127.0.0.1 -p "$port" -d "$list" -l "$secs" "${extra[@]}" --clock "${WIRE_CLOCK:-wire}")
	f=$(run floor "$build/bench/floor" -s 127.0.0.1 -p "$port" -l "$secs" -q 100)
	b="0 0"
	[ -z "$base" ] || b=$(run base "$base" -s 127.0.0.1 -p "$port" -d "$list" -l "$secs" "${extra[@]}" --clock "${WIRE_CLOCK:-wire}")
	echo "$r $a $w $f $b" | awk -v base="$base" '{ printf "%-6s %10s %8s %10s %8s %10s %8s %8.3f %8.3f %8.3f", $1, $2, $3, $4, $5, $6, $7, $5 / $3, $5 / $7, $6 ? $4 / $6 : 0
		if (base != "") printf " %10s %8s %8.3f %8.3f", $8, $9, $9 / $7, $9 ? $5 / $9 : 0
		printf "\n" }'
done | tee "$tmp/rows"
med() { awk -v c="$1" '{ print $c }' "$tmp/rows" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "median CPU/query ratio: wire/app $(med 8), wire/floor $(med 9); qps wire/floor $(med 10); app/floor $(awk '{ printf "%.3f\n", $3 / $7 }' "$tmp/rows" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') ($rounds rounds)"
[ -z "$base" ] || echo "base ($base): median CPU/query ratio base/floor $(med 13), wire/base $(med 14); qps base/floor $(awk '{ printf "%.3f\n", $6 ? $11 / $6 : 0 }' "$tmp/rows" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
