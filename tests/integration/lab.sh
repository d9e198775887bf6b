#!/usr/bin/env bash
# lab: scripts/lab's namespace lab (issues 25 and 27). Against each target, dnsvolley's
# counts equal the target's own: the responder's counters, and knotd's mod-stats by
# protocol, which tell that knotd's XDP listener (udp4-xdp, udp6-xdp), not its kernel
# sockets, answered over UDP while TCP went to the kernel (tcp4). The lab tears down what
# it made after COMMAND succeeds, fails, or lab is killed; refuses a namespace it did not
# make and leaves it alone; and says "needs root" and the like with status 77.
. "$(dirname "$0")/lib.sh"
LAB="$top_srcdir/scripts/lab"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
[ "$(id -u)" = 0 ] || skip_lacks "the lab needs root (network namespaces)"
command -v knotd >/dev/null || skip "knotd not installed (scripts/packages.txt)"

# gone NS LINK: neither the namespace nor the host's end of the veth is left.
gone() {
	# Named: with an empty name (LAB_NS or LAB_IFACE missing from the command's
	# environment) both checks below hold for anything.
	[ -n "$1" ] && [ -n "$2" ] || fail "gone: no namespace or link name ('$1', '$2'): $(cat "$TMP/env" 2>&1)"
	assert_eq "namespace $1 removed" "" "$(ip netns list | awk -v n="$1" '$1 == n')"
	ip link show "$2" >/dev/null 2>&1 && fail "link $2 left behind"
	echo "ok: link $2 removed"
}
envof() { sed -n "s/^$1=//p" "$TMP/env"; }

# Usage errors: status 2, and nothing created.
rc=0
"$LAB" -B "$top_builddir" bind9 >/dev/null 2>"$TMP/err" || rc=$?
assert_eq "unknown target: exit" 2 "$rc"
grep -q "unknown target 'bind9'" "$TMP/err" || fail "unknown target: $(cat "$TMP/err")"
rc=0
"$LAB" -B "$top_builddir" responder true 2>"$TMP/err" || rc=$?
assert_eq "command without --: exit" 2 "$rc"
rc=0
"$LAB" -B "$top_builddir" -l "$TMP/none.txt" knotd -- true 2>"$TMP/err" || rc=$?
assert_eq "unreadable list: exit" 2 "$rc"
for q in 0 65 x; do
	rc=0
	"$LAB" -B "$top_builddir" -q "$q" responder -- true 2>"$TMP/err" || rc=$?
	assert_eq "-q $q: exit" 2 "$rc"
	grep -q "^lab: -q $q: the queues are a number from 1 to 64" "$TMP/err" || fail "-q $q: $(cat "$TMP/err")"
done

head -300 "$top_srcdir/querylists/www-a.txt" >"$TMP/www.txt"
head -200 "$top_srcdir/querylists/soa.txt" >"$TMP/soa.txt"
cat "$TMP/www.txt" "$TMP/soa.txt" >"$TMP/both.txt"

# 1. The responder in the namespace: its counters after "$LAB_DIR/stop".
cat >"$TMP/run-responder" <<EOF
#!/bin/sh
env | grep '^LAB_' >"$TMP/env"
"$DV" --no-progress -s "\$LAB_SERVER" -p "\$LAB_PORT" -d "$TMP/both.txt" -n 4 -c 2 -q 20 -t 30 >"$TMP/report" || exit 10
"\$LAB_DIR/stop"
cp "\$LAB_OUT" "$TMP/responder.out"
EOF
chmod +x "$TMP/run-responder"
"$LAB" -B "$top_builddir" responder -- "$TMP/run-responder" 2>"$TMP/lab.err" ||
	fail "lab responder exited $?: $(cat "$TMP/lab.err")"
assert_eq "responder: sent" 2000 "$(report_field "$TMP/report" "Queries sent")"
assert_eq "responder: completed" 2000 "$(report_field "$TMP/report" "Queries completed")"
assert_eq "responder: received" 2000 "$(awk '$1 == "received" { print $2 }' "$TMP/responder.out")"
case $(envof LAB_SERVER) in 198.18.* | 198.19.*) echo "ok: address $(envof LAB_SERVER) in 198.18.0.0/15" ;;
*) fail "the lab's address $(envof LAB_SERVER) is outside 198.18.0.0/15" ;; esac
gone "$(envof LAB_NS)" "$(envof LAB_IFACE)"

# 2. knotd with its XDP listener, IPv4 and IPv6: UDP through XDP, TCP through the kernel.
cat >"$TMP/run-knotd" <<EOF
#!/bin/sh
env | grep '^LAB_' >"$TMP/env"
"$DV" --no-progress -s "\$LAB_SERVER" -p "\$LAB_PORT" -d "$TMP/both.txt" -n 3 -c 2 -q 20 -t 30 >"$TMP/r4" || exit 10
"$DV" --no-progress -s "\$LAB_SERVER6" -p "\$LAB_PORT" -d "$TMP/www.txt" -c 2 -q 20 -t 30 >"$TMP/r6" || exit 11
"$DV" --no-progress -m tcp -s "\$LAB_SERVER" -p "\$LAB_PORT" -d "$TMP/soa.txt" -c 2 -q 20 -t 30 >"$TMP/rt" || exit 12
\$LAB_KNOTC stats mod-stats >"$TMP/stats" || exit 13
EOF
chmod +x "$TMP/run-knotd"
rc=0
"$LAB" -B "$top_builddir" -6 -l "$TMP/both.txt" knotd-xdp -- "$TMP/run-knotd" 2>"$TMP/lab.err" || rc=$?
[ $rc = 77 ] && skip_lacks "$(tail -1 "$TMP/lab.err")"
[ $rc = 0 ] || fail "lab knotd-xdp exited $rc: $(cat "$TMP/lab.err")"
stat() { awk -v k="$1" -F' = ' '$1 == k { print $2 }' "$TMP/stats"; }
assert_eq "knotd-xdp: IPv4 completed" 1500 "$(report_field "$TMP/r4" "Queries completed")"
assert_eq "knotd-xdp: IPv4 NOERROR" "1500 (100.00%)" \
	"$(awk '/Response codes:/ { print $4, $5 }' "$TMP/r4")"
assert_eq "knotd-xdp: IPv6 completed" 300 "$(report_field "$TMP/r6" "Queries completed")"
assert_eq "knotd-xdp: TCP completed" 200 "$(report_field "$TMP/rt" "Queries completed")"
assert_eq "knotd's udp4-xdp" 1500 "$(stat 'mod-stats.request-protocol[udp4-xdp]')"
assert_eq "knotd's udp6-xdp" 300 "$(stat 'mod-stats.request-protocol[udp6-xdp]')"
assert_eq "knotd's tcp4" 200 "$(stat 'mod-stats.request-protocol[tcp4]')"
assert_eq "knotd's kernel UDP" "" "$(stat 'mod-stats.request-protocol[udp4]')"
assert_eq "QUIC port" 853 "$(envof LAB_QUIC_PORT)"
gone "$(envof LAB_NS)" "$(envof LAB_IFACE)"

# 3. A failing command: its status, and the lab is gone.
rc=0
"$LAB" -B "$top_builddir" responder -- sh -c 'env | grep "^LAB_" >"$0"; exit 3' "$TMP/env" 2>/dev/null || rc=$?
assert_eq "failing command: lab's exit" 3 "$rc"
gone "$(envof LAB_NS)" "$(envof LAB_IFACE)"

# 4. lab killed while its command runs: it stops the command and tears down at once.
rm -f "$TMP/env"
"$LAB" -B "$top_builddir" responder -- sh -c 'env | grep "^LAB_" >"$0.part" && mv "$0.part" "$0"; sleep '"119.$$" \
	"$TMP/env" 2>/dev/null &
lab=$!
_pids+=("$lab")
for _ in $(seq 1200); do [ -s "$TMP/env" ] && break; sleep 0.05; done
[ -s "$TMP/env" ] || fail "the killed lab never ran its command"
kill -TERM "$lab"
rc=0
wait "$lab" || rc=$?
assert_eq "killed lab: exit" 143 "$rc"
gone "$(envof LAB_NS)" "$(envof LAB_IFACE)"
for _ in $(seq 100); do pgrep -f "sleep 119.$$" >/dev/null || break; sleep 0.05; done
pgrep -f "sleep 119.$$" >/dev/null && fail "the killed lab's command (its sleep) still runs"
echo "ok: the killed lab's command stopped, its children too"

# 5. A namespace that exists already is refused and left alone.
id=$(($$ % 1000 + 4000000))
ip netns add "dvlab$id" || fail "cannot make the decoy namespace"
rc=0
DVLAB_ID=$id "$LAB" -B "$top_builddir" responder -- true 2>"$TMP/err" || rc=$?
present=$(ip netns list | awk -v n="dvlab$id" '$1 == n')
ip netns del "dvlab$id"
assert_eq "existing namespace: exit" 1 "$rc"
grep -q "exists already: not mine, not touched" "$TMP/err" || fail "refusal: $(cat "$TMP/err")"
assert_eq "existing namespace left alone" "dvlab$id" "$present"
