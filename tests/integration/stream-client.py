#!/usr/bin/env python3
"""stream-client: one DNS over TCP or TLS connection to a loopback responder, for the tests.

Usage: stream-client.py PORT tcp|tls SEND EXPECT [--end] [--then-send K] [--zero|--trickle]
       stream-client.py PORT tls --resume
Pipelines SEND queries (IDs 1..SEND, "q<ID>.example." A) in one write, reads until
EXPECT answers have come, and prints the answer IDs in arrival order ("ids=4,3,2,1").
--end: then wait up to 1 s and print how the server ended it: end=eof|reset|timeout
(also printed, --end or not, when the connection ends before EXPECT answers).
--then-send K: after that, send K more queries (IDs SEND+1...) before leaving.
--zero: send a frame with a zero length prefix instead of queries.
--trickle: send the queries one byte per write, 1 ms apart (frames split over reads).
--resume: two connections, one query each, the second offering the first's session;
prints reused=True|False.
It always leaves by shutting down its write side and waiting (1 s at most) for the
server to close, so the server has counted everything when this exits.
"""
import socket
import ssl
import struct
import sys
import time


def query(qid):
    name = b"".join(bytes([len(p)]) + p for p in [b"q%d" % qid, b"example"]) + b"\0"
    msg = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name + struct.pack(">HH", 1, 1)
    return struct.pack(">H", len(msg)) + msg


CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # one context: a session is resumed in its own
CTX.check_hostname = False
CTX.verify_mode = ssl.CERT_NONE


def connect(port, tls, session=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    if tls:
        # A TLS stream that ends without close_notify (a reset among them) raises:
        # printed as end=reset. A close_notify is end=eof.
        s = CTX.wrap_socket(s, session=session, suppress_ragged_eofs=False)
    return s


def read_answers(s, want):
    """The answer IDs; a reset or a timeout ends the list early (raised as
    Ended(ids, how) when --end is not asked, so that the test sees it)."""
    ids, buf = [], b""
    while len(ids) < want:
        try:
            data = s.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            raise Ended(ids, "reset")
        except socket.timeout:
            raise Ended(ids, "timeout")
        if not data:
            raise Ended(ids, "eof")
        buf += data
        while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
            n = struct.unpack(">H", buf[:2])[0]
            ids.append(struct.unpack(">H", buf[2:4])[0])
            buf = buf[2 + n:]
    return ids


class Ended(Exception):
    def __init__(self, ids, how):
        super().__init__(how)
        self.ids, self.how = ids, how


def how_it_ended(s):
    s.settimeout(1)
    try:
        data = s.recv(65536)
        return "eof" if not data else "data"
    except (ConnectionResetError, ssl.SSLError):
        return "reset"
    except socket.timeout:
        return "timeout"


def leave(s):
    try:
        s.shutdown(socket.SHUT_WR)
        s.settimeout(1)
        while s.recv(65536):
            pass
    except (OSError, ssl.SSLError):
        pass
    s.close()


def resume(port):
    s = connect(port, True)
    s.sendall(query(1))
    read_answers(s, 1)
    sess = s.session  # read after an answer: the TLS 1.3 tickets came before it
    leave(s)
    s = connect(port, True, sess)
    s.sendall(query(2))
    read_answers(s, 1)
    print("reused=%s" % s.session_reused)
    leave(s)


def main():
    port, tls = int(sys.argv[1]), sys.argv[2] == "tls"
    if "--resume" in sys.argv:
        return resume(port)
    send, expect = int(sys.argv[3]), int(sys.argv[4])
    s = connect(port, tls)
    if "--zero" in sys.argv:
        s.sendall(b"\0\0")
    elif "--trickle" in sys.argv:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for b in b"".join(query(i) for i in range(1, send + 1)):
            s.sendall(bytes([b]))
            time.sleep(0.001)
    else:
        s.sendall(b"".join(query(i) for i in range(1, send + 1)))
    ended = None
    try:
        ids = read_answers(s, expect)
    except Ended as e:
        ids, ended = e.ids, e.how
    print("ids=" + ",".join(str(i) for i in ids))
    if ended is not None:
        print("end=" + ended)
    elif "--end" in sys.argv:
        print("end=" + how_it_ended(s))
    if "--then-send" in sys.argv:
        k = int(sys.argv[sys.argv.index("--then-send") + 1])
        s.sendall(b"".join(query(send + i) for i in range(1, k + 1)))
    leave(s)


if __name__ == "__main__":
    main()
