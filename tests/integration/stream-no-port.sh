#!/usr/bin/env bash
# stream-no-port: TCP connections that find no local port left (connect's EADDRNOTAVAIL)
# are named as such (and UDP sockets that find none, connect's EAGAIN, fail the run naming it), counted apart (conn_no_port, the Connections line) and given a way
# out in the report. The ephemeral range is made 8 ports wide (net.ipv4.ip_local_port_range
# is per network namespace: each part runs in a namespace of its own, made by unshare,
# with only lo; nothing leaves it). Skipped without root or network namespaces.
. "$(dirname "$0")/lib.sh"

[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
PORTS="40000 40007" # 8 ports
NOPORT="cannot connect: no local port left (net.ipv4.ip_local_port_range all in use, e.g. by TIME_WAIT)"


# in_netns PART: this script again, running PART in a new network namespace.
in_netns() {
	local rc=0
	unshare -n -- env DV_NOPORT_PART="$1" bash "$0" || rc=$?
	[ $rc = 0 ] || fail "part $1 failed (status $rc)"
}

# netns_setup: lo up, 8 local ports, TIME_WAIT never reused (on loopback the kernel's
# default, tcp_tw_reuse 2, would reuse them), the responder's TCP port outside the range.
netns_setup() {
	ip link set lo up
	sysctl -qw net.ipv4.ip_local_port_range="$PORTS"
	sysctl -qw net.ipv4.tcp_tw_reuse=0
	head -100 "$top_srcdir/querylists/soa.txt" >"$TMP/list.txt"
	start_responder R -T 1 --tcp-port 5300
}

case "${DV_NOPORT_PART:-}" in
"")
	[ "$(id -u)" = 0 ] || skip_lacks "needs root for a network namespace"
	command -v unshare >/dev/null && command -v ip >/dev/null && command -v sysctl >/dev/null ||
		skip "unshare, ip or sysctl not installed (util-linux, iproute2, procps: scripts/packages.txt)"
	command -v python3 >/dev/null || skip "python3 not installed"
	unshare -n true 2>/dev/null || skip_lacks "cannot create a network namespace here"
	in_netns first
	in_netns reopen
	in_netns udp
	exit 0
	;;
first)
	echo "== -c 50 over 8 ports: the ninth connect finds none; no connection was ever up, so the pass fails with the cause"
	netns_setup
	rc=0
	"$DV" -m tcp -s 127.0.0.1 -p 5300 -d "$TMP/list.txt" -c 50 -T 1 -n 1 >"$TMP/first.out" 2>&1 || rc=$?
	assert_eq "exit status (the run failed)" 3 "$rc"
	stop_responder R
	grep -qF "worker 0: TCP connection to the server failed: $NOPORT" "$TMP/first.out" ||
		fail "no 'no local port' message: $(tail -3 "$TMP/first.out")"
	;;
reopen)
	echo "== 4 connections of 1 query each (--queries-per-conn 1) over 8 ports: 8 open, then every reopen finds no port"
	netns_setup
	rc=0
	"$DV" -m tcp -s 127.0.0.1 -p 5300 -d "$TMP/list.txt" -c 4 -T 1 -l 2 --queries-per-conn 1 \
		--json "$TMP/reopen.json" --csv "$TMP/reopen.csv" --dns-metrics "$TMP/reopen.jsonl" \
		>"$TMP/reopen.out" 2>&1 || rc=$?
	assert_eq "exit status" 0 "$rc"
	stop_responder R
	# Each port carried one connection, then sat in TIME_WAIT for the rest of the run.
	assert_eq "sent completed opened recycled refused timeouts" "8 8 8 8 0 0" \
		"$(jc "$TMP/reopen.json" sent completed conn_opened conn_recycled conn_refused conn_timeouts)"
	assert_eq "the responder's connections" 8 "$(resp_count R tcp-connections)"
	read -r failed noport <<<"$(jc "$TMP/reopen.json" conn_failed conn_no_port)"
	assert_ge "no local port (the 4 reopens after the eighth answer, then their retries)" 4 "$noport"
	assert_eq "every failure found no port" "$failed" "$noport"
	# The history (header version 6 and later) and dns-metrics carry the same split.
	assert_eq "CSV conn_failed conn_no_port conn_refused conn_timeouts = the results file's" \
		"$failed $noport 0 0" \
		"$(csv_row "$TMP/reopen.csv" 1 conn_failed conn_no_port conn_refused conn_timeouts)"
	assert_eq "dns-metrics connections_failed, _no_port, _refused, _timed_out = the results file's" \
		"$failed $noport 0 0" \
		"$(mconn "$TMP/reopen.jsonl" connections_failed connections_no_port connections_refused connections_timed_out)"
	v6="conn_syn_retries conn_backoffs conn_idle_closed conn_lost"
	assert_eq "CSV $v6 = the results file's" "$(jc "$TMP/reopen.json" $v6)" "$(csv_row "$TMP/reopen.csv" 1 $v6)"
	grep -qF "failed $failed (refused 0, timed out 0, no local port $noport), abandoned 0" \
		"$TMP/reopen.out" || fail "Connections line: $(grep 'Connections:' "$TMP/reopen.out")"
	grep -qF "  No local port:        $noport attempts (every port of net.ipv4.ip_local_port_range" \
		"$TMP/reopen.out" || fail "no 'No local port' line: $(cat "$TMP/reopen.out")"
	"$DV" report "$TMP/reopen.json" >"$TMP/re.out"
	assert_eq "dnsvolley report's connection lines = the run's" \
		"$(grep -E '^  (Connections|No local port):' "$TMP/reopen.out")" \
		"$(grep -E '^  (Connections|No local port):' "$TMP/re.out")"
	;;
udp)
	netns_setup
	# The responder's UDP socket took a port of the range when the kernel picked one there.
	free=8
	[ "$R_PORT" -lt 40000 ] || [ "$R_PORT" -gt 40007 ] || free=7
	echo "== UDP, -c 16 over $free free ports: socket $((free + 1))'s connect (its autobind) finds none; the run fails naming the cause"
	rc=0
	"$DV" -s 127.0.0.1 -p "$R_PORT" -d "$TMP/list.txt" -c 16 -T 1 -n 1 >"$TMP/udp.out" 2>&1 || rc=$?
	assert_eq "exit status (the run failed)" 3 "$rc"
	grep -qF "cannot connect socket $((free + 1)) to the server: no local port left (every port of net.ipv4.ip_local_port_range is in use)" \
		"$TMP/udp.out" || fail "no 'no local port' message: $(tail -3 "$TMP/udp.out")"
	echo "== UDP, -c $free: every socket has a port, every query answered"
	rc=0
	"$DV" -s 127.0.0.1 -p "$R_PORT" -d "$TMP/list.txt" -c "$free" -T 1 -n 1 --json "$TMP/udp.json" >"$TMP/udp8.out" 2>&1 || rc=$?
	assert_eq "exit status" 0 "$rc"
	assert_eq "sent completed" "100 100" "$(jc "$TMP/udp.json" sent completed)"
	stop_responder R
	;;
esac
