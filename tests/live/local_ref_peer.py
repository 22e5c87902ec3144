# SPDX-License-Identifier: MIT
"""A reference program on the public RNS API, for tests/live/local_interop_test.sh.

  local_ref_peer.py NAME CONFIGDIR PEERFILE OWNFILE TIMEOUT [--expect-shared] [--link]
      Starts RNS.Reticulum on CONFIGDIR (attached to a shared instance when one runs
      there; with --expect-shared that is required), registers the SINGLE destination
      rnsclocal.NAME (PROVE_ALL) that counts the packets it receives, writes its hash to
      OWNFILE and announces it every 2 s. Once PEERFILE holds the other side's hash it
      waits for a path (requesting one), sends 3 packets with receipts and waits for
      their proofs; with --link it also opens a link and sends one packet over it.
      Exits when 3 packets arrived and every receipt concluded (or on TIMEOUT).
      Prints "NAME shared=<0|1> sent=3 proved=<p> received=<r> link=<0|1>".
Exit status 0 only when everything arrived and every receipt was proved (counted from the
receipts' status: a proof can beat set_delivery_callback() over a local socket).
"""
import os
import sys
import time

import RNS


def main():
    name, configdir, peerfile, ownfile, timeout = sys.argv[1:6]
    expect_shared = "--expect-shared" in sys.argv
    use_link = "--link" in sys.argv
    timeout = float(timeout)
    r = RNS.Reticulum(configdir=configdir, loglevel=RNS.LOG_WARNING)
    shared = 1 if r.is_connected_to_shared_instance else 0
    if expect_shared and not shared:
        print("%s: not attached to a shared instance" % name, flush=True)
        return 2
    ident = RNS.Identity()
    dest = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE, "rnsclocal", name)
    dest.set_proof_strategy(RNS.Destination.PROVE_ALL)
    st = {"rx": 0, "proved": 0, "link": 0, "link_rx": 0}

    def on_packet(data, packet):
        if data.startswith(b"hello "):
            st["rx"] += 1

    dest.set_packet_callback(on_packet)

    def on_link(link):
        link.set_packet_callback(lambda d, p: st.__setitem__("link_rx", st["link_rx"] + 1))

    dest.set_link_established_callback(on_link)
    tmpf = ownfile + ".tmp"
    with open(tmpf, "w") as f:
        f.write(dest.hash.hex())
    os.rename(tmpf, ownfile)
    end = time.time() + timeout
    next_announce = 0
    peer = None
    sent = False
    link = None
    link_sent = False
    receipts = []
    next_pr = 0
    while time.time() < end:
        now = time.time()
        if now >= next_announce:
            dest.announce()
            next_announce = now + 2
        if peer is None and os.path.exists(peerfile):
            peer = bytes.fromhex(open(peerfile).read().strip())
        if peer is not None and not sent:
            if RNS.Transport.has_path(peer) and RNS.Identity.recall(peer):
                pid = RNS.Identity.recall(peer)
                pdest = RNS.Destination(pid, RNS.Destination.OUT, RNS.Destination.SINGLE,
                                        "rnsclocal", "a" if name == "b" else "b")
                if pdest.hash != peer:
                    pdest = None
                for i in range(3):
                    if pdest is None:
                        break
                    pk = RNS.Packet(pdest, ("hello %d from %s" % (i, name)).encode())
                    rc = pk.send()
                    if rc:
                        receipts.append(rc)
                sent = pdest is not None
                if sent and use_link:
                    link = RNS.Link(pdest)
            elif now >= next_pr:
                RNS.Transport.request_path(peer)
                next_pr = now + 3
        if link is not None and not link_sent and link.status == RNS.Link.ACTIVE:
            RNS.Packet(link, b"over the link").send()
            link_sent = True
            st["link"] = 1
        concluded = all(rc.status != RNS.PacketReceipt.SENT for rc in receipts)
        st["proved"] = sum(1 for rc in receipts if rc.status == RNS.PacketReceipt.DELIVERED)
        done = sent and concluded and st["rx"] >= 3 and (not use_link or link_sent)
        if done:
            time.sleep(1.0)  # let the peer finish with our proofs
            break
        time.sleep(0.1)
    print("%s shared=%d sent=%d proved=%d received=%d link=%d" % (
        name, shared, 3 if sent else 0, st["proved"], st["rx"], st["link"]), flush=True)
    ok = sent and st["proved"] >= 3 and st["rx"] >= 3 and (not use_link or link_sent)
    if link is not None:
        link.teardown()
        time.sleep(0.3)
    return 0 if ok else 1


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    os._exit(rc)
