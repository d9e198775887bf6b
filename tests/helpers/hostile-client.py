#!/usr/bin/env python3
"""hostile-client: clients that treat dnsvolley-responder's stream listeners badly (and one
that treats them well, to run beside them), for tests/integration/responder-hostile.sh.

Usage:
  hostile-client.py never-reads PORT tcp|tls|https CONNS MBYTES READY
      CONNS connections that send queries as fast as the server takes them and never read
      (a small receive buffer; HTTPS: GET requests, a connection window and stream windows
      opened to the maximum, so nothing but the reading holds the server back), until
      MBYTES MiB are sent in all, or every connection has had nothing taken for 2 s (the
      server stopped reading them all), or 60 s passed. Creates the file READY once every
      connection has sent 256 KiB. Prints sent=BYTES end=bytes|blocked|time.
  hostile-client.py flood PORT tcp|tls|https N
      One connection that pipelines N queries as fast as it can while reading (HTTPS: N
      GETs, at most 900 streams open); prints answers=COUNT once all
      N came or 30 s passed.
  hostile-client.py polite PORT tcp|tls|https N
      One connection, N queries (HTTPS: N GETs on streams of their own) in one write, then
      read until N answers came or 10 s passed; prints answers=COUNT.
  hostile-client.py bodies PORT CONNS STREAMS BYTES
      HTTPS: CONNS connections, one after the other; on each, STREAMS POST requests whose
      bodies never end: HEADERS, then BYTES of DATA (at most 65535: the stream window),
      never END_STREAM. Then reads every connection until nothing came for 1 s (or 30 s
      passed) and prints refused=N other=M: the streams the server reset with
      REFUSED_STREAM, and with another error code.
  hostile-client.py emfile PORT CONNS SECONDS READY
      CONNS TCP connections (more than the server's descriptor limit), one query written
      on each, never read; creates READY once all are connected, holds them SECONDS, then
      closes them all and prints connected=CONNS.
Only ever to loopback (127.0.0.1).
"""
import base64
import os
import select
import socket
import ssl
import struct
import sys
import time

HOST = "127.0.0.1"
WINDOW_MAX = 2**31 - 1


def query(qid, name=b"example"):
    qname = b"".join(bytes([len(p)]) + p for p in [b"q%d" % qid, name]) + b"\0"
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + qname + struct.pack(">HH", 1, 1)


def framed(qid):
    q = query(qid)
    return struct.pack(">H", len(q)) + q


def connect(port, proto, blocking=True, rcvbuf=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect((HOST, port))
    if proto in ("tls", "https"):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        if proto == "https":
            ctx.set_alpn_protocols(["h2"])
        s = ctx.wrap_socket(s)
        if proto == "https" and s.selected_alpn_protocol() != "h2":
            sys.exit("hostile-client: the server did not agree to h2")
    s.setblocking(blocking)
    return s


# ---- HTTP/2, just what a DoH client needs (HPACK literals without indexing) ----

def h2_frame(ftype, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def h2_preface():
    settings = struct.pack(">HI", 2, 0) + struct.pack(">HI", 4, WINDOW_MAX)  # no push; windows
    return (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, settings) +
            h2_frame(8, 0, 0, struct.pack(">I", WINDOW_MAX - 65535)))


def hpack_str(b):
    assert len(b) < 127
    return bytes([len(b)]) + b


PATH = b"/dns-query?dns=" + base64.urlsafe_b64encode(query(0)).rstrip(b"=")
# :method GET, :scheme https (static table), :path and :authority as literals
GET_BLOCK = b"\x82\x87\x04" + hpack_str(PATH) + b"\x01" + hpack_str(b"dnsvolley.test")


def h2_get(sid):
    return h2_frame(1, 0x5, sid, GET_BLOCK)  # END_STREAM | END_HEADERS


class H2Reader:
    """Counts the responses whose stream ended with a DATA frame (a 200 with its body) and
    acknowledges the server's SETTINGS."""

    def __init__(self):
        self.buf, self.answers, self.acks = b"", 0, b""

    def feed(self, data):
        self.buf += data
        while len(self.buf) >= 9:
            n = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + n:
                break
            ftype, flags = self.buf[3], self.buf[4]
            if ftype == 0 and flags & 1:
                self.answers += 1
            elif ftype == 4 and not flags & 1:
                self.acks += h2_frame(4, 1, 0, b"")
            elif ftype == 7:
                sys.exit("hostile-client: GOAWAY from the server")
            self.buf = self.buf[9 + n:]


# ---- modes ----

def send_some(s, data):
    """Bytes of data the socket took now (0 when it is full)."""
    try:
        return s.send(data)
    except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
        return 0


def never_reads(port, proto, conns, mbytes, ready):
    socks = [connect(port, proto, blocking=False, rcvbuf=4096) for _ in range(conns)]
    pending = [h2_preface() if proto == "https" else b"" for _ in socks]
    sent = [0] * conns
    sid = [1] * conns
    chunk = b"".join(framed(i) for i in range(1, 1001))
    now = time.monotonic()
    last = [now] * conns  # when each last had bytes taken
    end, how = now + 60, "time"
    while time.monotonic() < end:
        now = time.monotonic()
        if sum(sent) >= mbytes << 20:
            how = "bytes"
            break
        if all(now - t >= 2 for t in last):
            how = "blocked"
            break
        if not os.path.exists(ready) and min(sent) >= 256 * 1024:
            open(ready, "w").close()
        _, w, _ = select.select([], socks, [], 0.05)
        for s in w:
            i = socks.index(s)
            if not pending[i]:
                if proto == "https":
                    pending[i] = b"".join(h2_get(sid[i] + 2 * k) for k in range(200))
                    sid[i] += 400
                else:
                    pending[i] = chunk
            n = send_some(s, pending[i])
            pending[i] = pending[i][n:]
            sent[i] += n
            if n > 0:
                last[i] = time.monotonic()
    if not os.path.exists(ready):
        open(ready, "w").close()
    print("sent=%d end=%s" % (sum(sent), how), flush=True)
    for s in socks:
        s.close()


def read_frames(buf):
    """(answers counted, bytes left) of a TCP/TLS stream buffer."""
    pos, n = 0, 0
    while len(buf) - pos >= 2:
        length = int.from_bytes(buf[pos:pos + 2], "big")
        if len(buf) - pos - 2 < length:
            break
        pos += 2 + length
        n += 1
    return n, buf[pos:]


def recv_some(s):
    try:
        data = s.recv(65536)
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return None
    if not data:
        raise EOFError
    return data


def flood(port, proto, n):
    s = connect(port, proto, blocking=False)
    h2 = proto == "https"
    if h2:
        out, reader, asked = h2_preface(), H2Reader(), 0
    else:
        out = b"".join(framed(i % 65536) for i in range(n))
    answers, buf, end = 0, b"", time.monotonic() + 30
    try:
        while answers < n and time.monotonic() < end:
            if h2 and asked < n and asked - answers < 800:
                k = min(n - asked, 900 - (asked - answers))
                out += b"".join(h2_get(1 + 2 * (asked + j)) for j in range(k))
                asked += k
            r, w, _ = select.select([s], [s] if out else [], [], 0.1)
            if w:
                k = send_some(s, out[:65536])
                out = out[k:]
            while True:  # TLS: whatever the library holds too
                data = recv_some(s)
                if data is None:
                    break
                if h2:
                    reader.feed(data)
                    answers = reader.answers
                    out += reader.acks
                    reader.acks = b""
                else:
                    k, buf = read_frames(buf + data)
                    answers += k
    except (EOFError, ConnectionError, ssl.SSLError):
        pass
    print("answers=%d" % answers, flush=True)
    s.close()


def polite(port, proto, n):
    s = connect(port, proto)
    s.settimeout(10)
    if proto == "https":
        s.sendall(h2_preface() + b"".join(h2_get(1 + 2 * k) for k in range(n)))
        reader = H2Reader()
    else:
        s.sendall(b"".join(framed(i) for i in range(1, n + 1)))
    answers, buf, end = 0, b"", time.monotonic() + 10
    try:
        while answers < n and time.monotonic() < end:
            data = s.recv(65536)
            if not data:
                break
            if proto == "https":
                reader.feed(data)
                answers = reader.answers
                if reader.acks:
                    s.sendall(reader.acks)
                    reader.acks = b""
            else:
                k, buf = read_frames(buf + data)
                answers += k
    except (socket.timeout, ConnectionError, ssl.SSLError):
        pass
    print("answers=%d" % answers, flush=True)
    s.close()


POST_BLOCK = (b"\x83\x87\x04" + hpack_str(b"/dns-query") + b"\x01" + hpack_str(b"dnsvolley.test") +
              b"\x0f\x10" + hpack_str(b"application/dns-message"))


class RstCounter:
    """Counts RST_STREAM frames by error code (7: REFUSED_STREAM); acknowledges SETTINGS."""

    def __init__(self):
        self.buf, self.refused, self.other, self.acks = b"", 0, 0, b""

    def feed(self, data):
        self.buf += data
        while len(self.buf) >= 9:
            n = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + n:
                break
            ftype, flags = self.buf[3], self.buf[4]
            if ftype == 3:
                code = int.from_bytes(self.buf[9:13], "big")
                self.refused += code == 7
                self.other += code != 7
            elif ftype == 4 and not flags & 1:
                self.acks += h2_frame(4, 1, 0, b"")
            self.buf = self.buf[9 + n:]


def read_now(s, rd):
    """What s has now, fed to rd (SETTINGS acknowledged); True when something came."""
    got = False
    while True:
        try:
            data = recv_some(s)
        except (EOFError, ConnectionError, ssl.SSLError):
            return got
        if data is None:
            return got
        got = True
        rd.feed(data)
        if rd.acks:
            s.sendall(rd.acks)
            rd.acks = b""


def drain(socks, readers, quiet):
    """Read every socket until nothing came for quiet seconds (30 s at most)."""
    end, last = time.monotonic() + 30, time.monotonic()
    while time.monotonic() < end and time.monotonic() - last < quiet:
        select.select(socks, [], [], 0.05)
        for s, rd in zip(socks, readers):
            if read_now(s, rd):
                last = time.monotonic()


def bodies(port, conns, streams, nbytes):
    assert nbytes <= 65535
    socks, readers = [], []
    for _ in range(conns):
        s = connect(port, "https")
        socks.append(s)
        readers.append(RstCounter())
        s.sendall(h2_preface())
        for k in range(streams):
            sid, left, out = 1 + 2 * k, nbytes, [h2_frame(1, 0x4, 1 + 2 * k, POST_BLOCK)]
            while left > 0:  # END_HEADERS, then DATA frames without END_STREAM
                n = min(left, 16384)
                out.append(h2_frame(0, 0, sid, b"\0" * n))
                left -= n
            s.sendall(b"".join(out))
            s.setblocking(False)
            read_now(s, readers[-1])  # whatever came: our receive buffer never fills
            s.setblocking(True)
    for s in socks:
        s.setblocking(False)
    drain(socks, readers, 1.0)
    print("refused=%d other=%d" % (sum(r.refused for r in readers), sum(r.other for r in readers)),
          flush=True)
    for s in socks:
        s.close()


def emfile(port, conns, seconds, ready):
    socks = []
    for i in range(conns):
        s = socket.create_connection((HOST, port), timeout=5)
        s.sendall(framed(i + 1))
        socks.append(s)
    open(ready, "w").close()
    time.sleep(seconds)
    for s in socks:
        s.close()
    print("connected=%d" % len(socks), flush=True)


def main(argv):
    try:
        mode = argv[1]
        if mode == "never-reads":
            never_reads(int(argv[2]), argv[3], int(argv[4]), int(argv[5]), argv[6])
        elif mode == "flood":
            flood(int(argv[2]), argv[3], int(argv[4]))
        elif mode == "polite":
            polite(int(argv[2]), argv[3], int(argv[4]))
        elif mode == "bodies":
            bodies(int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]))
        elif mode == "emfile":
            emfile(int(argv[2]), int(argv[3]), float(argv[4]), argv[5])
        else:
            raise IndexError
    except (IndexError, ValueError):
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
