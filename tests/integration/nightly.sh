#!/usr/bin/env bash
# nightly: the issue's "done when": scripts/nightly-example.sh (documented commands only) against
# the bundled responder: a first night makes the baseline, a second holds its gates (exit 0), a
# night with an injected delay fails them (exit 1, report with figures, JUnit); history, plots
# and the HTML pages are left behind and are valid. Then a history of header version 1 goes on
# being appended to in its own layout, and doc/nightly.md's upgrade command makes it the
# current version (7).
source "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "no dnsvolley binary"
[ -x "$RESPONDER" ] || skip "no responder"
command -v gnuplot >/dev/null || skip "gnuplot not installed"

NIGHTLY="$top_srcdir/scripts/nightly-example.sh"
W="$TMP/nightly"
# 500 names at 5000 qps (-Q): a cold pass is one run through them (0.1 s, steady whatever
# the machine's load), a hot pass lasts 1 s (DV_HOT_TIME).
for i in $(seq 500); do echo "n$i.example. A"; done >"$TMP/list.txt"

night() { # NAME PORT: one night; prints its status
	local st=0
	DV="$DV" DV_TARGET="r=127.0.0.1:$2" DV_LIST="L=$TMP/list.txt" DV_DIR="$W" \
		DV_FLUSH=true DV_LOAD="-q 20 -t 30 -Q 5000" DV_HOT_TIME=1 DV_REPEAT=1 DV_DATE="$1" \
		DV_GATES="--max-loss 1% --max-qps-drop 90%" \
		bash "$NIGHTLY" >"$TMP/$1.out" 2>"$TMP/$1.err" || st=$?
	echo "$st"
}

png_ok() { # FILE: PNG magic bytes (and file(1) when present)
	[ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e47" ] || fail "$1: not a PNG"
	if have_setup file "file(1) not installed: PNGs checked by their magic only"; then
		file "$1" | grep -q 'PNG image data' || fail "$1: file(1) says $(file "$1")"
	fi
}
svg_ok() { # FILE: well-formed XML with an <svg> root
	if have_setup xmllint "xmllint not installed (libxml2-utils): SVGs not parsed"; then
		xmllint --noout "$1" || fail "$1: not well-formed XML"
	fi
	grep -q '<svg' "$1" || fail "$1: no <svg> element"
}

start_responder fast
# Night 1: no baseline yet; it becomes the baseline. Night 2: same server, gates hold.
assert_eq "night 1 status" 0 "$(night n1 "$fast_PORT")"
[ -f "$W/baseline.json" ] || fail "night 1 made no baseline"
grep -q "no baseline yet" "$TMP/n1.err" || fail "night 1 did not say it made the baseline"
assert_eq "night 2 status" 0 "$(night n2 "$fast_PORT")"
grep -q '^gate max-qps-drop ok   r/L/cold: qps' "$W/gates.txt" || fail "night 2: $(cat "$W/gates.txt")"
assert_eq "night 2 gates line" "gates: 4 checked, 0 failed, 0 skipped" "$(tail -1 "$W/gates.txt")"
stop_responder fast

# Night 3: the server got slow (100 ms per answer: at most 20 / 0.1 s = 200 answers/s).
start_responder slow --delay 100
assert_eq "night 3 status (regression)" 1 "$(night n3 "$slow_PORT")"
grep -E '^gate max-qps-drop FAIL r/L/cold: qps [0-9.]+ vs baseline [0-9.]+: drop [0-9.]+% > 90%$' \
	"$W/gates.txt" >/dev/null || fail "night 3 report: $(cat "$W/gates.txt")"
grep -q '^gate max-qps-drop FAIL r/L/hot: ' "$W/gates.txt" || fail "night 3: hot pass not failed"
grep -q '^gate max-loss     ok   r/L/hot: lost 0.0000% <= 1%$' "$W/gates.txt" ||
	fail "night 3: loss gate: $(cat "$W/gates.txt")"
assert_eq "night 3 gates line" "gates: 4 checked, 2 failed, 0 skipped" "$(tail -1 "$W/gates.txt")"
stop_responder slow
qps3=$(awk -F, 'NR > 1 { q = $15 } END { printf "%d", q }' "$W/history.csv")
# An upper bound the 100 ms delay imposes: load can only lower the rate (independent of load).
assert_le "night 3 hot qps (bounded by the delay)" 200 "$qps3"

# JUnit of the last night: one testcase per gate and group, the failures carry the figures.
if command -v xmllint >/dev/null; then xmllint --noout "$W/junit.xml" || fail "junit.xml not XML"; fi
grep -q '<testsuites tests="4" failures="2" errors="0" skipped="0">' "$W/junit.xml" ||
	fail "junit counts: $(head -3 "$W/junit.xml")"
assert_eq "junit testcases" 4 "$(grep -c '<testcase ' "$W/junit.xml")"
grep -q '<failure type="gate" message="r/L/cold: qps [0-9.]* vs baseline' "$W/junit.xml" ||
	fail "junit failure without figures"

# History: one header, then one row per pass and night (cold + hot, three nights).
assert_eq "history header lines" 1 "$(grep -c '^date,host,' "$W/history.csv")"
assert_eq "history rows" 7 "$(wc -l <"$W/history.csv" | tr -d ' ')"
assert_eq "history cold rows" 3 "$(awk -F, '$8 == "cold"' "$W/history.csv" | wc -l | tr -d ' ')"
# Every row: sent = completed + lost, nothing lost.
bad=$(awk -F, 'NR > 1 && ($9 != $10 + $11 || $11 != 0)' "$W/history.csv" | wc -l | tr -d ' ')
assert_eq "history rows with sent != completed + lost or losses" 0 "$bad"
# Header version 7: the loss split follows interrupted (version 2), then the transport, the
# connection figures and the capacity (version 3), then the server's figures (version 4) and
# its split and counters (version 5), then the connection failure split and the wire clock's
# untimed answers (version 6), then every other counter of what went wrong (version 7); 98
# fields a row, no client drops, udp, no connections, no capacity search, no connection
# failure, no unexpected or malformed answer.
v3cols=transport,conn_opened,conn_failed,conn_reset,conn_closed,tls_full,tls_resumed,connect_p50_ms,connect_p99_ms,handshake_p50_ms,handshake_p99_ms,queries_per_conn,http_non200,capacity_qps,capacity_verdict
v4cols=server_cpu_user_s,server_cpu_sys_s,server_us_per_answer,server_csw_per_answer,server_syscalls_per_answer,server_rss_end_kb,server_rss_peak_kb
v5cols=server_user_us_per_answer,server_sys_us_per_answer,server_rss_start_kb,server_shares_cpu,server_queries,server_cache_hits,server_cache_misses,server_misses_per_query
v6cols=conn_refused,conn_timeouts,conn_no_port,conn_syn_retries,conn_backoffs,conn_idle_closed,conn_lost,untimed_no_tx,untimed_no_rx,untimed_order
v7cols=unexpected,malformed,truncated,icmp_errors,conn_reopened,conn_abandoned,conn_proto_errors,conn_recycled,stream_errors,http_4xx,http_5xx,tc_retried,tc_completed,tc_lost,tc_not_sent,tc_no_conn,forfeited,sent_behind,server_holds,tsig_unsigned,tsig_badsig,tsig_badkey,tsig_badtime,tsig_badmac,tsig_other_error,stamps_asked,rx_stamps_unused,xdp_stamped
head -1 "$W/history.csv" | grep -q ",interrupted,client_drops,target_drops,target_sockets,icmp_port_unreachable,wire_timed,$v3cols,$v4cols,$v5cols,$v6cols,$v7cols\$" ||
	fail "history header: $(head -1 "$W/history.csv")"
assert_eq "history rows without 98 fields or with client drops" 0 \
	"$(awk -F, 'NF != 98 || (NR > 1 && $26 != 0)' "$W/history.csv" | wc -l | tr -d ' ')"
assert_eq "history rows with an unexpected or malformed answer" 0 \
	"$(awk -F, 'NR > 1 && $71$72 != "00"' "$W/history.csv" | wc -l | tr -d ' ')"
assert_eq "history rows with a connection failure" 0 \
	"$(awk -F, 'NR > 1 && $61$62$63 != "000"' "$W/history.csv" | wc -l | tr -d ' ')"
assert_eq "history rows not udp without connections or capacity" 0 \
	"$(awk -F, 'NR > 1 && ($31 != "udp" || $32 != "0" || $38 != "" || $44 != "")' "$W/history.csv" | wc -l | tr -d ' ')"

# Plots and pages of the last night and of the history.
for c in latency bars-qps bars-p99; do
	png_ok "$W/www/latest/$c.png"
	svg_ok "$W/www/latest/$c.svg"
	grep -q "<img src=\"$c.png\"" "$W/www/latest/index.html" || fail "latest page lacks $c"
done
for c in trend-qps trend-p99; do
	png_ok "$W/www/history/$c.png"
	svg_ok "$W/www/history/$c.svg"
	grep -q "<img src=\"$c.png\"" "$W/www/history/index.html" || fail "history page lacks $c"
done
grep -q '<td class="l">r</td><td class="l">L</td><td class="l">cold</td><td>1</td>' \
	"$W/www/latest/index.html" || fail "latest page: no summary row"
grep -q '<td class="l">r</td><td class="l">L</td><td class="l">hot</td><td>3</td>' \
	"$W/www/history/index.html" || fail "history page: hot row should count 3 nights"
grep -q '^r/L/cold (repeats: base 1, new 1)$' "$W/www/compare.txt" ||
	fail "compare.txt: $(cat "$W/www/compare.txt")"
ls "$W/runs" | sort | tr '\n' ' ' | grep -q '^n1.json n2.json n3.json $' || fail "runs: $(ls "$W/runs")"
# A history of header version 1 (before the loss split): the nightly job goes on (status 0),
# the rows keep its 25 columns, the header stays, plot still draws it.
{
	head -1 "$W/history.csv" | cut -d, -f1-25
	tail -n +2 "$W/history.csv" | cut -d, -f1-25
} >"$TMP/v1.csv"
cp "$TMP/v1.csv" "$W/history.csv"
start_responder fast
assert_eq "night 4 status (version 1 history)" 0 "$(night n4 "$fast_PORT")"
assert_eq "night 4 --csv messages (quiet)" 0 "$(grep -c -e '--csv' "$TMP/n4.err" || true)"
assert_eq "version 1 history: header kept" "$(head -1 "$TMP/v1.csv")" "$(head -1 "$W/history.csv")"
assert_eq "version 1 history: old rows kept" "$(cat "$TMP/v1.csv")" "$(head -7 "$W/history.csv")"
assert_eq "version 1 history rows" 9 "$(wc -l <"$W/history.csv" | tr -d ' ')"
assert_eq "version 1 history rows without 25 fields" 0 \
	"$(awk -F, 'NF != 25' "$W/history.csv" | wc -l | tr -d ' ')"
grep -q '<td class="l">r</td><td class="l">L</td><td class="l">hot</td><td>4</td>' \
	"$W/www/history/index.html" || fail "version 1 history page: hot row should count 4 nights"
# Without --quiet an append to it says what its rows lack, and how to stop that.
cp "$W/history.csv" "$TMP/v1copy.csv"
"$DV" --no-progress -s "127.0.0.1:$fast_PORT" -d "$TMP/list.txt" -n 1 --csv "$TMP/v1copy.csv" \
	>/dev/null 2>"$TMP/v1copy.err" || fail "append to a version 1 copy: $(cat "$TMP/v1copy.err")"
grep -q "^dnsvolley: --csv: $TMP/v1copy.csv has the version 1 header: rows appended without client_drops,target_drops,.*,untimed_order,unexpected,.*,xdp_stamped (to record them from now on: dnsvolley history-upgrade $TMP/v1copy.csv)$" \
	"$TMP/v1copy.err" || fail "no note on the old header: $(cat "$TMP/v1copy.err")"
# dnsvolley history-upgrade (doc/nightly.md): the version 1 file under the current header,
# every old field kept (quoted ones too), the columns version 1 lacked empty; then the
# next night appends rows of the current version, and plot still reads it all.
cut -d, -f1-25 "$W/history.csv" >"$TMP/v1-before.csv"
rc=0
"$DV" history-upgrade "$W/history.csv" >"$TMP/up.out" 2>&1 || rc=$?
assert_eq "history-upgrade status" 0 "$rc"
assert_eq "history-upgrade says" "$W/history.csv: header version 1 -> 7, 8 rows, each with 73 empty fields (columns that version did not record)" \
	"$(cat "$TMP/up.out")"
assert_eq "upgraded header" "$(head -1 "$TMP/v1.csv"),client_drops,target_drops,target_sockets,icmp_port_unreachable,wire_timed,$v3cols,$v4cols,$v5cols,$v6cols,$v7cols" \
	"$(head -1 "$W/history.csv")"
assert_eq "upgraded rows: the first 25 fields as they were" "$(tail -n +2 "$TMP/v1-before.csv")" \
	"$(tail -n +2 "$W/history.csv" | cut -d, -f1-25)"
assert_eq "upgraded rows with 98 fields, the last 73 empty" 8 \
	"$(awk -F, 'NR > 1 && NF == 98 { e = ""; for (i = 26; i <= 98; i++) e = e $i; if (e == "") n++ } END { print n + 0 }' "$W/history.csv")"
"$DV" history-upgrade "$W/history.csv" >"$TMP/up2.out" 2>&1 || fail "history-upgrade again: $(cat "$TMP/up2.out")"
assert_eq "history-upgrade again" "$W/history.csv: already header version 7 (8 rows); nothing to do" "$(cat "$TMP/up2.out")"
assert_eq "night 5 status (upgraded history)" 0 "$(night n5 "$fast_PORT")"
stop_responder fast
assert_eq "upgraded history rows" 11 "$(wc -l <"$W/history.csv" | tr -d ' ')"
assert_eq "night 5 rows of the current version, transport recorded" 2 \
	"$(tail -2 "$W/history.csv" | awk -F, 'NF == 98 && $26 == "0" && $31 == "udp"' | wc -l | tr -d ' ')"
# The four older nights did not record their transport, so they stay a line of their own
# (doc/nightly.md): 4 hot nights there, 1 in the udp line.
grep -q '<td class="l">r</td><td class="l">L</td><td class="l">hot</td><td>4</td>' \
	"$W/www/history/index.html" || fail "upgraded history page: a hot row should count 4 nights"
grep -q '<td class="l">r</td><td class="l">L</td><td class="l">hot</td><td>1</td>' \
	"$W/www/history/index.html" || fail "upgraded history page: a hot row should count 1 night"
# A file that is no history is refused (2) and left as it was.
printf 'date,host\n1,2\n' >"$TMP/foreign.csv"
rc=0
"$DV" history-upgrade "$TMP/foreign.csv" >/dev/null 2>"$TMP/up3.err" || rc=$?
assert_eq "history-upgrade of a foreign file: status" 2 "$rc"
assert_eq "the foreign file untouched" "$(printf 'date,host\n1,2')" "$(cat "$TMP/foreign.csv")"
grep -q "^dnsvolley history-upgrade: $TMP/foreign.csv: not a dnsvolley history file" "$TMP/up3.err" ||
	fail "history-upgrade of a foreign file: $(cat "$TMP/up3.err")"
echo "PASS: nightly"
