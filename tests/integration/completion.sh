#!/usr/bin/env bash
# completion: completion/dnsvolley offers the subcommands (capacity and resperf too), each
# subcommand's own flags, -m's transports from --help's --mode line (the table), and fixed values
# (never file names) for --clock, --input,
# --timing, --interval-format, --doh-method and -O; resperf's -m is a rate, not a mode.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
# shellcheck source=/dev/null
source "$top_srcdir/completion/dnsvolley"
set +u # the completion runs in an interactive shell, which does not set -u
cd "$TMP"
touch aaa.txt
reply() { # WORDS...: the completion of the last word, space-separated
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_dnsvolley
	echo "${COMPREPLY[*]}"
}
assert_eq "subcommands" "capacity resperf compare plot report merge history-upgrade" "$(reply "$DV" "")"
assert_eq "-m" "udp tcp dot doh doq" "$(reply "$DV" -m "")"
assert_eq "resperf -m (a rate)" "" "$(reply "$DV" resperf -m "")"
assert_eq "--clock" "wire app auto wire:1/1 wire:1/16" "$(reply "$DV" --clock "")"
assert_eq "--input" "pcap dnstap binary text update auto" "$(reply "$DV" --input "")"
assert_eq "--timing" "list original" "$(reply "$DV" --timing "")"
assert_eq "--interval-format" "dnsvolley dnsperf" "$(reply "$DV" --interval-format "")"
assert_eq "--doh-method" "GET POST" "$(reply "$DV" --doh-method "")"
assert_eq "-O" "suppress= latency-histogram num-queries-per-conn= doh-uri= doh-method=" "$(reply "$DV" -O "")"
assert_eq "resperf's own flags" "-f -M -s -p -a -x -d -t -b -e -E -D -y -i -m -P -r -c -L -C -q -v -W -R -F -h -H -O -T -o" "$(reply "$DV" resperf -)"
assert_eq "-d completes files" "aaa.txt" "$(reply "$DV" -d a)"
echo "PASS"
