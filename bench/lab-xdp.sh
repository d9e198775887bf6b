#!/usr/bin/env bash
# lab-xdp.sh: generators side by side against knotd's XDP listener in the namespace lab
# (scripts/lab knotd-xdp): Knot's kxdpgun (AF_XDP, native mode on the veth's host end)
# and dnsvolley's kernel UDP path, in interleaved rounds, the baseline of issue 27's
# AF_XDP path.
#
# usage: bench/lab-xdp.sh [-B BUILDDIR] [-r ROUNDS] [-l SECONDS] [-n NAMES] [-Q QPS]
#                         [-c SOCKETS] [-q WINDOW]
#   -r ROUNDS   rounds, each running every generator once (3)
#   -l SECONDS  each run's length (3)
#   -n NAMES    the list: the first NAMES of querylists/www-a.txt (2000), served by knotd
#   -Q QPS      kxdpgun's offered rate (3000000: "as fast as it can")
#   -c, -q      dnsvolley's sockets and window, closed loop (8, 500)
# Per run: queries sent, answers, answered share, answers/s and the generator's CPU µs per
# answer (utime + stime of the process, from /usr/bin/time); knotd's own count of what
# its XDP listener answered (mod-stats udp4-xdp) beside each. Then per generator the
# medians, and dnsvolley / kxdpgun ratios of answers/s and CPU per answer.
# knotd runs one UDP worker on one queue: above its rate the answers/s measure knotd, not
# the generator (the "answered" share then falls below 100%). Needs root, knotd (knot),
# kxdpgun (knot-dnsutils) and GNU time (time), all in scripts/packages.txt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build" rounds=3 secs=3 names=2000 qps=3000000 socks=8 window=500
while getopts "B:r:l:n:Q:c:q:" o; do
	case $o in
	B) build=$OPTARG ;;
	r) rounds=$OPTARG ;;
	l) secs=$OPTARG ;;
	n) names=$OPTARG ;;
	Q) qps=$OPTARG ;;
	c) socks=$OPTARG ;;
	q) window=$OPTARG ;;
	*) sed -n '6,13p' "$0" >&2; exit 2 ;;
	esac
done
command -v kxdpgun >/dev/null || { echo "lab-xdp: kxdpgun is not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "lab-xdp: GNU time (/usr/bin/time) is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n "$names" "$top/querylists/www-a.txt" >"$tmp/list.txt"

# The part that runs inside the lab: every round, kxdpgun then dnsvolley.
cat >"$tmp/inside" <<'INSIDE'
#!/usr/bin/env bash
set -euo pipefail
xdp() { $LAB_KNOTC stats mod-stats.request-protocol | awk -F' = ' '/udp4-xdp/ { n = $2 } END { print n + 0 }'; }
printf '%-9s %5s %9s %9s %8s %10s %8s %9s\n' gen round sent answers answered "answers/s" "us/ans" "knotd-xdp"
for r in $(seq "$ROUNDS"); do
	k0=$(xdp)
	/usr/bin/time -f '%U %S' -o "$TMP/t" kxdpgun -t "$SECS" -Q "$QPS" -i "$TMP/list.txt" \
		-I "$LAB_IFACE" "$LAB_SERVER" >"$TMP/k.out" 2>&1
	sent=$(awk '/^total queries:/ { print $3 }' "$TMP/k.out")
	ans=$(awk '/^total replies:/ { print $3 }' "$TMP/k.out")
	cpu=$(awk '{ print $1 + $2 }' "$TMP/t")
	k1=$(xdp)
	awk -v g=kxdpgun -v r="$r" -v s="$sent" -v a="$ans" -v c="$cpu" -v t="$SECS" -v k=$((k1 - k0)) \
		'BEGIN { printf "%-9s %5d %9d %9d %7.1f%% %10.0f %8.2f %9d\n", g, r, s, a, 100 * a / s, a / t, c * 1e6 / a, k }'
	/usr/bin/time -f '%U %S' -o "$TMP/t" "$DV" --no-progress -s "$LAB_SERVER" -d "$TMP/list.txt" \
		-l "$SECS" -c "$SOCKS" -q "$WINDOW" -t 1 >"$TMP/d.out" 2>&1
	sent=$(awk '/Queries sent:/ { print $3 }' "$TMP/d.out")
	ans=$(awk '/Queries completed:/ { print $3 }' "$TMP/d.out")
	run=$(awk '/Run time \(s\):/ { print $4 }' "$TMP/d.out")
	cpu=$(awk '{ print $1 + $2 }' "$TMP/t")
	k0=$k1 k1=$(xdp)
	awk -v g=dnsvolley -v r="$r" -v s="$sent" -v a="$ans" -v c="$cpu" -v t="$run" -v k=$((k1 - k0)) \
		'BEGIN { printf "%-9s %5d %9d %9d %7.1f%% %10.0f %8.2f %9d\n", g, r, s, a, 100 * a / s, a / t, c * 1e6 / a, k }'
done
INSIDE
chmod +x "$tmp/inside"
ROUNDS=$rounds SECS=$secs QPS=$qps SOCKS=$socks WINDOW=$window TMP=$tmp DV="$build/dnsvolley" \
	"$top/scripts/lab" -B "$build" -l "$tmp/list.txt" knotd-xdp -- "$tmp/inside" | tee "$tmp/runs"
awk 'NR > 1 { n[$1]++; q[$1, n[$1]] = $6; c[$1, n[$1]] = $7 }
function med(a, g, k,   i, j, t, v) { for (i = 1; i <= k; i++) v[i] = a[g, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
END {
	qk = med(q, "kxdpgun", n["kxdpgun"]); ck = med(c, "kxdpgun", n["kxdpgun"])
	qd = med(q, "dnsvolley", n["dnsvolley"]); cd = med(c, "dnsvolley", n["dnsvolley"])
	printf "medians: kxdpgun %.0f answers/s at %.2f us/answer; dnsvolley (kernel UDP) %.0f at %.2f\n", qk, ck, qd, cd
	printf "dnsvolley / kxdpgun: answers/s %.2fx, CPU per answer %.2fx\n", qd / qk, cd / ck
}' "$tmp/runs"
