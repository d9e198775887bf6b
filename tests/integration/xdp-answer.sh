#!/usr/bin/env bash
# xdp-answer: dnsvolley-responder --xdp without --reflect answers through AF_XDP sockets
# (doc/xdp.md), in scripts/lab's namespace lab (target responder-xsk). dnsvolley over the
# kernel's UDP path and over --xdp, IPv4 and IPv6: sent = completed, none lost, every
# answer NOERROR with its A record (16 octets more than the query), and the responder's
# xdp-received and xdp-answered equal what was sent, its sockets saw none. A hostile peer
# (hand-made frames: lying lengths, a wrong IPv4 header checksum, no DNS header, QR set)
# is counted exactly as malformed, and the responder answers on. Every UDP fault gives
# the same counts as the socket responder's. --capacity and --delay: every query counted
# once, answered or dropped (capacity, frames all held), as the sockets count them, and
# timed by its arrival stamp (a stalled thread sees no burst). Two
# queues, two sockets. Refusals (not root, more threads than queues, the interface busy)
# in one line each, and no program left behind.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
grep -q '^#define HAVE_XDP 1' "$top_builddir/config.h" ||
	skip "built without AF_XDP (configure found no libxdp, libbpf or clang; scripts/packages.txt)"

[ "$(id -u)" = 0 ] || skip_lacks "the lab needs root (network namespaces, XDP)"

head -2000 "$top_srcdir/querylists/www-a.txt" >"$TMP/list.txt"
chmod 755 "$TMP"
field() { report_field "$1" "$2"; }
out() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# rcode FILE NAME: the count of NAME on the report's "Response codes:" line.
rcode() { awk -v k="$2" '/^  Response codes:/ { for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1"; }
# size FILE request|response: the report's average packet size.
size() { awk -v k="$2" '/^  Average packet size:/ { for (i = 1; i < NF; i++) if ($i == k) { sub(/,/, "", $(i + 1)); print $(i + 1) } }' "$1"; }
DVX="$DV --no-progress -d $TMP/list.txt -t 5"
# every_answer NAME FILE COUNT: COUNT sent, all completed, none lost, all NOERROR, each
# answer the query and one A record (16 octets: a name pointer, type, class, TTL, length
# and the address; a reflection would be as long as the query).
every_answer() {
	assert_eq "$1: sent" "$3" "$(field "$2" "Queries sent")"
	assert_eq "$1: completed" "$3" "$(field "$2" "Queries completed")"
	assert_eq "$1: lost" 0 "$(field "$2" "Queries lost")"
	assert_eq "$1: NOERROR" "$3" "$(rcode "$2" NOERROR)"
	assert_eq "$1: an A record in each answer" $(($(size "$2" request) + 16)) "$(size "$2" response)"
}
# kernel_drops NAME FILE: the XDP sockets lost nothing (a closed loop never fills a ring).
kernel_drops() {
	local k
	for k in xdp-rx-dropped xdp-rx-ring-full xdp-rx-fill-empty xdp-tx-invalid xdp-send-errors; do
		assert_eq "$1: $k" 0 "$(out "$2" $k)"
	done
}

# 1. Full answers through the XDP socket, for both of dnsvolley's paths, IPv4 and IPv6.
cat >"$TMP/full" <<EOF
#!/bin/sh
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 3 -c 4 -q 100 >"$TMP/f1" 2>&1 || exit 10
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/f2" 2>&1 || exit 11
$DVX -s "\$LAB_SERVER6" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/f3" 2>&1 || exit 12
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER6" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/f4" 2>&1 || exit 13
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/f.out"
EOF
in_lab responder-xsk "$TMP/full" -6
every_answer "kernel UDP" "$TMP/f1" 6000
every_answer "--xdp" "$TMP/f2" 2000
every_answer "kernel UDP, IPv6" "$TMP/f3" 2000
every_answer "--xdp, IPv6" "$TMP/f4" 2000
assert_eq "responder: xdp-received = sent" 12000 "$(out "$TMP/f.out" xdp-received)"
assert_eq "responder: xdp-answered = sent" 12000 "$(out "$TMP/f.out" xdp-answered)"
assert_eq "responder: xdp-malformed" 0 "$(out "$TMP/f.out" xdp-malformed)"
assert_eq "responder: its sockets received" 0 "$(out "$TMP/f.out" received)"
kernel_drops "full answers" "$TMP/f.out"

# 2. Hostile peer: 50 rounds of 11 hand-made frames (4 whole queries, 7 broken), then a
# pass of dnsvolley: every frame counted, the broken ones exactly as malformed, the
# responder answers on and stops when told.
cat >"$TMP/hostile" <<EOF
#!/bin/sh
mac=\$(ip netns exec "\$LAB_NS" cat "/sys/class/net/\$LAB_PEER_IFACE/address")
python3 "$top_srcdir/tests/helpers/raw-frames.py" "\$LAB_IFACE" "\$mac" "\$LAB_ADDR" \
	"\$LAB_SERVER" "\$LAB_ADDR6" "\$LAB_SERVER6" "\$LAB_PORT" 50 >"$TMP/raw" || exit 10
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/h1" 2>&1 || exit 11
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/h.out"
EOF
in_lab responder-xsk "$TMP/hostile" -6
raw() { tr ' ' '\n' <"$TMP/raw" | awk -F= -v k="$1" '$1 == k { print $2 }'; }
assert_eq "hostile: frames sent" 550 "$(raw frames)"
# The answers to the whole queries, read off the wire: every one with its lengths, IPv4
# header checksum, UDP checksum (IPv4 and IPv6), QR and ID right: checked frame by frame
# here, where part 1 relied on the kernel's receive path.
assert_eq "hostile: answers read back" "$(raw answered)" "$(raw answers)"
assert_eq "hostile: answers with every header right" "$(raw answered)" "$(raw good)"
every_answer "after the hostile frames" "$TMP/h1" 2000
assert_eq "hostile: received" $(($(raw frames) + 2000)) "$(out "$TMP/h.out" xdp-received)"
assert_eq "hostile: malformed" "$(raw malformed)" "$(out "$TMP/h.out" xdp-malformed)"
assert_eq "hostile: answered" $(($(raw answered) + 2000)) "$(out "$TMP/h.out" xdp-answered)"
kernel_drops "hostile" "$TMP/h.out"

# 2b. A flood while the responder is stopped (SIGSTOP): 5,500 frames against rings of
# 2,048. Memory stays fixed: what the fill ring has no frame for, the kernel drops and
# counts; every frame is accounted for, exactly (read, or dropped by the XDP socket, or
# by the veth before it), and once resumed it answers a pass of dnsvolley in full.
cat >"$TMP/flood" <<EOF
#!/bin/sh
mac=\$(ip netns exec "\$LAB_NS" cat "/sys/class/net/\$LAB_PEER_IFACE/address")
d0=\$(cat "/sys/class/net/\$LAB_IFACE/statistics/tx_dropped")
kill -STOP "\$LAB_PID"
python3 "$top_srcdir/tests/helpers/raw-frames.py" "\$LAB_IFACE" "\$mac" "\$LAB_ADDR" \
	"\$LAB_SERVER" "\$LAB_ADDR6" "\$LAB_SERVER6" "\$LAB_PORT" 500 flood >"$TMP/flood.raw" || exit 10
kill -CONT "\$LAB_PID"
echo \$((\$(cat "/sys/class/net/\$LAB_IFACE/statistics/tx_dropped") - d0)) >"$TMP/flood.veth"
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/fl1" 2>&1 || exit 11
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/fl.out"
EOF
in_lab responder-xsk "$TMP/flood" -6
assert_eq "flood: frames sent" "frames=5500 answered=2000 malformed=3500" "$(cat "$TMP/flood.raw")"
every_answer "after the flood" "$TMP/fl1" 2000
fl() { out "$TMP/fl.out" "$1"; }
assert_eq "flood: received + dropped by the socket or the veth = sent" 7500 \
	$(($(fl xdp-received) + $(fl xdp-rx-dropped) + $(fl xdp-rx-ring-full) + $(cat "$TMP/flood.veth")))
assert_ge "flood: some dropped by the kernel" 1 \
	$(($(fl xdp-rx-dropped) + $(fl xdp-rx-ring-full) + $(cat "$TMP/flood.veth")))
assert_eq "flood: received = answered + malformed" "$(fl xdp-received)" \
	$(($(fl xdp-answered) + $(fl xdp-malformed)))
assert_eq "flood: none refused on sending" 0 "$(fl xdp-tx-invalid)"

# 3. Every UDP fault and an rcode at once: the XDP sockets count what the socket
# responder counts (one rule, responder.c's dv_responder_answer), and dnsvolley's
# reports of the two are the same, over its kernel path and over --xdp.
faults='--wrong-id-every 5 --wrong-question-every 7 --duplicate-every 11 --garbage-every 13 --drop-every 17 --rcode NXDOMAIN'
same_run() { # TARGET NAME FLAG
	cat >"$TMP/same-$2" <<EOF
#!/bin/sh
$DVX $3 -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 500 -t 2 >"$TMP/same-$2.out" 2>&1
echo \$? >"$TMP/same-$2.rc"
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/same-$2.resp"
EOF
	in_lab "$1" "$TMP/same-$2" -T "$faults"
}
same_run responder sock ""
same_run responder-xsk xsk ""
# shellcheck disable=SC2016 # expanded inside the lab
same_run responder-xsk xskx '--xdp "$LAB_IFACE"'
for run in xsk xskx; do
	for f in "Queries sent" "Queries completed" "Queries lost" "Unexpected answers" \
		"Malformed answers"; do
		assert_eq "faults, $run: $f as against the sockets" \
			"$(field "$TMP/same-sock.out" "$f")" "$(field "$TMP/same-$run.out" "$f")"
	done
	assert_eq "faults, $run: NXDOMAIN as against the sockets" \
		"$(rcode "$TMP/same-sock.out" NXDOMAIN)" "$(rcode "$TMP/same-$run.out" NXDOMAIN)"
	assert_eq "faults, $run: exit" "$(cat "$TMP/same-sock.rc")" "$(cat "$TMP/same-$run.rc")"
	for k in received answered dropped faulty duplicates malformed; do
		assert_eq "faults, $run: the responder's $k" "$(out "$TMP/same-sock.resp" $k)" \
			"$(out "$TMP/same-$run.resp" xdp-$k)"
	done
	assert_eq "faults, $run: completed = xdp-answered" "$(out "$TMP/same-$run.resp" xdp-answered)" \
		"$(field "$TMP/same-$run.out" "Queries completed")"
done
assert_ge "faults: some dropped" 1 "$(out "$TMP/same-xsk.resp" xdp-dropped)"
assert_ge "faults: some faulty" 1 "$(out "$TMP/same-xsk.resp" xdp-faulty)"
assert_ge "faults: some duplicates" 1 "$(out "$TMP/same-xsk.resp" xdp-duplicates)"
assert_ge "faults: NXDOMAIN answers" 1 "$(rcode "$TMP/same-xsk.out" NXDOMAIN)"

# 3b. --capacity through the XDP sockets: the socket threads' queue (one rule,
# responder.c's dv_responder_admit), 1,000 queries/s with 16 waiting at most. dnsvolley's
# window of 200 sent at once overfills it, so some are dropped, whatever the machine's
# speed; every query is counted once, answered or dropped (xdp-dropped, as the sockets
# count a capacity drop), and dnsvolley saw the same: completed = xdp-answered, lost =
# xdp-dropped; each query timed by the arrival stamp the program put before its frame
# (xdp-stamped). No rate is asserted (bench/capacity-responder.sh measures the sockets').
# --delay 5 alone: every answer held and then sent, none dropped.
head -400 "$TMP/list.txt" >"$TMP/cap-list.txt"
held_run() { # NAME RESPONDER-FLAGS DNSVOLLEY-FLAGS
	cat >"$TMP/$1" <<EOF
#!/bin/sh
d0=\$(cat "/sys/class/net/\$LAB_IFACE/statistics/tx_dropped")
$DV --no-progress -s "\$LAB_SERVER" -p "\$LAB_PORT" $3 >"$TMP/$1.dv" 2>&1
echo \$? >"$TMP/$1.rc"
echo \$((\$(cat "/sys/class/net/\$LAB_IFACE/statistics/tx_dropped") - d0)) >"$TMP/$1.veth"
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/$1.resp"
EOF
	in_lab responder-xsk "$TMP/$1" -T "$2"
}
held_run cap "--capacity 1000 --capacity-backlog 16" "-d $TMP/cap-list.txt -c 2 -q 200 -t 1"
cap() { out "$TMP/cap.resp" "$1"; }
assert_eq "capacity: sent" 400 "$(field "$TMP/cap.dv" "Queries sent")"
assert_eq "capacity: xdp-received = sent" 400 "$(cap xdp-received)"
assert_eq "capacity: received = answered + dropped" 400 $(($(cap xdp-answered) + $(cap xdp-dropped)))
assert_eq "capacity: completed = xdp-answered" "$(cap xdp-answered)" \
	"$(field "$TMP/cap.dv" "Queries completed")"
assert_eq "capacity: lost = xdp-dropped" "$(cap xdp-dropped)" "$(field "$TMP/cap.dv" "Queries lost")"
assert_ge "capacity: some dropped" 1 "$(cap xdp-dropped)"
assert_ge "capacity: some answered" 1 "$(cap xdp-answered)"
assert_eq "capacity: its sockets received" 0 "$(cap received)"
assert_eq "capacity: every query timed by its arrival stamp" 400 "$(cap xdp-stamped)"
kernel_drops "capacity" "$TMP/cap.resp"
held_run delay "--delay 5" "-d $TMP/cap-list.txt -c 2 -q 100 -t 2"
every_answer "--delay 5" "$TMP/delay.dv" 400
assert_eq "--delay 5: xdp-answered" 400 "$(out "$TMP/delay.resp" xdp-answered)"
assert_eq "--delay 5: xdp-dropped" 0 "$(out "$TMP/delay.resp" xdp-dropped)"
assert_eq "--delay 5: no stamps (--capacity's)" 0 "$(out "$TMP/delay.resp" xdp-stamped)"
kernel_drops "--delay 5" "$TMP/delay.resp"
# A flood of held answers: --delay 2000 against 4,000 queries paced at 5,000 a second
# (all sent within the delay, none answered before the last is in). A thread holds at most
# its 2,048 transmit frames and takes one only while two are free: 2,047 answered, every
# other query that reached it dropped and counted (the frames are fixed at start: memory
# never grows). Every query accounted for:
# read, or dropped by the kernel (XDP socket, veth).
held_run flood "--delay 2000" "-d $TMP/list.txt -n 2 -c 2 -q 4000 -Q 5000 -t 4"
fh() { out "$TMP/flood.resp" "$1"; }
assert_eq "held flood: sent" 4000 "$(field "$TMP/flood.dv" "Queries sent")"
assert_eq "held flood: xdp-answered, one frame a thread kept free" 2047 "$(fh xdp-answered)"
assert_eq "held flood: completed = xdp-answered" 2047 "$(field "$TMP/flood.dv" "Queries completed")"
assert_eq "held flood: received = answered + dropped" "$(fh xdp-received)" \
	$(($(fh xdp-answered) + $(fh xdp-dropped)))
assert_eq "held flood: received + dropped by the kernel = sent" 4000 \
	$(($(fh xdp-received) + $(fh xdp-rx-dropped) + $(fh xdp-rx-ring-full) + $(cat "$TMP/flood.veth")))
assert_eq "held flood: none refused on sending" 0 "$(fh xdp-tx-invalid)"

# A stalled thread under --capacity (1,000 queries/s, 1 waiting at most): the responder
# stopped (SIGSTOP) while 100 whole queries come 5 ms apart (the sender sleeps between
# them, never making up: no two closer). The program stamps each as it arrives, stopped
# process or not, and the thread, resumed, times them by those stamps: the queue was
# never over 1, none dropped (timed by their read, all at once, 98 would be). Then a
# pass of dnsvolley, one query at a time, behind them in the ring.
head -50 "$TMP/list.txt" >"$TMP/stall-list.txt"
cat >"$TMP/stall" <<EOF
#!/bin/sh
mac=\$(ip netns exec "\$LAB_NS" cat "/sys/class/net/\$LAB_PEER_IFACE/address")
kill -STOP "\$LAB_PID"
python3 "$top_srcdir/tests/helpers/raw-frames.py" "\$LAB_IFACE" "\$mac" "\$LAB_ADDR" \
	"\$LAB_SERVER" "\$LAB_ADDR6" "\$LAB_SERVER6" "\$LAB_PORT" 100 spaced 5 >"$TMP/stall.raw"
rc=\$?
kill -CONT "\$LAB_PID"
[ \$rc = 0 ] || exit 10
$DV --no-progress -d "$TMP/stall-list.txt" -s "\$LAB_SERVER" -p "\$LAB_PORT" -c 1 -q 1 -t 2 >"$TMP/stall.dv" 2>&1 || exit 11
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/stall.resp"
EOF
in_lab responder-xsk "$TMP/stall" -6 -T "--capacity 1000 --capacity-backlog 1"
st() { out "$TMP/stall.resp" "$1"; }
assert_eq "stall: frames sent" "frames=100 answered=100 malformed=0" "$(cat "$TMP/stall.raw")"
every_answer "stall: the pass after" "$TMP/stall.dv" 50
assert_eq "stall: xdp-received" 150 "$(st xdp-received)"
assert_eq "stall: none dropped by the queue" 0 "$(st xdp-dropped)"
assert_eq "stall: xdp-answered" 150 "$(st xdp-answered)"
assert_eq "stall: every query timed by its arrival stamp" 150 "$(st xdp-stamped)"
kernel_drops "stall" "$TMP/stall.resp"

# 3c. Idle: with nothing to do an XDP thread sleeps in ppoll without a timeout (the stop
# wakes it through an eventfd; answers still in the transmit ring are pushed on every
# 1 ms until all are back), as the socket threads do (responder-idle.sh). Once every
# thread of the responder is asleep (state S), they make at most 4 context switches in
# all over 2 s (0 seen; the old 100 ms ticks made ~20 per XDP thread), a count at any
# load; after a pass (its answers all sent) the same; then it still answers.
cat >"$TMP/idle" <<EOF
#!/bin/bash
# csw: every thread asleep (else exit status 1), then the sum of their context switches.
csw() {
	local i st
	for i in \$(seq 400); do
		st=\$(cat /proc/"\$LAB_PID"/task/*/stat | sed 's/.*) //' | cut -d' ' -f1 | sort -u)
		[ "\$st" = S ] && break
		sleep 0.025
	done
	[ "\$st" = S ] || return 1
	cat /proc/"\$LAB_PID"/task/*/status | awk '/^(non)?voluntary_ctxt_switches/ { s += \$2 } END { print s }'
}
a=\$(csw) || exit 10
sleep 2
b=\$(csw) || exit 11
echo \$((b - a)) >"$TMP/idle.before"
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/idle1" 2>&1 || exit 12
a=\$(csw) || exit 13
sleep 2
b=\$(csw) || exit 14
echo \$((b - a)) >"$TMP/idle.after"
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/idle2" 2>&1 || exit 15
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/idle.resp"
EOF
in_lab responder-xsk "$TMP/idle"
assert_le "idle: context switches in 2 s, every thread asleep" 4 "$(cat "$TMP/idle.before")"
assert_le "idle after a pass: context switches in 2 s" 4 "$(cat "$TMP/idle.after")"
every_answer "idle: the pass between" "$TMP/idle1" 2000
every_answer "idle: the pass after" "$TMP/idle2" 2000
assert_eq "idle: xdp-answered" 4000 "$(out "$TMP/idle.resp" xdp-answered)"

# 4. Two queues, -T 2: a socket and a thread on each; every query answered by one of
# them, none by the kernel's sockets.
cat >"$TMP/two" <<EOF
#!/bin/sh
$DVX -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 3 -c 8 -q 100 -T 2 >"$TMP/t1" 2>&1 || exit 10
$DVX --xdp "\$LAB_IFACE" -s "\$LAB_SERVER" -p "\$LAB_PORT" -n 1 -c 2 -q 100 >"$TMP/t2" 2>&1 || exit 11
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/t.out"
EOF
in_lab responder-xsk "$TMP/two" -q 2 -T "-T 2"
every_answer "-T 2" "$TMP/t1" 6000
every_answer "-T 2, --xdp" "$TMP/t2" 2000
assert_eq "-T 2: xdp-answered" 8000 "$(out "$TMP/t.out" xdp-answered)"
assert_eq "-T 2: its sockets received" 0 "$(out "$TMP/t.out" received)"

# 5. Refusals, one line each, status 1: not root, more threads than queues, the
# interface busy (the first responder's program); the first one's program is gone once
# it stopped (a BPF link).
cat >"$TMP/refuse" <<EOF
#!/bin/sh
R="ip netns exec \$LAB_NS $RESPONDER -a \$LAB_SERVER -p 0 --xdp \$LAB_PEER_IFACE"
ip netns exec "\$LAB_NS" setpriv --reuid 65534 --regid 65534 --clear-groups \
	$RESPONDER -a "\$LAB_SERVER" -p 0 --xdp "\$LAB_PEER_IFACE" >"$TMP/e1" 2>&1
echo \$? >"$TMP/e1.rc"
\$R -T 2 >"$TMP/e2" 2>&1
echo \$? >"$TMP/e2.rc"
\$R --port-file "$TMP/busy.port" -q >"$TMP/busy.out" 2>&1 &
busy=\$!
for i in \$(seq 200); do [ -s "$TMP/busy.port" ] && break; sleep 0.05; done
\$R >"$TMP/e3" 2>&1
echo \$? >"$TMP/e3.rc"
kill -INT \$busy; wait \$busy
echo \$? >"$TMP/busy.rc"
ip netns exec "\$LAB_NS" ip link show "\$LAB_PEER_IFACE" >"$TMP/e4.link"
exit 0
EOF
in_lab responder "$TMP/refuse"
for e in e1 e2 e3; do
	assert_eq "$e: exit" 1 "$(cat "$TMP/$e.rc")"
	assert_eq "$e: one line" 1 "$(wc -l <"$TMP/$e")"
done
grep -q "needs privileges.*run as root" "$TMP/e1" || fail "not root: $(cat "$TMP/e1")"
grep -q "1 receive queue: -T at most 1" "$TMP/e2" || fail "-T 2: $(cat "$TMP/e2")"
grep -q "the interface is busy" "$TMP/e3" || fail "busy: $(cat "$TMP/e3")"
assert_eq "the first responder: exit" 0 "$(cat "$TMP/busy.rc")"
assert_eq "the first responder: its counts" 1 "$(grep -c '^xdp-received 0$' "$TMP/busy.out")"
grep -q xdp "$TMP/e4.link" && fail "a program left on the veth: $(cat "$TMP/e4.link")"
echo "ok: refusals in one line each, no program left behind"
