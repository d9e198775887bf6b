#!/usr/bin/env python3
"""make-rstream-seeds: the seed corpus of fuzz_rstream (tests/fuzz/corpus/rstream).

Each seed: byte 0 options (bit 0 DoH; bits 1..3 a TCP fault: 1 drop every 3, 2 reverse 4,
3 close, 4 reset, 5 half-close, 6 stall after 5; bit 4 reflect), byte 1 the client's write
size (B < 128: B + 1 bytes, else (B - 127) KiB), byte 2 what the client reads per turn / 64 (0: never), then the client's bytes
(DoH: after the preface, which the target sends itself).
Usage: make-rstream-seeds.py DIR
"""
import base64
import os
import struct
import sys


def query(qid, name=b"example", pad=0):
    qname = b"".join(bytes([len(p)]) + p for p in [b"q%d" % qid, name]) + b"\0"
    return (struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + qname +
            struct.pack(">HH", 1, 1) + b"\0" * pad)


def framed(m):
    return struct.pack(">H", len(m)) + m


def frame(ftype, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def s(b):
    return bytes([len(b)]) + b


SETTINGS = frame(4, 0, 0, struct.pack(">HI", 2, 0) + struct.pack(">HI", 4, 2**31 - 1))
WINDOW = frame(8, 0, 0, struct.pack(">I", 2**31 - 1 - 65535))
CT = b"\x0f\x10" + s(b"application/dns-message")
AUTH = b"\x01" + s(b"dnsvolley.test")  # :authority (nghttp2 wants it or host)


def get(sid, path=None, method=b"\x82"):
    if path is None:
        path = b"/dns-query?dns=" + base64.urlsafe_b64encode(query(0)).rstrip(b"=")
    return frame(1, 5, sid, method + b"\x87\x04" + s(path) + AUTH)


def post(sid, body, ct=CT, path=b"/dns-query"):
    return frame(1, 4, sid, b"\x83\x87\x04" + s(path) + AUTH + ct) + frame(0, 1, sid, body)


def main(out):
    os.makedirs(out, exist_ok=True)
    seeds = {
        "tcp-10": (0, 255, 16, b"".join(framed(query(i)) for i in range(10))),
        "tcp-bytewise": (0, 0, 1, b"".join(framed(query(i)) for i in range(3))),
        "tcp-split-3": (0, 2, 4, b"".join(framed(query(i)) for i in range(5))),
        "tcp-zero-length": (0, 255, 16, framed(query(1)) + b"\0\0" + framed(query(2))),
        "tcp-short": (0, 255, 16, framed(b"\1\2\3\4\5") + framed(query(2))),
        "tcp-response": (0, 255, 16, framed(b"\0\1\x81\x80" + query(1)[4:])),
        "tcp-cut": (0, 255, 16, framed(query(1)) + framed(query(2))[:9]),
        "tcp-huge-length": (0, 255, 16, b"\xff\xff" + query(1)),
        # reflect, big queries, a client that never reads: the output bound stops it
        "tcp-never-reads": (16, 255, 0, b"".join(framed(query(i, pad=30000)) for i in range(4))),
        "tcp-reads-slowly": (16, 255, 1, b"".join(framed(query(i, pad=20000)) for i in range(5))),
    }
    for fault, name in enumerate(["drop", "reverse", "close", "reset", "half", "stall"], 1):
        seeds["tcp-" + name] = (fault << 1, 255, 16, b"".join(framed(query(i)) for i in range(12)))
    pre = SETTINGS + WINDOW
    seeds.update({
        "doh-get": (1, 255, 16, pre + get(1) + get(3)),
        "doh-post": (1, 255, 16, pre + post(1, query(7))),
        "doh-statuses": (1, 255, 16, pre + get(1, b"/other?dns=AAAA") + get(3, None, b"\x02" + s(b"PUT")) +
                         post(5, query(1), ct=b"\x0f\x10" + s(b"text/plain")) + get(7, b"/dns-query?dns=!!") +
                         get(9, b"/dns-query") + post(11, b"short")),
        "doh-bytewise": (1, 0, 2, pre + get(1)),
        "doh-never-reads": (1, 127, 0, pre + b"".join(get(1 + 2 * k) for k in range(1200))),
        "doh-bad-frame": (1, 255, 16, pre + frame(0, 1, 2, b"x") + get(1)),
        "doh-goaway": (1, 255, 16, pre + get(1) + frame(7, 0, 0, struct.pack(">II", 1, 0))),
        "doh-no-settings": (1, 255, 16, get(1)),
    })
    for name, (opts, chunk, drain, body) in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([opts, chunk, drain]) + body)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "rstream"))
