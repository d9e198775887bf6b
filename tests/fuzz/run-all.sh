#!/usr/bin/env bash
# run-all: fuzz every target for N minutes each (nightly style) and record the executions.
#
#   tests/fuzz/run-all.sh [-m MINUTES] [-n EXECUTIONS] [-j JOBS] [-t "csv compare ..."] BUILD_DIR
#
# -n: each target stops after EXECUTIONS inputs (libFuzzer -runs) instead of after
# MINUTES (with -n and no -m: no time limit; with both: whichever comes first). -n with
# -j 1 only: libFuzzer's -fork mode does not count -runs over its workers.
#
# BUILD_DIR is a tree configured with
#   ../configure CC=clang --enable-fuzzing --enable-sanitizers
# (see mk/fuzz.mk, doc/fuzzing.md). Targets run one after another, each with JOBS libFuzzer
# workers (-fork, default 1) on its seed corpus plus BUILD_DIR/fuzz-work/TARGET (kept between
# runs, so coverage accumulates over nights). Crashes go to BUILD_DIR/fuzz-work/TARGET-crash-*.
# One line per target is appended to BUILD_DIR/fuzz-work/runs.tsv:
#   date  target  seconds  executions  execs_per_s  edges  status
# and printed: seconds it ran; status 0 clean, "stopped" when SIGTERM/SIGINT ended it
# early (clean so far: the line records what ran; stop a fuzzer so, never with SIGSTOP,
# which libFuzzer's watchdog reports as a timeout), else libFuzzer's exit status.
# Exit 1 when any target found something, 2 for bad usage, 143/130 when stopped.
set -euo pipefail
minutes=5 jobs=1 runs= mset=
targets="querylist response results answer csv compare plot stream rstream pcap dnstap"
while getopts m:n:j:t: o; do
	case $o in
	m) minutes=$OPTARG mset=1 ;;
	n) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	t) targets=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-m MINUTES] [-n EXECUTIONS] [-j JOBS] [-t TARGETS] BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run-all: -m: not a number of minutes" >&2; exit 2; }
secs=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
[ "$secs" -ge 1 ] || { echo "run-all: -m: at least one second" >&2; exit 2; }
limit=(-max_total_time="$secs")
if [ -n "$runs" ]; then
	[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run-all: -n: not a number of executions" >&2; exit 2; }
	[ "$jobs" -eq 1 ] || { echo "run-all: -n needs -j 1 (-fork does not count -runs)" >&2; exit 2; }
	limit=(-runs="$runs")
	[ -z "$mset" ] || limit+=(-max_total_time="$secs")
fi
work="$build/fuzz-work"
mkdir -p "$work"
found=0
stopped=
child=
stop() {
	stopped=$1
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
	return 0
}
trap 'stop 143' TERM
trap 'stop 130' INT
for t in $targets; do
	prog="$build/tests/fuzz/fuzz_$t"
	[ -x "$prog" ] || { echo "run-all: $prog not built (make -C $build $(basename "$prog"))" >&2; exit 2; }
	mkdir -p "$work/$t"
	log="$work/$t.log"
	when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	t0=$(date +%s)
	rc=0
	fork=()
	[ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=0)
	"$prog" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"${fork[@]}" -artifact_prefix="$work/$t-" "$work/$t" "$src/tests/fuzz/corpus/$t" \
		>"$log" 2>&1 &
	child=$!
	# a trapped signal interrupts wait: wait again for the fuzzer's own end
	while :; do
		wait "$child" && rc=0 || rc=$?
		kill -0 "$child" 2>/dev/null || break
	done
	child=
	ran=$(($(date +%s) - t0))
	[ "$ran" -ge 1 ] || ran=1
	# Executions: the final stats line (one process), or the sum of the workers' last
	# "#N" status lines (-fork).
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{ s += $1 } END { print s + 0 }')
	[ "$execs" -gt 0 ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || echo 0)
	edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{ print $2 }')
	rate=$(awk -v e="$execs" -v s="$ran" 'BEGIN { printf "%d", e / s }')
	status=$rc
	[ -n "$stopped" ] && grep -q "libFuzzer: run interrupted" "$log" && status=stopped
	line="$when	$t	$ran	$execs	$rate	${edges:-?}	$status"
	echo "$line" >>"$work/runs.tsv"
	echo "$line"
	[ "$status" = 0 ] || [ "$status" = stopped ] ||
		{ found=1; echo "run-all: fuzz_$t found something: see $log" >&2; }
	[ -z "$stopped" ] || break
done
[ -z "$stopped" ] || [ "$found" = 1 ] || exit "$stopped"
exit "$found"
