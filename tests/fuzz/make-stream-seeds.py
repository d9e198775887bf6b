#!/usr/bin/env python3
"""Seeds for tests/fuzz/fuzz_stream: a server's bytes over TCP (framed answers) and DoH
(HTTP/2 frames, cleartext), good and hostile. Usage: make-stream-seeds.py [OUTDIR]."""
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "stream")
os.makedirs(OUT, exist_ok=True)

QNAME = b"\x07example\x03com\x00"


def answer(qid, qr=True, ident=None):
    """A response to example.com A with one A record."""
    flags = 0x8180 if qr else 0x0180
    hdr = struct.pack(">HHHHHH", qid if ident is None else ident, flags, 1, 1, 0, 0)
    rr = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([192, 0, 2, 1])
    return hdr + QNAME + struct.pack(">HH", 1, 1) + rr


def framed(msg, lie=0):
    return struct.pack(">H", len(msg) + lie) + msg


def frame(ftype, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def settings(entries=(), ack=False):
    body = b"".join(struct.pack(">HI", k, v) for k, v in entries)
    return frame(4, 1 if ack else 0, 0, b"" if ack else body)


def lit(name, value):
    """HPACK literal header field without indexing, new name."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def headers(sid, status=b"200", ctype=b"application/dns-message", clen=None, end=False):
    block = lit(b":status", status) + lit(b"content-type", ctype)
    if clen is not None:
        block += lit(b"content-length", str(clen).encode())
    return frame(1, 0x4 | (0x1 if end else 0), sid, block)


def data(sid, payload, end=True):
    return frame(0, 1 if end else 0, sid, payload)


def response(sid, msg, **kw):
    return headers(sid, clen=len(msg), **kw) + data(sid, msg)


def goaway(last, code=0):
    return frame(7, 0, 0, struct.pack(">II", last, code))


def rst(sid, code=8):
    return frame(3, 0, sid, struct.pack(">I", code))


def seed(name, flags, chunk, body):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([flags, chunk]) + body)


TCP, DOH, DOT, DOH_GET = 0, 1, 2, 3
# TCP: good, duplicates, wrong ids, QR clear, a length lie, a zero length, 1-byte chunks
seed("tcp-good", TCP, 63, b"".join(framed(answer(i)) for i in range(8)))
seed("tcp-one-byte", TCP, 0, b"".join(framed(answer(i)) for i in range(8)))
seed("tcp-dup", TCP, 20, b"".join(framed(answer(i)) * 2 for i in range(8)))
seed("tcp-wrong-id", TCP, 63, b"".join(framed(answer(i, ident=i + 1)) for i in range(8)))
seed("tcp-qr0", TCP, 63, b"".join(framed(answer(i, qr=False)) for i in range(8)))
seed("tcp-lie", TCP, 63, framed(answer(0), lie=100))
seed("tcp-zero", TCP, 63, framed(answer(0)) + b"\x00\x00")
seed("tcp-cut", TCP | 8, 63, framed(answer(0))[:20])
# DoH: SETTINGS first (in the first chunk), then responses on streams 1, 3, 5, ...
S = settings([(3, 100), (4, 65535)])
sid = [1 + 2 * i for i in range(8)]
seed("doh-good", DOH, 63, S + settings(ack=True) + b"".join(response(s, answer(i)) for i, s in enumerate(sid)))
seed("doh-get", DOH_GET, 63, S + b"".join(response(s, answer(i)) for i, s in enumerate(sid)))
seed("doh-cancel", DOH | 4, 40, S + b"".join(response(s, answer(i)) for i, s in enumerate(sid)))
seed("doh-one-byte", DOH, 0, S + b"".join(headers(s, clen=len(answer(i))) +
                                          b"".join(data(s, bytes([x]), end=False) for x in answer(i)) +
                                          data(s, b"") for i, s in enumerate(sid[:3])))
seed("doh-wrong-id", DOH, 63, S + b"".join(response(s, answer(i, ident=i + 1)) for i, s in enumerate(sid)))
seed("doh-qr0", DOH, 63, S + b"".join(response(s, answer(i, qr=False)) for i, s in enumerate(sid)))
seed("doh-lie", DOH, 63, S + headers(1, clen=len(answer(0)) + 100) + data(1, answer(0)))
seed("doh-status", DOH, 63, S + headers(1, status=b"503", end=True) + headers(3, status=b"404", end=True))
seed("doh-type", DOH, 63, S + response(1, answer(0), ctype=b"text/html"))
seed("doh-empty", DOH, 63, S + headers(1, clen=0) + data(1, b""))
seed("doh-zero-streams", DOH, 63, settings([(3, 0)]))
seed("doh-goaway", DOH, 63, S + goaway(0))
seed("doh-goaway-mid", DOH, 63, S + response(1, answer(0)) + goaway(3) + response(3, answer(1)))
seed("doh-rst", DOH, 63, S + rst(1) + rst(3, 7) + response(5, answer(2)))
seed("doh-garbage", DOH, 63, S + b"\xff" * 40)
seed("doh-no-settings", DOH, 63, response(1, answer(0)))
# DoT: a few bytes of a ServerHello and junk: the handshake fails cleanly
seed("dot-junk", DOT, 63, b"\x16\x03\x03\x00\x05\x02\x00\x00\x01\x00" + b"\x00" * 20)
seed("dot-alert", DOT, 63, b"\x15\x03\x03\x00\x02\x02\x28")
