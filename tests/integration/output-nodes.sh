#!/usr/bin/env bash
# Outputs that are not regular files are written directly, never replaced (issue 28 item 1):
# --json, --csv, --dns-metrics and merge -o into a FIFO (its reader gets the data, it stays a
# FIFO), into bash's >(cmd) (a /dev/fd/N pipe), and into a character device made here with
# mknod (the twin of /dev/null: it stays that device). A regular file is still replaced
# atomically (a new inode after the run).
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || fail "binaries not built"
cd "$TMP"
head -20 "$top_srcdir/querylists/soa.txt" >l.txt
start_responder R -T 1
S="127.0.0.1:$R_PORT"
run() { "$DV" --no-progress --quiet -s "$S" -d l.txt "$@"; }

# A FIFO per output, each with a reader that copies what it reads into a file.
mkfifo j.fifo c.fifo m.fifo
cat j.fifo >j.read &
rj=$!
cat c.fifo >c.read &
rc_=$!
cat m.fifo >m.read &
rm_=$!
_pids+=("$rj" "$rc_" "$rm_")
run --json j.fifo --csv c.fifo --dns-metrics m.fifo >/dev/null 2>err.txt || fail "FIFO run: $(cat err.txt)"
wait "$rj" "$rc_" "$rm_"
for f in j c m; do [ -p $f.fifo ] || fail "$f.fifo was replaced by a $(stat -c %F $f.fifo)"; done
echo "ok: the three FIFOs are still FIFOs"
assert_eq "--json through the FIFO: completed" 20 "$(jc j.read completed)"
assert_eq "--csv through the FIFO: lines (header + 1 pass)" 2 "$(wc -l <c.read)"
head -1 c.read | grep -q '^date,' || fail "--csv through the FIFO: no header: $(head -1 c.read)"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' m.read ||
	fail "--dns-metrics through the FIFO: not JSON lines"
[ -s m.read ] || fail "--dns-metrics through the FIFO: nothing read"
echo "ok: --csv and --dns-metrics read from their FIFOs"

# bash's process substitution: --json /dev/fd/N, a pipe (issue: refused as a dangling link).
run --json >(cat >ps.json) >/dev/null 2>err.txt || fail "--json >(cat): $(cat err.txt)"
wait $!
assert_eq "--json >(cat): completed" 20 "$(jc ps.json completed)"

# merge -o into a FIFO.
cp j.read a.json
run --json b.json >/dev/null 2>&1 || fail "second run"
mkfifo o.fifo
cat o.fifo >o.read &
ro=$!
_pids+=("$ro")
"$DV" merge a.json b.json -o o.fifo >/dev/null 2>err.txt || fail "merge -o FIFO: $(cat err.txt)"
wait "$ro"
[ -p o.fifo ] || fail "merge -o replaced the FIFO"
assert_eq "merge -o through the FIFO: completed (20 + 20)" 40 "$(jc o.read completed)"

# A character device (1,3: a null device) made here: it stays that device, nothing beside it.
if mknod null c 1 3 2>/dev/null; then
	run --json null >/dev/null 2>err.txt || fail "--json on a device: $(cat err.txt)"
	run --csv null >/dev/null 2>err.txt || fail "--csv on a device: $(cat err.txt)"
	"$DV" merge a.json b.json -o null >/dev/null 2>err.txt || fail "merge -o device: $(cat err.txt)"
	assert_eq "the device after --json, --csv, merge -o" "character special file 1,3" \
		"$(stat -c '%F %t,%T' null)"
	assert_eq "files beside it (no temporary left)" "" "$(ls -A | grep '^null.' || true)"
else
	echo "note: mknod not permitted here (needs CAP_MKNOD); device case not run"
fi

# A regular file is still replaced atomically: a new inode, the old one never half-written.
run --json r.json >/dev/null 2>&1 || fail "regular run"
ino=$(stat -c %i r.json)
cp r.json r.keep # keeps the old inode's number from being reused at once
run --json r.json >/dev/null 2>&1 || fail "regular run 2"
[ "$(stat -c %i r.json)" != "$ino" ] || fail "r.json was rewritten in place, not renamed"
echo "ok: a regular file is replaced by rename (inode $ino -> $(stat -c %i r.json))"
stop_responder R
echo "output-nodes: all assertions hold"
