#!/usr/bin/env python3
"""capture-offsets: compare the send times of a replay with the capture it replayed.

capture-offsets.py ORIGINAL.pcap REPLAY.pcap [SPEED]

Both files hold UDP DNS queries over Ethernet/IPv4 (write-capture.py's and
tcpdump -i lo's, pcap in us or ns). Queries are matched by question name (the
test captures ask each name once). For each, the error is its replay offset
minus its captured offset / SPEED, less the median of those differences (the
replay starts later than the capture; only the offsets matter). Prints one line:
"matched M missing K ports P addrs A median_us X p99_us Y max_us Z" (ports:
distinct source address + port pairs; addrs: distinct source addresses).
"""
import struct
import sys


def read(path):
    out = {}
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = 1 if magic == 0xA1B23C4D else 1000
    linktype = struct.unpack("<I", data[20:24])[0]
    pos = 24
    while pos + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[pos:pos + 16])
        pkt = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        l2 = 14 if linktype == 1 else 0
        ip = pkt[l2:]
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 15) * 4
        sport = struct.unpack(">H", ip[ihl:ihl + 2])[0]
        dns = ip[ihl + 8:]
        if len(dns) < 13 or dns[2] & 0x80:
            continue
        p, labels = 12, []
        while p < len(dns) and dns[p] != 0:
            labels.append(dns[p + 1:p + 1 + dns[p]])
            p += 1 + dns[p]
        name = b".".join(labels).lower()
        out.setdefault(name, (sec * 10**9 + frac * scale, bytes(ip[12:16]), sport))
    return out


def main():
    orig, rep = read(sys.argv[1]), read(sys.argv[2])
    speed = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    t0o = min(v[0] for v in orig.values())
    diffs = []
    ports = set()
    for name, (t, _, _) in orig.items():
        if name in rep:
            r = rep[name]
            diffs.append(r[0] - (t - t0o) / speed)
            ports.add((r[1], r[2]))
    missing = len(orig) - len(diffs)
    if not diffs:
        print("matched 0 missing %d ports 0 addrs 0 median_us 0 p99_us 0 max_us 0" % missing)
        return
    d = sorted(diffs)
    mid = d[len(d) // 2]
    err = sorted(abs(x - mid) for x in diffs)
    q = lambda f: err[min(len(err) - 1, int(f * len(err)))] / 1000
    print("matched %d missing %d ports %d addrs %d median_us %.0f p99_us %.0f max_us %.0f"
          % (len(diffs), missing, len(ports), len({p[0] for p in ports}), q(0.5), q(0.99),
             err[-1] / 1000))


main()
