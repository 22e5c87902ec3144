# SPDX-License-Identifier: MIT
"""A lossy UDP relay between two reference UDPInterfaces, for the reference-to-reference
pairing of the loss tests (tests/live/resource_loss_test.sh, tests/live/request_interop_test.sh with
LOSS): the same faults as rnsc's LossyInterface (plugins/iface/lossy.c), on a seeded RNG.

  lossy_udp_relay.py PORT_A PEER_A PORT_B PEER_B DROP DUP REORDER SEED LATENCY_MS [TIMEOUT
                     [SPARE]]

Datagrams arriving on 127.0.0.1:PORT_A go to 127.0.0.1:PEER_B and those on PORT_B go to
PEER_A (so peer A's UDPInterface forwards to PORT_A and listens on PEER_A). Per datagram, one
draw: below DROP per cent it is lost, below DROP + DUP it goes twice; a survivor draws again
and below REORDER per cent is held back until the next datagram in its direction (or 20 ms).
Every datagram is delayed LATENCY_MS. SPARE "setup" (default "none") lets path discovery and
link set-up through unharmed and without a draw, as LossyInterface's spare = setup: announces,
link requests, DATA to PLAIN destinations (path requests), link proofs (context LRPROOF) and
the RTT and identify packets (contexts LRRTT, LINKIDENTIFY); the header is read as the
reference lays it out, and a packet with the IFAC bit is never spared. Exits after TIMEOUT s
(default 600) or on SIGTERM, printing "relay <dir> packets=.. dropped=.. duplicated=..
reordered=.. spared=.." per direction.
"""
import heapq
import random
import select
import signal
import socket
import sys
import time


def is_setup(p):
    if len(p) < 19 or p[0] & 0x80:
        return False
    ptype, dtype = p[0] & 3, (p[0] >> 2) & 3
    cpos = 2 + (32 if p[0] & 0x40 else 16)
    if len(p) <= cpos:
        return False
    ctx = p[cpos]
    if ptype in (1, 2):  # ANNOUNCE, LINKREQUEST
        return True
    if ptype == 3:  # PROOF
        return ctx == 0xFF
    return dtype == 2 or ctx in (0xFE, 0xFB)


def main(a):
    port_a, peer_a, port_b, peer_b = (int(x) for x in a[:4])
    drop, dup, reorder = (float(x) for x in a[4:7])
    rng = random.Random(int(a[7]))
    lat = float(a[8]) / 1000.0
    end = time.time() + (float(a[9]) if len(a) > 9 else 600)
    spare = a[10] if len(a) > 10 else "none"
    if spare not in ("none", "setup"):
        print("SPARE must be none or setup", file=sys.stderr)
        sys.exit(2)
    sa = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sa.bind(("127.0.0.1", port_a))
    sb = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sb.bind(("127.0.0.1", port_b))
    # datagrams from A's side go out of sb to peer B, and the other way round
    route = {sa: (sb, ("127.0.0.1", peer_b), "a->b"), sb: (sa, ("127.0.0.1", peer_a), "b->a")}
    st = {d: {"packets": 0, "dropped": 0, "duplicated": 0, "reordered": 0, "spared": 0}
          for d in ("a->b", "b->a")}
    held = {}  # direction -> (datagram, release time)
    q = []     # (due, seq, out socket, address, datagram)
    seq = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def later(out, addr, data, delay):
        nonlocal seq
        seq += 1
        heapq.heappush(q, (time.time() + delay, seq, out, addr, data))

    while not stop and time.time() < end:
        now = time.time()
        for d, (data, rel, out, addr) in list(held.items()):
            if now >= rel:
                del held[d]
                later(out, addr, data, lat)
        while q and q[0][0] <= now:
            _, _, out, addr, data = heapq.heappop(q)
            try:
                out.sendto(data, addr)
            except OSError:
                pass
        timeout = 0.05
        if q:
            timeout = max(0.0, min(timeout, q[0][0] - now))
        r, _, _ = select.select([sa, sb], [], [], timeout)
        for s in r:
            try:
                data = s.recv(65535)
            except OSError:
                continue
            out, addr, d = route[s]
            c = st[d]
            c["packets"] += 1
            if spare == "setup" and is_setup(data):
                c["spared"] += 1
                later(out, addr, data, lat)
                if d in held:  # a held-back datagram goes after this one
                    hd = held.pop(d)
                    later(hd[2], hd[3], hd[0], lat)
                continue
            x = rng.random() * 100
            if x < drop:
                c["dropped"] += 1
                continue
            copies = 2 if x < drop + dup else 1
            if copies == 2:
                c["duplicated"] += 1
            if d in held:  # a held-back datagram goes after this one
                hd = held.pop(d)
                later(out, addr, data, lat)
                later(hd[2], hd[3], hd[0], lat)
                if copies == 2:
                    later(out, addr, data, lat)
                continue
            if rng.random() * 100 < reorder:
                c["reordered"] += 1
                held[d] = (data, time.time() + 0.02, out, addr)
                if copies == 2:
                    later(out, addr, data, lat)
                continue
            for _ in range(copies):
                later(out, addr, data, lat)
    for d, c in st.items():
        print("relay %s %s" % (d, " ".join("%s=%d" % kv for kv in c.items())), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 10:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1:])
