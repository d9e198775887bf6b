#!/usr/bin/env bash
# knot-tcp.sh: dnsvolley and dnsperf over TCP against knotd with one TCP worker, in the
# same rounds (issue 28: "less throughput than dnsperf from the same server over TCP").
#
# usage: bench/knot-tcp.sh [-B BUILDDIR] [-l SECONDS] [-r ROUNDS] [-n]
# knotd (tcp-workers 1, every thread pinned to CPU 1) serves a 2,000-name zone; each client
# runs pinned to CPU 0 for -l SECONDS (default 3), at -c 4 -q 100 and -c 16 -q 256, the two
# tools interleaved, -r ROUNDS times (default 3). Clients and knotd at SCHED_FIFO 1 when
# chrt allows (-n: never), so that a shared machine's other load cannot take their CPUs. Prints per run: tool, -c, -q, q/s, client CPU µs
# per query (user+system from /usr/bin/time), and the TCP segments the client sent per
# query (nstat TcpOutSegs over the run, loopback: both ends' segments, divided by two).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
secs=3 rounds=3 nort=""
while getopts "B:l:r:n" o; do
	case $o in
	B) build=$(cd "$OPTARG" && pwd) ;;
	l) secs=$OPTARG ;;
	r) rounds=$OPTARG ;;
	n) nort=1 ;;
	*) echo "usage: bench/knot-tcp.sh [-B DIR] [-l S] [-r ROUNDS] [-n]" >&2; exit 2 ;;
	esac
done
for t in knotd dnsperf taskset /usr/bin/time python3 nstat; do
	command -v "$t" >/dev/null || { echo "knot-tcp.sh: needs $t" >&2; exit 2; }
done
DV="$build/dnsvolley"
[ -x "$DV" ] || { echo "knot-tcp.sh: build first ($build)" >&2; exit 2; }
rt=()
[ -z "$nort" ] && chrt -f 1 true 2>/dev/null && rt=(chrt -f 1)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvknottcp.XXXXXX")
kpid=""
cleanup() {
	[ -n "$kpid" ] && kill "$kpid" 2>/dev/null || true
	sleep 0.2
	rm -rf "$tmp"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
{
	printf '$ORIGIN bench.\n$TTL 3600\n@ SOA ns.bench. h.bench. 1 3600 900 604800 3600\n@ NS ns.bench.\nns A 127.0.0.1\n'
	for i in $(seq 2000); do echo "d$i A 192.0.2.$((i % 250 + 1))"; done
} >"$tmp/bench.zone"
for i in $(seq 2000); do echo "d$i.bench A"; done >"$tmp/list"
cat >"$tmp/knot.conf" <<K
server:
    rundir: "$tmp"
    listen: 127.0.0.1@$port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
log:
  - target: stderr
    any: warning
database:
    storage: "$tmp"
zone:
  - domain: bench
    file: "$tmp/bench.zone"
K
"${rt[@]}" taskset -c 1 knotd -c "$tmp/knot.conf" 2>"$tmp/knot.err" &
kpid=$!
for _ in $(seq 100); do
	"$DV" -m tcp -s 127.0.0.1 -p "$port" -d "$tmp/list" -n 1 -c 1 -q 1 --quiet --no-progress \
		--server-pid none >/dev/null 2>&1 && break
	sleep 0.1
done
taskset -a -p -c 1 "$kpid" >/dev/null

segs() { nstat -az TcpOutSegs | awk '$1 == "TcpOutSegs" { print $2 }'; }

# run TOOL C Q: one run; prints its line.
run() {
	local tool=$1 c=$2 q=$3 s0 s1 done qps
	s0=$(segs)
	if [ "$tool" = dnsvolley ]; then
		/usr/bin/time -f "%U %S" -o "$tmp/time" "${rt[@]}" taskset -c 0 "$DV" -m tcp \
			-s 127.0.0.1 -p "$port" -d "$tmp/list" -l "$secs" -c "$c" -q "$q" --no-progress \
			--server-pid none >"$tmp/out" 2>&1 || true
	else
		/usr/bin/time -f "%U %S" -o "$tmp/time" "${rt[@]}" taskset -c 0 dnsperf -m tcp \
			-s 127.0.0.1 -p "$port" -d "$tmp/list" -l "$secs" -c "$c" -q "$q" \
			>"$tmp/out" 2>&1 || true
	fi
	s1=$(segs)
	done=$(awk '/Queries completed:/ { print $3; exit }' "$tmp/out")
	qps=$(awk '/Queries per second:/ { print $4; exit }' "$tmp/out")
	awk -v t="$tool" -v c="$c" -v q="$q" -v d="${done:-0}" -v r="${qps:-0}" \
		-v s="$((s1 - s0))" -v tm="$(cat "$tmp/time")" 'BEGIN { split(tm, a, " ");
		printf "%s %s %s %.0f %.2f %.2f\n", t, c, q, r, d ? (a[1] + a[2]) * 1e6 / d : 0,
		d ? s / 2 / d : 0 }'
}

echo "# knot-tcp.sh: knotd $(knotd --version | awk '{print $NF}'), 1 TCP worker on CPU 1;" \
	"clients on CPU 0; both ${rt[*]:-at ordinary priority}; -l $secs; load $(cut -d' ' -f1 /proc/loadavg)"
echo "# tool c q qps cpu_us_per_query tcp_segments_per_query"
for r in $(seq "$rounds"); do
	for cq in "4 100" "16 256"; do
		set -- $cq
		run dnsvolley "$1" "$2"
		run dnsperf "$1" "$2"
	done
done
