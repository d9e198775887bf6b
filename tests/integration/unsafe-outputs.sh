#!/usr/bin/env bash
# Unsafe combinations refused before anything runs: an output file that is also an input.
# For --json or --dns-metrics naming the query list (-d), --csv naming the --json file and
# --json naming the --baseline: exit 2, a message saying which file is also what
# (src/cmd/cli.c, check_outputs), and the query list and baseline are left byte for byte.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
cp l.txt l.orig
start_responder R -T 1
S="127.0.0.1:$R_PORT"
"$DV" --no-progress --quiet -s "$S" -d l.txt --json base.json >/dev/null 2>&1 || fail "base run"
cp base.json base.orig

check() { # WHAT ARGS...: exit 2, a message saying which file is also what, inputs untouched
	local what=$1 rc
	shift
	set +e
	"$DV" --no-progress --quiet -s "$S" "$@" >out.txt 2>err.txt
	rc=$?
	set -e
	cmp -s l.txt l.orig || fail "$what: the query list was overwritten"
	cmp -s base.json base.orig || fail "$what: the baseline was overwritten"
	assert_eq "$what: exit status" 2 "$rc"
	grep -q 'is also' err.txt || fail "$what: message: $(cat err.txt)"
	echo "ok: $what: $(head -1 err.txt)"
}
check "--json = -d" -d l.txt --json l.txt
check "--dns-metrics = -d" -d l.txt --dns-metrics l.txt
check "--csv = --json" -d l.txt --json out.json --csv out.json
check "--json = --baseline" -d l.txt --json base.json --baseline base.json --max-qps-drop 50
stop_responder R
echo "unsafe-outputs: all assertions hold"
