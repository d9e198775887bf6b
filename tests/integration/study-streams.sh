#!/usr/bin/env bash
# Cold/hot studies over TCP, DoT, DoH and DoQ: the readiness probe and version.bind ask the
# way the passes do (a DoT or DoH port answers no datagram, so a UDP probe never saw one
# ready). Against the responder: every study ends, each cold pass probed with one query,
# and its counts per listener are exactly the passes' queries and connections, the
# probes' and the version query's. Against hostile peers (tests/helpers/hostile-stream
# and hostile-doq): the probe gives up at --ready-timeout with exit 3, and its message's
# queries and connections are the peer's own counts, with why the last one ended. A
# server that starts while the probe waits is waited for, and no query is lost to it.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] && [ -x "$top_builddir/tests/helpers/hostile-stream" ] &&
	[ -x "$top_builddir/tests/helpers/hostile-doq" ] || fail "binaries not built"
command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
make_cert
printf 'a.example A\nb.example A\nc.example AAAA\n' >"$TMP/l.txt"

# sums FILE KEY...: each key summed over the passes of a results file (counters, or the
# pass's own fields such as probe_queries), space-joined.
sums() {
	python3 - "$@" <<'P'
import json, sys
ps = json.load(open(sys.argv[1]))["passes"]
print(" ".join(str(sum(p.get(k, p["counters"].get(k, 0)) for p in ps)) for k in sys.argv[2:]))
P
}

# study NAME PORT KIND [flags...]: a two-repeat cold/hot study; report in $TMP/NAME.txt,
# results in $TMP/NAME.json; the exit status in NAME_RC.
study() {
	local name=$1 port=$2 kind=$3 rc=0 sni=()
	shift 3
	[ "$kind" = tcp ] || sni=(--tls-sni dnsvolley.test)
	timeout 100 "$DV" -s "127.0.0.1:$port" -m "$kind" "${sni[@]}" -d "L=$TMP/l.txt" \
		--passes cold,hot --repeat 2 --hot-runs 2 --flush true --no-progress \
		--json "$TMP/$name.json" "$@" >"$TMP/$name.txt" 2>&1 || rc=$?
	[ "$rc" != 124 ] || fail "$name: no end within the guard"
	printf -v "${name}_RC" '%s' "$rc"
}

# --- 1. The responder, all four listeners: every study ends, every count is exact.
start_stream R --https-port 0 --https-port-file "$TMP/R.https" --doq-port 0 \
	--doq-port-file "$TMP/R.doq"
declare -A port=([tcp]=$R_TCP [dot]=$R_TLS [doh]=$(cat "$TMP/R.https") [doq]=$(cat "$TMP/R.doq"))
for kind in tcp dot doh doq; do
	study "$kind" "${port[$kind]}" "$kind" --server-version
	rc_var="${kind}_RC"
	[ "${!rc_var}" = 0 ] || fail "$kind: exit ${!rc_var}: $(tail -5 "$TMP/$kind.txt")"
	read -r sent opened probes <<<"$(sums "$TMP/$kind.json" sent conn_opened probe_queries)"
	# A probe query per cold pass at least (one more each time a handshake took over the
	# probe's 1 s patience), each on a connection of its own: counted below either way.
	assert_ge "$kind: probe queries (2 cold passes)" 2 "$probes"
	assert_eq "$kind: passes sent (2 cold of 3, 2 hot of 2 x 3)" 18 "$sent"
	eval "want_q_$kind=$((sent + probes + 1)) want_c_$kind=$((opened + probes + 1))"
	grep -q '^   "server_version": null' "$TMP/$kind.json" ||
		fail "$kind: server_version not null (the responder answers version.bind with no TXT)"
done
stop_responder R
# The responder's counts per listener: the passes', the probes' and one version query
# (one query, so its connection has its whole 2 s), each on a connection of its own.
# (DoH's listener is "https".)
declare -A listener=([tcp]=tcp [dot]=tls [doh]=https [doq]=doq)
for kind in tcp dot doh doq; do
	q="want_q_$kind" c="want_c_$kind"
	assert_eq "$kind: queries the listener answered" "${!q}" "$(resp_count R "${listener[$kind]}-answered")"
	assert_eq "$kind: connections the listener accepted" "${!c}" "$(resp_count R "${listener[$kind]}-connections")"
done

# --- 2. Hostile peers: exit 3 at --ready-timeout, the message's counts are the peer's (no
# version query: it would be one more of each).
# refused NAME WHY QUERIES_KEY CONNS_KEY: the study NAME stopped at its probe, saying WHY
# (a glob) of the last connection; its "N queries over M connections" are the helper's
# counts of those keys ("-": not compared).
refused() {
	local name=$1 why=$2 qk=$3 ck=$4 line n m rc_var="${1}_RC"
	assert_eq "$name: exit (target not ready)" 3 "${!rc_var}"
	line=$(grep -m1 "target not ready: no answer to the readiness probe after" "$TMP/$name.txt") ||
		fail "$name: no readiness message: $(tail -3 "$TMP/$name.txt")"
	[[ "$line" =~ \(([0-9]+)\ quer(y|ies)\ over\ ([0-9]+)\ connections?\;\ the\ last:\ (.*)\)$ ]] ||
		fail "$name: message not as expected: $line"
	n=${BASH_REMATCH[1]} m=${BASH_REMATCH[3]}
	[[ "${BASH_REMATCH[4]}" == $why ]] || fail "$name: last connection ended '${BASH_REMATCH[4]}', not '$why'"
	assert_ge "$name: connections tried" 2 "$m"
	[ "$qk" = - ] || assert_eq "$name: queries = the peer's" "$(resp_count "$name" "$qk")" "$n"
	[ "$ck" = - ] || assert_eq "$name: connections = the peer's" "$(resp_count "$name" "$ck")" "$m"
	[ -s "$TMP/$name.json" ] || fail "$name: no results file"
	echo "ok: $name: $n queries over $m connections; the last: ${BASH_REMATCH[4]}"
}
# against NAME KIND MODE TIMEOUT WHY: a study against hostile-stream in MODE that must stop
# at its probe after TIMEOUT s, the last connection ended as WHY; counts compared.
against() {
	start_hostile_stream "$1" "$2" "$3"
	local port="${1}_PORT"
	study "$1" "${!port}" "$2" --ready-timeout "$4" --no-server-version
	stop_responder "$1"
	refused "$1" "$5" queries connections
}
# Silent: every query read, none answered; a connection is given up after 1 s, then 2 s.
against silent tcp silent 2.5 "no answer in *"
# Answers to another ID, and with QR clear, are not answers.
against wrongid dot wrong-id 2.5 "no answer in *"
against qr0 doh qr0 2.5 "no answer in *"
# Closed at accept: reopened after 100, 200, 400 ms...; a TLS one never takes a query.
against aclose dot accept-close 1.5 "*"
assert_eq "aclose: the peer read no query" 0 "$(resp_count aclose queries)"
# DoH: GOAWAY at once, and a stream limit of 0: nothing can be asked.
against goaway doh goaway 1.5 "the server sent GOAWAY"
assert_eq "goaway: one GOAWAY per connection" "$(resp_count goaway connections)" "$(resp_count goaway goaways)"
against zero doh zero-streams 2.5 "no query taken in * s: the server allows no stream*"
# DoQ (hostile-doq): a reset stream, a closed connection, a peer that never answers.
for mode in stream-reset close silent; do
	name=doq_${mode%%-*}
	start_hostile_doq "$name" "$mode"
	port="${name}_PORT"
	study "$name" "${!port}" doq --ready-timeout 2.5 --no-server-version
	stop_responder "$name"
done
refused doq_stream "the server reset the stream with DOQ_INTERNAL_ERROR (0x1)" - doq-connections
assert_eq "stream-reset: one reset per query" "$(resp_count doq_stream doq-stream-resets)" \
	"$(grep -o '([0-9]* quer' "$TMP/doq_stream.txt" | head -1 | tr -dc 0-9)"
refused doq_close "the server closed the QUIC connection with DOQ_PROTOCOL_ERROR (0x2)" - doq-conn-closes
# A silent QUIC server completes no handshake: no query, no connection on its side.
refused doq_silent "the QUIC handshake did not finish in * s" - -
assert_eq "doq silent: queries" 0 "$(grep -o '([0-9]* quer' "$TMP/doq_silent.txt" | head -1 | tr -dc 0-9)"
assert_eq "doq silent: handshakes on the peer's side" 0 "$(resp_count doq_silent doq-handshakes)"

# --- 3. A server that starts while the probe waits: the flush starts it 0.5 s late, so the
# probe meets refused connections first (test_study's test_probe_over_tcp counts those);
# over TCP a refused connection carries no query: one probe query, none lost.
tport=$(free_port)
flush="(sleep 0.5; exec '$RESPONDER' -a 127.0.0.1 -p 0 --tcp-port $tport >'$TMP/late.out' 2>&1) &"
flush="$flush echo \$! >'$TMP/late.pid'"
study late "$tport" tcp --no-server-version --ready-timeout 60 --repeat 1 --hot-runs 1 --flush "$flush"
[ -s "$TMP/late.pid" ] || fail "late server: the flush did not start it: $(tail -3 "$TMP/late.txt")"
late=$(cat "$TMP/late.pid")
_pids+=("$late")
kill -INT "$late" 2>/dev/null || true
for _ in $(seq 200); do kill -0 "$late" 2>/dev/null || break; sleep 0.05; done
assert_eq "late server: exit" 0 "$late_RC"
assert_eq "late server: probe queries" 1 "$(sums "$TMP/late.json" probe_queries)"
assert_eq "late server: answered = passes + probe" "$(($(sums "$TMP/late.json" sent) + 1))" \
	"$(awk '$1 == "tcp-answered" { print $2 }' "$TMP/late.out")"
echo "ok: late server: one probe query, waited $(sums "$TMP/late.json" ready_wait_s) s"

# --- 4. SIGINT while the probe waits ends the study at once as interrupted (exit 3, the
# results file written, "interrupted": true), over UDP and over TCP: before 2026-12-03 the
# wait ran on to --ready-timeout. Here that is 600 s, and the guard kills at 60 s (exit
# 124): a probe that does not heed the signal fails on its exit status.
for kind in udp tcp; do
	rm -f "$TMP/heard.$kind" "$TMP/silent.$kind"
	python3 - "$kind" "$TMP/silent.$kind" "$TMP/heard.$kind" <<'P' &
import os, socket, sys, time
kind, port_file, heard = sys.argv[1:4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
s.bind(("127.0.0.1", 0))
if kind == "tcp":
    s.listen(8)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(port_file + ".tmp", port_file)
c = s if kind == "udp" else s.accept()[0]
c.settimeout(120)
c.recv(2048)  # the first probe query: never answered
open(heard, "w").close()
time.sleep(120)
P
	_pids+=("$!")
	for _ in $(seq 600); do [ -s "$TMP/silent.$kind" ] && break; sleep 0.05; done
	rc=0
	timeout 60 "$DV" -s "127.0.0.1:$(cat "$TMP/silent.$kind")" -m "$kind" -d "L=$TMP/l.txt" \
		--passes cold,hot --flush true --ready-timeout 600 --no-progress --no-server-version \
		--json "$TMP/int.$kind.json" >"$TMP/int.$kind.out" 2>&1 &
	dv=$!
	for _ in $(seq 1200); do [ -e "$TMP/heard.$kind" ] && break; sleep 0.05; done
	[ -e "$TMP/heard.$kind" ] || fail "$kind: the probe never reached the silent server"
	kill -INT "$dv"
	wait "$dv" || rc=$?
	assert_eq "$kind: SIGINT in the probe's wait: exit" 3 "$rc"
	grep -q "^The study was interrupted" "$TMP/int.$kind.out" || fail "$kind: $(tail -3 "$TMP/int.$kind.out")"
	grep -q '"interrupted": true' "$TMP/int.$kind.json" || fail "$kind: results file not marked interrupted"
	echo "ok: $kind: SIGINT in the probe's wait ended the study as interrupted"
done
