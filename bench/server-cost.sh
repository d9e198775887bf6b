#!/usr/bin/env bash
# server-cost: the seeds' kind of table on this machine: the bundled responder, unbound and
# knotd, each at one thread, side by side: qps, the server's CPU per answer (user/system),
# its system calls and context switches per answer (doc/numbers.md, "Server"). Then what
# reading the server costs the generator: the same responder run with the server figures
# off (--server-pid none) and on (default), interleaved, the generator's CPU per query.
# Figures for doc/performance.md.
#
# usage: bench/server-cost.sh [BUILD_DIR] [SECONDS] [ROUNDS]   (defaults: build, 4, 3)
# With two CPUs or more the servers run on CPU 1 and dnsvolley on CPU 0 (PIN=0: unpinned).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
secs=${2:-4}
rounds=${3:-3}
DV=$build/dnsvolley
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dvsrvcost.XXXXXX")
pids=()
cpin=() spin=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	cpin=(taskset -c 0) spin=(taskset -c 1)
fi
trap 'for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done; sleep 0.2; rm -rf "$tmp"' EXIT
port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_udp() { for _ in $(seq 100); do "$DV" -s "127.0.0.1:$1" -d "$tmp/list.txt" -l 0.2 -c 1 -q 1 --quiet --no-progress --server-pid none >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

for i in $(seq 2000); do echo "d$i.bench A"; done >"$tmp/list.txt"
{
	printf '$ORIGIN bench.\n$TTL 3600\n@ SOA ns.bench. h.bench. 1 3600 900 604800 3600\n@ NS ns.bench.\nns A 127.0.0.1\n'
	for i in $(seq 2000); do echo "d$i A 192.0.2.$((i % 250 + 1))"; done
} >"$tmp/bench.zone"

# the bundled responder
"${spin[@]}" "$build/dnsvolley-responder" -a 127.0.0.1 -p 0 --port-file "$tmp/rport" -T 1 >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/rport" ] && break; sleep 0.05; done
rport=$(cat "$tmp/rport")

# unbound, answering from local data (no upstream)
uport=$(port)
{
	printf 'server:\n\tinterface: 127.0.0.1\n\tport: %s\n\tnum-threads: 1\n\tusername: ""\n\tchroot: ""\n' "$uport"
	printf '\tdirectory: "%s"\n\tpidfile: "%s/u.pid"\n\tdo-daemonize: no\n\tuse-syslog: no\n\tlogfile: "%s/u.log"\n' "$tmp" "$tmp" "$tmp"
	printf '\taccess-control: 127.0.0.0/8 allow\n\tmodule-config: "iterator"\n\tlocal-zone: "bench." static\n'
	for i in $(seq 2000); do printf '\tlocal-data: "d%s.bench. 3600 A 192.0.2.%s"\n' "$i" $((i % 250 + 1)); done
	printf 'remote-control:\n\tcontrol-enable: no\n'
} >"$tmp/unbound.conf"
"${spin[@]}" unbound -d -c "$tmp/unbound.conf" >/dev/null 2>&1 &
pids+=($!)

# knotd, authoritative for bench.
kport=$(port)
cat >"$tmp/knot.conf" <<K
server:
    listen: 127.0.0.1@$kport
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    rundir: "$tmp"
control:
    listen: "$tmp/knot.sock"
database:
    storage: "$tmp"
log:
  - target: stderr
    any: error
zone:
  - domain: bench.
    file: "$tmp/bench.zone"
K
"${spin[@]}" knotd -c "$tmp/knot.conf" >/dev/null 2>"$tmp/knot.err" &
pids+=($!)
wait_udp "$uport" || { echo "unbound did not answer" >&2; exit 1; }
wait_udp "$kport" || { echo "knotd did not answer: $(cat "$tmp/knot.err")" >&2; exit 1; }

row() { # NAME JSON
	python3 - "$1" "$2" <<'P'
import json, sys
p = json.load(open(sys.argv[2]))["passes"][0]
s = p["server"]
a = max(s["answers"], 1)
sc = s["syscalls"]
sys_txt = "%.3f (recv %.3f, send %.3f, poll %.3f)" % (sc["all"] / a, sc["recv"] / a, sc["send"] / a, sc["poll"] / a) if sc["ok"] else "n/a: " + sc["why_not"]
print("%-10s %9.0f  %6.2f / %6.2f  %-42s %.4f / %.4f" % (sys.argv[1], p["qps"], s["cpu_user_s"] * 1e6 / a,
      s["cpu_sys_s"] * 1e6 / a, sys_txt, s["voluntary_ctxt_switches"] / a, s["involuntary_ctxt_switches"] / a))
P
}
echo "server     qps        us/answer user/sys  syscalls/answer                            ctx switches/answer vol/invol"
for r in $(seq "$rounds"); do
	for t in responder:$rport unbound:$uport knotd:$kport; do
		"${cpin[@]}" "$DV" -s "127.0.0.1:${t#*:}" -d "$tmp/list.txt" -l "$secs" -c 4 -q 100 --quiet \
			--no-progress --json "$tmp/$r.json" >/dev/null 2>&1
		row "${t%%:*}" "$tmp/$r.json"
	done
done

echo
echo "generator CPU per query (us) against the responder: server figures off (none), on without"
echo "system calls (nosys), on (auto)"
for r in $(seq "$rounds"); do
	line="round $r:"
	for mode in none nosys auto; do
		args=()
		[ "$mode" = none ] && args=(--server-pid none)
		[ "$mode" = nosys ] && args=(--server-syscalls no)
		"${cpin[@]}" "$DV" -s "127.0.0.1:$rport" -d "$tmp/list.txt" -l "$secs" -c 4 -q 100 --quiet \
			--no-progress "${args[@]}" --json "$tmp/g.json" >/dev/null 2>&1
		line="$line $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["passes"][0]; print("%s %.3f (qps %.0f)" % (sys.argv[2], (p["cpu_user_s"]+p["cpu_sys_s"])*1e6/max(p["counters"]["completed"],1), p["qps"]))' "$tmp/g.json" "$mode")"
	done
	echo "$line"
done
