#!/usr/bin/env bash
# report-browser: `dnsvolley plot` writes index.html; headless Chromium (Debian's chromium)
# opens it from a python3 http.server on 127.0.0.1, checks that every image loads, that the
# page logs nothing to the console (a missing image logs "Failed to load resource"), that
# it shows the study table, the verdicts and the charts; screenshots at laptop and phone
# width are kept in report-browser.out/ beside this test's log.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
[ -x "$RESPONDER" ] || skip "dnsvolley-responder not built"
command -v gnuplot >/dev/null || skip "gnuplot not installed"
command -v python3 >/dev/null || skip "python3 not installed"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium not installed (scripts/packages.txt)"
OUT="$PWD/report-browser.out"
rm -rf "$OUT"
mkdir -p "$OUT"

# A 2x2 study in small: two targets, two lists, cold/hot, interval snapshots.
for i in $(seq 1500); do echo "s$i.example. SOA"; done >"$TMP/soa.txt"
for i in $(seq 1500); do echo "w$i.example. A"; done >"$TMP/a.txt"
start_responder v1
start_responder v2 --delay 0.2
"$DV" -s "v1=127.0.0.1:$v1_PORT" -s "v2=127.0.0.1:$v2_PORT" -d "SOA=$TMP/soa.txt" -d "A=$TMP/a.txt" \
	--passes cold,hot --hot-runs 2 --flush true -S 0.05 -q 50 --quiet --no-server-version \
	--json "$TMP/run.json" >"$TMP/run.out" 2>&1 || fail "study: $(cat "$TMP/run.out")"
stop_responder v1
stop_responder v2
"$DV" plot -o "$TMP/site/" "$TMP/run.json" >"$TMP/plot.out" 2>&1 || fail "plot: $(cat "$TMP/plot.out")"
assert_eq "plot names the page" "dnsvolley plot: wrote $TMP/site/index.html" "$(cat "$TMP/plot.out")"

# The checker: a page beside index.html (same origin) that loads it in a frame and writes
# what it found into its own DOM for --dump-dom.
cat >"$TMP/site/check.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="r">pending</pre>
<iframe id="f" src="index.html" style="width:1280px;height:900px"></iframe>
<script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, imgs = d.images, bad = [], ok = 0;
  for (var i = 0; i < imgs.length; i++) {
    if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; else bad.push(imgs[i].getAttribute('src'));
  }
  var pre = d.querySelector('pre');
  document.getElementById('r').textContent = 'images ' + imgs.length + ' loaded ' + ok +
    ' broken [' + bad.join(' ') + '] study-table ' + (pre && pre.textContent.indexOf('Comparison table') >= 0) +
    ' verdicts ' + (pre && pre.textContent.indexOf('Change against the first target') >= 0) +
    ' viewport ' + (d.querySelector('meta[name=viewport]') !== null);
});
</script></body></html>
HTML

port_file="$TMP/http.port"
python3 - "$TMP/site" "$port_file" >"$TMP/http.log" 2>&1 <<'PY' &
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write("%d\n" % s.server_address[1])
s.serve_forever()
PY
_pids+=("$!")
for i in $(seq 200); do [ -s "$port_file" ] && break; sleep 0.025; done
[ -s "$port_file" ] || fail "http.server did not start: $(cat "$TMP/http.log")"
base="http://127.0.0.1:$(cat "$port_file")"

chrome() { # PROFILE-NAME ARGS...: one bounded headless run with a fresh profile
	local prof="$TMP/prof-$1"
	shift
	rm -rf "$prof"
	timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-dev-shm-usage --user-data-dir="$prof" --enable-logging=stderr --v=0 "$@"
}

chrome check --virtual-time-budget=10000 --dump-dom "$base/check.html" >"$TMP/dom.html" 2>"$OUT/check.log" ||
	fail "chromium exited $?: $(tail -5 "$OUT/check.log")"
result=$(sed -n 's/.*<pre id="r">\([^<]*\)<\/pre>.*/\1/p' "$TMP/dom.html")
n=$(grep -c '<img ' "$TMP/site/index.html")
[ "$n" -ge 4 ] || fail "index.html has $n images"
assert_eq "the page in Chromium" "images $n loaded $n broken [] study-table true verdicts true viewport true" "$result"
# Console messages from the pages (Chromium logs them as CONSOLE(line)); the page has no
# scripts, so any is a load error.
assert_eq "console messages" 0 "$(grep -c 'CONSOLE' "$OUT/check.log" || true)"

chrome laptop --hide-scrollbars --window-size=1366,3000 --screenshot="$OUT/index-laptop.png" \
	"$base/index.html" >/dev/null 2>"$OUT/laptop.log" || fail "screenshot: $(tail -5 "$OUT/laptop.log")"
chrome phone --hide-scrollbars --window-size=390,3000 --screenshot="$OUT/index-phone.png" \
	"$base/index.html" >/dev/null 2>"$OUT/phone.log" || fail "screenshot: $(tail -5 "$OUT/phone.log")"
for f in index-laptop index-phone; do
	[ "$(head -c 4 "$OUT/$f.png" | od -An -tx1 | tr -d ' \n')" = "89504e47" ] || fail "$f.png: not a PNG"
	echo "ok: screenshot $OUT/$f.png"
done
echo "PASS"
