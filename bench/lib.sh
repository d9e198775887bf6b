# bench/lib.sh: what the bench scripts share (sourced: `. "$(dirname "$0")/lib.sh"`).
#
# bench_tmp NAME     makes the scratch folder $tmp (under $TMPDIR) and the EXIT trap that
#                    stops every process bench_bg registered, then removes $tmp
# bench_bg PID       stops (TERM) and reaps PID at exit, or earlier with bench_stop PID
# bench_stop PID     stops and reaps PID now
# bench_pins         sets cpin (the client's CPU 0) and spin (the server's CPU 1) as taskset
#                    prefixes when the machine has two CPUs and taskset, else empty
# bench_responder BIN PORTFILE ARGS...
#                    starts dnsvolley-responder BIN on loopback (port 0, written to
#                    PORTFILE) pinned with spin, output discarded; sets rpid and port, and
#                    exits 1 with the reason when it does not start within 5 s
bench_pids=()

bench_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/dv$1.XXXXXX")
	trap bench_cleanup EXIT
}

bench_cleanup() {
	local p
	for p in "${bench_pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[ -z "${tmp:-}" ] || rm -rf "$tmp"
}

bench_bg() { bench_pids+=("$1"); }

bench_stop() {
	local p keep=()
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	for p in "${bench_pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	bench_pids=("${keep[@]}")
}

bench_pins() {
	cpin=() spin=()
	if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
		cpin=(taskset -c 0) spin=(taskset -c 1)
	fi
}

bench_responder() {
	local bin=$1 pf=$2 i
	shift 2
	rm -f "$pf"
	"${spin[@]}" "$bin" -a 127.0.0.1 -p 0 --port-file "$pf" "$@" >/dev/null 2>&1 &
	rpid=$!
	bench_bg "$rpid"
	for i in $(seq 200); do [ -s "$pf" ] && break; sleep 0.025; done
	[ -s "$pf" ] || { echo "$0: $bin did not start" >&2; exit 1; }
	port=$(cat "$pf")
}
