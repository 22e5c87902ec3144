# SPDX-License-Identifier: MIT
"""An independent TLS peer for tests/live/iface_tls_ws_test.c (stdlib ssl/socket only).

  serve CERT KEY            TLS 1.3 server on 127.0.0.1; prints "PORT n", then completes
                            handshakes with anyone (it serves certificates rnsc's own
                            server refuses to load, e.g. an expired one) until stdin closes.
  client PORT CAFILE NAME   connects to an rnsc TLSServerInterface, verifies it against
                            CAFILE for NAME, sends one HDLC frame, reads one HDLC frame
                            back and prints "RESULT ok <version> <hex of the frame>".
  client12 PORT CAFILE NAME the same offering TLS 1.2 at most: prints "RESULT refused
                            <reason>" when the server will not speak it.

Every output line is flushed at once; the process exits when stdin closes.
"""
import select
import socket
import ssl
import sys


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def serve(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    out("PORT %d" % ls.getsockname()[1])
    conns = []
    while True:
        r, _, _ = select.select([ls, sys.stdin], [], [], 30)
        if sys.stdin in r:
            if not sys.stdin.readline():
                break
        if ls in r:
            c, _ = ls.accept()
            c.settimeout(5)
            try:
                conns.append(ctx.wrap_socket(c, server_side=True))
                out("HANDSHAKE ok")
            except (ssl.SSLError, OSError) as e:
                out("HANDSHAKE failed %s" % e)
                c.close()
    for c in conns:
        c.close()


def hdlc(data):
    body = data.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")
    return b"\x7e" + body + b"\x7e"


def client(port, cafile, name, tls12=False):
    ctx = ssl.create_default_context(cafile=cafile)
    if tls12:
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    else:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    try:
        t = ctx.wrap_socket(s, server_hostname=name)
    except (ssl.SSLError, OSError) as e:
        out("RESULT refused %s" % e)
        sys.stdin.readline()
        return
    t.sendall(hdlc(bytes(range(100, 140)) + b"\x7e\x7d"))
    buf = b""
    while buf.count(b"\x7e") < 2 or len(buf) < 3:
        chunk = t.recv(4096)
        if not chunk:
            break
        buf += chunk
    frame = buf.strip(b"\x7e").split(b"\x7e")[0]
    frame = frame.replace(b"\x7d\x5e", b"\x7e").replace(b"\x7d\x5d", b"\x7d")
    out("RESULT ok %s %s" % (t.version(), frame.hex()))
    sys.stdin.readline()
    t.close()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3])
    else:
        client(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[1] == "client12")
