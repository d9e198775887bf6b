#!/usr/bin/env bash
# Bad input: every row of doc/robustness.md's table, with the exact exit status and the
# message's key words. Malformed lists, bad flags and values, unreadable files, bad
# results files for compare, failing flush commands, unwritable outputs, a full disk.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
start_responder R -T 1
S="127.0.0.1:$R_PORT"
rows=0

# expect STATUS 'KEY WORDS' ARGS...: run dnsvolley, check status and that stderr has the words.
expect() {
	local want=$1 words=$2 rc
	shift 2
	set +e
	"$DV" "$@" </dev/null >out.txt 2>err.txt
	rc=$?
	set -e
	[ "$rc" = "$want" ] || fail "dnsvolley $*: exit $rc, expected $want: $(cat err.txt)"
	grep -qF -- "$words" err.txt || fail "dnsvolley $*: message lacks '$words': $(cat err.txt)"
	grep -q 'ERROR: AddressSanitizer\|runtime error:' err.txt && fail "sanitizer report: $(cat err.txt)"
	rows=$((rows + 1))
	echo "ok: [$rc] dnsvolley $* -> $(head -1 err.txt)"
}

# Malformed list lines: FILE:LINE and what is wrong, exit 2.
printf 'example.com A\nexample.com BOGUS\n' >bad-type.txt
printf 'example.com A\n%s.com A\n' "$(printf 'a%.0s' $(seq 64))" >long-label.txt
printf '%s A\n' "$(for _ in 1 2 3 4 5; do printf 'a%.0s' $(seq 60); printf .; done)" >long-name.txt
printf 'a..b A\n' >empty-label.txt
printf 'example.com A IN extra\n' >extra.txt
printf 'example.com\n' >no-type.txt
printf 'exam\0ple.com A\n' >nul.txt
printf 'example.com A XX\n' >bad-class.txt
printf '# only a comment\n\n' >empty.txt
: >zero.txt
expect 2 "bad-type.txt:2: unknown type 'BOGUS'" -s "$S" -d bad-type.txt
expect 2 "long-label.txt:2: label longer than 63 octets" -s "$S" -d long-label.txt
expect 2 "long-name.txt:1: name longer than 255 octets" -s "$S" -d long-name.txt
expect 2 "empty-label.txt:1: empty label in name 'a..b'" -s "$S" -d empty-label.txt
expect 2 "extra.txt:1: stray extra field" -s "$S" -d extra.txt
expect 2 "no-type.txt:1: missing query type after name 'example.com'" -s "$S" -d no-type.txt
expect 2 "nul.txt:1: NUL byte in line" -s "$S" -d nul.txt
expect 2 "bad-class.txt:1: unknown class 'XX'" -s "$S" -d bad-class.txt
expect 2 "empty.txt: no queries" -s "$S" -d empty.txt
expect 2 "zero.txt: no queries" -s "$S" -d zero.txt
# --skip-bad: skipped and counted, the rest runs.
printf 'example.com A\nexample.com BOGUS\nexample.net SOA\n' >mixed-bad.txt
expect 0 "mixed-bad.txt: 1 malformed line skipped (--skip-bad)" --no-progress -s "$S" -d mixed-bad.txt --skip-bad
assert_eq "--skip-bad: completed" 2 "$(report_field out.txt "Queries completed")"

# Unreadable files.
expect 2 "/nonexistent/list.txt: No such file or directory" -s "$S" -d /nonexistent/list.txt
expect 2 "$TMP: Is a directory" -s "$S" -d "$TMP"
expect 2 "--baseline: /nonexistent.json: No such file or directory" -s "$S" -d l.txt --baseline /nonexistent.json
expect 2 "--baseline: l.txt:1: not valid JSON" -s "$S" -d l.txt --baseline l.txt
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 711 "$TMP"
	cp l.txt secret.txt
	chmod 600 secret.txt
	set +e
	setpriv --reuid=65534 --regid=65534 --clear-groups "$DV" -s "$S" -d "$TMP/secret.txt" >out.txt 2>err.txt
	rc=$?
	set -e
	assert_eq "unreadable list (as nobody): exit status" 2 "$rc"
	grep -qF "secret.txt: Permission denied" err.txt || fail "unreadable: $(cat err.txt)"
	rows=$((rows + 1))
fi

# Bad flags and values: exit 2, a message naming the flag.
expect 2 "-q: '0' is out of range" -s "$S" -d l.txt -q 0
expect 2 "-c: 'abc' is not a whole number" -s "$S" -d l.txt -c abc
expect 2 "-c: '100001' is out of range" -s "$S" -d l.txt -c 100001
expect 2 "-t: '-1' is out of range (0 to 10000000 s)" -s "$S" -d l.txt -t -1
expect 2 "-l: '1000000000' is out of range (0 to 10000000 s)" -s "$S" -d l.txt -l 1000000000
expect 2 "-l: '2e10ms' is out of range" -s "$S" -d l.txt -l 2e10ms
expect 2 "-l: 'soon' is not a duration" -s "$S" -d l.txt -l soon
expect 2 "-l: '0' must be greater than zero" -s "$S" -d l.txt -l 0
expect 2 "-Q: '0' is not a rate" -s "$S" -d l.txt -Q 0
expect 2 "-p: '70000' is out of range" -s "$S" -d l.txt -p 70000
expect 2 "unknown option '--bogus'" -s "$S" -d l.txt --bogus
expect 2 "-s needs a value" -d l.txt -s
expect 0 "note: -T 4 with -c 2: using 2 threads (a thread needs a socket of its own)" --no-progress -s "$S" -d l.txt -T 4 -c 2
grep -qF "2 sockets, 2 threads" out.txt || fail "-T 4 -c 2: not 2 threads: $(grep Pass: out.txt)"
expect 0 "note: -T 32: using 32 sockets (-c), one per thread" --no-progress -s "$S" -d l.txt -T 32
grep -qF "32 sockets, 32 threads" out.txt || fail "-T 32: $(grep Pass: out.txt)"
expect 2 "--tls-sni needs TLS (-m dot, -m doh or -m doq), not -m tcp" -s "$S" -d l.txt -m tcp --tls-sni x
expect 2 "-y: 'k' is not [ALG:]NAME:SECRET" -s "$S" -d l.txt -y k
expect 2 "-y: 'hmac-foo' is not a TSIG algorithm" -s "$S" -d l.txt -y hmac-foo:k:c2VjcmV0
expect 2 "l.txt:1: a zone line holds the zone name alone (stray 'SOA'; -u reads updates" -s "$S" -d l.txt -u
expect 2 "l.txt: record 1: message of " -s "$S" -d l.txt -B # stops at its first bad record (issue 28)
expect 2 "-O num-queries-per-conn needs a connection transport (-m tcp, dot, doh or doq), not -m udp" -s "$S" -d l.txt -O num-queries-per-conn=10
expect 2 "-O: 'colour' is not a long option" -s "$S" -d l.txt -O colour=red
expect 2 "-s: '::1:40653' is not an IPv6 address; for port 40653 write [::1]:40653" -s ::1:40653 -d l.txt
expect 2 "-s: '::1:5450' is ambiguous: write [::1]:5450 for port 5450 of ::1" -s ::1:5450 -d l.txt
expect 2 "-s: '127.0.0.1' is an IPv4 address, but -f inet6 asks for IPv6" -s 127.0.0.1 -f inet6 -d l.txt
if getent ahostsv4 localhost >/dev/null && ! getent ahostsv6 localhost | grep -q '^::1 '; then
	expect 2 "-s: 'localhost' has no IPv6 address (AAAA record), only IPv4: use -f inet or -f any" -s localhost -f inet6 -d l.txt
fi
expect 2 "at most 65536 queries in flight per thread" -s "$S" -d l.txt -q 70000
expect 2 "-x 65535 with -c 2 runs past port 65535" -s "$S" -d l.txt -x 65535 -c 2
expect 2 "--edns-bufsize: '100' is out of range (512-65535)" -s "$S" -d l.txt --edns-bufsize 100
expect 2 "--repeat: '0' is out of range" -s "$S" -d l.txt --repeat 0
expect 2 "-a: 'notanaddr' is not a numeric IPv4 or IPv6 address" -s "$S" -d l.txt -a notanaddr
expect 2 "of different address families" -s "$S" -d l.txt -a ::1
expect 2 "-d -: standard input can be read once" -s "$S" -d - -d -
expect 2 "-d: two lists are labelled 'l.txt'" -s "$S" -d l.txt -d l.txt
expect 2 "--passes: 'warm' is not a pass kind" -s "$S" -d l.txt --passes warm
expect 2 "--max-qps-drop, --max-p99-rise, --max-capacity-drop and --max-server-cpu/rss-rise need --baseline FILE" -s "$S" -d l.txt --max-qps-drop 5
expect 2 "unexpected argument 'extra'" -s "$S" -d l.txt extra

# Flush commands: a cold pass without one is refused; one that fails stops the study.
expect 2 "--passes cold: target '$S' has no --flush command" -s "$S" -d l.txt --passes cold,hot
expect 3 "flush command failed with exit status 1: false" --no-progress -s "$S" -d l.txt --passes cold,hot --flush false
expect 3 "flush command failed with exit status 127: /nonexistent/flush" --no-progress -s "$S" -d l.txt --passes cold,hot --flush /nonexistent/flush

# Bad results files for compare: exit 2, the file named and what is wrong.
"$DV" --no-progress --quiet -s "$S" -d l.txt --json good.json >/dev/null 2>&1 || fail "cannot write good.json"
printf '{\n' >trunc.json
: >empty.json
echo '[1, 2]' >array.json
sed 's/"schema_version": [0-9]*/"schema_version": 99/' good.json >v99.json
sed 's/"schema": "dnsvolley-results"/"schema": "other"/' good.json >other.json
sed 's/"sent": 20/"sent": -5/' good.json >negative.json
expect 2 "/nonexistent.json: No such file or directory" compare /nonexistent.json good.json
expect 2 "trunc.json:2: not valid JSON" compare trunc.json good.json
expect 2 "empty.json:1: not valid JSON" compare empty.json good.json
expect 2 "array.json: not a dnsvolley results file (the top level is not an object)" compare array.json good.json
expect 2 "v99.json: unsupported schema_version (this dnsvolley reads 1 to 3)" compare v99.json good.json
expect 2 "other.json: not a dnsvolley results file" compare other.json good.json
# the field and its range (the file name alone held for a refusal on any other ground)
expect 2 "negative.json: passes[0]: \"sent\" must be an integer from 0 to 9223372036854775807" \
	compare good.json negative.json
# Files that break doc/numbers.md's invariants (issue 16 item 3): refused, the field named.
sed 's/"qps": [0-9.e+]*/"qps": 1e308/' good.json >hugeqps.json
sed 's/"lost": 0,/"lost": 25,/' good.json >lost-above-sent.json
sed 's/"qps": [0-9.e+]*/"qps": -1.0/' good.json >negqps.json
expect 2 "hugeqps.json: passes[0]: qps 1e+308 is not completed 20 / run_time_s" compare hugeqps.json good.json
expect 2 "lost-above-sent.json: passes[0]: lost 25 is above sent 20" compare good.json lost-above-sent.json
expect 2 "negqps.json: passes[0]: \"qps\" must be a finite number >= 0" report negqps.json
expect 2 "--baseline: hugeqps.json: passes[0]: qps 1e+308" -s "$S" -d l.txt --baseline hugeqps.json --max-qps-drop 5
expect 2 "l.txt:1: not valid JSON" compare l.txt good.json
expect 2 "$TMP: read failed: Is a directory" compare good.json "$TMP"
expect 2 "needs a BASE file and at least one NEW file" compare good.json

# Unwritable output paths: refused before the run (a study can take hours), exit 2,
# and nothing (half-)written.
for opt in --json --csv --dns-metrics; do
	expect 2 "$opt: cannot write '/nonexistent/out': No such file or directory" \
		--no-progress --quiet -s "$S" -d l.txt "$opt" /nonexistent/out
done
expect 2 "--junit: cannot write '/nonexistent/junit.xml'" --no-progress --quiet -s "$S" -d l.txt \
	--junit /nonexistent/junit.xml --max-loss 1
expect 2 "--json: '$TMP' is a directory" --no-progress --quiet -s "$S" -d l.txt --json "$TMP"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -m 755 ro
	set +e
	setpriv --reuid=65534 --regid=65534 --clear-groups "$DV" --no-progress --quiet -s "$S" \
		-d "$TMP/l.txt" --json "$TMP/ro/r.json" >out.txt 2>err.txt
	rc=$?
	set -e
	assert_eq "--json in a directory nobody may write: exit status" 2 "$rc"
	grep -qF -- "--json: cannot write '$TMP/ro/r.json': Permission denied" err.txt ||
		fail "ro dir: $(cat err.txt)"
	assert_eq "--json in a read-only directory: files left" 0 "$(find ro -type f | wc -l)"
	rows=$((rows + 1))
fi

# A full disk (a 64 KiB tmpfs, filled up): ENOSPC named, exit 2, the previous file intact,
# no temporary file left behind.
mkdir full
if mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
	trap 'umount "$TMP/full" 2>/dev/null || true; cleanup' EXIT
	echo previous >full/r.json
	"$DV" --no-progress --quiet -s "$S" -d l.txt --csv full/h.csv >/dev/null 2>&1 || fail "csv on tmpfs"
	cp full/h.csv h.before
	cut -d, -f1-25 full/h.csv >full/v1.csv # a version 1 history, for history-upgrade
	cp full/v1.csv v1.before
	dd if=/dev/zero of=full/fill bs=4k count=64 2>/dev/null || true # until the disk is full
	expect 2 "--json: full/r.json:" --no-progress --quiet -s "$S" -d l.txt --json full/r.json
	grep -qF "No space left on device" err.txt || fail "full disk json: $(cat err.txt)"
	assert_eq "full disk: previous results file intact" previous "$(cat full/r.json)"
	assert_eq "full disk: files on the tmpfs (r.json, h.csv, v1.csv, fill)" 4 "$(find full -type f | wc -l)"
	expect 2 "--csv: full/h.csv: write failed: No space left on device" --no-progress --quiet -s "$S" -d l.txt --csv full/h.csv
	cmp -s full/h.csv h.before || fail "full disk: the history CSV changed"
	expect 2 "--dns-metrics: full/m.jsonl: write failed: No space left on device" --no-progress --quiet -s "$S" -d l.txt --dns-metrics full/m.jsonl
	[ ! -e full/m.jsonl ] || fail "full disk: a partial dns-metrics file was left"
	expect 3 "No space left on device" history-upgrade full/v1.csv
	grep -qF "dnsvolley history-upgrade: full/v1.csv" err.txt || fail "history-upgrade: $(cat err.txt)"
	cmp -s full/v1.csv v1.before || fail "full disk: history-upgrade changed the old history"
	assert_eq "full disk: no temporary file left by history-upgrade" 4 "$(find full -type f | wc -l)"
	umount full
	# plot on a full disk (issue 16 item 9): room for the scripts and data, not for every
	# chart. The error names the disk, and no truncated or empty png/svg is left.
	if have_setup gnuplot "gnuplot not installed (gnuplot-nox): plot on a full disk not run"; then
		mount -t tmpfs -o size=256k tmpfs full
		dd if=/dev/zero of=full/fill bs=4k count=54 2>/dev/null || true # ~40 KiB left
		rc=0
		"$DV" plot good.json -o full/p >out.txt 2>err.txt || rc=$?
		assert_eq "plot on a full disk: exit status" 2 "$rc"
		grep -qF "No space left on device" err.txt || fail "plot on a full disk: message: $(cat err.txt)"
		for f in full/p/*.png; do
			[ -e "$f" ] || continue
			[ "$(tail -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 49454e44ae426082 ] ||
				fail "plot on a full disk: $f is truncated"
		done
		for f in full/p/*.svg; do
			[ -e "$f" ] || continue
			grep -q '</svg>' "$f" || fail "plot on a full disk: $f is truncated or empty"
		done
		echo "ok: plot on a full disk: $(head -1 err.txt)"
		umount full
	fi
else
	echo "note: cannot mount a tmpfs here (not root?): full-disk rows not checked"
fi
stop_responder R
echo "bad-input: $rows rows, all assertions hold"
