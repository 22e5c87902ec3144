# SPDX-License-Identifier: MIT
"""The reference side of wire_check.py: one RNS instance (the pinned rns) answering the
wire_* commands wire_check.py uses, in the bridge protocol (READY, one JSON line each way).
Only what the check needs; RNS is a process singleton, so one instance per process."""
import json
import os
import shutil
import socket
import sys
import tempfile
import time

import RNS

state = {"rns": None, "dir": None, "dests": {}, "links": {}, "rx": {}}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(p, server):
    d = tempfile.mkdtemp(prefix="rnsc_wire_ref_")
    state["dir"] = d
    lines = ["[reticulum]", "  enable_transport = Yes", "  share_instance = No",
             "  respond_to_probes = No", "[logging]", "  loglevel = 0", "[interfaces]"]
    if server:
        port = int(p.get("bind_port") or 0) or free_port()
        lines += ["  [[Wire TCP Server]]", "    type = TCPServerInterface", "    enabled = Yes",
                  "    listen_ip = 127.0.0.1", f"    listen_port = {port}"]
    else:
        port = int(p["target_port"])
        lines += ["  [[Wire TCP Client]]", "    type = TCPClientInterface", "    enabled = Yes",
                  f"    target_host = {p['target_host']}", f"    target_port = {port}"]
    if p.get("network_name"):
        lines.append(f"    network_name = {p['network_name']}")
    if p.get("passphrase"):
        lines.append(f"    passphrase = {p['passphrase']}")
    with open(os.path.join(d, "config"), "w") as f:
        f.write("\n".join(lines) + "\n")
    state["rns"] = RNS.Reticulum(configdir=d, loglevel=RNS.LOG_CRITICAL)
    r = {"handle": "ref", "identity_hash": RNS.Transport.identity.hash.hex()}
    if server:
        r["port"] = port
    return r


def new_dest(p):
    ident = RNS.Identity()
    dest = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE, p["app_name"],
                           *p.get("aspects", []))
    state["dests"][dest.hash] = (ident, dest)
    return ident, dest


def cmd(c, p):
    if c == "wire_start_tcp_server":
        return start(p, True)
    if c == "wire_start_tcp_client":
        return start(p, False)
    if c == "wire_announce":
        ident, dest = new_dest(p)
        ad = bytes.fromhex(p["app_data"]) if p.get("app_data") else None
        dest.announce(app_data=ad)
        return {"destination_hash": dest.hash.hex(), "identity_hash": ident.hash.hex()}
    if c == "wire_listen":
        ident, dest = new_dest(p)
        rx = state["rx"].setdefault(dest.hash, [])

        def established(link, rx=rx):
            link.set_packet_callback(lambda data, _pkt: rx.append(bytes(data)))
        dest.set_link_established_callback(established)
        if str(p.get("proof_strategy") or "none").lower() == "all":
            dest.set_proof_strategy(RNS.Destination.PROVE_ALL)
        dest.announce()
        return {"destination_hash": dest.hash.hex(), "identity_hash": ident.hash.hex(),
                "public_key": ident.get_public_key().hex()}
    if c == "wire_poll_path":
        dh = bytes.fromhex(p["destination_hash"])
        end = time.time() + int(p.get("timeout_ms", 5000)) / 1000
        while time.time() < end:
            if RNS.Transport.has_path(dh):
                return {"found": True, "hops": RNS.Transport.hops_to(dh)}
            time.sleep(0.05)
        return {"found": False, "hops": None}
    if c == "wire_link_open":
        dh = bytes.fromhex(p["destination_hash"])
        ident = RNS.Identity.recall(dh)
        if ident is None:
            raise RuntimeError("no identity known")
        out = RNS.Destination(ident, RNS.Destination.OUT, RNS.Destination.SINGLE,
                              p["app_name"], *p.get("aspects", []))
        link = RNS.Link(out)
        end = time.time() + int(p.get("timeout_ms", 10000)) / 1000
        while time.time() < end and link.status != RNS.Link.ACTIVE:
            time.sleep(0.02)
        if link.status != RNS.Link.ACTIVE:
            raise RuntimeError("link did not become active")
        state["links"][link.link_id] = link
        return {"link_id": link.link_id.hex()}
    if c == "wire_link_send":
        link = state["links"][bytes.fromhex(p["link_id"])]
        RNS.Packet(link, bytes.fromhex(p.get("data", ""))).send()
        return {"sent": True}
    if c == "wire_link_poll":
        rx = state["rx"][bytes.fromhex(p["destination_hash"])]
        end = time.time() + int(p.get("timeout_ms", 5000)) / 1000
        while not rx and time.time() < end:
            time.sleep(0.05)
        out = [x.hex() for x in rx]
        rx.clear()
        return {"packets": out}
    if c == "wire_identity_recall":
        ident = RNS.Identity.recall(bytes.fromhex(p["destination_hash"]))
        if ident is None:
            return {"found": False}
        return {"found": True, "public_key": ident.get_public_key().hex(),
                "hash": ident.hash.hex()}
    if c == "wire_send_packet_with_proof_request":
        dh = bytes.fromhex(p["destination_hash"])
        ident = RNS.Identity.recall(dh)
        out = RNS.Destination(ident, RNS.Destination.OUT, RNS.Destination.SINGLE,
                              p["app_name"], *p.get("aspects", []))
        receipt = RNS.Packet(out, bytes.fromhex(p.get("data", ""))).send()
        end = time.time() + int(p.get("timeout_ms", 10000)) / 1000
        while time.time() < end and receipt.get_status() == RNS.PacketReceipt.SENT:
            time.sleep(0.05)
        return {"sent": True, "hops": RNS.Transport.hops_to(dh),
                "delivered": receipt.get_status() == RNS.PacketReceipt.DELIVERED}
    if c == "wire_link_status":
        link = state["links"][bytes.fromhex(p["link_id"])]
        return {"status": link.status, "mdu": link.get_mdu(), "mtu": link.get_mtu()}
    if c == "wire_stop":
        return {"stopped": True}
    raise ValueError("Unknown command: " + c)


def main():
    print("READY", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            res = {"id": req.get("id"), "success": True,
                   "result": cmd(req["command"], req.get("params") or {})}
        except Exception as e:  # the bridge protocol reports every failure as an answer
            res = {"id": req.get("id"), "success": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(res), flush=True)
    if state["dir"]:
        shutil.rmtree(state["dir"], ignore_errors=True)
    os._exit(0)


main()
