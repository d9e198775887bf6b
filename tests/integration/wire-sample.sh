#!/usr/bin/env bash
# wire-sample.sh: the wire clock's sample against the responder (--reflect: every query
# answered): counts exact, the latency's count = the answers stamped at both ends, every
# asked stamp landing on its own query (loopback stamps inside sendmmsg), 1/1 stamping
# all (the default when paced), the app clock none, and the same seeded sample run after
# run; each with both receive-stamp sources: the socket filter (the default where it
# loads: root) and every answer's control message (DV_NO_RX_FILTER=1, the fallback). A
# lossy and a silent server; hostile servers (junk with the answer's ID before it,
# duplicates, a flood of stray IDs): the filter's stamps that may be another datagram's
# are never used, and the report counts them (Receive stamps unused: the results file's
# rx_stamps_unused). Every results file read back by `dnsvolley report`: its Latency clock
# line (and Receive stamps unused) the run's own, byte for byte. Bounded: eighteen passes of
# 10,000 queries (-n 1), four of 20,000 (-Q 20000 -l 1) and one of 100 (-n 1 -l 1, 0.5 s
# timeout); the hostile servers live 60 s.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt" # 10,000 queries
HOSTILE="$top_builddir/tests/helpers/hostile"
[ -x "$DV" ] && [ -x "$RESPONDER" ] && [ -x "$HOSTILE" ] || fail "binaries not built"
start_responder R --reflect --no-gso

# lat FILE: the first pass's latency count, whether it carries p50_ci95_ns (1/0), its
# minimum and maximum (ns), and whether the socket filter took the receive stamps (1/0)
lat() {
	python3 - "$1" <<'P'
import json, sys
p = json.load(open(sys.argv[1]))["passes"][0]
l = p["latency"]
print(l["count"], int("p50_ci95_ns" in l), l.get("min_ns", 0), l.get("max_ns", 0),
      int(p.get("rx_stamp_filter", False)))
P
}
# rebuilt NAME: `dnsvolley report` of $TMP/NAME.json (into $TMP/NAME.re) reads the file back
# and prints the clock lines the run printed in $TMP/NAME.out, exactly.
rebuilt() {
	local name=$1
	"$DV" report "$TMP/$name.json" >"$TMP/$name.re" 2>&1 ||
		fail "$name: its results file does not read back: $(tail -n 3 "$TMP/$name.re")"
	[ "$(grep -c '^  Latency clock:' "$TMP/$name.out")" = 1 ] || fail "$name: not one Latency clock line"
	assert_eq "$name: dnsvolley report's clock lines = the run's" "$(clock_lines "$TMP/$name.out")" \
		"$(clock_lines "$TMP/$name.re")"
}
# unused_line NAME N: the Receive stamps unused line says the results file's N (none when 0),
# in the run's report and in dnsvolley report's.
unused_line() {
	local name=$1 want='' f
	[ "$2" = 0 ] || want="  Receive stamps unused: $2 (taken by a datagram that was not the query's answer: a duplicate, forged or stray answer; those queries untimed)"
	for f in out re; do
		assert_eq "$name ($f): Receive stamps unused" "$want" \
			"$(grep '^  Receive stamps unused:' "$TMP/$name.$f" || true)"
	done
}
run() { # NAME ARGS...: one pass, its report in $TMP/NAME.out, its results in $TMP/NAME.json
	local name=$1
	shift
	"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$LIST" --json "$TMP/$name.json" "$@" \
		>"$TMP/$name.out" 2>&1 || fail "$name: dnsvolley exited $?: $(tail -n 3 "$TMP/$name.out")"
	read -r sent completed lost asked timed < <(jc "$TMP/$name.json" sent completed lost stamps_asked wire_timed)
	read -r count ci min max filtered < <(lat "$TMP/$name.json")
	grep "Latency clock" "$TMP/$name.out" | sed "s/^ */  $name: /"
	assert_eq "$name: completed = sent" "$sent" "$completed"
	assert_eq "$name: lost" 0 "$lost"
	rebuilt "$name"
}

# The receive stamps' source expected: the filter where it loads (root, built with libbpf).
FILTER=0
[ "$(id -u)" = 0 ] && grep -q '^#define HAVE_XDP 1' "$top_builddir/config.h" && FILTER=1

# checks SRC: the sampled, seeded and 1/1 runs with receive stamps from SRC: "filter" (the
# default) or "cmsg" (DV_NO_RX_FILTER=1 set by the caller, or where the filter cannot load).
checks() {
	local src=$1 want rx
	if [ "$src" = filter ]; then
		want=1 rx="those by a socket filter"
	else
		want=0 rx=all
	fi
	# The default clock samples 1 in 16 unpaced: direct mode (-c 1), epoll mode (-c 8); paced
	# (-Q, where it stamps every query by default) with the rate given.
	for mode in "direct -c 1 -q 10 -n 1" "epoll -c 8 -q 64 -n 1" "paced -c 2 -q 100 -Q 20000 -l 1 --clock wire:1/16"; do
		set -- $mode
		name=$1
		shift
		run "$name" "$@"
		[ "$asked" -gt 0 ] && [ "$asked" -lt "$sent" ] || fail "$name: stamps asked $asked of $sent"
		read -r ntx nrx nord < <(jc "$TMP/$name.json" untimed_no_tx untimed_no_rx untimed_order)
		assert_eq "$name: every asked stamp timed its answer (untimed: no transmit stamp $ntx, no receive stamp $nrx, received before sent $nord)" "$asked" "$timed"
		assert_eq "$name: asked = timed + untimed" "$asked" "$((timed + ntx + nrx + nord))"
		assert_eq "$name: latency count = wire_timed" "$timed" "$count"
		assert_eq "$name: percentile intervals in the results" 1 "$ci"
		grep -q "transmit on 1 in 16 queries, receive on $rx), latency of $timed answers ($asked asked) of $completed\$" \
			"$TMP/$name.out" || fail "$name: the Latency clock line does not state the sample"
		grep -q "^  Sampling error (95%): p50 " "$TMP/$name.out" || fail "$name: no sampling error line"
		assert_eq "$name: receive stamps by the filter" "$want" "$filtered"
	done

	# Seeded: the same 10,000 sends draw the same sample.
	run direct2 -c 1 -q 10 -n 1
	read -r asked1 < <(jc "$TMP/direct.json" stamps_asked)
	assert_eq "the same sample run after run" "$asked1" "$asked"

	# 1/1: every query stamped at both ends, no sampling error to state.
	run all -c 1 -q 10 -n 1 --clock wire:1/1
	assert_eq "1/1: asked = sent" "$sent" "$asked"
	assert_eq "1/1: timed = completed" "$completed" "$timed"
	assert_eq "1/1: latency count" "$completed" "$count"
	assert_eq "1/1: no intervals" 0 "$ci"
	assert_eq "1/1: receive stamps by the filter" "$want" "$filtered"
	if [ "$src" = filter ]; then
		grep -q "receive stamps, receive by a socket filter)" "$TMP/all.out" ||
			fail "1/1: the Latency clock line does not name the filter"
	fi
	grep -q "Sampling error" "$TMP/all.out" && fail "1/1: a sampling error line"
	run all8 -c 8 -q 64 -n 1 --clock wire:1/1
	assert_eq "1/1 epoll: timed = completed" "$completed" "$timed"
	run paced-default -c 2 -q 100 -Q 20000 -l 1
	assert_eq "paced default: asked = sent" "$sent" "$asked"
	assert_eq "paced default: timed = completed" "$completed" "$timed"
	# Where each answer's latency is used, the default is every query (dv_run_stamp_every):
	# dnsperf's histogram counts every answer; -v prints each one's.
	run hist -c 1 -q 10 -n 1 -O latency-histogram
	assert_eq "--latency-histogram: asked = sent" "$sent" "$asked"
	assert_eq "--latency-histogram: timed = completed" "$completed" "$timed"
	run verbose -c 1 -q 10 -n 1 -v
	assert_eq "-v: asked = sent" "$sent" "$asked"
	run verbose16 -c 1 -q 10 -n 1 -v --clock wire:1/16
	[ "$asked" -lt "$sent" ] || fail "-v --clock wire:1/16: every query asked ($asked of $sent)"
}

if [ "$FILTER" = 1 ]; then
	checks filter
	export DV_NO_RX_FILTER=1
	checks cmsg
	unset DV_NO_RX_FILTER
else
	echo "  (the socket filter cannot load here: control messages only)"
	checks cmsg
fi

# The app clock: no stamps, every answer timed by the application.
run app -c 1 -q 10 -n 1 --clock app
assert_eq "app: asked" 0 "$asked"
assert_eq "app: timed" 0 "$timed"
assert_eq "app: latency count" "$completed" "$count"
grep -q "Latency clock:        app" "$TMP/app.out" || fail "app: the report does not say app"
unused_line app 0

# A server that drops every 10th query, and one that answers nothing: the sampled queries
# it never answered are simply not timed; counts stay exact, the file reads back (status 4:
# no answers at all).
start_responder D -T 1 --drop-every 10
run_lossy() { # NAME PORT STATUS ARGS...: STATUS the exit status expected
	local name=$1 port=$2 want=$3 rc=0
	shift 3
	"$DV" --no-progress -s 127.0.0.1 -p "$port" -d "$LIST" --json "$TMP/$name.json" "$@" \
		>"$TMP/$name.out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || fail "$name: dnsvolley exited $rc, not $want: $(tail -n 3 "$TMP/$name.out")"
	read -r sent completed lost asked timed < <(jc "$TMP/$name.json" sent completed lost stamps_asked wire_timed)
	read -r count ci < <(lat "$TMP/$name.json")
	rebuilt "$name"
}
run_lossy drops "$D_PORT" 0 -c 1 -q 100 -n 1 -t 1
assert_eq "drops: sent" 10000 "$sent"
assert_eq "drops: completed" 9000 "$completed"
assert_eq "drops: lost" 1000 "$lost"
assert_eq "drops: latency count = wire_timed" "$timed" "$count"
[ "$timed" -le "$asked" ] && [ "$asked" -gt 0 ] || fail "drops: timed $timed of $asked asked"
stop_responder D
start_responder S -T 1 --drop-every 1
run_lossy silent "$S_PORT" 4 -c 1 -q 100 -n 1 -t 0.5 -l 1
assert_eq "silent: completed" 0 "$completed"
assert_eq "silent: lost = sent" "$sent" "$lost"
assert_eq "silent: timed" 0 "$timed"
assert_eq "silent: latency count" 0 "$count"
[ "$asked" -gt 0 ] || fail "silent: no stamps asked"
stop_responder S

# Hostile servers, every query sampled (wire:1/1), both receive-stamp sources: the filter
# stamps the first datagram with an armed ID, which may not be the answer. Junk with the
# answer's ID just before it (--truncated: malformed) and a well-formed answer for another
# name with the ID of a query in flight (--flood: 5 stray IDs a query, some of them in
# flight) make the filter's stamp untrustworthy: that query is left untimed (the junk
# before every answer: only those whose junk is 1 octet, no ID, are timed), never timed
# by the junk's stamp. Duplicates after
# the answer change nothing of the answer's own stamp. Counts exact; every latency
# in (0, -t] (stamps_sane).
# The hostile and duplicate runs' -t (seconds) and what it makes of a latency: an answer
# whose stamp is more than -t after its send is counted lost or late, never timed
# (dv_engine_receive), so a timed latency is at most -t however busy the machine is, and
# more than 0 (the receive stamp follows the transmit one). Outside (0, -t]: a wrong stamp
# was used (another datagram's, or a clock mixed up), not a slow run.
HT=1
stamps_sane() { # NAME: $count latencies from $min to $max ns
	[ "$count" = 0 ] || { [ "$min" -gt 0 ] && [ "$max" -le $((HT * 1000000000)) ]; } ||
		fail "$1: latencies from $min to $max ns, outside (0, -t $HT s]"
}
hostile() { # NAME EXPECT_UNEXPECTED EXPECT_MALFORMED SERVER-MODE...
	local name=$1 unexp=$2 malf=$3 rc=0 u m
	shift 3
	rm -f "$TMP/H.port"
	start_hostile_udp "$@"
	"$DV" --no-progress -s 127.0.0.1 -p "$H_PORT" -d "$LIST" --json "$TMP/$name.json" \
		-c 1 -q 64 -n 1 -t "$HT" --clock wire:1/1 >"$TMP/$name.out" 2>&1 || rc=$?
	stop_responder H
	[ "$rc" = 0 ] || fail "$name: dnsvolley exited $rc: $(tail -n 3 "$TMP/$name.out")"
	read -r sent completed lost asked timed u m unused < <(jc "$TMP/$name.json" sent completed \
		lost stamps_asked wire_timed unexpected malformed rx_stamps_unused)
	read -r count ci min max filtered < <(lat "$TMP/$name.json")
	grep "Latency clock" "$TMP/$name.out" | sed "s/^ */  $name: /"
	assert_eq "$name: completed = sent" "$sent" "$completed"
	assert_eq "$name: asked = sent" "$sent" "$asked"
	assert_eq "$name: unexpected" "$unexp" "$u"
	assert_eq "$name: malformed" "$malf" "$m"
	assert_eq "$name: latency count = wire_timed" "$timed" "$count"
	[ "$timed" -le "$asked" ] || fail "$name: timed $timed above asked $asked"
	# each sampled answer timed, or its stamp set aside (taken by another datagram)
	assert_eq "$name: timed + stamps unused = asked" "$asked" "$((timed + unused))"
	stamps_sane "$name"
	rebuilt "$name"
	unused_line "$name" "$unused"
}
start_hostile_udp() { # MODE...: the hostile helper as H (the responder's slot in lib.sh)
	rm -f "$TMP/H.port" # the previous helper's port must not be read
	"$HOSTILE" -a 127.0.0.1 -p 0 --port-file "$TMP/H.port" --max-seconds 60 "$@" \
		>"$TMP/H.out" 2>"$TMP/H.err" &
	started H $! "$TMP/H.port" hostile
}
for src in filter cmsg; do
	[ "$src" = filter ] && [ "$FILTER" = 0 ] && continue
	[ "$src" = cmsg ] && export DV_NO_RX_FILTER=1
	hostile "junk-$src" 0 10000 --truncated
	if [ "$src" = filter ]; then # timed: the answers whose junk was 1 octet, no ID
		assert_eq "junk-$src: junk with the ID before the answer: untimed" \
			"$(resp_count H idless)" "$timed"
		[ "$unused" -gt 0 ] || fail "junk-$src: no receive stamp unused"
	else
		assert_eq "junk-$src: each answer's own stamp" "$asked" "$timed"
		assert_eq "junk-$src: no filter, no stamp unused" 0 "$unused"
	fi
	hostile "flood-$src" 50000 0 --flood 5
	[ "$src" = cmsg ] && assert_eq "flood-$src: each answer's own stamp" "$asked" "$timed"
	unset DV_NO_RX_FILTER
done
start_responder P -T 1 --duplicate-every 2
for src in filter cmsg; do
	[ "$src" = filter ] && [ "$FILTER" = 0 ] && continue
	[ "$src" = cmsg ] && export DV_NO_RX_FILTER=1
	rc=0
	"$DV" --no-progress -s 127.0.0.1 -p "$P_PORT" -d "$LIST" --json "$TMP/dup-$src.json" \
		-c 1 -q 64 -n 1 -t "$HT" --clock wire:1/1 >"$TMP/dup-$src.out" 2>&1 || rc=$?
	unset DV_NO_RX_FILTER
	assert_eq "dup-$src: exit" 0 "$rc"
	read -r sent completed asked timed u unused < <(jc "$TMP/dup-$src.json" sent completed \
		stamps_asked wire_timed unexpected rx_stamps_unused)
	read -r count ci min max filtered < <(lat "$TMP/dup-$src.json")
	assert_eq "dup-$src: completed = sent" "$sent" "$completed"
	assert_eq "dup-$src: unexpected (a duplicate of every 2nd)" 5000 "$u"
	assert_eq "dup-$src: latency count = wire_timed" "$timed" "$count"
	# the copy comes after the answer disarmed the word (an ID is reused 65,536 queries on)
	assert_eq "dup-$src: every answer its own stamp" "$asked" "$timed"
	assert_eq "dup-$src: no stamp unused" 0 "$unused"
	[ "$timed" -le "$asked" ] && [ "$timed" -gt 0 ] || fail "dup-$src: timed $timed of $asked"
	stamps_sane "dup-$src"
	rebuilt "dup-$src"
	unused_line "dup-$src" "$unused"
done
stop_responder P

# A short pass (at most 4,096 queries: -n 1 over 100) stamps every query by default.
head -100 "$LIST" >"$TMP/100.txt"
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/100.txt" -n 1 -c 1 -q 10 \
	--json "$TMP/short.json" >"$TMP/short.out" 2>&1 || fail "short pass: $(cat "$TMP/short.out")"
assert_eq "short pass: sent completed stamps_asked wire_timed" "100 100 100 100" \
	"$(jc "$TMP/short.json" sent completed stamps_asked wire_timed)"
grep -q "^  Latency clock:        wire (kernel transmit and receive stamps.*), 100 of 100 answers stamped at both ends\$" \
	"$TMP/short.out" || fail "short pass: $(grep 'Latency clock' "$TMP/short.out")"

# A sample that draws no query: one query at an explicit 1 in 16 (stamps_asked 0, latency
# count 0, 1 completed: the sample is seeded, so with -T 1 -c 1 the same query is drawn or
# not every run). The run's own results file reads back in report and compare, as any other.
echo "example.com A" >"$TMP/one.txt"
"$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/one.txt" -n 1 -T 1 -c 1 --clock wire:1/16 \
	--json "$TMP/one.json" >"$TMP/one.out" 2>&1 || fail "one query: $(cat "$TMP/one.out")"
assert_eq "one query at 1/16: sent completed stamps_asked wire_timed" "1 1 0 0" \
	"$(jc "$TMP/one.json" sent completed stamps_asked wire_timed)"
assert_eq "one query at 1/16: latency count" 0 "$(lat "$TMP/one.json" | cut -d' ' -f1)"
rc=0
"$DV" report "$TMP/one.json" >"$TMP/one.rep" 2>&1 || rc=$?
assert_eq "report of a sample that drew no query: exit ($(head -2 "$TMP/one.rep"))" 0 "$rc"
grep -qF "latency of 0 answers (0 asked) of 1" "$TMP/one.rep" || fail "one query: $(cat "$TMP/one.rep")"
rc=0
"$DV" compare "$TMP/one.json" "$TMP/one.json" >"$TMP/one.cmp" 2>&1 || rc=$?
assert_eq "compare of it: exit ($(head -2 "$TMP/one.cmp"))" 0 "$rc"

# Bad rates are refused before anything is sent.
# A bad flag exits 2 with what is wrong (exit 1 was accepted, and any line naming --clock).
for bad in "wire:1/0|--clock wire:1/N: '0' is out of range (1-65536)" \
	"wire:1/x|--clock wire:1/N: 'x' is not a whole number" \
	"wire:2/3|--clock: 'wire:2/3' is not wire, wire:1/N, app or auto" \
	"wire:1/65537|--clock wire:1/N: '65537' is out of range (1-65536)"; do
	rc=0
	"$DV" -s 127.0.0.1 -p "$R_PORT" -d "$LIST" -n 1 --clock "${bad%%|*}" >"$TMP/bad.out" 2>&1 || rc=$?
	assert_eq "--clock ${bad%%|*}: exit status" 2 "$rc"
	assert_eq "--clock ${bad%%|*}: message" "dnsvolley: ${bad#*|}" "$(head -1 "$TMP/bad.out")"
done
stop_responder R
echo "ok: wire clock sample"
