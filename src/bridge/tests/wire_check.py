# SPDX-License-Identifier: MIT
"""wire_* commands of rnsc-conformance-bridge against the reference: two live instances on
loopback TCP (rnsc bridge or wire_ref_peer.py on the pinned rns) in every pairing, with
announces, path discovery, recall, a link with data, and IFAC (matching and mismatched).
Usage: wire_check.py <rnsc bridge> <python> <wire_ref_peer.py>"""
import json
import os
import subprocess
import sys
import time

BRIDGE, PY, REFPEER = sys.argv[1:4]
failures = []


class Peer:
    def __init__(self, impl):
        self.impl = impl
        cmd = [BRIDGE] if impl == "rnsc" else [PY, REFPEER]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        line = self.p.stdout.readline().strip()
        if line != "READY":
            raise RuntimeError(f"{impl}: no READY (got {line!r})")
        self.n = 0
        self.handle = None

    def x(self, command, **params):
        self.n += 1
        if self.handle and "handle" not in params and command not in (
                "wire_start_tcp_server", "wire_start_tcp_client"):
            params["handle"] = self.handle
        self.p.stdin.write(json.dumps({"id": str(self.n), "command": command,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.impl}: bridge closed stdout at {command}")
        r = json.loads(line)
        if not r.get("success"):
            raise RuntimeError(f"{self.impl} {command}: {r.get('error')}")
        return r["result"]

    def close(self):
        try:
            self.p.stdin.close()
            rc = self.p.wait(timeout=20)
        except Exception:
            self.p.kill()
            self.p.wait()
            rc = "killed after 20 s"
        # a clean exit proves no crash at shutdown (and, under the sanitizers, no leak)
        if self.impl == "rnsc":
            check("rnsc bridge exits 0 at end of input", rc == 0, f"exit {rc}")


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + (f" ({detail})" if detail and not cond else ""))
    if not cond:
        failures.append(name)


def pair(server_impl, client_impl, netname="", passphrase="", client_netname=None):
    s, c = Peer(server_impl), Peer(client_impl)
    r = s.x("wire_start_tcp_server", network_name=netname, passphrase=passphrase)
    s.handle = r["handle"]
    cn = netname if client_netname is None else client_netname
    r2 = c.x("wire_start_tcp_client", network_name=cn, passphrase=passphrase,
             target_host="127.0.0.1", target_port=r["port"])
    c.handle = r2["handle"]
    check(f"{server_impl}-to-{client_impl}: start answers a 16-byte identity hash",
          len(r["identity_hash"]) == 32 and len(r2["identity_hash"]) == 32)
    return s, c


def wait_connected(c, s):
    """Both sides up: the client announces until the server learns a path (a TCP client
    connects asynchronously, so the first announce may leave before the socket is up)."""
    for _ in range(20):
        a = c.x("wire_announce", app_name="wirecheck", aspects=["probe"])
        if s.x("wire_poll_path", destination_hash=a["destination_hash"], timeout_ms=500)["found"]:
            return a
    return None


def scenario(server_impl, client_impl):
    tag = f"{server_impl}-to-{client_impl}"
    s, c = pair(server_impl, client_impl)
    try:
        a = wait_connected(c, s)
        check(f"{tag}: a client announce gives the server a path", a is not None)
        if a is None:
            return
        a2 = c.x("wire_announce", app_name="wirecheck", aspects=["data"], app_data="c0ffee")
        pp = s.x("wire_poll_path", destination_hash=a2["destination_hash"], timeout_ms=8000)
        check(f"{tag}: announce path found at 1 hop", pp == {"found": True, "hops": 1}, pp)
        rc = s.x("wire_identity_recall", destination_hash=a2["destination_hash"])
        check(f"{tag}: recall gives the announcing identity",
              rc.get("found") and rc.get("hash") == a2["identity_hash"], rc)
        lis = s.x("wire_listen", app_name="wirecheck", aspects=["link"])
        pc = c.x("wire_poll_path", destination_hash=lis["destination_hash"], timeout_ms=8000)
        check(f"{tag}: client learns the listener's path", pc.get("found") is True, pc)
        lk = c.x("wire_link_open", destination_hash=lis["destination_hash"],
                 app_name="wirecheck", aspects=["link"], timeout_ms=15000)
        check(f"{tag}: link opens", len(lk.get("link_id", "")) == 32, lk)
        msgs = ["68656c6c6f", "00ff" * 100]
        for m in msgs:
            c.x("wire_link_send", link_id=lk["link_id"], data=m)
        got = []
        end = time.time() + 10
        while len(got) < len(msgs) and time.time() < end:
            got += s.x("wire_link_poll", destination_hash=lis["destination_hash"],
                       timeout_ms=2000)["packets"]
        check(f"{tag}: link data arrives in order", got == msgs, got)
        st = c.x("wire_link_status", link_id=lk["link_id"])
        check(f"{tag}: link status ACTIVE, TCP link MTU 16384 and MDU 16303 (the reference's, measured)",
              st.get("status") == 2 and st.get("mtu") == 16384 and st.get("mdu") == 16303, st)
        pv = s.x("wire_listen", app_name="wirecheck", aspects=["proved"], proof_strategy="all")
        c.x("wire_poll_path", destination_hash=pv["destination_hash"], timeout_ms=8000)
        r = c.x("wire_send_packet_with_proof_request", destination_hash=pv["destination_hash"],
                app_name="wirecheck", aspects=["proved"], data="0102", timeout_ms=10000)
        check(f"{tag}: a PROVE_ALL destination's proof delivers the receipt",
              r.get("delivered") is True and r.get("hops") == 1, r)
    finally:
        s.close()
        c.close()


def ifac(server_impl, client_impl):
    tag = f"{server_impl}-to-{client_impl} IFAC"
    s, c = pair(server_impl, client_impl, netname="wirenet", passphrase="wirepass")
    try:
        check(f"{tag}: matching network name and passphrase pass announces",
              wait_connected(c, s) is not None)
    finally:
        s.close()
        c.close()
    s, c = pair(server_impl, client_impl, netname="wirenet", passphrase="wirepass",
                client_netname="othernet")
    try:
        time.sleep(1.5)
        a = c.x("wire_announce", app_name="wirecheck", aspects=["ifac"])
        pp = s.x("wire_poll_path", destination_hash=a["destination_hash"], timeout_ms=3000)
        check(f"{tag}: a mismatched network name blocks announces", pp["found"] is False, pp)
    finally:
        s.close()
        c.close()


t0 = time.time()
for si, ci in (("rnsc", "reference"), ("reference", "rnsc"), ("rnsc", "rnsc")):
    try:
        scenario(si, ci)
    except Exception as e:
        check(f"{si}-to-{ci}: scenario ran", False, repr(e))
for si, ci in (("rnsc", "reference"), ("reference", "rnsc")):
    try:
        ifac(si, ci)
    except Exception as e:
        check(f"{si}-to-{ci} IFAC: scenario ran", False, repr(e))
# a bad request never kills a wire bridge
p = Peer("rnsc")
try:
    for bad in ({"handle": "nope"}, {}, {"handle": 5}):
        try:
            p.x("wire_announce", app_name="x", **bad)
            check("wire_announce with a bad handle is refused", False)
        except RuntimeError as e:
            check(f"wire_announce {bad} refused", "handle" in str(e).lower(), str(e))
    r = p.x("wire_stop", handle="0000")
    check("wire_stop of an unknown handle answers stopped:false", r == {"stopped": False}, r)
finally:
    p.close()
print(f"wire_check: {len(failures)} failures, {time.time() - t0:.1f} s")
sys.exit(1 if failures else 0)
