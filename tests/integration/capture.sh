#!/usr/bin/env bash
# capture.sh: the report's counts and wire-clock latency percentiles against a tcpdump capture on lo.
#
# bench/capture-compare.sh runs dnsvolley under tcpdump and checks: query packets
# on the wire = sent, answers matched to a query = completed + late, answer
# packets = matched + unexpected, and p50/p90/p99 within max(5 us, 5%) of the
# capture's (query packet -> its answer packet). Closed loop (--clock wire, one
# socket) and paced (-Q, where the wire clock is the default). Bounded: 10,000
# queries and 20,000 queries. On a loaded machine a percentile may miss; each
# case gets three tries, and the counts must hold on every try.
. "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || skip "no tcpdump (Debian package tcpdump)"
[ "$(id -u)" = 0 ] || skip "capturing on lo needs root"

start_responder r --reflect --no-gso
LIST="$top_srcdir/querylists/soa.txt"

try_case() { # NAME dnsvolley-args...
	local name=$1 i out
	shift
	for i in 1 2 3; do
		out="$TMP/$name.$i"
		if bash "$top_srcdir/bench/capture-compare.sh" -B "$top_builddir" -p "$r_PORT" -- \
			-s 127.0.0.1 -p "$r_PORT" -d "$LIST" "$@" >"$out" 2>&1; then
			cat "$out"
			echo "ok: $name: counts and percentiles agree with the capture (try $i)"
			return 0
		fi
		cat "$out"
		# Counts never get a second chance; only the percentiles may miss under load.
		if grep -q "!=" "$out"; then fail "$name: counts differ from the capture"; fi
		grep -q "capture-compare: DIFFERS" "$out" || skip "$name: capture problem: $(tail -n 1 "$out")"
	done
	fail "$name: percentiles outside the tolerance in 3 tries"
}

try_case closed-loop -c 1 -q 10 -n 1 --clock wire
grep -q "report (clock wire)" "$TMP/closed-loop.1" || fail "closed loop: the report does not say clock wire"
try_case paced -c 1 -q 100 -Q 20000 -l 1
grep -q "report (clock wire)" "$TMP/paced.1" || fail "paced: the default clock is not wire"

# -v prints each answer's own latency: one line per completed answer.
"$DV" -s 127.0.0.1 -p "$r_PORT" -d "$LIST" -c 1 -q 10 -n 1 --clock wire -v >"$TMP/v.out" 2>&1
assert_eq "-v latency lines = completed" "$(report_field "$TMP/v.out" "Queries completed")" \
	"$(grep -c '^> NOERROR .* [0-9]\.[0-9]*$' "$TMP/v.out")"
stop_responder r
