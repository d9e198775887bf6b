#!/usr/bin/env bash
# capacity-knot: capacity against a real server, knotd with one UDP worker. For two setups
# of knotd's UDP socket, stock (net.core.rmem_default: 256 queries) and tuned (RCVBUF bytes,
# set from outside by bench/rcvbuf.py), prints the qps of a saturated closed-loop run
# (-q 200) and, right after it, the capacity found at 0.1% loss, their ratio, the queries
# knotd's socket dropped during the search and how long knotd's UDP thread ran and waited
# runnable meanwhile (/proc/PID/task/TID/schedstat). Then resperf mode's "Maximum
# throughput" beside Debian's resperf, ROUNDS rounds interleaved: medians and spread.
# knotd (every thread, its UDP worker too) runs on CPU 1 at normal priority (saturated at
# SCHED_FIFO, the kernel's RT throttling stopped it for 50 ms of every second:
# doc/methodology.md), the generators on CPU 0, dnsvolley at SCHED_FIFO 1 when allowed (no
# other process takes its core); resperf and resperf mode run at normal priority (resperf
# busy-waits: at SCHED_FIFO its sender would starve its own receiver on one core).
# doc/performance.md ("Paced mode and capacity search") has the figures and why open-loop
# capacity and closed-loop qps differ.
# Last, the same comparisons where knotd's own work per query is the limit at a rate one
# core of generator offers with room: NXDOMAIN answers with NSEC3 proofs (-D) from a zone
# knotd signs with ITER NSEC3 iterations (default 100: about 80,000 qps on this machine).
# usage: [RCVBUF=1048576] [ROUNDS=3] [ITER=100] [NSEC3_ONLY=1] bench/capacity-knot.sh [BUILD_DIR]
#   (NSEC3_ONLY=1: only the NSEC3 setup)
top_builddir=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
. "$top_srcdir/tests/integration/lib.sh"
PATH=$PATH:/usr/sbin
rcvbuf=${RCVBUF:-1048576}
rounds=${ROUNDS:-3}
iter=${ITER:-100}
command -v knotd >/dev/null || skip "knotd not installed (Debian package knot)"
command -v resperf >/dev/null || skip "resperf not installed (Debian package dnsperf)"
rt=$(realtime_prefix)
echo "$(date -u '+%F %H:%M') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg), knotd $(knotd --version | awk '{print $NF}'), generator priority: ${rt:-normal (no SCHED_FIFO here)}, knotd normal"
port=$(free_port)
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
policy:
  - id: costly
    nsec3: on
    nsec3-iterations: $iter
    nsec3-salt-length: 8
zone:
  - domain: cap.test
    file: "$TMP/knot/cap.test.zone"
  - domain: nsec3.test
    file: "$TMP/knot/nsec3.test.zone"
    dnssec-signing: on
    dnssec-policy: costly
K
printf 'd%s\n' $(seq 2000) | "$top_srcdir/tests/integration/servers/zone.sh" nsec3.test >"$TMP/knot/nsec3.test.zone"
taskset -c 1 knotd -c "$TMP/knot/knot.conf" 2>"$TMP/knot.err" &
kpid=$!
_pids+=("$kpid")
# gen [capacity] ARGS...: dnsvolley on CPU 0 against knotd, list $TMP/list, then $extra.
extra=()
gen() {
	local sub=()
	[ "$1" = capacity ] && sub=(capacity) && shift
	taskset -c 0 $rt "$DV" "${sub[@]}" --no-progress -s 127.0.0.1 -p "$port" -d "$TMP/list" "${extra[@]}" "$@"
}
awk '{ printf "www.%s.cap.test A\n", $1 }' <(printf 'd%s\n' $(seq 2000)) >"$TMP/list"
for i in $(seq 100); do
	gen -n 1 -t 0.2 >"$TMP/ready" 2>&1 && [ "$(report_field "$TMP/ready" "Queries lost")" = 0 ] && break
	sleep 0.1
done
[ "$(report_field "$TMP/ready" "Queries lost")" = 0 ] || fail "knotd did not answer: $(cat "$TMP/knot.err")"
# knotd pins each UDP worker thread to a CPU of its own choosing (worker i on CPU i): its
# one UDP worker lands on CPU 0, the generators' core, whatever taskset said at start.
# Move every thread to CPU 1 now that they all exist.
taskset -a -p -c 1 "$kpid" >/dev/null || fail "cannot pin knotd's threads to CPU 1"
for t in /proc/$kpid/task/*; do
	[ "$(taskset -p -c "${t##*/}" | sed 's/.*: *//')" = 1 ] || fail "knotd thread ${t##*/} not on CPU 1"
done
# knotd's UDP thread: the one that ran most during a closed-loop second (not the one that
# has run longest: signing nsec3.test at start costs a background worker more than that).
runs() { for t in /proc/$kpid/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat")"; done; }
runs >"$TMP/runs0"
gen -l 1 -q 200 >/dev/null 2>&1
ktid=$(runs | awk 'NR == FNR { r0[$1] = $2; next } { print $2 - r0[$1], $1 }' "$TMP/runs0" - |
	sort -n | tail -1 | cut -d' ' -f2)
drops() { awk -v p="$(printf ':%04X' "$port")" 'substr($2, length($2) - 4) == p { d += $NF } END { print d + 0 }' /proc/net/udp; }
sched() { cut -d' ' -f1-2 "/proc/$kpid/task/$ktid/schedstat"; }
rb() { ss -u -a -m -n "sport = :$port" | sed -n 's/.*rb\([0-9]*\).*/\1/p' | head -1; }

# setup NAME: closed loop, then the capacity search, on knotd's socket as it is now.
setup() {
	local closed cap d0 s0 s1 what
	gen -l 3 -q 200 >"$TMP/closed" 2>&1
	closed=$(report_field "$TMP/closed" "Queries per second" | cut -d. -f1)
	d0=$(drops)
	read -ra s0 < <(sched)
	gen capacity --step 1 --settle 0.3 --from $((closed / 2)) --factor 1.15 >"$TMP/cap" 2>&1 ||
		fail "capacity failed: $(cat "$TMP/cap")"
	read -ra s1 < <(sched)
	grep '^\[Capacity\] step' "$TMP/cap" | sed 's/^\[Capacity\] /  /'
	cap=$(sed -n 's/^Capacity: \([0-9][0-9]*\) qps.*/\1/p' "$TMP/cap")
	if [ -n "$cap" ]; then
		what="capacity $cap qps, capacity / closed loop = $(awk -v a="$cap" -v b="$closed" 'BEGIN { printf "%.2f", a / b }')"
	else
		cap=$(sed -n 's/.*at least \([0-9]*\) qps.*/\1/p' "$TMP/cap")
		what="generator-bound: at least ${cap:-0} qps, at least $(awk -v a="${cap:-0}" -v b="$closed" 'BEGIN { printf "%.2f", a / b }') of the closed loop (no server figure)"
	fi
	echo "$1 (knotd SO_RCVBUF $(rb) bytes): closed loop $closed qps; $what; knotd's socket dropped $(($(drops) - d0)) during the search, its UDP thread ran $(((s1[0] - s0[0]) / 1000000)) ms and waited runnable $(((s1[1] - s0[1]) / 1000000)) ms"
}

# resperf mode against resperf: a ramp to twice the closed-loop rate over 6 s, interleaved.
mt() { sed -n 's/.*Maximum throughput: *\([0-9]*\).*/\1/p' "$1"; }
resperf_rounds() {
	local m r
	awk '{ for (i = 0; i < 1000; i++) print }' "$TMP/list" >"$TMP/big" # 2M: a 6 s ramp to 600k
	m=$(($(report_field "$TMP/closed" "Queries per second" | cut -d. -f1) * 2))
	for r in $(seq "$rounds"); do
		(cd "$TMP" && taskset -c 0 "$DV" resperf -s 127.0.0.1 -p "$port" -d "$TMP/big" "${extra[@]}" -m "$m" -r 6 -t 1 -P dv.plot) >"$TMP/dvr" 2>&1 ||
			fail "dnsvolley resperf failed: $(cat "$TMP/dvr")"
		(cd "$TMP" && taskset -c 0 resperf -s 127.0.0.1 -p "$port" -d "$TMP/big" "${extra[@]}" -m "$m" -r 6 -t 1 -P rp.plot) >"$TMP/rp" 2>&1 ||
			fail "resperf failed: $(cat "$TMP/rp")"
		echo "$(mt "$TMP/dvr") $(mt "$TMP/rp")"
	done >"$TMP/rounds"
	awk -v n="$rounds" -v what="$1" '
function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
{ d[NR] = $1; p[NR] = $2; q[NR] = $2 > 0 ? $1 / $2 : 0; line = line sprintf(" %d/%d", $1, $2) }
END {
	printf "%s: resperf mode / resperf, %d rounds (dnsvolley/resperf qps):%s\n", what, n, line
	md = med(d, NR); mp = med(p, NR); mq = med(q, NR)
	printf "%s: Maximum throughput, median (min-max): resperf mode %d (%d-%d), resperf %d (%d-%d); ratio %.2f (%.2f-%.2f)\n",
		what, md, d[1], d[NR], mp, p[1], p[NR], mq, q[1], q[NR]
}' "$TMP/rounds"
}

# tune: knotd's socket receive buffer to RCVBUF bytes (bench/rcvbuf.py); its message
# on stdout when that fails (it runs in $(...): the caller sets tuned=1).
tuned=""
tune() { python3 "$top_srcdir/bench/rcvbuf.py" "$kpid" "$port" "$rcvbuf" 2>&1; }
if [ -z "${NSEC3_ONLY:-}" ]; then
	setup stock
	resperf_rounds stock
	if got=$(tune); then
		tuned=1
		setup "tuned (RCVBUF=$rcvbuf)"
	else
		echo "tuned: not run: $got"
	fi
fi

# knotd's own work the limit: NXDOMAIN with NSEC3 proofs, each name hashed ITER + 1 times
# for each proof record. Knot warns that any ITER above 0 is costly: that is the point.
awk '{ printf "nx%s.nsec3.test A\n", $1 }' <(printf 'd%s\n' $(seq 2000)) >"$TMP/list"
extra=(-D)
# On the tuned buffer: the open-loop search then measures knotd's work, not how its
# stock 256-query socket rides out its short stalls.
if [ -z "$tuned" ]; then
	got=$(tune) || fail "cannot set knotd's receive buffer: $got"
fi
gen -n 1 -t 1 >"$TMP/nx" 2>&1
grep -q "NXDOMAIN 2000 (100.00%)" "$TMP/nx" || fail "nsec3.test: not 2,000 NXDOMAIN: $(cat "$TMP/nx")"
setup "nsec3 (NXDOMAIN, NSEC3 $iter iterations, DO set)"
resperf_rounds "nsec3 ($iter iterations)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
kill "$kpid" 2>/dev/null || true
wait "$kpid" 2>/dev/null || true
