# SPDX-License-Identifier: MIT
"""Byte relay for `rnsc bench --iface pipe`: a PipeInterface's command on each side.

listen HOST PORT: accept one connection on HOST:PORT (127.0.0.1) and copy stdin to it and
it to stdout. connect HOST PORT: the same over a connection to HOST:PORT, retried for 20 s
while the listener starts. Exits when either direction closes, so the interface sees EOF.
"""
import os
import socket
import sys
import threading
import time


def pump(src_read, dst_write):
    try:
        while True:
            b = src_read(65536)
            if not b:
                break
            dst_write(b)
    except OSError:
        pass
    os._exit(0)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("listen", "connect"):
        sys.stderr.write("usage: pipe_relay.py listen|connect HOST PORT\n")
        sys.exit(2)
    host, port = sys.argv[2], int(sys.argv[3])
    if sys.argv[1] == "listen":
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((host, port))
        srv.listen(1)
        conn, _ = srv.accept()
        srv.close()
    else:
        deadline = time.monotonic() + 20
        while True:
            try:
                conn = socket.create_connection((host, port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.stderr.write("pipe_relay: cannot connect to %s:%d\n" % (host, port))
                    sys.exit(3)
                time.sleep(0.1)
        conn.settimeout(None)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def out(b):
        while b:
            b = b[os.write(1, b):]

    threading.Thread(target=pump, args=(conn.recv, out), daemon=True).start()
    pump(lambda n: os.read(0, n), conn.sendall)


if __name__ == "__main__":
    main()
