#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/live/iface_udp_test.c.

Runs the pinned reference's own UDPInterface class (RNS/Interfaces/UDPInterface.py)
without starting RNS.Reticulum: what its constructor needs from a running instance is
stubbed, and the Transport hook it calls is this script's callback. The interface is
then set up as Reticulum.py's post-init would (optimise_mtu, default IFAC size).

  iface_udp_peer.py unicast   listen on 127.0.0.1:<ephemeral>, forward to 127.0.0.1
  iface_udp_peer.py bcast     listen on 0.0.0.0:<ephemeral>, forward to 127.255.255.255
                              (lo's broadcast address: needs SO_BROADCAST both ways)

It prints "PORT <n>" (its listening port) and waits for "FORWARD <port>" on stdin
(the rnsc side's port), then prints "READY", sends the test frames (frame(i), the
same generator as the C test) and echoes every frame it receives. Once it has
received all of them it prints "RESULT ok <n>" (or "RESULT fail <why>"). It exits
when its stdin closes, or after 60 s. Reference log lines go to stderr.
"""
import sys
import threading

from RNS.Interfaces import UDPInterface

from iface_peer_common import EchoOwner, frames, say, stub_reference

# Up to HW_MTU (1064) + the default IFAC size (16): the largest datagram accepted.
LENGTHS = [20, 21, 22, 31, 63, 64, 100, 127, 128, 255, 256, 400, 500, 501, 511, 512,
           700, 1000, 1023, 1024, 1063, 1064, 1079, 1080]

EXPECTED = frames(LENGTHS)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("unicast", "bcast"):
        print(__doc__, file=sys.stderr)
        return 2
    stub_reference(quiet_panic=False)
    bcast = sys.argv[1] == "bcast"
    owner = EchoOwner(EXPECTED, ordered=False)
    iface = UDPInterface.UDPInterface(owner, {
        "name": "ref udp",
        "listen_ip": "0.0.0.0" if bcast else "127.0.0.1", "listen_port": 0,
        "forward_ip": "127.255.255.255" if bcast else "127.0.0.1", "forward_port": 0})
    iface.optimise_mtu()
    iface.ifac_size = iface.DEFAULT_IFAC_SIZE
    say("PORT %d" % iface.server.server_address[1])

    done = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.startswith("FORWARD "):
                iface.forward_port = int(line.split()[1])
                say("READY")
                for f in EXPECTED:
                    iface.process_outgoing(f)
        done.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    done.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
