#!/usr/bin/env python3
"""write-capture: a capture with known clients and times, for the replay tests.

write-capture.py [--clients C] [--duration S] [--queries N] [--ecs] [--seed K]
                 [--format pcap|binary] [--epoch0 I] [--response I] [--cut K] OUT

Query i (0..N-1) asks q<i>.example. A (unique names, so a replay can be matched
query by query); it is captured at round(i * S / N s) plus a deterministic jitter
below half a gap; clients 0..C-1 ask first in order, later queries pick a client
from a seeded LCG. Client c is 10.<c / 250>.<c % 250 + 1>.1, source port
20000 + c, to 192.0.2.53:53. --ecs adds an OPT RR with an EDNS Client Subnet
option and a COOKIE option. pcap: nanosecond pcap, Ethernet, IPv4/UDP.
binary: dnsperf -B (2-octet length + message). Faults (issue 28): --epoch0 I
captures query I at time 0 (1970, a broken clock), --response I sets QR in query
I (a malformed query), --cut K drops the file's last K octets (a truncated last
record). Prints nothing.
"""
import argparse
import struct


def query(i, ecs):
    name = b"".join(bytes([len(l)]) + l for l in [b"q%d" % i, b"example"]) + b"\0"
    ar = 1 if ecs else 0
    msg = struct.pack(">HHHHHH", 0x1000 + i % 0xE000, 0x0100, 1, 0, 0, ar) + name + struct.pack(">HH", 1, 1)
    if ecs:
        ecs_opt = struct.pack(">HHHBB", 8, 7, 1, 24, 0) + bytes([192, 0, 2])
        cookie = struct.pack(">HH", 10, 8) + b"\x01\x02\x03\x04\x05\x06\x07\x08"
        rdata = ecs_opt + cookie
        msg += b"\0" + struct.pack(">HHIH", 41, 1232, 0, len(rdata)) + rdata
    return msg


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(c, dns):
    src = bytes([10, c // 250, c % 250 + 1, 1])
    dst = bytes([192, 0, 2, 53])
    udp = struct.pack(">HHHH", 20000 + c, 53, 8 + len(dns), 0) + dns
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
    eth = b"\x00\x00\x00\x00\x00\x02" + b"\x00\x00\x00\x00\x00\x01" + b"\x08\x00"
    return eth + ip + udp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--ecs", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["pcap", "binary"], default="pcap")
    ap.add_argument("--epoch0", type=int, default=-1)
    ap.add_argument("--response", type=int, default=-1)
    ap.add_argument("--cut", type=int, default=0)
    ap.add_argument("out")
    a = ap.parse_args()
    gap = int(a.duration * 1e9 / a.queries)
    x = a.seed
    base = 1_700_000_000 * 10**9
    with open(a.out, "wb") as f:
        if a.format == "pcap":
            f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(a.queries):
            x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
            c = i if i < a.clients else (x >> 33) % a.clients
            t = base + i * gap + ((x >> 13) % max(gap // 2, 1))
            if i == a.epoch0:
                t = 0
            dns = query(i, a.ecs)
            if i == a.response:
                dns = dns[:2] + bytes([dns[2] | 0x80]) + dns[3:]
            if a.format == "binary":
                f.write(struct.pack(">H", len(dns)) + dns)
                continue
            fr = frame(c, dns)
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(fr), len(fr)) + fr)
        if a.cut > 0:
            f.truncate(f.tell() - a.cut)


main()
