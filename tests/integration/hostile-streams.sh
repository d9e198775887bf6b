#!/usr/bin/env bash
# Hostile stream servers (tests/helpers/hostile-stream) over TCP, DoT and DoH: every mode
# with exact counts against the helper's own, peak RSS within the control run's bound (the
# window's, not the run's length), a bounded end (timeout is only a guard) and the exit
# status: 0 answered, 4 nothing answered, 5 nothing could be sent (doc/dnsvolley.1).
# hostile-streams.sh KIND (tcp, dot or doh): one kind's cases (make check runs the three
# hostile-streams-KIND.sh wrappers).
. "$(dirname "$0")/lib.sh"
KIND=${1:?usage: hostile-streams.sh tcp|dot|doh}
MAXRSS="$top_builddir/tests/helpers/maxrss"
[ -x "$DV" ] && [ -x "$top_builddir/tests/helpers/hostile-stream" ] && [ -x "$MAXRSS" ] || fail "binaries not built"
command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
make_cert
awk 'BEGIN { for (i = 1; i <= 2000; i++) print "n" i ".example A" }' >"$TMP/2k"
head -200 "$TMP/2k" >"$TMP/200"
# 5,000 queries of about 220 bytes
awk 'BEGIN { l = sprintf("%060d", 0); for (i = 1; i <= 5000; i++) print l "." l "." l ".n" i ".example A" }' >"$TMP/long"

clean() { # no sanitizer report, no crash
	! grep -Eq 'Sanitizer|runtime error' "$1" || fail "sanitizer report: $(cat "$1")"
}

# dv NAME WANT_RC ARGS...: dnsvolley under maxrss and a timeout guard; its report in
# $TMP/NAME.txt, results in $TMP/NAME.json, peak RSS (KiB) in $TMP/NAME.rss.
dv() {
	local name=$1 want=$2 rc=0 t0=$SECONDS
	shift 2
	"$MAXRSS" "$TMP/$name.rss" "${RSS_ENV[@]}" timeout 100 "$DV" --no-progress -s 127.0.0.1 \
		--json "$TMP/$name.json" "$@" >"$TMP/$name.txt" 2>"$TMP/$name.err" || rc=$?
	[ "$rc" != 124 ] || fail "$name: no end within the guard (hang)"
	clean "$TMP/$name.err"
	[ "$rc" = "$want" ] || fail "$name: exit $rc, not $want: $(cat "$TMP/$name.err")"
	echo "ok: $name: exit $rc, peak RSS $(cat "$TMP/$name.rss") KiB ($((SECONDS - t0)) s)"
}

# rss_within NAME CONTROL: NAME's peak RSS within a quarter and 4 MiB of CONTROL's (the
# same window and connections; a leak per query would pass it within the run).
rss_within() {
	assert_le "$1: peak RSS (KiB)" $(($(cat "$TMP/$2.rss") * 5 / 4 + 4096)) "$(cat "$TMP/$1.rss")"
}

# gone NAME: stop the helper (its counts are then in NAME_OUT).
gone() { stop_responder "$1"; }
hc() { resp_count "$1" "$2"; }

# Two timeouts. -t $t where nothing is answered (silent, lies, never-read, accept-close):
# every query is lost whatever the timeout, it only bounds the run (a TLS handshake must
# end within it: 1 s). -t $ta where the server answers and the test counts exactly which
# queries complete (answer, drop, one-byte, close, duplicate, limit 20): a query answered
# by the server may not be declared lost by a slow client. The window holds at most 80
# queries, so an answered query waits for at most 80 of the helper's answers: 1 s was
# broken under ASan at a load of 16 (27 of 1,801 DoH answers over 1 s); 10 s is a stall
# no scheduler has shown, and these runs are small (200 queries or 1,000 with 20
# dropped in a window that holds them all), so a long -t costs one -t per run at most.
t=0.3
[ "$KIND" = tcp ] || t=1
ta=10
for kind in $KIND; do
	m=(-m "$kind" -c 2 -q 40)
	[ "$kind" = tcp ] || m+=(--tls-sni dnsvolley.test)
	echo "=== $kind"

	# The control: every query answered, over the same window.
	start_hostile_stream A "$kind" answer
	dv "$kind-answer" 0 -p "$A_PORT" "${m[@]}" -d "$TMP/2k" -t $ta
	gone A
	read -r sent completed lost < <(jc "$TMP/$kind-answer.json" sent completed lost)
	assert_eq "$kind answer: sent" 2000 "$sent"
	assert_eq "$kind answer: completed = the server's answered" "$(hc A answered)" "$completed"
	assert_eq "$kind answer: completed" 2000 "$completed"

	# silent: every query read and lost; nothing answered (exit 4). DoH resets each lost
	# query's stream: the server saw exactly one RST_STREAM CANCEL per lost query.
	start_hostile_stream S "$kind" silent
	dv "$kind-silent" 4 -p "$S_PORT" "${m[@]}" -d "$TMP/2k" -t $t -l 1
	gone S
	read -r sent completed lost < <(jc "$TMP/$kind-silent.json" sent completed lost)
	assert_eq "$kind silent: completed" 0 "$completed"
	assert_eq "$kind silent: lost = sent" "$sent" "$lost"
	assert_eq "$kind silent: the server read every query" "$sent" "$(hc S queries)"
	[ "$kind" != doh ] || assert_eq "doh silent: streams reset = lost" "$lost" "$(hc S cancelled)"
	rss_within "$kind-silent" "$kind-answer"

	# drop: every 10th query never answered, the rest answered: lost = the server's dropped.
	# 200 queries: the 20 dropped fit the window at once, so the run lasts one -t. One
	# connection: the helper counts every 10th per connection, and how 200 queries split
	# over two depends on timing.
	start_hostile_stream D "$kind" drop --every 10
	dv "$kind-drop" 0 -p "$D_PORT" "${m[@]}" -c 1 -q 80 -d "$TMP/200" -t $ta
	gone D
	read -r sent completed lost < <(jc "$TMP/$kind-drop.json" sent completed lost)
	assert_eq "$kind drop: sent" 200 "$sent"
	assert_eq "$kind drop: completed = answered" "$(hc D answered)" "$completed"
	assert_eq "$kind drop: lost = dropped" "$(hc D dropped)" "$lost"
	assert_eq "$kind drop: lost" 20 "$lost"
	[ "$kind" != doh ] || assert_eq "doh drop: streams reset = lost" "$lost" "$(hc D cancelled)"

	# one-byte: answers in 1-byte writes / TLS records / DATA frames: all complete.
	start_hostile_stream O "$kind" one-byte
	dv "$kind-one" 0 -p "$O_PORT" "${m[@]}" -d "$TMP/200" -t $ta
	gone O
	assert_eq "$kind one-byte: completed" 200 "$(jc "$TMP/$kind-one.json" completed)"

	# wrong-id and qr0: each answer counted unexpected / malformed, its query lost. Over
	# TCP and DoT the query waits out -t after its answer, and the run ends one -t after
	# its last send: every spoiled answer must be in by then to be counted. All 200 in one
	# window (-q 200) with -t 5, far beyond the helper's delay: one -t per run (at -t $t
	# a window of 40 took five, and a helper stalled for -t could lose from the count).
	for mode in wrong-id qr0; do
		key=unexpected
		[ "$mode" = qr0 ] && key=malformed
		start_hostile_stream W "$kind" "$mode"
		dv "$kind-$mode" 4 -p "$W_PORT" "${m[@]}" -q 200 -d "$TMP/200" -t 5
		gone W
		read -r sent completed lost bad < <(jc "$TMP/$kind-$mode.json" sent completed lost "$key")
		assert_eq "$kind $mode: sent" 200 "$sent"
		assert_eq "$kind $mode: completed" 0 "$completed"
		assert_eq "$kind $mode: lost" 200 "$lost"
		assert_eq "$kind $mode: $key = the server's spoiled answers" "$(hc W spoiled)" "$bad"
	done

	# never-read: the server takes no byte after its set-up. TCP and DoT: the bytes queued
	# reach their bound and no query can be sent for -t: exit 5, the cause named. DoH: the
	# server's flow-control window holds each POST's body inside the client, whose stream
	# is reset at -t: nothing answered, exit 4. Peak RSS: the control's bound plus the
	# window's queries (20,000 of at most 512 bytes).
	start_hostile_stream N "$kind" never-read
	if [ "$kind" = doh ]; then
		dv "$kind-never-read" 4 -p "$N_PORT" "${m[@]}" -q 20000 -d "$TMP/long" -n 20 -t $t -l 2
		read -r sent lost < <(jc "$TMP/$kind-never-read.json" sent lost)
		assert_eq "doh never-read: lost = sent" "$sent" "$lost"
	else
		dv "$kind-never-read" 5 -p "$N_PORT" "${m[@]}" -q 20000 -d "$TMP/long" -n 20 -t $t
		grep -q "nothing could be sent over .*: the server does not read its queries" \
			"$TMP/$kind-never-read.err" || fail "$kind never-read: $(cat "$TMP/$kind-never-read.err")"
	fi
	gone N
	assert_eq "$kind never-read: the server read no query" 0 "$(hc N queries)"
	assert_le "$kind never-read: peak RSS (KiB)" \
		$(($(cat "$TMP/$kind-answer.rss") * 5 / 4 + 4096 + 10000)) "$(cat "$TMP/$kind-never-read.rss")"

	# close: the server ends each connection after 10 answers (TLS: close_notify).
	start_hostile_stream C "$kind" close --after 10
	dv "$kind-close" 0 -p "$C_PORT" "${m[@]}" -d "$TMP/2k" -t $ta
	gone C
	read -r sent completed lost < <(jc "$TMP/$kind-close.json" sent completed lost)
	assert_eq "$kind close: sent" 2000 "$sent"
	assert_eq "$kind close: completed = answered" "$(hc C answered)" "$completed"
	assert_eq "$kind close: sent = completed + lost" "$sent" "$((completed + lost))"
	assert_ge "$kind close: the server ended connections" 2 "$(hc C closes)"
done

for kind in $KIND; do
	[ "$kind" != doh ] || break
	m=(-m "$kind" -c 2 -q 40)
	[ "$kind" = tcp ] || m+=(--tls-sni dnsvolley.test)
	# duplicate: every answer twice: the copy is unexpected, every query completes.
	start_hostile_stream U "$kind" duplicate
	dv "$kind-dup" 0 -p "$U_PORT" "${m[@]}" -d "$TMP/2k" -t $ta
	gone U
	read -r completed unexpected < <(jc "$TMP/$kind-dup.json" completed unexpected)
	assert_eq "$kind duplicate: completed" 2000 "$completed"
	assert_eq "$kind duplicate: unexpected = the server's copies" "$(hc U extra)" "$unexpected"

	# length-lie: the prefix says 100 bytes more, then the server ends its side: a protocol
	# error per connection, nothing completed, every query lost.
	start_hostile_stream L "$kind" length-lie
	dv "$kind-lie" 4 -p "$L_PORT" "${m[@]}" -d "$TMP/2k" -t $t -l 1
	gone L
	read -r sent completed lost perr < <(jc "$TMP/$kind-lie.json" sent completed lost \
		conn_proto_errors)
	assert_eq "$kind length-lie: completed" 0 "$completed"
	assert_eq "$kind length-lie: lost = sent" "$sent" "$lost"
	# every connection lies at once, over the pass: many lies (without this floor, no lie
	# at all and no protocol error counted passed both bounds below)
	assert_ge "$kind length-lie: the server's lies" 3 "$(hc L spoiled)"
	assert_le "$kind length-lie: protocol errors <= lies" "$(hc L spoiled)" "$perr"
	assert_ge "$kind length-lie: protocol errors >= lies - 2 (the pass's end)" \
		"$(($(hc L spoiled) - 2))" "$perr"

	# accept-close: closed at once, every time: nothing answered. TLS: the first handshake
	# fails, exit 3. TCP: connections come up; 4 if a query was written before the close
	# was seen (all of them lost), else 5 (nothing could be sent for -t).
	start_hostile_stream X "$kind" accept-close
	rc=0
	timeout 100 "$DV" --no-progress -s 127.0.0.1 -p "$X_PORT" "${m[@]}" -d "$TMP/2k" -t $t \
		-l 1 >"$TMP/$kind-ac.txt" 2>"$TMP/$kind-ac.err" || rc=$?
	gone X
	clean "$TMP/$kind-ac.err"
	sent=$(report_field "$TMP/$kind-ac.txt" "Queries sent" 2>/dev/null || true)
	want=3
	[ "$kind" != tcp ] || { [ "${sent:-0}" -gt 0 ] && want=4 || want=5; }
	assert_eq "$kind accept-close: exit (${sent:-no} queries sent)" "$want" "$rc"
	[ "$rc" != 3 ] || grep -q "connection to the server failed" "$TMP/$kind-ac.err" ||
		fail "$kind accept-close: $(cat "$TMP/$kind-ac.err")"
	[ "$rc" != 5 ] || grep -q "nothing could be sent" "$TMP/$kind-ac.err" ||
		fail "$kind accept-close: $(cat "$TMP/$kind-ac.err")"
done

if [ "$KIND" != doh ]; then
	echo PASS
	exit 0
fi
d=(-m doh --tls-sni dnsvolley.test -c 2)
# goaway: GOAWAY right after SETTINGS on every connection: exit 5, the cause named; also
# with --max-loss (a loss gate over nothing sent never passes) and a -l shorter than -t.
start_hostile_stream G doh goaway
dv doh-goaway 5 -p "$G_PORT" "${d[@]}" -d "$TMP/2k" -t $t
grep -q "nothing could be sent over DNS over HTTPS .*: the server sent GOAWAY before a query" \
	"$TMP/doh-goaway.err" || fail "goaway: $(cat "$TMP/doh-goaway.err")"
dv doh-goaway-l 5 -p "$G_PORT" "${d[@]}" -d "$TMP/2k" -t 3 -l 0.5 --max-loss 1%
grep -q "a pass sent no query" "$TMP/doh-goaway-l.err" || fail "goaway -l: $(cat "$TMP/doh-goaway-l.err")"
gone G
assert_eq "goaway: the server read no query" 0 "$(hc G queries)"

# zero-streams: SETTINGS_MAX_CONCURRENT_STREAMS 0: exit 5, the cause named.
start_hostile_stream Z doh zero-streams
dv doh-zero 5 -p "$Z_PORT" "${d[@]}" -d "$TMP/2k" -t $t
gone Z
grep -q "the server allows no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0)" "$TMP/doh-zero.err" ||
	fail "zero-streams: $(cat "$TMP/doh-zero.err")"

# A stream limit of 20 with 1% of streams never answered, no -l: the lost streams are
# reset and their places reused, so the list runs to its end (it never did). 1,000
# queries over one connection (the helper counts per connection): the 10 dropped hold
# 10 of its 20 streams for one -t, the rest go on beside.
head -1000 "$TMP/2k" >"$TMP/1k"
start_hostile_stream T doh drop --every 100 --streams 20
dv doh-limit20 0 -p "$T_PORT" "${d[@]}" -c 1 -q 100 -d "$TMP/1k" -t $ta
gone T
read -r sent completed lost < <(jc "$TMP/doh-limit20.json" sent completed lost)
assert_eq "limit 20: sent" 1000 "$sent"
assert_eq "limit 20: lost = dropped" "$(hc T dropped)" "$lost"
assert_eq "limit 20: lost" 10 "$lost"
assert_eq "limit 20: streams reset = lost" "$lost" "$(hc T cancelled)"

# wrong-id with -t 30 and no -l: each stream ended, so its query ends at once (it held
# its slot for -t); 200 queries, 10 at a time, end well inside the guard.
start_hostile_stream I doh wrong-id
dv doh-wrong-id-t30 4 -p "$I_PORT" "${d[@]}" -q 10 -d "$TMP/200" -t 30
gone I
read -r sent lost unexpected < <(jc "$TMP/doh-wrong-id-t30.json" sent lost unexpected)
assert_eq "wrong-id -t 30: sent" 200 "$sent"
assert_eq "wrong-id -t 30: lost" 200 "$lost"
assert_eq "wrong-id -t 30: unexpected" 200 "$unexpected"

# length-lie: content-length 100 bytes more than the body: a stream error each, lost at
# once (-t 30: nothing waits for it).
start_hostile_stream L doh length-lie
dv doh-lie 4 -p "$L_PORT" "${d[@]}" -q 10 -d "$TMP/200" -t 30
gone L
read -r sent lost serr < <(jc "$TMP/doh-lie.json" sent lost stream_errors)
assert_eq "doh length-lie: lost = sent" "$sent" "$lost"
assert_eq "doh length-lie: stream errors = lies" "$(hc L spoiled)" "$serr"

# Memory under a silent server with a large stream limit (3,000 lost a second): 4x the run, the same peak (a
# timed-out query's stream is reset and freed; it was ~1.4 KB per lost query).
for l in 1 4; do
	start_hostile_stream M doh silent --streams 100000
	dv "doh-silent-$l" 4 -p "$M_PORT" "${d[@]}" -q 4000 -Q 3000 -d "$TMP/2k" -n 100 -t 1 -l "$l"
	gone M
	assert_eq "silent -l $l: streams reset = lost" "$(jc "$TMP/doh-silent-$l.json" lost)" \
		"$(hc M cancelled)"
done
rss_within doh-silent-4 doh-silent-1
echo "PASS"
