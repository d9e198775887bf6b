#!/usr/bin/env bash
# xdp: dnsvolley --xdp (AF_XDP, doc/xdp.md) in scripts/lab's namespace lab. Against knotd's
# XDP listener and against the responder answering in XDP (dnsvolley-responder --xdp),
# sent, completed and lost are exact against the server's own counters (knotd's
# mod-stats udp4-xdp and udp6-xdp; the responder's xdp-* counters), closed loop, paced
# and over IPv6; a target that drops a share and answers another with garbage, and a
# silent one, give exact counts and an honest exit; against a responder with every UDP
# fault at once, --xdp counts exactly what the kernel UDP path counts; a cold/hot study and a capacity search run unchanged over XDP. Without
# privileges, on a busy interface, or with more threads than queues: one line saying
# which, no report, the setup error's status, and no XDP program left behind (also
# after dnsvolley is killed).
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
grep -q '^#define HAVE_XDP 1' "$top_builddir/config.h" ||
	skip "built without AF_XDP (configure found no libxdp, libbpf or clang; scripts/packages.txt)"

# Usage errors (status 2, nothing attached): --xdp with a stream mode, --tc-tcp, the wire clock.
for bad in "-m tcp" "--tc-tcp" "--clock wire"; do
	rc=0
	# shellcheck disable=SC2086 # the flags are word-split on purpose
	"$DV" --no-progress --xdp lo -s 127.0.0.1 -d "$top_srcdir/querylists/soa.txt" $bad \
		>"$TMP/u.out" 2>&1 || rc=$?
	assert_eq "--xdp with $bad: exit" 2 "$rc"
	grep -q -- "--xdp\|--clock wire" "$TMP/u.out" || fail "--xdp with $bad: $(cat "$TMP/u.out")"
done

[ "$(id -u)" = 0 ] || skip_lacks "the lab needs root (network namespaces, XDP)"
command -v knotd >/dev/null || skip "knotd not installed (scripts/packages.txt)"

head -2000 "$top_srcdir/querylists/www-a.txt" >"$TMP/list.txt"
chmod 755 "$TMP" # the unprivileged run (5.) reads the list
field() { report_field "$1" "$2"; }
# total FILE LABEL: a report field summed over every pass in FILE.
total() { awk -v k="$2:" '{ sub(/^ +/, "") } index($0, k) == 1 { sub(/^[^:]*: */, ""); s += $1 } END { print s + 0 }' "$1"; }
out() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
xdpstat() { awk -F' = ' '/udp4-xdp/ { print $2 }' "$1"; }
# -t 5: no stall of a busy machine turns an answer late; the hostile runs set their own.
DVX="$DV --no-progress -d $TMP/list.txt -t 5"

# hostile_counts WHAT NAME: a 2,000-query pass against the responder's program with
# --drop-every/--garbage-every (report $TMP/NAME, its counters $TMP/NAME.out): exit 0, and
# completed, malformed and lost exactly as the program's counters say.
hostile_counts() {
	local what=$1 r="$TMP/$2" dropped garbage
	dropped=$(out "$r.out" xdp-dropped) garbage=$(out "$r.out" xdp-garbage)
	assert_eq "$what: exit" 0 "$(cat "$r.rc")"
	assert_eq "$what: sent" 2000 "$(field "$r" "Queries sent")"
	assert_eq "$what: completed = answered" "$(out "$r.out" xdp-answered)" \
		"$(field "$r" "Queries completed")"
	assert_eq "$what: malformed = garbage" "$garbage" "$(field "$r" "Malformed answers")"
	assert_eq "$what: lost = dropped + garbage" $((dropped + garbage)) "$(field "$r" "Queries lost")"
	assert_ge "$what: some dropped" 1 "$dropped"
	assert_ge "$what: some garbage" 1 "$garbage"
}

# 1. knotd's XDP listener: closed loop (3 runs through the list) and paced (-Q 20000):
# every query sent was answered, and knotd's XDP listener counted each one.
cat >"$TMP/knotd" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -n 3 -c 4 -q 100 >"$TMP/k1" 2>&1 || exit 10
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -n 1 -c 2 -q 100 -Q 20000 >"$TMP/k2" 2>&1 || exit 11
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER6" -n 1 -c 2 -q 100 >"$TMP/k3" 2>&1 || exit 13
\$LAB_KNOTC stats mod-stats.request-protocol >"$TMP/kstats" || exit 12
ip link show "\$LAB_IFACE" >"$TMP/klink"
EOF
in_lab knotd-xdp "$TMP/knotd" -6
assert_eq "knotd-xdp: sent" 6000 "$(field "$TMP/k1" "Queries sent")"
assert_eq "knotd-xdp: completed" 6000 "$(field "$TMP/k1" "Queries completed")"
assert_eq "knotd-xdp paced: sent" 2000 "$(field "$TMP/k2" "Queries sent")"
assert_eq "knotd-xdp paced: completed" 2000 "$(field "$TMP/k2" "Queries completed")"
assert_eq "knotd's udp4-xdp = sent" 8000 "$(xdpstat "$TMP/kstats")"
assert_eq "knotd-xdp IPv6: completed" 2000 "$(field "$TMP/k3" "Queries completed")"
assert_eq "knotd's udp6-xdp = sent over IPv6" 2000 \
	"$(awk -F' = ' '/udp6-xdp/ { print $2 }' "$TMP/kstats")"
# Every answer timed by the steering program's receive stamp (copied with the frame in
# copy mode), and the report says how the pass ran: native attach, copy bind (a veth has
# no zero-copy), one queue.
stamps() { grep -c "^  Latency clock: *xdp (program receive stamps, send-side app clock), $2 of $2 answers stamped\$" "$1"; }
for f in k1 k2 k3; do
	assert_eq "knotd-xdp $f: every answer stamped" 1 "$(stamps "$TMP/$f" "$(field "$TMP/$f" "Queries completed")")"
	assert_eq "knotd-xdp $f: the AF_XDP mode" 1 \
		"$(grep -c '^  AF_XDP: *native (driver) attach, copy bind, 1 queue of 1$' "$TMP/$f")"
done
grep -q "xdp" "$TMP/klink" && fail "an XDP program left on the veth: $(cat "$TMP/klink")"
echo "ok: no XDP program left on the veth after the passes"

# 2. The responder answering in XDP: each query reflected by its program, none by its sockets.
cat >"$TMP/reflect" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 3 -c 4 -q 100 --no-server-version --json "$TMP/r1.json" >"$TMP/r1" 2>&1 || exit 10
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER6" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/r2" 2>&1 || exit 11
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/r1.out"
EOF
in_lab responder-xdp "$TMP/reflect" -6
assert_eq "reflect: sent" 6000 "$(field "$TMP/r1" "Queries sent")"
assert_eq "reflect: completed" 6000 "$(field "$TMP/r1" "Queries completed")"
assert_eq "reflect IPv6: completed" 2000 "$(field "$TMP/r2" "Queries completed")"
assert_eq "reflect: the program received" 8000 "$(out "$TMP/r1.out" xdp-received)"
assert_eq "reflect: the program answered" 8000 "$(out "$TMP/r1.out" xdp-answered)"
assert_eq "reflect: the sockets received" 0 "$(out "$TMP/r1.out" received)"
assert_eq "reflect: every answer stamped" 1 "$(stamps "$TMP/r1" 6000)"
assert_eq "reflect IPv6: every answer stamped" 1 "$(stamps "$TMP/r2" 2000)"
# The results file holds the same: xdp_stamped = completed, passes[].xdp (its reading
# back: tests/unit/results/test_results_json).
assert_eq "reflect JSON: xdp_stamped" 6000 "$(awk -F'[:,] *' '/"xdp_stamped"/ { print $2 }' "$TMP/r1.json")"
tr -d ' \n' <"$TMP/r1.json" | grep -q '"xdp":{"native":true,"zerocopy":false,"queues":1,"rx_queues":1}' ||
	fail "reflect JSON: no passes[].xdp: $(grep -A5 '"xdp"' "$TMP/r1.json")"
grep -q '^   "clock": "xdp",$' "$TMP/r1.json" || fail "reflect JSON: no \"clock\": \"xdp\""
"$DV" report "$TMP/r1.json" >"$TMP/r1.re" 2>&1 || fail "report of r1.json: $(cat "$TMP/r1.re")"
assert_eq "reflect: dnsvolley report's clock lines = the run's" "$(clock_lines "$TMP/r1")" \
	"$(clock_lines "$TMP/r1.re")"

# 2b. -T 2 on a veth with 2 queues: one XDP socket per worker and queue, each worker's
# thread on its queue's CPU (the veth returns XDP_TX'd answers on the queue of the CPU
# that handled the query), every answer matched by its own worker: exact counts, none
# unexpected, every answer stamped, the report says 2 queues; and with drops and garbage.
if [ "$(nproc)" -lt 2 ]; then
	echo "SKIP part: -T 2 over XDP needs 2 CPUs (a veth picks the answer's queue by CPU)" >&2
else
	cat >"$TMP/two" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 3 -c 4 -q 100 -T 2 >"$TMP/t1" 2>&1 || exit 10
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER6" -p "\$LAB_PORT" -n 1 -c 4 -q 100 -T 2 -Q 20000 >"$TMP/t2" 2>&1 || exit 11
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/t.out"
EOF
	in_lab responder-xdp "$TMP/two" -6 -q 2
	assert_eq "-T 2: sent" 6000 "$(field "$TMP/t1" "Queries sent")"
	assert_eq "-T 2: completed" 6000 "$(field "$TMP/t1" "Queries completed")"
	assert_eq "-T 2: unexpected" 0 "$(field "$TMP/t1" "Unexpected answers")"
	assert_eq "-T 2 paced IPv6: completed" 2000 "$(field "$TMP/t2" "Queries completed")"
	assert_eq "-T 2 paced IPv6: unexpected" 0 "$(field "$TMP/t2" "Unexpected answers")"
	assert_eq "-T 2: the program answered" 8000 "$(out "$TMP/t.out" xdp-answered)"
	assert_eq "-T 2: every answer stamped" 1 "$(stamps "$TMP/t1" 6000)"
	assert_eq "-T 2: the AF_XDP mode" 1 \
		"$(grep -c '^  AF_XDP: *native (driver) attach, copy bind, 2 queues of 2$' "$TMP/t1")"
	# Hostile, on two queues: drops and garbage answers counted exactly, none taken by
	# the wrong worker.
	cat >"$TMP/two-hostile" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 4 -q 500 -t 2 -T 2 >"$TMP/t3" 2>&1
echo \$? >"$TMP/t3.rc"
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/t3.out"
EOF
	in_lab responder-xdp "$TMP/two-hostile" -q 2 -T '--drop-every 7 --garbage-every 11'
	hostile_counts "-T 2 hostile" t3
	assert_eq "-T 2 hostile: unexpected" 0 "$(field "$TMP/t3" "Unexpected answers")"
	assert_eq "-T 2 hostile: every completed answer stamped" 1 \
		"$(stamps "$TMP/t3" "$(field "$TMP/t3" "Queries completed")")"
fi

# 3. Hostile: every 7th query dropped, every 11th (not dropped) answered with a header
# alone; then a target that answers nothing. The program counts per CPU (n % 7 on each
# CPU's own count), so the exact figures to compare with are its counters.
cat >"$TMP/hostile" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 500 -t 2 >"$TMP/h1" 2>&1
echo \$? >"$TMP/h1.rc"
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/h1.out"
EOF
in_lab responder-xdp "$TMP/hostile" -T '--drop-every 7 --garbage-every 11'
hostile_counts hostile h1
assert_eq "hostile: received by the program" 2000 "$(out "$TMP/h1.out" xdp-received)"

cat >"$TMP/silent" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 500 -t 0.2 >"$TMP/s1" 2>&1
echo \$? >"$TMP/s1.rc"
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/s1.out"
EOF
in_lab responder-xdp "$TMP/silent" -T '--drop-every 1'
assert_eq "silent: exit (no answers)" 4 "$(cat "$TMP/s1.rc")"
assert_eq "silent: sent" 2000 "$(field "$TMP/s1" "Queries sent")"
assert_eq "silent: lost" 2000 "$(field "$TMP/s1" "Queries lost")"
assert_eq "silent: the program dropped" 2000 "$(out "$TMP/s1.out" xdp-dropped)"

# 3b. The same counting: the socket responder (its answers leave through the kernel and
# are steered to the XDP socket on the host's end) with every UDP fault at once, once for
# dnsvolley's kernel UDP path and once for --xdp, each against a fresh responder: every
# count of the two reports is the same, and completed equals what the responder answered.
faults='--wrong-id-every 5 --wrong-question-every 7 --duplicate-every 11 --garbage-every 13 --drop-every 17'
for path in kernel xdp; do
	flag=""
	# shellcheck disable=SC2016 # expanded inside the lab, where LAB_IFACE is set
	[ $path = xdp ] && flag='--xdp "$LAB_IFACE"'
	cat >"$TMP/same-$path" <<EOF
#!/bin/sh
$DVX $flag -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 500 -t 2 >"$TMP/same-$path.out" 2>&1
echo \$? >"$TMP/same-$path.rc"
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/same-$path.resp"
EOF
	in_lab responder "$TMP/same-$path" -T "$faults"
done
for f in "Queries sent" "Queries completed" "Queries lost" "Late answers" "Unexpected answers" \
	"Malformed answers"; do
	assert_eq "same counts over XDP: $f" "$(field "$TMP/same-kernel.out" "$f")" \
		"$(field "$TMP/same-xdp.out" "$f")"
done
assert_eq "same counts: exit" "$(cat "$TMP/same-kernel.rc")" "$(cat "$TMP/same-xdp.rc")"
assert_eq "faults over XDP: completed = the responder's answered" \
	"$(out "$TMP/same-xdp.resp" answered)" "$(field "$TMP/same-xdp.out" "Queries completed")"
assert_ge "faults over XDP: some unexpected" 1 "$(field "$TMP/same-xdp.out" "Unexpected answers")"
assert_ge "faults over XDP: some malformed" 1 "$(field "$TMP/same-xdp.out" "Malformed answers")"

# 4. A cold/hot study (readiness probes after each flush: probe_queries in its results) and a capacity search, as over
# sockets; knotd's XDP listener counts every query of every pass.
cat >"$TMP/study" <<EOF
#!/bin/sh
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" --passes cold,hot --repeat 2 --hot-runs 1 \
	--flush true --no-server-version -q 50 -c 2 --json "$TMP/st.json" >"$TMP/st" 2>&1 || exit 10
\$LAB_KNOTC stats mod-stats.request-protocol >"$TMP/st.stats" || exit 11
$DV capacity --no-progress --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -d "$TMP/list.txt" \
	--step 0.3 --settle 0 --from 2000 --to 4000 >"$TMP/cap" 2>&1 || exit 12
EOF
in_lab knotd-xdp "$TMP/study"
assert_eq "study: passes" 4 "$(grep -c 'Queries sent:' "$TMP/st")"
assert_eq "study: sent" 8000 "$(total "$TMP/st" "Queries sent")"
assert_eq "study: completed" 8000 "$(total "$TMP/st" "Queries completed")"
probes=$(awk -F': ' '/^   "probe_queries"/ { s += $2 } END { print s + 0 }' "$TMP/st.json")
assert_ge "study: a probe after each of the 2 flushes" 2 "$probes"
assert_eq "study: knotd's udp4-xdp = sent + probes" $((8000 + probes)) "$(xdpstat "$TMP/st.stats")"
grep -q "^Comparison table" "$TMP/st" || fail "study: no comparison table"
assert_eq "capacity: one Capacity line" 1 "$(grep -c '^Capacity' "$TMP/cap")"
assert_ge "capacity: steps" 1 "$(grep -c '^\[Capacity\] step' "$TMP/cap")"
grep -q "^dnsvolley: " "$TMP/cap" && fail "capacity: a step failed: $(cat "$TMP/cap")"
echo "ok: capacity over XDP: $(grep '^Capacity' "$TMP/cap")"

# 5. Refusals: one line, no report, the setup error's status (3); and dnsvolley killed in
# the middle of a pass leaves no program behind (it is attached by a BPF link).
cat >"$TMP/refuse" <<EOF
#!/bin/sh
D="$DVX -s \$LAB_SERVER -p \$LAB_PORT -n 1 -c 2 -q 20"
setpriv --reuid 65534 --regid 65534 --clear-groups \$D --xdp "\$LAB_IFACE" >"$TMP/e1" 2>&1
echo \$? >"$TMP/e1.rc"
\$D -T 2 --xdp "\$LAB_IFACE" >"$TMP/e2" 2>&1
echo \$? >"$TMP/e2.rc"
"$RESPONDER" --xdp "\$LAB_IFACE" -a "\$LAB_ADDR" -p 0 --port-file "$TMP/busy.port" -q >/dev/null 2>&1 &
busy=\$!
for i in \$(seq 200); do [ -s "$TMP/busy.port" ] && break; sleep 0.05; done
\$D --xdp "\$LAB_IFACE" >"$TMP/e3" 2>&1
echo \$? >"$TMP/e3.rc"
kill \$busy; wait \$busy
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1000 -c 2 -q 20 --xdp "\$LAB_IFACE" >/dev/null 2>&1 &
dv=\$!
for i in \$(seq 200); do ip link show "\$LAB_IFACE" | grep -q xdp && break; sleep 0.05; done
ip link show "\$LAB_IFACE" | grep -q xdp || exit 20
kill -KILL \$dv; wait \$dv
for i in \$(seq 100); do ip link show "\$LAB_IFACE" | grep -q xdp || break; sleep 0.05; done
ip link show "\$LAB_IFACE" >"$TMP/e4.link"
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1000 -c 2 -q 20 --xdp "\$LAB_IFACE" >"$TMP/e5" 2>&1 &
dv=\$!
for i in \$(seq 200); do grep -q "Sending queries" "$TMP/e5" && ip link show "\$LAB_IFACE" | grep -q xdp && break; sleep 0.05; done
sleep 0.3
kill -INT \$dv; wait \$dv
echo \$? >"$TMP/e5.rc"
ip link show "\$LAB_IFACE" >"$TMP/e5.link"
exit 0
EOF
in_lab responder "$TMP/refuse"
for e in e1 e2 e3; do
	assert_eq "$e: exit (run failed)" 3 "$(cat "$TMP/$e.rc")"
	grep -q "^Statistics" "$TMP/$e" && fail "$e: a report after a refusal: $(cat "$TMP/$e")"
	assert_eq "$e: one dnsvolley error line" 1 "$(grep -c '^dnsvolley: ' "$TMP/$e")"
done
grep -q "needs privileges.*run as root" "$TMP/e1" || fail "not root: $(cat "$TMP/e1")"
grep -q "1 receive queue: -T at most 1" "$TMP/e2" || fail "-T 2: $(cat "$TMP/e2")"
grep -q "the interface is busy" "$TMP/e3" || fail "busy: $(cat "$TMP/e3")"
grep -q xdp "$TMP/e4.link" && fail "killed dnsvolley left its program: $(cat "$TMP/e4.link")"
echo "ok: dnsvolley killed mid-pass: its XDP program went with it"
# SIGINT: the pass stops, its report balances, status 3, the program is gone.
assert_eq "SIGINT: exit" 3 "$(cat "$TMP/e5.rc")"
sent=$(field "$TMP/e5" "Queries sent")
assert_ge "SIGINT: some sent" 1 "$sent"
assert_eq "SIGINT: sent = completed + lost + interrupted" "$sent" \
	$(($(field "$TMP/e5" "Queries completed") + $(field "$TMP/e5" "Queries lost") + \
		$(field "$TMP/e5" "Queries interrupted") + 0))
grep -q xdp "$TMP/e5.link" && fail "SIGINT left the program: $(cat "$TMP/e5.link")"
echo "ok: SIGINT: no XDP program left"
