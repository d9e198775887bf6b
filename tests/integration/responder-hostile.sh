#!/usr/bin/env bash
# responder-hostile: dnsvolley-responder's stream listeners (TCP, DoT, DoH) against hostile
# clients (tests/helpers/hostile-client.py): one that sends and never reads, one that
# floods, more connections than the descriptor limit. Each: a polite client beside it gets
# every one of its answers (exact), the responder's memory stays within what its output
# bound allows, and everything ends (issue 28, items 4 and 8).
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"
HC="$top_srcdir/tests/helpers/hostile-client.py"
# ASan keeps freed memory in a quarantine (256 MiB by default) that would show as RSS
# and hide what this test measures; harmless without the sanitizers.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"

make_cert

# kb PID FIELD: a VmRSS/VmHWM line of /proc/PID/status, in KiB.
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# wait_file FILE: up to 60 s for a helper's ready file (not an assertion: the end comes).
wait_file() {
	local _
	for _ in $(seq 1200); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	fail "no $1 after 60 s"
}

# start_all NAME [flags...]: the responder with TCP, DoT and DoH listeners; sets ${NAME}_TCP,
# ${NAME}_TLS, ${NAME}_HTTPS and ${NAME}_BASE (its VmRSS once started, KiB).
start_all() {
	local name=$1 pid
	shift
	start_stream "$name" --https-port 0 --https-port-file "$TMP/$name.https" "$@"
	printf -v "${name}_HTTPS" '%s' "$(cat "$TMP/$name.https")"
	pid="${name}_PID"
	printf -v "${name}_BASE" '%s' "$(kb "${!pid}" VmRSS)"
}

# stop NAME: SIGINT; exit 0 and no sanitizer report.
stop() {
	local pidvar="${1}_PID" rc=0
	kill -INT "${!pidvar}"
	wait "${!pidvar}" || rc=$?
	assert_eq "$1: exit status" 0 "$rc"
	! grep -Eq 'Sanitizer|runtime error' "$TMP/$1.err" || fail "$1: $(cat "$TMP/$1.err")"
}

# port NAME tcp|tls|https
port() {
	local v="${1}_${2^^}"
	echo "${!v}"
}

# The memory bound: per connection the unsent output stops at DV_STREAM_OUT_MAX (64 KiB)
# plus one answer, so its buffer's capacity (doubling) stays under 256 KiB; the read buffer
# holds under 128 KiB (16 KiB read + a cut frame of at most 64 KiB); TLS buffers ~40 KiB;
# an HTTP/2 session at most its 1000 streams (~1.5 KiB each). 2 MiB per connection covers
# them all; 16 MiB more for the allocator and the polite client's connection. Without
# the output bound the never-reading clients below add about 100 MiB each.
PER_CONN_KB=2048
SLACK_KB=16384
HOSTILE_CONNS=2
QUERIES=300

for proto in tcp tls https; do
	echo "== never reads ($proto): $HOSTILE_CONNS connections that send and never read"
	start_all nr
	p=$(port nr "$proto")
	rm -f "$TMP/ready"
	# Up to 64 MiB in all: the responder must stop reading them long before.
	timeout 120 python3 "$HC" never-reads "$p" "$proto" "$HOSTILE_CONNS" 64 "$TMP/ready" \
		>"$TMP/nr.hc" &
	hc=$!
	wait_file "$TMP/ready"
	assert_eq "$proto: a polite client beside them" "answers=$QUERIES" \
		"$(timeout 60 python3 "$HC" polite "$p" "$proto" "$QUERIES")"
	wait "$hc" || fail "never-reads client: exit $?"
	cat "$TMP/nr.hc"
	grep -q "end=blocked" "$TMP/nr.hc" || fail "$proto: the responder kept reading: $(cat "$TMP/nr.hc")"
	hwm=$(kb "$nr_PID" VmHWM)
	echo "$proto: VmRSS at start ${nr_BASE} KiB, VmHWM ${hwm} KiB"
	assert_le "$proto: peak RSS (KiB)" $((nr_BASE + HOSTILE_CONNS * PER_CONN_KB + SLACK_KB)) "$hwm"
	stop nr
	assert_eq "$proto: connections" $((HOSTILE_CONNS + 1)) "$(resp_count nr "$proto-connections")"
	assert_ge "$proto: connections throttled (each at least once)" "$HOSTILE_CONNS" \
		"$(resp_count nr "$proto-throttled")"
	rcv=$(resp_count nr "$proto-received")
	ans=$(resp_count nr "$proto-answered")
	una=$(resp_count nr "$proto-unanswered")
	assert_eq "$proto: received = answered + unanswered" "$rcv" $((ans + una))
	assert_eq "$proto: malformed" 0 "$(resp_count nr "$proto-malformed")"
done

FLOOD=100000
for proto in tcp tls https; do
	echo "== flood ($proto): $FLOOD queries pipelined as fast as they go, and read"
	start_all fl
	p=$(port fl "$proto")
	timeout 120 python3 "$HC" flood "$p" "$proto" "$FLOOD" >"$TMP/fl.hc" &
	hc=$!
	assert_eq "$proto: a polite client beside it" "answers=$QUERIES" \
		"$(timeout 60 python3 "$HC" polite "$p" "$proto" "$QUERIES")"
	wait "$hc" || fail "flood client: exit $?"
	assert_eq "$proto: the flood's answers" "answers=$FLOOD" "$(cat "$TMP/fl.hc")"
	hwm=$(kb "$fl_PID" VmHWM)
	echo "$proto: VmRSS at start ${fl_BASE} KiB, VmHWM ${hwm} KiB"
	assert_le "$proto: peak RSS (KiB)" $((fl_BASE + 2 * PER_CONN_KB + SLACK_KB)) "$hwm"
	stop fl
	assert_eq "$proto: received" $((FLOOD + QUERIES)) "$(resp_count fl "$proto-received")"
	assert_eq "$proto: answered" $((FLOOD + QUERIES)) "$(resp_count fl "$proto-answered")"
	assert_eq "$proto: unanswered" 0 "$(resp_count fl "$proto-unanswered")"
done

echo "== EMFILE: 80 connections to a responder limited to 64 descriptors"
# The limit is set in the responder's own process (ulimit -n sets the hard limit too, so
# it cannot raise it back); the clients keep this shell's.
printf '#!/bin/sh\nulimit -n 64 || exit 125\nexec "$@"\n' >"$TMP/lim64"
chmod +x "$TMP/lim64"
RESPONDER_WRAP="$TMP/lim64" start_stream em
assert_eq "responder's descriptor limit" 64 \
	"$(awk '/^Max open files/ { print $4 }' "/proc/$em_PID/limits")"
CONNS=80
rm -f "$TMP/ready"
t0=$EPOCHREALTIME
timeout 120 python3 "$HC" emfile "$em_TCP" "$CONNS" 2 "$TMP/ready" >"$TMP/em.hc" &
hc=$!
wait_file "$TMP/ready"
wait "$hc" || fail "emfile client: exit $?"
assert_eq "emfile client" "connected=$CONNS" "$(cat "$TMP/em.hc")"
# Its connections closed: descriptors are free again, the ones left waiting are accepted.
assert_eq "a polite client afterwards" "answers=$QUERIES" \
	"$(timeout 60 python3 "$HC" polite "$em_TCP" tcp "$QUERIES")"
stop em
t1=$EPOCHREALTIME
# Not spinning while the listener has clients waiting that it cannot accept: each failed
# accept() is counted (deferred). Paused, the listener is tried again 10 times a second
# and after each close; a loop on a readable listener failing with EMFILE fails
# thousands of times a second, however little CPU a loaded machine gives it. The bound is
# per second of the phase as this shell measured it, so a slow machine (a longer phase)
# raises it as much as it raises the count: the same answer at any load.
deferred=$(resp_count em tcp-deferred)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", b - a + 1 }')
echo "EMFILE phase: $deferred accept() calls failed over about $secs s"
assert_le "accepts deferred (10 a second and one per close, not a loop)" \
	$((20 * secs + 2 * (CONNS + 1))) "$deferred"
assert_eq "every connection accepted in the end" $((CONNS + 1)) "$(resp_count em tcp-connections)"
assert_eq "every query read" $((CONNS + QUERIES)) "$(resp_count em tcp-received)"
assert_eq "none refused" 0 "$(resp_count em tcp-refused)"
assert_ge "accepts deferred" 1 "$(resp_count em tcp-deferred)"
echo "PASS"
