#!/usr/bin/env bash
# hostile-files: results files crafted to attack the reader's user (issue 16 items 6, 7):
# labels with terminal control characters are printed escaped by report and compare; a small
# file that claims huge numbers of passes or intervals is refused fast with bounded memory.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
cd "$TMP"
# One query: its pass has one latency bucket, so many.json below (12,000 copies of it) has
# the same size on every machine. With 20 the pass's histogram had 1 to 20 buckets, by
# the run's latencies, and the 12,000-pass file's peak RSS under ASan moved by 50 MB.
head -1 "$top_srcdir/querylists/soa.txt" >l.txt
start_responder R -T 1
S="127.0.0.1:$R_PORT"
"$DV" --no-progress --quiet -s "a=$S" -d "SOA=l.txt" --json good.json >/dev/null 2>&1 ||
	fail "cannot write good.json"
stop_responder R

echo "== labels with ESC, BEL, CR, C1 CSI are escaped on the terminal"
# Target label: set the window title, ring, and forge a line with CR; list label: a UTF-8 CSI.
sed -e 's/"label": "a"/"label": "\\u001b]0;pwned\\u0007\\rFAKE"/' \
	-e 's/"label": "SOA"/"label": "L\\u009b2J"/' good.json >evil.json
grep -q 'pwned' evil.json || fail "test data: no label replaced"
cp evil.json evil2.json
for cmd in "report evil.json" "compare --max-loss 100% evil.json evil2.json"; do
	rc=0
	# shellcheck disable=SC2086
	"$DV" $cmd >out.txt 2>err.txt || rc=$?
	assert_eq "$cmd: exit status" 0 "$rc"
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' out.txt err.txt &&
		fail "$cmd: a control character reached the terminal: $(od -c out.txt | head)"
	LC_ALL=C grep -q $'\xc2\x9b' out.txt && fail "$cmd: a C1 CSI reached the terminal"
	grep -qF '\x1b]0;pwned\x07\x0dFAKE' out.txt || fail "$cmd: label not shown escaped: $(cat out.txt)"
	grep -qF 'L\u009b2J' out.txt || fail "$cmd: list label not shown escaped: $(cat out.txt)"
	echo "ok: $cmd: labels escaped"
done
echo "== a small file claiming many passes is refused fast with bounded memory"
MAXRSS="$top_builddir/tests/helpers/maxrss"
python3 - <<'PY' || fail "cannot build many.json"
import json
d = json.load(open("good.json"))
d["passes"] = [d["passes"][0]] * 12000
open("many.json", "w").write(json.dumps(d, separators=(",", ":")))
PY
start=$(date +%s%N)
rc=0
"$MAXRSS" rss.txt "$DV" report many.json >out.txt 2>err.txt || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "12000 passes: exit status" 2 "$rc"
grep -qF "many.json: 12000 passes, more than the 10000 this dnsvolley reads" err.txt ||
	fail "12000 passes: message: $(cat err.txt)"
# Before the limits (issue 16 item 7) this file took 7 GB and 35 s; now ~0.5 GB, ~1 s.
assert_le "12000 passes: peak RSS KiB" 800000 "$(cat rss.txt)"
# How long it takes (~1 s idle, 35 s before the limits) is a speed figure:
# bench/timing-bounds.sh hostile-files. The memory bound above holds at any load.
echo "12000 passes: $ms ms"
# A file above the byte limit is refused before it is read (a sparse file: no disk used).
truncate -s 300M huge.json
rc=0
"$MAXRSS" rss.txt "$DV" compare huge.json good.json >out.txt 2>err.txt || rc=$?
assert_eq "300 MiB file: exit status" 2 "$rc"
grep -qF "huge.json: larger than 256 MiB" err.txt || fail "300 MiB: message: $(cat err.txt)"
assert_le "300 MiB file: peak RSS KiB" 50000 "$(cat rss.txt)"
# The run refuses a plan of more passes than a results file holds.
rc=0
"$DV" -s "$S" -d l.txt --passes cold,hot --flush true --repeat 5001 >out.txt 2>err.txt || rc=$?
assert_eq "--repeat 5001 x cold,hot: exit status" 2 "$rc"
grep -qF -- "--repeat: 10002 passes planned" err.txt || fail "plan: message: $(cat err.txt)"
echo "hostile-files: all assertions hold"
