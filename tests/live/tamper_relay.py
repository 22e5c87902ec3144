# SPDX-License-Identifier: MIT
"""A minimal transport relay for the raw wire driver's own test (tests/live/bench_driver_test.sh):
two HDLC-framed TCP servers, side a and side b, that carry what a Reticulum transport node
carries for scenario 6, and can damage one DATA frame on request.

  tamper_relay.py PORT_A PORT_B TAMPER FLAGFILE

- An announce (HEADER_1) arriving on one side goes out on the other as HEADER_2 with this
  relay's transport id and one more hop, so the driver learns the relay's id.
- A HEADER_2 DATA frame addressed through the relay leaves on the other side as HEADER_1
  (transport id removed, one more hop): the last hop to a directly attached destination.
- A HEADER_1 PROOF goes to the other side with one more hop.

TAMPER is none, corrupt (one payload byte flipped), dup (a frame sent twice), reorder (a
frame held back behind the next one in its direction) or drop. It applies once, to the first
DATA frame from side a after FLAGFILE exists, so the test arms it after the driver's warm-up.
Prints "tampered <kind>" on stdout when it did; exits when both connections have closed.
"""
import os
import selectors
import socket
import sys

FLAG, ESC, ESC_MASK = 0x7E, 0x7D, 0x20
RELAY_ID = bytes(range(0xA0, 0xB0))


def escape(b):
    return b.replace(bytes([ESC]), bytes([ESC, ESC ^ ESC_MASK])).replace(
        bytes([FLAG]), bytes([ESC, FLAG ^ ESC_MASK]))


def unescape(b):
    return b.replace(bytes([ESC, FLAG ^ ESC_MASK]), bytes([FLAG])).replace(
        bytes([ESC, ESC ^ ESC_MASK]), bytes([ESC]))


def frame(p):
    return bytes([FLAG]) + escape(p) + bytes([FLAG])


def main():
    port_a, port_b, tamper, flagfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    sel = selectors.DefaultSelector()
    listeners = {}
    for side, port in ((0, port_a), (1, port_b)):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", port))
        ls.listen(1)
        listeners[side] = ls
        sel.register(ls, selectors.EVENT_READ, ("listen", side))
    conns, bufs = {}, {0: b"", 1: b""}
    done, held = False, None
    seen_both = False

    def send(side, p):
        c = conns.get(side)
        if c is not None:
            c.sendall(frame(p))

    def carry(side, p):
        nonlocal done, held
        if len(p) < 19 or p[0] & 0x80:  # IFAC frames never appear here
            return
        htype, ptype, hops = (p[0] >> 6) & 1, p[0] & 3, p[1]
        out = 1 - side
        if ptype == 1 and htype == 0:  # ANNOUNCE: rebroadcast through this transport node
            send(out, bytes([0x40 | 0x10 | (p[0] & 0x0F), hops + 1]) + RELAY_ID + p[2:])
        elif ptype == 0 and htype == 1 and p[2:18] == RELAY_ID:  # DATA via the relay
            q = bytearray(bytes([p[0] & 0x0F, hops + 1]) + p[18:])
            if side == 0 and not done and tamper != "none" and os.path.exists(flagfile):
                done = True
                print(f"tampered {tamper}", flush=True)
                if tamper == "corrupt":
                    q[-1] ^= 0x01
                elif tamper == "dup":
                    send(out, bytes(q))
                elif tamper == "drop":
                    return
                elif tamper == "reorder":
                    held = bytes(q)
                    return
            send(out, bytes(q))
            if held is not None and side == 0:  # the held frame follows the next one
                send(out, held)
                held = None
        elif ptype == 3 and htype == 0:  # PROOF back to the source
            send(out, bytes([p[0], hops + 1]) + p[2:])

    while True:
        for key, _ in sel.select(timeout=1.0):
            kind, side = key.data
            if kind == "listen":
                c, _ = listeners[side].accept()
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conns[side] = c
                sel.register(c, selectors.EVENT_READ, ("conn", side))
                seen_both = seen_both or len(conns) == 2
                continue
            c = conns[side]
            got = c.recv(262144)
            if not got:
                sel.unregister(c)
                c.close()
                del conns[side]
                if seen_both and not conns:
                    return 0
                continue
            parts = (bufs[side] + got).split(bytes([FLAG]))
            bufs[side] = parts.pop()
            for part in parts:
                if part:
                    carry(side, unescape(part))


if __name__ == "__main__":
    sys.exit(main())
