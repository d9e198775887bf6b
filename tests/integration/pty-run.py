#!/usr/bin/env python3
"""pty-run: run a command on a pseudo-terminal of a given width; write what it printed.

Usage: pty-run.py COLUMNS OUTFILE COMMAND [ARGS...]
Standard output and standard error of COMMAND are the terminal (as in an interactive
shell); the bytes it wrote (with the terminal's "\r\n" for "\n") go to OUTFILE. Exits
with COMMAND's exit status. Used by tests/integration/terminal.sh.
"""
import fcntl
import os
import pty
import struct
import sys
import termios


def main():
    cols, outfile, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(sys.stdout.fileno(), termios.TIOCSWINSZ,
                    struct.pack("HHHH", 24, cols, 0, 0))
        os.environ.pop("COLUMNS", None)
        os.execvp(argv[0], argv)
    data = bytearray()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    with open(outfile, "wb") as f:
        f.write(data)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
