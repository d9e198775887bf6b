#!/usr/bin/env bash
# replay.sh: replay throughput and CPU cost of dnsvolley, dnsperf and the kernel floor, interleaved on loopback.
#
# The bundled responder (--reflect --no-gso) runs pinned to one core, each client
# pinned to the other. --no-gso: DNS servers answer one datagram per sendmmsg
# entry; with UDP GSO the responder would glue equal-length answers together,
# which favours a client that repeats one query (the floor) over real lists. Rounds interleave dnsperf, dnsvolley and bench/floor with the
# same list, one socket and the same window, so machine noise hits all three
# alike; the ratios printed at the end are the figures to trust. See
# doc/benchmarks.md for what each column means.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

build="$top/build"
list="$top/querylists/soa.txt"
rounds=5
secs=8
window=100
rate=20000
sys_secs=3
pin=1

usage() {
	cat <<EOF
usage: bench/replay.sh [-B BUILDDIR] [-d LIST] [-r ROUNDS] [-l SECONDS] [-q WINDOW]
                       [-Q RATE] [-S SYSCALL_SECONDS] [-P]
  -B DIR   build directory holding dnsvolley, dnsvolley-responder, bench/floor
           (default: $top/build, what ./quickstart demo builds)
  -d LIST  query list (default: querylists/soa.txt)
  -r N     interleaved rounds at full speed (default 3)
  -l S     seconds per run (default 8)
  -q N     queries in flight, all clients (default 100)
  -Q RATE  also compare CPU per query at a fixed rate (default 20000; 0 = skip)
  -S S     seconds of each run in the system-call round (default 3; 0 = skip)
  -P       do not pin to cores
Environment: RESPONDER=path overrides the responder binary.
EOF
}

while getopts "B:d:r:l:q:Q:S:Ph" opt; do
	case $opt in
	B) build=$(cd "$OPTARG" && pwd) ;;
	d) list=$OPTARG ;;
	r) rounds=$OPTARG ;;
	l) secs=$OPTARG ;;
	q) window=$OPTARG ;;
	Q) rate=$OPTARG ;;
	S) sys_secs=$OPTARG ;;
	P) pin=0 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

responder=${RESPONDER:-$build/dnsvolley-responder}
dnsvolley=$build/dnsvolley
floor=$build/bench/floor
[ -x "$responder" ] || { echo "replay.sh: no responder at $responder (run ./quickstart demo, or -B DIR)" >&2; exit 1; }
[ -x "$floor" ] || { echo "replay.sh: no $floor (make in $build builds it)" >&2; exit 1; }
[ -r "$list" ] || { echo "replay.sh: cannot read query list $list" >&2; exit 1; }
have_dnsperf=1
command -v dnsperf >/dev/null || have_dnsperf=0
[ -x /usr/bin/time ] || { echo "replay.sh: needs /usr/bin/time (Debian package 'time')" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvbench.XXXXXX")
rpid=""
cleanup() {
	if [ -n "$rpid" ]; then
		kill -INT "$rpid" 2>/dev/null || true
		wait "$rpid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# Pinning: responder on core 1, clients on core 0 (when the machine has two).
client_pin=()
server_pin=()
if [ "$pin" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] &&
	taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null; then
	client_pin=(taskset -c 0)
	server_pin=(taskset -c 1)
	pin_note="client on core 0, responder on core 1"
else
	pin_note="not pinned"
fi

"${server_pin[@]}" "$responder" -a 127.0.0.1 -p 0 --port-file "$tmp/port" --reflect \
	--no-gso >"$tmp/responder.out" 2>"$tmp/responder.err" &
rpid=$!
for _ in $(seq 200); do
	[ -s "$tmp/port" ] && break
	kill -0 "$rpid" 2>/dev/null || { echo "replay.sh: responder exited: $(cat "$tmp/responder.err")" >&2; exit 1; }
	sleep 0.025
done
[ -s "$tmp/port" ] || { echo "replay.sh: responder did not start" >&2; exit 1; }
port=$(cat "$tmp/port")

# Is dnsvolley there and does its report have the lines we parse?
have_dv=0
dv_note=""
if [ -x "$dnsvolley" ]; then
	if timeout 20 "$dnsvolley" -s 127.0.0.1 -p "$port" -d "$list" -l 1 -c 1 -q "$window" \
		>"$tmp/dv-probe.out" 2>&1 && grep -q '^ *Queries per second:' "$tmp/dv-probe.out"; then
		have_dv=1
	else
		dv_note="dnsvolley at $dnsvolley did not run or printed no 'Queries per second:' line; its column is skipped"
	fi
else
	dv_note="dnsvolley is not built ($dnsvolley); its column is skipped"
fi

# field FILE LABEL: the first number after "LABEL:" in FILE (empty if none).
field() {
	sed -n "s/^ *$2: *\([0-9.eE+-]*\).*/\1/p" "$1" | head -n 1
}

# cmd_for TOOL SECONDS [extra args...]: the client command line, into the array cmd.
cmd_for() {
	local tool=$1 s=$2
	shift 2
	case $tool in
	dnsperf) cmd=(dnsperf -s 127.0.0.1 -p "$port" -d "$list" -l "$s" -c 1 -q "$window" "$@") ;;
	dnsvolley) cmd=("$dnsvolley" -s 127.0.0.1 -p "$port" -d "$list" -l "$s" -c 1 -q "$window" "$@") ;;
	floor) cmd=("$floor" -s 127.0.0.1 -p "$port" -l "$s" -q "$window" -b 64) ;;
	esac
}

# run TAG TOOL [extra args...]: one timed run; appends "TAG TOOL qps cpu_us_per_q" to $tmp/results.
run() {
	local tag=$1 tool=$2
	shift 2
	cmd_for "$tool" "$secs" "$@"
	local out="$tmp/$tag-$tool.out" tf="$tmp/$tag-$tool.time"
	if ! "${client_pin[@]}" timeout -s INT $((secs + 60)) \
		/usr/bin/time -f 'DVTIME %e %U %S' -o "$tf" "${cmd[@]}" >"$out" 2>&1; then
		echo "  $tool: failed (exit status), output in the lines below:" >&2
		tail -n 5 "$out" >&2
		return 0
	fi
	local qps done_q cpu
	qps=$(field "$out" 'Queries per second')
	done_q=$(field "$out" 'Queries completed')
	read -r _ _ u s < <(grep '^DVTIME' "$tf")
	if [ -z "$qps" ] || [ -z "$done_q" ] || [ "${done_q%.*}" = 0 ]; then
		echo "  $tool: no 'Queries per second'/'Queries completed' in its output" >&2
		return 0
	fi
	cpu=$(awk -v u="$u" -v s="$s" -v n="$done_q" 'BEGIN { printf "%.3f", (u + s) * 1e6 / n }')
	printf '  %-9s %-6s qps %10.0f  CPU/query %6s us  (user %s s, sys %s s, %s completed)\n' \
		"$tool" "$tag" "$qps" "$cpu" "$u" "$s" "$done_q"
	echo "$tag $tool $qps $cpu" >>"$tmp/results"
	if [ "$tool" = dnsvolley ]; then
		echo "$tag $(field "$out" 'CPU per query (us)') $(field "$out" 'System calls per query')" \
			>>"$tmp/dv-self"
	fi
}

# syscalls TOOL: system calls per completed query, counted by the kernel's
# raw_syscalls:sys_enter tracepoint under perf stat (all threads; falls back to
# strace -f -c when perf cannot count it). Prints the figure.
syscall_method=""
if perf stat -x, -e raw_syscalls:sys_enter -o "$tmp/perf-probe" -- true >/dev/null 2>&1 &&
	grep -q 'raw_syscalls:sys_enter' "$tmp/perf-probe" && ! grep -q 'not supported' "$tmp/perf-probe"; then
	syscall_method=perf
elif command -v strace >/dev/null; then
	syscall_method=strace
fi
syscalls() {
	local tool=$1
	local out="$tmp/sys-$tool.out" cf="$tmp/sys-$tool.count" n done_q
	cmd_for "$tool" "$sys_secs"
	if [ "$syscall_method" = perf ]; then
		"${client_pin[@]}" timeout -s INT $((sys_secs + 60)) \
			perf stat -x, -e raw_syscalls:sys_enter -o "$cf" -- "${cmd[@]}" >"$out" 2>&1 || true
		n=$(awk -F, '/raw_syscalls:sys_enter/ { print $1; exit }' "$cf")
	else
		"${client_pin[@]}" timeout -s INT $((sys_secs + 60)) \
			strace -f -c -qq -o "$cf" "${cmd[@]}" >"$out" 2>&1 || true
		n=$(awk '$NF == "total" { print $(NF-2); exit }' "$cf")
	fi
	done_q=$(field "$out" 'Queries completed')
	if [ -z "$n" ] || [ -z "$done_q" ] || [ "${done_q%.*}" = 0 ]; then
		echo "-"
		return 0
	fi
	awk -v n="$n" -v q="$done_q" 'BEGIN { printf "%.4f", n / q }'
}

tools=()
[ "$have_dnsperf" = 1 ] && tools+=(dnsperf)
[ "$have_dv" = 1 ] && tools+=(dnsvolley)
tools+=(floor)

echo "== replay benchmark: $(basename "$list") ($(wc -l <"$list") lines), window $window, 1 socket, $rounds x ${secs}s rounds"
echo "== responder $responder --reflect --no-gso on 127.0.0.1:$port; $pin_note"
[ -n "$dv_note" ] && echo "== NOTE: $dv_note"
[ "$have_dnsperf" = 1 ] || echo "== NOTE: dnsperf is not installed; its column is skipped"
: >"$tmp/results"
for r in $(seq "$rounds"); do
	echo "-- round $r"
	# Rotate the order each round so no tool always runs first.
	n=${#tools[@]}
	for i in $(seq 0 $((n - 1))); do
		run "r$r" "${tools[$(((i + r - 1) % n))]}"
	done
done

declare -A sysq
if [ "$sys_secs" != 0 ] && [ -n "$syscall_method" ]; then
	echo "-- system-call round (${sys_secs}s each, counted with $syscall_method; its qps is not used)"
	for t in "${tools[@]}"; do
		sysq[$t]=$(syscalls "$t")
		echo "  $t: ${sysq[$t]} system calls per query"
	done
fi

rate_tools=()
[ "$have_dnsperf" = 1 ] && rate_tools+=(dnsperf)
[ "$have_dv" = 1 ] && rate_tools+=(dnsvolley)
if [ "$rate" != 0 ] && [ ${#rate_tools[@]} -gt 0 ]; then
	echo "-- fixed rate -Q $rate"
	for t in "${rate_tools[@]}"; do
		run "Q" "$t" -Q "$rate"
	done
fi

# median TAGPREFIX TOOL COLUMN
median() {
	awk -v p="$1" -v t="$2" -v c="$3" 'index($1, p) == 1 && $2 == t { print $c }' "$tmp/results" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
int() {
	awk -v a="$1" 'BEGIN { if (a == "-") print "-"; else printf "%.0f", a }'
}
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'
}

# paired A B COLUMN: the median over rounds of A's figure / B's figure in the same round.
# Both ran back to back within a round, so drift of the machine cancels out of each ratio.
paired() {
	awk -v a="$1" -v b="$2" -v c="$3" '
		$1 ~ /^r[0-9]+$/ { if ($2 == a) va[$1] = $c; if ($2 == b) vb[$1] = $c }
		END {
			n = 0
			for (r in va)
				if ((r in vb) && vb[r] > 0)
					x[++n] = va[r] / vb[r]
			if (n == 0) { print "-"; exit }
			for (i = 1; i <= n; i++)
				for (j = i + 1; j <= n; j++)
					if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			printf "%.2f", (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		}' "$tmp/results"
}

declare -A q c
echo
echo "## Results (medians of $rounds rounds; window $window; $pin_note)"
echo
echo "| client | queries/s | CPU µs/query | syscalls/query |"
echo "|---|---:|---:|---:|"
for t in dnsperf dnsvolley floor; do
	q[$t]=$(median r "$t" 3)
	c[$t]=$(median r "$t" 4)
	if [ "${q[$t]}" = "-" ]; then
		echo "| $t | (skipped) | | |"
	else
		printf '| %s | %.0f | %s | %s |\n' "$t" "${q[$t]}" "${c[$t]}" "${sysq[$t]:--}"
	fi
done
echo
echo "| ratio | queries/s | CPU µs/query |"
echo "|---|---:|---:|"
echo "| dnsvolley / floor | $(ratio "${q[dnsvolley]}" "${q[floor]}") | $(ratio "${c[dnsvolley]}" "${c[floor]}") |"
echo "| dnsvolley / dnsperf | $(ratio "${q[dnsvolley]}" "${q[dnsperf]}") | $(ratio "${c[dnsvolley]}" "${c[dnsperf]}") |"
echo "| dnsperf / floor | $(ratio "${q[dnsperf]}" "${q[floor]}") | $(ratio "${c[dnsperf]}" "${c[floor]}") |"
echo
echo "| paired ratio (median over rounds of the same-round ratio) | queries/s | CPU µs/query |"
echo "|---|---:|---:|"
echo "| dnsvolley / floor | $(paired dnsvolley floor 3) | $(paired dnsvolley floor 4) |"
echo "| dnsvolley / dnsperf | $(paired dnsvolley dnsperf 3) | $(paired dnsvolley dnsperf 4) |"
if [ -s "$tmp/dv-self" ]; then
	echo
	echo "dnsvolley's own report (per round: CPU µs/query, syscalls/query):"
	while read -r tag cpu sc; do echo "  $tag: ${cpu:--} ${sc:--}"; done <"$tmp/dv-self"
fi
if [ "$rate" != 0 ] && [ ${#rate_tools[@]} -gt 0 ]; then
	qd=$(median Q dnsperf 4)
	qv=$(median Q dnsvolley 4)
	echo
	echo "| at -Q $rate | dnsperf | dnsvolley | dnsvolley / dnsperf |"
	echo "|---|---:|---:|---:|"
	qq_d=$(median Q dnsperf 3)
	qq_v=$(median Q dnsvolley 3)
	echo "| queries/s | $(int "$qq_d") | $(int "$qq_v") | $(ratio "$qq_v" "$qq_d") |"
	echo "| CPU µs/query | $qd | $qv | $(ratio "$qv" "$qd") |"
fi
[ -n "$dv_note" ] && { echo; echo "NOTE: $dv_note"; }
if [ -n "$syscall_method" ] && [ "$sys_secs" != 0 ]; then
	echo
	echo "syscalls/query: $syscall_method ($([ "$syscall_method" = perf ] && echo "perf stat -e raw_syscalls:sys_enter" || echo "strace -f -c -qq")), a separate ${sys_secs}s run per client, whole process including start-up, divided by completed queries."
fi
kill -INT "$rpid" 2>/dev/null || true
wait "$rpid" 2>/dev/null || true
rpid=""
echo
echo "responder's counts:"
sed 's/^/  /' "$tmp/responder.out"
exit 0
