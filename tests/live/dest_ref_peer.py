# SPDX-License-Identifier: MIT
"""The reference's side of tests/live/dest_interop_test.sh (rnsc's: tests/live/dest_node_peer.c).

  send CONFIGDIR KEYHEX APPDEST     against dest_node_peer serve: path request to rnsclt.app
                                    (prints the announced app data), "prove-1" / "skip-1"
                                    (prints which were proved), "g-ref" to GROUP rnsclt.group,
                                    "p-ref" and "bye" to PLAIN rnsclt.plain, then "after-bye" to
                                    rnsclt.app and one more path request (answered or not)
  serve CONFIGDIR KEYHEX SECONDS    GROUP rnsclt.group (key KEYHEX) and PLAIN rnsclt.plain IN
                                    destinations; prints "dest <kind> <hex>", "rx <kind> <text>"

The GROUP destination is named by an identity made from the same 64 bytes (the reference
needs one for an OUT GROUP and gives an IN one without it a random one).
"""
import sys
import threading
import time

import RNS


def serve(configdir, key, seconds):
    RNS.Reticulum(configdir, loglevel=RNS.LOG_WARNING)
    g = RNS.Destination(RNS.Identity.from_bytes(key), RNS.Destination.IN, RNS.Destination.GROUP,
                        "rnsclt", "group")
    g.load_private_key(key)
    p = RNS.Destination(None, RNS.Destination.IN, RNS.Destination.PLAIN, "rnsclt", "plain")
    g.set_packet_callback(lambda d, pk: print(f"rx group {d.decode()}", flush=True))
    p.set_packet_callback(lambda d, pk: print(f"rx plain {d.decode()}", flush=True))
    print(f"dest group {g.hash.hex()}", flush=True)
    print(f"dest plain {p.hash.hex()}", flush=True)
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(0.1)
    return 0


def send(configdir, key, appdest):
    RNS.Reticulum(configdir, loglevel=RNS.LOG_WARNING)
    h = bytes.fromhex(appdest)
    time.sleep(1)
    seen = threading.Event()
    got = {}

    class Handler:
        aspect_filter = "rnsclt.app"
        receive_path_responses = True

        def received_announce(self, destination_hash, announced_identity, app_data):
            if destination_hash == h:
                got["app_data"] = app_data
                seen.set()

    RNS.Transport.register_announce_handler(Handler())

    def ask(tries):
        seen.clear()
        for _ in range(tries):
            RNS.Transport.request_path(h)
            if seen.wait(3):
                return True
        return False

    if not ask(5):
        print("no path", flush=True)
        return 1
    print(f"app_data={got['app_data'].decode() if got['app_data'] is not None else 'None'}",
          flush=True)
    out = RNS.Destination(RNS.Identity.recall(h), RNS.Destination.OUT, RNS.Destination.SINGLE,
                          "rnsclt", "app")
    receipts = {t: RNS.Packet(out, t.encode()).send() for t in ("prove-1", "skip-1")}
    end = time.time() + 6
    while time.time() < end and receipts["prove-1"].status == RNS.PacketReceipt.SENT:
        time.sleep(0.05)
    time.sleep(1)  # a wrong proof for skip-1 would be in by now
    for t, r in receipts.items():
        print(f"proof {t}={'yes' if r.status == RNS.PacketReceipt.DELIVERED else 'no'}",
              flush=True)
    g = RNS.Destination(RNS.Identity.from_bytes(key), RNS.Destination.OUT, RNS.Destination.GROUP,
                        "rnsclt", "group")
    g.load_private_key(key)
    p = RNS.Destination(None, RNS.Destination.OUT, RNS.Destination.PLAIN, "rnsclt", "plain")
    print(f"dest group {g.hash.hex()}", flush=True)
    print(f"dest plain {p.hash.hex()}", flush=True)
    RNS.Packet(g, b"g-ref").send()
    RNS.Packet(p, b"p-ref").send()
    time.sleep(0.5)
    RNS.Packet(p, b"bye").send()
    time.sleep(1)
    RNS.Packet(out, b"after-bye").send()
    print(f"path after removal={'yes' if ask(1) else 'no'}", flush=True)
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    key = bytes.fromhex(a[2])
    sys.exit(serve(a[1], key, float(a[3])) if a[0] == "serve" else send(a[1], key, a[3]))
