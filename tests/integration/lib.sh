# Shared helpers for the integration tests (bash). Source it; it sets -euo pipefail.
# Exit 77 = skip (automake). Every process started is killed on exit.
set -euo pipefail
: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
DV="$top_builddir/dnsvolley"
RESPONDER="$top_builddir/dnsvolley-responder"
GENLIST="$top_builddir/dnsvolley-genlist"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dvtest.XXXXXX")
_pids=()
cleanup() {
	local p
	for p in "${_pids[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# Skips. A test may skip only for something the machine lacks, never because it is busy
# (a test that depends on speed belongs in bench/). Two kinds, told apart by quickstart
# and CI:
#   skip_lacks REASON   the machine lacks it and the project cannot provide it (not root,
#                       no network namespaces in this container): always a skip.
#   skip_setup REASON   the project's own set-up provides it (a package of
#                       scripts/packages.txt, a build configured --with-mpi): a skip on a
#                       developer's machine, a FAILURE when DV_STRICT_SKIPS=1 (set by
#                       `./quickstart test` and so by .ci/run), where its absence is a bug.
#   skip REASON         the same as skip_setup (the safe default).
# Each prints one line "SKIP (lacks|setup): REASON" into the test's log.
skip_lacks() {
	echo "SKIP (lacks): $*" >&2
	exit 77
}
skip_setup() {
	if [ "${DV_STRICT_SKIPS:-0}" = 1 ]; then
		echo "FAIL: would skip, but the project's set-up should provide it: $*" >&2
		echo "FAIL: (scripts/packages.txt, or quickstart's configure flags; DV_STRICT_SKIPS=1)" >&2
		exit 1
	fi
	echo "SKIP (setup): $*" >&2
	exit 77
}
skip() { skip_setup "$@"; }
# have_setup CMD REASON: true when CMD is installed. Else the part of a test that needs it
# is skipped as skip_setup skips a whole test: a FAILURE when DV_STRICT_SKIPS=1 (the
# project's set-up provides CMD), a line "note: part skipped (setup): REASON" and false
# otherwise (not "SKIP ...": quickstart's skips() takes a log's first such line for the
# reason a whole test skipped).
# For a check a test makes only where a tool is there (`if have_setup gnuplot ...; then`),
# which would otherwise vanish unseen from a set-up that lost the tool.
have_setup() {
	command -v "$1" >/dev/null && return 0
	if [ "${DV_STRICT_SKIPS:-0}" = 1 ]; then
		echo "FAIL: would skip a part, but the project's set-up should provide it: $2" >&2
		echo "FAIL: (scripts/packages.txt; DV_STRICT_SKIPS=1)" >&2
		exit 1
	fi
	echo "note: part skipped (setup): $2" >&2
	return 1
}
# resp_badflag "ARGS" MESSAGE [FIRST...]: dnsvolley-responder FIRST... ARGS exits 2 with
# "dnsvolley-responder: MESSAGE" as its first line (exactly: an option dropped from the
# parser says "unknown option" with the same exit status).
resp_badflag() {
	local args=$1 want=$2 rc=0
	shift 2
	# shellcheck disable=SC2086
	"$RESPONDER" "$@" $args >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
	assert_eq "exit status for '$args'" 2 "$rc"
	assert_eq "message for '$args'" "dnsvolley-responder: $want" "$(head -1 "$TMP/bad.err")"
}
# cpu_ticks PID: the process's CPU time so far (utime + stime of /proc/PID/stat, ticks).
# csw PID: its context switches so far (voluntary and not, summed over its threads).
# The server-cost tests read a server the way --server-pid does, to compare.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
csw() { cat /proc/"$1"/task/*/status | awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s }'; }
# server_field JSON KEY: the first pass's server.KEY of a results file (KEY a or a.b;
# booleans as true/false).
server_field() {
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["passes"][0]["server"]
k=sys.argv[2].split(".")
v=s[k[0]] if len(k)==1 else s[k[0]][k[1]]
print(str(v).lower() if isinstance(v,bool) else v)' "$1" "$2"
}
# server_cost_agrees JSON C0 C1 S0 S1: the first pass's server CPU time and context switches
# in JSON agree, within 2% + 1, with what the test read of the server itself around the run
# (cpu_ticks before C0 and after C1, csw S0 and S1).
server_cost_agrees() {
	local j=$1 ours theirs slack
	ours=$(($3 - $2))
	[ "$ours" -gt 0 ] || fail "the server used no CPU the test could see"
	theirs=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["passes"][0]["server"]
print(round((s["cpu_user_s"] + s["cpu_sys_s"]) * int(sys.argv[2])))' "$j" "$(getconf CLK_TCK)")
	slack=$((ours * 2 / 100 + 1))
	assert_le "server CPU ticks (test $ours)" $((ours + slack)) "$theirs"
	assert_ge "server CPU ticks (test $ours)" $((ours - slack)) "$theirs"
	ours=$(($5 - $4))
	theirs=$(($(server_field "$j" voluntary_ctxt_switches) + $(server_field "$j" involuntary_ctxt_switches)))
	slack=$((ours * 2 / 100 + 1))
	assert_le "server context switches (test $ours)" $((ours + slack)) "$theirs"
	assert_ge "server context switches (test $ours)" $((ours - slack)) "$theirs"
}
assert_eq() { # NAME EXPECTED ACTUAL
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	echo "ok: $1 = $3"
}
assert_le() { # NAME BOUND ACTUAL (integers)
	[ "$3" -le "$2" ] || fail "$1: expected <= $2, got $3"
	echo "ok: $1 = $3 (<= $2)"
}
assert_ge() { # NAME BOUND ACTUAL (integers)
	[ "$3" -ge "$2" ] || fail "$1: expected >= $2, got $3"
	echo "ok: $1 = $3 (>= $2)"
}

# wait_queued udp|tcp PORT [SECONDS]: waits until a socket bound to 127.0.0.1:PORT (or
# any address) holds data nobody has read yet (/proc/net/{udp,tcp}: rx_queue > 0; for
# TCP, bytes on a connection to PORT, accepted or still in the listen queue). With the server stopped
# (kill -STOP) this says, whatever the load, that the client has started sending: the
# tests that stall a server time the stall from here, not from a sleep after launch
# (a slow start under load could use up the whole stall).
wait_queued() {
	local proto=$1 port=$2 secs=${3:-60} i hex
	hex=$(printf ':%04X' "$port")
	for ((i = 0; i < secs * 100; i++)); do
		if awk -v h="$hex" -v p="$proto" '$2 ~ h "$" && !(p == "tcp" && $4 == "0A") {
			split($5, q, ":"); if (q[2] != "00000000") f = 1 }
			END { exit !f }' "/proc/net/$proto" "/proc/net/${proto}6" 2>/dev/null; then
			return 0
		fi
		sleep 0.01
	done
	fail "wait_queued: nothing queued on $proto port $port in $secs s"
}

# wait_pcap PCAP N [SECONDS]: waits until tcpdump -U has written N packets to PCAP (a
# capture is stopped when it holds what was sent, not after a fixed sleep that a
# descheduled tcpdump could outlast; it then loses what it had not read yet).
wait_pcap() {
	local f=$1 n=$2 secs=${3:-60} i have=0
	for ((i = 0; i < secs * 5; i++)); do
		have=$(tcpdump -r "$f" 2>/dev/null | wc -l)
		[ "$have" -ge "$n" ] && return 0
		sleep 0.2
	done
	# tcpdump's own counts say where the rest went (dropped by the kernel: its buffer full)
	if [ "${CAPTURE_FILE:-}" = "$f" ] && kill -INT "$CAPTURE_PID" 2>/dev/null; then
		wait "$CAPTURE_PID" 2>/dev/null || true
	fi
	fail "wait_pcap: $f holds $have packets, not $n, after $secs s (tcpdump: $(grep -E 'captured|received by filter|dropped by kernel' "$TMP/tcpdump.err" 2>/dev/null | tr '\n' ';'))"
}

# realtime_prefix: prints "chrt -f 1" when this user may run a process at SCHED_FIFO
# priority 1 (root or CAP_SYS_NICE, and a real-time budget in its cgroup), else nothing.
# Tests that assert how punctual a process is run it so: ordinary load on the machine
# (builds, other tests) then cannot delay its wake-ups.
realtime_prefix() {
	if command -v chrt >/dev/null && chrt -f 1 true 2>/dev/null; then echo "chrt -f 1"; fi
}

# start_responder NAME [responder flags...]: starts it on 127.0.0.1, free port.
# RESPONDER_WRAP, if set, is a command prefix for it (e.g. "$(realtime_prefix)").
# Sets ${NAME}_PID, ${NAME}_PORT and ${NAME}_OUT (its stdout file).
start_responder() {
	local name=$1
	shift
	local pf="$TMP/$name.port" out="$TMP/$name.out"
	rm -f "$pf"
	${RESPONDER_WRAP:-} "$RESPONDER" -a 127.0.0.1 -p 0 --port-file "$pf" "$@" >"$out" 2>"$TMP/$name.err" &
	started "$name" $! "$pf" responder
}

# started NAME PID PORT_FILE WHAT: waits until the server started in the background as PID
# wrote its port to PORT_FILE (its stderr in $TMP/NAME.err, stdout in $TMP/NAME.out), then
# sets ${NAME}_PID, ${NAME}_PORT and ${NAME}_OUT; fails naming WHAT if it exits first.
started() {
	local name=$1 pid=$2 pf=$3 what=$4 i
	_pids+=("$pid")
	# Up to 30 s: a sanitizer build starting beside a CPU hog is slow, never this slow.
	for i in $(seq 1200); do
		[ -s "$pf" ] && break
		kill -0 "$pid" 2>/dev/null || fail "$what $name exited: $(cat "$TMP/$name.err")"
		sleep 0.025
	done
	[ -s "$pf" ] || fail "$what $name did not start"
	printf -v "${name}_PID" '%s' "$pid"
	printf -v "${name}_PORT" '%s' "$(cat "$pf")"
	printf -v "${name}_OUT" '%s' "$TMP/$name.out"
}

# capture_lo PCAP FILTER: tcpdump on lo into PCAP, back once it listens. Nanosecond
# stamps; -U and --immediate-mode write each packet at once (else the last ring block
# waits for its 1 s timeout and is lost at SIGINT); nice -n -10 because a descheduled
# tcpdump drops packets on a loaded machine; -s 1500 because in immediate mode libpcap's
# ring has one frame per packet sized by the snapshot length, and at the default
# (256 KiB) the 64 MiB buffer held about a thousand queries (18 of 2,000 lost at -Q 20000
# under a CPU hog); the test's queries are under 1,500 octets, so nothing is cut; CAPTURE_PID is its pid, $TMP/tcpdump.err its messages. Skips
# (lacks) where tcpdump cannot capture. capture_end N waits until PCAP holds N packets,
# stops tcpdump and asserts it dropped nothing.
capture_lo() {
	local pcap=$1 filter=$2 i
	# The redirection below truncates tcpdump.err in the background child, maybe after the
	# loop's first grep: a previous capture's "listening on" would then start the load
	# before this tcpdump listens (CI lost a replay's first 184 queries so). Clear it here.
	rm -f "$TMP/tcpdump.err" "$pcap"
	nice -n -10 tcpdump -i lo -n -U --immediate-mode -B 65536 -s 1500 \
		--time-stamp-precision=nano -w "$pcap" "$filter" 2>"$TMP/tcpdump.err" &
	CAPTURE_PID=$!
	CAPTURE_FILE=$pcap
	_pids+=("$CAPTURE_PID")
	for i in $(seq 1200); do
		grep -q "listening on" "$TMP/tcpdump.err" && return 0
		kill -0 "$CAPTURE_PID" 2>/dev/null ||
			skip_lacks "tcpdump cannot capture here: $(cat "$TMP/tcpdump.err")"
		sleep 0.025
	done
	fail "tcpdump did not start"
}
capture_end() {
	wait_pcap "$CAPTURE_FILE" "$1"
	kill -INT "$CAPTURE_PID"
	wait "$CAPTURE_PID" || true
	assert_eq "tcpdump dropped nothing" 0 "$(awk '/dropped by kernel/ { print $1 }' "$TMP/tcpdump.err")"
}

# start_knotd DIR: knotd -c DIR/knot.conf (servers/knot.conf.sh begins one), its output in
# DIR/out; back once every zone is loaded (knotc zone-status shows a serial for each, so
# no query meets a zone still loading). KNOT_PID is its pid.
start_knotd() {
	local d=$1 i st
	knotd -c "$d/knot.conf" >"$d/out" 2>&1 &
	KNOT_PID=$!
	_pids+=("$KNOT_PID")
	for i in $(seq 1200); do
		st=$(knotc -c "$d/knot.conf" zone-status 2>/dev/null) && [ -n "$st" ] &&
			! grep -qv 'serial: [0-9]' <<<"$st" && return 0
		kill -0 "$KNOT_PID" 2>/dev/null || fail "knotd exited: $(cat "$d/out")"
		sleep 0.025
	done
	fail "knotd did not load its zones: $(cat "$d/out")"
}

# make_cert: a self-signed P-256 certificate for dnsvolley.test (one day), for the TLS
# listeners: $TMP/cert.pem, its key $TMP/key.pem. Needs openssl.
make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-keyout "$TMP/key.pem" -out "$TMP/cert.pem" -subj /CN=dnsvolley.test \
		-addext subjectAltName=DNS:dnsvolley.test 2>/dev/null || fail "openssl req -x509"
}

# start_stream NAME [flags...]: start_responder with its TCP and DoT listeners too (free
# ports; DoT with make_cert's certificate); also sets ${NAME}_TCP and ${NAME}_TLS.
start_stream() {
	local name=$1
	shift
	start_responder "$name" --tcp-port 0 --tcp-port-file "$TMP/$name.tcp" --tls-port 0 \
		--tls-port-file "$TMP/$name.tls" --tls-cert "$TMP/cert.pem" \
		--tls-key "$TMP/key.pem" "$@"
	printf -v "${name}_TCP" '%s' "$(cat "$TMP/$name.tcp")"
	printf -v "${name}_TLS" '%s' "$(cat "$TMP/$name.tls")"
}

# start_hostile_stream NAME KIND MODE [flags...]: tests/helpers/hostile-stream (KIND tcp,
# dot or doh; make_cert's certificate) on a free port, for 120 s at most; sets NAME_PORT,
# NAME_PID and NAME_OUT (its counts once stopped: stop_responder).
start_hostile_stream() {
	local name=$1 kind=$2 mode=$3 pf="$TMP/$1.port"
	shift 3
	rm -f "$pf"
	# Leak checks off for the helper alone: over DoH it does not free the stream state of
	# streams still open when it closes a connection (nghttp2_session_del calls no stream
	# close callback), and LeakSanitizer's exit would then lose its counts. dnsvolley itself
	# runs with leak checks on.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	"$top_builddir/tests/helpers/hostile-stream" --kind "$kind" --mode "$mode" --port-file "$pf" \
		--cert "$TMP/cert.pem" --key "$TMP/key.pem" --max-seconds 120 "$@" >"$TMP/$name.out" \
		2>"$TMP/$name.err" &
	started "$name" $! "$pf" hostile-stream
}

# start_hostile_doq NAME MODE: tests/helpers/hostile-doq the same way.
start_hostile_doq() {
	local name=$1 mode=$2 pf="$TMP/$1.port"
	rm -f "$pf"
	"$top_builddir/tests/helpers/hostile-doq" --mode "$mode" --port-file "$pf" \
		--cert "$TMP/cert.pem" --key "$TMP/key.pem" --max-seconds 120 >"$TMP/$name.out" \
		2>"$TMP/$name.err" &
	started "$name" $! "$pf" hostile-doq
}

# stop_responder NAME: SIGINT, wait; its final counts are then in ${NAME}_OUT.
stop_responder() {
	local name=$1 pidvar="${1}_PID" p keep=()
	kill -INT "${!pidvar}" 2>/dev/null || true
	wait "${!pidvar}" 2>/dev/null || true
	# Forget the pid: cleanup must never signal a recycled pid.
	for p in "${_pids[@]:-}"; do [ "$p" = "${!pidvar}" ] || keep+=("$p"); done
	_pids=("${keep[@]:-}")
}

# resp_count NAME KEY: a count the responder printed at exit ("received 100000").
resp_count() {
	local outvar="${1}_OUT"
	awk -v k="$2" '$1 == k { print $2 }' "${!outvar}"
}

# clock_lines FILE: a text report's lines on what timed the latency (report_text.c
# dv_report_clock: Latency clock, AF_XDP, Receive stamps unused), the run's or `dnsvolley
# report`'s, which must be the same for the same pass.
clock_lines() { grep -E '^  (Latency clock|AF_XDP|Receive stamps unused|Sampled but untimed):' "$1" || true; }

# report_field FILE "Queries sent": the first number after "LABEL:" in a text report.
report_field() {
	awk -v k="$2" 'index($0, k ":") { sub(".*" k ":[ \t]*", ""); split($0, a, /[ \t(]/); print a[1]; exit }' "$1"
}

# MPI_ENV: the environment of an mpirun under the sanitizers. Open MPI's components
# leak at exit and are dlclose'd before LeakSanitizer reports, so their leaks have no
# module name a suppression could match: the ranks run with leak detection off (their
# memory errors and undefined behaviour are still fatal; dnsvolley's own code is
# leak-checked by every other test). Harmless without sanitizers.
MPI_ENV=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")

# RSS_ENV: the environment of a run whose peak RSS a test compares with another run's.
# AddressSanitizer holds freed memory in a quarantine (256 MiB by default) before it
# reuses it, so under ASan peak RSS grows with the number of frees, not with what the
# program holds: a 4x longer run that frees as it goes read as a leak. A 4 MiB
# quarantine keeps use-after-free detection for recent frees and makes peak RSS measure
# what is held again. Harmless without sanitizers.
RSS_ENV=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4")

# free_port: a port on 127.0.0.1 for a server the test starts (UDP and TCP), never one
# the kernel hands out to client sockets: it is drawn below the ephemeral range
# (net.ipv4.ip_local_port_range), so a client of another test running beside this one
# cannot take it between the choice and the server's bind, and no socket of any state
# uses it now (/proc/net/{udp,tcp}{,6}). Ports from bind(0) are ephemeral ones: a
# server given one lost it now and then to a client ("Address already in use").
free_port() {
	local elo ehi lo hi p
	read -r elo ehi </proc/sys/net/ipv4/ip_local_port_range
	if [ "$elo" -gt 11000 ]; then
		lo=10000 hi=$((elo - 1))
	elif [ "$ehi" -lt 64535 ]; then
		lo=$((ehi + 1)) hi=65535
	else
		fail "free_port: the ephemeral range ($elo-$ehi) leaves no room for servers"
	fi
	for _ in $(seq 200); do
		p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
		if ! awk -v h="$(printf ':%04X' "$p")" '$2 ~ h "$" { f = 1 } END { exit !f }' \
			/proc/net/udp /proc/net/tcp /proc/net/udp6 /proc/net/tcp6 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	fail "free_port: no free port in $lo-$hi"
}

# jc FILE KEY...: the first pass's counters KEY... from a results file, space separated
# (0 for a key the file does not have). Needs python3.
jc() {
	python3 - "$@" <<'P'
import json, sys
c = json.load(open(sys.argv[1]))["passes"][0]["counters"]
print(" ".join(str(c.get(k, 0)) for k in sys.argv[2:]))
P
}

# csv_row FILE ROW COLUMN...: fields of a CSV history file (--csv) by column name, ROW 1 the
# first row under the header, space-joined.
csv_row() {
	python3 - "$@" <<'P'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(" ".join(rows[int(sys.argv[2]) - 1][k] for k in sys.argv[3:]))
P
}

# mconn FILE KEY...: conn_info of the first stats_sum record of a dns-metrics file
# (--dns-metrics), a value per KEY ("a.b" for a nested one; "absent" when missing), space-joined.
mconn() {
	python3 - "$@" <<'P'
import json, sys
o = next(o for o in map(json.loads, open(sys.argv[1])) if o["type"] == "stats_sum")
out = []
for k in sys.argv[2:]:
    v = o["conn_info"]
    for part in k.split("."):
        v = v.get(part, "absent") if isinstance(v, dict) else "absent"
    out.append(str(v))
print(" ".join(out))
P
}

# in_lab TARGET SCRIPT [LAB ARGS...]: SCRIPT runs inside scripts/lab's namespace with TARGET
# started (the list $TMP/list.txt, the build's binaries); the lab's 77 (no namespaces, no
# XDP, not root) is a skip with its reason, any other failure fails the test with the lab's
# last lines ($TMP/lab.err).
in_lab() {
	local target=$1 script=$2 rc=0
	shift 2
	chmod +x "$script"
	"$top_srcdir/scripts/lab" -B "$top_builddir" -l "$TMP/list.txt" "$@" "$target" -- "$script" \
		2>"$TMP/lab.err" || rc=$?
	[ $rc = 77 ] && skip_lacks "$(tail -1 "$TMP/lab.err")"
	[ $rc = 0 ] || fail "lab $target exited $rc: $(tail -5 "$TMP/lab.err")"
}
