# unbound-dnstap.sh: a dnstap file written by a real unbound, for the integration tests;
# sourced after lib.sh. The caller checks first that unbound (built with dnstap),
# fstrm_capture and kdig are installed.
#   record_unbound_dnstap N: dnsvolley sends N queries (n0..n99.dv.test A, 4 sockets, 1,000
#   q/s) to an unbound that answers dv.test itself (no upstream) and logs its client
#   queries and responses over dnstap to fstrm_capture. Sets TAP (the dnstap file); the
#   run's text report is $TMP/report. Readiness probes are TXT queries: told apart from
#   the run's A queries by their type.

# unbound_dnstap_conf PORT SOCK: the resolver's configuration.
unbound_dnstap_conf() {
	cat <<C
server:
	interface: 127.0.0.1
	port: $1
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
	dnstap-socket-path: "$2"
	dnstap-send-identity: yes
	dnstap-log-client-query-messages: yes
	dnstap-log-client-response-messages: yes
C
}

record_unbound_dnstap() {
	local n=$1 i port sock="$TMP/dnstap.sock" cap ub
	for i in $(seq "$n"); do echo "n$((i % 100)).dv.test A"; done >"$TMP/list"
	port=$(free_port)
	TAP="$TMP/unbound.dnstap"
	fstrm_capture -t protobuf:dnstap.Dnstap -u "$sock" -w "$TAP" 2>"$TMP/capture.err" &
	cap=$!
	_pids+=("$cap")
	for i in $(seq 200); do [ -S "$sock" ] && break; sleep 0.025; done
	[ -S "$sock" ] || fail "fstrm_capture did not start: $(cat "$TMP/capture.err")"

	unbound_dnstap_conf "$port" "$sock" >"$TMP/unbound.conf"
	unbound -d -c "$TMP/unbound.conf" 2>"$TMP/unbound.err" &
	ub=$!
	_pids+=("$ub")
	# Ready when it answers a TXT probe.
	for i in $(seq 200); do
		kdig @127.0.0.1 -p "$port" +retry=0 +timeout=1 probe.dv.test TXT 2>/dev/null |
			grep -q "status: NXDOMAIN" && break
		kill -0 "$ub" 2>/dev/null || fail "unbound exited: $(cat "$TMP/unbound.err" "$TMP/unbound.log" 2>/dev/null)"
		sleep 0.05
	done
	"$DV" --no-progress -s 127.0.0.1 -p "$port" -d "$TMP/list" -n 1 -c 4 -Q 1000 -t 30 \
		>"$TMP/report" 2>"$TMP/report.err" || fail "dnsvolley exited $?: $(cat "$TMP/report.err")"
	# unbound first (after a pause for its dnstap writer), then the capture (ends the file).
	sleep 0.5
	kill -TERM "$ub"
	wait "$ub" || true
	sleep 0.2
	kill -INT "$cap"
	wait "$cap" || true
}
