#!/usr/bin/env bash
# streams.sh: dnsvolley -m tcp|dot|doh against Debian's dnsperf, same run, interleaved.
#
# usage: bench/streams.sh [-B BUILDDIR] [-r ROUNDS] [-l SECONDS] [-c CONNS] [-q WINDOW]
#                         [-m "tcp dot doh"] [-S CONNS] [-D OTHER_DNSVOLLEY] [-R]
# Starts dnsvolley-responder (TCP and DoT listeners) and, for doh, unbound with an
# https-port (local data only), pinned to CPU 1 with taskset; runs the clients pinned to
# CPU 0, dnsvolley then dnsperf then dnsvolley's own UDP against the same responder,
# ROUNDS times per transport, each run -l SECONDS with -c CONNS connections and a
# window of -q WINDOW. Prints per run: completed, queries/s, client CPU (user+system,
# from /usr/bin/time) and CPU µs per completed query; then per transport the medians
# and the ratios dnsvolley / dnsperf (qps, CPU per query) and dnsvolley TCP CPU / its
# own UDP CPU per query. Needs dnsperf, taskset, openssl (and unbound for doh).
# -S CONNS: instead, the scale part: dnsvolley alone (-T 2) holding CONNS connections
# (and 16, the baseline) over tcp and dot to the responder, each carrying queries
# (-q 2 x CONNS, -l SECONDS: give 30, -t 60); prints per run the answered and lost queries, the
# connections opened and failed, the peak RSS (/usr/bin/time) and the RSS held once
# every handshake is done (the last of the VmRSS samples taken every 0.5 s), then
# memory per connection = (RSS at CONNS - RSS at 16) / (CONNS - 16), peak and held.
# Above 25,000 connections the sources spread over 127.0.0.0/8 (--client-range).
# DoH: unbound (one thread, pinned) is set up to serve all it can on its core: streams per
# connection and TCP slots above what -q and -c ask, verbosity 0. After each DoH run a
# "# server" line gives unbound's share of the wall time running on its core and waiting
# for it (/proc/PID/schedstat: a busy machine shows as waiting) and its CPU µs per query;
# the medians section repeats them. When unbound runs (or waits) nearly all the time
# under both tools, it is the limit and the qps ratio measures unbound, not the clients.
# -R: the DoH part against the responder's own DoH listener (--https-port, HTTP/2 over TLS,
# --https-record-each: dnsperf stalls on a server that writes several responses at once)
# instead of unbound: a server that costs less per query than the clients, so the DoH
# figures compare the clients (the "# server" lines then give the responder's share,
# summed over its threads).
# -D BIN: also run BIN (e.g. a dnsvolley built before a change) in each round of every
# mode, as dvother-MODE, for a before/after comparison in the same interleaved run.
# The figures in doc/performance.md came from this script.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
rounds=3 secs=3 conns=4 window=100 modes="tcp dot doh" scale="" other="" rdoh=""
while getopts "B:r:l:c:q:m:S:D:R" o; do
	case $o in
	B) build=$(cd "$OPTARG" && pwd) ;;
	r) rounds=$OPTARG ;;
	l) secs=$OPTARG ;;
	c) conns=$OPTARG ;;
	q) window=$OPTARG ;;
	m) modes=$OPTARG ;;
	S) scale=$OPTARG ;;
	D) other=$OPTARG ;;
	R) rdoh=1 ;;
	*) echo "usage: bench/streams.sh [-B DIR] [-r N] [-l S] [-c N] [-q N] [-m MODES] [-S CONNS] [-D BIN] [-R]" >&2; exit 2 ;;
	esac
done
for t in dnsperf taskset openssl /usr/bin/time; do
	command -v "$t" >/dev/null || { echo "streams.sh: needs $t" >&2; exit 2; }
done
DV="$build/dnsvolley" RESP="$build/dnsvolley-responder"
[ -x "$DV" ] && [ -x "$RESP" ] || { echo "streams.sh: build first ($build)" >&2; exit 2; }
[ -z "$other" ] || [ -x "$other" ] || { echo "streams.sh: -D $other: not an executable" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvstreams.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" -subj /CN=bench.test 2>/dev/null
for i in $(seq 10000); do echo "www$((i % 100)).example A"; done >"$tmp/list"

taskset -c 1 "$RESP" -p 0 --port-file "$tmp/udp" --tcp-port 0 --tcp-port-file "$tmp/tcp" \
	--tls-port 0 --tls-port-file "$tmp/tls" --https-port 0 --https-port-file "$tmp/https" \
	--tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem" ${rdoh:+--https-record-each} \
	>"$tmp/resp.out" 2>&1 &
pids+=("$!")
resp_pid=$!
for _ in $(seq 100); do [ -s "$tmp/udp" ] && break; sleep 0.05; done

doh_port="" unbound_pid="" srv_pid=""
start_unbound() {
	command -v unbound >/dev/null || return 1
	doh_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$tmp/unbound.conf" <<C
server:
	interface: 127.0.0.1@$doh_port
	https-port: $doh_port
	tls-service-key: "$tmp/key.pem"
	tls-service-pem: "$tmp/cert.pem"
	num-threads: 1
	http-max-streams: $((window > 100 ? window : 100))
	incoming-num-tcp: $((conns + 10))
	verbosity: 0
	do-ip6: no
	username: ""
	chroot: ""
	directory: "$tmp"
	pidfile: "$tmp/unbound.pid"
	logfile: "$tmp/unbound.log"
	use-syslog: no
	do-daemonize: no
	access-control: 127.0.0.0/8 allow
	module-config: "iterator"
	local-zone: "example." static
C
	for i in $(seq 0 99); do echo "	local-data: \"www$i.example. 3600 IN A 192.0.2.1\""; done >>"$tmp/unbound.conf"
	taskset -c 1 unbound -d -c "$tmp/unbound.conf" >"$tmp/unbound.out" 2>&1 &
	pids+=("$!")
	unbound_pid=$!
	sleep 1
}

# sched PID: its time running and waiting for a CPU (ns), summed over its threads.
sched() {
	cat /proc/"$1"/task/*/schedstat | awk '{ r += $1; w += $2 } END { printf "%.0f %.0f\n", r, w }'
}

# srv_mark; ...; srv_note NAME: the server's (srv_pid) share of the wall time running and
# waiting for its CPU, and its CPU µs per completed query, over NAME's last run.
srv_mark() {
	[ -n "$srv_pid" ] || return 0
	read -r srv_run0 srv_wait0 < <(sched "$srv_pid")
	srv_t0=$(date +%s%N)
}
srv_note() {
	[ -n "$srv_pid" ] || return 0
	local r1 w1 t1 n
	read -r r1 w1 < <(sched "$srv_pid")
	t1=$(date +%s%N)
	n=$(awk -v n="$1" '$1 == n { c = $2 } END { print c + 0 }' "$tmp/res")
	awk -v n="$1" -v r=$((r1 - srv_run0)) -v w=$((w1 - srv_wait0)) -v t=$((t1 - srv_t0)) \
		-v q="$n" 'BEGIN { printf "# server %s busy %.2f waiting %.2f us_per_query %.3f\n",
			n, r / t, w / t, (q > 0 ? r / 1e3 / q : 0) }' | tee -a "$tmp/srv"
}

# run NAME CMD...: one pinned client run; prints "NAME completed qps cpu_s us_per_query".
run() {
	local name=$1 out="$tmp/run.out"
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/time" taskset -c 0 "$@" >"$out" 2>&1 || true
	local done qps cpu
	done=$(awk -F: '/Queries completed:/ { split($2, a, " "); print a[1]; exit }' "$out")
	qps=$(awk -F: '/Queries per second:/ { split($2, a, " "); print a[1]; exit }' "$out")
	cpu=$(awk '{ print $1 + $2 }' "$tmp/time")
	if [ -z "$done" ] || [ "$done" = 0 ]; then
		echo "$name FAILED: $(tail -3 "$out" | tr '\n' ' ')" >&2
		echo "$name 0 0 $cpu 0"
		return
	fi
	echo "$name $done $qps $cpu $(awk -v c="$cpu" -v n="$done" 'BEGIN { printf "%.3f", c * 1e6 / n }')"
}

# hold MODE CONNS: one scale run; prints "MODE CONNS answered lost opened failed peak_kb held_kb".
hold() {
	local mode=$1 n=$2 port spread=() tp p held=0 v
	port=$(cat "$tmp/tcp")
	[ "$mode" = dot ] && port=$(cat "$tmp/tls")
	[ "$n" -gt 25000 ] && spread=(--client-range 127.0.0.0/8)
	/usr/bin/time -f "%M" -o "$tmp/time" "$DV" -m "$mode" -s 127.0.0.1 -p "$port" -d "$tmp/list" \
		-T 2 -c "$n" -q $((2 * n)) -l "$secs" -t 60 --no-progress "${spread[@]}" \
		--json "$tmp/hold.json" >"$tmp/hold.out" 2>&1 &
	tp=$!
	sleep 0.2
	p=$(pgrep -P "$tp" | head -1)
	while [ -n "$p" ] && v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null); do
		[ -n "$v" ] && held=$v
		sleep 0.5
	done
	wait "$tp" || true
	python3 - "$tmp/hold.json" "$mode" "$n" "$(tail -1 "$tmp/time")" "$held" <<'P2'
import json, sys
c = json.load(open(sys.argv[1]))["passes"][0]["counters"]
print(sys.argv[2], sys.argv[3], c.get("completed", 0), c.get("lost", 0), c.get("conn_opened", 0),
      c.get("conn_failed", 0), sys.argv[4], sys.argv[5])
P2
}

if [ -n "$scale" ]; then
	echo "# streams.sh -S $scale: mode conns answered lost opened failed peak_rss_kb held_rss_kb"
	for mode in $modes; do
		[ "$mode" = doh ] && continue
		hold "$mode" 16 | tee -a "$tmp/scale"
		hold "$mode" "$scale" | tee -a "$tmp/scale"
	done
	echo "# memory per connection (KB): (RSS at $scale - RSS at 16) / $((scale - 16))"
	awk -v n="$scale" '$2 == 16 { p[$1] = $7; h[$1] = $8 }
		$2 == n { printf "%s: peak %.2f KB, held %.2f KB\n", $1, ($7 - p[$1]) / (n - 16), ($8 - h[$1]) / (n - 16) }' "$tmp/scale"
	exit 0
fi

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# streams.sh: -l $secs -c $conns -q $window, $rounds rounds, client CPU 0, server CPU 1"
echo "# run completed qps cpu_s us_per_query"
for mode in $modes; do
	srv_pid=""
	case $mode in
	tcp) port=$(cat "$tmp/tcp") dv_extra=() dp_extra=() ;;
	dot) port=$(cat "$tmp/tls") dv_extra=() dp_extra=() ;;
	doh)
		if [ -n "$rdoh" ]; then
			doh_port=$(cat "$tmp/https") srv_pid=$resp_pid
			echo "# doh: against dnsvolley-responder's DoH listener (-R)"
		else
			[ -n "$doh_port" ] || start_unbound || { echo "# doh: no unbound, skipped"; continue; }
			srv_pid=$unbound_pid
		fi
		port=$doh_port dv_extra=() dp_extra=(-O "doh-uri=https://127.0.0.1:$doh_port/dns-query")
		;;
	esac
	for r in $(seq "$rounds"); do
		srv_mark
		run "dnsvolley-$mode" "$DV" -m "$mode" -s 127.0.0.1 -p "$port" -d "$tmp/list" -l "$secs" \
			-c "$conns" -q "$window" -t 2 --no-progress "${dv_extra[@]}" | tee -a "$tmp/res"
		srv_note "dnsvolley-$mode"
		if [ -n "$other" ]; then
			srv_mark
			run "dvother-$mode" "$other" -m "$mode" -s 127.0.0.1 -p "$port" -d "$tmp/list" \
				-l "$secs" -c "$conns" -q "$window" -t 2 --no-progress "${dv_extra[@]}" |
				tee -a "$tmp/res"
			srv_note "dvother-$mode"
		fi
		srv_mark
		run "dnsperf-$mode" dnsperf -m "$mode" -s 127.0.0.1 -p "$port" -d "$tmp/list" -l "$secs" \
			-c "$conns" -q "$window" -t 2 "${dp_extra[@]}" | tee -a "$tmp/res"
		srv_note "dnsperf-$mode"
		[ "$mode" = doh ] || run "dnsvolley-udp" "$DV" -s 127.0.0.1 -p "$(cat "$tmp/udp")" \
			-d "$tmp/list" -l "$secs" -c "$conns" -q "$window" -t 2 --no-progress |
			tee -a "$tmp/res"
	done
done
echo "# medians: run qps us_per_query"
for name in $(awk '{ print $1 }' "$tmp/res" | sort -u); do
	q=$(awk -v n="$name" '$1 == n { print $3 }' "$tmp/res" | median)
	u=$(awk -v n="$name" '$1 == n { print $5 }' "$tmp/res" | median)
	echo "$name $q $u" | tee -a "$tmp/med"
done
if [ -s "$tmp/srv" ]; then
	echo "# server medians: run busy waiting us_per_query"
	for name in $(awk '{ print $3 }' "$tmp/srv" | sort -u); do
		echo "$name $(for f in 5 7 9; do
			awk -v n="$name" -v f=$f '$3 == n { print $f }' "$tmp/srv" | median | tr '\n' ' '
		done)"
	done
fi
echo "# ratios"
for mode in $modes; do
	grep -q "^dnsvolley-$mode " "$tmp/med" || continue
	awk -v m="$mode" '
		{ q[$1] = $2; u[$1] = $3 }
		END {
			v = "dnsvolley-" m; p = "dnsperf-" m
			if (q[p] > 0 && u[p] > 0)
				printf "%s: qps dnsvolley/dnsperf %.2f, CPU per query dnsvolley/dnsperf %.2f\n", m, q[v] / q[p], u[v] / u[p]
			o = "dvother-" m
			if (q[o] > 0 && u[o] > 0)
				printf "%s: qps dnsvolley/-D binary %.2f, CPU per query dnsvolley/-D binary %.2f\n", m, q[v] / q[o], u[v] / u[o]
			if (m != "doh" && u["dnsvolley-udp"] > 0)
				printf "%s: dnsvolley CPU per query %s / own UDP %.2f\n", m, m, u[v] / u["dnsvolley-udp"]
		}' "$tmp/med"
done
