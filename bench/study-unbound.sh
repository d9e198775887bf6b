#!/usr/bin/env bash
# study-unbound.sh: the field's cold/hot study, end to end, against two real resolvers.
#
# usage: bench/study-unbound.sh [-B BUILDDIR] [-n DOMAINS] [-r REPEATS] [-o DIR]
# Two unbound instances (one thread, two threads; otherwise one configuration:
# tests/integration/servers/unbound.conf.sh, caches of 64 and 128 MiB so that every name
# of the lists stays cached) stub the zone study.test to dnsvolley-responder, which holds
# each answer 1 ms (an authoritative server's round trip). dnsvolley-genlist makes the two
# lists of the field's study from DOMAINS names (default 30,000): SOA for every domain, A
# for every www. domain. One dnsvolley command then runs both lists against both
# resolvers, cold (after `unbound-control reload`, which empties the caches) then hot,
# REPEATS times (default 3), and prints the comparison table, the summary and the
# verdicts. The README's study example is this script's output. -o DIR keeps the report
# and the results file (study.json) there.
# What to expect: a cold pass asks every name upstream (the resolver's cost per answer and
# the 1 ms hold bound it); a hot pass is answered from the cache, several times faster.
# Loopback only; the resolvers and the responder are stopped at the end, even on failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build" domains=30000 repeats=3 keep=""
while getopts "B:n:r:o:" o; do
	case $o in
	B) build=$(cd "$OPTARG" && pwd) ;;
	n) domains=$OPTARG ;;
	r) repeats=$OPTARG ;;
	o) keep=$OPTARG ;;
	*) echo "usage: bench/study-unbound.sh [-B BUILDDIR] [-n DOMAINS] [-r REPEATS] [-o DIR]" >&2; exit 2 ;;
	esac
done
for t in unbound unbound-control python3; do
	command -v "$t" >/dev/null || { echo "study-unbound.sh: needs $t" >&2; exit 2; }
done
DV="$build/dnsvolley"
[ -x "$DV" ] && [ -x "$build/dnsvolley-responder" ] && [ -x "$build/dnsvolley-genlist" ] ||
	{ echo "study-unbound.sh: build first ($build)" >&2; exit 2; }
. "$top/bench/lib.sh"
bench_tmp study
cpin=() spin=()
bench_responder "$build/dnsvolley-responder" "$tmp/auth.port" --delay 1 -q
auth=$port

for i in $(seq "$domains"); do echo "d$i.study.test"; done >"$tmp/domains"
"$build/dnsvolley-genlist" --soa "$tmp/soa.txt" --www-a "$tmp/www-a.txt" "$tmp/domains"

# A free UDP and TCP port on 127.0.0.1 for each resolver.
free_port() {
	python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
flush=() targets=()
for threads in 1 2; do
	name=$([ "$threads" = 1 ] && echo 1-thread || echo 2-threads)
	dir="$tmp/$name" uport=$(free_port)
	mkdir -p "$dir"
	bash "$top/tests/integration/servers/unbound.conf.sh" "$dir" "$uport" "$auth" study.test |
		sed "s/num-threads: 1/num-threads: $threads/
s/num-queries-per-thread: 1024/num-queries-per-thread: 4096\\n\\tmsg-cache-size: 64m\\n\\trrset-cache-size: 128m/" \
			>"$dir/unbound.conf"
	unbound -d -c "$dir/unbound.conf" >"$dir/unbound.out" 2>&1 &
	bench_bg "$!"
	for _ in $(seq 200); do
		unbound-control -c "$dir/unbound.conf" status >/dev/null 2>&1 && break
		sleep 0.05
	done
	unbound-control -c "$dir/unbound.conf" status >/dev/null ||
		{ echo "study-unbound.sh: unbound ($name) did not start: $(cat "$dir/unbound.out")" >&2; exit 1; }
	targets+=(-s "$name=127.0.0.1:$uport")
	flush+=(--flush "$name=unbound-control -c $dir/unbound.conf reload")
done

out=${keep:-$tmp}
mkdir -p "$out"
rc=0
"$DV" --no-progress "${targets[@]}" -d "SOA=$tmp/soa.txt" -d "A=$tmp/www-a.txt" \
	--passes cold,hot --repeat "$repeats" -q 200 "${flush[@]}" --json "$out/study.json" \
	>"$out/report" 2>&1 || rc=$?
sed -n '/^Comparison table/,$p' "$out/report"
[ "$rc" = 0 ] || { echo "study-unbound.sh: dnsvolley exited $rc" >&2; exit "$rc"; }
