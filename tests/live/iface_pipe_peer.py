#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helper programs for tests/live/iface_pipe_test.c.

  iface_pipe_peer.py echo
      A PipeInterface child written independently of both implementations: it
      de-frames HDLC from stdin and writes every frame back, framed, on stdout. A
      frame starting with b"EXIT" makes it exit with status 3 (to test respawns).

  iface_pipe_peer.py bridge listen|connect <path>
      Copies stdin to a Unix socket at <path> and the socket to stdout, byte for
      byte. "listen" accepts one connection; "connect" retries for 20 s. Two bridges
      join the stdin/stdout of two PipeInterface children.

  iface_pipe_peer.py ref <path>
      Runs the pinned reference's own PipeInterface class (RNS/Interfaces/
      PipeInterface.py) without starting RNS.Reticulum, with the command
      "<python> iface_pipe_peer.py bridge connect <path>". Once online it sends the
      test frames (frame(i), the same generator as the C test) and echoes every
      frame it receives; when it has received all of them it prints "RESULT ok <n>"
      (or "RESULT fail <why>") on stdout. It exits when its stdin closes, or after
      60 s. Reference log lines go to stderr.
"""
import os
import socket
import sys
import threading
import time

from iface_peer_common import EchoOwner, frames, say, stub_reference, wait_stdin

LENGTHS = [20, 21, 64, 100, 500, 563, 564, 1000, 1063, 1064]
FLAG, ESC, MASK = 0x7E, 0x7D, 0x20


def hdlc(data):
    out = bytearray([FLAG])
    for c in data:
        if c in (FLAG, ESC):
            out += bytes([ESC, c ^ MASK])
        else:
            out.append(c)
    out.append(FLAG)
    return bytes(out)


def echo():
    buf, in_frame, esc = bytearray(), False, False
    while True:
        chunk = os.read(0, 4096)
        if not chunk:
            return 0
        for c in chunk:
            if c == FLAG:
                if in_frame and buf:
                    if buf.startswith(b"EXIT"):
                        return 3
                    data = hdlc(bytes(buf))
                    while data:
                        data = data[os.write(1, data):]
                buf, in_frame, esc = bytearray(), True, False
            elif in_frame:
                if c == ESC:
                    esc = True
                    continue
                if esc:
                    c ^= MASK
                    esc = False
                buf.append(c)


def bridge(mode, path):
    if mode == "listen":
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        sock, _ = srv.accept()
        srv.close()
    else:
        deadline = time.time() + 20
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                break
            except OSError:
                sock.close()
                if time.time() > deadline:
                    return 1
                time.sleep(0.05)

    def up():
        while True:
            d = os.read(0, 65536)
            if not d:
                break
            sock.sendall(d)
        sock.shutdown(socket.SHUT_WR)

    threading.Thread(target=up, daemon=True).start()
    while True:
        d = sock.recv(65536)
        if not d:
            return 0
        while d:
            d = d[os.write(1, d):]


EXPECTED = frames(LENGTHS)


def ref(path):
    stub_reference()
    from RNS.Interfaces import PipeInterface

    cmd = "%s %s bridge connect %s" % (sys.executable, os.path.abspath(__file__), path)
    iface = PipeInterface.PipeInterface(EchoOwner(EXPECTED), {"name": "ref pipe", "command": cmd})
    iface.optimise_mtu()
    iface.ifac_size = iface.DEFAULT_IFAC_SIZE
    if not iface.online:
        say("RESULT fail not online")
    else:
        say("ONLINE")
        for f in EXPECTED:
            iface.process_outgoing(f)
    wait_stdin(60)
    if iface.process:
        iface.process.kill()
    return 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["echo"]:
        return echo()
    if len(a) == 3 and a[0] == "bridge" and a[1] in ("listen", "connect"):
        return bridge(a[1], a[2])
    if len(a) == 2 and a[0] == "ref":
        return ref(a[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
