#!/usr/bin/env bash
# Query lists as people write them (issue 28 item 12): a UTF-8 byte order mark is not part of
# the first name; an escaped space (a\ b) is a character of the name, as in ldns's and
# dnsperf's presentation format; a capture's malformed packets are reported without a
# "(--skip-bad)" that was never given; dnsperf's -B input stops at a truncated or malformed
# record with FILE: record N, as a text list stops at FILE:LINE, unless --skip-bad. And a
# capture clock that jumped (item 10): its gap is cut and the schedule's span said.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || fail "binaries not built"
cd "$TMP"
WRITE="$top_srcdir/tests/helpers/write-capture.py"
start_responder R -T 1
run() { "$DV" --no-progress --no-server-version -s "127.0.0.1:$R_PORT" -c 1 -q 1 -n 1 "$@"; }

# BOM and escaped spaces: -v names what was sent (as dnsperf prints names: no trailing dot).
printf '\xEF\xBB\xBFexample.com A\na\\ b.example A\nc\\\\ TXT\n' >l.txt
run -d l.txt -v >v.out 2>err.txt || fail "BOM list: $(cat err.txt)"
assert_eq "names sent (-v)" "example.com A|a\\032b.example A|c\\\\ TXT" \
	"$(awk '/^> /{printf "%s%s %s", n++ ? "|" : "", $3, $4}' v.out)"

# A capture with a malformed packet (a response in place of query 3): skipped and named,
# no "(--skip-bad)", exit 0, the other 9 sent.
python3 "$WRITE" --queries 10 --clients 1 --response 3 c.pcap
run -d c.pcap >out.txt 2>err.txt || fail "capture: $(cat err.txt)"
assert_eq "capture: the message" \
	"dnsvolley: c.pcap: 1 malformed record skipped (first: packet 4: a response (QR = 1), not a query)" \
	"$(cat err.txt)"
assert_eq "capture: sent" 9 "$(report_field out.txt "Queries sent")"

# -B: a truncated last record stops the load (exit 2, FILE: record N), as a bad text line.
python3 "$WRITE" --queries 10 --format binary --cut 3 t.bin
rc=0
run -B -d t.bin >out.txt 2>err.txt || rc=$?
assert_eq "-B truncated: exit status" 2 "$rc"
# q0.example. A ... q9.example. A: 28 octets each, 2 of length: record 10 at byte 270
off=270
assert_eq "-B truncated: message" \
	"dnsvolley: t.bin: record 10: message of 28 octets cut short at 25 octets (byte offset $off)" \
	"$(cat err.txt)"
grep -q "Queries sent" out.txt && fail "-B truncated: a pass ran"
# a malformed record in the middle: the same
python3 "$WRITE" --queries 10 --format binary --response 3 r.bin
rc=0
run -B -d r.bin >out.txt 2>err.txt || rc=$?
assert_eq "-B malformed: exit status" 2 "$rc"
assert_eq "-B malformed: message" \
	"dnsvolley: r.bin: record 4: a response (QR = 1), not a query (byte offset 90)" "$(cat err.txt)"
# with --skip-bad: skipped, named, counted; the rest runs
run -B -d t.bin --skip-bad >out.txt 2>err.txt || fail "-B --skip-bad: $(cat err.txt)"
assert_eq "-B --skip-bad: the message" \
	"dnsvolley: t.bin: 1 malformed record skipped (first: record 10: message of 28 octets cut short at 25 octets (byte offset $off))" \
	"$(cat err.txt)"
assert_eq "-B --skip-bad: sent" 9 "$(report_field out.txt "Queries sent")"
# A capture with one packet stamped 1970 (issue 28 item 10): the 54-year gap is cut, said
# before sending, and the replay takes the capture's 10 ms, not 54 years (timeout: a bound).
python3 "$WRITE" --queries 10 --clients 1 --duration 0.01 --epoch0 3 j.pcap
rc=0
timeout 60 "$DV" --no-progress --no-server-version -s "127.0.0.1:$R_PORT" -n 1 -t 30 \
	--timing original -d j.pcap >out.txt 2>err.txt || rc=$?
assert_eq "clock jump: exit status" 0 "$rc"
assert_eq "clock jump: lines on stderr" 2 "$(wc -l <err.txt)"
grep -qE '^dnsvolley: j\.pcap: 1 gap of more than 1 h between captured queries \(the longest 53\.9 years: a capture clock that jumped\?\) cut to 1\.[0-9]+ ms, the mean of the others$' err.txt ||
	fail "clock jump: no cut message: $(cat err.txt)"
grep -qE '^dnsvolley: j\.pcap: --timing original: 10 queries, the schedule spans 1[0-9]\.[0-9] ms per pass$' err.txt ||
	fail "clock jump: no span message: $(cat err.txt)"
assert_eq "clock jump: sent" 10 "$(report_field out.txt "Queries sent")"
echo "ok: $(tail -1 err.txt)"

stop_responder R
echo "input-lists: all assertions hold"
