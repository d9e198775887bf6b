#!/usr/bin/env bash
# dnsvolley resperf: resperf's flags, EDNS options, summary lines, plot data and chart. Its
# "Maximum throughput" against Debian's resperf is a speed figure: bench/timing-bounds.sh
# resperf (doc/performance.md).
. "$(dirname "$0")/lib.sh"
# Bad flags: exit 2 (checked first: they need no server and no spare CPU).
set +e
"$DV" resperf -m nope >/dev/null 2>&1
assert_eq "bad -m exit" 2 $?
"$DV" resperf -E 10 >"$TMP/bad-e" 2>&1
assert_eq "bad -E exit" 2 $?
grep -q "^dnsvolley resperf: -E: '10' is not CODE:HEXVALUE" "$TMP/bad-e" || fail "bad -E: $(cat "$TMP/bad-e")"
set -e

# -e, -D and -E as resperf's: every query of a short ramp carries an OPT RR, with the DO
# bit for -D and the option for -E (read by a listener that answers nothing: all lost).
edns_of() {
	local port
	port=$(free_port)
	python3 - "$port" "$TMP/edns" <<'PY' &
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2] + ".ready", "w").close()
s.settimeout(60)  # until the first query; then 1 s of silence ends it
seen = set()
try:
    while True:
        q, _ = s.recvfrom(4096)
        s.settimeout(1)
        arcount = struct.unpack(">H", q[10:12])[0]
        i = 12
        while q[i]:
            i += 1 + q[i]
        i += 5  # root label, qtype, qclass
        if arcount != 1 or q[i] != 0 or q[i + 1:i + 3] != b"\x00\x29":
            seen.add("no-opt")
            continue
        flags = struct.unpack(">H", q[i + 7:i + 9])[0]
        rdata = q[i + 11:]
        seen.add("do=%d rdata=%s" % (flags >> 15, rdata.hex()))
except socket.timeout:
    pass
open(sys.argv[2], "w").write(" ".join(sorted(seen)) + "\n")
PY
	local lpid=$!
	# Bound before the ramp starts, at any load (a fixed sleep lost the race to a slow
	# python start-up on a busy machine: the ramp then met a closed port).
	for _ in $(seq 3000); do [ -e "$TMP/edns.ready" ] && break; sleep 0.01; done
	[ -e "$TMP/edns.ready" ] || fail "the EDNS listener did not start"
	rm -f "$TMP/edns.ready"
	"$DV" resperf -s 127.0.0.1 -p "$port" -d "$top_srcdir/querylists/soa.txt" -m 200 -r 1 -t 0.2 \
		-P "$TMP/edns.plot" "$@" >/dev/null 2>&1 || fail "resperf $*: exit $?"
	wait "$lpid" || fail "the EDNS listener failed"
	cat "$TMP/edns"
}
assert_eq "resperf -e: OPT, DO clear" "do=0 rdata=" "$(edns_of -e)"
assert_eq "resperf -D: OPT, DO set" "do=1 rdata=" "$(edns_of -D)"
assert_eq "resperf -E 10:0102: the option (implies EDNS)" "do=0 rdata=000a00020102" "$(edns_of -E 10:0102)"
# resperf does not replay its list: give it more queries than the ramp sends.
awk '{ for (i = 0; i < 20; i++) print }' "$top_srcdir/querylists/soa.txt" >"$TMP/big.txt"
# The summary lines, the plot data and the chart, which hold at any machine speed. The
# figure itself (dnsvolley's "Maximum throughput" within 10% of the server's 20,000 qps
# and of Debian's resperf in the same run) needs both generators on time: it is a speed
# figure, measured by bench/timing-bounds.sh resperf (doc/performance.md).
start_responder R -T 1 --capacity 20000
(cd "$TMP" && "$DV" resperf -s 127.0.0.1 -p "$R_PORT" -d "$TMP/big.txt" -m 20000 -r 3 -t 1 \
	-P "$TMP/dv.plot" -o "$TMP/chart") >"$TMP/dv" 2>&1 || fail "dnsvolley resperf failed: $(cat "$TMP/dv")"
cat "$TMP/dv"
dv=$(sed -n 's/.*Maximum throughput: *\([0-9]*\).*/\1/p' "$TMP/dv")
[ -n "$dv" ] || fail "no Maximum throughput line: $(cat "$TMP/dv")"
assert_ge "Maximum throughput: the server answered" 1 "$dv"
grep -q '^  Lost at that point: *[0-9.]*%$' "$TMP/dv" || fail "no 'Lost at that point' line"
# -i 0.5 over a 3 s ramp and 1 s of -t: 6 to 8 interval lines after the header. At least
# 5: an interval is cut where the clock says, so a descheduled generator makes longer
# ones, never fewer than the elapsed time holds (one merge allowed for the edges).
assert_ge "plot lines" 5 "$(grep -vc '^#' "$TMP/dv.plot")"
assert_eq "plot columns (resperf 2.x's eight)" 8 "$(awk '!/^#/ { print NF; exit }' "$TMP/dv.plot")"
[ -s "$TMP/chart/resperf.png" ] || fail "no resperf.png"
