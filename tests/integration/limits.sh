#!/usr/bin/env bash
# Limits: -c against the open-file limit (error naming it, or raised when the hard
# limit allows), -c 10000 when allowed, and a whole run as an unprivileged user.
. "$(dirname "$0")/lib.sh"
LIST="$top_srcdir/querylists/soa.txt" # 10,000 queries
f() { report_field "$1" "$2"; }
[ -x "$DV" ] && [ -x "$RESPONDER" ] || fail "binaries not built"
head -100 "$LIST" >"$TMP/100.txt"

start_responder R -T 1

# 1. -c 1000 under a hard limit of 256 open files: a clear error naming the limit, exit 3.
set +e
(
	ulimit -n 256
	exec "$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/100.txt" -c 1000
) >"$TMP/fd.out" 2>"$TMP/fd.err"
rc=$?
set -e
assert_eq "ulimit -n 256, -c 1000: exit status" 3 "$rc"
grep -q -- '-c 1000 needs 1064 open files but the limit is 256 (hard limit 256); lower -c or raise the limit (ulimit -n)' \
	"$TMP/fd.err" || fail "ulimit 256: message: $(cat "$TMP/fd.err")"
echo "ok: ulimit 256: $(tail -1 "$TMP/fd.err")"

# 2. Soft limit 256, hard 4096: dnsvolley raises its own soft limit and runs.
(
	ulimit -Hn 4096
	ulimit -Sn 256
	exec "$DV" --no-progress -s 127.0.0.1 -p "$R_PORT" -d "$TMP/100.txt" -c 1000 -n 1
) >"$TMP/raise" 2>&1 || fail "soft 256 hard 4096: $(cat "$TMP/raise")"
assert_eq "soft 256 / hard 4096, -c 1000: completed" 100 "$(f "$TMP/raise" "Queries completed")"

# 3. -c 10000 when the limit allows it. -q 1: one query per batch, so the sockets take
#    turns and every one of the 10,000 sends exactly one query.
stop_responder R
start_responder B -T 1
if (ulimit -n 20000) 2>/dev/null; then
	(
		ulimit -n 20000
		exec timeout 120 "$DV" --no-progress -s 127.0.0.1 -p "$B_PORT" -d "$LIST" -c 10000 -q 1 -n 1
	) >"$TMP/c10k" 2>&1 || fail "-c 10000: $(cat "$TMP/c10k")"
	stop_responder B
	assert_eq "-c 10000: sent" 10000 "$(f "$TMP/c10k" "Queries sent")"
	assert_eq "-c 10000: completed" 10000 "$(f "$TMP/c10k" "Queries completed")"
	assert_eq "-c 10000: source ports at the responder" 10000 "$(resp_count B source-ports)"
else
	stop_responder B
	echo "note: cannot raise the open-file limit to 20000 here; -c 10000 not tried"
fi

# 4. Without root: the same run as user nobody (copies of the binary and list in a
#    directory nobody can read), against a responder that also runs as nobody.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	U="$TMP/nobody"
	mkdir -m 755 "$U"
	chmod 711 "$TMP"
	cp "$DV" "$RESPONDER" "$U/"
	cp "$LIST" "$U/list.txt"
	chmod 644 "$U/list.txt"
	asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	mkdir -m 777 "$U/run"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$U/dnsvolley-responder" -a 127.0.0.1 -p 0 \
		--port-file "$U/run/port" >"$TMP/nr.out" 2>&1 &
	npid=$!
	_pids+=("$npid")
	port=""
	for _ in $(seq 200); do
		[ -s "$U/run/port" ] && port=$(cat "$U/run/port") && break
		sleep 0.025
	done
	[ -n "$port" ] || fail "nobody: responder did not start: $(cat "$TMP/nr.out")"
	asnobody "$U/dnsvolley" --no-progress -s 127.0.0.1 -p "$port" -d "$U/list.txt" -n 1 -c 16 \
		>"$TMP/nobody.out" 2>&1 || fail "run as nobody: $(cat "$TMP/nobody.out")"
	assert_eq "as nobody: completed" 10000 "$(f "$TMP/nobody.out" "Queries completed")"
	assert_eq "as nobody: lost" 0 "$(f "$TMP/nobody.out" "Queries lost")"
	# A privileged source port (-x 1000) is refused by the kernel: a clear error, exit 3.
	set +e
	asnobody "$U/dnsvolley" --no-progress -s 127.0.0.1 -p "$port" -d "$U/list.txt" -x 1000 -c 2 \
		>"$TMP/lowport.out" 2>&1
	rc=$?
	set -e
	assert_eq "as nobody, -x 1000: exit status" 3 "$rc"
	grep -q 'cannot bind socket 1 to the local address and port: Permission denied' "$TMP/lowport.out" ||
		fail "as nobody, -x 1000: message: $(cat "$TMP/lowport.out")"
	# Nor can nobody raise its hard open-file limit: the error names it.
	set +e
	(
		ulimit -n 256
		exec setpriv --reuid=65534 --regid=65534 --clear-groups "$U/dnsvolley" --no-progress \
			-s 127.0.0.1 -p "$port" -d "$U/list.txt" -c 1000
	) >"$TMP/nfd.out" 2>&1
	rc=$?
	set -e
	assert_eq "as nobody, ulimit 256, -c 1000: exit status" 3 "$rc"
	grep -q 'the limit is 256 (hard limit 256)' "$TMP/nfd.out" || fail "nobody fd: $(cat "$TMP/nfd.out")"
	kill -INT "$npid"
	wait "$npid" || true
	assert_eq "as nobody: the responder (also nobody) received; the refused runs sent nothing" 10000 "$(awk '$1 == "received" { print $2 }' "$TMP/nr.out")"
else
	echo "note: not root or no setpriv; the unprivileged run is covered by running the suite as a user"
fi
echo "limits: all assertions hold"
