#!/usr/bin/env bash
# doq: DNS over QUIC (-m doq, RFC 9250) against dnsvolley-responder's DoQ listener
# (--doq-port): kdig +quic as an independent client, then dnsvolley with exact counts on
# both sides (sent = completed = the listener's received = answered, lost 0), and the
# stream faults that apply to QUIC: drop (the query's stream is cancelled with
# DOQ_REQUEST_CANCELLED after -t), close (CONNECTION_CLOSE DOQ_NO_ERROR), reset
# (CONNECTION_CLOSE DOQ_INTERNAL_ERROR), stall (the server stops reading: the client ends at
# the server's stream limit, exit 5).
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
[ -x "$RESPONDER" ] && [ -x "$DV" ] || fail "binaries not built"
make_cert
awk 'BEGIN { for (i = 1; i <= 2000; i++) print "n" i ".example A" }' >"$TMP/2k"
head -1000 "$TMP/2k" >"$TMP/1k"
head -200 "$TMP/2k" >"$TMP/200"

# start_doq NAME [flags...]: the responder with its DoQ listener; sets NAME_DOQ.
start_doq() {
	local name=$1
	shift
	start_responder "$name" --doq-port 0 --doq-port-file "$TMP/$name.doq" \
		--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" "$@"
	printf -v "${name}_DOQ" '%s' "$(cat "$TMP/$name.doq")"
}
clean() { ! grep -Eq 'Sanitizer|runtime error' "$1" || fail "sanitizer report: $(cat "$1")"; }
# dv NAME WANT_RC ARGS...: dnsvolley -m doq (a guard timeout); report in $TMP/NAME.txt.
dv() {
	local name=$1 want=$2 rc=0
	shift 2
	timeout 100 "$DV" --no-progress -s 127.0.0.1 -m doq --tls-sni dnsvolley.test "$@" \
		>"$TMP/$name.txt" 2>"$TMP/$name.err" || rc=$?
	[ "$rc" != 124 ] || fail "$name: no end within the guard (hang)"
	clean "$TMP/$name.err"
	[ "$rc" = "$want" ] || fail "$name: exit $rc, not $want: $(cat "$TMP/$name.err")"
}
rf() { report_field "$TMP/$1.txt" "$2"; }
# phrase NAME WORDS: the number after WORDS in the report ("protocol errors 3").
phrase() { grep -o "$2 [0-9]*" "$TMP/$1.txt" | head -1 | awk '{ print $NF }'; }
stopped() { # NAME: stop it; exit 0 and no sanitizer report
	stop_responder "$1"
	clean "$TMP/$1.err"
}
hc() { resp_count "$1" "doq-$2"; }

echo "== flags"
for bad in "--doq-port 0" "--doq-port-file x" "--doq-port 70000" \
	"--doq-port 0 --tls-cert $TMP/cert.pem --tls-key $TMP/key.pem --doq-max-streams 0"; do
	rc=0
	# shellcheck disable=SC2086
	"$RESPONDER" -p 0 $bad >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
	assert_eq "exit status for '$bad'" 2 "$rc"
	[ -s "$TMP/bad.err" ] || fail "no message for '$bad'"
done

if command -v kdig >/dev/null && kdig -h 2>&1 | grep -q quic; then
	echo "== kdig +quic: one query, exact counts"
	start_doq kq
	out=$(kdig @127.0.0.1 -p "$kq_DOQ" +quic +retry=0 +timeout=5 +short www.example.com A)
	[[ $out =~ ^198\.1[89]\.[0-9]+\.[0-9]+$ ]] || fail "DoQ A record from kdig: $out"
	stopped kq
	assert_eq "kdig: doq-received" 1 "$(hc kq received)"
	assert_eq "kdig: doq-answered" 1 "$(hc kq answered)"
	assert_eq "kdig: doq-handshakes" 1 "$(hc kq handshakes)"
fi

echo "== clean: 2,000 queries over 2 connections, 50 streams each"
start_doq clean
dv clean 0 -p "$clean_DOQ" -d "$TMP/2k" -c 2 -q 100 -t 5
stopped clean
assert_eq "clean: sent" 2000 "$(rf clean 'Queries sent')"
assert_eq "clean: completed" 2000 "$(rf clean 'Queries completed')"
assert_eq "clean: lost" 0 "$(rf clean 'Queries lost')"
assert_eq "clean: connections opened" 2 "$(phrase clean 'opened')"
assert_eq "clean: full handshakes" 2 "$(phrase clean 'full')"
assert_eq "clean: doq-connections" 2 "$(hc clean connections)"
assert_eq "clean: doq-handshakes" 2 "$(hc clean handshakes)"
assert_eq "clean: doq-received" 2000 "$(hc clean received)"
assert_eq "clean: doq-answered" 2000 "$(hc clean answered)"
assert_eq "clean: doq-unanswered" 0 "$(hc clean unanswered)"
assert_eq "clean: doq-cancelled" 0 "$(hc clean cancelled)"

echo "== --tls-ca: the right name is answered; another name fails the handshake (exit 3)"
start_doq ca
dv ca 0 -p "$ca_DOQ" -d "$TMP/200" -c 1 -q 10 -t 5 --tls-ca "$TMP/cert.pem"
assert_eq "ca: completed" 200 "$(rf ca 'Queries completed')"
rc=0
timeout 100 "$DV" --no-progress -s 127.0.0.1 -m doq -p "$ca_DOQ" -d "$TMP/200" -c 1 -q 10 -t 5 \
	--tls-ca "$TMP/cert.pem" --tls-sni other.test >"$TMP/caw.txt" 2>"$TMP/caw.err" || rc=$?
assert_eq "wrong name: exit status" 3 "$rc"
grep -q "TLS handshake failed" "$TMP/caw.err" || fail "wrong name: $(cat "$TMP/caw.err")"
stopped ca
assert_eq "ca: doq-handshakes (the refused one not done)" 1 "$(hc ca handshakes)"
assert_eq "ca: doq-received" 200 "$(hc ca received)"

echo "== a server stream limit of 10 under -q 100: never past it, all answered"
start_doq lim --doq-max-streams 10
dv lim 0 -p "$lim_DOQ" -d "$TMP/1k" -c 1 -q 100 -t 5
stopped lim
assert_eq "limit: completed" 1000 "$(rf lim 'Queries completed')"
assert_le "limit: peak in flight" 10 "$(rf lim 'Peak in flight')"
assert_eq "limit: doq-answered" 1000 "$(hc lim answered)"

echo "== drop every 5th: lost = dropped, each cancelled (DOQ_REQUEST_CANCELLED) unless in flight at the end"
start_doq drop --stream-drop-every 5
dv drop 0 -p "$drop_DOQ" -d "$TMP/1k" -c 1 -q 20 -t 0.3
stopped drop
assert_eq "drop: sent" 1000 "$(rf drop 'Queries sent')"
assert_eq "drop: completed" 800 "$(rf drop 'Queries completed')"
assert_eq "drop: lost" 200 "$(rf drop 'Queries lost')"
assert_eq "drop: doq-received" 1000 "$(hc drop received)"
assert_eq "drop: doq-answered" 800 "$(hc drop answered)"
assert_eq "drop: doq-dropped" 200 "$(hc drop dropped)"
assert_eq "drop: doq-unanswered" 0 "$(hc drop unanswered)"
assert_le "drop: doq-cancelled" 200 "$(hc drop cancelled)"
assert_ge "drop: doq-cancelled" 180 "$(hc drop cancelled)"
assert_eq "drop: one connection" 1 "$(phrase drop 'opened')"

# close / reset after N: the client pipelines, so how many queries were on their way when
# the CONNECTION_CLOSE came differs from run to run; the counts on both sides agree.
for f in close reset; do
	echo "== $f after 50 answers"
	start_doq "$f" "--stream-$f-after" 50
	dv "$f" 0 -p "$(cat "$TMP/$f.doq")" -d "$TMP/1k" -c 1 -q 10 -t 2
	stopped "$f"
	sent=$(rf "$f" 'Queries sent') done_=$(rf "$f" 'Queries completed') lost=$(rf "$f" 'Queries lost')
	conns=$(phrase "$f" 'opened')
	assert_eq "$f: sent" 1000 "$sent"
	assert_eq "$f: sent = completed + lost" "$sent" $((done_ + lost))
	assert_eq "$f: completed = doq-answered" "$done_" "$(hc "$f" answered)"
	assert_eq "$f: doq-received = doq-answered" "$(hc "$f" received)" "$(hc "$f" answered)"
	assert_eq "$f: lost = lost with connection" "$lost" "$(rf "$f" 'Lost with connection')"
	assert_eq "$f: connections = doq-connections" "$conns" "$(hc "$f" connections)"
	want=closed
	[ "$f" = reset ] && want=resets
	n=$(hc "$f" "$want")
	assert_eq "$f: every connection but perhaps the last ended by the fault" \
		$((done_ / 50)) "$n"
	# the last connection's CONNECTION_CLOSE may come after the run's last answer (then
	# the client has stopped reading): the client saw n or n - 1 of them
	if [ "$f" = reset ]; then
		seen=$(phrase reset 'protocol errors')
	else
		seen=$(phrase close 'closed by server')
	fi
	assert_le "$f: the server's CONNECTION_CLOSEs the client saw" "$n" "$seen"
	assert_ge "$f: the server's CONNECTION_CLOSEs the client saw" $((n - 1)) "$seen"
done

echo "== stall after 20: the server stops reading; stream limit 30 reached, exit 5"
start_doq stall --stream-stall-after 20 --doq-max-streams 30
dv stall 5 -p "$stall_DOQ" -d "$TMP/200" -c 1 -q 10 -t 0.3
stopped stall
grep -q "the server's QUIC stream limit" "$TMP/stall.err" || fail "stall: $(cat "$TMP/stall.err")"
assert_eq "stall: doq-received" 20 "$(hc stall received)"
assert_eq "stall: doq-answered" 20 "$(hc stall answered)"
assert_eq "stall: doq-stalled" 1 "$(hc stall stalled)"
echo "ok"
