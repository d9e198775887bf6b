#!/usr/bin/env bash
# xdp-responder.sh: the bundled responder's three UDP answer paths side by side in the
# namespace lab, in interleaved rounds, under the same load (dnsvolley --xdp, closed
# loop): full answers through AF_XDP sockets (scripts/lab responder-xsk: --xdp), the
# reflection in the XDP program (responder-xdp: --xdp --reflect, XDP_TX) and full answers
# through the kernel's UDP sockets (responder).
#
# usage: bench/xdp-responder.sh [-B BUILDDIR] [-r ROUNDS] [-l SECONDS] [-n NAMES] [-c SOCKETS] [-q WINDOW]
#   -r ROUNDS   rounds, each running every target once (3)
#   -l SECONDS  each run's length (3)
#   -n NAMES    the list: the first NAMES of querylists/www-a.txt (2000)
#   -c, -q      dnsvolley's sockets (source ports) and window (8, 500)
# Per run: answers, answers/s, the responder process's CPU µs per answer (utime + stime
# of all its threads, /proc/PID/stat) and the host's softirq CPU µs per answer
# (/proc/stat: where XDP programs, the veth and the AF_XDP copy run, for both ends:
# the generator's share is the same for every target). The XDP_TX reflection runs
# entirely in softirq, so its process CPU is near 0: compare the sums. Then the medians
# per target and the ratios of the XDP sockets to the reflection and to the kernel path.
# Needs root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build" rounds=3 secs=3 names=2000 socks=8 window=500
while getopts "B:r:l:n:c:q:" o; do
	case $o in
	B) build=$OPTARG ;;
	r) rounds=$OPTARG ;;
	l) secs=$OPTARG ;;
	n) names=$OPTARG ;;
	c) socks=$OPTARG ;;
	q) window=$OPTARG ;;
	*) sed -n '8,12p' "$0" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n "$names" "$top/querylists/www-a.txt" >"$tmp/list.txt"

# Inside the lab: one dnsvolley --xdp run, the target's and the host's CPU around it.
cat >"$tmp/inside" <<'INSIDE'
#!/usr/bin/env bash
set -euo pipefail
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$LAB_PID/stat"; }
softirq() { awk '$1 == "cpu" { print $8 }' /proc/stat; }
p0=$(ticks) s0=$(softirq)
"$DV" --no-progress --xdp "$LAB_IFACE" -s "$LAB_SERVER" -p "$LAB_PORT" -d "$TMP/list.txt" \
	-l "$SECS" -c "$SOCKS" -q "$WINDOW" -t 1 >"$TMP/d.out" 2>&1
p1=$(ticks) s1=$(softirq)
hz=$(getconf CLK_TCK)
awk -v g="$GEN" -v r="$ROUND" -v p="$((p1 - p0))" -v s="$((s1 - s0))" -v hz="$hz" \
	-v a="$(awk '/Queries completed:/ { print $3 }' "$TMP/d.out")" \
	-v t="$(awk '/Run time \(s\):/ { print $4 }' "$TMP/d.out")" \
	'BEGIN { printf "%-14s %5d %9d %10.0f %8.2f %8.2f %8.2f\n", g, r, a, a / t,
		p * 1e6 / hz / a, s * 1e6 / hz / a, (p + s) * 1e6 / hz / a }'
INSIDE
chmod +x "$tmp/inside"
echo "bench/xdp-responder.sh -r $rounds -l $secs -n $names -c $socks -q $window ($(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-14s %5s %9s %10s %8s %8s %8s\n' target round answers "answers/s" "proc us" "sirq us" "sum us" |
	tee "$tmp/runs"
for r in $(seq "$rounds"); do
	for t in responder-xsk responder-xdp responder; do
		GEN=$t ROUND=$r SECS=$secs SOCKS=$socks WINDOW=$window TMP=$tmp DV="$build/dnsvolley" \
			"$top/scripts/lab" -B "$build" "$t" -- "$tmp/inside" | tee -a "$tmp/runs"
	done
done
awk 'NR > 1 { n[$1]++; q[$1, n[$1]] = $4; c[$1, n[$1]] = $7 }
function med(a, g, k,   i, j, t, v) { for (i = 1; i <= k; i++) v[i] = a[g, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
END {
	qs = med(q, "responder-xsk", n["responder-xsk"]); cs = med(c, "responder-xsk", n["responder-xsk"])
	qr = med(q, "responder-xdp", n["responder-xdp"]); cr = med(c, "responder-xdp", n["responder-xdp"])
	qk = med(q, "responder", n["responder"]); ck = med(c, "responder", n["responder"])
	printf "medians: XDP sockets %.0f answers/s at %.2f us/answer; XDP_TX reflect %.0f at %.2f; kernel UDP %.0f at %.2f\n", qs, cs, qr, cr, qk, ck
	printf "XDP sockets / XDP_TX reflect: answers/s %.2fx, CPU per answer %.2fx\n", qs / qr, cs / cr
	printf "XDP sockets / kernel UDP: answers/s %.2fx, CPU per answer %.2fx\n", qs / qk, cs / ck
}' "$tmp/runs"
