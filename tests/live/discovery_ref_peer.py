# SPDX-License-Identifier: MIT
"""Reference programs on the public RNS API, for tests/live/discovery_interop_test.sh.

  discovery_ref_peer.py serve CONFIGDIR TIMEOUT
      Registers the SINGLE destination rnscdisc.owner and prints "dest <hex>" once its
      interfaces are online. It never announces: the only way another node learns the
      destination is by a path request reaching this one (which the reference answers
      with a path response). Runs until TIMEOUT seconds passed.
  discovery_ref_peer.py ask CONFIGDIR DEST TIMEOUT
      Waits for its interfaces to come online, requests a path to DEST once and waits up
      to TIMEOUT seconds for it. Prints "path hops=<n> via=<next hop hex>" and exits 0,
      or prints "no path" and exits 1.
"""
import sys
import time

import RNS


def online(deadline):
    while time.time() < deadline:
        ifs = [i for i in RNS.Transport.interfaces if getattr(i, "online", False)]
        if ifs:
            return True
        time.sleep(0.1)
    return False


def main():
    mode, configdir = sys.argv[1:3]
    RNS.Reticulum(configdir=configdir, loglevel=RNS.LOG_WARNING)
    if mode == "serve":
        timeout = float(sys.argv[3])
        end = time.time() + timeout
        ident = RNS.Identity()
        dest = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE,
                               "rnscdisc", "owner")
        if not online(end):
            print("not online", flush=True)
            return 1
        print("dest " + dest.hash.hex(), flush=True)
        while time.time() < end:
            time.sleep(0.2)
        return 0
    dest = bytes.fromhex(sys.argv[3])
    timeout = float(sys.argv[4])
    end = time.time() + timeout
    if not online(end):
        print("not online", flush=True)
        return 1
    time.sleep(0.5)  # the node's side of the connection is registered too
    RNS.Transport.request_path(dest)
    while time.time() < end:
        if RNS.Transport.has_path(dest):
            nh = RNS.Transport.next_hop(dest)
            print("path hops=%d via=%s" % (RNS.Transport.hops_to(dest), nh.hex() if nh else "-"),
                  flush=True)
            return 0
        time.sleep(0.1)
    print("no path", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
