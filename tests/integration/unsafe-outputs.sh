#!/usr/bin/env bash
# Unsafe combinations refused before anything runs: an output file that is also an input.
# For --json or --dns-metrics naming the query list (-d), --csv naming the --json file and
# --json naming the --baseline: exit 2, a message saying which file is also what
# (src/cmd/cli.c, check_outputs), and the query list and baseline are left byte for byte.
# compare --junit naming one of its results files: the same (src/cmd/cmd_compare.c).
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
check "--json - and --dns-metrics - (both on stdout)" -d l.txt --json - --dns-metrics -
check "--csv - and --json -" -d l.txt --csv - --json -
check "--json = --baseline" -d l.txt --json base.json --baseline base.json --max-qps-drop 50
# compare --junit naming one of the results files it reads (issue 16 item 2).
cp base.json new.json
for junit in base.json new.json ./base.json; do
	rc=0
	"$DV" compare --max-qps-drop 50% --junit "$junit" base.json new.json >out.txt 2>err.txt || rc=$?
	cmp -s base.json base.orig || fail "compare --junit $junit: the baseline was overwritten"
	cmp -s new.json base.orig || fail "compare --junit $junit: the new file was overwritten"
	assert_eq "compare --junit $junit: exit status" 2 "$rc"
	grep -q "is also a results file" err.txt || fail "compare --junit $junit: message: $(cat err.txt)"
done
"$DV" compare --max-qps-drop 50% --junit j.xml base.json new.json >out.txt 2>err.txt ||
	fail "compare --junit j.xml: $(cat err.txt)"
grep -q '<testsuite' j.xml || fail "compare --junit j.xml: no JUnit written"
# Output files honour the umask (they hold command lines), and --json/--csv on a symlink write
# through it: the link stays, its target gets the content (issue 16 item 8).
(umask 077 && "$DV" --no-progress --quiet -s "$S" -d l.txt --json private.json --csv private.csv) ||
	fail "umask 077 run"
assert_eq "--json mode under umask 077" 600 "$(stat -c %a private.json)"
assert_eq "--csv mode under umask 077" 600 "$(stat -c %a private.csv)"
mkdir hist
"$DV" --no-progress --quiet -s "$S" -d l.txt --csv hist/h.csv >/dev/null 2>&1 || fail "history run"
ln -s hist/h.csv link.csv
"$DV" --no-progress --quiet -s "$S" -d l.txt --csv link.csv >/dev/null 2>err.txt || fail "csv via symlink: $(cat err.txt)"
[ -L link.csv ] || fail "--csv replaced the symlink"
assert_eq "history rows through the symlink (header + 2)" 3 "$(wc -l <hist/h.csv)"
ln -s missing/r.json dangling.json
rc=0
"$DV" --no-progress --quiet -s "$S" -d l.txt --json dangling.json >/dev/null 2>err.txt || rc=$?
assert_eq "--json on a dangling symlink: exit status" 2 "$rc"
grep -q "is a symbolic link to a missing file" err.txt || fail "dangling: message: $(cat err.txt)"
stop_responder R
echo "unsafe-outputs: all assertions hold"
