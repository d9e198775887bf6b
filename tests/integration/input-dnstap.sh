#!/usr/bin/env bash
# A dnstap file written by a real unbound (its dnstap output captured by fstrm_capture)
# while dnsvolley queries it: the dnstap reader (src/input) finds a CLIENT_QUERY per
# query sent (less what unbound's lossy dnstap drops), from as many clients as the
# run had sockets, and exactly the frames libfstrm's fstrm_dump sees.
. "$(dirname "$0")/lib.sh"
DUMP="$top_builddir/tests/helpers/input-dump"
[ -x "$DV" ] && [ -x "$DUMP" ] || fail "binaries not built"
command -v unbound >/dev/null || skip "unbound not installed"
command -v fstrm_capture >/dev/null || skip "fstrm_capture not installed (fstrm-bin)"
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
sent=$(report_field "$TMP/report" "Queries sent")
assert_eq "sent" "$N" "$sent"
"$DUMP" "$TAP" >"$TMP/dump" 2>"$TMP/dump.err" || fail "input-dump: $(cat "$TMP/dump.err")"
head -1 "$TMP/dump"
read -r _ kind _ queries _ clients _ malformed _ ignored _ records _ <"$TMP/dump"
assert_eq "kind detected" dnstap "$kind"
assert_eq "malformed" 0 "$malformed"
# Every frame read, against libfstrm's own reader: its data frames + our STOP frame.
frames=$( (fstrm_dump "$TAP" 2>&1 || true) | grep -c "^Data frame")  # it prints on stderr
assert_eq "frames read = fstrm_dump's data frames + STOP" "$((frames + 1))" "$records"
assert_eq "queries + ignored (responses, STOP) = frames read" "$records" "$((queries + ignored))"
# Lines after the first: "TS_NS CLIENT QTYPE". The run's queries are the A ones, the
# probes TXT. unbound's dnstap is lossy by design (a bounded queue between the
# workers and its writer thread): it drops a few messages even at 1,000 q/s, so
# the CLIENT_QUERY count is at most what was sent and not far below.
a=$(awk 'NR > 1 && $3 == 1' "$TMP/dump" | wc -l)
assert_le "CLIENT_QUERY A messages <= sent" "$sent" "$a"
assert_ge "CLIENT_QUERY A messages >= 97% of sent" "$((sent * 97 / 100))" "$a"
assert_eq "every query is an A or a TXT probe" "$queries" \
	"$(awk 'NR > 1 && ($3 == 1 || $3 == 16)' "$TMP/dump" | wc -l)"
assert_eq "their clients = the run's sockets" 4 \
	"$(awk 'NR > 1 && $3 == 1 { print $2 }' "$TMP/dump" | sort -u | wc -l)"
# AUTH_QUERY: a resolver logs none.
if "$DUMP" -q -A "$TAP" >/dev/null 2>"$TMP/auth.err"; then fail "AUTH_QUERY found in a resolver's log"; fi
grep -q "no queries" "$TMP/auth.err" || fail "$(cat "$TMP/auth.err")"
echo "PASS: input-dnstap"
