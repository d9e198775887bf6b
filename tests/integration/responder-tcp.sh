#!/usr/bin/env bash
# responder-tcp: dnsvolley-responder's TCP and DoT listeners, queried with kdig +tcp / +tls
# and a pipelining client (stream-client.py); every stream fault and its exact counts.
. "$(dirname "$0")/lib.sh"

command -v kdig >/dev/null || skip "kdig (knot-dnsutils) not installed"
command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"
CLIENT="$top_srcdir/tests/integration/stream-client.py"

make_cert

# stop NAME: SIGINT; exit 0 and no sanitizer report.
stop() {
	local pidvar="${1}_PID" rc=0
	kill -INT "${!pidvar}"
	wait "${!pidvar}" || rc=$?
	assert_eq "$1: exit status" 0 "$rc"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$1.err" || fail "$1: $(cat "$TMP/$1.err")"
}

# scounts NAME tcp|tls: the listener's counts on one line.
scounts() {
	local k out=""
	for k in connections refused received answered dropped unanswered closed resets \
		half-closed stalled malformed; do
		out+="$k=$(resp_count "$1" "$2-$k") "
	done
	echo "${out% }"
}

# client NAME tcp|tls ARGS...: stream-client.py against that listener.
client() {
	local port="${1}_TCP"
	[ "$2" = tls ] && port="${1}_TLS"
	python3 "$CLIENT" "${!port}" "$2" "${@:3}"
}

echo "== flags"
badflag() { resp_badflag "$1" "$2" -p 0; } # lib.sh
badflag "--tls-port 0" "--tls-port needs --tls-cert FILE and --tls-key FILE"
badflag "--tls-cert $TMP/cert.pem" "--tls-cert and --tls-key need --tls-port, --https-port or --doq-port"
badflag "--stream-reset-after 3" "--stream-reset-after needs --tcp-port, --tls-port or --doq-port"
badflag "--tcp-port 70000" "--tcp-port: '70000' is not a port number from 0 to 65535"
badflag "--tcp-port-file x" "--tcp-port-file needs --tcp-port"
badflag "--tcp-port 0 --stream-reverse 1025" "--stream-reverse: at most 1024 answers in a group"
badflag "--tcp-port 0 --stream-close-after x" "--stream-close-after: 'x' is not a whole number (0 = off)"
rc=0
"$RESPONDER" -p 0 --tls-port 0 --tls-cert "$TMP/none.pem" --tls-key "$TMP/key.pem" \
	>"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
assert_eq "exit status for a missing certificate" 1 "$rc"
grep -q "none.pem" "$TMP/bad.err" || fail "message does not name the file: $(cat "$TMP/bad.err")"

echo "== kdig +tcp and +tls, exact counts"
start_stream plain
out=$(kdig @127.0.0.1 -p "$plain_TCP" +tcp +retry=0 +timeout=2 +short www.example.com A)
[[ $out =~ ^198\.1[89]\.[0-9]+\.[0-9]+$ ]] || fail "TCP A record: $out"
udp=$(kdig @127.0.0.1 -p "$plain_PORT" +retry=0 +timeout=2 +short www.example.com A)
assert_eq "TCP answer = UDP answer" "$udp" "$out"
out=$(kdig @127.0.0.1 -p "$plain_TCP" +tcp +keepopen +retry=0 +timeout=2 +short a.example A \
	b.example A c.example AAAA)
assert_eq "three answers on one kept-open connection" 3 "$(wc -l <<<"$out")"
out=$(kdig @127.0.0.1 -p "$plain_TLS" +tls +retry=0 +timeout=2 www.example.com SOA)
grep -q "status: NOERROR" <<<"$out" || fail "TLS SOA: $out"
grep -q "^;; TLS session (TLS1.3)" <<<"$out" || fail "kdig did not use TLS: $out"
out=$(kdig @127.0.0.1 -p "$plain_TLS" +tls +retry=0 +timeout=2 +short www.example.com AAAA)
[[ $out =~ ^2001:db8: ]] || fail "TLS AAAA record: $out"
assert_eq "TLS session resumed" "reused=True" "$(client plain tls --resume)"
assert_eq "pipelined, in order" "ids=1,2,3,4,5,6,7,8,9,10" "$(client plain tcp 10 10)"
assert_eq "one byte per write (TCP)" "ids=1,2,3" "$(client plain tcp 3 3 --trickle)"
assert_eq "one byte per write (TLS)" "ids=1,2,3" "$(client plain tls 3 3 --trickle)"
assert_eq "zero length prefix: closed" "ids= end=eof" "$(client plain tcp 0 1 --zero | tr "\n" " " | sed "s/ $//")"
stop plain
assert_eq "UDP counts" "1 1" "$(resp_count plain received) $(resp_count plain answered)"
assert_eq "tcp counts" "connections=5 refused=0 received=17 answered=17 dropped=0 unanswered=0 closed=0 resets=0 half-closed=0 stalled=0 malformed=1" "$(scounts plain tcp)"
assert_eq "tls counts" "connections=5 refused=0 received=7 answered=7 dropped=0 unanswered=0 closed=0 resets=0 half-closed=0 stalled=0 malformed=0" "$(scounts plain tls)"
assert_eq "tls handshakes" "0 1" "$(resp_count plain tls-handshake-failed) $(resp_count plain tls-resumed)"

for t in tcp tls; do
	echo "== $t: answers reversed in groups of 4"
	start_stream rev --stream-reverse 4
	assert_eq "$t order" "ids=4,3,2,1,8,7,6,5" "$(client rev "$t" 8 8)"
	# A group not full when the client stops sending is answered at its EOF.
	assert_eq "$t partial group" "ids=" "$(client rev "$t" 2 0)"
	stop rev
	assert_eq "$t reverse counts" "connections=2 refused=0 received=10 answered=10 dropped=0 unanswered=0 closed=0 resets=0 half-closed=0 stalled=0 malformed=0" "$(scounts rev "$t")"

	echo "== $t: every 2nd connection reset after 5 answers"
	start_stream rst --stream-fault-conns 2 --stream-reset-after 5
	assert_eq "$t healthy connection" "ids=1,2,3,4,5,6,7,8,9,10" "$(client rst "$t" 10 10)"
	assert_eq "$t reset connection" "ids=1,2,3,4,5 end=reset" \
		"$(client rst "$t" 10 10 --end | tr '\n' ' ' | sed 's/ $//')"
	stop rst
	assert_eq "$t reset counts" "connections=2 refused=0 received=20 answered=15 dropped=0 unanswered=5 closed=0 resets=1 half-closed=0 stalled=0 malformed=0" "$(scounts rst "$t")"

	echo "== $t: close after 3, drop every 3rd"
	start_stream cls --stream-close-after 3
	assert_eq "$t closed connection" "ids=1,2,3 end=eof" \
		"$(client cls "$t" 5 5 --end | tr '\n' ' ' | sed 's/ $//')"
	stop cls
	assert_eq "$t close counts" "connections=1 refused=0 received=5 answered=3 dropped=0 unanswered=2 closed=1 resets=0 half-closed=0 stalled=0 malformed=0" "$(scounts cls "$t")"
	start_stream drp --stream-drop-every 3
	assert_eq "$t dropped answers" "ids=1,2,4,5,7" "$(client drp "$t" 7 5)"
	stop drp
	assert_eq "$t drop counts" "connections=1 refused=0 received=7 answered=5 dropped=2 unanswered=0 closed=0 resets=0 half-closed=0 stalled=0 malformed=0" "$(scounts drp "$t")"

	echo "== $t: stall reads after 2"
	start_stream stl --stream-stall-after 2
	assert_eq "$t stalled connection" "ids=1,2 end=timeout" \
		"$(client stl "$t" 4 4 --end | tr '\n' ' ' | sed 's/ $//')"
	stop stl
	assert_eq "$t stall counts" "connections=1 refused=0 received=2 answered=2 dropped=0 unanswered=0 closed=0 resets=0 half-closed=0 stalled=1 malformed=0" "$(scounts stl "$t")"
done

echo "== tcp: half-close after 2 (the server reads on, answers nothing)"
start_stream half --stream-half-close-after 2
assert_eq "half-closed connection" "ids=1,2 end=eof" \
	"$(client half tcp 2 2 --end --then-send 3 | tr '\n' ' ' | sed 's/ $//')"
stop half
assert_eq "half-close counts" "connections=1 refused=0 received=5 answered=2 dropped=0 unanswered=3 closed=0 resets=0 half-closed=1 stalled=0 malformed=0" "$(scounts half tcp)"

echo "PASS"
