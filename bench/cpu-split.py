#!/usr/bin/env python3
# cpu-split.py: a stream client's CPU on loopback, split into its own work and the server
# end's kernel work done on its CPU. On loopback the CPU that sends a segment runs the
# receiving socket's TCP input in the same system call, so a client's sendmsg, connect and
# close also do the server socket's receive, wake-up, handshake and close.
# usage: bench/cpu-split.py PERF_DATA COMPLETED [HZ]
#   PERF_DATA  `perf record -g -F HZ` of the client task only (perf record -- CLIENT...)
#   COMPLETED  the run's completed queries; HZ the sampling rate (default 4000)
# Prints µs per completed query by class. A sample with tcp_v4_rcv in its stack is the
# input of a segment this CPU sent, so the server socket's (the client's SYN-ACK handling,
# tcp_rcv_synsent_state_process, is the client's own; a timer's packet is "timers");
# the rest is the client's, by the system call it is in. doc/performance.md ("Cost per
# query at 10,000 connections") has the figures this gave.
import collections
import subprocess
import sys

TIMERS = ("tcp_delack_timer", "tcp_write_timer", "tcp_keepalive_timer")
HANDSHAKE = ("tcp_conn_request", "tcp_v4_syn_recv_sock", "tcp_check_req", "tcp_child_process",
             "inet_csk_clone_lock")
CALLS = (("connect", "__sys_connect"), ("close", "__x64_sys_close"), ("socket", "__sys_socket"),
         ("epoll_ctl", "do_epoll_ctl"), ("sendmsg", "__sys_sendmsg"), ("recv", "__sys_recvfrom"),
         ("epoll_wait", "do_epoll_wait"), ("getsockopt", "do_sock_getsockopt"),
         ("setsockopt", "do_sock_setsockopt"))


def classify(stack):
    s = set(stack)
    if "tcp_v4_rcv" in s:
        if "tcp_rcv_synsent_state_process" in s:
            return "client: connect"
        if any(t in s for t in TIMERS):
            return "delayed-ACK and other timers"
        if any(t in s for t in HANDSHAKE):
            return "server end: handshakes"
        if "tcp_fin" in s or "tcp_close" in s or "__tcp_close" in s:
            return "server end: closes"
        return "server end: data and ACK input"
    if any(t in s for t in TIMERS):
        return "delayed-ACK and other timers"
    for name, key in CALLS:
        if key in s:
            return "client: " + name
    return "user space and the rest"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: cpu-split.py PERF_DATA COMPLETED [HZ]")
    data, done = sys.argv[1], int(sys.argv[2])
    per = 1e6 / (int(sys.argv[3]) if len(sys.argv) == 4 else 4000) / max(done, 1)
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True,
                         text=True, check=True).stdout
    cnt, stack, total = collections.Counter(), [], 0
    for line in out.splitlines() + [""]:
        line = line.strip()
        if line:
            parts = line.split(None, 1)
            stack.append((parts[1] if len(parts) > 1 else "?").split("+")[0])
            continue
        if stack:
            total += 1
            cnt[classify(stack)] += 1
        stack = []
    server = sum(v for k, v in cnt.items() if k.startswith("server end"))
    print("  total %.2f µs/q: client's own %.2f, server end %.2f (%d samples)" %
          (total * per, (total - server) * per, server * per, total))
    for k, v in sorted(cnt.items(), key=lambda x: -x[1]):
        print("    %-34s %6.3f" % (k, v * per))


if __name__ == "__main__":
    main()
