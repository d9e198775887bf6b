#!/usr/bin/env python3
"""raw-frames: hand-made Ethernet frames, whole and broken, to a UDP port through an
interface (AF_PACKET), for tests/integration/xdp-answer.sh: the hostile peer of
dnsvolley-responder --xdp's XDP sockets.

Usage:
  raw-frames.py IFACE DST_MAC SRC_IP4 DST_IP4 SRC_IP6 DST_IP6 PORT COPIES [flood | spaced MS]
      Sends COPIES rounds of the frames below (IPv4 and IPv6, to PORT), each round from
      source ports of its own, and prints what a responder must count: frames=N
      answered=A malformed=M. Answered: whole queries (one with IPv4 options, one that
      gets FORMERR); malformed: frames that are no whole datagram (a lying IPv4 total
      length, UDP length or IPv6 payload length; a wrong IPv4 header checksum; a UDP
      length under 8) and datagrams that are no query (short of a DNS header, QR set).
      Then reads the answers that come back (up to 3 s) and prints answers=N good=G:
      frames from PORT to the source ports used, and those of them whose lengths, IPv4
      header checksum, UDP checksum (IPv4 and IPv6), QR bit and ID are right; with
      flood, it reads none. With spaced, each round is the first frame alone (a whole
      IPv4 query), MS milliseconds of sleep after it (never made up after a late wake-up,
      so no two leave closer than MS), and no answer is read.
Only to the lab's namespace (198.18.0.0/15, 2001:2::/48); needs root (AF_PACKET).
"""
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def query(qid, name="www.example.com", qdcount=1, flags=0x0100):
    q = struct.pack("!6H", qid, flags, qdcount, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!2H", 1, 1)


def udp(sport, dport, payload, length=None, check=0):
    n = 8 + len(payload) if length is None else length
    return struct.pack("!4H", sport, dport, n, check) + payload


def ip4(src, dst, body, total=None, bad_csum=False, options=b""):
    ihl = 5 + len(options) // 4
    n = ihl * 4 + len(body) if total is None else total
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, n, 0, 0x4000, 64, 17, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + options
    c = csum(h) ^ (0x1234 if bad_csum else 0)
    return h[:10] + struct.pack("!H", c) + h[12:] + body


def udp_sum_ok(src, dst, seg):
    pseudo = src + dst + struct.pack("!HH", 17, len(seg)) if len(src) == 4 else \
        src + dst + struct.pack("!IxxxB", len(seg), 17)
    return struct.unpack("!H", seg[6:8])[0] != 0 and csum(pseudo + seg) == 0


def check(fr, port, ids):
    """A frame from port: (True, good) with good = every header and the DNS ID right."""
    et = fr[12:14]
    if et == b"\x08\x00":
        ip = fr[14:]
        ihl = (ip[0] & 15) * 4
        if len(ip) < 20 or ip[9] != 17:
            return False, False
        src, dst, seg = ip[12:16], ip[16:20], ip[ihl:struct.unpack("!H", ip[2:4])[0]]
        iphdr_ok = csum(ip[:ihl]) == 0
    elif et == b"\x86\xdd":
        ip = fr[14:]
        if len(ip) < 40 or ip[6] != 17:
            return False, False
        src, dst, seg = ip[8:24], ip[24:40], ip[40:40 + struct.unpack("!H", ip[4:6])[0]]
        iphdr_ok = True
    else:
        return False, False
    if len(seg) < 8 or struct.unpack("!H", seg[0:2])[0] != port:
        return False, False
    dport = struct.unpack("!H", seg[2:4])[0]
    ulen = struct.unpack("!H", seg[4:6])[0]
    dns = seg[8:ulen]
    good = (iphdr_ok and ulen == len(seg) and udp_sum_ok(src, dst, seg) and len(dns) >= 12
            and dns[2] & 0x80 != 0 and ids.get(dport) == struct.unpack("!H", dns[0:2])[0])
    return True, good


def ip6(src, dst, body, plen=None):
    n = len(body) if plen is None else plen
    return struct.pack("!IHBB16s16s", 0x60000000, n, 17, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + body


def main():
    iface, dmac, s4, d4, s6, d6, port, copies = sys.argv[1:9]
    port, copies = int(port), int(copies)
    with open("/sys/class/net/%s/address" % iface) as f:
        smac = bytes.fromhex(f.read().strip().replace(":", ""))
    dmac = bytes.fromhex(dmac.replace(":", ""))
    eth4 = dmac + smac + b"\x08\x00"
    eth6 = dmac + smac + b"\x86\xdd"
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL
    s.bind((iface, 0))
    frames = answered = malformed = 0
    ids = {}
    mode = sys.argv[9] if len(sys.argv) > 9 else ""
    for r in range(copies):
        sp = 20000 + r * 16
        q = query(r + 1)
        good = [
            eth4 + ip4(s4, d4, udp(sp, port, q)),
            eth4 + ip4(s4, d4, udp(sp + 1, port, q), options=b"\x01\x01\x01\x00"),
            eth4 + ip4(s4, d4, udp(sp + 2, port, query(r + 1, qdcount=2))),  # FORMERR
            eth6 + ip6(s6, d6, udp(sp + 3, port, q)),
        ]
        bad = [
            eth4 + ip4(s4, d4, udp(sp + 4, port, q), bad_csum=True),
            eth4 + ip4(s4, d4, udp(sp + 5, port, q, length=8 + len(q) + 40)),
            eth4 + ip4(s4, d4, udp(sp + 6, port, q), total=20 + 8 + len(q) + 200),
            eth4 + ip4(s4, d4, udp(sp + 7, port, q[:5])),  # short of a DNS header
            eth4 + ip4(s4, d4, udp(sp + 8, port, query(r + 1, flags=0x8100))),  # QR set
            eth6 + ip6(s6, d6, udp(sp + 9, port, q), plen=8 + len(q) + 64),
            eth6 + ip6(s6, d6, udp(sp + 10, port, q, length=4)),
        ]
        if mode == "spaced":
            s.send(good[0])
            frames += 1
            answered += 1
            time.sleep(int(sys.argv[10]) / 1000)
            continue
        for i in range(4):
            ids[sp + i] = r + 1
        for fr in good + bad:
            s.send(fr)
        frames += len(good) + len(bad)
        answered += len(good)
        malformed += len(bad)
    print("frames=%d answered=%d malformed=%d" % (frames, answered, malformed))
    if mode in ("flood", "spaced"):  # the answers are not read
        return
    s.settimeout(0.2)
    deadline = time.monotonic() + 3
    n = ok = 0
    while n < answered and time.monotonic() < deadline:
        try:
            fr, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        mine, good = check(fr, port, ids)
        n += mine
        ok += good
    print("answers=%d good=%d" % (n, ok))


if __name__ == "__main__":
    main()
