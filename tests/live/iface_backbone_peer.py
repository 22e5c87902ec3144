#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/live/iface_backbone_test.c.

Runs the pinned reference's own BackboneInterface / BackboneClientInterface classes
(RNS/Interfaces/BackboneInterface.py; Linux only, the reference refuses other
platforms) without starting RNS.Reticulum: what their constructors need from a running
instance is stubbed, and the Transport hooks they call are this script's callbacks.
The interfaces are then set up as Reticulum.py's post-init would (optimise_mtu,
default IFAC size, no IFAC, no announce rate limits).

  iface_backbone_peer.py server          listen on 127.0.0.1:<ephemeral>; print "PORT <n>"
  iface_backbone_peer.py client <port>   connect to 127.0.0.1:<port>

Once its interface is online it prints "ONLINE" (the reference drops frames that
arrive before that: the C side waits for the line), sends the test frames (frame(i), the same generator as the C
test) and echoes every frame it receives. When it has received all of them it prints
"RESULT ok <n>" (or "RESULT fail <why>"). It exits when its stdin closes, or after
60 s. Reference log lines go to stderr so stdout stays clean.
"""
import sys
import threading
import time

import RNS
from RNS.Interfaces import BackboneInterface as BB

from iface_peer_common import EchoOwner, frames, say, stub_reference, wait_stdin

# Up to HW_MTU (32768 at the 100 Mbit/s guess) + the default IFAC size (16).
LENGTHS = [20, 21, 64, 100, 500, 1000, 1064, 4096, 16383, 16400, 32767, 32768, 32784]
EXPECTED = frames(LENGTHS)


def stub_backbone():
    stub_reference(on_spawned=on_spawned)
    # Reticulum.__init__ derives the ingress-control water marks from the data queue
    # length; the reference's control thread needs them.
    dql = RNS.Transport.INBOUND_DA_QUEUE_LENGTH
    BB.BackboneInterface.DP_IC_HIGH_WM = max(4, int((BB.BackboneInterface.DP_IC_HIGH_WM_PCT / 100.0) * dql))
    BB.BackboneInterface.DP_IC_MID_WM = max(2, int((BB.BackboneInterface.DP_IC_MID_WM_PCT / 100.0) * dql))
    BB.BackboneInterface.DP_IC_LOW_WM = max(0, int((BB.BackboneInterface.DP_IC_LOW_WM_PCT / 100.0) * dql))
    # The client's reader sees frames as soon as its constructor has connected, before
    # the post-init below; give the class the IFAC size it would get there.
    BB.BackboneClientInterface.ifac_size = BB.BackboneClientInterface.DEFAULT_IFAC_SIZE


def send_all(iface):
    for f in EXPECTED:
        iface.process_outgoing(f)


def on_spawned(iface):
    def run():
        # The reference drops frames in both directions until the interface is online,
        # which for a spawned one happens only after Transport.add_interface returns
        # (and for a client at the end of its constructor): wait, then tell the C side
        # it may send.
        for _ in range(1000):
            if iface.online:
                break
            time.sleep(0.01)
        say("ONLINE" if iface.online else "RESULT fail never online")
        send_all(iface)
    threading.Thread(target=run, daemon=True).start()


def post_init(iface):
    iface.optimise_mtu()
    iface.ifac_size = iface.DEFAULT_IFAC_SIZE
    iface.ifac_netname = iface.ifac_netkey = None
    iface.announce_rate_target = iface.announce_rate_grace = None
    iface.announce_rate_penalty = None


def main():
    stub_backbone()
    owner = EchoOwner(EXPECTED)
    if len(sys.argv) >= 2 and sys.argv[1] == "server":
        srv = BB.BackboneInterface(
            owner, {"name": "ref backbone", "listen_ip": "127.0.0.1", "listen_port": 0})
        post_init(srv)
        port = [s.getsockname()[1] for (i, s) in BB.BackboneInterface.listener_filenos.values()
                if i is srv]
        say("PORT %d" % port[0])
    elif len(sys.argv) >= 3 and sys.argv[1] == "client":
        cli = BB.BackboneClientInterface(
            owner, {"name": "ref client", "target_host": "127.0.0.1",
                    "target_port": int(sys.argv[2])})
        post_init(cli)
        if not cli.online:
            say("RESULT fail not connected")
        else:
            on_spawned(cli)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    wait_stdin(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
