#!/usr/bin/env bash
# responder: dnsvolley-responder on loopback, queried with kdig and raw datagrams; every
# fault mode and the exact counts it prints at exit.
. "$(dirname "$0")/lib.sh"

command -v kdig >/dev/null || skip "kdig (knot-dnsutils) not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"

# q NAME [kdig args...]: one query to responder NAME, kdig's output on stdout (never fails).
q() {
	local portvar="${1}_PORT"
	shift
	kdig @127.0.0.1 -p "${!portvar}" +retry=0 +timeout=1 +ignore "$@" 2>&1 || true
}

# counts NAME: all eight counts on one line, for one exact comparison.
counts() {
	local k out=""
	for k in received answered dropped faulty duplicates malformed send-errors source-ports; do
		out+="$k=$(resp_count "$1" "$k") "
	done
	echo "${out% }"
}

# stop NAME: SIGINT; the responder must exit 0 with no sanitizer report.
stop() {
	local pidvar="${1}_PID" rc=0
	kill -INT "${!pidvar}"
	wait "${!pidvar}" || rc=$?
	assert_eq "$1: exit status" 0 "$rc"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$1.err" || fail "$1: $(cat "$TMP/$1.err")"
}

status_of() { sed -n 's/.*status: \([A-Z]*\);.*/\1/p' | head -1; }
flags_of() { sed -n 's/^;; Flags: \([a-z ]*\);.*/\1/p' | head -1; }

# udp_exchange PORT HEXBYTES: send one datagram from a fresh socket, print the reply in hex.
udp_exchange() {
	local port=$1 hex=$2
	(
		exec 3<>"/dev/udp/127.0.0.1/$port"
		printf "$(sed 's/\([0-9a-f][0-9a-f]\)/\\x\1/g' <<<"$hex")" >&3
		timeout 1 dd bs=4096 count=1 <&3 2>/dev/null | od -An -v -tx1 | tr -d ' \n'
	) || true
}

# A query for "Ab.c." type A, ID 0x1234, RD, no EDNS.
QUERY_HEX=123401000001000000000000024162016300''0001''0001

echo "== flags"
# Into a file first: grep -q stops reading at the match, and a help text over one pipe
# buffer would then end its second write with SIGPIPE (a failure under pipefail).
"$RESPONDER" --help >"$TMP/help.txt"
grep -q -- '--wrong-question-every' "$TMP/help.txt" || fail "--help lacks a flag"
"$RESPONDER" --version | grep -q '^dnsvolley-responder ' || fail "--version"
badflag() { resp_badflag "$1" "$2"; } # lib.sh
RCODES="is not an rcode name (NOERROR, FORMERR, SERVFAIL, NXDOMAIN, NOTIMP, REFUSED, ...) or a number from 0 to 15"
badflag "--drop-every x" "--drop-every: 'x' is not a whole number (0 = off)"
badflag "--delay -1" "--delay: '-1' is not a number of milliseconds from 0 to 3600000"
badflag "--rcode BOGUS" "--rcode: 'BOGUS' $RCODES"
badflag "--rcode 16" "--rcode: '16' $RCODES"
badflag "-p 65536" "--port: '65536' is not a port number from 0 to 65535"
badflag "-T 0" "--threads: '0' is not a number from 1 to 256"
badflag "-a localhost" "--address: 'localhost' is not an IPv4 or IPv6 address"
badflag "--no-such-flag" "unknown option '--no-such-flag'"
badflag "extra-argument" "unexpected argument 'extra-argument'"
badflag "-p" "option '-p' needs a value"

echo "== options a mode would ignore are refused, before anything is opened (no root, no XDP)"
# refused WANT ARGS...: exit status 2 and WANT as the message's first line. The check comes
# before any socket or XDP program; the interface named does not exist (were it looked up,
# the status would be 1), so a regression cannot attach anything.
refused() {
	local want=$1 rc=0
	shift
	timeout 10 "$RESPONDER" -p 0 "$@" >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
	assert_eq "exit status for '$*'" 2 "$rc"
	assert_eq "message for '$*'" "$want" "$(head -1 "$TMP/bad.err")"
}
P="dnsvolley-responder:"
for flag in "--delay 5" "--capacity 1000" "--capacity 1000 --capacity-backlog 8" "--rcode SERVFAIL" \
	"--tc-every 2" "--wrong-id-every 3" "--wrong-question-every 3" "--duplicate-every 3"; do
	# shellcheck disable=SC2086
	refused "$P ${flag%% *} cannot be used with --xdp --reflect: the XDP program answers in the \
driver and applies only --drop-every and --garbage-every (--xdp without --reflect applies it)" \
		--xdp dv-none0 --reflect --drop-every 7 $flag
done
refused "$P --no-gso cannot be used with --xdp: the answers leave as XDP frames, never by UDP GSO" \
	--xdp dv-none0 --no-gso
refused "$P --no-gso cannot be used with --xdp: the answers leave as XDP frames, never by UDP GSO" \
	--reflect --no-gso --xdp dv-none0
refused "$P --capacity-backlog needs --capacity (it bounds its queue)" --capacity-backlog 8
for flag in "--stream-half-close-after 1" "--stream-reverse 2" "--stream-read-after-conns 4"; do
	# shellcheck disable=SC2086
	refused "$P ${flag%% *} cannot be used with --doq-port alone: DoQ has no half-close, answer \
order or read delay (it applies to --tcp-port and --tls-port)" --doq-port 0 $flag
done

echo "== plain answers, port file, start-up line"
start_responder plain
[ "$(cat "$TMP/plain.port")" = "$plain_PORT" ] || fail "port file"
printf '%s\n' "$plain_PORT" | cmp -s - "$TMP/plain.port" || fail "port file is not 'PORT\\n'"
grep -q "^dnsvolley-responder: listening on 127.0.0.1:$plain_PORT (1 thread)$" "$TMP/plain.err" ||
	fail "start-up line: $(cat "$TMP/plain.err")"
out=$(q plain example.com SOA)
assert_eq "SOA status" NOERROR "$(status_of <<<"$out")"
assert_eq "SOA flags" "qr aa rd" "$(flags_of <<<"$out")"
grep -Eq '^example\.com\.[[:space:]]+300[[:space:]]+IN[[:space:]]+SOA[[:space:]]+ns1\.example\.com\. hostmaster\.example\.com\. 1 ' <<<"$out" ||
	fail "SOA record: $out"
out=$(q plain +short www.example.com A)
[[ $out =~ ^198\.1[89]\.[0-9]+\.[0-9]+$ ]] || fail "A record: $out"
assert_eq "A is deterministic" "$out" "$(q plain +short www.example.com A)"
out=$(q plain +short www.example.com AAAA)
[[ $out =~ ^2001:db8: ]] || fail "AAAA record: $out"
out=$(q plain +norecurse +edns www.example.com MX)
assert_eq "MX status (NODATA)" NOERROR "$(status_of <<<"$out")"
assert_eq "MX flags (RD not set: not copied)" "qr aa" "$(flags_of <<<"$out")"
grep -q 'ANSWER: 0; AUTHORITY: 1; ADDITIONAL: 1' <<<"$out" || fail "NODATA sections: $out"
grep -q 'UDP size: 1232 B' <<<"$out" || fail "EDNS echo: $out"
# Raw datagrams from one socket each: a too short one, a response (dropped, as real servers
# do: answering responses lets two responders answer each other forever), a real query.
assert_eq "raw: 3 bytes get nothing" "" "$(udp_exchange "$plain_PORT" 616263)"
assert_eq "raw: QR set gets nothing" "" "$(udp_exchange "$plain_PORT" "${QUERY_HEX:0:4}81${QUERY_HEX:6}")"
assert_eq "raw: QR set header only gets nothing" "" "$(udp_exchange "$plain_PORT" 123481000000000000000000)"
reply=$(udp_exchange "$plain_PORT" "$QUERY_HEX")
assert_eq "raw: question echoed with case" "${QUERY_HEX:24}" "${reply:24:${#QUERY_HEX}-24}"
assert_eq "raw: header" "123485000001000100000000" "${reply:0:24}"
stop plain
# The 9 clients (kdig, python) each get an ephemeral port from the kernel, at random:
# two of them can draw the same one (seen once in CI: 8), so the distinct ports are
# 2 to 9, the other counts exact.
pc=$(counts plain)
assert_eq "plain counts" \
	"received=9 answered=6 dropped=0 faulty=0 duplicates=0 malformed=3 send-errors=0" "${pc% source-ports=*}"
assert_ge "plain: source ports" 2 "${pc##*source-ports=}"
assert_le "plain: source ports" 9 "${pc##*source-ports=}"

echo "== --drop-every 2 over 4 queries"
start_responder drop --drop-every 2 -q
[ ! -s "$TMP/drop.err" ] || fail "-q printed: $(cat "$TMP/drop.err")"
answered=0
for i in 1 2 3 4; do
	out=$(q drop "d$i.example" A)
	[ "$(status_of <<<"$out")" = NOERROR ] && answered=$((answered + 1))
	case $i in
	1 | 3) grep -q 'status: NOERROR' <<<"$out" || fail "query $i should be answered: $out" ;;
	2 | 4) grep -q 'timeout' <<<"$out" || fail "query $i should be dropped: $out" ;;
	esac
done
assert_eq "kdig got answers" 2 "$answered"
stop drop
assert_eq "drop counts" \
	"received=4 answered=2 dropped=2 faulty=0 duplicates=0 malformed=0 send-errors=0 source-ports=4" \
	"$(counts drop)"

echo "== --rcode"
start_responder rc_nx --rcode nxdomain
assert_eq "NXDOMAIN" NXDOMAIN "$(q rc_nx x.example A | status_of)"
stop rc_nx
start_responder rc_5 --rcode 5
assert_eq "rcode 5" REFUSED "$(q rc_5 x.example A | status_of)"
stop rc_5
assert_eq "rcode counts" "received=1 answered=1" "$(counts rc_5 | cut -d' ' -f1-2)"

echo "== --tc-every 2"
start_responder tc --tc-every 2
assert_eq "answer 1 flags" "qr aa rd" "$(q tc t1.example A | flags_of)"
assert_eq "answer 2 flags" "qr aa tc rd" "$(q tc t2.example A | flags_of)"
assert_eq "answer 3 flags" "qr aa rd" "$(q tc t3.example A | flags_of)"
stop tc
assert_eq "tc counts" \
	"received=3 answered=3 dropped=0 faulty=0 duplicates=0 malformed=0 send-errors=0 source-ports=3" \
	"$(counts tc)"

echo "== --delay 120.5"
start_responder delay --delay 120.5
out=$(q delay slow.example A)
assert_eq "delayed status" NOERROR "$(status_of <<<"$out")"
ms=$(sed -n 's/^;; From .* in \([0-9]*\)\.[0-9]* ms$/\1/p' <<<"$out")
[ -n "$ms" ] || fail "no time in: $out"
# A lower bound the responder's hold imposes: load can only add to it.
assert_ge "kdig's time (ms)" 120 "$ms"
stop delay
assert_eq "delay counts" "received=1 answered=1 dropped=0" "$(counts delay | cut -d' ' -f1-3)"

echo "== --delay: many held at once (several chunks of the hold queue), then held at stop"
# One socket sends N copies of a query with a 60-byte label (answers of ~180 bytes held).
long_query=1234010000010000000000003c$(printf '61%.0s' $(seq 60))0000060001
fmt=$(sed 's/\([0-9a-f][0-9a-f]\)/\\x\1/g' <<<"$long_query")
send_many() { # PORT COUNT
	(
		exec 3<>"/dev/udp/127.0.0.1/$1"
		for _ in $(seq "$2"); do printf "$fmt" >&3; done
	)
}
start_responder held --delay 300
send_many "$held_PORT" 12000
sleep 1.5
stop held
assert_eq "held counts" \
	"received=12000 answered=12000 dropped=0 faulty=0 duplicates=0 malformed=0 send-errors=0 source-ports=1" \
	"$(counts held)"
# Released together, 50 answers to one socket leave as one UDP GSO message: the
# client must still read 50 datagrams of 38 bytes, not one of 1900.
start_responder gso --delay 200
qfmt=$(sed 's/\([0-9a-f][0-9a-f]\)/\\x\1/g' <<<"$QUERY_HEX")
(
	exec 3<>"/dev/udp/127.0.0.1/$gso_PORT"
	for _ in $(seq 50); do printf "$qfmt" >&3; done
	timeout 5 dd bs=65536 count=50 <&3 2>"$TMP/dd.err" | wc -c >"$TMP/dd.bytes"
) || true
assert_eq "GSO: bytes read" 1900 "$(tr -d ' ' <"$TMP/dd.bytes")"
assert_eq "GSO: datagrams read" "0+50" "$(sed -n 's/ records in//p' "$TMP/dd.err")"
stop gso
assert_eq "GSO counts" \
	"received=50 answered=50 dropped=0 faulty=0 duplicates=0 malformed=0 send-errors=0 source-ports=1" \
	"$(counts gso)"

start_responder held_at_stop --delay 60000
send_many "$held_at_stop_PORT" 100
sleep 0.5
stop held_at_stop
assert_eq "held at stop: dropped" \
	"received=100 answered=0 dropped=100 faulty=0 duplicates=0 malformed=0 send-errors=0 source-ports=1" \
	"$(counts held_at_stop)"

echo "== faults: garbage, wrong id, wrong question, duplicate"
start_responder garbage --garbage-every 1
out=$(q garbage g.example A)
! grep -q 'status:' <<<"$out" || fail "garbage taken for an answer: $out"
grep -Eq 'malformed|timeout|ERROR' <<<"$out" || fail "kdig did not complain: $out"
stop garbage
assert_eq "garbage counts" \
	"received=1 answered=0 dropped=0 faulty=1 duplicates=0 malformed=0 send-errors=0 source-ports=1" \
	"$(counts garbage)"

start_responder wrongid --wrong-id-every 1
out=$(q wrongid w.example A)
grep -q 'reply ID .* is different' <<<"$out" || fail "kdig did not see the wrong ID: $out"
! grep -q 'status:' <<<"$out" || fail "wrong ID taken for an answer: $out"
stop wrongid
assert_eq "wrong-id counts" "received=1 answered=0 dropped=0 faulty=1" \
	"$(counts wrongid | cut -d' ' -f1-4)"

start_responder wrongq --wrong-question-every 2
out=$(q wrongq first.example A)
! grep -q 'question sections are different' <<<"$out" || fail "query 1 is not faulty: $out"
out=$(q wrongq second.example A)
grep -q 'question sections are different' <<<"$out" || fail "kdig did not see it: $out"
grep -Eq '^;; x\.second\.example\.' <<<"$out" || fail "question is not x.<qname>: $out"
stop wrongq
assert_eq "wrong-question counts" "received=2 answered=1 dropped=0 faulty=1" \
	"$(counts wrongq | cut -d' ' -f1-4)"

start_responder dup --duplicate-every 1
assert_eq "duplicated answer" NOERROR "$(q dup twice.example A | status_of)"
reply=$(udp_exchange "$dup_PORT" "$QUERY_HEX")
assert_eq "raw: first copy" "123485000001000100000000" "${reply:0:24}"
stop dup
assert_eq "duplicate counts" \
	"received=2 answered=2 dropped=0 faulty=0 duplicates=2 malformed=0 send-errors=0 source-ports=2" \
	"$(counts dup)"

echo "== --reflect"
start_responder reflect --reflect
reply=$(udp_exchange "$reflect_PORT" "$QUERY_HEX")
assert_eq "reflected bytes" "${QUERY_HEX:0:4}81${QUERY_HEX:6}" "$reply"
stop reflect
assert_eq "reflect counts" "received=1 answered=1" "$(counts reflect | cut -d' ' -f1-2)"

echo "== -T 3: counts merged over threads, every thread stops"
start_responder threads -T 3
grep -q "(3 threads)" "$TMP/threads.err" || fail "start-up line: $(cat "$TMP/threads.err")"
for i in 1 2 3 4 5 6; do
	assert_eq "threaded answer $i" NOERROR "$(q threads "t$i.example" SOA | status_of)"
done
stop threads
assert_eq "threaded counts" \
	"received=6 answered=6 dropped=0 faulty=0 duplicates=0 malformed=0 send-errors=0 source-ports=6" \
	"$(counts threads)"

if ip -6 addr show dev lo 2>/dev/null | grep -q '::1'; then
	echo "== IPv6 ::1"
	"$RESPONDER" -a ::1 -p 0 --port-file "$TMP/v6.port" >"$TMP/v6.out" 2>"$TMP/v6.err" &
	v6=$!
	_pids+=("$v6")
	for _ in $(seq 200); do [ -s "$TMP/v6.port" ] && break; sleep 0.025; done
	grep -q "listening on \[::1\]:$(cat "$TMP/v6.port")" "$TMP/v6.err" || fail "v6 start-up line"
	out=$(kdig @::1 -p "$(cat "$TMP/v6.port")" +retry=0 +timeout=1 v6.example AAAA 2>&1 || true)
	assert_eq "IPv6 status" NOERROR "$(status_of <<<"$out")"
	kill -TERM "$v6"
	wait "$v6" || fail "SIGTERM exit status"
	grep -qx 'answered 1' "$TMP/v6.out" || fail "v6 counts: $(cat "$TMP/v6.out")"
fi
echo "PASS"
