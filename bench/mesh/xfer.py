# SPDX-License-Identifier: MIT
"""The transfer workload of `rnsc bench mesh`: run inside a source node's namespace as its own
non-transport reference instance attached to that node's daemon (like the workload process),
it requests a path to a far node's destination 0 (rnscmesh.<node>.0, served by that node's
announcer.py), opens a link to it and sends SIZE seeded random bytes as one resource
(uncompressed, so the goodput is the mesh's), then prints one JSON line: path_s (path request
to answer), link_s (link request to established), transfer_s (resource offered to proved
complete), goodput_Bps, hops, size and the data's SHA-256 (the receiver logs its own, the
runner compares them).

usage: xfer.py CONFIGDIR NODE DEST_HASH SIZE SEED TIMEOUT
"""
import hashlib
import json
import random
import sys
import time

import RNS


def main():
    cfg, node, dh, size, seed, timeout = sys.argv[1:7]
    size, timeout = int(size), float(timeout)
    out = {"to": node, "destination": dh, "size": size, "ok": False}
    data = random.Random(int(seed)).randbytes(size)
    out["sha256"] = hashlib.sha256(data).hexdigest()
    RNS.Reticulum(configdir=cfg, loglevel=RNS.LOG_ERROR)
    h = bytes.fromhex(dh)
    end = time.monotonic() + timeout
    try:
        t0 = time.monotonic()
        if not RNS.Transport.has_path(h):
            RNS.Transport.request_path(h)
            while not RNS.Transport.has_path(h):
                if time.monotonic() > end:
                    raise TimeoutError("no path")
                time.sleep(0.02)
        out["path_s"] = round(time.monotonic() - t0, 3)
        out["hops"] = RNS.Transport.hops_to(h)
        ident = RNS.Identity.recall(h)
        dest = RNS.Destination(ident, RNS.Destination.OUT, RNS.Destination.SINGLE,
                               "rnscmesh", node, "0")
        t0 = time.monotonic()
        link = RNS.Link(dest)
        while link.status != RNS.Link.ACTIVE:
            if link.status == RNS.Link.CLOSED:
                raise RuntimeError("link closed before it was established")
            if time.monotonic() > end:
                raise TimeoutError("link not established")
            time.sleep(0.005)
        out["link_s"] = round(time.monotonic() - t0, 3)
        out["rtt_s"] = round(link.rtt, 4) if link.rtt else None
        t0 = time.monotonic()
        # Data above Resource.MAX_EFFICIENT_SIZE goes as several segments, each its own
        # Resource: the callback fires once, when the last one concludes (or one fails).
        done = []
        res = RNS.Resource(data, link, auto_compress=False, callback=done.append)
        while not done:
            if res.status in (RNS.Resource.FAILED, RNS.Resource.CORRUPT):
                raise RuntimeError(f"resource failed (status {res.status})")
            if time.monotonic() > end:
                raise TimeoutError(f"resource not complete ({res.get_progress() * 100:.0f}%)")
            time.sleep(0.005)
        if done[0].status != RNS.Resource.COMPLETE:
            raise RuntimeError(f"resource failed (status {done[0].status})")
        out["segments"] = done[0].total_segments
        el = time.monotonic() - t0
        out["transfer_s"] = round(el, 3)
        out["goodput_Bps"] = round(size / el)
        out["ok"] = True
        link.teardown()
        time.sleep(0.2)
    except Exception as e:
        out["error"] = str(e) or type(e).__name__
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
