#!/usr/bin/env bash
# replay-capture: does a replay at original timing hold the captured rate? A capture
# of RATE q/s for SECONDS s (default 10,000 q/s, 10 s, 100 clients; written by
# tests/helpers/write-capture.py) is replayed with --timing original against the
# bundled responder; prints the scheduled and achieved rates, their difference and
# the lag behind the schedule. Issue 17 asks for the rate within 0.1% over 10 s.
# Usage: bench/replay-capture.sh [BUILDDIR] [RATE] [SECONDS] [CLIENTS]
#        (exit 1 when the achieved rate is off by more than 0.1%)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
rate=${2:-10000}
secs=${3:-10}
clients=${4:-100}
tmp=$(mktemp -d)
resp=""
trap '[ -n "$resp" ] && kill "$resp" 2>/dev/null; rm -rf "$tmp"' EXIT
python3 "$here/../tests/helpers/write-capture.py" --clients "$clients" --duration "$secs" \
	--queries $((rate * secs)) "$tmp/cap.pcap"
"$build/dnsvolley-responder" -a 127.0.0.1 -p 0 --port-file "$tmp/port" -q >/dev/null &
resp=$!
for i in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.025; done
"$build/dnsvolley" --no-progress -s 127.0.0.1 -p "$(cat "$tmp/port")" -d "$tmp/cap.pcap" \
	--timing original -q 10000 -t 1 >"$tmp/report"
grep -E "Queries (sent|completed)|Replay input|Clients replayed|Captured rate|Achieved rate|Lag behind|Generator CPU" "$tmp/report"
sched=$(awk '/Captured rate/ { print $6 }' "$tmp/report")
achieved=$(awk '/Achieved rate/ { print $4 }' "$tmp/report")
awk -v s="$sched" -v a="$achieved" 'BEGIN {
	d = 100 * (a - s) / s
	printf "replay-capture: scheduled %.3f q/s, achieved %.3f q/s, difference %+.4f%%\n", s, a, d
	exit (d < -0.1 || d > 0.1)
}'
