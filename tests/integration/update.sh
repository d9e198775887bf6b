#!/usr/bin/env bash
# -u (dynamic updates, dnsperf's input format) against knotd on loopback, with exact counts
# on both sides: 200 adds answered NOERROR and the zone then holds exactly those 200
# records (read back by AXFR); 200 adds behind a "prohibit" prerequisite answered YXDOMAIN
# with the zone unchanged; 100 deletes leave 100; a zone whose ACL wants a TSIG key refuses
# 50 unsigned updates (NOTAUTH) and applies 50 signed with -y; a zone with no update ACL
# refuses 50 (knotd answers NOTAUTH). The bundled responder, which
# does not implement UPDATE, answers NOTIMP to each. Bad input: FILE:LINE and status 2.
. "$(dirname "$0")/lib.sh"
command -v knotd >/dev/null && command -v knotc >/dev/null || skip "knot is not installed"
command -v kdig >/dev/null || skip "kdig (knot-dnsutils) is not installed"
SECRET=$(head -c 32 /dev/urandom | base64)

for z in example.com signed.example static.example; do
	bash "$top_srcdir/tests/integration/servers/zone.sh" "$z" </dev/null >"$TMP/$z.zone"
done
kd="$TMP/knot"
mkdir -p "$kd"
kport=$(free_port)
{
	bash "$top_srcdir/tests/integration/servers/knot.conf.sh" "$kd" "$kport"
	cat <<C
key:
  - id: upd.
    algorithm: hmac-sha256
    secret: $SECRET
acl:
  - id: local
    address: 127.0.0.1
    action: [query, transfer, update]
  - id: keyed
    key: upd.
    action: [query, transfer, update]
  - id: axfr
    address: 127.0.0.1
    action: [transfer]
zone:
  - domain: example.com
    file: $TMP/example.com.zone
    acl: local
  - domain: signed.example
    file: $TMP/signed.example.zone
    acl: [keyed, axfr]
  - domain: static.example
    file: $TMP/static.example.zone
    acl: axfr
C
} >"$kd/knot.conf"
start_knotd "$kd"

# run NAME PORT LIST [FLAGS...]: one pass through LIST; prints "sent completed lost RCODES"
# (RCODES: name=count, sorted).
run() {
	local name=$1 port=$2 list=$3
	shift 3
	"$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$port" -u -d "$list" -n 1 -t 3 \
		--json "$TMP/$name.json" "$@" >"$TMP/$name.out" 2>&1 ||
		fail "$name: exit $?: $(cat "$TMP/$name.out")"
	python3 - "$TMP/$name.json" <<'P'
import json, sys
p = json.load(open(sys.argv[1]))["passes"][0]
c = p["counters"]
names = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN",
         "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"]
rc = " ".join("%s=%d" % (names[i] if i < len(names) else str(i), n)
              for i, n in enumerate(c["rcode"]) if n)
print(c["sent"], c["completed"], c["lost"], rc)
P
}

# records ZONE PATTERN: how many A records of ZONE (by AXFR) have an owner matching PATTERN.
records() {
	kdig -p "$kport" @127.0.0.1 AXFR "$1" +nocomments +nostats >"$TMP/axfr" 2>&1 ||
		fail "AXFR $1: $(cat "$TMP/axfr")"
	awk -v re="$2" '$4 == "A" && $1 ~ re { n++ } END { print n + 0 }' "$TMP/axfr"
}

# 200 adds, one message each.
for i in $(seq 200); do printf 'example.com\nadd n%d 60 A 192.0.2.%d\nsend\n' "$i" $((i % 250 + 1)); done >"$TMP/add"
assert_eq "200 adds: sent completed lost rcodes" "200 200 0 NOERROR=200" "$(run add "$kport" "$TMP/add")"
assert_eq "the zone holds the 200 names" 200 "$(records example.com '^n[0-9]+\.example\.com\.$')"

# The same names behind "prohibit NAME" (name not in use): refused by the prerequisite.
for i in $(seq 200); do printf 'example.com\nprohibit n%d\nadd n%d 60 A 198.51.100.1\nsend\n' "$i" "$i"; done >"$TMP/pro"
assert_eq "200 prohibited: sent completed lost rcodes" "200 200 0 YXDOMAIN=200" "$(run pro "$kport" "$TMP/pro")"
assert_eq "the zone still holds 200 names" 200 "$(records example.com '^n[0-9]+\.example\.com\.$')"
assert_eq "no prohibited add applied (the AXFR just read)" 0 "$(grep -c '198\.51\.100\.1' "$TMP/axfr" || true)"

# 100 deletes of an RRset ("require" first: the name exists), with EDNS (-e).
for i in $(seq 100); do printf 'example.com\nrequire n%d A\ndelete n%d A\nsend\n' "$i" "$i"; done >"$TMP/del"
assert_eq "100 deletes: sent completed lost rcodes" "100 100 0 NOERROR=100" "$(run del "$kport" "$TMP/del" -e)"
assert_eq "100 names left" 100 "$(records example.com '^n[0-9]+\.example\.com\.$')"

# A zone that wants a key: unsigned updates are refused, -y signed ones applied.
for i in $(seq 50); do printf 'signed.example\nadd s%d 60 A 192.0.2.1\nsend\n' "$i"; done >"$TMP/signed"
assert_eq "50 unsigned to a keyed zone" "50 50 0 NOTAUTH=50" "$(run unsigned "$kport" "$TMP/signed")"
assert_eq "none applied" 0 "$(records signed.example '^s[0-9]+\.')"
assert_eq "50 signed (-y hmac-sha256)" "50 50 0 NOERROR=50" \
	"$(run signed "$kport" "$TMP/signed" -y "hmac-sha256:upd.:$SECRET")"
assert_eq "50 applied" 50 "$(records signed.example '^s[0-9]+\.')"
assert_eq "signed answers: TSIG errors and unsigned answers" "0 0" \
	"$(jc "$TMP/signed.json" tsig_badsig tsig_unsigned)"

# A zone that allows no update at all: every one refused, counted exactly, none applied.
for i in $(seq 50); do printf 'static.example\nadd s%d 60 A 192.0.2.1\nsend\n' "$i"; done >"$TMP/static"
assert_eq "50 to a zone without updates" "50 50 0 NOTAUTH=50" "$(run static "$kport" "$TMP/static")"
assert_eq "none applied there" 0 "$(records static.example '^s[0-9]+\.')"

# The bundled responder does not implement UPDATE: NOTIMP for each, matched on the zone.
start_responder r
assert_eq "responder: sent completed lost rcodes" "200 200 0 NOTIMP=200" "$(run resp "$r_PORT" "$TMP/add")"

# Bad input: the line and status 2; -u with -B: status 2.
printf 'example.com\nadd x 60 A 192.0.2.1\nfrob x\nsend\n' >"$TMP/bad"
rc=0
"$DV" --no-progress -s 127.0.0.1 -p "$r_PORT" -u -d "$TMP/bad" >"$TMP/bad.out" 2>&1 || rc=$?
assert_eq "bad update list: exit status" 2 "$rc"
grep -q "bad:3: 'frob' is not add, delete, require, prohibit or send" "$TMP/bad.out" ||
	fail "bad update list: message: $(cat "$TMP/bad.out")"
rc=0
"$DV" --no-progress -s 127.0.0.1 -p "$r_PORT" -u -B -d "$TMP/add" >"$TMP/bb.out" 2>&1 || rc=$?
assert_eq "-u -B: exit status" 2 "$rc"
echo "PASS"
