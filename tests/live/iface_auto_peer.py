#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interop peer for tests/live/iface_auto_test.sh (run inside a network namespace).

Runs the pinned reference's own AutoInterface class (RNS/Interfaces/AutoInterface.py)
without starting RNS.Reticulum: what its constructor needs from a running instance is
stubbed and Transport's inbound hook is this script's Owner. It is given one device
(devices = DEV) and calls final_init() as Reticulum.py does after creating it.

  iface_auto_peer.py echo  DEV[,DEV2]  echo every frame back through the peer it came from
  iface_auto_peer.py drive DEV   wait for a peer, send the test frames (resending the
                                 unanswered ones every 1.5 s), check the echoes are
                                 byte-exact; check the other side drops a frame
                                 sent twice at once (and not one resent after the
                                 0.75 s window); then wait for the peer to time out

The protocol on stdout is the same as tests/live/iface_auto_node's: "PEER <name>",
"ECHO ok <n>" / "ECHO fail <why>", "DEDUP ok" / "DEDUP fail <why>" (drive only),
"TIMEOUT ok" / "TIMEOUT fail". Every wait is
bounded; the exit status is 0 only when every step passed. Reference logs: stderr.
"""
import sys
import threading
import time
from collections import deque

import RNS
from RNS.Interfaces import AutoInterface

# Up to HW_MTU (1196) + the default IFAC size (16). Same list as iface_auto_node.c.
LENGTHS = [20, 21, 22, 31, 63, 64, 100, 127, 128, 255, 256, 400, 500, 501, 511, 512,
           700, 1000, 1023, 1024, 1064, 1100, 1195, 1196, 1211, 1212]


def frame(i):
    b = bytearray(((i * 31 + j * 7) & 0xFF) for j in range(LENGTHS[i]))
    b[1], b[2], b[3] = 0x7E, 0x7D, 0x5E
    return bytes(b)


EXPECTED = [frame(i) for i in range(len(LENGTHS))]
lock = threading.Lock()
got = set()
bad = []
DUP = bytes([0x55]) * 10 + bytes(range(200))  # not one of EXPECTED
dup_echoes = 0
echo_mode = False


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class _Instance:
    def __getattr__(self, name):
        if name.startswith("_default_"):
            return lambda: None
        raise AttributeError(name)


class Owner:
    def inbound(self, data, iface):
        data = bytes(data)
        if echo_mode:
            iface.process_outgoing(data)
            return
        global dup_echoes
        with lock:
            if data == DUP:
                dup_echoes += 1
            elif data in EXPECTED:
                got.add(EXPECTED.index(data))
            else:
                bad.append(len(data))


def wait(pred, secs):
    end = time.time() + secs
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def main():
    global echo_mode
    if len(sys.argv) < 3 or sys.argv[1] not in ("echo", "drive"):
        print(__doc__, file=sys.stderr)
        return 2
    RNS.logdest = RNS.LOG_CALLBACK
    RNS.logcall = lambda s: print(s, file=sys.stderr, flush=True)
    RNS.loglevel = RNS.LOG_DEBUG
    RNS.Reticulum.get_instance = staticmethod(lambda: _Instance())
    RNS.Reticulum.panic_on_interface_error = False
    echo_mode = sys.argv[1] == "echo"
    # "a,b": two devices, a list as ConfigObj would give for "devices = a, b"
    devs = sys.argv[2].split(",")
    iface = AutoInterface.AutoInterface(Owner(), {"name": "ref auto",
                                                  "devices": devs if len(devs) > 1 else devs[0]})
    iface.ifac_size = iface.DEFAULT_IFAC_SIZE
    # What Reticulum.py's interface set-up gives every interface and add_peer() copies
    # to each spawned peer (no IFAC, no announce rate limits).
    for attr in ("ifac_netname", "ifac_netkey", "announce_rate_target",
                 "announce_rate_grace", "announce_rate_penalty"):
        if not hasattr(iface, attr):
            setattr(iface, attr, None)
    iface.mode = RNS.Interfaces.Interface.Interface.MODE_FULL
    iface.gravity = getattr(iface, "gravity", None)
    iface.final_init()

    if not wait(lambda: len(iface.spawned_interfaces) > 0, 20):
        say("PEER none")
        return 1
    peer = list(iface.spawned_interfaces.values())[0]
    say("PEER %s" % peer)
    if echo_mode:
        wait(lambda: False, 120)
        return 0

    end = time.time() + 20
    while time.time() < end:
        with lock:
            missing = [i for i in range(len(EXPECTED)) if i not in got]
        if not missing:
            break
        for i in missing:
            peer.process_outgoing(EXPECTED[i])
        wait(lambda: len(got) == len(EXPECTED), 1.5)
    with lock:
        if bad:
            say("ECHO fail foreign frames of lengths %s" % bad)
            return 1
        if len(got) != len(EXPECTED):
            say("ECHO fail missing %s" % [i for i in range(len(EXPECTED)) if i not in got])
            return 1
    say("ECHO ok %d" % len(got))

    # The echoing side must drop the second copy of a frame arriving within 0.75 s
    # (the multi-interface filter), and accept it again later. Our own filter is
    # switched off for this, so each echo the other side sends is counted.
    class NeverSeen(deque):
        def __contains__(self, item):
            return False
    iface.mif_deque = NeverSeen(maxlen=AutoInterface.AutoInterface.MULTI_IF_DEQUE_LEN)
    peer.process_outgoing(DUP)
    peer.process_outgoing(DUP)
    wait(lambda: False, 1.2)
    first = dup_echoes
    peer.process_outgoing(DUP)
    wait(lambda: dup_echoes > first, 3)
    time.sleep(0.3)
    if first == 1 and dup_echoes == 2:
        say("DEDUP ok")
    else:
        say("DEDUP fail %d echoes of a doubled frame, %d after a resend" % (first, dup_echoes - first))
        return 1
    # 22 s peering timeout, checked every 4 s
    if wait(lambda: len(iface.spawned_interfaces) == 0, 40):
        say("TIMEOUT ok")
        return 0
    say("TIMEOUT fail")
    return 1


if __name__ == "__main__":
    sys.exit(main())
