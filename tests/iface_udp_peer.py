#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/iface_udp_test.c.

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

import RNS
from RNS.Interfaces import UDPInterface

# Up to HW_MTU (1064) + the default IFAC size (16): the largest datagram accepted.
LENGTHS = [20, 21, 22, 31, 63, 64, 100, 127, 128, 255, 256, 400, 500, 501, 511, 512,
           700, 1000, 1023, 1024, 1063, 1064, 1079, 1080]


def frame(i):
    b = bytearray(((i * 31 + j * 7) & 0xFF) for j in range(LENGTHS[i]))
    b[1], b[2], b[3] = 0x7E, 0x7D, 0x5E
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


class Owner:
    """The owner the interface reports to (RNS.Transport in the reference)."""

    iface = None

    def inbound(self, data, iface):
        iface.process_outgoing(data)  # echo
        with lock:
            received.append(bytes(data))
            if len(received) == len(EXPECTED):
                # Datagrams carry no order guarantee: compare as multisets.
                if sorted(received) == sorted(EXPECTED):
                    say("RESULT ok %d" % len(received))
                else:
                    bad = [i for i, f in enumerate(EXPECTED) if f not in received]
                    say("RESULT fail frames %s missing" % bad)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("unicast", "bcast"):
        print(__doc__, file=sys.stderr)
        return 2
    stub_reference()
    bcast = sys.argv[1] == "bcast"
    owner = Owner()
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
