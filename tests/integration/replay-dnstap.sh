#!/usr/bin/env bash
# Replaying a dnstap file (issue 17): a real unbound logs its CLIENT_QUERY messages
# (as in input-dnstap.sh) while dnsvolley queries it from 4 sockets; the file is then
# replayed with --timing original against the responder: every CLIENT_QUERY in it is
# sent (exactly the count the reader finds), from one socket per logged client, and
# the responder receives each.
. "$(dirname "$0")/lib.sh"
DUMP="$top_builddir/tests/helpers/input-dump"
[ -x "$DV" ] && [ -x "$DUMP" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
command -v unbound >/dev/null || skip "unbound not installed"
command -v fstrm_capture >/dev/null || skip "fstrm_capture not installed (fstrm-bin)"
command -v kdig >/dev/null || skip "kdig not installed (knot-dnsutils)"
unbound -V 2>/dev/null | grep -q dnstap || skip "this unbound has no dnstap"

N=1000
for i in $(seq $N); do echo "n$((i % 100)).dv.test A"; done >"$TMP/list"
PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SOCK="$TMP/dnstap.sock"
TAP="$TMP/unbound.dnstap"
fstrm_capture -t protobuf:dnstap.Dnstap -u "$SOCK" -w "$TAP" 2>"$TMP/capture.err" &
CAP=$!
_pids+=("$CAP")
for i in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.025; done
[ -S "$SOCK" ] || fail "fstrm_capture did not start: $(cat "$TMP/capture.err")"

# A resolver that answers dv.test itself (no upstream) and logs client queries.
cat >"$TMP/unbound.conf" <<C
server:
	interface: 127.0.0.1
	port: $PORT
	do-ip6: no
	num-threads: 1
	username: ""
	chroot: ""
	directory: "$TMP"
	pidfile: "$TMP/unbound.pid"
	logfile: "$TMP/unbound.log"
	use-syslog: no
	do-daemonize: no
	access-control: 127.0.0.0/8 allow
	module-config: "iterator"
	local-zone: "test." nodefault
	local-zone: "dv.test." static
	local-data: "n1.dv.test. 300 A 192.0.2.1"
dnstap:
	dnstap-enable: yes
	dnstap-socket-path: "$SOCK"
	dnstap-send-identity: yes
	dnstap-log-client-query-messages: yes
	dnstap-log-client-response-messages: yes
C
unbound -d -c "$TMP/unbound.conf" 2>"$TMP/unbound.err" &
UB=$!
_pids+=("$UB")
# Ready when it answers a TXT probe (probes are TXT, the run asks A: told apart below).
for i in $(seq 200); do
	kdig @127.0.0.1 -p "$PORT" +retry=0 +timeout=1 probe.dv.test TXT 2>/dev/null |
		grep -q "status: NXDOMAIN" && break
	kill -0 "$UB" 2>/dev/null || fail "unbound exited: $(cat "$TMP/unbound.err" "$TMP/unbound.log" 2>/dev/null)"
	sleep 0.05
done
"$DV" --no-progress -s 127.0.0.1 -p "$PORT" -d "$TMP/list" -n 1 -c 4 -Q 1000 -t 1 \
	>"$TMP/report" 2>"$TMP/report.err" || fail "dnsvolley exited $?: $(cat "$TMP/report.err")"
sleep 0.5
kill -TERM "$UB"
wait "$UB" || true
sleep 0.2
kill -INT "$CAP"
wait "$CAP" || true
assert_eq "sent to unbound" "$N" "$(report_field "$TMP/report" "Queries sent")"
"$DUMP" -q "$TAP" >"$TMP/dump" 2>"$TMP/dump.err" || fail "input-dump: $(cat "$TMP/dump.err")"
read -r _ kind _ queries _ clients _ malformed _ <"$TMP/dump"
assert_eq "kind" dnstap "$kind"
assert_ge "CLIENT_QUERY messages logged (unbound's dnstap may drop a few)" $((N * 97 / 100)) "$queries"

start_responder R -T 1
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TAP" --timing original --speed 4 -t 1 \
	>"$TMP/replay" 2>"$TMP/replay.err" || fail "replay exited $?: $(cat "$TMP/replay.err")"
stop_responder R
cat "$TMP/replay"
grep -q "Replay input:         dnstap, 0 malformed" "$TMP/replay" || fail "input not reported"
assert_eq "replayed: every CLIENT_QUERY sent" "$queries" "$(report_field "$TMP/replay" "Queries sent")"
assert_eq "replayed: completed" "$queries" "$(report_field "$TMP/replay" "Queries completed")"
assert_eq "replayed: responder received" "$queries" "$(resp_count R received)"
assert_eq "clients replayed = clients logged" "$clients" "$(report_field "$TMP/replay" "Clients replayed")"
echo "PASS: replay-dnstap"
