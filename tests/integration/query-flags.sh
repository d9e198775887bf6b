#!/usr/bin/env bash
# Per-line query flags in text lists (doc/querylists.md, "Per-line flags"): each flag is
# checked on the wire by a listener that records every query's header bits, OPT RR and
# EDNS options (and echoes it back as its answer, so every query completes). Also: -D and
# -E combine with a line's flags, a bad flag is a FILE:LINE usage error, and dnsperf
# refuses such a line instead of sending it without its flags.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 not installed"

cat >"$TMP/list.txt" <<'L'
a.example. A
b.example. A,+do
c.example. A,+cd
d.example. A,-rd
e.example. A,ecs=192.0.2.0/24
f.example. IN AAAA,+do,+cd,-rd,ecs=2001:db8:ffff::/33,+ad
g.example. TXT,+nsid
h.example. A,+edns
i.example. A,-rd,+rd
L

# view ARGS...: the listener's line per query, in the order sent (one socket, -q 1). It
# ends after the list's queries, not after an idle second: a busy machine may hold a query
# longer than that. Its answers come at once, so dnsvolley's -t 30 only bounds the wait.
view() {
	local port lpid
	port=$(free_port)
	python3 - "$port" "$TMP/view" "$(grep -c . "$TMP/list.txt")" <<'PY' &
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2] + ".ready", "w").close()
s.settimeout(30)
out = []
try:
    for _ in range(int(sys.argv[3])):
        q, peer = s.recvfrom(4096)
        f2, f3 = q[2], q[3]
        arcount = struct.unpack(">H", q[10:12])[0]
        i, labels = 12, []
        while q[i]:
            labels.append(q[i + 1:i + 1 + q[i]].decode())
            i += 1 + q[i]
        i += 5
        line = "%s rd=%d cd=%d ad=%d" % (labels[0], f2 & 1, (f3 >> 4) & 1, (f3 >> 5) & 1)
        if arcount == 1 and q[i] == 0 and q[i + 1:i + 3] == b"\x00\x29":
            size, ttl, rdlen = struct.unpack(">HIH", q[i + 3:i + 11])
            line += " opt=%d do=%d opts=%s" % (size, (ttl >> 15) & 1, q[i + 11:i + 11 + rdlen].hex() or "-")
        else:
            line += " opt=-"
        out.append(line)
        s.sendto(bytes([q[0], q[1], q[2] | 0x80, q[3] & 0xf0]) + q[4:], peer)
except socket.timeout:
    pass
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
	lpid=$!
	for _ in $(seq 400); do [ -e "$TMP/view.ready" ] && break; sleep 0.025; done
	[ -e "$TMP/view.ready" ] || fail "the listener did not start"
	rm -f "$TMP/view.ready"
	"$DV" --no-progress --no-server-version -s 127.0.0.1 -p "$port" -d "$TMP/list.txt" -c 1 -q 1 -T 1 -t 30 "$@" \
		--json "$TMP/r.json" >"$TMP/run" 2>&1 || fail "dnsvolley $*: exit $?: $(cat "$TMP/run")"
	wait "$lpid" || fail "the listener failed"
	assert_eq "$* sent completed" "9 9" "$(jc "$TMP/r.json" sent completed)" >&2
	cat "$TMP/view"
}
ECS4=0008000700011800c00002                 # family 1, /24, scope 0, 192.0.2
ECS6=000800090002210020010db880             # family 2, /33, scope 0, 2001:0db8:80
assert_eq "each flag on the wire" "a rd=1 cd=0 ad=0 opt=-
b rd=1 cd=0 ad=0 opt=1232 do=1 opts=-
c rd=1 cd=1 ad=0 opt=-
d rd=0 cd=0 ad=0 opt=-
e rd=1 cd=0 ad=0 opt=1232 do=0 opts=$ECS4
f rd=0 cd=1 ad=1 opt=1232 do=1 opts=$ECS6
g rd=1 cd=0 ad=0 opt=1232 do=0 opts=00030000
h rd=1 cd=0 ad=0 opt=1232 do=0 opts=-
i rd=1 cd=0 ad=0 opt=-" "$(view)"
# -D and -E apply to every line; a line's options follow -E's, its DO adds to none.
assert_eq "with -D -E 10:0102 --no-rd" "a rd=0 cd=0 ad=0 opt=1232 do=1 opts=000a00020102
b rd=0 cd=0 ad=0 opt=1232 do=1 opts=000a00020102
c rd=0 cd=1 ad=0 opt=1232 do=1 opts=000a00020102
d rd=0 cd=0 ad=0 opt=1232 do=1 opts=000a00020102
e rd=0 cd=0 ad=0 opt=1232 do=1 opts=000a00020102$ECS4
f rd=0 cd=1 ad=1 opt=1232 do=1 opts=000a00020102$ECS6
g rd=0 cd=0 ad=0 opt=1232 do=1 opts=000a0002010200030000
h rd=0 cd=0 ad=0 opt=1232 do=1 opts=000a00020102
i rd=1 cd=0 ad=0 opt=1232 do=1 opts=000a00020102" "$(view -D -E 10:0102 --no-rd)"

# A bad flag: exit 2, FILE:LINE and the flag named.
bad() { # LINE EXPECTED-MESSAGE
	printf 'ok.example. A\n%s\n' "$1" >"$TMP/bad.txt"
	local rc=0
	"$DV" --no-progress -s 127.0.0.1 -p 9 -d "$TMP/bad.txt" >"$TMP/bad" 2>&1 || rc=$?
	assert_eq "'$1': exit" 2 "$rc"
	grep -qF "bad.txt:2: $2" "$TMP/bad" || fail "'$1': $(cat "$TMP/bad")"
}
bad "x.example. A,+bogus" "query flag '+bogus' is not a flag"
bad "x.example. A,ecs=192.0.2.0" "query flag 'ecs=192.0.2.0' is not ecs=ADDR/PREFIX"
bad "x.example. A,ecs=192.0.2.0/33" "query flag 'ecs=192.0.2.0/33' has a prefix length out of range"
bad "x.example. A,ecs=nope/8" "query flag 'ecs=nope/8' has no IPv4 or IPv6 address"
bad "x.example. A," "query flag '' is empty"
bad "x.example. A,+do +cd" "query flags follow the line's last field, joined by commas, no spaces: 'A,+do'"

# dnsperf reads "A,+do" as a type: it refuses the line rather than send it unflagged.
if have_setup dnsperf "dnsperf not installed: its reading of a flagged line not checked"; then
	printf 'b.example. A,+do\n' >"$TMP/dp.txt"
	dnsperf -s 127.0.0.1 -p 9 -d "$TMP/dp.txt" -n 1 -t 1 >"$TMP/dp" 2>&1 || true
	grep -q "invalid qtype: A,+do" "$TMP/dp" || fail "dnsperf: $(cat "$TMP/dp")"
	assert_eq "dnsperf: queries sent for a flagged line" 0 "$(report_field "$TMP/dp" "Queries sent")"
fi
echo PASS
