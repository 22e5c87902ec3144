# SPDX-License-Identifier: MIT
"""Runs a reference program (a script path, or -m MODULE) with one timing hazard of the
reference made certain, for tests/live/interop_hazard_test.sh. Each hazard event is appended as
one line to the file named by HAZARD_LOG, so the test can prove the hazard really happened.

  HAZARD=adv_before_register   Resource.__advertise_job sends the advertisement, then
      registers the resource on the link: a part request that arrives in between is
      dropped and the receiver must ask again after its timeout. Here registration waits
      until a part request has come in and been dropped (at most HAZARD_DELAY s, default
      10), so the receiver's first request always falls in the gap. Logs "early_request"
      per request dropped so.
  HAZARD=slow_segment          The sender prepares the next segment in a thread while the
      current one is sent; when the proof of a segment comes first, validate_proof polls
      every 50 ms until it is ready. Here each preparation waits HAZARD_DELAY s (default
      1.5) first, so a fast receiver always meets the poll. Logs "poll_wait".
  HAZARD=withhold_proofs       The link packet proofs of the last HAZARD_K of HAZARD_N
      DATA packets on a link are not sent (the packets are still delivered and echoed).
      Logs "withheld <i>".
  HAZARD=count_link_ifaces     Logs "link <interface>" for every link DATA/PROOF packet
      that comes in, by receiving interface.

usage: hazard_ref_wrap.py SCRIPT ARGS...  |  hazard_ref_wrap.py -m MODULE ARGS...
"""
import os
import runpy
import sys
import threading
import time

import RNS

LOG = os.environ.get("HAZARD_LOG")
_lock = threading.Lock()


def log(line):
    if LOG:
        with _lock, open(LOG, "a") as f:
            f.write(line + "\n")


def adv_before_register():
    delay = float(os.environ.get("HAZARD_DELAY", "10"))
    state = {"gap": 0, "early": threading.Event()}
    orig_reg = RNS.Link.register_outgoing_resource
    orig_rx = RNS.Link.receive

    def reg(self, resource):
        state["gap"] += 1
        try:
            state["early"].clear()
            state["early"].wait(delay)  # until a part request has been dropped
            time.sleep(0.05)
            orig_reg(self, resource)
        finally:
            state["gap"] -= 1

    def rx(self, packet):
        early = packet.context == RNS.Packet.RESOURCE_REQ and state["gap"] > 0
        if early:
            log("early_request")
        r = orig_rx(self, packet)
        if early:
            state["early"].set()
        return r

    RNS.Link.register_outgoing_resource = reg
    RNS.Link.receive = rx


def slow_segment():
    delay = float(os.environ.get("HAZARD_DELAY", "1.5"))
    orig_prep = RNS.Resource._Resource__prepare_next_segment
    orig_val = RNS.Resource.validate_proof

    def prep(self):
        self.preparing_next_segment = True  # as the original does first: proofs now poll
        time.sleep(delay)
        return orig_prep(self)

    def val(self, proof_data):
        if (self.segment_index < self.total_segments and self.next_segment is None
                and self.preparing_next_segment):
            log("poll_wait")
        return orig_val(self, proof_data)

    RNS.Resource._Resource__prepare_next_segment = prep
    RNS.Resource.validate_proof = val


def withhold_proofs():
    k, n = int(os.environ["HAZARD_K"]), int(os.environ["HAZARD_N"])
    st = {"i": 0}
    orig = RNS.Packet.prove

    def prove(self, destination=None):
        if (self.destination_type == RNS.Destination.LINK and self.packet_type == RNS.Packet.DATA
                and self.context == RNS.Packet.NONE):
            i = st["i"]
            st["i"] += 1
            if i >= n - k:
                log("withheld %d" % i)
                return None
        return orig(self, destination)

    RNS.Packet.prove = prove


def count_link_ifaces():
    orig = RNS.Transport.inbound

    def inbound(raw, interface=None, *a, **kw):
        try:
            if len(raw) > 2 and (raw[0] >> 2) & 3 == 3 and raw[0] & 3 in (0, 3):
                log("link %s" % interface)
        except Exception:
            pass
        return orig(raw, interface, *a, **kw)

    RNS.Transport.inbound = staticmethod(inbound)


HAZARDS = {f.__name__: f for f in (adv_before_register, slow_segment, withhold_proofs,
                                   count_link_ifaces)}

if __name__ == "__main__":
    h = os.environ.get("HAZARD", "")
    if h not in HAZARDS or len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    HAZARDS[h]()
    if sys.argv[1] == "-m":
        sys.argv = [sys.argv[2]] + sys.argv[3:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
