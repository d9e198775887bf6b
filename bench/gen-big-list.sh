#!/bin/sh
# gen-big-list.sh: write a big, deterministic query list for load benchmarks:
# N lines of "PREFIXdomain TYPE" built from querylists/domains.txt.
# usage: bench/gen-big-list.sh N > FILE
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
n=${1:?usage: gen-big-list.sh N}
LC_ALL=C awk -v n="$n" '
NR == FNR { d[nd++] = $1; next }
END {
	np = split(" www. mail. api. cdn. shop. m. static. vpn.", p, " ")
	p[0] = ""
	nt = split("A AAAA A MX A SOA NS A TXT AAAA A HTTPS", t, " ")
	for (i = 0; i < n; i++) {
		dom = d[i % nd]
		k = int(i / nd)
		print p[k % (np + 1)] dom " " t[(i + k) % nt + 1]
	}
}' "$top/querylists/domains.txt" /dev/null
