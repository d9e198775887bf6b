#!/usr/bin/env bash
# server-stats-pdns-bind: --server-stats against the real PowerDNS Authoritative (bind
# backend), PowerDNS Recursor (forwarding everything to it) and BIND (authoritative, its
# JSON statistics channel), each on loopback high ports with its configuration and state in
# $TMP, started and stopped here (no systemd). Exact counts: the queries each server
# counted equal the answers we got; a cold pass of N distinct names costs the recursor N
# cache misses and no hit, the hot pass after it N hits and no miss (the same for the
# authoritative server's packet cache). Nothing leaves loopback: the recursor forwards "."
# to the authoritative server and its root hints name 127.0.0.9; security polling is off.
. "$(dirname "$0")/lib.sh"
[ -x "$DV" ] || skip "dnsvolley not built"
command -v python3 >/dev/null || skip "python3 not installed"
PATH=$PATH:/usr/sbin
for t in pdns_server pdns_control pdns_recursor rec_control named; do
	command -v "$t" >/dev/null || skip "$t not installed (scripts/install-deps: pdns-server, pdns-backend-bind, pdns-recursor, bind9)"
done

# st FILE PASS KEY: passes[PASS].server.stats.KEY; pc FILE PASS KEY: passes[PASS].counters.KEY
st() {
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["passes"][int(sys.argv[2])]["server"]["stats"][sys.argv[3]]
print(str(v).lower() if isinstance(v,bool) else v)' "$@"
}
pc() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["passes"][int(sys.argv[2])]["counters"][sys.argv[3]])' "$@"
}
# wait_for NAME PID CMD...: until CMD succeeds (at most 10 s), or fail when PID exited
wait_for() {
	local name=$1 pid=$2
	shift 2
	for _ in $(seq 200); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || fail "$name exited: $(tail -5 "$TMP/$name.log")"
		sleep 0.05
	done
	fail "$name did not answer its control in 10 s: $(tail -5 "$TMP/$name.log")"
}
# stop PID: TERM, up to 5 s, then KILL
stop() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -KILL "$1" 2>/dev/null || true
}

N=2000
seq -f "n%g.example A" "$N" >"$TMP/list.txt"
printf '$ORIGIN example.\n$TTL 600\n@ SOA ns hm 1 60 60 60 600\n@ NS ns\nns A 127.0.0.1\n* A 192.0.2.1\n' >"$TMP/example.zone"
RUN=(-q 20 -t 5 --no-progress --server-pid none)

# --- PowerDNS Authoritative, bind backend, one receiver and one distributor thread
APORT=$(free_port)
A="$TMP/pdns"
mkdir -p "$A"
: >"$A/pdns.conf"
echo "zone \"example\" { type master; file \"$TMP/example.zone\"; };" >"$A/named.conf"
pdns_server --config-dir="$A" --socket-dir="$A" --daemon=no --guardian=no --disable-syslog \
	--write-pid=no --local-address=127.0.0.1 --local-port="$APORT" --launch=bind \
	--bind-config="$A/named.conf" --receiver-threads=1 --distributor-threads=1 \
	--security-poll-suffix= --cache-ttl=600 --loglevel=4 >"$TMP/pdns.log" 2>&1 &
AUTH_PID=$!
_pids+=("$AUTH_PID")
PC="pdns_control --config-dir=$A --socket-dir=$A"
wait_for pdns "$AUTH_PID" $PC rping

rc=0
"$DV" -s "a=127.0.0.1:$APORT" -d "L=$TMP/list.txt" --passes cold,hot --hot-runs 1 \
	--flush "$PC purge example\$" --server-stats "a=pdns:--config-dir=$A --socket-dir=$A" \
	"${RUN[@]}" --json "$TMP/pdns.json" >"$TMP/pdns.out" 2>"$TMP/pdns.err" || rc=$?
[ "$rc" = 0 ] || fail "pdns study exited $rc: $(cat "$TMP/pdns.err")"
for p in 0 1; do
	assert_eq "pdns pass $p: counters read" true "$(st "$TMP/pdns.json" $p ok)"
	assert_eq "pdns pass $p: answers" "$N" "$(pc "$TMP/pdns.json" $p completed)"
	assert_eq "pdns pass $p: queries pdns counted" "$N" "$(st "$TMP/pdns.json" $p queries)"
	assert_eq "pdns pass $p: packet cache counted" true "$(st "$TMP/pdns.json" $p cache)"
done
assert_eq "pdns cold: packet cache misses" "$N" "$(st "$TMP/pdns.json" 0 cache_misses)"
assert_eq "pdns cold: packet cache hits" 0 "$(st "$TMP/pdns.json" 0 cache_hits)"
assert_eq "pdns hot: packet cache hits" "$N" "$(st "$TMP/pdns.json" 1 cache_hits)"
assert_eq "pdns hot: packet cache misses" 0 "$(st "$TMP/pdns.json" 1 cache_misses)"
assert_eq "pdns: report lines" 2 \
	"$(grep -c "^  Server counters (pdns): $N queries counted by the server ($N answers here)$" "$TMP/pdns.out")"

# --- PowerDNS Recursor: every name (and ". NS") forwarded to the authoritative server
RPORT=$(free_port)
R="$TMP/rec"
mkdir -p "$R"
: >"$R/recursor.conf"
printf '. 3600000 NS a.root.test.\na.root.test. 3600000 A 127.0.0.9\n' >"$R/root.hints"
pdns_recursor --config-dir="$R" --socket-dir="$R" --daemon=no --disable-syslog --write-pid=no \
	--local-address=127.0.0.1 --local-port="$RPORT" --forward-zones=".=127.0.0.1:$APORT" \
	--hint-file="$R/root.hints" --dont-query= --query-local-address=127.0.0.1 --dnssec=off \
	--threads=1 --security-poll-suffix= --loglevel=4 >"$TMP/rec.log" 2>&1 &
REC_PID=$!
_pids+=("$REC_PID")
RC="rec_control --config-dir=$R --socket-dir=$R"
wait_for rec "$REC_PID" $RC ping

rc=0
"$DV" -s "r=127.0.0.1:$RPORT" -d "L=$TMP/list.txt" --passes cold,hot --hot-runs 1 \
	--flush "$RC wipe-cache example\$" --server-stats "r=recursor:--config-dir=$R --socket-dir=$R" \
	"${RUN[@]}" --json "$TMP/rec.json" >"$TMP/rec.out" 2>"$TMP/rec.err" || rc=$?
[ "$rc" = 0 ] || fail "recursor study exited $rc: $(cat "$TMP/rec.err")"
for p in 0 1; do
	assert_eq "recursor pass $p: counters read" true "$(st "$TMP/rec.json" $p ok)"
	assert_eq "recursor pass $p: answers" "$N" "$(pc "$TMP/rec.json" $p completed)"
	assert_eq "recursor pass $p: queries it counted" "$N" "$(st "$TMP/rec.json" $p queries)"
done
assert_eq "recursor cold: cache misses" "$N" "$(st "$TMP/rec.json" 0 cache_misses)"
assert_eq "recursor cold: cache hits" 0 "$(st "$TMP/rec.json" 0 cache_hits)"
assert_eq "recursor hot: cache hits" "$N" "$(st "$TMP/rec.json" 1 cache_hits)"
assert_eq "recursor hot: cache misses" 0 "$(st "$TMP/rec.json" 1 cache_misses)"
assert_eq "recursor: no cold/hot warning" 0 "$(grep -c "was not \(cold\|hot\)" "$TMP/rec.err" || true)"
grep -q "^  Server cache per query: hits 0.0000, misses 1.0000 (0 hits, $N misses)$" "$TMP/rec.out" ||
	fail "recursor: no cache line for the cold pass: $(grep Server "$TMP/rec.out")"
stop "$REC_PID"
stop "$AUTH_PID"

# --- BIND, authoritative, one worker thread, its JSON statistics channel
BPORT=$(free_port)
SPORT=$(free_port)
[ "$SPORT" != "$BPORT" ] || SPORT=$((BPORT + 1))
B="$TMP/bind"
mkdir -p "$B"
cat >"$B/named.conf" <<C
options {
	directory "$B";
	listen-on port $BPORT { 127.0.0.1; };
	listen-on-v6 { none; };
	pid-file none;
	session-keyfile none;
	managed-keys-directory "$B";
	recursion no;
	dnssec-validation no;
	notify no;
};
controls { };
statistics-channels { inet 127.0.0.1 port $SPORT allow { 127.0.0.1; }; };
zone "example" { type primary; file "$TMP/example.zone"; };
C
named -g -n 1 -c "$B/named.conf" >"$TMP/bind.log" 2>&1 &
BIND_PID=$!
_pids+=("$BIND_PID")
bind_up() { "$DV" -s "127.0.0.1:$BPORT" -d "$TMP/one.txt" -t 1 --no-progress --server-pid none >/dev/null; }
echo "n0.example A" >"$TMP/one.txt"
wait_for bind "$BIND_PID" bind_up

rc=0
"$DV" -s "127.0.0.1:$BPORT" -d "$TMP/list.txt" "${RUN[@]}" --server-stats "bind:127.0.0.1:$SPORT" \
	--json "$TMP/bind.json" >"$TMP/bind.out" 2>"$TMP/bind.err" || rc=$?
[ "$rc" = 0 ] || fail "bind run exited $rc: $(cat "$TMP/bind.err")"
assert_eq "bind: counters read" true "$(st "$TMP/bind.json" 0 ok)"
assert_eq "bind: answers" "$N" "$(pc "$TMP/bind.json" 0 completed)"
assert_eq "bind: queries named counted" "$N" "$(st "$TMP/bind.json" 0 queries)"
# its views' resolver caches are counted, and an authoritative answer touches none of them
assert_eq "bind: cache figures" true "$(st "$TMP/bind.json" 0 cache)"
assert_eq "bind: cache hits (authoritative answers)" 0 "$(st "$TMP/bind.json" 0 cache_hits)"
assert_eq "bind: cache misses (authoritative answers)" 0 "$(st "$TMP/bind.json" 0 cache_misses)"
grep -q "^  Server counters (bind): $N queries counted by the server ($N answers here)$" "$TMP/bind.out" ||
	fail "bind: no counters line: $(grep Server "$TMP/bind.out")"
stop "$BIND_PID"
echo "server-stats-pdns-bind: ok"
