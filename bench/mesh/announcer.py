# SPDX-License-Identifier: MIT
"""The workload process of one mesh node (`rnsc bench mesh`): a non-transport reference
instance attached to its node's daemon over a local TCP interface. It registers N SINGLE
destinations (aspects rnscmesh.<node>.<i>, one identity, proving every packet), writes their hashes to
<dir>/dests.json and announces all of them each time it receives SIGUSR1. The same program
serves rnsc and reference nodes, so the load is identical for both daemons. Destination 0 also
accepts links and every resource offered on them (the transfer workload, xfer.py): each
received resource's size and SHA-256 are appended to <dir>/received.jsonl.

usage: announcer.py CONFIGDIR NODE N
"""
import hashlib
import json
import os
import signal
import sys
import time

import RNS


def main():
    cfg, node, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    RNS.Reticulum(configdir=cfg, loglevel=RNS.LOG_ERROR)
    ident = RNS.Identity()
    dests = [RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE,
                             "rnscmesh", node, str(i)) for i in range(n)]
    for d in dests:  # so a probe (rnprobe rnscmesh.<node>.<i>) gets a proof back
        d.set_proof_strategy(RNS.Destination.PROVE_ALL)
    rx = os.path.join(cfg, "received.jsonl")

    def concluded(res):
        row = {"ok": res.status == RNS.Resource.COMPLETE, "t": time.time()}
        if row["ok"]:
            h, size = hashlib.sha256(), 0
            while True:
                b = res.data.read(65536)
                if not b:
                    break
                h.update(b)
                size += len(b)
            row.update({"size": size, "sha256": h.hexdigest()})
        with open(rx, "a") as f:
            f.write(json.dumps(row) + "\n")

    def link_up(link):
        link.set_resource_strategy(RNS.Link.ACCEPT_ALL)
        link.set_resource_concluded_callback(concluded)
    dests[0].set_link_established_callback(link_up)
    pending = []
    signal.signal(signal.SIGUSR1, lambda *_: pending.append(1))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    tmp = os.path.join(cfg, "dests.json.tmp")
    with open(tmp, "w") as f:
        json.dump([d.hash.hex() for d in dests], f)
    os.replace(tmp, os.path.join(cfg, "dests.json"))
    while True:
        if pending:
            pending.clear()
            for d in dests:
                d.announce()
            print(f"announced {len(dests)} at {time.time():.3f}", flush=True)
        time.sleep(0.05)


if __name__ == "__main__":
    main()
