#!/usr/bin/env bash
# dnsvolley resperf takes resperf 2.x's command lines: each line given to Debian's resperf
# and to `dnsvolley resperf` is accepted by both, or refused by dnsvolley with a message
# naming the flag ("dnsvolley resperf: -y: ..."). The plot files of one command line are
# compared column by column: the same header and columns, the time at each interval's
# midpoint, the target rate at that midpoint, and no row after sending stopped (no -t
# drain). Structure only: no rate or timing is asserted.
. "$(dirname "$0")/lib.sh"

# Refused before anything runs, and named: -P to a path that cannot be written (resperf
# itself finds out only after its test), -F N, a bad -y, an unknown flag, a bad -O.
refused() { # EXPECTED-PREFIX ARGS...
	local want=$1 rc=0
	shift
	"$DV" resperf "$@" </dev/null >"$TMP/ref.out" 2>"$TMP/ref.err" || rc=$?
	assert_eq "dnsvolley resperf $*: exit" 2 "$rc"
	grep -q "^dnsvolley resperf: $want" "$TMP/ref.err" || fail "$*: $(cat "$TMP/ref.err")"
	[ ! -s "$TMP/ref.out" ] || fail "$*: printed on stdout: $(cat "$TMP/ref.out")"
}
refused "-P /nonexistent/x: No such file" -P /nonexistent/x -m 10 -r 1
refused "-F: dnsvolley does not end the ramp" -F 1000
refused "-y: 'hmac-x' is not a TSIG algorithm" -y hmac-x:key:YWJjZA==
refused "-Z is not a resperf flag" -Z
refused "'--json' is not a resperf flag: resperf's flags are single letters, and its settings with names go through -O" \
	-m 10 --json x.json
refused "'--help' is not a resperf flag: resperf's flags are single letters (-h for help)" --help
refused "-O: 'nope=1' is not a long option" -O nope=1
refused "-M: 'quic' is not a mode" -M quic
refused "-O num-queries-per-conn needs -M tcp" -O num-queries-per-conn=5

start_responder R --tcp-port 0 --tcp-port-file "$TMP/tcp.port"
for _ in $(seq 100); do [ -s "$TMP/tcp.port" ] && break; sleep 0.02; done
TCP_PORT=$(cat "$TMP/tcp.port")
head -2000 "$top_srcdir/querylists/soa.txt" >"$TMP/list.txt"
LPORT=$(free_port)

# Each line: a short ramp (100 qps over 0.4 s) with the flags under test. Every query is
# answered: -t 30 only bounds the wait (the ramp ends with its last answer, resperf's too).
BASE=(-s 127.0.0.1 -d "$TMP/list.txt" -m 100 -r 0.4 -i 0.1 -t 30)
lines=(
	"-p $R_PORT"
	"-p $R_PORT -f inet"
	"-p $R_PORT -M udp -a 127.0.0.1 -x $LPORT"
	"-p $R_PORT -b 64 -e -E 10:0102 -D"
	"-p $R_PORT -c 0.2 -L 5 -C 2 -q 100"
	"-p $R_PORT -v -W -R -F 0"
	"-p $R_PORT -O suppress=timeouts,congestion"
	"-p $TCP_PORT -M tcp"
	"-p $TCP_PORT -M tcp -O num-queries-per-conn=10"
)
for l in "${lines[@]}"; do
	# shellcheck disable=SC2086
	(cd "$TMP" && "$DV" resperf "${BASE[@]}" $l -P "$TMP/dv.plot") >"$TMP/dv" 2>&1 ||
		fail "dnsvolley resperf $l: exit $?: $(cat "$TMP/dv")"
	grep -q '^  Maximum throughput: ' "$TMP/dv" || fail "dnsvolley resperf $l: no summary"
	if have_setup resperf "resperf not installed (dnsperf): the lines not checked against it"; then
		# shellcheck disable=SC2086
		(cd "$TMP" && resperf "${BASE[@]}" $l -P "$TMP/rp.plot") >"$TMP/rp" 2>&1 ||
			fail "resperf $l: exit $? (the line is not resperf's): $(cat "$TMP/rp")"
	fi
	echo "ok: accepted: $l"
done
for h in -h -H; do
	"$DV" resperf "$h" >"$TMP/h" 2>&1 || fail "dnsvolley resperf $h: exit $?"
	grep -q '^Usage: dnsvolley resperf' "$TMP/h" || fail "$h: $(cat "$TMP/h")"
done

# The plot files of one line, column by column: 2 s ramp to 400 qps, 1 s constant, -i 0.5,
# and a -t of 30 s whose drain must add no rows (every query is answered: -t only bounds
# the wait, and the run ends with its last answer).
PL=(-s 127.0.0.1 -p "$R_PORT" -d "$TMP/list.txt" -m 400 -r 2 -c 1 -i 0.5 -t 30)
"$DV" resperf "${PL[@]}" -P "$TMP/dv.plot" >"$TMP/dv" 2>&1 || fail "dnsvolley resperf: $(cat "$TMP/dv")"
# check_plot FILE WHO: header, 8 columns, midpoints, targets; prints the row count.
check_plot() {
	awk -v who="$2" '
	NR == 1 {
		if ($0 != "# time target_qps actual_qps responses_per_sec failures_per_sec avg_latency connections conn_avg_latency") {
			print who ": header: " $0; exit 1
		}
		next
	}
	{
		n++
		if (NF != 8) { print who ": row " n " has " NF " columns"; exit 1 }
		mid = (n - 0.5) * 0.5
		if ($1 - mid > 0.001 || mid - $1 > 0.001) { print who ": row " n " time " $1 ", not the midpoint " mid; exit 1 }
		target = mid < 2 ? 400 * mid / 2 : 400
		if ($2 - target > 0.01 || target - $2 > 0.01) { print who ": row " n " target " $2 ", not " target " (at the midpoint)"; exit 1 }
		if ($1 + 0.25 > 3.0001) { print who ": row " n " at " $1 " is after sending stopped (3 s)"; exit 1 }
	}
	END { print n }' "$1"
}
dvrows=$(check_plot "$TMP/dv.plot" dnsvolley) || fail "$dvrows"
# Sending stops at 3 s: the last row is the interval [2.5, 3) whose midpoint is 2.75.
assert_eq "dnsvolley plot rows (intervals while sending)" 6 "$dvrows"
assert_eq "dnsvolley last row: the interval that ends when sending stops" "2.750" \
	"$(awk 'END { print $1 }' "$TMP/dv.plot")"
if have_setup resperf "resperf not installed (dnsperf): its plot not compared"; then
	resperf "${PL[@]}" -P "$TMP/rp.plot" >"$TMP/rp" 2>&1 || fail "resperf: $(cat "$TMP/rp")"
	rprows=$(check_plot "$TMP/rp.plot" resperf) || fail "$rprows"
	# resperf leaves out the bucket in which it entered its wait phase, which is the last
	# full one when sending ends on a boundary: one row fewer, every other row alike.
	assert_eq "resperf plot rows" 5 "$rprows"
	assert_eq "same time and target columns on the common rows" \
		"$(awk 'NR <= 6 { print $1, $2 }' "$TMP/rp.plot")" \
		"$(awk 'NR <= 6 { print $1, $2 }' "$TMP/dv.plot")"
fi
# Without -R, sending stops when the list runs out (as resperf's), and says so.
head -50 "$TMP/list.txt" >"$TMP/short.txt"
"$DV" resperf -s 127.0.0.1 -p "$R_PORT" -d "$TMP/short.txt" -m 400 -r 1 -t 30 -i 0.1 \
	-P "$TMP/short.plot" >"$TMP/short" 2>"$TMP/short.err" || fail "short list: exit $?"
assert_eq "without -R: queries sent" 50 "$(report_field "$TMP/short" "Queries sent")"
grep -q "^dnsvolley resperf: ran out of query data after 50 queries" "$TMP/short.err" ||
	fail "no 'ran out' warning: $(cat "$TMP/short.err")"
echo "PASS"
