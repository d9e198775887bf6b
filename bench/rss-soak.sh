#!/usr/bin/env bash
# rss-soak: memory is bounded by the window and the list, not by the run's length.
# Peak RSS (ru_maxrss = VmHWM) of dnsvolley for a SHORT and a LONG run at the same
# rate against the bundled responder; prints both and their ratio, exits 1 when the
# long run's peak is more than MAX_PCT percent above the short one's.
# Usage: bench/rss-soak.sh [BUILDDIR] (env: SHORT_S=10 LONG_S=120 QPS=20000 MAX_PCT=5)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
SHORT_S=${SHORT_S:-10}
LONG_S=${LONG_S:-120}
QPS=${QPS:-20000}
MAX_PCT=${MAX_PCT:-5}
DV="$build/dnsvolley"
MAXRSS="$build/tests/helpers/maxrss"
[ -x "$MAXRSS" ] || make -C "$build" -s tests/helpers/maxrss
tmp=$(mktemp -d)
"$build/dnsvolley-responder" -a 127.0.0.1 -p 0 --port-file "$tmp/port" -q >"$tmp/resp" 2>&1 &
rpid=$!
trap 'kill $rpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.025; done
port=$(cat "$tmp/port")
run() { # SECONDS -> peak KiB
	"$MAXRSS" "$tmp/rss" timeout $(($1 + 60)) "$DV" --no-progress -s 127.0.0.1 -p "$port" \
		-d "$top/querylists/soa.txt" -Q "$QPS" -l "$1" -c 16 -q 1000 -S 1 >"$tmp/out.$1" 2>&1 ||
		{ cat "$tmp/out.$1" >&2; exit 2; }
	cat "$tmp/rss"
}
short=$(run "$SHORT_S")
long=$(run "$LONG_S")
sent_short=$(awk '/Queries sent:/ { print $3 }' "$tmp/out.$SHORT_S")
sent_long=$(awk '/Queries sent:/ { print $3 }' "$tmp/out.$LONG_S")
pct=$(awk -v a="$short" -v b="$long" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')
echo "rss-soak: ${SHORT_S} s run: peak RSS ${short} KiB (${sent_short} queries)"
echo "rss-soak: ${LONG_S} s run: peak RSS ${long} KiB (${sent_long} queries)"
echo "rss-soak: long vs short: ${pct}% (limit ${MAX_PCT}%)"
awk -v p="$pct" -v m="$MAX_PCT" 'BEGIN { exit (p > m) ? 1 : 0 }'
