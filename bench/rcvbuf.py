#!/usr/bin/env python3
# rcvbuf.py: set the receive buffer of a running server's UDP sockets on one port from
# outside (pidfd_getfd, Linux 5.6+), as `sysctl net.core.rmem_default` before its start
# would, without touching the rest of the machine: bench/capacity-knot.sh's tuned setup.
# Needs ptrace access to PID (root, or the same user with kernel.yama.ptrace_scope 0);
# SO_RCVBUFFORCE (CAP_NET_ADMIN) is tried first, else SO_RCVBUF (capped by rmem_max).
# usage: bench/rcvbuf.py PID PORT BYTES   (prints the kernel's figure, which is doubled)
import ctypes
import os
import socket
import sys

SYS_PIDFD_OPEN, SYS_PIDFD_GETFD, SO_RCVBUFFORCE = 434, 438, 33


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: rcvbuf.py PID PORT BYTES")
    pid, port, size = (int(a) for a in sys.argv[1:])
    inodes = set()
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                col = line.split()
                if int(col[1].split(":")[1], 16) == port:
                    inodes.add(col[9])
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        sys.exit("rcvbuf.py: pidfd_open %d: %s" % (pid, os.strerror(ctypes.get_errno())))
    done = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if not (target.startswith("socket:[") and target[8:-1] in inodes):
            continue
        mine = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(fd), 0)
        if mine < 0:
            sys.exit("rcvbuf.py: pidfd_getfd: %s" % os.strerror(ctypes.get_errno()))
        s = socket.socket(fileno=mine)
        try:
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, size)
        except PermissionError:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)
        print(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
        s.close()
        done += 1
    if done == 0:
        sys.exit("rcvbuf.py: no UDP socket of pid %d on port %d" % (pid, port))


main()
