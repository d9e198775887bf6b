#!/usr/bin/env bash
# nsd.conf.sh DIR PORT ZONE...: an nsd.conf for a test instance: loopback only, PORT, no
# chroot/user switch, state and logs in DIR, control over a unix socket (no certificates),
# response rate limiting off; each ZONE served from DIR/ZONE.zone.
set -euo pipefail
dir=$1 port=$2
shift 2
cat <<C
server:
	ip-address: 127.0.0.1@$port
	port: $port
	ip4-only: yes
	server-count: 1
	username: ""
	chroot: ""
	zonesdir: "$dir"
	database: ""
	zonelistfile: "$dir/zone.list"
	xfrdfile: "$dir/xfrd.state"
	xfrdir: "$dir"
	pidfile: "$dir/nsd.pid"
	logfile: "$dir/nsd.log"
	verbosity: 1
	hide-version: no
	rrl-ratelimit: 0
	rrl-whitelist-ratelimit: 0
remote-control:
	control-enable: yes
	control-interface: "$dir/nsd.ctl"
C
for z in "$@"; do
	printf 'zone:\n\tname: "%s"\n\tzonefile: "%s.zone"\n' "$z" "$z"
done
