#!/usr/bin/env bash
# stream-conns: many TCP connections all open (in waves, exact counts), 10,000 of them
# each answered, SYNs a full accept queue dropped counted, reopens back off
# against a server that accepts and closes, the NO ANSWERS diagnosis says what came back,
# and --tc-tcp against a server without TCP finishes the UDP pass and counts the retries
# it could not make (issue 28); the CSV history and dns-metrics carry the same failure split.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"

make_cert

# Lines of the report are checked word for word.
has_line() { # NAME FILE LINE
	grep -Fxq -- "$3" "$2" || fail "$1: no line '$3' in: $(cat "$2")"
	echo "ok: $1"
}

# csv_is_json NAME RUN: the history's connection split (header version 6 and later), read by column name,
# equals the results file's counters of the same run.
split="conn_failed conn_refused conn_timeouts conn_no_port conn_syn_retries conn_backoffs conn_idle_closed conn_lost"
csv_is_json() {
	assert_eq "$1: CSV = results file: $split" "$(jc "$TMP/$2.json" $split)" \
		"$(csv_row "$TMP/$2.csv" 1 $split)"
}

for i in $(seq 2000); do echo "n$i.example A"; done >"$TMP/2k"

echo "== -c 2000: every connection opens"
# The server reads every query and answers none: with -q 2000 each connection carries one
# query at most (until -t), so sending the 2,000 queries takes all 2,000 connections.
need=2100
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
	echo "SKIP part: ulimit -Hn $(ulimit -Hn) < $need"
else
	start_stream mc --stream-drop-every 1
	rc=0
	"$DV" -m tcp -s 127.0.0.1 -p "$mc_TCP" -d "$TMP/2k" -n 1 -c 2000 -q 2000 -t 8 \
		--json "$TMP/mc.json" >"$TMP/mc.rep" 2>&1 || rc=$?
	stop_responder mc
	assert_eq "-c 2000: exit status (all lost: 4)" 4 "$rc"
	read -r sent lost opened failed reopened peak lconn <<<"$(jc "$TMP/mc.json" sent lost \
		conn_opened conn_failed conn_reopened conn_pending_peak conn_lost)"
	assert_eq "-c 2000: sent" 2000 "$sent"
	assert_eq "-c 2000: lost" 2000 "$lost"
	assert_eq "-c 2000: connections opened" 2000 "$opened"
	assert_eq "-c 2000: failed" 0 "$failed"
	assert_eq "-c 2000: reopened" 0 "$reopened"
	assert_eq "-c 2000: lost with a connection" 0 "$lconn"
	assert_ge "-c 2000: in connect at once" 1 "$peak"
	assert_eq "-c 2000: the server's connections" 2000 "$(resp_count mc tcp-connections)"
	assert_eq "-c 2000: the server's queries" 2000 "$(resp_count mc tcp-received)"
fi

echo "== -c 10000: all open (waves of 2,048), every query answered"
# The responder reads no connection before it has accepted 10,000: no answer comes back
# before the last connection is open, so each of the 10,000 queries (-q 10000: one in
# flight per connection) needs a connection of its own, whatever the timing.
for i in $(seq 10000); do echo "n$i.example A"; done >"$TMP/10k"
need=10200
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
	echo "SKIP part: ulimit -Hn $(ulimit -Hn) < $need"
else
	start_stream tk --stream-read-after-conns 10000
	rc=0
	"$DV" -m tcp -s 127.0.0.1 -p "$tk_TCP" -d "$TMP/10k" -n 1 -c 10000 -q 10000 -t 60 -T 1 \
		--json "$TMP/tk.json" >"$TMP/tk.rep" 2>&1 || rc=$?
	stop_responder tk
	assert_eq "-c 10000: exit status" 0 "$rc"
	read -r sent completed lost opened failed reopened peak syn <<<"$(jc "$TMP/tk.json" sent \
		completed lost conn_opened conn_failed conn_reopened conn_pending_peak conn_syn_retries)"
	assert_eq "-c 10000: sent" 10000 "$sent"
	assert_eq "-c 10000: completed" 10000 "$completed"
	assert_eq "-c 10000: lost" 0 "$lost"
	assert_eq "-c 10000: connections opened" 10000 "$opened"
	assert_eq "-c 10000: failed, reopened" "0 0" "$failed $reopened"
	# the first wave: 2,048 connects issued before any completion is looked at
	assert_eq "-c 10000: in connect at once (a worker's TCP window)" 2048 "$peak"
	assert_eq "-c 10000: the server's connections" 10000 "$(resp_count tk tcp-connections)"
	assert_eq "-c 10000: the server's queries" 10000 "$(resp_count tk tcp-received)"
	assert_eq "-c 10000: the server's answers" 10000 "$(resp_count tk tcp-answered)"
	echo "ok: -c 10000 (SYNs sent again: $syn)"
fi

echo "== a full accept queue: SYNs sent again are counted"
# A listener with backlog 0 that never accepts: the first connection fills its accept
# queue, the kernel drops the other SYNs. Each attempt of the other three sends its SYN
# again at 1 s (then 3 s; since Linux 6.5 net.ipv4.tcp_syn_linear_timeouts makes it 2 s),
# times out at -t 2.5 and is tried again after a backoff until the pass ends: every
# attempt that timed out retried its SYN once or twice (three times on a stalled machine).
cat >"$TMP/full.py" <<'P'
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(0)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
P
python3 "$TMP/full.py" "$TMP/full.port" &
_pids+=("$!")
for _ in $(seq 200); do [ -s "$TMP/full.port" ] && break; sleep 0.05; done
[ -s "$TMP/full.port" ] || fail "the full-queue listener did not start"
head -4 "$TMP/2k" >"$TMP/4"
rc=0
"$DV" -m tcp -s 127.0.0.1 -p "$(cat "$TMP/full.port")" -d "$TMP/4" -n 1 -c 4 -q 4 -t 2.5 -T 1 \
	--json "$TMP/full.json" --csv "$TMP/full.csv" >"$TMP/full.rep" 2>&1 || rc=$?
assert_eq "full queue: exit status (no answers: 4)" 4 "$rc"
read -r opened failed timeouts syn <<<"$(jc "$TMP/full.json" conn_opened conn_failed \
	conn_timeouts conn_syn_retries)"
assert_eq "full queue: opened (the one in the accept queue)" 1 "$opened"
assert_eq "full queue: every failed attempt timed out" "$failed" "$timeouts"
assert_ge "full queue: attempts timed out" 3 "$timeouts"
assert_ge "full queue: SYNs sent again" "$timeouts" "$syn"
assert_le "full queue: SYNs sent again" "$((3 * timeouts))" "$syn"
grep -q "^  SYNs sent again:      $syn " "$TMP/full.rep" ||
	fail "full queue: no SYN line in $(cat "$TMP/full.rep")"
echo "ok: full queue: $syn SYNs sent again"
csv_is_json "full queue" full

echo "== accept and close: reopens back off"
cat >"$TMP/aac.py" <<'P'
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(128)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.close()
P
python3 "$TMP/aac.py" "$TMP/aac.port" &
_pids+=("$!")
for _ in $(seq 200); do [ -s "$TMP/aac.port" ] && break; sleep 0.05; done
[ -s "$TMP/aac.port" ] || fail "the accept-and-close server did not start"
rc=0
"$DV" -m tcp -s 127.0.0.1 -p "$(cat "$TMP/aac.port")" -d "$TMP/2k" -c 1 -q 10 -l 2 -t 5 \
	--json "$TMP/aac.json" --csv "$TMP/aac.csv" >"$TMP/aac.rep" 2>&1 || rc=$?
assert_eq "accept-and-close: exit status (no answers: 4)" 4 "$rc"
read -r opened failed reopened backoffs closed idle reset completed <<<"$(jc "$TMP/aac.json" \
	conn_opened conn_failed conn_reopened conn_backoffs conn_closed conn_idle_closed \
	conn_reset completed)"
# Unpaced, sending starts with the first connect and lasts 2 s. Each reopen waits at least
# half the backoff (100 ms doubling, capped at min(2 s, -t/2)): opens at 0, 0.05, 0.15,
# 0.35, 0.75, 1.55 s at the earliest, so at most 6 in 2 s however fast the machine is,
# plus one whose time came in the late turn that ends sending (timers before the send).
# Without the backoff: thousands.
assert_le "accept-and-close: connections opened and attempts" 7 "$((opened + failed))"
assert_ge "accept-and-close: opened" 1 "$opened"
# The first connection is closed at once and reopened after its backoff (50-100 ms), well
# inside the 2 s: at least one reopen, so "every reopen backed off" compares counts, not
# two zeros (a client that never reopened passed it).
assert_ge "accept-and-close: reopened" 1 "$reopened"
assert_eq "accept-and-close: every reopen backed off" "$reopened" "$backoffs"
assert_eq "accept-and-close: completed" 0 "$completed"
if [ "$backoffs" -gt 0 ]; then
	has_line "accept-and-close: backoff line" "$TMP/aac.rep" \
		"  Reopened after a backoff: $backoffs (the connection before ended, or the attempt failed, without an answer)"
fi
# What came back: connections ended by the server (with a FIN or, if our query was
# still unread when it closed, a reset).
line="  NO ANSWERS: not one query was answered; what came back: "
sep=""
[ "$closed" -eq 0 ] || { line+="$closed connections closed by the server with queries in flight"; sep=", "; }
[ "$idle" -eq 0 ] || { line+="${sep}$idle connections closed by the server idle"; sep=", "; }
[ "$reset" -eq 0 ] || line+="${sep}$reset connections reset"
has_line "accept-and-close: NO ANSWERS says the connections ended" "$TMP/aac.rep" "$line"
csv_is_json "accept-and-close" aac

echo "== NO ANSWERS says what came back"
# Wrong IDs and garbage: every answer comes back at once but completes nothing, so each
# query waits out -t and the run ends one -t after its last send; the counts need every
# answer in before that end. The window holds all 100 queries (-q 100): one -t of 5 s,
# the run time ten of 0.5 s used to take, far beyond any delay of the responder.
for i in $(seq 100); do echo "n$i.example A"; done >"$TMP/100"
start_responder wi --wrong-id-every 1
rc=0
"$DV" -s 127.0.0.1 -p "$wi_PORT" -d "$TMP/100" -n 1 -c 1 -q 100 -t 5 \
	--json "$TMP/wi.json" >"$TMP/wi.rep" 2>&1 || rc=$?
stop_responder wi
assert_eq "wrong IDs: exit status" 4 "$rc"
assert_eq "wrong IDs: unexpected" 100 "$(jc "$TMP/wi.json" unexpected)"
has_line "wrong IDs: NO ANSWERS line" "$TMP/wi.rep" \
	"  NO ANSWERS: not one query was answered; what came back: 100 unexpected answers (matching no query in flight)"

start_responder ga --garbage-every 1
rc=0
"$DV" -s 127.0.0.1 -p "$ga_PORT" -d "$TMP/100" -n 1 -c 1 -q 100 -t 5 \
	--json "$TMP/ga.json" >"$TMP/ga.rep" 2>&1 || rc=$?
stop_responder ga
assert_eq "garbage: exit status" 4 "$rc"
assert_eq "garbage: malformed" 100 "$(jc "$TMP/ga.json" malformed)"
has_line "garbage: NO ANSWERS line" "$TMP/ga.rep" \
	"  NO ANSWERS: not one query was answered; what came back: 100 malformed answers (not a parseable DNS response)"

# Each of 5 connections carries one query (-q 5 -c 5); the server reads it, answers
# nothing and closes: 5 connections closed with a query in flight, whatever the timing
# (-t 30: the close must come before the query times out; it ends the run, not -t).
start_stream cl --stream-drop-every 1 --stream-close-after 1
rc=0
head -5 "$TMP/100" >"$TMP/5"
"$DV" -m tcp -s 127.0.0.1 -p "$cl_TCP" -d "$TMP/5" -n 1 -c 5 -q 5 -t 30 \
	--json "$TMP/cl.json" >"$TMP/cl.rep" 2>&1 || rc=$?
stop_responder cl
assert_eq "closed by the server: exit status" 4 "$rc"
assert_eq "closed by the server: conn_closed" 5 "$(jc "$TMP/cl.json" conn_closed)"
has_line "closed by the server: NO ANSWERS line" "$TMP/cl.rep" \
	"  NO ANSWERS: not one query was answered; what came back: 5 connections closed by the server with queries in flight"

start_responder si --drop-every 1
rc=0
"$DV" -s 127.0.0.1 -p "$si_PORT" -d "$TMP/5" -n 1 -c 1 -q 5 -t 0.3 >"$TMP/si.rep" 2>&1 || rc=$?
stop_responder si
assert_eq "silence: exit status" 4 "$rc"
has_line "silence: NO ANSWERS line" "$TMP/si.rep" \
	"  NO ANSWERS: not one query was answered, and nothing came back at all (silence: a firewall dropping, a wrong address, or a server that does not answer)"

echo "== --tc-tcp and no TCP listener: the UDP pass finishes, the retries not made counted"
for i in $(seq 1000); do echo "n$i.example A"; done >"$TMP/1k"
start_responder tc --tc-every 10
rc=0
"$DV" -s 127.0.0.1 -p "$tc_PORT" -d "$TMP/1k" -n 1 -c 4 -q 100 -t 30 --tc-tcp \
	--json "$TMP/tc.json" --csv "$TMP/tc.csv" --dns-metrics "$TMP/tc.jsonl" >"$TMP/tc.rep" 2>&1 || rc=$?
stop_responder tc
assert_eq "tc-tcp, no TCP: exit status" 0 "$rc"
read -r sent completed truncated retried noconn notsent opened failed refused <<<"$(jc \
	"$TMP/tc.json" sent completed truncated tc_retried tc_no_conn tc_not_sent conn_opened \
	conn_failed conn_refused)"
assert_eq "tc-tcp, no TCP: sent" 1000 "$sent"
assert_eq "tc-tcp, no TCP: completed" 1000 "$completed"
assert_eq "tc-tcp, no TCP: truncated" 100 "$truncated"
assert_eq "tc-tcp, no TCP: asked again" 0 "$retried"
assert_eq "tc-tcp, no TCP: not asked, no connection" 100 "$noconn"
assert_eq "tc-tcp, no TCP: not asked, queue" 0 "$notsent"
assert_eq "tc-tcp, no TCP: connections opened" 0 "$opened"
assert_eq "tc-tcp, no TCP: every attempt refused" "$failed" "$refused"
assert_ge "tc-tcp, no TCP: attempts" 1 "$failed"
has_line "tc-tcp, no TCP: report line" "$TMP/tc.rep" \
	"  Not asked over TCP:   100 (--tc-tcp: no TCP connection to the server could be made; $failed attempts failed: refused $refused, timed out 0, no local port 0)"
# The history (header version 6 and later) and dns-metrics carry the same split.
csv_is_json "tc-tcp, no TCP" tc
assert_eq "tc-tcp, no TCP: dns-metrics connections failed, refused, timed out, no port" \
	"$failed $refused 0 0" \
	"$(mconn "$TMP/tc.jsonl" connections_failed connections_refused connections_timed_out connections_no_port)"
echo "PASS"
