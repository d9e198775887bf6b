#!/usr/bin/env python3
"""make-seeds: regenerate the fuzz seed corpora (run once by hand; the seeds are committed).

Usage: tests/fuzz/make-seeds.py BUILDDIR
Starts BUILDDIR/dnsvolley-responder on loopback and captures its real answers to
the queries of fuzz_response.c's list, in several fault modes, as seeds for
fuzz_response and fuzz_answer; writes list seeds for fuzz_querylist and results
files (from a short real run) for fuzz_results.
"""
import json, os, signal, socket, struct, subprocess, sys, tempfile, time

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = os.path.abspath(sys.argv[1])
corpus = os.path.join(top, "tests", "fuzz", "corpus")

# Must match list_text in fuzz_response.c (compiled there with EDNS on).
LIST = [("example.com", 1), ("www.Example.org", 28), ("example.net", 6),
        ("_sip._udp.example.com", 33), ("xn--bcher-kva.example", 16),
        ("a.b.c.d.e.f.g.example", 15)]


def name_wire(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(qid, name, qtype, edns=True, flags=0x0100, qclass=1):
    hdr = struct.pack("!HHHHHH", qid, flags, 1, 0, 0, 1 if edns else 0)
    q = hdr + name_wire(name) + struct.pack("!HH", qtype, qclass)
    if edns:
        q += b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0)
    return q


def write(sub, fname, data):
    d = os.path.join(corpus, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, fname), "wb") as f:
        f.write(data)


def capture(args, queries):
    """Send each query to a fresh responder started with args; return the datagrams received."""
    pf = tempfile.mktemp()
    p = subprocess.Popen([os.path.join(build, "dnsvolley-responder"), "-a", "127.0.0.1", "-p", "0",
                          "--port-file", pf, "-q"] + args, stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(pf) and os.path.getsize(pf) > 0:
                break
            time.sleep(0.025)
        port = int(open(pf).read())
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("127.0.0.1", port))
        s.settimeout(0.5)
        got = []
        for q in queries:
            s.send(q)
            try:
                while True:
                    got.append(s.recv(65536))
                    s.settimeout(0.05)
            except socket.timeout:
                pass
            s.settimeout(0.5)
        return got
    finally:
        p.send_signal(signal.SIGINT)
        p.wait()
        os.unlink(pf)


def main():
    qs = [query(0, n, t) for n, t in LIST]
    # fuzz_response: flags, pick, datagram (see fuzz_response.c).
    modes = {"plain": [], "tc": ["--tc-every", "1"], "nxdomain": ["--rcode", "NXDOMAIN"],
             "wrongq": ["--wrong-question-every", "1"], "garbage": ["--garbage-every", "1"],
             "dup": ["--duplicate-every", "1"], "servfail": ["--rcode", "SERVFAIL"]}
    for mode, args in modes.items():
        for i, r in enumerate(capture(args, qs)):
            pick = i % len(LIST)
            write("response", "%s-%d-match" % (mode, i), bytes([4, pick]) + r)
            if mode == "plain":
                write("response", "%s-%d-late" % (mode, i), bytes([4 | 8, pick]) + r)
                write("response", "%s-%d-wrongsrc" % (mode, i), bytes([4 | 1, pick]) + r)
                write("response", "%s-%d-sock1" % (mode, i), bytes([4 | 2, pick + 6]) + r)
                write("response", "%s-%d-noid" % (mode, i), bytes([0, 0]) + r)
                write("response", "%s-%d-twice" % (mode, i), bytes([4, pick]) + r + b"DVFZ" + r)
                for cut in (0, 5, 12, 20, len(r) - 1):
                    write("response", "%s-%d-cut%d" % (mode, i, cut), bytes([4, pick]) + r[:cut])
    # A compression pointer loop and a forward pointer in the answer section.
    r = capture([], qs[:1])[0]
    write("response", "ptr-forward", bytes([4, 0]) + r[:len(r)] + b"\xc0\xff")
    hdr = bytearray(r[:12])
    hdr[7] = 1
    qend = 12 + len(name_wire(LIST[0][0])) + 4
    loop = bytes(hdr) + r[12:qend] + b"\xc0" + bytes([qend]) + b"\0\1\0\1\0\0\0\0\0\0"
    write("response", "ptr-self", bytes([4, 0]) + loop)

    # fuzz_answer: flags, query. Real queries, odd ones and every fault mode's flag bits.
    odd = {"noedns": query(7, "example.com", 1, edns=False),
           "chaos": query(8, "version.bind", 16, edns=False, qclass=3),
           "notify": query(9, "example.com", 6, flags=0x2000),
           "qr": query(10, "example.com", 1, flags=0x8000),
           "qd2": query(11, "example.com", 1)[:4] + b"\0\2" + query(11, "example.com", 1)[6:],
           "ednsv1": query(12, "example.com", 1)[:-11] + b"\0" + struct.pack("!HHIH", 41, 4096, 0x00018000, 0),
           "long": query(13, ".".join(["a" * 63] * 3) + "." + "b" * 61, 1),
           "upper": query(14, "WwW.ExAmPlE.CoM", 28),
           "short": b"\x12\x34\x01",
           "header": struct.pack("!HHHHHH", 15, 0x0100, 1, 0, 0, 0)}
    for i, q in enumerate(qs):
        for f in (0x00, 0x01, 0x02, 0x04, 0x08, 0x10 | (3 << 5), 0xc0):
            write("answer", "list%d-f%02x" % (i, f), bytes([f]) + q)
    for k, q in odd.items():
        write("answer", k, b"\0" + q)
        write("answer", k + "-wrongq", b"\x08" + q)

    # fuzz_querylist: options byte, list text.
    with open(os.path.join(top, "querylists", "mixed.txt"), "rb") as f:
        write("querylist", "mixed", b"\0" + f.read())
    with open(os.path.join(top, "querylists", "soa.txt"), "rb") as f:
        write("querylist", "soa-head-edns", b"\x02" + b"".join(f.readlines()[:40]))
    lists = {
        "comments": b"# comment\n\nexample.com A # trailing\n  \t\nexample.net\tMX\n",
        "classes": b"example.com IN A\nexample.com A IN\nversion.bind CH TXT\nexample.com CLASS255 ANY\n",
        "rfc3597": b"example.com TYPE65534\nexample.com TYPE0\nexample.com TYPE65535\n",
        "escapes": b"ex\\.ample.com A\n\\065bc.example TXT\nexa\\ mple.com A\n",
        "root": b". NS\n.. A\n",
        "crlf": b"example.com A\r\nexample.org AAAA\r\n",
        "long-label": b"a" * 63 + b".example A\n" + b"a" * 64 + b".example A\n",
        "long-name": (b"a" * 63 + b".") * 3 + b"b" * 61 + b". A\n" + (b"a" * 63 + b".") * 4 + b" A\n",
        "bad-type": b"example.com BOGUS\n",
        "bad-class": b"example.com A XX\n",
        "extra-field": b"example.com A IN extra\n",
        "name-only": b"example.com\n",
        "empty-label": b"a..b A\n",
        "nul": b"exam\0ple.com A\n",
        "only-comments": b"# nothing\n\n",
        "no-newline": b"example.com A",
        "binary": bytes(range(256)),
    }
    for k, v in lists.items():
        write("querylist", k, b"\0" + v)
        write("querylist", k + "-skip", b"\x08" + v)
        write("querylist", k + "-do", b"\x04" + v)

    # fuzz_results: a real results file from a short run, and damaged copies.
    tmp = tempfile.mkdtemp()
    pf = os.path.join(tmp, "port")
    p = subprocess.Popen([os.path.join(build, "dnsvolley-responder"), "-a", "127.0.0.1", "-p", "0",
                          "--port-file", pf, "-q"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(pf) and os.path.getsize(pf) > 0:
                break
            time.sleep(0.025)
        port = open(pf).read().strip()
        lst = os.path.join(tmp, "l.txt")
        with open(lst, "w") as f:
            f.write("example.com A\nexample.net SOA\nexample.org AAAA\n")
        res = os.path.join(tmp, "r.json")
        subprocess.run([os.path.join(build, "dnsvolley"), "--no-progress", "--quiet", "-s",
                        "127.0.0.1:" + port, "-d", lst, "-n", "20", "-S", "0.05", "--repeat", "2",
                        "--json", res, "--no-server-version"], check=True, stdout=subprocess.DEVNULL)
        doc = open(res, "rb").read()
    finally:
        p.send_signal(signal.SIGINT)
        p.wait()
    write("results", "real", doc)
    write("results", "truncated", doc[: len(doc) // 2])
    write("results", "empty", b"")
    write("results", "not-object", b"[1, 2, 3]\n")
    j = json.loads(doc)
    j["schema_version"] = 99
    write("results", "future-version", json.dumps(j).encode())
    j = json.loads(doc)
    j["schema"] = "something-else"
    write("results", "wrong-schema", json.dumps(j).encode())
    j = json.loads(doc)
    write("results", "compact", json.dumps(j, separators=(",", ":")).encode())


main()
