#!/usr/bin/env bash
# dnsvolley merge refuses what would count wrong (issue 28 item 5), each with exit 2, a
# message naming the file, and nothing written: a file given twice (by its path, under
# another name, or as a copy: the same host and start), a UDP run with a TCP run, and -o
# naming one of its inputs, runs on two latency clocks (wire and app). A merge of two
# distinct runs adds exactly, and keeps their clock.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
P=$(free_port) # UDP and TCP on one port: the same target, as a server's port 53
start_responder R -T 1 -p "$P" --tcp-port "$P"
run() { "$DV" --no-progress --quiet --no-server-version -s "127.0.0.1:$P" -d l.txt "$@"; }
run --json a.json >/dev/null 2>err.txt || fail "run a: $(cat err.txt)"
run --json b.json >/dev/null 2>err.txt || fail "run b: $(cat err.txt)"
run -m tcp --json t.json >/dev/null 2>err.txt || fail "run t (tcp): $(cat err.txt)"
run --clock app --json app.json >/dev/null 2>err.txt || fail "run app: $(cat err.txt)"
cp b.json copy.json
cp a.json a.orig
cp b.json b.orig

refused() { # WHAT MESSAGE ARGS...: exit 2, MESSAGE on stderr, no output, inputs intact
	local what=$1 msg=$2 rc=0
	shift 2
	rm -f x.json
	"$DV" merge "$@" >out.txt 2>err.txt || rc=$?
	assert_eq "$what: exit status" 2 "$rc"
	assert_eq "$what: message" "$msg" "$(cat err.txt)"
	[ ! -e x.json ] || fail "$what: x.json written"
	cmp -s a.json a.orig && cmp -s b.json b.orig || fail "$what: an input changed"
}
refused "b given twice" \
	"dnsvolley merge: 'b.json' is given twice (inputs 2 and 3): its counts would be added twice" \
	a.json b.json b.json -o x.json
refused "b given twice under two names" \
	"dnsvolley merge: 'b.json' is given twice (inputs 1 and 3): its counts would be added twice" \
	./b.json a.json b.json -o x.json
host=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["host"]["name"])' b.json)
refused "a copy of b" \
	"dnsvolley merge: copy.json: the same generator's run as b.json (host $host, the same start): a file given twice, or a copy; give each generator's file once" \
	a.json b.json copy.json -o x.json
refused "udp with tcp" \
	"dnsvolley merge: t.json: its transport (-m, --queries-per-conn) differs from a.json's (tcp, 0 queries per connection, not udp, 0 queries per connection): not the same run" \
	a.json t.json -o x.json
refused "wire with app" \
	"dnsvolley merge: app.json: its latency clock (--clock, --xdp) differs from a.json's (pass 1: app, not pass 1: wire): not the same run" \
	a.json app.json -o x.json
refused "-o is the first input" \
	"dnsvolley merge: -o: 'a.json' is also an input (a.json); refusing to overwrite it" \
	a.json b.json -o a.json
refused "-o is the second input, another spelling" \
	"dnsvolley merge: -o: './b.json' is also an input (b.json); refusing to overwrite it" \
	a.json b.json -o ./b.json
refused "-o in a missing directory (checked before reading)" \
	"dnsvolley merge: -o: cannot write 'none/x.json': No such file or directory" \
	a.json b.json -o none/x.json

# Two distinct runs merge, and exactly.
"$DV" merge a.json b.json -o x.json >/dev/null 2>err.txt || fail "merge a b: $(cat err.txt)"
assert_eq "merged sent, completed" "40 40" "$(jc x.json sent completed)"
clock() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["passes"][0]["clock"])' "$1"; }
assert_eq "merged clock (both wire)" wire "$(clock x.json)"
"$DV" report x.json >x.txt 2>err.txt || fail "report x.json: $(cat err.txt)"
assert_eq "merged report: a Latency clock line on the wire" 1 "$(grep -c '^  Latency clock:        wire (' x.txt)"
stop_responder R
echo "merge: all assertions hold"
