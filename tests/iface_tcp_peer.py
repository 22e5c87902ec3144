#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/iface_tcp_test.c.

Runs the pinned reference's own TCPServerInterface / TCPClientInterface classes
(RNS/Interfaces/TCPInterface.py) without starting RNS.Reticulum: the few things
their constructors need from a running instance are stubbed, and the Transport
hooks they call are replaced by this script's callbacks. The interface is then set
up as Reticulum.py's post-init would (optimise_mtu, default IFAC size).

  iface_tcp_peer.py server          listen on 127.0.0.1:<ephemeral>; print "PORT <n>"
  iface_tcp_peer.py client <port>   connect to 127.0.0.1:<port>

Once connected the peer sends the test frames (frame(i) for every i, the same
generator as the C test) and echoes every frame it receives. When it has received
all of them it prints "RESULT ok <n>" (or "RESULT fail <why>"). It exits when its
stdin closes, or after 60 s. Reference log lines go to stderr so stdout stays clean.
"""
import sys
import threading

import RNS
from RNS.Interfaces import TCPInterface

LENGTHS = [20, 21, 64, 100, 500, 1000, 4096, 16383, 16400]


def frame(i):
    b = bytearray(((i * 31 + j * 7) & 0xFF) for j in range(LENGTHS[i]))
    b[1], b[2], b[3] = 0x7E, 0x7D, 0x5E  # bytes that need escaping, and a lookalike
    return bytes(b)


EXPECTED = [frame(i) for i in range(len(LENGTHS))]
received = []
lock = threading.Lock()
out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class _Instance:
    """Stands in for Reticulum.get_instance(): Interface.__init__ asks it for defaults."""

    def __getattr__(self, name):
        if name.startswith("_default_"):
            return lambda: None
        raise AttributeError(name)


def stub_reference():
    RNS.logdest = RNS.LOG_CALLBACK
    RNS.logcall = lambda s: print(s, file=sys.stderr, flush=True)
    RNS.loglevel = RNS.LOG_DEBUG
    RNS.Reticulum.get_instance = staticmethod(lambda: _Instance())
    RNS.Reticulum.panic_on_interface_error = False
    RNS.Transport.add_interface = staticmethod(on_spawned)
    RNS.Transport.remove_interface = staticmethod(lambda iface: None)
    RNS.Transport.synthesize_tunnel = staticmethod(lambda iface: None)
    # Reticulum.py's post-init sets ifac_size = DEFAULT_IFAC_SIZE on every interface;
    # the client's read thread starts inside its constructor, so set it up front.
    TCPInterface.TCPClientInterface.ifac_size = TCPInterface.TCPClientInterface.DEFAULT_IFAC_SIZE


def send_all(iface):
    for f in EXPECTED:
        iface.process_outgoing(f)


class Owner:
    """The owner the interfaces report to (RNS.Transport in the reference)."""

    def inbound(self, data, iface):
        iface.process_outgoing(data)  # echo, framed by the reference
        with lock:
            received.append(bytes(data))
            if len(received) == len(EXPECTED):
                if received == EXPECTED:
                    say("RESULT ok %d" % len(received))
                else:
                    bad = [i for i, (a, b) in enumerate(zip(received, EXPECTED)) if a != b]
                    say("RESULT fail frames %s differ" % bad)


def on_spawned(iface):
    threading.Thread(target=send_all, args=(iface,), daemon=True).start()


def main():
    stub_reference()
    owner = Owner()
    if len(sys.argv) >= 2 and sys.argv[1] == "server":
        srv = TCPInterface.TCPServerInterface(
            owner, {"name": "ref server", "listen_ip": "127.0.0.1", "listen_port": 0})
        srv.optimise_mtu()
        # The rest of what Reticulum.py's post-init gives an interface without IFAC,
        # which incoming_connection copies to every spawned client.
        srv.ifac_size = srv.DEFAULT_IFAC_SIZE
        srv.ifac_netname = srv.ifac_netkey = None
        srv.announce_rate_target = srv.announce_rate_grace = None
        srv.announce_rate_penalty = None
        say("PORT %d" % srv.server.server_address[1])
    elif len(sys.argv) >= 3 and sys.argv[1] == "client":
        cli = TCPInterface.TCPClientInterface(
            owner, {"name": "ref client", "target_host": "127.0.0.1",
                    "target_port": int(sys.argv[2])})
        cli.optimise_mtu()
        if not cli.online:
            say("RESULT fail not connected")
        else:
            say("CONNECTED")
            on_spawned(cli)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    done = threading.Event()

    def wait_stdin():
        sys.stdin.read()
        done.set()

    threading.Thread(target=wait_stdin, daemon=True).start()
    done.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
