# SPDX-License-Identifier: MIT
"""Traffic for tests/live/stats_interop_test.sh: one reference instance with a TCP client
interface to each daemon sends the same frames to both (every packet goes out on every
interface): PLAIN packets at a steady rate, an announce every 2 s and path requests for
the daemons' probe destinations, for DURATION seconds.
Usage: stats_traffic.py CONFIGDIR DURATION RATE PROBE_HASH...   Prints "sent N" at the end."""
import sys
import time

import RNS

cfgdir, duration, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
probes = [bytes.fromhex(h) for h in sys.argv[4:]]
r = RNS.Reticulum(configdir=cfgdir, loglevel=RNS.LOG_WARNING)
deadline = time.time() + 20
while time.time() < deadline and not all(i.online for i in RNS.Transport.interfaces
                                         if "TCPClient" in type(i).__name__):
    time.sleep(0.1)
ident = RNS.Identity()
sink = RNS.Destination(None, RNS.Destination.OUT, RNS.Destination.PLAIN, "rnsctest", "stats")
me = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE, "rnsctest", "traffic")
payload = bytes(range(256))[:240]
sent, start, last_announce, last_pr = 0, time.time(), 0.0, 0.0
step = 1.0 / rate
nxt = start
while time.time() < start + duration:
    now = time.time()
    if now - last_announce >= 2.0:
        me.announce(app_data=b"stats test")
        last_announce = now
    if now - last_pr >= 1.0:
        for p in probes:
            RNS.Transport.request_path(p)
        last_pr = now
    RNS.Packet(sink, payload, create_receipt=False).send()
    sent += 1
    nxt += step
    time.sleep(max(0.0, nxt - time.time()))
time.sleep(0.5)
print("sent", sent, flush=True)
r.exit_handler() if hasattr(r, "exit_handler") else None
