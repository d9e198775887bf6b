#!/usr/bin/env bash
# load-pcap: time how long src/input takes to prepare a capture of N UDP query
# packets, and a dnstap file of N CLIENT_QUERY frames (default 1,000,000 each;
# issue 17 asks <= 1.5 s). Off the clock like text lists.
# Usage: bench/load-pcap.sh [BUILDDIR] [PACKETS]   (exit 1 if a best of 3 is over 1.5 s)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
n=${2:-1000000}
dump="$build/tests/helpers/input-dump"
[ -x "$dump" ] || make -C "$build" -s tests/helpers/input-dump ||
	{ echo "load-pcap: cannot build $dump (make check builds it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Ethernet/IPv4/UDP, 10,000 clients, names from a 50,000-name pool, A/AAAA/HTTPS, one
# query every 10 us; written in one go (the packets differ only in a few fields).
python3 - "$tmp/big.pcap" "$n" <<'PY'
import struct, sys
path, n = sys.argv[1], int(sys.argv[2])
out = bytearray(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
types = (1, 28, 65)
for i in range(n):
    name = b"\x0bd%010d\x07example\x03com\x00" % (i * 7919 % 50000)
    q = struct.pack("!HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", types[i % 3], 1)
    c = i % 10000
    udp = struct.pack("!HHHH", 1024 + c % 50000, 53, 8 + len(q), 0) + q
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes([10, 1, c >> 8, c & 255]), bytes([10, 0, 0, 53])) + udp
    fr = b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00" + ip
    ts = 1700000000 * 10**9 + i * 10000
    out += struct.pack("<IIII", ts // 10**9, ts % 10**9, len(fr), len(fr)) + fr
open(path, "wb").write(out)
# The same queries as dnstap (Frame Streams + protobuf, as written by a resolver).
def vi(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7f) | 0x80); v >>= 7
    b.append(v)
    return bytes(b)
ct = b"protobuf:dnstap.Dnstap"
ctl = struct.pack("!II", 2, 1) + struct.pack("!I", len(ct)) + ct
tap = bytearray(struct.pack("!II", 0, len(ctl)) + ctl)
for i in range(n):
    name = b"\x0bd%010d\x07example\x03com\x00" % (i * 7919 % 50000)
    q = struct.pack("!HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0) + name + struct.pack("!HH", types[i % 3], 1)
    c = i % 10000
    ts = 1700000000 * 10**9 + i * 10000
    m = (b"\x08\x05\x10\x01\x18\x01\x22\x04" + bytes([10, 1, c >> 8, c & 255]) + b"\x30" + vi(1024 + c)
         + b"\x40" + vi(ts // 10**9) + b"\x4d" + struct.pack("<I", ts % 10**9) + b"\x52" + vi(len(q)) + q)
    fr = b"\x72" + vi(len(m)) + m + b"\x78\x01"
    tap += struct.pack("!I", len(fr)) + fr
tap += struct.pack("!III", 0, 4, 3)
open(path.replace(".pcap", ".dnstap"), "wb").write(tap)
PY
status=0
for f in big.pcap big.dnstap; do
	echo "load-pcap: $f: $n queries, $(($(stat -c %s "$tmp/$f") / 1048576)) MiB"
	cat "$tmp/$f" >/dev/null # in the page cache: the load is measured, not the disk
	best=""
	for i in 1 2 3; do
		line=$("$dump" -q "$tmp/$f")
		echo "  $line"
		ms=$(awk '{ for (i = 1; i < NF; i++) if ($i == "load_ms") print $(i + 1) }' <<<"$line")
		q=$(awk '{ print $4 }' <<<"$line")
		[ "$q" = "$n" ] || { echo "load-pcap: $f: read $q queries of $n" >&2; exit 1; }
		if [ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$ms; fi
	done
	echo "load-pcap: $f: best of 3: $best ms for $n queries (limit 1500 ms)"
	awk -v b="$best" 'BEGIN { exit !(b <= 1500) }' || status=1
done
exit $status
