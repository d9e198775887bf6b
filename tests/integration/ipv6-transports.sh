#!/usr/bin/env bash
# ipv6-transports: every transport over IPv6 loopback (::1), end to end. The responder
# listens on [::1] with all five listeners (UDP, TCP, DoT, DoH, DoQ); dnsvolley replays 300
# queries over each (-s [::1]:PORT, -c 3) and the counts agree exactly on both sides: sent =
# completed = the listener's received = answered, lost 0, 3 connections for each stream
# kind. Then -a ::1 for TCP and UDP: an IPv6 source binds and the passes run (::1 is also
# the default source on loopback, so this shows the bind works, not that it chose the
# source), and the result file's target. The other tests run over 127.0.0.1; an
# address family the client or a listener got wrong would pass them all.
. "$(dirname "$0")/lib.sh"

ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/' || skip_lacks "no ::1 on lo (IPv6 disabled)"
command -v openssl >/dev/null || skip "openssl not installed"
[ -x "$RESPONDER" ] && [ -x "$DV" ] || fail "binaries not built"
make_cert
awk 'BEGIN { for (i = 1; i <= 300; i++) print "v" i ".example AAAA" }' >"$TMP/list"

# The listeners: start_responder's -a 127.0.0.1 is overridden by the later -a ::1.
start_responder six -a ::1 --tcp-port 0 --tcp-port-file "$TMP/six.tcp" --tls-port 0 \
	--tls-port-file "$TMP/six.tls" --https-port 0 --https-port-file "$TMP/six.https" \
	--doq-port 0 --doq-port-file "$TMP/six.doq" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
grep -q "listening on \[::1\]:$six_PORT" "$TMP/six.err" || fail "start-up line: $(cat "$TMP/six.err")"

tls=(--tls-ca "$TMP/cert.pem" --tls-sni dnsvolley.test)
# dv KIND PORT ARGS...: one pass of the list over KIND to [::1]:PORT (a guard timeout only
# against a hang); report in $TMP/KIND.txt, results in $TMP/KIND.json. No version.bind
# query first (--no-server-version), so the listeners' counts are the list's alone.
dv() {
	local kind=$1 port=$2 rc=0
	shift 2
	timeout 120 "$DV" --no-progress -m "$kind" -s "[::1]:$port" -d "$TMP/list" -n 1 -c 3 \
		--no-server-version --json "$TMP/$kind.json" "$@" >"$TMP/$kind.txt" 2>"$TMP/$kind.err" || rc=$?
	assert_eq "$kind: exit status ($(head -3 "$TMP/$kind.err"))" 0 "$rc"
	assert_eq "$kind: sent" 300 "$(report_field "$TMP/$kind.txt" "Queries sent")"
	assert_eq "$kind: completed" 300 "$(report_field "$TMP/$kind.txt" "Queries completed")"
	assert_eq "$kind: lost" 0 "$(report_field "$TMP/$kind.txt" "Queries lost")"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$kind.err" || fail "$kind: sanitizer report"
}

dv udp "$six_PORT"
dv tcp "$(cat "$TMP/six.tcp")"
dv dot "$(cat "$TMP/six.tls")" "${tls[@]}"
dv doh "$(cat "$TMP/six.https")" "${tls[@]}"
dv doq "$(cat "$TMP/six.doq")" "${tls[@]}"
for kind in tcp dot doh doq; do
	assert_eq "$kind: connections opened" 3 "$(jc "$TMP/$kind.json" conn_opened)"
done
assert_eq "udp: the result's target address" "[::1]:$six_PORT" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["targets"][0]["address"])' \
		"$TMP/udp.json")"

# Source address -a ::1 (a UDP and a TCP pass more, 300 queries each).
dv udp "$six_PORT" -a ::1
dv tcp "$(cat "$TMP/six.tcp")" -a ::1
stop_responder six

# The listeners' own counts: each saw exactly what dnsvolley sent it.
assert_eq "responder: received (UDP: 2 passes)" 600 "$(resp_count six received)"
assert_eq "responder: answered (UDP)" 600 "$(resp_count six answered)"
assert_eq "responder: tcp-received (2 passes)" 600 "$(resp_count six tcp-received)"
assert_eq "responder: tcp-answered" 600 "$(resp_count six tcp-answered)"
assert_eq "responder: tcp-connections" 6 "$(resp_count six tcp-connections)"
assert_eq "responder: tcp-source-addresses (only ::1)" 1 "$(resp_count six tcp-source-addresses)"
for l in tls https doq; do
	assert_eq "responder: $l-received" 300 "$(resp_count six "$l-received")"
	assert_eq "responder: $l-answered" 300 "$(resp_count six "$l-answered")"
	assert_eq "responder: $l-connections" 3 "$(resp_count six "$l-connections")"
done
echo "PASS"
