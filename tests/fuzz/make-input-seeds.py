#!/usr/bin/env python3
"""make-input-seeds: write the seed corpora of fuzz_pcap and fuzz_dnstap (run by hand; seeds are committed).

Usage: tests/fuzz/make-input-seeds.py
Each seed is one option byte (see tests/fuzz/fuzz_input_common.h) + a file:
pcap/pcapng captures over several link types (UDP, TCP flows with a split
message, a retransmission and a gap, fragments, extension headers, a cut
record) and Frame Streams dnstap files (client and auth queries, responses, a
broken frame), plus dnsperf -B files for fuzz_dnstap's bit 3.
"""
import os, struct

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
corpus = os.path.join(top, "tests", "fuzz", "corpus")


def name_wire(name):
    return b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"


def query(name, qtype, qid=0x1234, flags=0x0100, edns=False):
    q = struct.pack("!HHHHHH", qid, flags, 1, 0, 0, 1 if edns else 0) + name_wire(name)
    q += struct.pack("!HH", qtype, 1)
    if edns:
        q += b"\0" + struct.pack("!HHIH", 41, 1232, 0x8000, 0)
    return q


def ip(src, dst, proto, l4, v6=False, frag=False, hbh=False):
    if not v6:
        return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 7, 0x2000 if frag else 0x4000,
                           64, proto, 0, bytes(src), bytes(dst)) + l4
    nh, ext = proto, b""
    if hbh:
        ext, nh = bytes([proto, 0, 1, 4, 0, 0, 0, 0]), 0
    return struct.pack("!IHBB16s16s", 0x60000000, len(ext) + len(l4), nh, 64, bytes(src),
                       bytes(dst)) + ext + l4


def udp(sp, dp, pl):
    return struct.pack("!HHHH", sp, dp, 8 + len(pl), 0) + pl


def tcp(sp, dp, seq, flags, pl):
    return struct.pack("!HHIIBBHHH", sp, dp, seq, 0, 5 << 4, flags, 65535, 0, 0) + pl


A4, B4, S4 = [10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 53]
A6 = [0x20, 1, 0xd, 0xb8] + [0] * 11 + [1]
S6 = [0x20, 1, 0xd, 0xb8] + [0] * 11 + [53]


def link(lt, pkt, v6=False):
    et = 0x86dd if v6 else 0x0800
    if lt == 1:
        return bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + struct.pack("!H", et) + pkt
    if lt == 0:
        return struct.pack("<I", 10 if v6 else 2) + pkt
    if lt == 113:
        return struct.pack("!HHH8sH", 0, 772, 6, bytes(8), et) + pkt
    if lt == 276:
        return struct.pack("!HHIHBB8s", et, 0, 1, 772, 0, 6, bytes(8)) + pkt
    return pkt


def pcap(lt, pkts, ng=False):
    if not ng:
        out = struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, lt)
        for i, p in enumerate(pkts):
            out += struct.pack("<IIII", 1700000000 + i, 1000 * i, len(p), len(p)) + p
        return out
    out = struct.pack("<IIIHHqI", 0x0a0d0d0a, 28, 0x1a2b3c4d, 1, 0, -1, 28)
    out += struct.pack("<IIHHIHHBBBBHHI", 1, 32, lt, 0, 65535, 9, 1, 9, 0, 0, 0, 0, 0, 32)
    for i, p in enumerate(pkts):
        pad = (4 - len(p) % 4) % 4
        tot = 32 + len(p) + pad
        ts = 1700000000 * 10**9 + i * 1500
        out += struct.pack("<IIIIIII", 6, tot, 0, ts >> 32, ts & 0xffffffff, len(p), len(p))
        out += p + bytes(pad) + struct.pack("<I", tot)
    return out


def write(sub, fname, data):
    d = os.path.join(corpus, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, fname), "wb") as f:
        f.write(data)


def udp_set(lt, v6=False, **kw):
    a, s = (A6, S6) if v6 else (A4, S4)
    return [link(lt, ip(a, s, 17, udp(40000 + i, 53, query("n%d.example" % i, 1 + i, edns=i % 2)),
                        v6, **kw), v6) for i in range(4)] + [
        link(lt, ip(s, a, 17, udp(53, 40000, query("n.example", 1, flags=0x8180)), v6), v6),
        link(lt, ip(a, s, 17, udp(40000, 53, query("r.example", 1, flags=0x8180)), v6), v6)]


def tcp_set():
    m1, m2, m3 = query("t1.example", 1), query("t2.example", 28, edns=True), query("t3.example", 6)
    f = lambda m: struct.pack("!H", len(m)) + m
    seg = f(m1) + f(m2)
    p = [ip(A4, S4, 6, tcp(50000, 53, 999, 2, b"")),
         ip(A4, S4, 6, tcp(50000, 53, 1000, 16, seg)),
         ip(A4, S4, 6, tcp(50000, 53, 1000, 16, seg)),
         ip(A4, S4, 6, tcp(50000, 53, 1000 + len(seg), 16, f(m3)[:5])),
         ip(A4, S4, 6, tcp(50000, 53, 1005 + len(seg), 17, f(m3)[5:])),
         ip(B4, S4, 6, tcp(50001, 53, 7, 16, f(m1))),
         ip(B4, S4, 6, tcp(50001, 53, 7 + 200, 16, f(m1))),
         ip(A6, S6, 6, tcp(50002, 53, 1, 16, f(m1)[:9]), True)]
    return [link(1, x, i == 7) for i, x in enumerate(p)]


write("pcap", "udp-eth-v4", b"\0" + pcap(1, udp_set(1)))
write("pcap", "udp-sll2-v6-ng", b"\x02" + pcap(276, udp_set(276, True), ng=True))
write("pcap", "udp-null-v6", b"\0" + pcap(0, udp_set(0, True)))
write("pcap", "udp-raw-v4-ng", b"\0" + pcap(101, udp_set(101), ng=True))
write("pcap", "udp-sll-v4", b"\x10" + pcap(113, udp_set(113)))
write("pcap", "udp-frag-v4", b"\0" + pcap(1, udp_set(1, frag=True)))
write("pcap", "udp-hbh-v6", b"\0" + pcap(1, udp_set(1, True, hbh=True)))
write("pcap", "tcp-flows", b"\0" + pcap(1, tcp_set()))
write("pcap", "tcp-flows-strict", b"\x01" + pcap(1, tcp_set()))
write("pcap", "cut-record", b"\0" + pcap(1, udp_set(1))[:-20])
write("pcap", "cut-header", b"\0" + pcap(1, udp_set(1))[:15])


def pb_varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7
    return out + bytes([v])


def pb_bytes(num, b):
    return pb_varint(num << 3 | 2) + pb_varint(len(b)) + b


def pb_int(num, v):
    return pb_varint(num << 3) + pb_varint(v)


def dnstap(mtype, addr, port, ts, q):
    m = pb_int(1, mtype) + pb_int(2, 1 if len(addr) == 4 else 2) + pb_int(3, 1)
    m += pb_bytes(4, bytes(addr)) + pb_int(6, port) + pb_int(8, ts // 10**9)
    m += pb_varint(9 << 3 | 5) + struct.pack("<I", ts % 10**9) + pb_bytes(10, q)
    return pb_bytes(1, b"seed") + pb_bytes(14, m) + pb_int(15, 1)


def fstrm(frames, stop=True):
    ct = b"protobuf:dnstap.Dnstap"
    ctl = struct.pack("!II", 2, 1) + struct.pack("!I", len(ct)) + ct
    out = struct.pack("!II", 0, len(ctl)) + ctl
    for fr in frames:
        out += struct.pack("!I", len(fr)) + fr
    if stop:
        out += struct.pack("!III", 0, 4, 3)
    return out


T = 1700000000 * 10**9
frames = [dnstap(t, A4 if i % 2 else A6, 1000 + i, T + i * 1000, query("tap%d.example" % i, 1 + i))
          for i, t in enumerate([5, 5, 1, 6, 5, 3])]
write("dnstap", "client", b"\0" + fstrm(frames))
write("dnstap", "auth", b"\x04" + fstrm(frames))
write("dnstap", "auth-addr-only", b"\x06" + fstrm(frames, stop=False))
bad = list(frames)
bad[1] = bad[1][:-9]
write("dnstap", "broken-frame", b"\0" + fstrm(bad))
write("dnstap", "cut-file", b"\0" + fstrm(frames)[:-30])
write("dnstap", "strict-broken", b"\x01" + fstrm(bad))
binf = b"".join(struct.pack("!H", len(q)) + q for q in
                [query("b%d.example" % i, 1 + i, edns=i % 2) for i in range(3)])
write("dnstap", "binary", b"\x08" + binf)
write("dnstap", "binary-cut", b"\x08" + binf[:-3])
write("dnstap", "binary-response", b"\x08" + struct.pack("!H", 27) + query("resp.example", 1, flags=0x8000)[:27])
