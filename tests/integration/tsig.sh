#!/usr/bin/env bash
# -y [ALG:]NAME:SECRET (TSIG) against real servers: knotd and nsd, started on loopback
# with a key of each algorithm. For every algorithm all 300 signed queries are answered
# NOERROR and signed (completed = sent, no TSIG error counted). A wrong secret gives
# exactly 300 BADSIG, an unknown key 300 BADKEY, a time signed 1000 s off (beyond the
# 300 s fudge; DNSVOLLEY_TEST_TSIG_SKEW) 300 BADTIME, each counted apart (doc/numbers.md);
# every answer's MAC is verified: the signed ones all verify, a forger's 300 are BADMAC; a
# list signed over 150 s ago (DNSVOLLEY_TEST_TSIG_AGE) is signed again as it is sent.
. "$(dirname "$0")/lib.sh"
ALGS="md5 sha1 sha224 sha256 sha384 sha512"
SECRET=$(head -c 32 /dev/urandom | base64)
WRONG=$(head -c 32 /dev/urandom | base64)
for _ in $(seq 300); do echo "example.com SOA"; done >"$TMP/list.txt"
cat >"$TMP/example.com.zone" <<'Z'
$ORIGIN example.com.
$TTL 3600
@ IN SOA ns.example.com. hostmaster.example.com. 1 3600 900 604800 3600
@ IN NS ns.example.com.
ns IN A 192.0.2.53
Z

# run NAME PORT FLAGS...: one run; prints "completed NOERROR unsigned badsig badkey badtime".
run() {
	local name=$1 port=$2
	shift 2
	"$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$port" -d "$TMP/list.txt" -t 30 \
		--json "$TMP/$name.json" "$@" >"$TMP/$name.out" 2>&1 || fail "$name: exit $?: $(cat "$TMP/$name.out")"
	python3 - "$TMP/$name.json" <<'P'
import json, sys
p = json.load(open(sys.argv[1]))["passes"][0]
c = p["counters"]
rc = p.get("rcodes", {})
print(c["sent"], c["completed"], c.get("tsig_unsigned", 0), c.get("tsig_badsig", 0),
      c.get("tsig_badkey", 0), c.get("tsig_badtime", 0), c.get("tsig_other_error", 0),
      c.get("tsig_badmac", 0))
P
}

check_server() { # NAME PORT
	local s=$1 port=$2 a
	for a in $ALGS; do
		assert_eq "$s hmac-$a: sent completed unsigned badsig badkey badtime other badmac" \
			"300 300 0 0 0 0 0 0" "$(run "$s-$a" "$port" -y "hmac-$a:k$a.:$SECRET")"
	done
	assert_eq "$s default algorithm (hmac-md5)" "300 300 0 0 0 0 0 0" \
		"$(run "$s-default" "$port" -y "kmd5.:$SECRET")"
	assert_eq "$s wrong secret: BADSIG" "300 300 0 300 0 0 0 0" \
		"$(run "$s-badsig" "$port" -y "hmac-sha256:ksha256.:$WRONG")"
	assert_eq "$s unknown key: BADKEY" "300 300 0 0 300 0 0 0" \
		"$(run "$s-badkey" "$port" -y "hmac-sha256:nokey.:$SECRET")"
	# A list signed 400 s ago (past the 300 s fudge, as in a long pass): each query is
	# signed again as it is sent, and its answer checked against the MAC it went with.
	assert_eq "$s list signed 400 s ago: signed again as sent" "300 300 0 0 0 0 0 0" \
		"$(DNSVOLLEY_TEST_TSIG_AGE=400 run "$s-aged" "$port" -y "hmac-sha256:ksha256.:$SECRET")"
	assert_eq "$s list signed 400 s ago, -m tcp" "300 300 0 0 0 0 0 0" \
		"$(DNSVOLLEY_TEST_TSIG_AGE=400 run "$s-aged-tcp" "$port" -m tcp -y "hmac-sha256:ksha256.:$SECRET")"
	assert_eq "$s skewed 1000 s: BADTIME" "300 300 0 0 0 300 0 0" \
		"$(DNSVOLLEY_TEST_TSIG_SKEW=1000 run "$s-badtime" "$port" -y "hmac-sha256:ksha256.:$SECRET")"
}

ran=0
if have_setup knotd "knotd not installed (knot): not run against knotd" &&
	have_setup knotc "knotc not installed (knot): not run against knotd"; then
	kd="$TMP/knot"
	mkdir -p "$kd"
	kport=$(free_port)
	{
		bash "$top_srcdir/tests/integration/servers/knot.conf.sh" "$kd" "$kport"
		printf 'key:\n'
		for a in $ALGS; do
			printf '  - id: k%s.\n    algorithm: hmac-%s\n    secret: %s\n' "$a" "$a" "$SECRET"
		done
		# knotd looks a query's key up among the keys of the zone's ACLs.
		printf 'acl:\n  - id: signed\n    key: [%s]\n    action: [query, transfer]\n' \
			"$(for a in $ALGS; do printf 'k%s.,' "$a"; done | sed 's/,$//')"
		printf 'zone:\n  - domain: example.com\n    file: %s/example.com.zone\n    acl: signed\n' "$TMP"
	} >"$kd/knot.conf"
	start_knotd "$kd"
	check_server knotd "$kport"
	ran=1
fi
if have_setup nsd "nsd not installed: not run against nsd"; then
	nd="$TMP/nsd"
	mkdir -p "$nd"
	cp "$TMP/example.com.zone" "$nd/"
	nport=$(free_port)
	{
		bash "$top_srcdir/tests/integration/servers/nsd.conf.sh" "$nd" "$nport" example.com
		for a in $ALGS; do
			printf 'key:\n\tname: "k%s."\n\talgorithm: hmac-%s\n\tsecret: "%s"\n' "$a" "$a" "$SECRET"
		done
	} >"$nd/nsd.conf"
	nsd -d -c "$nd/nsd.conf" >"$nd/out" 2>&1 &
	_pids+=("$!")
	for _ in $(seq 100); do
		kdig @127.0.0.1 -p "$nport" example.com SOA +time=1 +tries=1 2>/dev/null | grep -q NOERROR && break
		sleep 0.05
	done
	check_server nsd "$nport"
	ran=1
fi
[ "$ran" = 1 ] || skip "neither knotd nor nsd is installed"
# A forger: the responder echoes each query, its TSIG RR included (error 0, the query's
# own MAC), so no answer's MAC verifies: 300 BADMAC, none counted signed.
start_responder r --reflect
assert_eq "reflected TSIG: BADMAC" "300 300 0 0 0 0 0 300" \
	"$(run reflect "$r_PORT" -y "hmac-sha256:ksha256.:$SECRET")"
grep -q "^  TSIG answers:         0 verified; unsigned 0, BADSIG 0, BADKEY 0, BADTIME 0, other error 0, MAC wrong 300$" \
	"$TMP/reflect.out" || fail "reflected TSIG: the report's TSIG line: $(grep TSIG "$TMP/reflect.out")"
grep -q "^  TSIG answers:         300 verified; unsigned 0, " "$TMP/knotd-sha256.out" "$TMP/nsd-sha256.out" ||
	fail "signed: the report's TSIG line: $(grep -h TSIG "$TMP"/*-sha256.out)"
# A bad -y: exit 2, named.
rc=0
"$DV" -s 127.0.0.1 -d "$TMP/list.txt" -y "hmac-sha999:k.:$SECRET" >"$TMP/bad" 2>&1 || rc=$?
assert_eq "bad algorithm: exit" 2 "$rc"
grep -q "'hmac-sha999' is not a TSIG algorithm" "$TMP/bad" || fail "$(cat "$TMP/bad")"
echo PASS
