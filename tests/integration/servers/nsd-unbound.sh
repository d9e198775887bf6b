# nsd-unbound.sh: a real cache for the integration tests, sourced after lib.sh: nsd
# (authoritative) serves zones built from the bundled domain list, unbound (resolver)
# stubs them to nsd; both on loopback high ports, state and logs in $TMP. In order:
#   require_nsd_unbound  skip unless nsd, unbound, their -control/-checkconf and ss exist
#   make_zone_lists      the names and the zones: sets N_PER_ZONE, ZONES, N; writes
#                        $TMP/soa.txt ("LABEL.ZONE SOA") and $TMP/a.txt ("www.LABEL.ZONE A")
#   start_nsd_unbound    starts both, waits until they answer control; sets NPORT, UPORT,
#                        UNBOUND_FLUSH; both are stopped on exit (then lib.sh's cleanup);
#                        with UNBOUND_TLS=1 unbound serves DoT too, on UTLS (SNI
#                        dnsvolley.test, make_cert's certificate)
# Then: nsd_queries, unbound_queries (their own counters), nsd_count_hook FILE.
_NSD_UNBOUND_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

require_nsd_unbound() {
	local t
	for t in nsd nsd-control nsd-checkconf unbound unbound-control unbound-checkconf ss; do
		command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || skip "$t not installed (scripts/install-deps)"
	done
	PATH=$PATH:/usr/sbin
}

# Ports: free_port (lib.sh).

# Names: the bundled domain list (dots made dashes) spread over 4 zones, else generated.
make_zone_lists() {
	local k z
	N_PER_ZONE=500
	ZONES="z0.test z1.test z2.test z3.test"
	if [ -s "$top_srcdir/querylists/domains.txt" ]; then
		awk -v max=$((4 * N_PER_ZONE)) '/^#/ || !NF { next } { l = $1; gsub(/\./, "-", l) }
			!seen[l]++ { print l; if (++n == max) exit }' "$top_srcdir/querylists/domains.txt" >"$TMP/labels"
	else
		seq -f 'd%g' $((4 * N_PER_ZONE)) >"$TMP/labels"
	fi
	N=$(wc -l <"$TMP/labels")
	assert_eq "distinct names" $((4 * N_PER_ZONE)) "$N"
	k=0
	: >"$TMP/soa.txt"
	: >"$TMP/a.txt"
	for z in $ZONES; do
		sed -n "$((k * N_PER_ZONE + 1)),$(((k + 1) * N_PER_ZONE))p" "$TMP/labels" >"$TMP/labels.$z"
		bash "$_NSD_UNBOUND_DIR/zone.sh" "$z" <"$TMP/labels.$z" >"$TMP/$z.zone"
		awk -v z="$z" '{ print $1 "." z " SOA" }' "$TMP/labels.$z" >>"$TMP/soa.txt"
		awk -v z="$z" '{ print "www." $1 "." z " A" }' "$TMP/labels.$z" >>"$TMP/a.txt"
		k=$((k + 1))
	done
}

NSD_PID= UNBOUND_PID=
stop_nsd_unbound() {
	local p i
	[ -n "$UNBOUND_PID$NSD_PID" ] || return 0
	for p in $UNBOUND_PID $NSD_PID; do kill -TERM "$p" 2>/dev/null || true; done
	for i in $(seq 100); do
		{ kill -0 "$UNBOUND_PID" || kill -0 "$NSD_PID"; } 2>/dev/null || break
		sleep 0.05
	done
	for p in $UNBOUND_PID $NSD_PID; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}

nsd_queries() {
	nsd-control -c "$TMP/nsd.conf" stats_noreset | awk -F= '$1 == "num.queries" { print $2 }'
}

unbound_queries() {
	unbound-control -c "$TMP/unbound.conf" stats_noreset | awk -F= '$1 == "total.num.queries" { print $2 }'
}

# nsd_count_hook FILE: an --after-pass command that appends "KIND NSD_QUERIES" to FILE.
nsd_count_hook() {
	echo "echo \$DV_PASS_KIND \$(nsd-control -c $TMP/nsd.conf stats_noreset | awk -F= '\$1 == \"num.queries\" { print \$2 }') >> $1"
}

start_nsd_unbound() {
	local i
	NPORT=$(free_port)
	UPORT=$(free_port)
	[ "$NPORT" != "$UPORT" ] || UPORT=$((NPORT + 1))
	# shellcheck disable=SC2086
	bash "$_NSD_UNBOUND_DIR/nsd.conf.sh" "$TMP" "$NPORT" $ZONES >"$TMP/nsd.conf"
	if [ "${UNBOUND_TLS:-0}" = 1 ]; then
		make_cert
		UTLS=$(free_port)
		while [ "$UTLS" = "$NPORT" ] || [ "$UTLS" = "$UPORT" ]; do UTLS=$(free_port); done
	fi
	# shellcheck disable=SC2086
	UNBOUND_TLS_PORT=${UTLS:-} bash "$_NSD_UNBOUND_DIR/unbound.conf.sh" "$TMP" "$UPORT" "$NPORT" $ZONES \
		>"$TMP/unbound.conf"
	nsd-checkconf "$TMP/nsd.conf" || fail "nsd.conf rejected"
	unbound-checkconf "$TMP/unbound.conf" >/dev/null || fail "unbound.conf rejected"

	trap 'stop_nsd_unbound; cleanup' EXIT
	nsd -d -c "$TMP/nsd.conf" >"$TMP/nsd.out" 2>&1 &
	NSD_PID=$!
	unbound -d -c "$TMP/unbound.conf" >"$TMP/unbound.out" 2>&1 &
	UNBOUND_PID=$!
	for i in $(seq 200); do
		if nsd-control -c "$TMP/nsd.conf" status >/dev/null 2>&1 &&
			unbound-control -c "$TMP/unbound.conf" status >/dev/null 2>&1; then
			break
		fi
		kill -0 "$NSD_PID" 2>/dev/null || fail "nsd exited: $(cat "$TMP/nsd.out" "$TMP/nsd.log" 2>/dev/null)"
		kill -0 "$UNBOUND_PID" 2>/dev/null || fail "unbound exited: $(cat "$TMP/unbound.out" "$TMP/unbound.log" 2>/dev/null)"
		sleep 0.05
	done
	unbound-control -c "$TMP/unbound.conf" status >/dev/null || fail "unbound not ready"
	assert_eq "nsd queries before the study" 0 "$(nsd_queries)"

	# Empties unbound's cache for the zones (their parent, test.) before a cold pass.
	local uc="unbound-control -c $TMP/unbound.conf"
	UNBOUND_FLUSH="$uc flush_zone test >/dev/null && $uc flush_requestlist >/dev/null && $uc flush_infra all >/dev/null"
}
