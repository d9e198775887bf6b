#!/usr/bin/env bash
# ab-cpu.sh: CPU per query of two dnsvolley binaries, alternating run by run (an A/B on a busy machine).
#
# usage: bench/ab-cpu.sh A_DV B_DV [PAIRS] [SECONDS] [CLOCK] [dnsvolley ARGS...]
# Pairs of runs of A and B (which goes first alternates) against one dnsvolley-responder
# (--reflect --no-gso, from A's build directory, pinned to core 1; clients on core 0), each
# SECONDS long on --clock CLOCK (default wire) with ARGS (default -c 1 -q 100). Prints
# each pair's CPU µs per query (user + system, /usr/bin/time) and A ÷ B, then the median
# of the pair ratios and the ratio of the means. Defaults: 30 pairs of 1.5 s.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
a=$1 b=$2
pairs=${3:-30}
secs=${4:-1.5}
clock=${5:-wire}
shift $(($# < 5 ? $# : 5))
extra=("$@")
[ ${#extra[@]} -gt 0 ] || extra=(-c 1 -q 100)
list="$top/querylists/soa.txt"
. "$top/bench/lib.sh"
bench_tmp ab
bench_pins
bench_responder "$(dirname "$a")/dnsvolley-responder" "$tmp/port" --reflect --no-gso

one() { # BINARY: prints its CPU µs per completed query
	/usr/bin/time -f '%U %S' -o "$tmp/time" "${cpin[@]}" "$1" -s 127.0.0.1 -p "$port" -d "$list" \
		-l "$secs" "${extra[@]}" --clock "$clock" --no-progress >"$tmp/out" 2>&1 || true
	local done
	done=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$tmp/out" | head -n 1)
	awk -v d="${done:-0}" '{ printf "%.4f", d ? ($1 + $2) * 1e6 / d : 0 }' "$tmp/time"
}
printf '%-5s %10s %10s %8s\n' pair a_us b_us a/b
for i in $(seq "$pairs"); do
	if [ $((i % 2)) = 0 ]; then x=$(one "$a"); y=$(one "$b"); else y=$(one "$b"); x=$(one "$a"); fi
	echo "$i $x $y" | awk '{ printf "%-5s %10s %10s %8.3f\n", $1, $2, $3, $3 ? $2 / $3 : 0 }'
done | tee "$tmp/rows"
sort -g -k4 "$tmp/rows" | awk '{ v[NR] = $4 } END { printf "median a/b CPU per query: %.3f (%d pairs)\n", v[int((NR + 1) / 2)], NR }'
awk '{ x += $2; y += $3 } END { printf "means: a %.3f us, b %.3f us, ratio %.3f\n", x / NR, y / NR, y ? x / y : 0 }' "$tmp/rows"
