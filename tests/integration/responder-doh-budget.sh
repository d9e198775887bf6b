#!/usr/bin/env bash
# responder-doh-budget: the responder's DoH request memory has a budget per connection and
# over all connections (--https-conn-budget, --https-budget). A client that opens many
# streams whose POST bodies never end gets every request past a budget refused
# (RST_STREAM REFUSED_STREAM), counted exactly on both sides; the responder's memory stays
# within the budget plus its connections' fixed cost; a polite client is answered after
# (issue 28).
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"
HC="$top_srcdir/tests/helpers/hostile-client.py"
# Peak RSS is compared below: ASan's quarantine would hide it (lib.sh RSS_ENV).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"

make_cert
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# clean NAME: the responder's stderr holds no sanitizer report.
clean() { ! grep -Eq 'Sanitizer|runtime error' "$TMP/$1.err" || fail "$1: $(cat "$TMP/$1.err")"; }

# start NAME [flags...]: the responder with a DoH listener; ${NAME}_HTTPS, ${NAME}_BASE.
start() {
	local name=$1 pid
	shift
	start_responder "$name" --https-port 0 --https-port-file "$TMP/$name.https" \
		--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" "$@"
	printf -v "${name}_HTTPS" '%s' "$(cat "$TMP/$name.https")"
	pid="${name}_PID"
	printf -v "${name}_BASE" '%s' "$(kb "${!pid}" VmRSS)"
}

# Every body is 60,000 bytes, never ended, so each request holds a 64 KiB block (the
# body's capacity doubles from 512) and its record (under 1 KiB): a budget of 4 x 64 KiB
# holds 3 of them, one of 16 x 64 KiB holds 15, whatever the record's exact size.

echo "== per connection: 8 endless bodies on one connection, a budget of 256 KiB"
start pc --https-conn-budget 262144
out=$(python3 "$HC" bodies "$pc_HTTPS" 1 8 60000)
stop_responder pc
clean pc
assert_eq "per connection: the client's refused, other resets" "refused=5 other=0" "$out"
assert_eq "per connection: the server's refused" 5 "$(resp_count pc https-budget-refused)"
assert_le "per connection: bytes held at most" 262144 "$(resp_count pc https-held-peak)"
assert_eq "per connection: nothing answered" 0 "$(resp_count pc https-received)"

echo "== all connections: 12 connections x 100 endless bodies (72 MB asked), a budget of 1 MiB"
start tb --https-conn-budget 262144 --https-budget 1048576
out=$(python3 "$HC" bodies "$tb_HTTPS" 12 100 60000)
hwm=$(kb "$tb_PID" VmHWM)
polite=$(python3 "$HC" polite "$tb_HTTPS" https 100)
stop_responder tb
clean tb
assert_eq "total: the client's refused (1,200 - 15), other resets" "refused=1185 other=0" "$out"
assert_eq "total: the server's refused" 1185 "$(resp_count tb https-budget-refused)"
assert_le "total: bytes held at most" 1048576 "$(resp_count tb https-held-peak)"
# The bound: the 1 MiB budget, and per connection its TLS and HTTP/2 state (~100 KiB each
# here); 16 MiB of slack for the allocator and ASan (measured: +2.4 MiB, under ASan +9.9
# MiB). Without a budget: 78 MB.
echo "total: VmRSS at start ${tb_BASE} KiB, VmHWM ${hwm} KiB"
assert_le "total: peak RSS (KiB)" $((tb_BASE + 1024 + 12 * 128 + 16384)) "$hwm"
assert_eq "total: a polite client after it, answered" "answers=100" "$polite"
assert_eq "total: the server's answers" 100 "$(resp_count tb https-answered)"

echo "== a budget under 4096 bytes is refused"
rc=0
"$RESPONDER" -p 0 --https-port 0 --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" \
	--https-budget 100 >"$TMP/bad.out" 2>&1 || rc=$?
assert_eq "--https-budget 100: exit status" 2 "$rc"
# the message exactly (a grep for "https-budget" passed "unknown option '--https-budget'" too)
assert_eq "--https-budget 100: message" \
	"dnsvolley-responder: --https-budget: '100' is not a number of bytes, 4096 or more" \
	"$(head -1 "$TMP/bad.out")"
echo "PASS"
