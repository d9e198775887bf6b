#!/usr/bin/env bash
# run-all: fuzz every target for N minutes each (nightly style) and record the executions.
#
#   tests/fuzz/run-all.sh [-m MINUTES] [-j JOBS] [-t "csv compare ..."] BUILD_DIR
#
# BUILD_DIR is a tree configured with
#   ../configure CC=clang --enable-fuzzing --enable-sanitizers
# (see mk/fuzz.mk, doc/fuzzing.md). Targets run one after another, each with JOBS libFuzzer
# workers (-fork, default 1) on its seed corpus plus BUILD_DIR/fuzz-work/TARGET (kept between
# runs, so coverage accumulates over nights). Crashes go to BUILD_DIR/fuzz-work/TARGET-crash-*.
# One line per target is appended to BUILD_DIR/fuzz-work/runs.tsv:
#   date  target  seconds  executions  execs_per_s  edges  status(0 = clean)
# and printed. Exit 1 when any target found something, 2 for bad usage.
set -euo pipefail
minutes=5 jobs=1
targets="querylist response results answer csv compare plot"
while getopts m:j:t: o; do
	case $o in
	m) minutes=$OPTARG ;;
	j) jobs=$OPTARG ;;
	t) targets=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-m MINUTES] [-j JOBS] [-t TARGETS] BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run-all: -m: not a number of minutes" >&2; exit 2; }
secs=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
[ "$secs" -ge 1 ] || { echo "run-all: -m: at least one second" >&2; exit 2; }
work="$build/fuzz-work"
mkdir -p "$work"
found=0
for t in $targets; do
	prog="$build/tests/fuzz/fuzz_$t"
	[ -x "$prog" ] || { echo "run-all: $prog not built (make -C $build $(basename "$prog"))" >&2; exit 2; }
	mkdir -p "$work/$t"
	log="$work/$t.log"
	when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	rc=0
	fork=()
	[ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=0)
	"$prog" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"${fork[@]}" -artifact_prefix="$work/$t-" "$work/$t" "$src/tests/fuzz/corpus/$t" \
		>"$log" 2>&1 || rc=$?
	# Executions: the final stats line (one process), or the sum of the workers' last
	# "#N" status lines (-fork).
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{ s += $1 } END { print s + 0 }')
	[ "$execs" -gt 0 ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || echo 0)
	edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{ print $2 }')
	rate=$(awk -v e="$execs" -v s="$secs" 'BEGIN { printf "%d", e / s }')
	line="$when	$t	$secs	$execs	$rate	${edges:-?}	$rc"
	echo "$line" >>"$work/runs.tsv"
	echo "$line"
	[ "$rc" -eq 0 ] || { found=1; echo "run-all: fuzz_$t found something: see $log" >&2; }
done
exit "$found"
