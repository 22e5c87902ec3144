# SPDX-License-Identifier: MIT
"""The reference's side of tests/live/ratchet_interop_test.sh: the commands and output lines of
tests/live/ratchet_node_peer.c, on the pinned RNS.

  serve CONFIGDIR IDFILE RATCHETFILE SECONDS    (ENFORCE=1, RATCHET_INTERVAL=s)
  send CONFIGDIR DEST TEXT SECONDS [learn]      (NO_RATCHET=1: encrypt to the identity key)
  readfile IDFILE RATCHETFILE                   Destination._reload_ratchets on the file
  readremote STORAGEDIR DEST                    Identity.get_ratchet from STORAGEDIR/ratchets
"""
import os
import sys
import threading
import time
import types

import RNS


def rid(pub):
    return RNS.Identity._get_ratchet_id(pub).hex() if pub else "none"


def load_identity(path):
    if os.path.isfile(path):
        return RNS.Identity.from_file(path)
    ident = RNS.Identity()
    ident.to_file(path)
    return ident


def readfile(idfile, path):
    # The reference's own loader, on a stand-in for the Destination it reads into.
    me = types.SimpleNamespace(identity=RNS.Identity.from_file(idfile), ratchets=None,
                               ratchets_path=None, ratchet_file_lock=threading.Lock())
    me._persist_ratchets = lambda: None
    try:
        RNS.Destination._reload_ratchets(me, path)
    except Exception as e:
        print(f"file error={type(e).__name__}")
        return 1
    head = RNS.Identity._ratchet_public_bytes(me.ratchets[0]) if me.ratchets else None
    print(f"file n={len(me.ratchets)}" + (f" head={rid(head)}" if head else ""))
    return 0


def readremote(storage, dest):
    RNS.Reticulum.storagepath = storage
    r = RNS.Identity.get_ratchet(bytes.fromhex(dest))
    print(f"remote ratchet={rid(r)}")
    return 0 if r else 1


def serve(configdir, idfile, rfile, seconds):
    RNS.Reticulum(configdir, loglevel=RNS.LOG_WARNING)
    ident = load_identity(idfile)
    d = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE, "rnsclt", "ratchet")
    d.set_proof_strategy(RNS.Destination.PROVE_ALL)
    d.enable_ratchets(rfile)
    if os.environ.get("RATCHET_INTERVAL"):
        d.set_ratchet_interval(int(os.environ["RATCHET_INTERVAL"]))
    if os.environ.get("ENFORCE"):
        d.enforce_ratchets()

    def rx(data, packet):
        r = packet.ratchet_id.hex() if packet.ratchet_id else "none"
        print(f"rx {data.decode()} ratchet={r}", flush=True)

    d.set_packet_callback(rx)
    print(f"dest {d.hash.hex()}", flush=True)
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(0.1)
    return 0


def send(configdir, dest, text, seconds, learn):
    RNS.Reticulum(configdir, loglevel=RNS.LOG_WARNING)
    h = bytes.fromhex(dest)
    end = time.time() + seconds
    time.sleep(1)  # the TCP client interface connects
    if learn:
        seen = threading.Event()

        class Handler:
            aspect_filter = "rnsclt.ratchet"
            receive_path_responses = True

            def received_announce(self, destination_hash, announced_identity, app_data):
                if destination_hash == h:
                    seen.set()

        RNS.Transport.register_announce_handler(Handler())
        while not seen.is_set() and time.time() < end:
            RNS.Transport.request_path(h)
            seen.wait(3)
        if not seen.is_set():
            print("sent none: no announce", flush=True)
            return 1
    ident = RNS.Identity.recall(h)
    if ident is None:
        print("sent none: identity unknown", flush=True)
        return 1
    if os.environ.get("NO_RATCHET"):
        RNS.Identity.get_ratchet = staticmethod(lambda destination_hash: None)
    out = RNS.Destination(ident, RNS.Destination.OUT, RNS.Destination.SINGLE, "rnsclt", "ratchet")
    used = RNS.Identity.get_ratchet(h)
    receipt = RNS.Packet(out, text.encode()).send()
    # On a loaded machine the proof can come after the receipt's own first-hop timeout
    # (about 12 s here): the receipt lives, and is waited for, until the command's budget
    # ends. A proof that never comes still fails the check.
    receipt.set_timeout(max(receipt.timeout, end - time.time()))
    while receipt.status == RNS.PacketReceipt.SENT and time.time() < end:
        time.sleep(0.05)
    proved = receipt.status == RNS.PacketReceipt.DELIVERED
    print(f"sent ratchet={rid(used)} proved={'yes' if proved else 'no'}", flush=True)
    time.sleep(0.5)  # the ratchet persist thread
    return 0 if proved else 1


def main(a):
    if a[0] == "readfile":
        return readfile(a[1], a[2])
    if a[0] == "readremote":
        return readremote(a[1], a[2])
    if a[0] == "serve":
        return serve(a[1], a[2], a[3], float(a[4]))
    if a[0] == "send":
        return send(a[1], a[2], a[3], float(a[4]), len(a) > 5 and a[5] == "learn")
    return 2


if __name__ == "__main__":
    # A normal exit: the reference's exit handler saves known_destinations.
    sys.exit(main(sys.argv[1:]))
