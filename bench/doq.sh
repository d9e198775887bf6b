#!/usr/bin/env bash
# doq.sh: DNS over QUIC generators side by side against knotd 3.2's XDP-QUIC listener in the
# namespace lab (scripts/lab knotd-xdp, QUIC port 853), in interleaved rounds: Knot's
# kxdpgun -U (AF_XDP), dnsvolley -m doq (kernel UDP sockets, ngtcp2), and dnsvolley -m tcp
# against the same knotd's kernel TCP as the stream baseline (knotd 3.2 serves no DoT, so
# -m dot cannot run against the same server; doc/performance.md). Then DoQ beside DoT against
# one server that serves both, the bundled responder on loopback (-c 4 -q 100 each, the
# responder on CPU 1 and dnsvolley on CPU 0 where taskset exists).
#
# usage: bench/doq.sh [-B BUILDDIR] [-r ROUNDS] [-l SECONDS] [-n NAMES] [-Q QPS]
#                     [-c CONNS] [-q WINDOW]
#   -r ROUNDS   rounds, each running every generator once (3)
#   -l SECONDS  each run's length (3)
#   -n NAMES    the list: the first NAMES of querylists/www-a.txt (2000), served by knotd
#   -Q QPS      kxdpgun's offered rate (20000)
#   -c, -q      dnsvolley's connections and window, closed loop (1, 4: knotd 3.2 drops
#               answers when its XDP ring is full, and more in flight fills it)
# Per run: queries sent, answers, answered share, answers/s and the generator's CPU µs per
# answer (utime + stime, /usr/bin/time); knotd's own count for the protocol (mod-stats
# quic4-xdp or tcp4) beside each. Then the medians and the ratios dnsvolley doq / kxdpgun -U
# and dnsvolley doq / dnsvolley tcp, all from the same run. Needs root, knotd (knot),
# kxdpgun (knot-dnsutils) and GNU time, all in scripts/packages.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build" rounds=3 secs=3 names=2000 qps=20000 conns=1 window=4
while getopts "B:r:l:n:Q:c:q:" o; do
	case $o in
	B) build=$OPTARG ;;
	r) rounds=$OPTARG ;;
	l) secs=$OPTARG ;;
	n) names=$OPTARG ;;
	Q) qps=$OPTARG ;;
	c) conns=$OPTARG ;;
	q) window=$OPTARG ;;
	*) sed -n '7,14p' "$0" >&2; exit 2 ;;
	esac
done
command -v kxdpgun >/dev/null || { echo "doq: kxdpgun is not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "doq: GNU time (/usr/bin/time) is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n "$names" "$top/querylists/www-a.txt" >"$tmp/list.txt"

cat >"$tmp/inside" <<'INSIDE'
#!/usr/bin/env bash
set -euo pipefail
kc() { $LAB_KNOTC stats mod-stats.request-protocol | awk -F' = ' -v p="$1" 'index($1, "[" p "]") { n = $2 } END { print n + 0 }'; }
row() { # GEN ROUND SENT ANSWERS CPU SECONDS KNOT
	awk -v g="$1" -v r="$2" -v s="$3" -v a="$4" -v c="$5" -v t="$6" -v k="$7" \
		'BEGIN { printf "%-13s %5d %9d %9d %7.1f%% %10.0f %8.2f %9d\n", g, r, s, a, 100 * a / s, a / t, c * 1e6 / a, k }'
}
dv() { # GEN MODE PORT: one dnsvolley run, its row
	local k0 k1
	k0=$(kc "$4")
	/usr/bin/time -f '%U %S' -o "$TMP/t" "$DV" --no-progress -m "$2" -s "$LAB_SERVER" -p "$3" \
		-d "$TMP/list.txt" -l "$SECS" -c "$CONNS" -q "$WINDOW" -t 2 >"$TMP/d.out" 2>&1 || true
	k1=$(kc "$4")
	row "$1" "$r" "$(awk '/Queries sent:/ { print $3 }' "$TMP/d.out")" \
		"$(awk '/Queries completed:/ { print $3 }' "$TMP/d.out")" "$(awk '{ print $1 + $2 }' "$TMP/t")" \
		"$(awk '/Run time \(s\):/ { print $4 }' "$TMP/d.out")" $((k1 - k0))
}
printf '%-13s %5s %9s %9s %8s %10s %8s %9s\n' gen round sent answers answered "answers/s" "us/ans" "knotd"
for r in $(seq "$ROUNDS"); do
	k0=$(kc quic4-xdp)
	/usr/bin/time -f '%U %S' -o "$TMP/t" kxdpgun -U -t "$SECS" -Q "$QPS" -i "$TMP/list.txt" \
		-I "$LAB_IFACE" "$LAB_SERVER" >"$TMP/k.out" 2>&1
	k1=$(kc quic4-xdp)
	row kxdpgun-U "$r" "$(awk '/^total initials:/ { print $3 }' "$TMP/k.out")" \
		"$(awk '/^total replies:/ { print $3 }' "$TMP/k.out")" "$(awk '{ print $1 + $2 }' "$TMP/t")" \
		"$SECS" $((k1 - k0))
	dv dnsvolley-doq doq "$LAB_QUIC_PORT" quic4-xdp
	dv dnsvolley-tcp tcp "$LAB_PORT" tcp4
done
INSIDE
chmod +x "$tmp/inside"
ROUNDS=$rounds SECS=$secs QPS=$qps CONNS=$conns WINDOW=$window TMP=$tmp DV="$build/dnsvolley" \
	"$top/scripts/lab" -B "$build" -l "$tmp/list.txt" knotd-xdp -- "$tmp/inside" | tee "$tmp/runs"
awk 'NR > 1 { n[$1]++; q[$1, n[$1]] = $6; c[$1, n[$1]] = $7 }
function med(a, g, k,   i, j, t, v) { for (i = 1; i <= k; i++) v[i] = a[g, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
END {
	qk = med(q, "kxdpgun-U", n["kxdpgun-U"]); ck = med(c, "kxdpgun-U", n["kxdpgun-U"])
	qd = med(q, "dnsvolley-doq", n["dnsvolley-doq"]); cd = med(c, "dnsvolley-doq", n["dnsvolley-doq"])
	qt = med(q, "dnsvolley-tcp", n["dnsvolley-tcp"]); ct = med(c, "dnsvolley-tcp", n["dnsvolley-tcp"])
	printf "medians: kxdpgun -U %.0f answers/s at %.2f us/answer; dnsvolley doq %.0f at %.2f; dnsvolley tcp %.0f at %.2f\n", qk, ck, qd, cd, qt, ct
	printf "dnsvolley doq / kxdpgun -U: answers/s %.2fx, CPU per answer %.2fx\n", qd / qk, cd / ck
	printf "dnsvolley doq / dnsvolley tcp: answers/s %.2fx, CPU per answer %.2fx\n", qd / qt, cd / ct
}' "$tmp/runs"

# DoQ beside DoT against the responder (loopback): the same server, both transports.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" -subj /CN=dnsvolley.test 2>/dev/null
pin() { if command -v taskset >/dev/null; then echo "taskset -c $1"; fi; }
$(pin 1) "$build/dnsvolley-responder" -a 127.0.0.1 -p 0 --tls-port 0 --tls-port-file "$tmp/dot" \
	--doq-port 0 --doq-port-file "$tmp/doq" --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem" \
	-q >/dev/null 2>&1 &
resp=$!
trap 'kill $resp 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 200); do [ -s "$tmp/doq" ] && [ -s "$tmp/dot" ] && break; sleep 0.05; done
printf '%-13s %5s %9s %10s %8s\n' gen round answers "answers/s" "us/ans" | tee "$tmp/loop"
for r in $(seq "$rounds"); do
	for m in dot doq; do
		port=$(cat "$tmp/$m")
		/usr/bin/time -f '%U %S' -o "$tmp/t" $(pin 0) "$build/dnsvolley" --no-progress -m "$m" \
			-s 127.0.0.1 -p "$port" -d "$tmp/list.txt" -l "$secs" -c 4 -q 100 -t 2 >"$tmp/d.out" 2>&1 || true
		awk -v g="responder-$m" -v r="$r" -v a="$(awk '/Queries completed:/ { print $3 }' "$tmp/d.out")" \
			-v t="$(awk '/Run time \(s\):/ { print $4 }' "$tmp/d.out")" -v c="$(awk '{ print $1 + $2 }' "$tmp/t")" \
			'BEGIN { printf "%-13s %5d %9d %10.0f %8.2f\n", g, r, a, a / t, c * 1e6 / a }' | tee -a "$tmp/loop"
	done
done
kill -INT $resp 2>/dev/null || true
wait $resp 2>/dev/null || true
awk 'NR > 1 { n[$1]++; q[$1, n[$1]] = $4; c[$1, n[$1]] = $5 }
function med(a, g, k,   i, j, t, v) { for (i = 1; i <= k; i++) v[i] = a[g, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
END {
	qt = med(q, "responder-dot", n["responder-dot"]); ct = med(c, "responder-dot", n["responder-dot"])
	qq = med(q, "responder-doq", n["responder-doq"]); cq = med(c, "responder-doq", n["responder-doq"])
	printf "medians (responder): dot %.0f answers/s at %.2f us/answer; doq %.0f at %.2f\n", qt, ct, qq, cq
	printf "doq / dot (responder): answers/s %.2fx, CPU per answer %.2fx\n", qq / qt, cq / ct
}' "$tmp/loop"
