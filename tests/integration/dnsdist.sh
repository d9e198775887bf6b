#!/usr/bin/env bash
# dnsdist: -m dot, doh (and tcp) through dnsdist as a DoT and DoH front end (Debian's,
# no packet cache) to the responder; exact counts against the responder's and dnsdist's
# own counters (its web API), -q far above -c on one connection (dnsperf#211), and an
# HTTP/2 GOAWAY from a real server (dnsdist's DoH idle timeout) counted as a closed
# connection and reopened.
#
# dnsdist 1.7.3 (Debian 12) is given maxInFlight on its DoT listener: with the default
# (0, queries handled one at a time) it answers only the first query of a TLS record
# that holds several and leaves the rest in OpenSSL's buffer until more bytes arrive
# or its read timeout (2 s) ends the connection. dnsvolley writes many queries per
# record (RFC 7766 pipelining), so such a pass loses its last queries; dnsdist still
# counts their answers from the backend as responses. dnsperf writes one query per
# record and does not meet it. maxInFlight (out-of-order processing) reads them all.
. "$(dirname "$0")/lib.sh"

command -v dnsdist >/dev/null || skip "dnsdist not installed"
command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"
make_cert

# The backend: the responder on one port for UDP (dnsdist sends DoH queries over UDP)
# and TCP (dnsdist 1.7 sends DoT and TCP queries over TCP).
bport=$(free_port)
start_responder be -p "$bport" --tcp-port "$bport"

dd="$TMP/dnsdist"
mkdir -p "$dd"
plain=$(free_port) dot=$(free_port) doh=$(free_port) idle=$(free_port) web=$(free_port)
cat >"$dd/dnsdist.conf" <<C
setSecurityPollSuffix("")
setLocal("127.0.0.1:$plain")
addTLSLocal("127.0.0.1:$dot", "$TMP/cert.pem", "$TMP/key.pem", {maxInFlight=100})
addDOHLocal("127.0.0.1:$doh", "$TMP/cert.pem", "$TMP/key.pem", "/dns-query")
addDOHLocal("127.0.0.1:$idle", "$TMP/cert.pem", "$TMP/key.pem", "/dns-query", {idleTimeout=1})
-- forced up: no health-check queries reach the responder
newServer({address="127.0.0.1:$bport"}):setUp()
webserver("127.0.0.1:$web")
setWebserverConfig({apiKey="dnsvolley-test"})
C
dnsdist --supervised --disable-syslog -C "$dd/dnsdist.conf" >"$dd/out" 2>&1 &
_pids+=("$!")

# snap FILE: dnsdist's statistics now (web API), for deltas.
snap() {
	python3 - "$web" "$1" <<'P'
import sys, urllib.request
r = urllib.request.Request("http://127.0.0.1:%s/api/v1/servers/localhost" % sys.argv[1],
                           headers={"X-API-Key": "dnsvolley-test"})
open(sys.argv[2], "wb").write(urllib.request.urlopen(r, timeout=5).read())
P
}
for _ in $(seq 100); do
	snap "$dd/s0" 2>/dev/null && break
	sleep 0.1
done
[ -s "$dd/s0" ] || fail "dnsdist did not start: $(cat "$dd/out")"

# delta BEFORE AFTER KEY...: what dnsdist counted between two snaps. KEY is be/NAME (the
# backend), fe/PORT/NAME (a frontend: queries, responses, tlsNewSessions...) or
# doh/PORT/NAME (a DoH frontend's HTTP counters: http-connects, post-queries...).
delta() {
	python3 - "$@" <<'P'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def get(d, key):
    k = key.split("/")
    if k[0] == "be":
        return d["servers"][0][k[1]]
    lst = d["frontends"] if k[0] == "fe" else d["dohFrontends"]
    for f in lst:
        if f["address"].endswith(":" + k[1]) and (k[0] == "doh" or f["tcp"]):
            return f[k[2]]
    raise KeyError(key)
print(" ".join(str(get(b, k) - get(a, k)) for k in sys.argv[3:]))
P
}

for i in $(seq 20000); do echo "n$i.example A"; done >"$TMP/20k"
tcp_done=0 udp_done=0

# run NAME PORT FLAGS...: one pass through dnsdist between two snaps ($dd/NAME.a, .b);
# its counters in $TMP/NAME.json. Every query completed, none lost.
run() {
	local name=$1 port=$2 sent completed lost
	shift 2
	snap "$dd/$name.a"
	"$DV" -s 127.0.0.1 -p "$port" -d "$TMP/20k" -t 5 --json "$TMP/$name.json" "$@" \
		>"$TMP/$name.rep" 2>&1 || fail "$name: $(cat "$TMP/$name.rep")"
	snap "$dd/$name.b"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$name.rep" || fail "$name: $(cat "$TMP/$name.rep")"
	read -r sent completed lost late < <(jc "$TMP/$name.json" sent completed lost late)
	assert_eq "$name: sent = completed + lost" "$sent" "$((completed + lost))"
	if [ -z "${LOSSY:-}" ]; then
		assert_eq "$name: completed" 20000 "$completed"
		assert_eq "$name: dnsdist's backend queries and responses" "$completed $completed" \
			"$(delta "$dd/$name.a" "$dd/$name.b" be/queries be/responses)"
		return
	fi
	# LOSSY: 1000 in flight on one connection through dnsdist; beside other tests under
	# ASan 53 of 20,000 once went over -t 5 (not reproduced alone): how many answers
	# beat the timeout depends on the machine's load. What must hold at any load: most
	# complete (dnsperf#211 lost nearly all; half would need half the answers 5 s late),
	# and nothing completes that dnsdist's backend did not answer; the backend's answers
	# are what the responder counts.
	assert_ge "$name: completed (half at least; ~100% idle)" 10000 "$completed"
	read -r beq ber <<<"$(delta "$dd/$name.a" "$dd/$name.b" be/queries be/responses)"
	assert_le "$name: completed + late <= dnsdist's backend responses" "$ber" "$((completed + late))"
	assert_eq "$name: dnsdist's backend responses = its queries" "$beq" "$ber"
	lossy_backend=$ber
}

echo "== DoT: -c 4 -q 100, a new connection every 2000 queries (resumed handshakes)"
run dot "$dot" -m dot -c 4 -q 100 --queries-per-conn 2000
read -r full resumed opened reopened abandoned <<<"$(jc "$TMP/dot.json" tls_full tls_resumed \
	conn_opened conn_reopened conn_abandoned)"
assert_eq "dot: dnsdist's DoT queries and responses" "20000 20000" \
	"$(delta "$dd/dot.a" "$dd/dot.b" fe/$dot/queries fe/$dot/responses)"
assert_eq "dot: dnsdist's new and resumed TLS sessions" "$full $resumed" \
	"$(delta "$dd/dot.a" "$dd/dot.b" fe/$dot/tlsNewSessions fe/$dot/tlsResumptions)"
assert_ge "dot: connections (20000 / 2000 at least)" 10 "$opened"
assert_eq "dot: 4 + reopened = opened + abandoned" "$((4 + reopened))" "$((opened + abandoned))"
assert_eq "dot: a handshake per connection" "$opened" "$((full + resumed))"
assert_ge "dot: resumed handshakes" 1 "$resumed"
tcp_done=$((tcp_done + 20000))

echo "== -q far above -c: one connection, 1000 in flight (dnsperf#211)"
LOSSY=1 run dot1 "$dot" -m dot -c 1 -q 1000
assert_ge "dot1: peak in flight on the connection" 500 "$(jc "$TMP/dot1.json" conn_inflight_peak)"
# What dnsdist's frontend never counted (it dropped 2 of 20,000 once under ASan: 1.7.3
# reading pipelined queries out of TLS records) is exactly what we lost.
assert_eq "dot1: lost = the queries dnsdist's DoT frontend never counted" "$(jc "$TMP/dot1.json" lost)" \
	"$((20000 - $(delta "$dd/dot1.a" "$dd/dot1.b" fe/$dot/queries)))"
tcp_done=$((tcp_done + lossy_backend))
LOSSY=1 run tcp1 "$plain" -m tcp -c 1 -q 1000
assert_eq "tcp1: lost = the queries dnsdist's TCP frontend never counted" "$(jc "$TMP/tcp1.json" lost)" \
	"$((20000 - $(delta "$dd/tcp1.a" "$dd/tcp1.b" fe/$plain/queries)))"
tcp_done=$((tcp_done + lossy_backend))

echo "== DoH: POST -c 4 -q 100, GET -c 1 -q 1000"
run doh "$doh" -m doh -c 4 -q 100
read -r opened <<<"$(jc "$TMP/doh.json" conn_opened)"
assert_eq "doh: dnsdist's connections, HTTP/2 and POST queries, 200s, valid responses" \
	"$opened 20000 20000 20000 20000" "$(delta "$dd/doh.a" "$dd/doh.b" doh/$doh/http-connects \
		doh/$doh/http2-queries doh/$doh/post-queries doh/$doh/http2-200-responses \
		doh/$doh/valid-responses)"
assert_eq "doh: dnsdist's DoH frontend queries" 20000 "$(delta "$dd/doh.a" "$dd/doh.b" fe/$doh/queries)"
run doh1 "$doh" -m doh -c 1 -q 1000 --doh-method GET
assert_eq "doh1: dnsdist's GET queries, 200s" "20000 20000" \
	"$(delta "$dd/doh1.a" "$dd/doh1.b" doh/$doh/get-queries doh/$doh/http2-200-responses)"
assert_ge "doh1: streams in flight on the connection" 25 "$(jc "$TMP/doh1.json" conn_inflight_peak)"
udp_done=$((udp_done + 40000))

echo "== GOAWAY: dnsdist's DoH idle timeout (1 s) ends idle connections with a GOAWAY"
# First the frame itself, from a bare HTTP/2 client: GOAWAY, NO_ERROR, after ~1 s idle.
python3 - "$idle" >"$TMP/goaway.txt" <<'P' || fail "no GOAWAY: $(cat "$TMP/goaway.txt")"
import socket, ssl, struct, sys, time
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2"])
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))))
s.settimeout(5)
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
t0, buf = time.monotonic(), b""
while True:
    d = s.recv(65536)
    if not d:
        print("closed without a GOAWAY")
        sys.exit(1)
    buf += d
    while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
        n, typ = int.from_bytes(buf[:3], "big"), buf[3]
        pay, buf = buf[9:9 + n], buf[9 + n:]
        if typ == 7:
            code = struct.unpack(">I", pay[4:8])[0]
            print("GOAWAY %d %.0f" % (code, (time.monotonic() - t0) * 1000))
            sys.exit(0)
P
read -r word code ms <"$TMP/goaway.txt"
assert_eq "the frame dnsdist ends an idle connection with" "GOAWAY 0" "$word $code"
# A lower bound on dnsdist's own idle timeout (1 s): load can only make it later.
assert_ge "ms idle before it" 900 "$ms"
# Then dnsvolley: 3 queries 2.5 s apart on one connection; it idles 1 s after each
# answer, gets a GOAWAY, reopens, idles again: every GOAWAY is a connection closed by
# the server with nothing in flight (conn_idle_closed) and reopened, no query lost.
head -3 "$TMP/20k" >"$TMP/3"
snap "$dd/ga.a"
"$DV" -m doh -s 127.0.0.1 -p "$idle" -d "$TMP/3" -c 1 -Q 0.4 -t 30 --json "$TMP/ga.json" \
	>"$TMP/ga.rep" 2>&1 || fail "GOAWAY run: $(cat "$TMP/ga.rep")"
snap "$dd/ga.b"
read -r sent completed lost opened reopened idle_closed closed failed abandoned < <(jc \
	"$TMP/ga.json" sent completed lost conn_opened conn_reopened conn_idle_closed \
	conn_closed conn_failed conn_abandoned)
assert_eq "GOAWAY: sent, completed, lost" "3 3 0" "$sent $completed $lost"
assert_ge "GOAWAY: connections the server closed idle" 2 "$idle_closed"
assert_eq "GOAWAY: closed with queries in flight" 0 "$closed"
assert_eq "GOAWAY: every one reopened" "$idle_closed" "$reopened"
assert_eq "GOAWAY: opened = 1 + reopened, none failed or abandoned" "$((1 + reopened)) 0 0" \
	"$opened $failed $abandoned"
assert_eq "GOAWAY: dnsdist's connections, queries" "$opened 3" \
	"$(delta "$dd/ga.a" "$dd/ga.b" doh/$idle/http-connects doh/$idle/http2-queries)"
grep -q "closed by server $idle_closed (idle $idle_closed)" "$TMP/ga.rep" ||
	fail "GOAWAY: the report: $(grep 'Connections ended' "$TMP/ga.rep")"
udp_done=$((udp_done + 3))

echo "== the responder saw exactly the queries dnsvolley completed"
stop_responder be
assert_eq "responder: TCP received, answered (DoT and TCP through dnsdist)" \
	"$tcp_done $tcp_done" "$(resp_count be tcp-received) $(resp_count be tcp-answered)"
assert_eq "responder: UDP received, answered (DoH through dnsdist)" \
	"$udp_done $udp_done" "$(resp_count be received) $(resp_count be answered)"
echo "dnsdist: all assertions hold"
