#!/usr/bin/env bash
# Terminal output: on a terminal 40, 80 and 200 columns wide the progress line never
# passes the width (so it never wraps or leaves stale rows), never shares a row with
# an [Interval] line, and reads without "sending sent"; the report's head
# ("[Status] Started at") comes before the first interval, when the pass starts.
# --interval-format dnsperf prints dnsperf's own -S lines, parsed with the regex a
# dnsperf script uses.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
command -v python3 >/dev/null || skip "python3 is needed for the pseudo-terminal"
PTY="$top_srcdir/tests/integration/pty-run.py"
cd "$TMP"
start_responder R -T 1
S="127.0.0.1:$R_PORT"
head -2000 "$top_srcdir/querylists/www-a.txt" >l.txt

# check_tty FILE WIDTH: the rows of a terminal capture, as the checks above say.
check_tty() {
	python3 - "$1" "$2" <<'PY'
import re, sys
raw = open(sys.argv[1], "rb").read().decode()
width = int(sys.argv[2])
text = raw.replace("\r\n", "\n")
assert "sending sent" not in text, "'sending sent' printed"
progress = 0
for row in text.split("\n"):
    # Each "\r" returns to column 0; "\033[K" erases to the end of the row.
    for seg in row.split("\r"):
        seg = seg.replace("\033[K", "")
        if re.match(r"^\[\d+\.\ds(, draining)?\]", seg):
            progress += 1
            assert len(seg) <= width - 1, "a progress line of %d columns on a %d-column " \
                "terminal: %r" % (len(seg), width, seg)
            assert "[Interval]" not in seg, "progress and interval on one row: %r" % seg
    last = row.split("\r")[-1].replace("\033[K", "")
    if "[Interval]" in row:
        assert last.startswith("[Interval]"), "[Interval] does not start its row: %r" % row
assert progress >= 2, "the progress line was drawn %d times" % progress
started = text.index("[Status] Started at")
first_iv = text.index("[Interval]")
assert started < first_iv, "[Status] Started at printed after the first interval"
assert first_iv < text.index("Statistics:"), "intervals after the report"
print("ok: %d progress lines within %d columns, intervals on rows of their own" % (progress, width))
PY
}

for w in 40 80 200; do
	python3 "$PTY" "$w" tty$w.out "$DV" -s "$S" -d l.txt -Q 1000 -l 1.8 -S 0.5 >/dev/null \
		|| fail "width $w: dnsvolley failed: $(tr '\r' '\n' <tty$w.out | tail -3)"
	check_tty tty$w.out "$w" || fail "width $w: $(cat -v tty$w.out | head -20)"
done

# Progress fields: at 200 columns all of them.
grep -aq 'sent [0-9]*  completed [0-9]*  qps [0-9]*  lost 0  in flight [0-9]*' tty200.out \
	|| fail "no full progress line at 200 columns: $(cat -v tty200.out | head -5)"
echo "ok: full progress line at 200 columns"
# COLUMNS is used when standard error is not a terminal's (here a file, with --progress).
COLUMNS=30 "$DV" -s "$S" -d l.txt -Q 1000 -l 1.2 --progress >/dev/null 2>cols.err
n=$(tr '\r' '\n' <cols.err | sed 's/\x1b\[K//g' | awk 'length > 29' | wc -l)
assert_eq "progress segments wider than COLUMNS-1" 0 "$n"
# ... and there are segments: a 1.2 s run updates its progress at 0.5 s and 1 s (without
# any, e.g. --progress ignored when standard error is a file, the check above held too).
assert_ge "progress segments ('[0.5s] ...')" 1 \
	"$(tr '\r' '\n' <cols.err | sed 's/\x1b\[K//g' | grep -c '^\[[0-9.]*s\] ' || true)"

# dnsperf's interval lines: the regex of a dnsperf script, 2 whole intervals in 2.5 s at 1 s.
# Their rates are not checked against -Q (a busy machine paces below it; bench/ measures it).
"$DV" -s "$S" -d l.txt -Q 2000 -l 2.5 -S 1 --interval-format dnsperf --no-progress >dp.out
lines=$(grep -cE '^[0-9]+\.[0-9]{6}: [0-9]+\.[0-9]{6}$' dp.out || true)
assert_eq "dnsperf-format interval lines" 2 "$lines"
assert_eq "rich interval lines with --interval-format dnsperf (by send time too)" 0 \
	"$(grep -c '^\[Interval' dp.out || true)"
now=$(date +%s)
awk -F'[.:]' -v now="$now" '/^[0-9]+\.[0-9]{6}: / {
	if ($1 < now - 30 || $1 > now + 1) { print "timestamp " $1 " is not the wall clock (" now ")"; exit 1 }
	q = $3 + 0; if (q <= 0) { print "qps " q " is not a rate"; exit 1 } }' dp.out \
	|| fail "dnsperf interval lines: $(grep -E '^[0-9]+\.' dp.out)"
echo "ok: dnsperf interval lines carry the wall clock and the rate"
# The default (and --interval-format dnsvolley): ours, the last partial interval included.
"$DV" -s "$S" -d l.txt -Q 2000 -l 2.5 -S 1 --interval-format dnsvolley --no-progress >rich.out
assert_eq "rich interval lines" 3 "$(grep -c '^\[Interval\]' rich.out)"

# -O latency-histogram: dnsperf's header, one line per bucket, the counts sum to the answers.
"$DV" -s "$S" -d l.txt -O latency-histogram --no-progress >hist.out
grep -qx '  Latency bucket (s): answer count' hist.out || fail "no histogram header"
completed=$(report_field hist.out "Queries completed")
assert_eq "histogram answers" "$completed" \
	"$(awk '/Latency bucket/ { on = 1; next } on && /^  [0-9.]+ - [0-9.]+: [0-9]+$/ { s += $4 } END { print s + 0 }' hist.out)"
# -W: errors on standard output, nothing on standard error.
st=0
"$DV" -W -s "$S" -d l.txt -m tcp --tls-sni x >w.out 2>w.err || st=$?
assert_eq "-W -m tcp --tls-sni status" 2 "$st"
grep -qF -- "--tls-sni needs TLS (-m dot, -m doh or -m doq), not -m tcp" w.out || fail "-W: $(cat w.out)"
assert_eq "-W: standard error" "" "$(cat w.err)"
"$DV" -W -s "$S" -d l.txt -T 20 --no-progress >w.out 2>w.err
grep -qF "dnsvolley: note: -T 20: using 20 sockets" w.out || fail "-W note: $(head -3 w.out)"
assert_eq "-W: standard error of a run" "" "$(cat w.err)"
# --json -: the -S lines go with the report to standard error, standard output is the JSON.
"$DV" -s "$S" -d l.txt -Q 2000 -l 1.2 -S 0.5 --json - --no-progress >j.out 2>j.err
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' j.out || fail "--json - -S: $(head -3 j.out)"
assert_eq "--json - -S: interval lines on standard error" 3 "$(grep -c '^\[Interval\]' j.err)"
