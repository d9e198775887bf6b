#!/usr/bin/env bash
# load-querylist.sh: time and size of loading 1M and 10M-line query lists
# (the figures in doc/performance.md, "Loading query lists").
# usage: bench/load-querylist.sh [BUILD_DIR]   (default: ./build; needs bench/ql-load,
#        made by `make check` or `make bench/ql-load` in that directory)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
loader="$build/bench/ql-load"
[ -x "$loader" ] || make -C "$build" -s bench/ql-load
tmp=$(mktemp -d "${TMPDIR:-/tmp}/qlbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

field() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
# "Maximum resident set size (kbytes): N" from GNU time -v
rss() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }

runs=${RUNS:-3}
echo "Each row: best of $runs runs (wall and CPU seconds of dv_querylist_load alone; peak RSS of the whole process)."
echo
echo "| lines | text MB | wire MB (arena) | arena+off / wire | load s (wall) | load s (CPU) | peak RSS MB | flags |"
echo "|---|---|---|---|---|---|---|---|"
for n in 1000000 10000000; do
	"$top/bench/gen-big-list.sh" "$n" >"$tmp/list.txt"
	text_b=$(stat -c %s "$tmp/list.txt")
	for flags in "" "--edns --do"; do
		best_wall=999999 best_cpu=999999 peak=0
		for _ in $(seq "$runs"); do
			# shellcheck disable=SC2086 # flags are words on purpose
			/usr/bin/time -v "$loader" $flags "$tmp/list.txt" >"$tmp/out" 2>"$tmp/time"
			best_wall=$(echo "w = $(field load_s "$tmp/out"); if (w < $best_wall) w else $best_wall" | bc -l)
			best_cpu=$(echo "c = $(field load_cpu_s "$tmp/out"); if (c < $best_cpu) c else $best_cpu" | bc -l)
			r=$(rss "$tmp/time")
			[ "$r" -gt "$peak" ] && peak=$r
		done
		printf '| %s | %.1f | %.1f | %s | %.3f | %.3f | %.1f | %s |\n' "$n" \
			"$(echo "$text_b / 1048576" | bc -l)" \
			"$(echo "$(field arena_bytes "$tmp/out") / 1048576" | bc -l)" \
			"$(field memory_per_wire "$tmp/out")" "$best_wall" "$best_cpu" \
			"$(echo "$peak / 1024" | bc -l)" "${flags:-none}"
	done
done
# The same list compiled the slow way (ldns_pkt per query), same process, one after
# the other: the ratio is the figure to trust on a shared machine.
"$top/bench/gen-big-list.sh" 1000000 >"$tmp/list.txt"
"$loader" --ldns-pkt 200000 "$tmp/list.txt" >"$tmp/out"
echo
echo "ldns_pkt per query: $(field ldns_pkt_ns_per_query "$tmp/out") ns; ours: $(field ours_ns_per_query "$tmp/out") ns; ratio $(field ldns_pkt_over_ours "$tmp/out")x"
