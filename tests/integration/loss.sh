#!/usr/bin/env bash
# loss.sh: loss attributed to where it happened, intervals by send time, and the no-answer status.
#
#  1. knotd (Debian package knot) on loopback with its default receive buffer,
#     -c 8 -q 500, knotd stopped for 0.5 s from dnsvolley's first query on (so it
#     loses queries at any machine speed: 4,000 in flight overflow its buffers): the
#     target's socket drops account for >= 90% of lost and dnsvolley's own sockets
#     for none.
#  2. The responder, with a tiny receive buffer on the client (-b 4, -q 2000):
#     the report blames dnsvolley's own sockets, with the fix, not the server.
#  3. The responder dropping every 10th query, paced, -S 1 -l 5 -t 5: by send
#     time each interval's lost is 10% of its sent (within one query).
#  4. Nothing listening: the no-answer line and exit status 4.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt"

# split FILE: "lost own target unaccounted" from the report's loss split line.
split_line() {
	sed -n "s/^ *Loss split: *lost \([0-9]*\): \([0-9]*\) dropped by dnsvolley's sockets, \([0-9]*\) dropped at the target's socket (local), \([0-9]*\) unaccounted.*/\1 \2 \3 \4/p" "$1"
}

# --- 2. tiny client buffer: the client is to blame.
# lost = dropped by dnsvolley's sockets only if no answer that got in was read after -t
# (it would be lost, not dropped): -t 5, far beyond a stall of the client. The dropped
# queries wait it out, so the run lasts -l 1 + 5 s.
start_responder r --reflect --no-gso
"$DV" -s 127.0.0.1 -p "$r_PORT" -d "$LIST" -c 1 -q 2000 -b 4 -l 1 -t 5 >"$TMP/tiny.out" 2>&1
read -r lost own target unacc < <(split_line "$TMP/tiny.out")
[ -n "${lost:-}" ] || { cat "$TMP/tiny.out"; fail "tiny -b: no loss split line naming the local target"; }
assert_ge "tiny -b: lost" 1 "$lost"
assert_eq "tiny -b: dropped by dnsvolley's sockets = lost" "$lost" "$own"
assert_eq "tiny -b: dropped at the target's socket" 0 "$target"
grep -q "dnsvolley's own sockets dropped $own answers .*raise -b" "$TMP/tiny.out" ||
	fail "tiny -b: no one-line fix hint"
echo "ok: tiny -b: the report blames the client"
stop_responder r

# --- 3. intervals by send time: every 10th query dropped.
# 10% lost per interval holds only if no answered query is read after -t: -t 5, far
# beyond a stall of the client; the dropped ones in flight (2,000 q/s x 10% x 5 s) fit -q.
start_responder d --reflect --no-gso --drop-every 10
"$DV" -s 127.0.0.1 -p "$d_PORT" -d "$LIST" -c 1 -q 5000 -Q 2000 -S 1 -l 5 -t 5 \
	--json "$TMP/iv.json" >"$TMP/iv.out" 2>&1
stop_responder d
grep '^\[Interval by send time\]' "$TMP/iv.out" >"$TMP/iv.lines" || fail "no interval lines by send time"
n=0
while read -r _ _ _ _ _ _ _ sent _ completed _ lost _; do
	[ "$sent" -ge 500 ] || continue
	n=$((n + 1))
	d=$((lost * 10 - sent))
	[ "$d" -ge -10 ] && [ "$d" -le 10 ] || fail "interval $n: lost $lost of sent $sent is not 10%"
	assert_eq "interval $n: sent = completed + lost" "$sent" "$((completed + lost))"
done <"$TMP/iv.lines"
assert_ge "full intervals checked" 4 "$n"
python3 - "$TMP/iv.json" "$TMP/iv.lines" <<'PY'
import json, sys
iv = json.load(open(sys.argv[1]))["passes"][0]["intervals"]
lines = [l.split() for l in open(sys.argv[2])]
got = [(i["sent"], i["completed"], i["lost"]) for i in iv]
want = [(int(l[7]), int(l[9]), int(l[11])) for l in lines]
assert got == want, (got, want)
print("ok: the results file keeps the same series by send time")
PY

# --- 4. nothing listening (the stopped responder's port is free again).
# 200 queries: with nothing answering, every query holds one of the 100 window
# slots for the whole 0.5 s timeout, so the full 10,000-query list took 50 s.
head -n 200 "$LIST" >"$TMP/200.list"
rc=0
"$DV" -s 127.0.0.1 -p "$d_PORT" -d "$TMP/200.list" -n 1 -t 0.5 >"$TMP/none.out" 2>&1 || rc=$?
assert_eq "nothing listening: exit status" 4 "$rc"
assert_eq "nothing listening: sent" 200 "$(report_field "$TMP/none.out" "Queries sent")"
assert_eq "nothing listening: lost" 200 "$(report_field "$TMP/none.out" "Queries lost")"
grep -q "NO ANSWERS: .*ICMP port unreachable" "$TMP/none.out" || fail "nothing listening: no plain no-answer line"
echo "ok: nothing listening says so"

# --- 1. knotd with its default receive buffer.
command -v knotd >/dev/null || skip "no knotd (Debian package knot)"
kport=$(free_port)
mkdir -p "$TMP/knot"
bash "$top_srcdir/tests/integration/servers/zone.sh" example.com </dev/null >"$TMP/knot/example.com.zone"
{
	bash "$top_srcdir/tests/integration/servers/knot.conf.sh" "$TMP/knot" "$kport"
	printf 'zone:\n  - domain: example.com\n    file: %s/knot/example.com.zone\n' "$TMP"
} >"$TMP/knot/knot.conf"
start_knotd "$TMP/knot"
kpid=$KNOT_PID
for _ in $(seq 2000); do echo "example.com SOA"; done >"$TMP/knot.list"
# Before, knotd lost queries only when the machine was fast enough to outrun it, and the
# test skipped when it did not. Stopped, it cannot keep up at any speed: the first
# window (4,000 queries) overflows its sockets' default buffers (~200 queries each);
# what was queued is answered after the stop, well within -t 3.
kill -STOP "$kpid"
"$DV" -s 127.0.0.1 -p "$kport" -d "$TMP/knot.list" -c 8 -q 500 -l 3 -t 3 >"$TMP/knot.rep" 2>&1 &
dv=$!
wait_queued udp "$kport"
sleep 0.5
kill -CONT "$kpid"
wait "$dv" || true
read -r lost own target unacc < <(split_line "$TMP/knot.rep")
[ -n "${lost:-}" ] || { cat "$TMP/knot.rep"; fail "knotd: no loss split line naming the local target"; }
assert_ge "knotd: lost (a stopped server's buffers overflow)" 1 "$lost"
assert_eq "knotd: dropped by dnsvolley's sockets" 0 "$own"
assert_ge "knotd: target's socket drops x 10 >= lost x 9" "$((lost * 9))" "$((target * 10))"
