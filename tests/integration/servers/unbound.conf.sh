#!/usr/bin/env bash
# unbound.conf.sh DIR PORT AUTH_PORT ZONE...: an unbound.conf for a test resolver on
# 127.0.0.1:PORT that stubs each ZONE to the authoritative server on 127.0.0.1:AUTH_PORT.
# Chosen so that one cache miss is one query to the authoritative server: no qname
# minimisation, no validator, no prefetch, no fetching of name-server addresses, no
# retransmits within 3 s.
# Control over a unix socket in DIR (no certificates): unbound-control -c CONF ...
# With UNBOUND_TLS_PORT set it also serves DNS over TLS on 127.0.0.1:UNBOUND_TLS_PORT,
# with DIR/cert.pem and DIR/key.pem (lib.sh's make_cert).
set -euo pipefail
dir=$1 port=$2 auth=$3
shift 3
cat <<C
server:
	interface: 127.0.0.1
	port: $port
	do-ip6: no
	num-threads: 1
	username: ""
	chroot: ""
	directory: "$dir"
	pidfile: "$dir/unbound.pid"
	logfile: "$dir/unbound.log"
	use-syslog: no
	verbosity: 1
	do-daemonize: no
	do-not-query-localhost: no
	access-control: 127.0.0.0/8 allow
	module-config: "iterator"
	qname-minimisation: no
	prefetch: no
	target-fetch-policy: "0 0 0 0 0"
	hide-version: no
	num-queries-per-thread: 1024
	outgoing-range: 1024
	# A loaded test machine can hold nsd's answer past unbound's first retransmit
	# timeout (376 ms for a new server); a retransmit would be a second backend query
	# for one name. A 3 s floor on the upstream timeout keeps one miss one query.
	infra-cache-min-rtt: 3000
	# RFC 6761 names: unbound answers "test." itself unless told not to.
	local-zone: "test." nodefault
remote-control:
	control-enable: yes
	control-interface: "$dir/unbound.ctl"
C
if [ -n "${UNBOUND_TLS_PORT:-}" ]; then
	printf 'server:\n\tinterface: 127.0.0.1@%s\n\ttls-port: %s\n' "$UNBOUND_TLS_PORT" "$UNBOUND_TLS_PORT"
	printf '\ttls-service-pem: "%s/cert.pem"\n\ttls-service-key: "%s/key.pem"\n' "$dir" "$dir"
fi
for z in "$@"; do
	printf 'stub-zone:\n\tname: "%s"\n\tstub-addr: 127.0.0.1@%s\n' "$z" "$auth"
done
