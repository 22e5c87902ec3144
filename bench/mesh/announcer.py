# SPDX-License-Identifier: MIT
"""The workload process of one mesh node (`rnsc bench mesh`): a non-transport reference
instance attached to its node's daemon over a local TCP interface. It registers N SINGLE
destinations (aspects rnscmesh.<node>.<i>, one identity, proving every packet), writes their hashes to
<dir>/dests.json and announces all of them each time it receives SIGUSR1. The same program
serves rnsc and reference nodes, so the load is identical for both daemons.

usage: announcer.py CONFIGDIR NODE N
"""
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
