#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/live/iface_serial_test.c.

Runs the pinned reference's own SerialInterface or KISSInterface class
(RNS/Interfaces/SerialInterface.py, KISSInterface.py; pyserial underneath) on a
serial device path (a pseudo-terminal the C test created), without starting
RNS.Reticulum: the few things the constructors need from a running instance are
stubbed, and the owner (RNS.Transport in the reference) is this script.

  iface_serial_peer.py serial|kiss <port> [key=value ...]

The extra key=value pairs go into the interface's configuration (preamble=500 ...).
Once the constructor has returned (the port is open and, for KISS, configured) it
prints "ONLINE". On "SEND\\n" from stdin it sends the test frames (frame(i), the
same generator as the C test); every frame it receives is echoed, and once all
test frames have arrived it prints "RESULT ok <n>" (or "RESULT fail <why>"). It
exits when its stdin closes, or after 90 s. Without pyserial it prints
"RESULT fail pyserial missing" and exits 3: the C test then fails, never skips.
"""
import sys
import threading

from iface_peer_common import EchoOwner, frames, say, stub_reference

LENGTHS = [20, 21, 64, 100, 255, 256, 500, 563, 564]

# Bytes that need escaping in HDLC and in KISS, and lookalikes.
EXPECTED = frames(LENGTHS, marks=(0x7E, 0x7D, 0x5E, 0xC0, 0xDB, 0xDC))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("serial", "kiss"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import serial  # noqa: F401  (the reference imports it inside its constructors)
    except ImportError:
        say("RESULT fail pyserial missing (pip install -r interop/requirements.txt)")
        return 3
    stub_reference()
    from RNS.Interfaces import KISSInterface, SerialInterface

    config = {"name": "ref " + sys.argv[1], "port": sys.argv[2], "speed": "115200"}
    for kv in sys.argv[3:]:
        k, v = kv.split("=", 1)
        config[k] = v
    cls = KISSInterface.KISSInterface if sys.argv[1] == "kiss" else SerialInterface.SerialInterface
    iface = cls(EchoOwner(EXPECTED), config)
    iface.optimise_mtu()
    iface.ifac_size = iface.DEFAULT_IFAC_SIZE
    if not iface.online:
        say("RESULT fail not online")
    else:
        say("ONLINE")
    done = threading.Event()

    def commands():
        for line in sys.stdin:
            if line.strip() == "SEND":
                for f in EXPECTED:
                    iface.process_outgoing(f)
        done.set()

    threading.Thread(target=commands, daemon=True).start()
    done.wait(90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
