# SPDX-License-Identifier: MIT
"""A serial line for `rnsc bench --iface serial|kiss`: two pseudo-terminals joined back to back.

pty_pair.py PATH_A PATH_B: opens two pty pairs, puts both slaves in raw mode, symlinks them
at PATH_A and PATH_B, prints "ready" and copies every byte one side's host writes to the
other side's host. It keeps its own descriptor of each slave open, so a host that closes
and reopens its port never makes the master read EIO. Exits on any line or end of file on stdin
(the runner said quit or went away) or on SIGTERM, removing the links.
"""
import os
import select
import selectors
import signal
import sys
import tty


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: pty_pair.py PATH_A PATH_B\n")
        sys.exit(2)
    links = sys.argv[1:]
    masters, slaves = [], []
    for path in links:
        m, s = os.openpty()
        tty.setraw(s)
        masters.append(m)
        slaves.append(s)
        os.symlink(os.ttyname(s), path)

    def leave(*_):
        for path in links:
            try:
                os.unlink(path)
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, leave)
    sel = selectors.DefaultSelector()
    for i, m in enumerate(masters):
        os.set_blocking(m, False)
        sel.register(m, selectors.EVENT_READ, i)
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, -1)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in sel.select():
            i = key.data
            if i < 0:  # "quit" or end of file
                leave()
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            out = masters[1 - i]
            while data:
                try:
                    data = data[os.write(out, data):]
                except BlockingIOError:
                    select.select([], [out], [], 1.0)


if __name__ == "__main__":
    main()
