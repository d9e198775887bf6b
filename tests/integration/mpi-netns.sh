#!/usr/bin/env bash
# mpi-netns: 2 MPI ranks on two separate "hosts": network namespaces with their own
# addresses (198.19.S.2 and .3, from the benchmarking range 198.18.0.0/15) on a bridge
# with this machine (198.19.S.1), made by the test; nothing leaves the machine. Open MPI starts each rank's daemon through an rsh
# agent that runs it with `ip netns exec` (--mca plm_rsh_agent); the ranks reach the
# responder on the bridge. Each namespace's own kernel counters show that its rank sent
# its half: the ranks really ran apart. Skipped without root or network namespaces.
. "$(dirname "$0")/lib.sh"
grep -q '^#define HAVE_MPI 1' "$top_builddir/config.h" || skip "built without --with-mpi"
command -v mpirun >/dev/null || fail "built --with-mpi but mpirun is missing"
command -v ip >/dev/null && command -v unshare >/dev/null || skip "ip or unshare not installed"
[ "$(id -u)" = 0 ] || skip_lacks "needs root for network namespaces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

S=$(($$ % 200 + 20)) # a /24 of 198.19.0.0/16 per test run (scripts/lab uses 198.18.0.0/16)
NS2=dvmpi$$a NS3=dvmpi$$b BR=dvbr$$
net_down() {
	ip netns del "$NS2" 2>/dev/null || true
	ip netns del "$NS3" 2>/dev/null || true
	ip link del "$BR" 2>/dev/null || true
}
trap 'net_down; cleanup' EXIT
ip link add "$BR" type bridge 2>/dev/null || skip_lacks "cannot create a bridge here"
ip addr add "198.19.$S.1/24" dev "$BR"
ip link set "$BR" up
for n in 2 3; do
	ns=$NS2
	[ $n = 3 ] && ns=$NS3
	ip netns add "$ns" || skip_lacks "cannot create network namespaces here"
	ip link add "dvv$$$n" type veth peer name "dvp$$$n"
	ip link set "dvp$$$n" netns "$ns"
	ip link set "dvv$$$n" master "$BR"
	ip link set "dvv$$$n" up
	ip netns exec "$ns" ip addr add "198.19.$S.$n/24" dev "dvp$$$n"
	ip netns exec "$ns" ip link set "dvp$$$n" up
	ip netns exec "$ns" ip link set lo up
done
# The rsh agent: "HOST command..." runs the command in HOST's network namespace, with
# its own host name (a UTS namespace: gen2, gen3) and its own temporary directory (Open
# MPI's session directory is per host name and would collide).
cat >"$TMP/agent" <<AGENT
#!/bin/sh
host=\$1
shift
case \$host in
198.19.$S.2) ns=$NS2 hn=gen2 ;;
198.19.$S.3) ns=$NS3 hn=gen3 ;;
*) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
echo "\$host" >>"$TMP/agent.log"
exec ip netns exec "\$ns" unshare --uts /bin/sh -c \\
	'hostname "\$1"; TMPDIR=\$2; export TMPDIR; mkdir -p "\$TMPDIR"; shift 2; exec /bin/sh -c "\$*"' \\
	sh "\$hn" "$TMP/tmp.\$hn" "\$@"
AGENT
chmod +x "$TMP/agent"

LIST="$TMP/list.txt"
for i in $(seq 0 19999); do echo "n$i.netns.example. A"; done >"$LIST"
R_PORT=
pf="$TMP/R.port"
"$RESPONDER" -a "198.19.$S.1" -p 0 --port-file "$pf" >"$TMP/R.out" 2>"$TMP/R.err" &
started R $! "$pf" responder
rc=0
"${MPI_ENV[@]}" timeout -k 5 120 mpirun --mca plm_rsh_agent "$TMP/agent" \
	--mca oob_tcp_if_include "198.19.$S.0/24" --mca btl self,tcp \
	--mca btl_tcp_if_include "198.19.$S.0/24" -H "198.19.$S.2,198.19.$S.3" -np 2 \
	"$DV" --no-progress --no-server-version -s "198.19.$S.1" -p "$R_PORT" -d "$LIST" \
	-c 4 -q 200 -t 30 --json "$TMP/ns.json" >"$TMP/out.txt" 2>"$TMP/err.txt" || rc=$?
[ "$rc" = 0 ] || fail "mpirun exited $rc: $(cat "$TMP/err.txt")"
stop_responder R
assert_eq "both hosts launched through the agent" "198.19.$S.2 198.19.$S.3" \
	"$(sort "$TMP/agent.log" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "rank hosts" "0 gen2,1 gen3" \
	"$(python3 -c 'import json,sys; print(",".join("%d %s" % (r["rank"], r["host"]) for r in json.load(open(sys.argv[1]))["passes"][0]["ranks"]))' "$TMP/ns.json")"
assert_eq "merged sent" 20000 "$(report_field "$TMP/out.txt" "Queries sent")"
assert_eq "merged completed" 20000 "$(report_field "$TMP/out.txt" "Queries completed")"
assert_eq "responder received" 20000 "$(resp_count R received)"
# Udp: InDatagrams NoPorts InErrors OutDatagrams ...: each namespace's own kernel sent
# exactly its rank's 10,000 queries.
for ns in "$NS2" "$NS3"; do
	assert_eq "UDP datagrams sent from $ns" 10000 \
		"$(ip netns exec "$ns" awk '/^Udp:/ { n++ } /^Udp:/ && n == 2 { print $5 }' /proc/net/snmp)"
done
echo "PASS"
