#!/usr/bin/env bash
# responder-doh: dnsvolley-responder's DoH listener (--https-port): dnsvolley -m doh POST and
# GET with exact counts on both sides, pipelining, statuses (curl), a plain-TCP client.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v kdig >/dev/null || skip "kdig (knot-dnsutils) not installed"
command -v curl >/dev/null || skip "curl not installed"
curl --version | grep -qw HTTP2 || skip "curl without HTTP/2"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"

make_cert

# jc FILE KEY...: the first pass's counters from a results file, space separated.
jc() {
	python3 - "$@" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))["passes"][0]["counters"]
print(" ".join(str(c.get(k, 0)) for k in sys.argv[2:]))
P
}

# start_doh NAME [flags...]: the responder with its DoH listener; sets ${NAME}_HTTPS.
start_doh() {
	local name=$1
	shift
	start_responder "$name" --https-port 0 --https-port-file "$TMP/$name.https" \
		--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" "$@"
	printf -v "${name}_HTTPS" '%s' "$(cat "$TMP/$name.https")"
}

# stop NAME: SIGINT; exit 0 and no sanitizer report.
stop() {
	local pidvar="${1}_PID" rc=0
	kill -INT "${!pidvar}"
	wait "${!pidvar}" || rc=$?
	assert_eq "$1: exit status" 0 "$rc"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$1.err" || fail "$1: $(cat "$TMP/$1.err")"
}

for i in $(seq 20000); do echo "n$i.example A"; done >"$TMP/20k"
head -1000 "$TMP/20k" >"$TMP/1k"

echo "== flags"
badflag() { resp_badflag "$1" "$2" -p 0; } # lib.sh
CK="--tls-cert $TMP/cert.pem --tls-key $TMP/key.pem"
NEED="--https-port-file, --doh-path, --https-record-each, --https-max-streams and the budgets need --https-port"
PATHMSG="is not a path starting with '/' (no '?')"
badflag "--https-port 0" "--https-port needs --tls-cert FILE and --tls-key FILE"
badflag "--https-port-file x" "$NEED"
badflag "--doh-path /x" "$NEED"
badflag "--https-record-each" "$NEED"
badflag "--https-port 70000 $CK" "--https-port: '70000' is not a port number from 0 to 65535"
badflag "--https-port 0 $CK --doh-path x" "--doh-path: 'x' $PATHMSG"
badflag "--https-port 0 $CK --doh-path /a?b" "--doh-path: '/a?b' $PATHMSG"

echo "== kdig +https (POST) and +https-get: the responder's answers"
start_doh k
out=$(kdig @127.0.0.1 -p "$k_HTTPS" +https +retry=0 +timeout=2 +short www.example.com A)
[[ $out =~ ^198\.1[89]\.[0-9]+\.[0-9]+$ ]] || fail "DoH POST A record: $out"
udp=$(kdig @127.0.0.1 -p "$k_PORT" +retry=0 +timeout=2 +short www.example.com A)
assert_eq "DoH answer = UDP answer" "$udp" "$out"
out=$(kdig @127.0.0.1 -p "$k_HTTPS" +https-get +retry=0 +timeout=2 +short www.example.com A)
assert_eq "DoH GET answer = UDP answer" "$udp" "$out"

echo "== statuses (curl --http2)"
# www.example.com A, ID 0x1234, as unpadded base64url
q=$(printf '\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01' |
	base64 -w0 | tr '+/' '-_' | tr -d '=')
url="https://127.0.0.1:$k_HTTPS"
st() { curl -sk --http2 --max-time 5 -o "$TMP/body" -w '%{http_code} %{http_version} %{content_type}' "$@"; }
assert_eq "GET ?dns=" "200 2 application/dns-message" "$(st "$url/dns-query?dns=$q")"
assert_eq "GET answer: its ID, QR AA RD" "1234 85" "$(od -An -tx1 -N3 "$TMP/body" | tr -d ' ' | sed 's/^\(....\)\(..\)/\1 \2/')"
assert_eq "GET ?x=1&dns=" "200" "$(st "$url/dns-query?x=1&dns=$q" | cut -d' ' -f1)"
printf '\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01' >"$TMP/q.bin"
assert_eq "POST" "200" "$(st -H 'content-type: application/dns-message' --data-binary @"$TMP/q.bin" "$url/dns-query" | cut -d' ' -f1)"
assert_eq "POST to ?dns=AAAA: the body is the query" "200" "$(st -H 'content-type: application/dns-message' --data-binary @"$TMP/q.bin" "$url/dns-query?dns=AAAA" | cut -d' ' -f1)"
assert_eq "GET without dns=" 400 "$(st "$url/dns-query" | cut -d' ' -f1)"
assert_eq "GET dns= not base64url" 400 "$(st "$url/dns-query?dns=a!b" | cut -d' ' -f1)"
assert_eq "GET dns= under 12 bytes" 400 "$(st "$url/dns-query?dns=AAAA" | cut -d' ' -f1)"
assert_eq "another path" 404 "$(st "$url/other?dns=$q" | cut -d' ' -f1)"
assert_eq "PUT" 405 "$(st -X PUT "$url/dns-query" | cut -d' ' -f1)"
assert_eq "POST text/plain" 415 "$(st -H 'content-type: text/plain' --data-binary @"$TMP/q.bin" "$url/dns-query" | cut -d' ' -f1)"
rc=0
curl -sk --http1.1 --max-time 5 -o /dev/null "$url/dns-query?dns=$q" || rc=$?
[ "$rc" -ne 0 ] || fail "an HTTP/1.1 request got an answer"
stop k
assert_eq "statuses 200 400 404 405 415" "6 3 1 1 1" "$(for s in 200 400 404 405 415; do resp_count k https-status-$s; done | xargs)"
assert_eq "received, answered, malformed" "12 6 3" \
	"$(resp_count k https-received) $(resp_count k https-answered) $(resp_count k https-malformed)"
assert_eq "HTTP/1.1 client: one HTTP/2 error" 1 "$(resp_count k https-h2-errors)"
assert_eq "UDP untouched by DoH" "1 1" "$(resp_count k received) $(resp_count k answered)"

echo "== dnsvolley -m doh POST and GET, 20,000 queries, -q 100 -c 4: exact counts"
start_doh d
for method in POST GET; do
	"$DV" -m doh --doh-method $method -s 127.0.0.1 -p "$d_HTTPS" -d "$TMP/20k" -c 4 -q 100 -t 5 \
		--json "$TMP/$method.json" >"$TMP/$method.rep" 2>&1 || fail "$method: $(cat "$TMP/$method.rep")"
	read -r sent completed lost non200 opened peak < <(jc "$TMP/$method.json" sent completed lost \
		http_non200 conn_opened conn_inflight_peak)
	assert_eq "$method: sent" 20000 "$sent"
	assert_eq "$method: completed" 20000 "$completed"
	assert_eq "$method: lost, non-200" "0 0" "$lost $non200"
	assert_eq "$method: connections" 4 "$opened"
	assert_ge "$method: streams in flight on one connection" 25 "$peak"
done
stop d
assert_eq "server: received = answered = status 200 = the two passes" "40000 40000 40000" \
	"$(resp_count d https-received) $(resp_count d https-answered) $(resp_count d https-status-200)"
assert_eq "server: connections, unanswered, h2 errors" "8 0 0" \
	"$(resp_count d https-connections) $(resp_count d https-unanswered) $(resp_count d https-h2-errors)"

echo "== --https-record-each: one TLS record per response; dnsperf (one response per read) too"
start_doh e --https-record-each
"$DV" -m doh -s 127.0.0.1 -p "$e_HTTPS" -d "$TMP/20k" -c 4 -q 100 -t 5 --json "$TMP/e.json" \
	>"$TMP/e.rep" 2>&1 || fail "record-each: $(cat "$TMP/e.rep")"
assert_eq "record-each: sent completed lost" "20000 20000 0" "$(jc "$TMP/e.json" sent completed lost)"
n=20000
if have_setup dnsperf "dnsperf not installed: dnsperf -m doh against the listener not run"; then
	dnsperf -m doh -s 127.0.0.1 -p "$e_HTTPS" -d "$TMP/1k" -c 2 -q 20 -t 5 \
		-O "doh-uri=https://127.0.0.1:$e_HTTPS/dns-query" >"$TMP/dp.rep" 2>&1 ||
		fail "dnsperf: $(cat "$TMP/dp.rep")"
	assert_eq "dnsperf: completed" 1000 "$(report_field "$TMP/dp.rep" "Queries completed")"
	n=21000
else
	echo "dnsperf not installed: its part skipped"
fi
stop e
assert_eq "server: received = answered" "$n $n" "$(resp_count e https-received) $(resp_count e https-answered)"

echo "== a wrong path: 404s counted by dnsvolley, never completed"
start_doh w
rc=0
"$DV" -m doh --doh-path /wrong -s 127.0.0.1 -p "$w_HTTPS" -d "$TMP/1k" -c 2 -q 20 -t 30 \
	--json "$TMP/w.json" >"$TMP/w.rep" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "a run with no answer exited 0"
assert_eq "wrong path: sent completed lost http_4xx" "1000 0 1000 1000" \
	"$(jc "$TMP/w.json" sent completed lost http_4xx)"
stop w
assert_eq "server: 404s, answered" "1000 0" "$(resp_count w https-status-404) $(resp_count w https-answered)"

echo "== a plain-TCP client on the DoH port fails cleanly"
# Each connection's 10 queries are lost with it when the server, its TLS handshake failed,
# resets it: at once, but it must come before -t, so -t 10 (a busy machine can stall a
# server for 1 s). A connection that ended unanswered reopens after a backoff capped at
# min(2 s, -t / 2): 100 queries over 10 connections take ~9 s (1,000 at -t 1 took ~38 s).
head -100 "$TMP/1k" >"$TMP/100"
start_doh p
rc=0
"$DV" -m tcp -s 127.0.0.1 -p "$p_HTTPS" -d "$TMP/100" -c 1 -q 10 -t 10 \
	--json "$TMP/p.json" >"$TMP/p.rep" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "a plain-TCP run on the DoH port exited 0"
! grep -Eq 'Sanitizer|runtime error' "$TMP/p.rep" || fail "dnsvolley: $(cat "$TMP/p.rep")"
read -r sent completed lost conn_lost opened < <(jc "$TMP/p.json" sent completed lost conn_lost conn_opened)
assert_eq "plain TCP: sent completed lost" "100 0 100" "$sent $completed $lost"
assert_eq "plain TCP: lost with their connection" "$lost" "$conn_lost"
stop p
assert_eq "server: handshakes failed = connections" "$(resp_count p https-connections)" \
	"$(resp_count p https-handshake-failed)"
assert_eq "server: every dnsvolley connection reached it" "$opened" "$(resp_count p https-connections)"
assert_eq "server: nothing received" 0 "$(resp_count p https-received)"
echo "PASS"
