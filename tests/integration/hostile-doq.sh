#!/usr/bin/env bash
# hostile-doq: -m doq against DoQ peers that misbehave (tests/helpers/hostile-doq): a silent
# server, a stream reset, a CONNECTION_CLOSE with an error code, a version negotiation, a
# stateless reset. Each: exact counts on both sides, a bounded end (timeout is only a guard),
# the exit status (0 answered, 3 no connection, 4 nothing answered, 5 nothing could be
# sent: doc/dnsvolley.1), peak RSS within the control run's bound.
. "$(dirname "$0")/lib.sh"
HD="$top_builddir/tests/helpers/hostile-doq"
MAXRSS="$top_builddir/tests/helpers/maxrss"
[ -x "$DV" ] && [ -x "$HD" ] && [ -x "$MAXRSS" ] || fail "binaries not built"
command -v openssl >/dev/null || skip "openssl not installed"
make_cert
awk 'BEGIN { for (i = 1; i <= 2000; i++) print "n" i ".example A" }' >"$TMP/2k"
head -50 "$TMP/2k" >"$TMP/50"

clean() { ! grep -Eq 'Sanitizer|runtime error' "$1" || fail "sanitizer report: $(cat "$1")"; }
# dv NAME WANT_RC ARGS...: dnsvolley -m doq under maxrss and a guard; report $TMP/NAME.txt.
dv() {
	local name=$1 want=$2 rc=0 t0=$SECONDS
	shift 2
	"$MAXRSS" "$TMP/$name.rss" "${RSS_ENV[@]}" timeout 100 "$DV" --no-progress -s 127.0.0.1 \
		-m doq "$@" >"$TMP/$name.txt" 2>"$TMP/$name.err" || rc=$?
	[ "$rc" != 124 ] || fail "$name: no end within the guard (hang)"
	clean "$TMP/$name.err"
	[ "$rc" = "$want" ] || fail "$name: exit $rc, not $want: $(cat "$TMP/$name.err")"
	echo "ok: $name: exit $rc, peak RSS $(cat "$TMP/$name.rss") KiB ($((SECONDS - t0)) s)"
}
rf() { report_field "$TMP/$1.txt" "$2"; }
phrase() { grep -o "$2 [0-9]*" "$TMP/$1.txt" | head -1 | awk '{ print $NF }'; }
hc() { resp_count "$1" "doq-$2"; }
gone() {
	stop_responder "$1"
	clean "$TMP/$1.err"
}
rss_within() {
	assert_le "$1: peak RSS (KiB)" $(($(cat "$TMP/$2.rss") * 5 / 4 + 4096)) "$(cat "$TMP/$1.rss")"
}

echo "== control: a DoQ server, 2,000 queries"
start_hostile_doq ctl serve
dv ctl 0 -p "$ctl_PORT" -d "$TMP/2k" -c 1 -q 10 -t 10
gone ctl
assert_eq "control: completed" 2000 "$(rf ctl 'Queries completed')"
assert_eq "control: server received" 2000 "$(hc ctl received)"

echo "== silent: nothing comes back, not even the handshake: the connection fails at -t"
# Exit 3: the connection failed, its handshake not done within -t (while a first
# connection is opening, "nothing could be sent for -t" waits for its outcome).
start_hostile_doq sil silent
rc=0
timeout 100 "$DV" --no-progress -s 127.0.0.1 -m doq -p "$sil_PORT" -d "$TMP/50" -c 1 -q 10 \
	-t 0.5 >"$TMP/sil.txt" 2>"$TMP/sil.err" || rc=$?
gone sil
clean "$TMP/sil.err"
[ "$rc" = 3 ] || fail "silent: exit $rc: $(cat "$TMP/sil.err")"
grep -q "QUIC handshake not done within the timeout" "$TMP/sil.err" ||
	fail "silent: $(cat "$TMP/sil.err")"
assert_ge "silent: Initials the server got" 1 "$(hc sil datagrams)"
assert_eq "silent: server connections" 0 "$(hc sil connections)"

echo "== mute: the handshake, then no answer: every query lost, its stream cancelled (DOQ_REQUEST_CANCELLED), exit 4"
# Nothing is answered, yet -t is a margin: each window's 100 streams (the server's limit)
# are cancelled at -t, and the server must raise its limit (MAX_STREAMS) within another -t
# or "nothing could be sent for -t" ends the run (exit 5: seen at -t 0.2 under ASan and a
# hog). -t 1, over 1,000 queries: 10 windows, ~10 s (20 windows at -t 0.2 took ~4 s).
head -1000 "$TMP/2k" >"$TMP/1k"
start_hostile_doq mute mute
dv mute 4 -p "$mute_PORT" -d "$TMP/1k" -c 1 -q 100 -t 1
gone mute
assert_eq "mute: sent" 1000 "$(rf mute 'Queries sent')"
assert_eq "mute: lost" 1000 "$(rf mute 'Queries lost')"
assert_eq "mute: the server read every query" 1000 "$(hc mute received)"
# each query's stream cancelled at -t, but for up to a window's 100 still in flight when the
# run ends (it ends -t after its last query without cancelling, and closes the connection)
assert_le "mute: cancelled" 1000 "$(hc mute cancelled)"
assert_ge "mute: cancelled (all but the last window at most)" 900 "$(hc mute cancelled)"
# One connection carries them all, unless a window's streams were all cancelled and the
# server's MAX_STREAMS had not come back within a PTO (a slow server: ASan beside other
# work): the client then ends that connection, counted closed by the server, and another
# carries on (src/transport/doq.c, spent_check). How often is the machine's timing (a CI
# run under ASan saw 2); the accounting is exact: each connection after the first is one
# so ended, and the server saw every one.
opened=$(phrase mute 'opened')
assert_ge "mute: connections opened" 1 "$opened"
assert_eq "mute: connections after the first, each ended as spent (closed by server)" \
	$((opened - 1)) "$(phrase mute 'closed by server')"
assert_eq "mute: the server's connections = the client's" "$opened" "$(hc mute connections)"
rss_within mute ctl

echo "== stream reset: every query's stream reset (DOQ_INTERNAL_ERROR): all lost as stream errors, exit 4"
# Here and below the server's reply (a reset, a CONNECTION_CLOSE, a version negotiation)
# comes at once and ends each query or connection; the counts need it to come before
# -t, so -t 30 only bounds the wait (a busy machine could stall a reply past 2 s).
start_hostile_doq rst stream-reset
dv rst 4 -p "$rst_PORT" -d "$TMP/2k" -c 1 -q 10 -t 30
gone rst
assert_eq "stream-reset: sent" 2000 "$(rf rst 'Queries sent')"
assert_eq "stream-reset: completed" 0 "$(rf rst 'Queries completed')"
assert_eq "stream-reset: lost" 2000 "$(rf rst 'Queries lost')"
assert_eq "stream-reset: stream errors" 2000 "$(phrase rst 'stream errors')"
assert_eq "stream-reset: server's resets" 2000 "$(hc rst stream-resets)"
assert_eq "stream-reset: one connection" 1 "$(phrase rst 'opened')"
assert_eq "stream-reset: server connections" 1 "$(hc rst connections)"
rss_within rst ctl

echo "== close: CONNECTION_CLOSE DOQ_PROTOCOL_ERROR at each first query: a protocol error per connection, exit 4"
start_hostile_doq cls close
dv cls 4 -p "$cls_PORT" -d "$TMP/50" -c 1 -q 10 -t 30
gone cls
assert_eq "close: sent" 50 "$(rf cls 'Queries sent')"
assert_eq "close: lost" 50 "$(rf cls 'Queries lost')"
assert_eq "close: connections" 5 "$(phrase cls 'opened')"
assert_eq "close: protocol errors" 5 "$(phrase cls 'protocol errors')"
assert_eq "close: server's closes" 5 "$(hc cls conn-closes)"
assert_eq "close: server handshakes" 5 "$(hc cls handshakes)"

echo "== version negotiation offering no version 1: the connection fails, exit 3"
start_hostile_doq vn version-neg
dv vn 3 -p "$vn_PORT" -d "$TMP/50" -c 1 -q 10 -t 30
gone vn
grep -q "does not speak QUIC version 1" "$TMP/vn.err" || fail "version-neg: $(cat "$TMP/vn.err")"
assert_eq "version-neg: VN packets" 1 "$(hc vn version-negs)"
assert_eq "version-neg: server connections" 0 "$(hc vn connections)"

echo "== stateless reset at each first query: a protocol error per connection, exit 4"
start_hostile_doq sr stateless-reset
dv sr 4 -p "$sr_PORT" -d "$TMP/50" -c 1 -q 10 -t 30
gone sr
assert_eq "stateless-reset: sent" 50 "$(rf sr 'Queries sent')"
assert_eq "stateless-reset: lost" 50 "$(rf sr 'Queries lost')"
assert_eq "stateless-reset: connections" 5 "$(phrase sr 'opened')"
assert_eq "stateless-reset: protocol errors" 5 "$(phrase sr 'protocol errors')"
assert_eq "stateless-reset: resets sent" 5 "$(hc sr stateless-resets)"
echo "ok"
