# SPDX-License-Identifier: MIT
"""Resource cross-check harness: the reference's Resource.py and ResourceAdvertisement driven
without a running RNS.Reticulum(), for conformance/resource_xcheck_test.c.

Stand-ins (documented so a difference can be traced): a link object carrying only what a
sending Resource reads (mtu, mdu, rtt, traffic_timeout_factor, encrypt/decrypt with
RNS.Cryptography.Token over the given 64-byte key); RNS.Packet replaced while a Resource is
built by a class that keeps a part's data (Resource.__init__ only packs parts); os.urandom
replaced by a stream of bytes the caller gives, so the random hash prefix, token IV and
resource random hash are the ones rnsc draws from the same stream; advertise=False (no
threads). Receiving runs Resource.assemble() on a Resource set up as Resource.accept does,
with its storage in a temporary folder and the proof packet captured.
"""
import os
import sys
import tempfile

import rnsc_refharness as _h

RNS = None


def _mods():
    global RNS
    if RNS is None:
        RNS = _h.RNS
        if RNS is None:
            raise RuntimeError("rnsc_refharness.setup() has not run")
        for short in ("Resource", "Packet", "Identity", "Reticulum"):
            __import__("RNS." + short)
    return RNS


class _Link:
    def __init__(self, key, mtu):
        from RNS.Cryptography import Token
        self.token = Token(key)
        self.mtu = mtu
        self.mdu = None
        self.rtt = 0.05
        self.traffic_timeout_factor = 6
        self.establishment_cost = 287
        self.status = 2  # ACTIVE
        self.sent = []
        self.link_id = b"\x00" * 16

    def encrypt(self, pt):
        return self.token.encrypt(pt)

    def decrypt(self, ct):
        try:
            return self.token.decrypt(ct)
        except Exception:
            return None

    def resource_concluded(self, resource):
        pass

    def get_last_resource_window(self):
        return None

    def get_last_resource_eifr(self):
        return None


class _Stream:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def __call__(self, n):
        out = self.data[self.pos:self.pos + n]
        if len(out) != n:
            raise RuntimeError("random stream exhausted")
        self.pos += n
        return out


def _packet_class(link):
    P = RNS.Packet

    class _P:
        def __init__(self, lnk, data, packet_type=P.DATA, context=P.NONE, **kw):
            self.data = data
            self.packet_type = packet_type
            self.context = context
            self.sent = False

        def pack(self):
            pass

        def send(self):
            link.sent.append((self.packet_type, self.context, self.data))
            self.sent = True

    for k, v in vars(P).items():
        if k.isupper():
            setattr(_P, k, v)
    return _P


def build(data, name, key, auto_compress, mtu, rnd):
    """A sending Resource over data (bytes, one segment): its advertisement, hash, expected
    proof, the encrypted data joined from its parts and the number of parts."""
    _mods()
    link = _Link(key, mtu)
    saved_urandom, saved_packet = os.urandom, RNS.Packet
    os.urandom = _Stream(rnd)
    RNS.Packet = _packet_class(link)
    try:
        meta = {"name": name} if name is not None else None
        r = RNS.Resource(data, link, metadata=meta, advertise=False,
                         auto_compress=bool(auto_compress))
        adv = RNS.ResourceAdvertisement(r).pack()
        joined = b"".join(p.data for p in r.parts)
        return (adv, r.hash, r.expected_proof, joined, len(r.parts), r.random_hash,
                os.urandom.pos)
    finally:
        os.urandom, RNS.Packet = saved_urandom, saved_packet


def assemble(key, adv_plain, joined, mtu):
    """A receiving Resource (as Resource.accept sets it up) given every part at once:
    (status, data, packed metadata or None, proof packet data or None)."""
    _mods()
    link = _Link(key, mtu)
    saved_packet = RNS.Packet
    saved_path = getattr(RNS.Reticulum, "resourcepath", None)
    RNS.Packet = _packet_class(link)
    d = tempfile.mkdtemp(prefix="rnsc-resxc-")
    RNS.Reticulum.resourcepath = d
    try:
        adv = RNS.ResourceAdvertisement.unpack(adv_plain)
        r = RNS.Resource(None, link)
        r.status = RNS.Resource.TRANSFERRING
        r.flags = adv.f
        r.size = adv.t
        r.total_size = adv.d
        r.hash = adv.h
        r.original_hash = adv.o
        r.random_hash = adv.r
        r.encrypted = bool(r.flags & 1)
        r.compressed = bool(r.flags >> 1 & 1)
        r.initiator = False
        got = {}

        def done(res):
            got["data"] = res.data.read()
            if res.metadata is not None:
                from RNS.vendor import umsgpack
                got["meta"] = umsgpack.packb(res.metadata)
        r.callback = done
        r.segment_index = adv.i
        r.total_segments = adv.l
        r.has_metadata = bool(adv.x)
        r.storagepath = d + "/" + r.original_hash.hex()
        r.meta_storagepath = r.storagepath + ".meta"
        sdu = r.sdu
        r.parts = [joined[i:i + sdu] for i in range(0, len(joined), sdu)]
        r.total_parts = len(r.parts)
        r.assemble()
        data = got.get("data")
        meta = got.get("meta")
        proof = None
        for t, c, pd in link.sent:
            if c == RNS.Packet.RESOURCE_PRF:
                proof = pd
        return (int(r.status), data, meta, proof)
    finally:
        RNS.Packet = saved_packet
        if saved_path is None:
            del RNS.Reticulum.resourcepath
        else:
            RNS.Reticulum.resourcepath = saved_path
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)


def adv_pack(t, d, n, h, r, o, i, l, q, f, m):
    _mods()
    a = RNS.ResourceAdvertisement()
    a.t, a.d, a.n, a.h, a.r, a.o, a.i, a.l, a.q, a.f, a.m = t, d, n, h, r, o, i, l, q, f, m
    return a.pack()


def adv_unpack(b):
    """The fields the reference reads, or "RNSC_ERR_MALFORMED" when unpack raises."""
    _mods()
    try:
        a = RNS.ResourceAdvertisement.unpack(b)
        for k in ("t", "d", "n", "i", "l", "f"):
            if not isinstance(getattr(a, k), int) or isinstance(getattr(a, k), bool):
                return "RNSC_ERR_MALFORMED"
        def plain(v):
            # what the bridge carries; anything else (a float, a list, an ext) stands as a str
            if v is None or isinstance(v, (bytes, int, str)) and not isinstance(v, bool):
                return v
            return repr(v)
        return tuple(plain(v) for v in (a.t, a.d, a.n, a.h, a.r, a.o, a.i, a.l, a.q, a.f, a.m))
    except Exception:
        return "RNSC_ERR_MALFORMED"


_OPS = {"build": build, "assemble": assemble, "adv_pack": adv_pack, "adv_unpack": adv_unpack}


def dispatch(name, *args):
    return _OPS[name](*args)


def install():
    """Makes dispatch reachable through the generic bridge as rnsc_wireharness.resource."""
    _mods()
    import rnsc_wireharness
    rnsc_wireharness._mods()
    rnsc_wireharness.resource = dispatch
    return 0
