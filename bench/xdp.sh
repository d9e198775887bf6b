#!/usr/bin/env bash
# xdp.sh: the generator ceiling of issue 27, side by side in the namespace lab: Knot's
# kxdpgun (AF_XDP), dnsvolley --xdp (AF_XDP, answers matched to queries) and dnsvolley's
# kernel UDP path, on the same veth and its one queue, in interleaved rounds, against the
# fastest target there is, the responder answering in XDP (scripts/lab responder-xdp), or
# against knotd's XDP listener (-T knotd-xdp; its own count of answers beside each run).
#
# usage: bench/xdp.sh [-B BUILDDIR] [-T TARGET] [-r ROUNDS] [-l SECONDS] [-n NAMES] [-Q QPS]
#                     [-c SOCKETS] [-q WINDOW]
#   -T TARGET   responder-xdp (default) or knotd-xdp: knotd runs one UDP worker on one
#               queue, so above its rate the answers/s measure knotd, not the generator
#   -r ROUNDS   rounds, each running every generator once (3)
#   -l SECONDS  each run's length (3)
#   -n NAMES    the list: the first NAMES of querylists/www-a.txt (2000)
#   -Q QPS      kxdpgun's offered rate (3000000: "as fast as it can")
#   -c, -q      dnsvolley's sockets (source ports) and window, closed loop (8, 500)
# Per run: queries sent, answers, answered share, answers/s and the generator's CPU µs per
# answer (utime + stime of the process, from /usr/bin/time; on a veth the peer's XDP_TX
# and the host end's receive run in softirq and are partly billed to the generator, the
# same way for all three). Then per generator the medians, and the ratios of
# dnsvolley --xdp to kxdpgun and to dnsvolley's kernel UDP path.
# The kernel UDP path needs an XDP program on the host's end too (a veth drops its peer's
# XDP_TX frames otherwise): for its runs a second responder on the host's end attaches one
# (it answers only its own port; everything else passes to the kernel).
# Needs root, kxdpgun (knot-dnsutils), GNU time (time) and for -T knotd-xdp knotd (knot),
# all in scripts/packages.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build" target=responder-xdp rounds=3 secs=3 names=2000 qps=3000000 socks=8 window=500
while getopts "B:T:r:l:n:Q:c:q:" o; do
	case $o in
	B) build=$OPTARG ;;
	T) target=$OPTARG ;;
	r) rounds=$OPTARG ;;
	l) secs=$OPTARG ;;
	n) names=$OPTARG ;;
	Q) qps=$OPTARG ;;
	c) socks=$OPTARG ;;
	q) window=$OPTARG ;;
	*) sed -n '7,15p' "$0" >&2; exit 2 ;;
	esac
done
case $target in
responder-xdp | knotd-xdp) ;;
*) echo "xdp.sh: -T: '$target' is not responder-xdp or knotd-xdp" >&2; exit 2 ;;
esac
command -v kxdpgun >/dev/null || { echo "xdp.sh: kxdpgun is not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "xdp.sh: GNU time (/usr/bin/time) is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n "$names" "$top/querylists/www-a.txt" >"$tmp/list.txt"

# The part that runs inside the lab: every round, kxdpgun, dnsvolley --xdp, dnsvolley.
cat >"$tmp/inside" <<'INSIDE'
#!/usr/bin/env bash
set -euo pipefail
# The server's own count of answers so far: knotd's udp4-xdp counter ("-" for the responder,
# whose XDP program counts only until it is detached).
served() {
	if [ -n "${LAB_KNOTC:-}" ]; then
		$LAB_KNOTC stats mod-stats.request-protocol | awk -F' = ' '/udp4-xdp/ { n = $2 } END { print n + 0 }'
	else
		echo -
	fi
}
row() { # GEN ROUND SENT ANSWERS CPU_S RUN_S: one line, with the server's answers since the last
	local s1
	s1=$(served)
	awk -v g="$1" -v r="$2" -v s="$3" -v a="$4" -v c="$5" -v t="$6" -v s0="$S0" -v s1="$s1" \
		'BEGIN { printf "%-10s %5d %9d %9d %7.1f%% %10.0f %8.2f %9s\n", g, r, s, a, 100 * a / s, a / t,
			c * 1e6 / a, s1 == "-" ? "-" : s1 - s0 }'
	S0=$s1
}
dnsvolley() { # GEN ROUND ARGS...
	local g=$1 r=$2
	shift 2
	/usr/bin/time -f '%U %S' -o "$TMP/t" "$DV" --no-progress -s "$LAB_SERVER" -p "$LAB_PORT" \
		-d "$TMP/list.txt" -l "$SECS" -c "$SOCKS" -q "$WINDOW" -t 1 "$@" >"$TMP/d.out" 2>&1
	row "$g" "$r" "$(awk '/Queries sent:/ { print $3 }' "$TMP/d.out")" \
		"$(awk '/Queries completed:/ { print $3 }' "$TMP/d.out")" \
		"$(awk '{ print $1 + $2 }' "$TMP/t")" "$(awk '/Run time \(s\):/ { print $4 }' "$TMP/d.out")"
}
printf '%-10s %5s %9s %9s %8s %10s %8s %9s\n' gen round sent answers answered "answers/s" "us/ans" served
S0=$(served)
for r in $(seq "$ROUNDS"); do
	/usr/bin/time -f '%U %S' -o "$TMP/t" kxdpgun -t "$SECS" -Q "$QPS" -i "$TMP/list.txt" \
		-I "$LAB_IFACE" -p "$LAB_PORT" "$LAB_SERVER" >"$TMP/k.out" 2>&1
	row kxdpgun "$r" "$(awk '/^total queries:/ { print $3 }' "$TMP/k.out")" \
		"$(awk '/^total replies:/ { print $3 }' "$TMP/k.out")" "$(awk '{ print $1 + $2 }' "$TMP/t")" "$SECS"
	# kxdpgun leaves its XDP program on the interface when it ends (knot keeps it for the
	# next run); dnsvolley --xdp would rightly call the interface busy.
	ip link set dev "$LAB_IFACE" xdp off
	dnsvolley dv-xdp "$r" --xdp "$LAB_IFACE"
	"$RESPONDER" --xdp "$LAB_IFACE" --reflect -a "$LAB_ADDR" -p 0 --port-file "$TMP/hp" -q >/dev/null &
	hp=$!
	for _ in $(seq 200); do [ -s "$TMP/hp" ] && break; sleep 0.05; done
	dnsvolley dv-kernel "$r"
	kill "$hp"
	wait "$hp" || true
	rm -f "$TMP/hp"
done
INSIDE
chmod +x "$tmp/inside"
echo "bench/xdp.sh -T $target -r $rounds -l $secs -n $names -Q $qps -c $socks -q $window ($(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
ROUNDS=$rounds SECS=$secs QPS=$qps SOCKS=$socks WINDOW=$window TMP=$tmp DV="$build/dnsvolley" \
	RESPONDER="$build/dnsvolley-responder" \
	"$top/scripts/lab" -B "$build" -l "$tmp/list.txt" "$target" -- "$tmp/inside" | tee "$tmp/runs"
awk 'NR > 1 { n[$1]++; q[$1, n[$1]] = $6; c[$1, n[$1]] = $7 }
function med(a, g, k,   i, j, t, v) { for (i = 1; i <= k; i++) v[i] = a[g, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
END {
	qk = med(q, "kxdpgun", n["kxdpgun"]); ck = med(c, "kxdpgun", n["kxdpgun"])
	qx = med(q, "dv-xdp", n["dv-xdp"]); cx = med(c, "dv-xdp", n["dv-xdp"])
	qu = med(q, "dv-kernel", n["dv-kernel"]); cu = med(c, "dv-kernel", n["dv-kernel"])
	printf "medians: kxdpgun %.0f answers/s at %.2f us/answer; dnsvolley --xdp %.0f at %.2f; dnsvolley kernel UDP %.0f at %.2f\n", qk, ck, qx, cx, qu, cu
	printf "dnsvolley --xdp / kxdpgun: answers/s %.2fx, CPU per answer %.2fx\n", qx / qk, cx / ck
	printf "dnsvolley --xdp / dnsvolley kernel UDP: answers/s %.2fx, CPU per answer %.2fx\n", qx / qu, cx / cu
}' "$tmp/runs"
