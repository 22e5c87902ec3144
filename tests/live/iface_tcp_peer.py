#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/live/iface_tcp_test.c.

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

from RNS.Interfaces import TCPInterface

from iface_peer_common import EchoOwner, frames, say, stub_reference, wait_stdin

LENGTHS = [20, 21, 64, 100, 500, 1000, 4096, 16383, 16400]
EXPECTED = frames(LENGTHS)


def send_all(iface):
    for f in EXPECTED:
        iface.process_outgoing(f)


def on_spawned(iface):
    threading.Thread(target=send_all, args=(iface,), daemon=True).start()


def main():
    stub_reference(on_spawned=on_spawned)
    # Reticulum.py's post-init sets ifac_size = DEFAULT_IFAC_SIZE on every interface;
    # the client's read thread starts inside its constructor, so set it up front.
    TCPInterface.TCPClientInterface.ifac_size = TCPInterface.TCPClientInterface.DEFAULT_IFAC_SIZE
    owner = EchoOwner(EXPECTED)
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
    wait_stdin(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
