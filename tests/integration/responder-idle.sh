#!/usr/bin/env bash
# responder-idle: an idle dnsvolley-responder sleeps until there is work or a signal: no
# timer wakes any of its threads (main waits on a signalfd and the stop pipe, the socket
# threads in recvmmsg or ppoll without a timeout, the stream thread in epoll_wait, the DoQ
# thread in poll with its connections' timers only). Its threads' context switches over an
# idle window are a count, not a duration: with no timer it is ~0 at any load (the old
# 100 ms ticks made ~20 per thread in the window). Then it still answers (exact counts),
# and SIGTERM still stops it at once with its counts on stdout.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
[ -x "$RESPONDER" ] || skip "dnsvolley-responder not built"
command -v openssl >/dev/null || skip "openssl not installed"
make_cert

for i in $(seq 300); do echo "i$i.example A"; done >"$TMP/list.txt"

# threads_asleep PID: every thread of PID is asleep (state S in /proc/PID/task/*/stat), and
# how many there are. A condition, not a wait: a thread just created may not have reached
# its first blocking call when the port file appears (the threads start after it).
threads_asleep() {
	local st
	st=$(for t in /proc/"$1"/task/*/stat; do awk '{ sub(/.*\) /, ""); print $1 }' "$t"; done)
	[ -n "$st" ] && ! grep -qv '^S$' <<<"$st" && wc -l <<<"$st"
}

# cs_threads PID: "TID switches" for each thread (voluntary + nonvoluntary).
cs_threads() {
	local t
	for t in /proc/"$1"/task/*; do
		awk -v t="${t##*/}" '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print t, s }' "$t/status"
	done
}

# IDLE_MAX: context switches allowed over the whole window, all threads together. Once
# every thread sleeps nothing of the responder's own wakes it: no one-off wake-up is
# expected (0 on the machines seen). The margin keeps a stray one from outside (the
# kernel migrating a sleeping task does not count; a signal sent to the test's process
# group would) from failing the test, while any timer still does: the old 100 ms ticks
# made ~20 per thread in the window.
IDLE_MAX=4
WINDOW=2

# idle NAME THREADS: wait until the responder NAME's THREADS threads are all asleep, then
# count their context switches over WINDOW seconds; the same threads must be there after.
idle() {
	local name=$1 want=$2 pidvar="${1}_PID" pid n i before after sum
	pid=${!pidvar}
	for i in $(seq 1200); do
		n=$(threads_asleep "$pid" || true)
		[ "$n" = "$want" ] && break
		kill -0 "$pid" 2>/dev/null || fail "$name exited: $(cat "$TMP/$name.err")"
		sleep 0.025
	done
	assert_eq "$name: threads, all asleep" "$want" "$n"
	before=$(cs_threads "$pid")
	sleep "$WINDOW"
	after=$(cs_threads "$pid")
	assert_eq "$name: the same threads after the window" "$(cut -d' ' -f1 <<<"$before" | tr '\n' ' ')" \
		"$(cut -d' ' -f1 <<<"$after" | tr '\n' ' ')"
	sum=$(paste -d' ' <(echo "$before") <(echo "$after") | awk '{ s += $4 - $2 } END { print s }')
	echo "$name: per thread (tid before / after): $(paste -d' ' <(echo "$before") <(echo "$after") | awk '{ printf "%s %d/%d  ", $1, $2, $4 }')"
	assert_le "$name: context switches over an idle ${WINDOW} s" "$IDLE_MAX" "$sum"
}

# dv NAME ARGS...: a short dnsvolley run at NAME's UDP port (ARGS may give another -p; a
# guard timeout), every query answered.
dv() {
	local name=$1 portvar="${1}_PORT" rc=0
	shift
	timeout 60 "$DV" --no-progress -s 127.0.0.1 -p "${!portvar}" -d "$TMP/list.txt" "$@" \
		>"$TMP/$name.txt" \
		2>"$TMP/$name.dverr" || rc=$?
	[ "$rc" = 0 ] || fail "$name: dnsvolley exit $rc: $(cat "$TMP/$name.dverr")"
	assert_eq "$name: queries completed" 300 "$(report_field "$TMP/$name.txt" "Queries completed")"
}

# term NAME: SIGTERM; it must end (a 60 s guard tells an end from a hang; an idle machine
# takes milliseconds, and no load makes that a minute) with status 0, no
# sanitizer report, and its counts on stdout.
term() {
	local name=$1 pidvar="${1}_PID" i rc=0
	kill -TERM "${!pidvar}"
	for i in $(seq 2400); do
		kill -0 "${!pidvar}" 2>/dev/null || break
		sleep 0.025
	done
	kill -0 "${!pidvar}" 2>/dev/null && fail "$name: still running 60 s after SIGTERM (hung)"
	wait "${!pidvar}" || rc=$?
	assert_eq "$name: exit status" 0 "$rc"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$name.err" || fail "$name: $(cat "$TMP/$name.err")"
	stop_responder "$name" # forgets the pid
}

echo "== UDP, two socket threads (recvmmsg without a timeout)"
start_responder udp -q -T 2
idle udp 3
dv udp -c 4 -q 20
term udp
assert_eq "udp: received / answered" "300 300" "$(resp_count udp received) $(resp_count udp answered)"

echo "== UDP and TCP (the stream thread: epoll_wait without a timeout)"
start_responder tcp -q --tcp-port 0 --tcp-port-file "$TMP/tcp.tcp"
idle tcp 3
dv tcp -m tcp -p "$(cat "$TMP/tcp.tcp")" -c 2 -q 20
term tcp
assert_eq "tcp: tcp-received / tcp-answered" "300 300" \
	"$(resp_count tcp tcp-received) $(resp_count tcp tcp-answered)"

echo "== --delay (ppoll on the socket and the stop pipe, no timeout with nothing held)"
start_responder delay -q --delay 1
idle delay 2
dv delay -c 4 -q 20
term delay
assert_eq "delay: received / answered" "300 300" \
	"$(resp_count delay received) $(resp_count delay answered)"

echo "== --capacity (the same, with the kernel's receive stamps)"
start_responder cap -q --capacity 100000
idle cap 2
dv cap -c 4 -q 20
term cap
assert_eq "cap: received / answered / dropped" "300 300 0" \
	"$(resp_count cap received) $(resp_count cap answered) $(resp_count cap dropped)"
assert_eq "cap: answers timed without a kernel stamp" 0 "$(resp_count cap unstamped)"

echo "== DoQ (poll on the socket and an eventfd; no connection, no timer)"
start_responder doq -q --doq-port 0 --doq-port-file "$TMP/doq.doq" --tls-cert "$TMP/cert.pem" \
	--tls-key "$TMP/key.pem"
idle doq 3
dv doq -m doq --tls-sni dnsvolley.test -p "$(cat "$TMP/doq.doq")" -c 1 -q 20
term doq
assert_eq "doq: doq-received / doq-answered" "300 300" \
	"$(resp_count doq doq-received) $(resp_count doq doq-answered)"
echo "PASS"
