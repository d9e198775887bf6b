#!/usr/bin/env bash
# stream-outputs: -m tcp and -m dot runs against the responder carry the same connection
# figures in the results JSON, the CSV history (versions 3 and 6), dns-metrics, report and compare;
# the connection gates fail with exit 1 and their reason; a capacity search keeps its steps.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"

make_cert
for i in $(seq 5000); do echo "n$i.example A"; done >"$TMP/5k"

# py FILE EXPR: evaluate EXPR with j = the results file, p = its first pass, c = its counters.
py() {
	python3 - "$@" <<'P'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["passes"][0]
c = p["counters"]
print(eval(sys.argv[2]))
P
}

start_stream so
# run MODE PORT NAME: 5000 queries over 4 connections, 500 a connection, all the outputs.
run() {
	"$DV" --no-progress -m "$1" -s "so=127.0.0.1" -p "$2" -d "$TMP/5k" -c 4 -q 40 \
		--queries-per-conn 500 --json "$TMP/$3.json" --csv "$TMP/h.csv" \
		--dns-metrics "$TMP/$3.jsonl" "${@:4}" >"$TMP/$3.rep" 2>&1 ||
		fail "$3 run: $(cat "$TMP/$3.rep")"
}
run tcp "$so_TCP" tcp
run dot "$so_TLS" dot --tls-ca "$TMP/cert.pem" --tls-sni dnsvolley.test
stop_responder so

echo "== the same figures in JSON, CSV and dns-metrics"
assert_eq "history rows (tcp, dot)" 3 "$(wc -l <"$TMP/h.csv" | tr -d ' ')"
head -1 "$TMP/h.csv" | grep -q ',wire_timed,transport,conn_opened,.*,capacity_qps,capacity_verdict,server_cpu_user_s,.*,server_rss_peak_kb,server_user_us_per_answer,.*,server_misses_per_query,conn_refused,.*,untimed_order,unexpected,.*,xdp_stamped$' ||
	fail "history header: $(head -1 "$TMP/h.csv")"
row=0
for m in tcp dot; do
	row=$((row + 1))
	j="$TMP/$m.json"
	opened=$(py "$j" 'c["conn_opened"]')
	assert_eq "$m: completed" 5000 "$(py "$j" 'c["completed"]')"
	assert_ge "$m: connections opened (500 queries each at most)" 10 "$opened"
	assert_eq "$m: connect histogram count = conn_opened" "$opened" "$(py "$j" 'p["connect"]["count"]')"
	assert_eq "$m: CSV transport" "$m" "$(csv_row "$TMP/h.csv" $row transport)"
	for k in conn_opened conn_failed conn_reset conn_closed tls_full tls_resumed http_non200 \
		conn_refused conn_timeouts conn_no_port conn_syn_retries conn_backoffs conn_idle_closed \
		conn_lost untimed_no_tx untimed_no_rx untimed_order unexpected malformed truncated \
		icmp_errors conn_reopened conn_abandoned conn_proto_errors conn_recycled stream_errors \
		http_4xx http_5xx tc_retried tc_completed tc_lost tc_not_sent tc_no_conn forfeited \
		sent_behind server_holds tsig_unsigned tsig_badsig tsig_badkey tsig_badtime tsig_badmac \
		tsig_other_error stamps_asked rx_stamps_unused xdp_stamped; do
		assert_eq "$m: $k JSON = CSV" "$(py "$j" "c['$k']")" "$(csv_row "$TMP/h.csv" $row $k)"
	done
	assert_eq "$m: connections opened JSON = metrics" "$opened" "$(mconn "$TMP/$m.jsonl" connections_opened)"
	assert_eq "$m: connections failed JSON = metrics" "$(py "$j" 'c["conn_failed"]')" \
		"$(mconn "$TMP/$m.jsonl" connections_failed)"
	for km in conn_refused=connections_refused conn_timeouts=connections_timed_out \
		conn_no_port=connections_no_port conn_syn_retries=syn_retries conn_backoffs=backoffs \
		conn_lost=queries_lost_with_connection; do
		assert_eq "$m: ${km%%=*} JSON = metrics ${km#*=}" "$(py "$j" "c['${km%%=*}']")" \
			"$(mconn "$TMP/$m.jsonl" "${km#*=}")"
	done
	assert_eq "$m: metrics conn_info type" "$m" "$(mconn "$TMP/$m.jsonl" type)"
	assert_eq "$m: connect p99 JSON = CSV" "$(py "$j" '"%.6f" % (p["connect"]["p99_ns"] / 1e6)')" \
		"$(csv_row "$TMP/h.csv" $row connect_p99_ms)"
	assert_eq "$m: connect p50 JSON = CSV" "$(py "$j" '"%.6f" % (p["connect"]["p50_ns"] / 1e6)')" \
		"$(csv_row "$TMP/h.csv" $row connect_p50_ms)"
	assert_eq "$m: connect p99 JSON = metrics" "$(py "$j" 'p["connect"]["p99_ns"]')" \
		"$(mconn "$TMP/$m.jsonl" connect_latency.p99)"
	assert_eq "$m: queries per connection" "$(py "$j" '"%.3f" % (c["sent"] / c["conn_opened"])')" \
		"$(csv_row "$TMP/h.csv" $row queries_per_conn)"
	assert_eq "$m: no capacity figure" "" "$(csv_row "$TMP/h.csv" $row capacity_qps)"
done
# TCP: no handshakes anywhere; DoT: one per connection, in every output.
assert_eq "tcp: no handshake histogram" False "$(py "$TMP/tcp.json" '"handshake" in p')"
assert_eq "tcp: CSV handshake p99 empty" "" "$(csv_row "$TMP/h.csv" 1 handshake_p99_ms)"
assert_eq "tcp: metrics handshake latency" absent "$(mconn "$TMP/tcp.jsonl" handshake_latency)"
dj="$TMP/dot.json"
assert_eq "dot: a handshake per connection" "$(py "$dj" 'c["conn_opened"]')" \
	"$(py "$dj" 'c["tls_full"] + c["tls_resumed"]')"
assert_eq "dot: handshake count = full + resumed" "$(py "$dj" 'c["tls_full"] + c["tls_resumed"]')" \
	"$(py "$dj" 'p["handshake"]["count"]')"
assert_eq "dot: handshake p99 JSON = CSV" "$(py "$dj" '"%.6f" % (p["handshake"]["p99_ns"] / 1e6)')" \
	"$(csv_row "$TMP/h.csv" 2 handshake_p99_ms)"
assert_eq "dot: handshake p99 JSON = metrics" "$(py "$dj" 'p["handshake"]["p99_ns"]')" \
	"$(mconn "$TMP/dot.jsonl" handshake_latency.p99)"
assert_eq "dot: resumed JSON = metrics" "$(py "$dj" 'c["tls_resumed"]')" \
	"$(mconn "$TMP/dot.jsonl" handshakes_resumed)"

echo "== report reads the histograms back"
"$DV" report "$dj" >"$TMP/dot.report" 2>&1 || fail "report: $(cat "$TMP/dot.report")"
# The connection's app clock, the run's line read back from the file's "clock".
assert_eq "report: the run's Latency clock line" \
	"  Latency clock:        app (before each write, after each read of the connection)" \
	"$(clock_lines "$TMP/dot.report")"
assert_eq "report: the Latency clock line = the run's" "$(clock_lines "$TMP/dot.rep")" \
	"$(clock_lines "$TMP/dot.report")"
grep -q '^  Connect time (s):     p50 ' "$TMP/dot.report" || fail "report: no connect time: $(cat "$TMP/dot.report")"
assert_eq "report: TLS handshakes" \
	"$(py "$dj" '"full %d, resumed %d; time (s) p50 %.6f, p99 %.6f" % (c["tls_full"], c["tls_resumed"], p["handshake"]["p50_ns"] / 1e9, p["handshake"]["p99_ns"] / 1e9)')" \
	"$(sed -n 's/^  TLS handshakes: *//p' "$TMP/dot.report")"

echo "== compare: connection rows, gates"
"$DV" compare "$TMP/tcp.json" "$dj" >"$TMP/cmp.txt" 2>&1 || fail "compare: $(cat "$TMP/cmp.txt")"
grep -q '^Transport: base tcp, new dot$' "$TMP/cmp.txt" || fail "compare: $(cat "$TMP/cmp.txt")"
hs99=$(py "$dj" '"%.4f" % (p["handshake"]["p99_ns"] / 1e6)')
grep -Eq "^  handshake p99 ms +- +$hs99 +- +n/a  n/a \(no such figure on a side\)$" "$TMP/cmp.txt" ||
	fail "compare: handshake row: $(grep handshake "$TMP/cmp.txt")"
grep -Eq '^  connect p99 ms +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ ' "$TMP/cmp.txt" ||
	fail "compare: connect row: $(grep connect "$TMP/cmp.txt")"
grep -Eq '^  conn failed +0\.0 +0\.0 +\+0\.0 ' "$TMP/cmp.txt" || fail "compare: failed row"
rc=0
"$DV" compare --max-handshake-p99 1ns --max-conn-failures 0 --junit "$TMP/j.xml" \
	"$TMP/tcp.json" "$dj" >"$TMP/g.txt" 2>&1 || rc=$?
assert_eq "compare: a handshake p99 over 1 ns fails (exit 1)" 1 "$rc"
grep -q "^gate max-handshake-p99 FAIL so/5k/plain: handshake p99 $hs99 ms > 1e-06 ms$" "$TMP/g.txt" ||
	fail "compare gate: $(cat "$TMP/g.txt")"
grep -q '^gate max-conn-failures ok   so/5k/plain: connections failed 0 <= 0$' "$TMP/g.txt" ||
	fail "compare gate: $(cat "$TMP/g.txt")"
grep -q 'classname="dnsvolley.gates.max-handshake-p99"' "$TMP/j.xml" || fail "junit: $(cat "$TMP/j.xml")"
grep -q '<testsuites tests="2" failures="1"' "$TMP/j.xml" || fail "junit: $(cat "$TMP/j.xml")"
rc=0
"$DV" compare --max-conn-failures x "$TMP/tcp.json" "$dj" >"$TMP/g2.txt" 2>&1 || rc=$?
assert_eq "compare: a bad --max-conn-failures: exit 2" 2 "$rc"
grep -q "max-conn-failures: 'x' is not a whole number" "$TMP/g2.txt" || fail "$(cat "$TMP/g2.txt")"

echo "== run gates"
start_stream sg
rc=0
"$DV" --no-progress -m dot -s "so=127.0.0.1" -p "$sg_TLS" -d "$TMP/5k" -n 1 -c 2 \
	--max-handshake-p99 1ns --max-conn-failures 0 >"$TMP/rg.txt" 2>&1 || rc=$?
assert_eq "run: a handshake p99 over 1 ns fails (exit 1)" 1 "$rc"
grep -q '^gate max-handshake-p99 FAIL so/5k/plain: handshake p99 .* ms > 1e-06 ms$' "$TMP/rg.txt" ||
	fail "run gate: $(cat "$TMP/rg.txt")"
rc=0
"$DV" --no-progress -m tcp -s "127.0.0.1" -p "$sg_TCP" -d "$TMP/5k" --max-handshake-p99 5 \
	>"$TMP/rg2.txt" 2>&1 || rc=$?
assert_eq "run: a bad --max-handshake-p99: exit 2" 2 "$rc"
grep -q "max-handshake-p99: '5' is not a latency with a unit" "$TMP/rg2.txt" || fail "$(cat "$TMP/rg2.txt")"
stop_responder sg

if have_setup gnuplot "gnuplot not installed (gnuplot-nox): the connect chart not checked"; then
	echo "== plot: the connect chart, labelled with the transport"
	"$DV" plot "$dj" -o "$TMP/plot" >/dev/null 2>"$TMP/plot.err" || fail "plot: $(cat "$TMP/plot.err")"
	[ -s "$TMP/plot/connect.png" ] || fail "plot: no connect.png"
	grep -q "so/5k/plain handshake (dot)" "$TMP/plot/connect.gp" || fail "plot: labels: $(grep plot "$TMP/plot/connect.gp")"
	grep -q '\[dot\]' "$TMP/plot/latency.gp" || fail "plot: no transport in the latency title"
	# the p99 line only where the curves reach p99 (100 connections or more), and the
	# title says "p99 marked" exactly then (here: tens of connections, neither)
	assert_eq "plot: connect title's 'p99 marked' = its p99 line" \
		"$(grep -c "set label 'p99'" "$TMP/plot/connect.gp" || true)" \
		"$(grep -c "p99 marked" "$TMP/plot/connect.gp" || true)"
	assert_eq "plot: no p99 line on a chart of under 100 connections" 0 \
		"$(grep -c "set label 'p99'" "$TMP/plot/connect.gp" || true)"
	grep -q '<h2>Connections (dot)</h2>' "$TMP/plot/index.html" || fail "plot: no connections table"
	"$DV" plot "$TMP/h.csv" -o "$TMP/hplot" >/dev/null 2>&1 || fail "plot of the history"
	grep -q "so/5k/plain (dot)" "$TMP/hplot/trend-p99.gp" || fail "history plot: no transport label"
fi

echo "== a capacity search keeps its steps"
start_responder cap
"$DV" capacity --no-progress -s 127.0.0.1 -p "$cap_PORT" -d "$TMP/5k" --step 0.5 --settle 0 \
	--from 1000 --to 2000 --json "$TMP/cap.json" --csv "$TMP/cap.csv" >"$TMP/cap.rep" 2>&1 ||
	fail "capacity: $(cat "$TMP/cap.rep")"
stop_responder cap
cj="$TMP/cap.json"
n=$(py "$cj" 'p["capacity"]["steps"]')
# at least one step: with none, the comparisons below would compare nothing with nothing
assert_ge "capacity: steps" 1 "$n"
assert_eq "capacity: steps listed" "$n" "$(py "$cj" 'len(p["capacity"]["search"])')"
assert_eq "capacity: steps printed" "$n" "$(grep -c '^\[Capacity\] step ' "$TMP/cap.rep")"
assert_eq "capacity: offered rates" "$(grep -o 'offered [0-9]* qps' "$TMP/cap.rep" | awk '{print $2}' | paste -sd' ')" \
	"$(py "$cj" '" ".join("%.0f" % s["offered_qps"] for s in p["capacity"]["search"])')"
assert_eq "capacity: verdicts" "$(sed -n 's/^\[Capacity\] step .*: \([a-zA-Z-]*\) (.*/\1/p' "$TMP/cap.rep" | paste -sd' ')" \
	"$(py "$cj" '" ".join(s["verdict"] for s in p["capacity"]["search"])')"
assert_eq "capacity: CSV figure" "$(py "$cj" '"%.3f" % p["capacity"]["capacity_qps"]')" \
	"$(csv_row "$TMP/cap.csv" 1 capacity_qps)"
verdict=$(csv_row "$TMP/cap.csv" 1 capacity_verdict)
case "$verdict" in to-reached | generator-bound | confirmed | unconfirmed | none) ;; *) fail "capacity verdict '$verdict'" ;; esac
[ "$(py "$cj" 'p["capacity"]["hit_to"]')" = True ] && assert_eq "capacity: --to reached" to-reached "$verdict"
"$DV" report "$cj" >/dev/null 2>&1 || fail "report of a capacity file"
echo "PASS: stream-outputs"
