#!/usr/bin/env bash
# capacity-knot: capacity against a real server, knotd with one UDP worker: prints the
# qps of a saturated closed-loop run, the capacity found at 0.1% loss, and resperf mode's
# "Maximum throughput" beside Debian's resperf on the same server in the same run, with
# their ratios (issue 13 wants both within 10%). Meaningful only where knotd, not the
# generators, is the limit: on a 2-core machine knotd (140k qps closed loop) outruns
# resperf. Uses the integration tests' helpers.
# usage: bench/capacity-knot.sh [BUILD_DIR]
top_builddir=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$top_srcdir/tests/integration/lib.sh"
PATH=$PATH:/usr/sbin
command -v knotd >/dev/null || skip "knotd not installed (Debian package knot)"
command -v resperf >/dev/null || skip "resperf not installed (Debian package dnsperf)"
port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
mkdir -p "$TMP/knot"
printf 'd%s\n' $(seq 2000) | "$top_srcdir/tests/integration/servers/zone.sh" cap.test >"$TMP/knot/cap.test.zone"
cat >"$TMP/knot/knot.conf" <<K
server:
    rundir: "$TMP/knot"
    listen: 127.0.0.1@$port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
log:
  - target: stderr
    any: warning
database:
    storage: "$TMP/knot"
zone:
  - domain: cap.test
    file: "$TMP/knot/cap.test.zone"
K
# knotd on CPU 1, the generators on CPU 0 (as bench/streams.sh): neither takes the
# other's core, so a loss is knotd's, not a descheduled server's.
taskset -c 1 knotd -c "$TMP/knot/knot.conf" 2>"$TMP/knot.err" &
_pids+=("$!")
awk '{ printf "www.%s.cap.test A\n", $1 }' <(printf 'd%s\n' $(seq 2000)) >"$TMP/list"
for i in $(seq 100); do
	"$DV" --no-progress -s 127.0.0.1 -p "$port" -d "$TMP/list" -n 1 -t 0.2 >"$TMP/ready" 2>&1 &&
		[ "$(report_field "$TMP/ready" "Queries lost")" = 0 ] && break
	sleep 0.1
done
[ "$(report_field "$TMP/ready" "Queries lost")" = 0 ] || fail "knotd did not answer: $(cat "$TMP/knot.err")"

# Saturated closed loop: 3 s, 200 in flight.
taskset -c 0 "$DV" --no-progress -s 127.0.0.1 -p "$port" -d "$TMP/list" -l 3 -q 200 >"$TMP/closed" 2>&1
closed=$(report_field "$TMP/closed" "Queries per second" | cut -d. -f1)
echo "closed loop: $closed qps"
taskset -c 0 "$DV" capacity --no-progress -s 127.0.0.1 -p "$port" -d "$TMP/list" --step 1 --settle 0.3 \
	--from $((closed / 4)) >"$TMP/cap" 2>&1 || fail "capacity failed: $(cat "$TMP/cap")"
cat "$TMP/cap"
if grep -q '^Capacity: generator-bound' "$TMP/cap"; then
	echo "generator-bound on this machine now: no capacity figure"
else
	cap=$(sed -n 's/^Capacity: \([0-9][0-9]*\) qps.*/\1/p' "$TMP/cap")
	[ -n "$cap" ] || fail "no capacity: $(cat "$TMP/cap")"
	echo "capacity / closed loop = $((cap * 1000 / closed)) / 1000"
fi

# resperf mode against resperf: a ramp to twice the closed-loop rate over 6 s.
awk '{ for (i = 0; i < 200; i++) print }' "$TMP/list" >"$TMP/big"
m=$((closed * 2))
(cd "$TMP" && taskset -c 0 "$DV" resperf -s 127.0.0.1 -p "$port" -d "$TMP/big" -m "$m" -r 6 -t 1 -P dv.plot) >"$TMP/dvr" 2>&1 ||
	fail "dnsvolley resperf failed: $(cat "$TMP/dvr")"
(cd "$TMP" && taskset -c 0 resperf -s 127.0.0.1 -p "$port" -d "$TMP/big" -m "$m" -r 6 -t 1 -P rp.plot) >"$TMP/rp" 2>&1 ||
	fail "resperf failed: $(cat "$TMP/rp")"
mt() { sed -n 's/.*Maximum throughput: *\([0-9]*\).*/\1/p' "$1"; }
dv=$(mt "$TMP/dvr") rp=$(mt "$TMP/rp")
echo "Maximum throughput: dnsvolley $dv, resperf $rp"
echo "resperf mode / resperf = $((dv * 1000 / rp)) / 1000"
