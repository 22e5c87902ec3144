# SPDX-License-Identifier: MIT
"""The path-request storm of `rnsc bench mesh --storm N` (the driver side).

A storm driver is a local client of a node's shared instance (the abstract Unix socket
"\\0rns/default" of the node's network namespace, HDLC-framed as the reference's
LocalInterface), written here without a Reticulum instance so that a hundred of them cost a
hundred sockets rather than a hundred Python stacks. For every requesting node it writes, all
at once, one path request per target destination, exactly as a non-transport client of a
shared instance sends it (Transport.request_path: DATA, HEADER_1, BROADCAST, to the PLAIN
destination rnstransport.path.request, data = destination hash + 16-byte random tag), and
then reads what the daemon passes back: the first announce for a target (the path response
the daemon forwards to its local clients once its path table has the destination again)
answers it. Path requests the daemon forwards to its local clients (requests from the mesh
for destinations it has no path to) are counted and ignored.

Usage from the runner: Storm(requests).run(timeout) with requests = {key: (netns, [hex
destination hashes])}; returns per key the seconds from the write to each answer.
"""
import hashlib
import os
import selectors
import socket
import time

FLAG, ESC, ESC_MASK = 0x7E, 0x7D, 0x20
PKT_DATA, PKT_ANNOUNCE = 0x00, 0x01


def pr_destination():
    """Hash of the PLAIN destination rnstransport.path.request (Destination.hash with no
    identity: the truncated hash of the name hash)."""
    name_hash = hashlib.sha256(b"rnstransport.path.request").digest()[:10]
    return hashlib.sha256(name_hash).digest()[:16]


PR_DEST = pr_destination()


def hdlc(frame):
    esc = frame.replace(bytes([ESC]), bytes([ESC, ESC ^ ESC_MASK]))
    esc = esc.replace(bytes([FLAG]), bytes([ESC, FLAG ^ ESC_MASK]))
    return bytes([FLAG]) + esc + bytes([FLAG])


def unhdlc(chunk):
    chunk = chunk.replace(bytes([ESC, FLAG ^ ESC_MASK]), bytes([FLAG]))
    return chunk.replace(bytes([ESC, ESC ^ ESC_MASK]), bytes([ESC]))


def path_request(dest):
    """The frame a client of a shared instance sends for Transport.request_path(dest):
    flags 0x08 (HEADER_1, BROADCAST, PLAIN, DATA), hops 0, the request destination, context
    NONE, then the requested hash and a random tag (no transport id: the client has transport
    off)."""
    return bytes([0x08, 0]) + PR_DEST + b"\x00" + dest + os.urandom(16)


def parse(frame):
    """(packet type, destination hash) of a frame, or None if it is too short."""
    if len(frame) < 19:
        return None
    flags = frame[0]
    off = 18 if flags & 0x40 else 2  # HEADER_2 carries a transport id first
    if len(frame) < off + 17:
        return None
    return flags & 0x03, frame[off:off + 16]


class Storm:
    def __init__(self, requests, ns_enter):
        """requests: {key: (netns, [hex hashes])}; ns_enter(netns) is a context manager that
        runs the calling thread in that namespace (so the abstract socket resolves there)."""
        self.requests = requests
        self.ns_enter = ns_enter

    def run(self, timeout, on_sent=None):
        sel = selectors.DefaultSelector()
        state = {}
        try:
            for key, (ns, targets) in self.requests.items():
                with self.ns_enter(ns):  # an abstract socket belongs to its creator's netns
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect("\0rns/default")
                s.setblocking(False)
                state[key] = {"sock": s, "buf": b"", "pending": {bytes.fromhex(h): h for h in targets},
                              "answered": {}, "forwarded_prs": 0, "announces": 0}
                sel.register(s, selectors.EVENT_READ, key)
            # every request of every node at once: one write per node
            t0 = time.monotonic()
            for key, st in state.items():
                data = b"".join(hdlc(path_request(d)) for d in st["pending"])
                st["sock"].setblocking(True)
                st["sock"].sendall(data)
                st["sock"].setblocking(False)
                st["t0"] = time.monotonic()
            if on_sent:
                on_sent()
            end = t0 + timeout
            while time.monotonic() < end and any(st["pending"] for st in state.values()):
                for sk, _ in sel.select(timeout=0.2):
                    st = state[sk.data]
                    try:
                        got = st["sock"].recv(65536)
                    except BlockingIOError:
                        continue
                    if not got:
                        sel.unregister(st["sock"])
                        st["closed"] = True
                        continue
                    now = time.monotonic()
                    st["buf"] += got
                    parts = st["buf"].split(bytes([FLAG]))
                    st["buf"] = parts.pop()  # an unfinished frame stays
                    for p in parts:
                        if not p:
                            continue
                        pk = parse(unhdlc(p))
                        if pk is None:
                            continue
                        ptype, dest = pk
                        if ptype == PKT_ANNOUNCE:
                            st["announces"] += 1
                            h = st["pending"].pop(dest, None)
                            if h is not None:
                                st["answered"][h] = round(now - st["t0"], 4)
                        elif ptype == PKT_DATA and dest == PR_DEST:
                            st["forwarded_prs"] += 1
            return {key: {"answered": st["answered"], "unanswered": sorted(st["pending"].values()),
                          "forwarded_prs": st["forwarded_prs"], "announces": st["announces"],
                          "disconnected": bool(st.get("closed"))}
                    for key, st in state.items()}
        finally:
            for st in state.values():
                try:
                    st["sock"].close()
                except OSError:
                    pass
            sel.close()
