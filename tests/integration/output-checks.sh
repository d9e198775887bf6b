#!/usr/bin/env bash
# Outputs and arguments checked before anything is measured (issue 28 item 11): capacity
# --plot into a directory that cannot be made, capacity --to below --from, --rank-json into a
# missing directory: exit 2 at once with the reason, and the server received nothing.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
start_responder R -T 1
S="127.0.0.1:$R_PORT"

before() { # WHAT MESSAGE ARGS...: exit 2, exactly MESSAGE, no report
	local what=$1 msg=$2 rc=0
	shift 2
	"$DV" "$@" </dev/null >out.txt 2>err.txt || rc=$?
	assert_eq "$what: exit status" 2 "$rc"
	assert_eq "$what: message" "$msg" "$(cat err.txt)"
	[ ! -s out.txt ] || fail "$what: something ran: $(cat out.txt)"
}
before "capacity --plot /nonexistent/dir" \
	"dnsvolley capacity: --plot: cannot write the charts into '/nonexistent/dir': No such file or directory" \
	capacity --no-progress -s "$S" -d l.txt --step 0.2 --settle 0 --plot /nonexistent/dir
: >afile
before "capacity --plot FILE" \
	"dnsvolley capacity: --plot: cannot write the charts into 'afile': Not a directory" \
	capacity --no-progress -s "$S" -d l.txt --step 0.2 --settle 0 --plot afile
before "capacity --from 100 --to 10" \
	"dnsvolley capacity: --to 10 is below --from 100: nothing to search
Try 'dnsvolley capacity --help' for more information." \
	capacity --no-progress -s "$S" -d l.txt --step 0.2 --settle 0 --from 100 --to 10
before "capacity --to 500 (--from's default is 1000)" \
	"dnsvolley capacity: --to 500 is below --from 1000 (the default): nothing to search
Try 'dnsvolley capacity --help' for more information." \
	capacity --no-progress -s "$S" -d l.txt --step 0.2 --settle 0 --to 500
before "--rank-json /nonexistent/r" \
	"dnsvolley: --rank-json: cannot write '/nonexistent/r.0.json': No such file or directory
Try 'dnsvolley --help' for more information." \
	--no-progress -s "$S" -d l.txt --rank-json /nonexistent/r
stop_responder R
assert_eq "queries the server received" 0 "$(resp_count R received)"
echo "output-checks: all assertions hold"
