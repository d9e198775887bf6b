#!/usr/bin/env bash
# stream-conns.sh: the cost of many TCP connections, dnsvolley and dnsperf in the same run.
#
# usage: bench/stream-conns.sh [-B BUILDDIR] [-l SECONDS] [-c "16 256 1000 4000 10000"]
#                              [-Q RATE] [-D OTHER_DNSVOLLEY] [-n] [-P] [-r ROUNDS]
# Starts dnsvolley-responder (TCP listener) pinned to CPU 1 and runs each client pinned to
# CPU 0 (taskset), for each -c: -q twice -c, -l SECONDS (default 4), -t 2, against the same
# responder; then the same -c paced at -Q RATE (default 20000 q/s) for the latency at a
# fixed load. Both processes run at SCHED_FIFO priority 1 when chrt allows it (a shared
# machine's other load then cannot take their CPUs; the header says which); -n: never.
# Prints per run: tool, -c, completed, q/s, client CPU µs per completed query (user+system
# from /usr/bin/time), connections opened (dnsvolley's results file; dnsperf does not say:
# the host's TcpActiveOpens during its run, other loopback clients' connects included;
# it opens at most 256, and then dnsvolley runs again with that many connections and the
# same -q, "dv-as-dnsperf": the same work), p50 latency in ms (dnsperf prints only the
# average: its average, marked "avg"), and the host's TcpExtListenOverflows during the run (nstat; "-" without it): handshakes
# the server's accept queue had no room for, each costing its client a 1 s SYN retransmit,
# dnsvolley's conn_syn_retries (the SYNs it sent again; dnsperf: "-"), and the host's TCP
# segments per completed query (nstat TcpOutSegs; on loopback both ends' segments, and the
# sender's CPU does the receiver's kernel work too; other loopback traffic counts in it)
# and the ACKs the hosts' delayed-ACK timers sent per completed query (TcpExtDelayedACKs:
# both ends; a segment whose ACK found no data to ride on within the timeout).
# Then the opening: dnsvolley at the largest -c for 2 s (-l 2), unpaced and paced at -Q
# RATE, -q twice -c: "opened" must be every connection (they open during sending only).
# Last, the cost of a connection: dnsvolley at -c 16 and at the largest -c, -Q 1000 -l 2
# (2,000 queries), and (CPU at the largest - CPU at 16) / (connections - 16): its socket,
# connect, handshake and close (on loopback the server's end of each on this CPU too).
# -D BIN: also run BIN (e.g. a dnsvolley built before a change) at each -c, as "dvother".
# -P: dnsvolley's closed-loop runs under `perf record -g` (the client task only; perf's own
# CPU is not in the figures) and, after them, each one's CPU split into the client's own
# work and the server end's kernel work done on the client's CPU (bench/cpu-split.py).
# Each closed-loop -c also runs bench/tcp-floor ("floor"): the same connections and window
# with nothing but the system calls a closed loop needs (one recv per event, one send of the
# freed slots' queries on the connection just read, epoll): what the kernel costs any client.
# -r ROUNDS: only the target's ratio, in ROUNDS interleaved rounds: each round runs
# dnsvolley at the smallest and the largest -c, closed loop and paced at -Q RATE, and the
# floor at both (which goes first alternates), and prints the CPU per query at the largest ÷
# at the smallest for each, and dnsvolley's ÷ the floor's at each -c; then the medians.
# The figures in doc/performance.md ("Many connections") came from this script.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
secs=4 conns="16 256 1000 4000 10000" rate=20000 other="" nort="" perf="" rounds=""
while getopts "B:l:c:Q:D:nPr:" o; do
	case $o in
	B) build=$(cd "$OPTARG" && pwd) ;;
	l) secs=$OPTARG ;;
	c) conns=$OPTARG ;;
	Q) rate=$OPTARG ;;
	D) other=$OPTARG ;;
	n) nort=1 ;;
	P) perf=1 ;;
	r) rounds=$OPTARG ;;
	*) echo "usage: bench/stream-conns.sh [-B DIR] [-l S] [-c LIST] [-Q RATE] [-D BIN] [-n] [-P] [-r ROUNDS]" >&2; exit 2 ;;
	esac
done
for t in dnsperf taskset /usr/bin/time python3 ${perf:+perf}; do
	command -v "$t" >/dev/null || { echo "stream-conns.sh: needs $t" >&2; exit 2; }
done
DV="$build/dnsvolley" RESP="$build/dnsvolley-responder" FLOOR="$build/bench/tcp-floor"
[ -x "$DV" ] && [ -x "$RESP" ] && [ -x "$FLOOR" ] || { echo "stream-conns.sh: build first ($build)" >&2; exit 2; }
[ -z "$other" ] || [ -x "$other" ] || { echo "stream-conns.sh: -D $other: not an executable" >&2; exit 2; }
max=0 min=""
for c in $conns; do
	[ "$c" -gt "$max" ] && max=$c
	[ -z "$min" ] || [ "$c" -lt "$min" ] && min=$c
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((max + 100)) ]; then
	echo "stream-conns.sh: -c $max needs about $((max + 100)) file descriptors; ulimit -n is $(ulimit -n)" >&2
	exit 2
fi
rt=()
[ -z "$nort" ] && chrt -f 1 true 2>/dev/null && rt=(chrt -f 1)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvconns.XXXXXX")
resp_pid=""
cleanup() {
	[ -n "$resp_pid" ] && kill "$resp_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

for i in $(seq 10000); do echo "www$((i % 100)).example A"; done >"$tmp/list"
"${rt[@]}" taskset -c 1 "$RESP" -p 0 --port-file "$tmp/udp" --tcp-port 0 \
	--tcp-port-file "$tmp/tcp" -q >"$tmp/resp.out" 2>&1 &
resp_pid=$!
for _ in $(seq 100); do [ -s "$tmp/tcp" ] && break; sleep 0.05; done
port=$(cat "$tmp/tcp")

# tcpstat: the host's listen queue overflows, TCP segments sent, connections opened
# (TcpActiveOpens: connect()s on this host, the client's on loopback) and ACKs sent by the
# delayed-ACK timer (TcpExtDelayedACKs: a segment whose ACK could not ride on data within
# the timeout, 40 ms at least) so far ("- - - -" without nstat).
tcpstat() {
	if command -v nstat >/dev/null; then
		nstat -az TcpExtListenOverflows TcpOutSegs TcpActiveOpens TcpExtDelayedACKs |
			awk '$1 == "TcpExtListenOverflows" { o = $2 } $1 == "TcpOutSegs" { s = $2 }
			     $1 == "TcpActiveOpens" { a = $2 } $1 == "TcpExtDelayedACKs" { d = $2 }
			     END { print o + 0, s + 0, a + 0, d + 0 }'
	else
		echo - - - -
	fi
}
delta() { [ "$1" = - ] && echo - || echo $(($2 - $1)); }
# deltas "O0 S0 A0 D0" "O1 S1 A1 D1": "overflows segments opens delayed-ACKs" during a run.
deltas() {
	local a=($1) b=($2)
	echo "$(delta "${a[0]}" "${b[0]}") $(delta "${a[1]}" "${b[1]}") $(delta "${a[2]}" "${b[2]}")" \
		"$(delta "${a[3]}" "${b[3]}")"
}

# dv NAME BIN CONNS [ARGS...]: one dnsvolley run.
dv() {
	local name=$1 bin=$2 c=$3 o0
	shift 3
	o0=$(tcpstat)
	${perf_out:+perf record -q -g -F 4000 -o "$perf_out" --} \
		/usr/bin/time -f "%U %S" -o "$tmp/time" "${rt[@]}" taskset -c 0 "$bin" -m tcp -s 127.0.0.1 \
		-p "$port" -d "$tmp/list" -l "${dv_secs:-$secs}" -t 2 -c "$c" --no-progress \
		--json "$tmp/dv.json" "$@" >"$tmp/dv.out" 2>&1 || true
	cp "$tmp/time" "$tmp/cpu.$name.$c"
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["passes"][0]["counters"]
	            ["completed"])' "$tmp/dv.json" >"$tmp/done.$name.$c" 2>/dev/null || echo 0 >"$tmp/done.$name.$c"
	python3 - "$tmp/dv.json" "$name" "$c" "$(cat "$tmp/time")" $(deltas "$o0" "$(tcpstat)") <<'P'
import json, sys
try:
    p = json.load(open(sys.argv[1]))["passes"][0]
except Exception:
    print(sys.argv[2], sys.argv[3], "FAILED"); sys.exit(0)
c = p["counters"]
u, s = (float(x) for x in sys.argv[4].split())
done = c.get("completed", 0)
per = lambda v: "%.2f" % (int(v) / done) if v != "-" and done else "-"
print("%s %s %d %.0f %.2f %d %.3f %s %d %s %s" % (sys.argv[2], sys.argv[3], done, p["qps"],
      (u + s) * 1e6 / done if done else 0, c.get("conn_opened", 0),
      p["latency"]["p50_ns"] / 1e6, sys.argv[5], c.get("conn_syn_retries", 0), per(sys.argv[6]),
      per(sys.argv[8])))
P
}

# fl CONNS: one bench/tcp-floor run (closed loop, -q twice -c): the kernel's floor for the same
# connections and window, in dv's columns (p50 and SYN retries "-"), then "steady" and the
# floor's CPU µs per query from the last connection up to the end of sending (no opening or
# closing in it).
fl() {
	local c=$1 o0 d
	o0=$(tcpstat)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "${rt[@]}" taskset -c 0 "$FLOOR" -p "$port" -c "$c" \
		-q $((2 * c)) -l "${dv_secs:-$secs}" -t 2000 >"$tmp/fl.out" 2>&1 || true
	d=($(deltas "$o0" "$(tcpstat)"))
	awk -v c="$c" -v t="$(cat "$tmp/time")" -v o="${d[0]}" -v sg="${d[1]}" -v da="${d[3]}" '
		/^Connections opened:/ { op = $3 }
		/^Queries completed:/ { done = $3 }
		/^Queries per second:/ { qps = $4 }
		/^Steady CPU per query/ { st = $6 }
		END { split(t, a, " "); printf "floor %s %d %.0f %.2f %s - %s - %s %s steady %s\n", c, done, qps,
			done ? (a[1] + a[2]) * 1e6 / done : 0, op, o,
			sg != "-" && done ? sprintf("%.2f", sg / done) : "-",
			da != "-" && done ? sprintf("%.2f", da / done) : "-", st == "" ? "-" : st }' "$tmp/fl.out"
}

# dp CONNS [ARGS...]: one dnsperf run.
dp() {
	local c=$1 o0 d
	shift
	o0=$(tcpstat)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "${rt[@]}" taskset -c 0 dnsperf -m tcp -s 127.0.0.1 \
		-p "$port" -d "$tmp/list" -l "$secs" -t 2 -c "$c" "$@" >"$tmp/dp.out" 2>&1 || true
	d=($(deltas "$o0" "$(tcpstat)"))
	echo "${d[2]}" >"$tmp/dp.opened"
	awk -v c="$c" -v t="$(cat "$tmp/time")" -v o="${d[0]}" -v sg="${d[1]}" -v op="${d[2]}" -v da="${d[3]}" '
		/Queries completed:/ { done = $3 }
		/Queries per second:/ { qps = $4 }
		/Average Latency/ && !avg { avg = $4 }
		END { split(t, a, " "); printf "dnsperf %s %d %.0f %.2f %s %.3f(avg) %s - %s %s\n", c, done, qps,
			done ? (a[1] + a[2]) * 1e6 / done : 0, op, avg * 1e3, o,
			sg != "-" && done ? sprintf("%.2f", sg / done) : "-",
			da != "-" && done ? sprintf("%.2f", da / done) : "-" }' "$tmp/dp.out"
}

# same_as_dnsperf CONNS ARGS...: dnsperf opens at most 256 connections whatever -c says; when
# it opened fewer than CONNS, dnsvolley with as many connections and the same ARGS (-q): the
# same work, as "dv-as-dnsperf".
same_as_dnsperf() {
	local c=$1 n
	shift
	n=$(cat "$tmp/dp.opened")
	[ "$n" != - ] && [ "$n" -gt 0 ] && [ "$n" -lt "$c" ] || return 0
	dv dv-as-dnsperf "$DV" "$n" "$@"
}

echo "# stream-conns.sh: TCP to dnsvolley-responder, client CPU 0, server CPU 1, -l $secs," \
	"${rt[*]:-no chrt (ordinary priority)}; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
if [ -n "$rounds" ]; then
	# one NAME C ARGS...: dnsvolley's CPU µs per completed query at -c C (dv's 5th field).
	one() {
		local name=$1 c=$2
		shift 2
		dv "$name" "$DV" "$c" -q $((2 * c)) "$@" | tee -a "$tmp/rounds.log" | awk '{ print $5 }'
	}
	# floor C: bench/tcp-floor's CPU µs per completed query at -c C, closed loop.
	floor() { fl "$1" | tee -a "$tmp/rounds.log" | awk '{ print $5 }'; }
	x() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", b / a }'; }
	echo "# ratio rounds: CPU µs per query at -c $max ÷ at -c $min: dnsvolley closed loop and paced at"
	echo "# -Q $rate, and bench/tcp-floor (the same connections and window with nothing but the system"
	echo "# calls) closed loop; last, dnsvolley ÷ floor at each -c (what dnsvolley adds per query)"
	echo "# (each run's line: tool conns completed qps cpu_us_per_query opened p50_ms listen_overflows syn_retries segs_per_query delayed_acks_per_query)"
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) = 1 ]; then
			s1=$(one closed "$min") s2=$(one closed "$max") f1=$(floor "$min") f2=$(floor "$max")
			p1=$(one paced "$min" -Q "$rate") p2=$(one paced "$max" -Q "$rate")
		else
			f2=$(floor "$max") f1=$(floor "$min") s2=$(one closed "$max") s1=$(one closed "$min")
			p2=$(one paced "$max" -Q "$rate") p1=$(one paced "$min" -Q "$rate")
		fi
		echo "round $r: closed $s1 -> $s2 µs/q ($(x "$s1" "$s2")), paced $p1 -> $p2 µs/q ($(x "$p1" "$p2"))," \
			"floor $f1 -> $f2 µs/q ($(x "$f1" "$f2")); dnsvolley/floor ($(x "$f1" "$s1")) ($(x "$f2" "$s2"))" |
			tee -a "$tmp/ratios"
	done
	cat "$tmp/rounds.log"
	python3 - "$tmp/ratios" "$min" "$max" <<'P'
import re, statistics, sys
r = [[float(v) for v in re.findall(r"\(([0-9.]+)x\)", line)] for line in open(sys.argv[1])]
m = lambda k: statistics.median(x[k] for x in r)
print("median over %d rounds: closed %.2fx, paced %.2fx, floor %.2fx; dnsvolley/floor %.2fx at -c %s, "
      "%.2fx at -c %s" % (len(r), m(0), m(1), m(2), m(3), sys.argv[2], m(4), sys.argv[3]))
P
	exit 0
fi
echo "# closed loop, -q twice -c: tool conns completed qps cpu_us_per_query opened p50_ms listen_overflows syn_retries segs_per_query delayed_acks_per_query"
for c in $conns; do
	perf_out=${perf:+$tmp/perf.$c} dv dnsvolley "$DV" "$c" -q $((2 * c))
	fl "$c"
	[ -z "$other" ] || dv dvother "$other" "$c" -q $((2 * c))
	dp "$c" -q $((2 * c))
	same_as_dnsperf "$c" -q $((2 * c))
done
if [ -n "$perf" ]; then
	echo "# client CPU split (perf, dnsvolley's closed-loop runs): µs per completed query"
	for c in $conns; do
		echo "-c $c:"
		"$top/bench/cpu-split.py" "$tmp/perf.$c" "$(cat "$tmp/done.dnsvolley.$c")" || true
	done
fi
echo "# paced at -Q $rate, -q twice -c: tool conns completed qps cpu_us_per_query opened p50_ms listen_overflows syn_retries segs_per_query delayed_acks_per_query"
for c in $conns; do
	dv dnsvolley "$DV" "$c" -q $((2 * c)) -Q "$rate"
	[ -z "$other" ] || dv dvother "$other" "$c" -q $((2 * c)) -Q "$rate"
	dp "$c" -q $((2 * c)) -Q "$rate"
	same_as_dnsperf "$c" -q $((2 * c)) -Q "$rate"
done
echo "# opening, -l 2 at -c $max, -q twice -c: tool conns completed qps cpu_us_per_query opened p50_ms listen_overflows syn_retries segs_per_query delayed_acks_per_query"
dv_secs=2 dv dnsvolley "$DV" "$max" -q $((2 * max))
dv_secs=2 dv dnsvolley "$DV" "$max" -q $((2 * max)) -Q "$rate"
# per_conn NAME BIN: CPU per connection, from -Q 1000 -l 2 at -c 16 and at -c max.
per_conn() {
	local name=$1 bin=$2
	dv_secs=2 dv "conn-$name" "$bin" 16 -q 32 -Q 1000 >/dev/null
	cp "$tmp/cpu.conn-$name.16" "$tmp/cpu.small"
	dv_secs=2 dv "conn-$name" "$bin" "$max" -q $((2 * max)) -Q 1000 >/dev/null
	awk -v n=$((max - 16)) -v who="$name" 'NR == FNR { a = $1 + $2; next }
		{ printf "%s: %.1f µs of client CPU per connection (%.3f s at -c 16, %.3f s at -c %d)\n",
		  who, ($1 + $2 - a) * 1e6 / n, a, $1 + $2, n + 16 }' "$tmp/cpu.small" "$tmp/cpu.conn-$name.$max"
}
if [ "$max" -gt 16 ]; then
	echo "# a connection's cost: -Q 1000 -l 2 (2,000 queries) at -c 16 and at -c $max"
	per_conn dnsvolley "$DV"
	[ -z "$other" ] || per_conn dvother "$other"
fi
