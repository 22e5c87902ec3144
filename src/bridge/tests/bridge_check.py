# SPDX-License-Identifier: MIT
"""Drives rnsc-conformance-bridge over its pipes and checks its answers.

Every read has a deadline, so a bridge that hangs fails the test instead of stalling it.
Reference answers come from the pinned rns (RNS.*) imported in this process.
"""
import bz2
import hashlib
import json
import os
import select
import subprocess
import sys
import time

BRIDGE = sys.argv[1]
failures = 0
checks = 0


def check(name, cond, detail=""):
    global failures, checks
    checks += 1
    if cond:
        print(f"ok   {name}")
    else:
        failures += 1
        print(f"FAIL {name} {detail}")


class Bridge:
    def __init__(self):
        self.p = subprocess.Popen([BRIDGE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=os.environ.copy())
        self.buf = b""
        self.n = 0

    def readline(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no line from the bridge within %.0fs" % timeout)
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    raise EOFError("bridge closed stdout (exit %s)" % self.p.poll())
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def raw(self, data, timeout=10.0):
        self.send_raw(data)
        return json.loads(self.readline(timeout))

    def call(self, command, **params):
        self.n += 1
        rid = "t-%d" % self.n
        r = self.raw((json.dumps({"id": rid, "command": command, "params": params}) + "\n").encode())
        assert r.get("id") == rid, "response id %r for request %r" % (r.get("id"), rid)
        return r

    def ok(self, command, **params):
        r = self.call(command, **params)
        if not r.get("success"):
            raise AssertionError("%s failed: %s" % (command, r.get("error")))
        return r["result"]

    def close(self):
        self.p.stdin.close()
        try:
            return self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None


def is_lower_hex(s):
    return isinstance(s, str) and all(c in "0123456789abcdef" for c in s) and len(s) % 2 == 0


def protocol(b):
    check("READY first", b.readline(15) == b"READY")
    r = b.raw(b"this is not json\n")
    check("not JSON -> success:false", r.get("success") is False and "JSON" in r.get("error", ""), r)
    r = b.raw(b"[1,2,3]\n")
    check("not an object -> success:false", r.get("success") is False, r)
    r = b.raw(b'{"id":"x1","params":{}}\n')
    check("no command -> success:false, id echoed", r.get("success") is False and r.get("id") == "x1", r)
    r = b.raw(b'{"id":7,"command":"no_such_command"}\n')
    check("unknown command names it", r.get("success") is False and r.get("id") == 7
          and "no_such_command" in r.get("error", ""), r)
    r = b.raw(b'{"id":"x2","command":"sha256","params":[1]}\n')
    check("params not an object", r.get("success") is False, r)
    r = b.raw(b'{"id":"x3","command":"sha256","params":{"data":"abc"}}\n')
    check("odd-length hex refused", r.get("success") is False and "hex" in r.get("error", ""), r)
    r = b.raw(b'{"id":"x4","command":"sha256","params":{"data":"zz"}}\n')
    check("non-hex refused", r.get("success") is False, r)
    r = b.raw(b'{"id":"x5","command":"sha256","params":{"data":5}}\n')
    check("hex of the wrong JSON type refused", r.get("success") is False, r)
    r = b.raw(b'{"id":"x6","command":"sha256","params":{}}\n')
    check("missing parameter named", r.get("success") is False and "data" in r.get("error", ""), r)
    r = b.raw(b'{"id":"x7","command":"sha256","params":{"data":"ABCDEF"}}\r\n')
    check("uppercase hex in, CRLF line, lowercase hex out",
          r.get("success") is True and r["result"]["hash"] == hashlib.sha256(bytes.fromhex("abcdef")).hexdigest(), r)
    r = b.raw(b'\n   \n{"id":"x8","command":"sha256","params":{"data":""}}\n')
    check("blank lines get no response", r.get("id") == "x8" and r.get("success") is True, r)
    r = b.raw(b'{"id":"x9","command":"sha256","params":{"data":"00"}}  {"trailing":1}\n')
    check("trailing garbage refused", r.get("success") is False, r)
    r = b.raw(b'{"id":"x10","command":"sha\x00256"}\n')
    check("NUL inside a line refused", r.get("success") is False, r)
    r = b.raw(b"[" * 100000 + b"\n")
    check("deep nesting refused", r.get("success") is False, r)
    r = b.raw(b'{"id":"x11","id":"x12","command":"sha256","params":{"data":""}}\n')
    check("duplicate keys refused", r.get("success") is False, r)
    r = b.raw(b'{"id":"x13","command":"sha256","params":{"data":"' + b"\xff\xfe" + b'"}}\n')
    check("invalid UTF-8 refused", r.get("success") is False, r)
    big = b'{"id":"big","command":"sha256","params":{"data":"' + b"00" * (9 * 1024 * 1024) + b'"}}\n'
    b.send_raw(big)
    r = json.loads(b.readline(30))
    check("oversized line (>16 MiB) refused", r.get("success") is False and "limit" in r.get("error", ""), str(r)[:200])
    r = b.call("sha256", data="")
    check("bridge still answers after bad lines", r.get("success") is True, r)


def primitives(b):
    import RNS
    from RNS.Cryptography import HKDF

    # published vectors
    r = b.ok("sha256", data="616263")
    check("sha256 FIPS 180-2 'abc'", r["hash"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    r = b.ok("hkdf", length=42, ikm="0b" * 22, salt="000102030405060708090a0b0c",
             info="f0f1f2f3f4f5f6f7f8f9")
    check("hkdf RFC 5869 A.1", r["derived_key"] == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    r = b.ok("x25519_exchange",
             private_key="77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
             peer_public_key="de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    check("x25519 RFC 7748 6.1", r["shared_secret"] == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
    r = b.ok("ed25519_sign", private_key="9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             message="")
    check("ed25519 RFC 8032 test 1", r["signature"].startswith("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"))

    # against the reference, same inputs
    prv = bytes(range(64))
    ref = RNS.Identity.from_bytes(prv)
    r = b.ok("identity_from_private_key", private_key=prv.hex())
    check("identity hash = reference", r["hash"] == ref.hash.hex() and r["public_key"] == ref.get_public_key().hex())
    r = b.ok("destination_hash", identity_hash=ref.hash.hex(), app_name="conformance", aspects=["a", "b"])
    check("destination hash = reference", r["destination_hash"] == RNS.Destination.hash(ref, "conformance", "a", "b").hex())
    r = b.ok("destination_hash", identity_hash=ref.hash.hex(), app_name="conformance", aspects="a,b")
    check("aspects as comma string", r["destination_hash"] == RNS.Destination.hash(ref, "conformance", "a", "b").hex())
    r = b.call("destination_hash", identity_hash=ref.hash.hex(), app_name="bad.name", aspects=[])
    check("dot in app name refused", r.get("success") is False, r)
    r = b.ok("identity_sign", private_key=prv.hex(), message="68656c6c6f")
    check("signature = reference", r["signature"] == ref.sign(b"hello").hex())
    r = b.ok("identity_encrypt", public_key=ref.get_public_key().hex(), plaintext="00112233")
    check("rnsc encrypt -> reference decrypt", ref.decrypt(bytes.fromhex(r["ciphertext"])) == bytes.fromhex("00112233"))
    r = b.ok("identity_decrypt", private_key=prv.hex(), ciphertext=ref.encrypt(b"xyz").hex())
    check("reference encrypt -> rnsc decrypt", r["plaintext"] == b"xyz".hex())
    r = b.ok("identity_decrypt", private_key=prv.hex(), ciphertext="00" * 100)
    check("undecryptable token -> plaintext null", r["plaintext"] is None)
    key = bytes(range(64))
    tok = RNS.Cryptography.Token(key).encrypt(b"token data")
    r = b.ok("token_decrypt", key=key.hex(), token=tok.hex())
    check("reference token -> rnsc", r["plaintext"] == b"token data".hex())
    r = b.ok("token_verify_hmac", key=key.hex(), token=tok[:-1].hex() + "%02x" % (tok[-1] ^ 1))
    check("tampered token HMAC invalid", r["valid"] is False)
    r = b.ok("hkdf", length=64, ikm="01" * 32, salt="02" * 16, info="")
    check("hkdf = reference", r["derived_key"] == HKDF.hkdf(length=64, derive_from=b"\x01" * 32, salt=b"\x02" * 16, context=None).hex())
    r = b.ok("truncated_hash", data="00ff")
    check("truncated hash = reference", r["hash"] == RNS.Identity.truncated_hash(b"\x00\xff").hex())
    r = b.ok("name_hash", name="app.x.y")
    check("name hash = reference", r["hash"] == RNS.Identity.full_hash(b"app.x.y")[:10].hex())
    rpub = RNS.Cryptography.X25519PrivateKey.from_private_bytes(b"\x05" * 32).public_key().public_bytes()
    r = b.ok("ratchet_public_from_private", ratchet_private="05" * 32)
    check("ratchet public = reference", r["ratchet_public"] == rpub.hex())
    ct = ref.encrypt(b"ratcheted", ratchet=rpub)
    r = b.ok("ratchet_decrypt", private_key=prv.hex(), ciphertext=ct.hex(),
             ratchet_privates=["06" * 32, "05" * 32], enforce_ratchets=True)
    check("ratchet decrypt names the ratchet", r["plaintext"] == b"ratcheted".hex()
          and r["latest_ratchet_id"] == RNS.Identity._get_ratchet_id(rpub).hex(), r)

    # packets and announces
    r = b.ok("packet_build", dest_type="plain", data="0102030405", context=0x0e, hops=3)
    raw = bytes.fromhex(r["raw"])
    p = RNS.Packet(None, None)
    p.raw = raw
    check("plain packet: reference unpacks it", p.unpack() and p.data == bytes.fromhex("0102030405")
          and p.context == 0x0e and p.hops == 3 and p.get_hash().hex() == r["hash"])
    r = b.ok("packet_unpack", raw=raw.hex())
    check("packet_unpack fields", r["unpacked"] and r["context"] == 0x0e and r["data"] == "0102030405"
          and r["destination_type"] == 2 and r["transport_id"] is None)
    h1 = b.ok("packet_build", dest_type="plain", data="01")
    h2 = b.ok("packet_build", dest_type="single", packet_type=1, data="01", header_type=2,
              transport_id="ab" * 16)
    check("header lengths: HEADER_1 19 + n, HEADER_2 35 + n",
          len(h1["raw"]) // 2 == 20 and len(h2["raw"]) // 2 == 36 and h2["transport_id"] == "ab" * 16)
    r = b.call("packet_build", dest_type="plain", data="")
    check("a packet without data is refused", r.get("success") is False, r)
    r = b.ok("packet_unpack", raw="0000")
    check("short packet -> unpacked false", r["unpacked"] is False)
    r = b.ok("announce_build", private_key=prv.hex(), app_name="conformance", aspects=["ann"],
             app_data="6869", enable_ratchets=True, emission_ts=1700000000)
    ap = RNS.Packet(None, None)
    ap.raw = bytes.fromhex(r["raw"])
    check("rnsc announce validates in the reference", ap.unpack() and
          RNS.Identity.validate_announce(ap, only_validate_signature=True) and r["has_ratchet"]
          and r["app_data"] == "6869" and r["random_hash"].endswith("%010x" % 1700000000))
    v = b.ok("announce_validate", raw=r["raw"])
    check("announce_validate accepts it", v["valid"] is True and v["ratchet"] == r["ratchet"])
    bad = bytearray.fromhex(r["raw"])
    bad[-3] ^= 1
    v = b.ok("announce_validate", raw=bad.hex())
    check("announce_validate rejects a flipped byte", v["valid"] is False)

    # framing and bz2
    payload = bytes([0x7e, 0x7d, 0xc0, 0xdb, 0x01] * 5)
    from RNS.Interfaces.TCPInterface import HDLC
    from RNS.Interfaces.KISSInterface import KISS
    r = b.ok("hdlc_frame", data=payload.hex())
    check("hdlc frame = reference", r["framed"] == (b"\x7e" + HDLC.escape(payload) + b"\x7e").hex())
    r2 = b.ok("hdlc_deframe_stream", stream=r["framed"] * 2 + "7e0102037e")
    check("hdlc stream: two frames, runt dropped", r2["frames"] == [payload.hex()] * 2, r2)
    r = b.ok("kiss_frame", data=payload.hex())
    check("kiss frame = reference", r["framed"] == (b"\xc0\x00" + KISS.escape(payload) + b"\xc0").hex())
    r = b.ok("kiss_deframe", framed=r["framed"])
    check("kiss deframe round trip", r["data"] == payload.hex())
    r = b.ok("bz2_compress", data="41" * 1000)
    check("bz2 compress -> python bz2", bz2.decompress(bytes.fromhex(r["compressed"])) == b"A" * 1000)
    r = b.ok("bz2_decompress", compressed=bz2.compress(b"B" * 500).hex())
    check("python bz2 -> bz2 decompress", r["decompressed"] == "42" * 500)
    r = b.call("bz2_decompress", compressed="425a6839")
    check("truncated bz2 refused", r.get("success") is False, r)
    r = b.ok("wire_buffer_pack", stream_id=5, data="aa", eof=True)
    check("stream message header = reference layout", r["raw"] == "8005aa" and r["msgtype"] == 0xff00, r)
    r = b.ok("wire_channel_envelope_pack", msgtype=0x0101, sequence=2, data="bb")
    check("channel envelope header", r["raw"] == "010100020001bb", r)
    r = b.ok("crypto_provider_op", op="ed25519_sign", provider="internal",
             private_key="9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", message="")
    check("provider op on libsodium", r["result"].startswith("e5564300c360ac72"), r)
    # packet_build_raw_header2: the reference unpacks rnsc's HEADER_2 announce
    r = b.ok("packet_build_raw_header2", packet_type=1, transport_id="cd" * 16, data="0102")
    rp = RNS.Packet(None, bytes.fromhex(r["raw"]))
    check("HEADER_2 announce unpacks in the reference",
          rp.unpack() and rp.header_type == RNS.Packet.HEADER_2 and
          rp.transport_id == bytes.fromhex("cd" * 16) and rp.data == b"\x01\x02" and
          r["raw_len"] == 35 + 2, r)
    r = b.ok("packet_build_raw_header2", packet_type=1)
    check("HEADER_2 without transport id refused as the reference words it",
          "raw" not in r and "must have a transport ID" in r.get("error", ""), r)
    r = b.ok("packet_build_raw_header2", packet_type=0, transport_id="cd" * 16)
    check("HEADER_2 DATA origination refused", "raw" not in r and r.get("error"), r)
    # identity_remember: the 64-byte key gate, as the reference's Identity.remember has it
    ref_gate = {}
    for n in (63, 64, 65):
        try:
            RNS.Identity.remember(b"\x11" * 16, bytes([n]) * 16, b"\xab" * n, None)
            ref_gate[n] = True
        except TypeError:
            ref_gate[n] = False
    got = {n: b.ok("identity_remember", packet_hash="11" * 16, destination_hash="%02x" % n * 16,
                   public_key="ab" * n, app_data=None) for n in (63, 64, 65)}
    check("identity_remember key-length gate = reference",
          {n: r["ok"] for n, r in got.items()} == ref_gate and got[64]["recalled"] is True
          and got[63]["error"] == "TypeError", (got, ref_gate))
    # config_parse_interface: rnsc's reader and interface policy against the reference's
    # Interface/Reticulum constants (the suite drives the reference's _synthesize_interface)
    from RNS.Interfaces.Interface import Interface as RI

    def cpi(body):
        text = ("[interfaces]\n  [[probe]]\n    type = ConfigParseProbeInterface\n"
                "    interface_enabled = true\n" + "".join("    %s\n" % l for l in body))
        return b.call("config_parse_interface", interface_name="probe", config_text=text)

    modes = {"ptp": RI.MODE_POINT_TO_POINT, "AP": RI.MODE_ACCESS_POINT, "gw": RI.MODE_GATEWAY,
             "roaming": RI.MODE_ROAMING, "boundary": RI.MODE_BOUNDARY,
             "point_to_point": RI.MODE_FULL}
    got = {m: cpi(["mode = " + m])["result"]["mode"] for m in modes}
    check("config modes and aliases = reference MODE_*", got == modes, got)
    r = cpi(["interface_mode = gateway"])
    check("interface_mode = gateway without mode refused (reference KeyError)",
          r.get("success") is False, r)
    r = cpi(["interface_mode = gateway", "mode = gateway"])["result"]
    check("interface_mode = gateway with mode = gateway", r["mode"] == RI.MODE_GATEWAY, r)
    r = cpi(["bitrate = 1200"])["result"]
    ic = {"ic_max_held_announces": RI.MAX_HELD_ANNOUNCES, "ic_burst_hold": RI.IC_BURST_HOLD,
          "ic_burst_freq_new": RI.IC_BURST_FREQ_NEW, "ic_burst_freq": RI.IC_BURST_FREQ,
          "ic_new_time": RI.IC_NEW_TIME, "ic_burst_penalty": RI.IC_BURST_PENALTY,
          "ic_held_release_interval": RI.IC_HELD_RELEASE_INTERVAL}
    check("config ic_* defaults = reference Interface constants",
          all(r[k] == v for k, v in ic.items()) and r["configured_bitrate"] == 1200
          and abs(r["announce_cap"] - RNS.Reticulum.ANNOUNCE_CAP / 100.0) < 1e-12, r)
    lo = RNS.Reticulum.MINIMUM_BITRATE - 1
    r = cpi(["bitrate = %d" % lo, "announce_cap = 0", "ifac_size = 7", "networkname = ",
             "pass_phrase = k", "ic_burst_freq = 4.5"])["result"]
    check("config bounds: bitrate, announce_cap, ifac_size floor, empty name, alias",
          r["configured_bitrate"] is None and abs(r["announce_cap"] - 0.02) < 1e-12
          and r["ifac_size"] == 16 and r["ifac_netname"] is None and r["ifac_netkey"] == "k"
          and r["ifac_active"] is True and r["ic_burst_freq"] == 4.5, r)
    r = cpi(["ifac_size = 512"])["result"]
    check("config ifac_size 512 bits -> 64 bytes", r["ifac_size"] == 64, r)
    r = cpi(["discoverable = yes"])
    check("discoverable refused by name", r.get("success") is False and
          "discover" in r.get("error", ""), r)
    # every hex field of a sample answer is lowercase
    r = b.ok("announce_build", private_key=prv.hex(), app_name="x", aspects=[])
    check("hex out is lowercase", all(is_lower_hex(r[k]) for k in ("raw", "public_key", "signature")))


def behavioral(b):
    """A transport node with two mock interfaces: an announce heard on one is learned into
    the path table at hops+1 and rebroadcast on the other (the reference's rule)."""
    h = b.ok("behavioral_start", identity_seed=bytes(range(64)).hex(), enable_transport=True)["handle"]
    ia = b.ok("behavioral_attach_mock_interface", handle=h, name="a")["iface_id"]
    ib = b.ok("behavioral_attach_mock_interface", handle=h, name="b")["iface_id"]
    ann = b.ok("announce_build", private_key=bytes(range(1, 65)).hex(), app_name="behav", aspects=["x"])
    raw = bytearray.fromhex(ann["raw"])
    raw[1] = 2
    b.ok("behavioral_inject", handle=h, iface_id=ia, raw=raw.hex())
    pt = b.ok("behavioral_read_path_table", handle=h, dest=ann["destination_hash"])
    check("behavioral: path learned at hops 3", pt["found"] and pt["hops"] == 3, pt)
    got = []
    deadline = time.monotonic() + 6
    while not got and time.monotonic() < deadline:
        time.sleep(0.1)
        got = b.ok("behavioral_drain_tx", handle=h, iface_id=ib)["packets"]
    check("behavioral: rebroadcast on the other interface with hops 3",
          len(got) >= 1 and bytes.fromhex(got[0])[1] == 3, got)
    # the announce table: the entry's state, a retransmission forced now, and its end
    dest = ann["destination_hash"]
    hr = b.ok("behavioral_start", enable_transport=True, announce_rate_target=3600)["handle"]
    ir = b.ok("behavioral_attach_mock_interface", handle=hr, name="r")["iface_id"]
    b.ok("behavioral_inject", handle=hr, iface_id=ir, raw=raw.hex())
    ar = b.ok("behavioral_read_announce_rate", handle=hr, dest=dest)
    b.ok("behavioral_stop", handle=hr)
    check("announce rate table: the heard announce's entry (rate target set)", ar["found"] is True
          and ar["rate_violations"] == 0 and ar["blocked_until"] == 0 and ar["last"] > 0
          and isinstance(ar["timestamps"], list), ar)
    ar = b.ok("behavioral_read_announce_rate", handle=h, dest="00" * 16)
    check("announce rate table: no entry for an unheard destination", ar == {"found": False}, ar)
    at = b.ok("behavioral_read_announce_table", handle=h, dest=dest)
    check("behavioral: announce table after the first rebroadcast",
          at["found"] and at["retries"] == 1 and at["hops"] == 3 and at["received_from"] == dest
          and at["attached_interface"] is None, at)
    b.ok("behavioral_set_announce_timestamp", handle=h, dest=dest, retransmit_timeout=10 ** 12)
    at = b.ok("behavioral_read_announce_table", handle=h, dest=dest)
    check("behavioral: retransmit timeout rewritten", at["retransmit_timeout"] == 10 ** 12, at)
    b.ok("behavioral_set_announce_timestamp", handle=h, dest=dest, retransmit_timeout=0)
    b.ok("behavioral_force_cull", handle=h)
    at = b.ok("behavioral_read_announce_table", handle=h, dest=dest)
    got = []
    deadline = time.monotonic() + 3  # the interface's announce cap may space it a little
    while not got and time.monotonic() < deadline:
        got = b.ok("behavioral_drain_tx", handle=h, iface_id=ib)["packets"]
        if not got:
            time.sleep(0.05)
    check("behavioral: forced pass retransmits (retries 2)",
          at["found"] and at["retries"] == 2 and len(got) == 1, (at, got))
    b.ok("behavioral_set_announce_timestamp", handle=h, dest=dest, retransmit_timeout=0)
    b.ok("behavioral_force_cull", handle=h)
    at = b.ok("behavioral_read_announce_table", handle=h, dest=dest)
    check("behavioral: entry completed after PATHFINDER_R retries", at == {"found": False}, at)
    r = b.ok("behavioral_set_announce_timestamp", handle=h, dest=dest, retransmit_timeout=0)
    check("behavioral: rewrite of an absent entry reports set false", r["set"] is False, r)
    r = b.ok("behavioral_set_path_timestamp", handle=h, dest=dest, timestamp=0)
    b.ok("behavioral_force_cull", handle=h)
    pt = b.ok("behavioral_read_path_table", handle=h, dest=dest)
    check("behavioral: a path stamped at the epoch is culled", r["set"] and not pt["found"], (r, pt))
    r = b.call("behavioral_set_path_expires", handle=h, dest=dest, expires="soon")
    check("behavioral: a non-numeric time is refused", r.get("success") is False, r)

    # Transport.packet_filter: rnsc's verdicts against the reference's on the same packets,
    # with the same remember sequence (the reference's filter is run on a transport
    # identity of the same seed and an owner that is not attached to a shared instance)
    import types
    import RNS
    RNS.Transport.owner = types.SimpleNamespace(is_connected_to_shared_instance=False)
    RNS.Transport.identity = RNS.Identity.from_bytes(bytes(range(64)))
    RNS.Transport.packet_hashlist, RNS.Transport.packet_hashlist_prev = set(), set()
    tid = RNS.Transport.identity.hash

    def pkt(flags, hops, dst, ctx, data, transport_id=None):
        return bytes([flags, hops]) + (transport_id or b"") + dst + bytes([ctx]) + data

    d1, d2 = bytes([0x11] * 16), bytes([0x22] * 16)
    cases = [
        ("SINGLE DATA", pkt(0x00, 0, d1, 0, b"x" * 8), True),
        ("SINGLE DATA replay", pkt(0x00, 0, d1, 0, b"x" * 8), True),
        ("RESOURCE context", pkt(0x00, 0, d2, 0x01, b"y" * 8), True),
        ("RESOURCE context replay", pkt(0x00, 0, d2, 0x01, b"y" * 8), True),
        ("PLAIN DATA hops 2", pkt(0x08, 2, d1, 0, b"z" * 8), False),
        ("PLAIN DATA hops 1", pkt(0x08, 1, d2, 0, b"z" * 8), False),
        ("GROUP announce", pkt(0x05, 0, d2, 0, b"w" * 8), False),
        ("HEADER_2 foreign transport id", pkt(0x50, 1, d2, 0, b"v" * 8, bytes(16)), False),
        ("HEADER_2 own transport id", pkt(0x50, 1, d2, 0, b"u" * 8, tid), False),
    ]
    for name, raw, remember in cases:
        p = RNS.Packet(None, raw)
        p.unpack()
        want = bool(RNS.Transport.packet_filter(p))
        if want and remember:
            RNS.Transport.add_packet_hash(p.packet_hash)
        r = b.ok("behavioral_packet_filter", handle=h, raw=raw.hex(), remember=remember)
        check("packet_filter %s = reference (%s)" % (name, want),
              r["accepted"] is want and r["packet_hash"] == p.packet_hash.hex()
              and r["remembered"] is (want and remember), r)
    # attached to a shared instance the instance filters: a replay and a foreign transport
    # id pass (the reference's packet_filter returns True first thing)
    RNS.Transport.owner.is_connected_to_shared_instance = True
    hs = b.ok("behavioral_start", enable_transport=False, connected_to_shared_instance=True)["handle"]
    for name, raw, _ in cases[:2] + cases[7:8]:
        want = bool(RNS.Transport.packet_filter(RNS.Packet(None, raw)))
        r = b.ok("behavioral_packet_filter", handle=hs, raw=raw.hex())
        check("packet_filter behind a shared instance: %s = reference (%s)" % (name, want),
              r["accepted"] is want, r)
    b.ok("behavioral_stop", handle=hs)
    RNS.Transport.owner.is_connected_to_shared_instance = False
    r = b.call("behavioral_packet_filter", handle=h, raw="0000")
    check("packet_filter: a malformed packet is refused", r.get("success") is False, r)

    # a path request with the caller's tag, against the reference's packet for it
    tag = bytes(range(16))
    want_dest = bytes([0x33] * 16)
    b.ok("behavioral_drain_tx", handle=h, iface_id=ia)  # the rebroadcasts went out there too
    r = b.ok("behavioral_request_path", handle=h, iface_id=ia, dest=want_dest.hex(), tag=tag.hex())
    got = b.ok("behavioral_drain_tx", handle=h, iface_id=ia)["packets"]
    prd = RNS.Destination(None, RNS.Destination.OUT, RNS.Destination.PLAIN, "rnstransport",
                          "path", "request")
    ref = RNS.Packet(prd, want_dest + tid + tag, packet_type=RNS.Packet.DATA,
                     transport_type=RNS.Transport.BROADCAST, header_type=RNS.Packet.HEADER_1)
    ref.pack()
    check("request_path with a tag = reference's packet", r["tag"] == tag.hex()
          and got == [ref.raw.hex()], (r, got, ref.raw.hex()))
    r = b.call("behavioral_request_path", handle=h, iface_id=ia, dest=want_dest.hex(),
               tag=bytes(17).hex())
    check("request_path: a tag over 16 bytes is refused", r.get("success") is False, r)
    # link and reverse tables: seeded entries read back; aged ones go at the forced cull
    lid = bytes([0x44] * 16).hex()
    b.ok("behavioral_seed_link_table", handle=h, dest=lid, nh_iface_id=ia, rcvd_iface_id=ib,
         rem_hops=2, hops=3)
    lt = b.ok("behavioral_read_link_table", handle=h, link_id=lid)
    check("link table: seeded entry reads back", lt["found"] and lt["next_hop_if"] == ia
          and lt["received_if"] == ib and lt["remaining_hops"] == 2 and lt["hops"] == 3
          and lt["validated"] is True and lt["destination_hash"] == lid, lt)
    check("link table: listed", [e["link_id"] for e in
                                 b.ok("behavioral_read_link_table", handle=h)["entries"]] == [lid])
    key = bytes([0x55] * 16).hex()
    b.ok("behavioral_seed_reverse_table", handle=h, key=key, rcvd_iface_id=ib, outb_iface_id=ia,
         timestamp_age_s=10 ** 5)
    rt = b.ok("behavioral_read_reverse_table", handle=h, dest=key)
    check("reverse table: seeded entry reads back", rt["found"] and rt["received_if"] == ib
          and rt["outbound_if"] == ia and rt["received_if_name"] == "b", rt)
    b.ok("behavioral_force_cull", handle=h)
    rt = b.ok("behavioral_read_reverse_table", handle=h, dest=key)
    lt = b.ok("behavioral_read_link_table", handle=h, link_id=lid)
    check("cull: aged reverse entry gone, fresh link entry kept",
          rt == {"found": False} and lt["found"], (rt, lt))
    r = b.call("behavioral_seed_link_table", handle=h, dest=lid, nh_iface_id="nope",
               rcvd_iface_id=ib)
    check("link table: unknown interface refused", r.get("success") is False, r)
    r = b.call("behavioral_inject", handle="nope", iface_id=ia, raw="00")
    check("behavioral: unknown handle refused", r.get("success") is False, r)
    check("behavioral: stop", b.ok("behavioral_stop", handle=h)["stopped"] is True)


def main():
    b = Bridge()
    try:
        protocol(b)
        primitives(b)
        behavioral(b)
    except Exception as e:  # a hang or a crash is a failure, reported with its cause
        check("bridge session", False, "%s: %s" % (type(e).__name__, e))
    rc = b.close()
    check("clean exit at end of input", rc == 0, "exit %s" % rc)
    err = b.p.stderr.read().decode(errors="replace")
    if err.strip():
        print("bridge stderr:", err[-2000:])
    print("%d checks, %d failed" % (checks, failures))
    sys.exit(1 if failures else 0)


main()
