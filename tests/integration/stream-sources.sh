#!/usr/bin/env bash
# stream-sources: --client-range spreads -m tcp|dot connections over source addresses
# (connection i, numbered over all workers, binds the range's i-th address); exact counts, the
# responder's count of distinct client addresses, and the bad combinations.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -x "$RESPONDER" ] || fail "$RESPONDER not built"
make_cert

for i in $(seq 5000); do echo "n$i.example A"; done >"$TMP/5k"

# run NAME MODE CONNS ADDRESSES [flags...]: one pass against a fresh responder; exact counts.
run() {
	local name=$1 mode=$2 conns=$3 want=$4 l port sent completed lost opened
	shift 4
	start_stream "$name"
	l=tcp port=${name}_TCP
	[ "$mode" = dot ] && l=tls port=${name}_TLS
	"$DV" -m "$mode" -s 127.0.0.1 -p "${!port}" -d "$TMP/5k" -c "$conns" -q 1000 -t 5 "$@" \
		--json "$TMP/$name.json" >"$TMP/$name.rep" 2>&1 || fail "$name: $(cat "$TMP/$name.rep")"
	stop_responder "$name"
	read -r sent completed lost opened < <(jc "$TMP/$name.json" sent completed lost conn_opened)
	assert_eq "$name: sent" 5000 "$sent"
	assert_eq "$name: completed = the responder's answers" "$(resp_count "$name" $l-answered)" \
		"$completed"
	assert_eq "$name: completed" 5000 "$completed"
	assert_eq "$name: lost" 0 "$lost"
	assert_eq "$name: connections" "$conns" "$opened"
	assert_eq "$name: the responder's connections" "$conns" "$(resp_count "$name" $l-connections)"
	assert_eq "$name: distinct source addresses" "$want" \
		"$(resp_count "$name" $l-source-addresses)"
}

echo "== without a range: every connection from one address"
run one tcp 20 1
echo "== -m tcp -c 200 --client-range 127.0.0.0/24: 200 addresses"
run r200 tcp 200 200 --client-range 127.0.0.0/24
echo "== -c 300 over a /24 (255 addresses: .1 to .255): wraps, all used"
run wrap tcp 300 255 --client-range 127.0.0.0/24
echo "== -m dot -c 50 --client-range 127.1.0.0/16: 50 addresses"
run dot dot 50 50 --client-range 127.1.0.0/16
echo "== -T 2: connections numbered over both workers, 200 addresses"
run two tcp 200 200 -T 2 --client-range 127.0.0.0/24

echo "== bad combinations: status 2, the message that names what is wrong"
# bad ARGS MESSAGE: the message's first line exactly (any message naming --client-range
# passed before, whichever check had made it).
bad() {
	local rc=0
	# shellcheck disable=SC2086
	"$DV" -m tcp -s 127.0.0.1 -p 53 -d "$TMP/5k" $1 >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
	assert_eq "'$1': exit status" 2 "$rc"
	assert_eq "'$1': message" "dnsvolley: $2" "$(head -1 "$TMP/bad.err")"
}
bad "-a 127.0.0.1 --client-range 127.0.0.0/24" \
	"-a and --client-range both choose the connections' source address: give one"
bad "--client-range fd00::/64" \
	"--client-range: the range and target '127.0.0.1' are of different address families"
bad "--client-range 127.0.0.0" \
	"--client-range: '127.0.0.0' is not ADDR/PREFIX (e.g. 127.0.0.0/8, fd00::/64)"
echo "stream-sources: all assertions hold"
