# SPDX-License-Identifier: MIT
"""The reference's wire formats for rnsc's message matrix (conformance/matrix.c).

Imported by interop/ref_wire.c inside the embedded interpreter after rnsc_refharness has
set the reference up (RNS imported, its logging routed to the host). Same conventions:
success returns bytes / int / a flat tuple of bytes, ints, str and None; a rejection *by the
reference* returns the rnsc error name as a str; anything else raises (RNSC_ERR_PYTHON on
the C side).

Every build and parse runs the reference's own code: RNS.Packet.pack/unpack,
Destination.announce, Identity.validate_announce / prove, PacketReceipt.validate_proof /
validate_link_proof, Transport.request_path / path_request_handler / handle_outgoing_ifac /
preprocess_inbound / mangle_hops, Reticulum._add_interface (IFAC derivation), Link's static
helpers and its validate_request / prove / validate_proof / identify / send_keepalive /
teardown / receive / rtt_packet, HDLC.frame / ReceiveBuffer, KISSInterface.readLoop /
process_outgoing. RNS.Reticulum() is never started (no config directory, no network, no
signal handlers), so the state those functions expect from a running instance is provided
for the duration of each call by _env() and restored afterwards:

  * RNS.Packet.send packs the packet and records it instead of handing it to Transport;
  * Transport.register_destination / register_link / activate_link / add_interface and
    Link.start_watchdog do nothing (no tables, no threads);
  * Reticulum.get_instance() returns _Instance: no per-packet RSSI/SNR/Q, nothing
    blackholed, the default first-hop timeout;
  * the private Reticulum class flags read by should_use_implicit_proof(),
    transport_enabled() and link_mtu_discovery() are set per call;
  * Transport.identity is a stand-in carrying the transport id the caller chose;
  * Identity.remember / _remember_ratchet record what the reference would store (nothing
    touches the known-destinations table or the ratchet directory);
  * randomness and the clock are pinned where they reach the bytes: the 16 bytes behind an
    announce's random hash, the announce timestamp, ephemeral X25519 keys, Token IVs and the
    link's clock (for the RTT it reports).
Destinations that only need to be addressed are _Dest stand-ins (type, hash, and the
reference's own encrypt for their type), as Packet.ProofDestination is in the reference.

Row enumeration (rows()) reads the reference's constants at run time, so a context, mode or
type added upstream shows up as a row rnsc does not know.
"""

import contextlib
import sys
import types

import rnsc_refharness as _h

RNS = None

OK = None
E_TRUNCATED = "RNSC_ERR_TRUNCATED"
E_MALFORMED = "RNSC_ERR_MALFORMED"
E_TOOBIG = "RNSC_ERR_TOOBIG"
E_HOPS = "RNSC_ERR_HOPS"
E_SIGNATURE = "RNSC_ERR_SIGNATURE"
E_DEST_MISMATCH = "RNSC_ERR_DEST_MISMATCH"
E_PROOF_HASH = "RNSC_ERR_PROOF_HASH"
E_NOTAG = "RNSC_ERR_NOTAG"
E_LINK_MODE = "RNSC_ERR_LINK_MODE"
E_IFAC = "RNSC_ERR_IFAC"
E_IFAC_MISSING = "RNSC_ERR_IFAC_MISSING"
E_IFAC_UNEXPECTED = "RNSC_ERR_IFAC_UNEXPECTED"
E_NOTFOUND = "RNSC_ERR_NOTFOUND"

_M = {}  # reference modules by short name


def _mods():
    global RNS
    if RNS is None:
        RNS = _h.RNS
        if RNS is None:
            raise RuntimeError("rnsc_refharness.setup() has not run")
        for short in ("Identity", "Destination", "Packet", "Transport", "Link", "Reticulum",
                      "Cryptography.Token", "Interfaces.Interface", "Interfaces.KISSInterface",
                      "Interfaces.util.HDLC"):
            __import__("RNS." + short)
            _M[short] = sys.modules["RNS." + short]
    return RNS


# ---------------------------------------------------------------------------------------------
# The minimal environment


class _Instance:
    """What a running RNS.Reticulum() would answer for the calls made here."""

    def get_packet_rssi(self, packet_hash):
        return None

    def get_packet_snr(self, packet_hash):
        return None

    def get_packet_q(self, packet_hash):
        return None

    def is_blackholed(self, identity_hash):
        return False

    def get_first_hop_timeout(self, destination_hash):
        return RNS.Reticulum.DEFAULT_PER_HOP_TIMEOUT


class _Env:
    def __init__(self):
        self.sent = []          # packets "sent" during the call, packed
        self.remembered = []    # Identity.remember(...) argument tuples
        self.ratchets = []      # Identity._remember_ratchet(...) argument tuples
        self.path_requests = [] # Transport.path_request(...) calls


class _Clock:
    """Stands in for the `time` module inside one reference module."""

    def __init__(self, now):
        self._now = now

    def time(self):
        return self._now

    def __getattr__(self, name):
        import time
        return getattr(time, name)


class _ScriptedOs:
    """Stands in for the `os` module inside RNS.Identity: os.urandom(16) (the only draw
    get_random_hash makes) returns the scripted bytes once."""

    def __init__(self, blob):
        self._blob = blob

    def urandom(self, n):
        if self._blob is None or n != len(self._blob):
            raise AssertionError(f"unexpected os.urandom({n}) in Identity")
        b, self._blob = self._blob, None
        return b

    def __getattr__(self, name):
        import os
        return getattr(os, name)


_UNSET = object()


@contextlib.contextmanager
def _env(implicit_proof=True, transport_id=None, transport_enabled=False, now=None,
         random_blob=None, eph_priv=None, iv=None):
    _mods()
    env = _Env()
    T, L, I, R, P = RNS.Transport, RNS.Link, RNS.Identity, RNS.Reticulum, RNS.Packet
    saved = []

    def patch(target, name, value):
        saved.append((target, name, target.__dict__.get(name, _UNSET)
                      if isinstance(target, type) else getattr(target, name, _UNSET)))
        setattr(target, name, value)

    def send(self):
        if not self.packed:
            self.pack()
        env.sent.append(self)
        return None

    try:
        patch(P, "send", send)
        patch(T, "register_destination", staticmethod(lambda d: None))
        patch(T, "register_link", staticmethod(lambda link: None))
        patch(T, "activate_link", staticmethod(lambda link: None))
        patch(T, "add_interface", staticmethod(lambda i: None))
        patch(T, "path_request", staticmethod(
            lambda *a, **kw: env.path_requests.append((a, kw))))
        patch(T, "identity", types.SimpleNamespace(hash=transport_id or b"\0" * 16))
        patch(T, "owner", types.SimpleNamespace(is_connected_to_shared_instance=False))
        patch(L, "start_watchdog", lambda self: None)
        patch(R, "get_instance", staticmethod(lambda: _Instance()))
        patch(R, "_Reticulum__use_implicit_proof", bool(implicit_proof))
        patch(R, "_Reticulum__transport_enabled", bool(transport_enabled))
        patch(R, "_Reticulum__link_mtu_discovery", True)
        patch(I, "remember", staticmethod(lambda *a: env.remembered.append(a)))
        patch(I, "_remember_ratchet", staticmethod(lambda *a: env.ratchets.append(a)))
        if now is not None:
            patch(_M["Destination"], "time", _Clock(now))
            patch(_M["Link"], "time", _Clock(now))
        if random_blob is not None:
            patch(_M["Identity"], "os", _ScriptedOs(random_blob))
        with _h._fixed_randomness(eph_priv, iv):
            yield env
    finally:
        while saved:
            target, name, prev = saved.pop()
            if prev is _UNSET:
                delattr(target, name)
            else:
                setattr(target, name, prev)


class _Dest:
    """An addressable destination: type, hash, and an encrypt that runs the reference's own
    encryption for the chosen kind (0 none / PLAIN, 1 Identity.encrypt to a 64-byte public
    key or to an explicit ratchet, 2 the GROUP Token, 3 Link.encrypt with a link key), chosen
    independently of the flagged type so any row can carry any payload treatment.
    Destination.encrypt's ratchet lookup (which reads the ratchet directory) is replaced by
    the explicit ratchet."""

    def __init__(self, dtype, dhash, kind=0, key=None, ratchet=None, mtu=None):
        self.type = dtype
        self.hash = dhash
        self.hexhash = dhash.hex()
        self.link_id = dhash
        self._kind, self._key, self._ratchet = kind, key, ratchet
        self.mtu = mtu if mtu is not None else RNS.Reticulum.MTU
        self.status = None
        self.identity = None

    def encrypt(self, pt):
        if self._kind == 1:
            return _h._identity_from_public(self._key).encrypt(pt, ratchet=self._ratchet)
        if self._kind == 2:
            return RNS.Cryptography.Token(self._key).encrypt(pt)
        if self._kind == 3:
            return _link(self._key, self.hash, mtu=self.mtu).encrypt(pt)
        return pt


def _link(derived_key, link_id, initiator=True, mtu=None, status=None, identity_prv=None,
          mode=None):
    """A Link object in the given state without Link.__init__ (which would start a
    handshake): the attributes its methods used here read."""
    L = RNS.Link
    link = L.__new__(L)
    link.type = RNS.Destination.LINK
    link.link_id = link.hash = link_id
    link.derived_key = derived_key
    link.token = None
    link.mtu = mtu if mtu is not None else RNS.Reticulum.MTU
    link.mode = L.MODE_DEFAULT if mode is None else mode
    link.initiator = initiator
    link.status = L.ACTIVE if status is None else status
    link.owner = None
    link.destination = types.SimpleNamespace(
        proof_strategy=RNS.Destination.PROVE_NONE, callbacks=types.SimpleNamespace(),
        direction=RNS.Destination.OUT, links=[], type=RNS.Destination.SINGLE, mtu=link.mtu)
    link.callbacks = L.__init__.__globals__["LinkCallbacks"]()
    link.attached_interface = None
    link._Link__remote_identity = None
    link._Link__track_phy_stats = False
    link._channel = None
    link.incoming_resources, link.outgoing_resources, link.pending_requests = [], [], []
    link.last_inbound = link.last_outbound = link.last_keepalive = link.last_data = 0
    link.last_proof = 0
    link.tx = link.rx = link.txbytes = link.rxbytes = 0
    link.keepalive = L.KEEPALIVE
    link.rtt = None
    link.establishment_cost = 0
    link.establishment_rate = None
    link.request_time = 0
    if identity_prv is not None:
        ident = _h._identity_from_private(identity_prv)
        link.sig_prv = ident.sig_prv
    return link


def _unpacked(raw):
    pkt = RNS.Packet(None, bytes(raw))
    if not pkt.unpack():
        return None
    return pkt


def _unpack_failure(raw):
    """Names why Packet.unpack refused raw (its only messages: short fields, the hop limit,
    zero-length data)."""
    if len(raw) >= 2 and raw[1] >= RNS.Transport.PATHFINDER_M:
        return E_HOPS
    return E_TRUNCATED


# ---------------------------------------------------------------------------------------------
# Rows and constants

_NOT_CONTEXTS = {"DATA", "ANNOUNCE", "LINKREQUEST", "PROOF", "HEADER_1", "HEADER_2",
                 "FLAG_SET", "FLAG_UNSET", "HEADER_MAXSIZE", "MDU", "ENCRYPTED_MDU",
                 "PLAIN_MDU", "TIMEOUT_PER_HOP"}


def _names(cls, values, exclude=()):
    """{value: NAME} for the upper-case int class attributes of cls whose value is in values
    (first name in definition order wins)."""
    out = {}
    for name, v in vars(cls).items():
        if name.isupper() and isinstance(v, int) and not isinstance(v, bool) and \
                v in values and name not in exclude and v not in out:
            out[v] = name
    return out


def contexts():
    """Every packet context the reference defines: the byte-sized upper-case int constants of
    RNS.Packet that are not types, header types, flags or sizes. A constant added upstream
    lands here (and becomes a row rnsc must know)."""
    _mods()
    P = RNS.Packet
    out = []
    for name, v in vars(P).items():
        if name.isupper() and isinstance(v, int) and not isinstance(v, bool) and \
                0 <= v <= 255 and name not in _NOT_CONTEXTS:
            out.append((v, name))
    return sorted(out)


_rows_cache = None


def _rows():
    global _rows_cache
    if _rows_cache is not None:
        return _rows_cache
    _mods()
    P, D, T, L = RNS.Packet, RNS.Destination, RNS.Transport, RNS.Link
    # definition order makes the first name of each value the type's own (DATA before NONE)
    ptypes = _names(P, P.types)
    htypes = {v: n for v, n in _names(P, P.header_types, exclude=set(ptypes.values())).items()}
    dtypes = _names(D, D.types)
    rows = []
    for pt in P.types:
        for cv, cn in contexts():
            for dt in D.types:
                for ht in P.header_types:
                    rows.append(("packet", f"packet {ptypes.get(pt, pt)}/{cn}/"
                                 f"{dtypes.get(dt, dt)}/{htypes.get(ht, ht)}", (pt, cv, dt, ht)))
    tnames = {v: n for v, n in _names(T, T.types).items()
              if n in ("BROADCAST", "TRANSPORT", "RELAY", "TUNNEL")}
    for tt in T.types:
        rows.append(("propagation", f"propagation {tnames.get(tt, tt)}", (tt,)))
    for name in sorted(n for n in vars(P) if n.startswith("FLAG_")):
        rows.append(("flag", f"context flag {name}", (getattr(P, name),)))
    for ratchet in (0, 1):
        for app in (0, 1):
            for pr in (0, 1):
                for ht in P.header_types:
                    rows.append(("announce", "announce " + "/".join((
                        "ratchet" if ratchet else "no-ratchet",
                        "app-data" if app else "no-app-data",
                        "PATH_RESPONSE" if pr else "NONE", htypes.get(ht, str(ht)))),
                        (ratchet, app, pr, ht)))
    R = RNS.PacketReceipt
    rows.append(("proof", f"proof explicit ({R.EXPL_LENGTH} bytes)", (R.EXPL_LENGTH,)))
    rows.append(("proof", f"proof implicit ({R.IMPL_LENGTH} bytes)", (R.IMPL_LENGTH,)))
    rows.append(("proof", f"proof on link ({R.EXPL_LENGTH} bytes, LINK)", (0,)))
    rows.append(("pathreq", "path request (tag only)", (0,)))
    rows.append(("pathreq", "path request (transport id + tag)", (1,)))
    for name in ("LINKREQUEST", "LRPROOF", "LRRTT", "KEEPALIVE", "LINKCLOSE", "LINKIDENTIFY"):
        rows.append(("link", f"link {name}", (getattr(P, name),)))
    for mode, desc in sorted(L.MODE_DESCRIPTIONS.items()):
        mname = next((n for n, v in vars(L).items() if n.startswith("MODE_") and v == mode and
                      n != "MODE_DEFAULT"), desc)
        rows.append(("signalling", f"link signalling {mname}", (mode,)))
    rows.append(("mtu", "mtu constants", (0,)))
    rows.append(("mtu", "mtu packet boundary", (1,)))
    rows.append(("mtu", "mtu link above 500", (2,)))
    rows.append(("mtu", "mtu link MDU", (3,)))
    rows.append(("mtu", "mtu hardware tiers", (4,)))
    rows.append(("framing", "framing HDLC", (0,)))
    rows.append(("framing", "framing KISS", (1,)))
    sizes = {RNS.Reticulum.IFAC_MIN_SIZE, RNS.Identity.SIGLENGTH // 8}
    for cls in _interface_classes():
        sizes.add(cls.DEFAULT_IFAC_SIZE)
    for s in sorted(sizes):
        rows.append(("ifac", f"ifac size {s}", (s, 3)))
    rows.append(("ifac", "ifac origin network_name", (16, 1)))
    rows.append(("ifac", "ifac origin passphrase", (16, 2)))
    _rows_cache = rows
    return rows


def _interface_classes():
    import importlib
    out = []
    for mod in ("Interface", "KISSInterface", "AX25KISSInterface", "RNodeInterface",
                "PipeInterface", "TCPInterface", "BackboneInterface", "AutoInterface"):
        try:
            m = importlib.import_module("RNS.Interfaces." + mod)
        except Exception:  # optional dependencies of some interfaces
            continue
        for v in vars(m).values():
            if isinstance(v, type) and hasattr(v, "DEFAULT_IFAC_SIZE") and v.__module__ == m.__name__:
                out.append(v)
    return out


def row_count():
    return len(_rows())


def row(i):
    family, name, params = _rows()[i]
    return (family, name) + tuple(params)


def constants():
    """Wire constants as (name, value) pairs."""
    _mods()
    R, P, I, L, T = RNS.Reticulum, RNS.Packet, RNS.Identity, RNS.Link, RNS.Transport
    pr = RNS.PacketReceipt
    ns = types.SimpleNamespace(mtu=R.MTU)
    L.update_mdu(ns)
    return [("MTU", R.MTU), ("MDU", R.MDU), ("HEADER_MINSIZE", R.HEADER_MINSIZE),
            ("HEADER_MAXSIZE", R.HEADER_MAXSIZE), ("IFAC_MIN_SIZE", R.IFAC_MIN_SIZE),
            ("ENCRYPTED_MDU", P.ENCRYPTED_MDU), ("PLAIN_MDU", P.PLAIN_MDU),
            ("LINK_MDU", L.MDU), ("LINK_MDU_AT_MTU", ns.mdu),
            ("PATHFINDER_M", T.PATHFINDER_M), ("EXPL_LENGTH", pr.EXPL_LENGTH),
            ("IMPL_LENGTH", pr.IMPL_LENGTH), ("LINK_MTU_SIZE", L.LINK_MTU_SIZE),
            ("ECPUBSIZE", L.ECPUBSIZE), ("MTU_BYTEMASK", L.MTU_BYTEMASK),
            ("MODE_BYTEMASK", L.MODE_BYTEMASK), ("MODE_DEFAULT", L.MODE_DEFAULT),
            ("TRUNCATED_HASHLENGTH", I.TRUNCATED_HASHLENGTH // 8),
            ("NAME_HASH_LENGTH", I.NAME_HASH_LENGTH // 8), ("KEYSIZE", I.KEYSIZE // 8),
            ("SIGLENGTH", I.SIGLENGTH // 8), ("RATCHETSIZE", I.RATCHETSIZE // 8),
            ("TOKEN_OVERHEAD", I.TOKEN_OVERHEAD),
            ("DEFAULT_IFAC_SIZE", _M["Interfaces.Interface"].Interface.DEFAULT_IFAC_SIZE),
            ("KISS_DEFAULT_IFAC_SIZE", _M["Interfaces.KISSInterface"].KISSInterface.DEFAULT_IFAC_SIZE)]


def constants_item(i):
    """The i-th (name, value) of constants(), None past the end."""
    c = constants()
    return c[i] if 0 <= i < len(c) else None


def link_mdu(mtu):
    """Link.update_mdu on a link with this MTU."""
    _mods()
    ns = types.SimpleNamespace(mtu=mtu)
    RNS.Link.update_mdu(ns)
    return ns.mdu


def hw_mtu(bitrate):
    """Interface.optimise_mtu for an AUTOCONFIGURE_MTU interface at this bitrate (0: none)."""
    _mods()
    ns = types.SimpleNamespace(AUTOCONFIGURE_MTU=True, bitrate=bitrate, HW_MTU=None)
    _M["Interfaces.Interface"].Interface.optimise_mtu(ns)
    return ns.HW_MTU or 0


# ---------------------------------------------------------------------------------------------
# Packets


def packet_pack(header_type, packet_type, dest_type, context, context_flag, transport_type,
                hops, transport_id, dest_hash, data, enc_kind, enc_key, ratchet, eph, iv, mtu):
    """RNS.Packet(dest, data, ...).pack() for a destination of dest_type. enc_kind says how the
    reference's destination encrypts (0 none/PLAIN, 1 Identity to the 64-byte public key
    enc_key (or the ratchet), 2 GROUP Token key, 3 link token key); Packet.pack decides
    whether to. HEADER_2 announces are packed with a transport id as Transport does; other
    HEADER_2 packets are packed HEADER_1 and put into transport by Transport.mangle_hops
    (the reference never packs them directly: Packet.pack has no ciphertext for them, and
    for LRPROOF it writes no transport id)."""
    _mods()
    P = RNS.Packet
    dest = _Dest(dest_type, dest_hash, enc_kind, enc_key, ratchet, mtu)
    # Packet.pack ignores the header type of an LRPROOF (it writes the link id as the only
    # address), so such packets too go into transport the way Transport puts them there.
    h2_direct = header_type == P.HEADER_2 and packet_type == P.ANNOUNCE and context != P.LRPROOF
    with _env(transport_id=transport_id, eph_priv=eph, iv=iv):
        pkt = P(dest, data, packet_type=packet_type, context=context,
                transport_type=transport_type,
                header_type=P.HEADER_2 if h2_direct else P.HEADER_1,
                transport_id=transport_id if h2_direct else None,
                create_receipt=False, context_flag=context_flag)
        pkt.hops = hops
        try:
            pkt.pack()
        except IOError as e:
            if "exceeds MTU" in str(e):
                return E_TOOBIG
            raise
        raw = pkt.raw
        if header_type == P.HEADER_2 and not h2_direct:
            raw = RNS.Transport.mangle_hops(raw, hops, transport_insert=True)
    return bytes(raw)


def packet_unpack(raw, dec_kind=0, dec_key=None, ratchet_prv=None):
    """Packet.unpack -> (flags, hops, header_type, context_flag, transport_type, dest_type,
    packet_type, transport_id|None, dest_hash, context, data, packet_hash, truncated_hash,
    plaintext|None) or the verdict. dec_kind decrypts the data as the destination would
    (1 Identity private key, 2 GROUP key, 3 link key); a failed decryption gives the verdict
    the reference's replayed failure names."""
    _mods()
    pkt = _unpacked(raw)
    if pkt is None:
        return _unpack_failure(raw)
    pt = None
    if dec_kind == 1:
        ident = _h._identity_from_private(dec_key)
        rl = [ratchet_prv] if ratchet_prv else None
        pt = ident.decrypt(pkt.data, ratchets=rl)
        if pt is None:
            return _h._identity_failure(ident, pkt.data, rl, False)
    elif dec_kind in (2, 3):
        tok = RNS.Cryptography.Token(dec_key)
        try:
            pt = tok.decrypt(pkt.data)
        except Exception:
            return _h._token_failure(tok, pkt.data)
    return (raw[0], pkt.hops, pkt.header_type, pkt.context_flag, pkt.transport_type,
            pkt.destination_type, pkt.packet_type, pkt.transport_id, pkt.destination_hash,
            pkt.context, pkt.data, pkt.packet_hash, pkt.truncated_packet_hash, pt)


def packet_encrypts(packet_type, context, dest_type):
    """Whether Packet.pack runs the destination's encrypt for a HEADER_1 packet of this
    shape: 1 or 0 (found by packing with a destination that records the call)."""
    _mods()
    called = []

    class Rec(_Dest):
        def encrypt(self, pt):
            called.append(1)
            return pt

    with _env():
        pkt = RNS.Packet(Rec(dest_type, b"\x11" * 16), b"x", packet_type=packet_type,
                         context=context, create_receipt=False)
        pkt.pack()
    return 1 if called else 0


# ---------------------------------------------------------------------------------------------
# Announces


def announce_build(prv, app_name, aspect, ratchet_prv, app_data, path_response, rand16, now,
                   header_type, transport_id, hops):
    """Destination.announce(send=False) for SINGLE/IN destination app_name.aspect of the
    identity prv, with the random hash's 16 source bytes and the clock pinned; ratchets
    enabled with ratchet_prv as the current ratchet when given. HEADER_2: the announce data
    re-sent as Transport does for rebroadcasts and path responses. -> raw packet."""
    _mods()
    D, P = RNS.Destination, RNS.Packet
    ident = _h._identity_from_private(prv)
    with _env(now=now, random_blob=rand16, transport_id=transport_id) as env:
        d = D(ident, D.IN, D.SINGLE, app_name, aspect)
        if ratchet_prv is not None:
            d.ratchets = [ratchet_prv]
            d.latest_ratchet_time = now  # no rotation during the call
        pkt = d.announce(app_data=app_data, path_response=bool(path_response), send=False)
        if header_type == P.HEADER_2:
            stand_in = _Dest(D.SINGLE, pkt.destination.hash)
            pkt = P(stand_in, pkt.data, P.ANNOUNCE, context=pkt.context,
                    header_type=P.HEADER_2, transport_type=RNS.Transport.TRANSPORT,
                    transport_id=transport_id, context_flag=pkt.context_flag)
        pkt.hops = hops
        pkt.pack()
        if ratchet_prv is not None and len(env.ratchets) != 1:
            raise AssertionError("announce did not remember its ratchet once")
    return bytes(pkt.raw)


def announce_validate(raw):
    """Identity.validate_announce on the unpacked raw packet -> (public_key, name_hash,
    random_hash, ratchet|b"", signature, app_data|None as remembered, identity_hash,
    remembered ratchet|None) or the verdict."""
    _mods()
    I = RNS.Identity
    pkt = _unpacked(raw)
    if pkt is None:
        return _unpack_failure(raw)
    with _env() as env:
        ok = I.validate_announce(pkt)
        if not ok:
            if pkt.packet_type != RNS.Packet.ANNOUNCE:
                return E_MALFORMED
            minimum = I.KEYSIZE // 8 + I.NAME_HASH_LENGTH // 8 + 10 + I.SIGLENGTH // 8
            if pkt.context_flag == RNS.Packet.FLAG_SET:
                minimum += I.RATCHETSIZE // 8
            if len(pkt.data) < minimum:
                return E_TRUNCATED
            pkt.announce_signature_validated = None
            if not I.validate_announce(pkt, only_validate_signature=True):
                return E_SIGNATURE
            return E_DEST_MISMATCH
    if len(env.remembered) != 1:
        raise AssertionError("valid announce was not remembered exactly once")
    _ph, dest_hash, pub, app_data = env.remembered[0]
    d = pkt.data
    k, n, s, r = I.KEYSIZE // 8, I.NAME_HASH_LENGTH // 8, I.SIGLENGTH // 8, I.RATCHETSIZE // 8
    ratchet = d[k + n + 10:k + n + 10 + r] if pkt.context_flag else b""
    sig_at = k + n + 10 + (r if pkt.context_flag else 0)
    ident = I(create_keys=False)
    ident.load_public_key(pub)
    remembered_ratchet = env.ratchets[0][1] if env.ratchets else None
    return (pub, d[k:k + n], d[k + n:k + n + 10], ratchet, d[sig_at:sig_at + s], app_data,
            ident.hash, remembered_ratchet)


# ---------------------------------------------------------------------------------------------
# Proofs


def proof_build(prv, proved_raw, implicit):
    """Packet.prove -> Identity.prove for a received packet whose destination holds the
    identity prv -> the raw proof packet."""
    _mods()
    pkt = _unpacked(proved_raw)
    if pkt is None:
        return _unpack_failure(proved_raw)
    pkt.destination = types.SimpleNamespace(identity=_h._identity_from_private(prv))
    pkt.receiving_interface = None
    with _env(implicit_proof=implicit) as env:
        pkt.prove()
    if len(env.sent) != 1:
        raise AssertionError("prove did not send one proof")
    return bytes(env.sent[0].raw)


def _receipt(packet_hash, pub):
    R = RNS.PacketReceipt
    rc = R.__new__(R)
    rc.hash = packet_hash
    rc.truncated_hash = packet_hash[:16]
    rc.status = R.SENT
    rc.proved = False
    rc.callbacks = sys.modules["RNS.Packet"].PacketReceiptCallbacks()
    rc.destination = types.SimpleNamespace(
        identity=_h._identity_from_public(pub) if pub is not None else None)
    rc.concluded_at = None
    rc.proof_packet = None
    return rc


def proof_validate(pub, packet_hash, proof):
    """PacketReceipt.validate_proof for a packet with packet_hash sent to the identity pub."""
    _mods()
    rc = _receipt(packet_hash, pub)
    if rc.validate_proof(proof):
        return OK
    R = RNS.PacketReceipt
    if len(proof) not in (R.EXPL_LENGTH, R.IMPL_LENGTH):
        return E_MALFORMED
    if len(proof) == R.EXPL_LENGTH and proof[:32] != packet_hash:
        return E_PROOF_HASH
    return E_SIGNATURE


def link_proof_build(sig_seed, proved_raw, link_mtu):
    """Link.prove_packet on a link whose signing key is sig_seed -> the raw proof packet."""
    _mods()
    pkt = _unpacked(proved_raw)
    if pkt is None:
        return _unpack_failure(proved_raw)
    link = _link(b"\0" * 64, pkt.destination_hash, mtu=link_mtu)
    link.sig_prv = RNS.Cryptography.Ed25519PrivateKey.from_private_bytes(sig_seed)
    with _env() as env:
        link.prove_packet(pkt)
    return bytes(env.sent[0].raw)


def link_proof_validate(peer_sig_pub, packet_hash, proof):
    """PacketReceipt.validate_link_proof with a link whose peer signing key is peer_sig_pub."""
    _mods()
    rc = _receipt(packet_hash, None)
    link = _link(b"\0" * 64, b"\0" * 16)
    link.peer_sig_pub = RNS.Cryptography.Ed25519PublicKey.from_public_bytes(peer_sig_pub)
    if rc.validate_link_proof(proof, link):
        return OK
    if proof[:32] != packet_hash:
        return E_PROOF_HASH if len(proof) >= 96 else E_MALFORMED
    return E_MALFORMED if len(proof) < 96 else E_SIGNATURE


# ---------------------------------------------------------------------------------------------
# Path requests


def pathreq_destination():
    _mods()
    return RNS.Destination.hash(None, RNS.Transport.APP_NAME, "path", "request")


def pathreq_build(dest_hash, tag, transport_id):
    """Transport.request_path(dest_hash, tag=tag) on a node with transport enabled exactly when
    transport_id is given -> the raw request packet."""
    _mods()
    T = RNS.Transport
    with _env(transport_id=transport_id, transport_enabled=transport_id is not None) as env:
        had = dest_hash in T.path_requests
        try:
            T.request_path(dest_hash, tag=tag)
        finally:
            if not had:
                T.path_requests.pop(dest_hash, None)
    if len(env.sent) != 1:
        raise AssertionError("request_path did not send one packet")
    return bytes(env.sent[0].raw)


def pathreq_parse(data):
    """Transport.path_request_handler(data) -> (destination, transport id|None, tag) as it hands
    them to Transport.path_request, or the verdict."""
    _mods()
    packet = types.SimpleNamespace(receiving_interface=None, traffic_class=None)
    with _env() as env:
        RNS.Transport.path_request_handler(data, packet)
    if not env.path_requests:
        return E_TRUNCATED if len(data) < 16 else E_NOTAG
    args, kw = env.path_requests[0]
    return (args[0], kw.get("requestor_transport_id"), kw.get("tag"))


# ---------------------------------------------------------------------------------------------
# Links


def link_signalling(mtu, mode):
    _mods()
    try:
        return RNS.Link.signalling_bytes(mtu, mode)
    except TypeError:
        return E_LINK_MODE


def link_signalling_decode(sig):
    """mtu and mode as Link.mtu_from_lr_packet / mode_from_lr_packet read them."""
    _mods()
    pkt = types.SimpleNamespace(data=b"\0" * 64 + bytes(sig))
    return (RNS.Link.mtu_from_lr_packet(pkt), RNS.Link.mode_from_lr_packet(pkt))


def link_request_build(dest_hash, x_pub, ed_pub, signal, mtu, mode):
    """The link request Link.__init__ sends: pub || sig_pub || signalling_bytes(mtu, mode), as a
    LINKREQUEST packet to the SINGLE destination."""
    _mods()
    L, P = RNS.Link, RNS.Packet
    try:
        sb = L.signalling_bytes(mtu, mode) if signal else b""
    except TypeError:
        return E_LINK_MODE
    with _env():
        pkt = P(_Dest(RNS.Destination.SINGLE, dest_hash), x_pub + ed_pub + sb,
                packet_type=P.LINKREQUEST)
        pkt.pack()
    return bytes(pkt.raw)


def link_request_accept(raw, dest_prv, eph_priv):
    """Link.validate_request at the destination holding dest_prv, with the responder's
    ephemeral X25519 key pinned -> (link_id, mtu, mode, raw LRPROOF packet, derived key) or the
    verdict."""
    _mods()
    L = RNS.Link
    pkt = _unpacked(raw)
    if pkt is None:
        return _unpack_failure(raw)
    owner = types.SimpleNamespace(identity=_h._identity_from_private(dest_prv),
                                  callbacks=types.SimpleNamespace(link_established=None))
    pkt.destination = owner
    pkt.receiving_interface = None
    with _env(eph_priv=eph_priv) as env:
        link = L.validate_request(owner, pkt.data, pkt)
    if link is None:
        if len(pkt.data) not in (L.ECPUBSIZE, L.ECPUBSIZE + L.LINK_MTU_SIZE):
            return E_MALFORMED
        return E_LINK_MODE
    if len(env.sent) != 1:
        raise AssertionError("validate_request did not send one proof")
    return (link.link_id, link.mtu, link.mode, bytes(env.sent[0].raw), link.derived_key)


def link_proof_accept(raw, link_id, dest_pub, init_x_priv, init_ed_seed, mode, now, rtt, iv):
    """Link.validate_proof at the initiator (pending link link_id to the destination dest_pub,
    requested with mode, own keys init_x_priv / init_ed_seed, requested rtt seconds before
    now) -> (mtu, derived key, raw LRRTT packet) or the verdict."""
    _mods()
    L = RNS.Link
    C = RNS.Cryptography
    pkt = _unpacked(raw)
    if pkt is None:
        return _unpack_failure(raw)
    pkt.receiving_interface = None
    link = _link(None, link_id, initiator=True, status=L.PENDING, mode=mode)
    link.destination = types.SimpleNamespace(identity=_h._identity_from_public(dest_pub),
                                             type=RNS.Destination.SINGLE, hash=b"\0" * 16)
    link.prv = C.X25519PrivateKey.from_private_bytes(init_x_priv)
    link.pub_bytes = link.prv.public_key().public_bytes()
    link.sig_prv = C.Ed25519PrivateKey.from_private_bytes(init_ed_seed)
    link.sig_pub_bytes = link.sig_prv.public_key().public_bytes()
    link.request_time = now - rtt
    with _env(now=now, iv=iv) as env:
        link.validate_proof(pkt)
    if link.status != L.ACTIVE:
        data = pkt.data
        if len(data) > 96 and (data[96] >> 5) != mode:
            return E_LINK_MODE
        if len(data) not in (96, 99):
            return E_MALFORMED
        return E_SIGNATURE
    if len(env.sent) != 1:
        raise AssertionError("validate_proof did not send one RTT packet")
    return (link.mtu, link.derived_key, bytes(env.sent[0].raw))


def link_packet_build(kind, link_id, derived_key, iv, arg, arg2):
    """A link's own packet of the given context: KEEPALIVE (arg 0xFF: the initiator's
    send_keepalive; 0xFE: the responder's answer, made by receiving 0xFF), LINKCLOSE (the
    teardown packet), LINKIDENTIFY (identify(identity arg)), LRRTT (the RTT packet
    validate_proof sends, rtt = arg2 seconds). -> raw packet."""
    _mods()
    P, L = RNS.Packet, RNS.Link
    if kind == P.KEEPALIVE and arg == 0xFE:
        link = _link(derived_key, link_id, initiator=False)
        req = _unpacked(link_packet_build(P.KEEPALIVE, link_id, derived_key, iv, 0xFF, None))
        req.receiving_interface = None
        with _env() as env:
            link.receive(req)
        return bytes(env.sent[0].raw)
    link = _link(derived_key, link_id, initiator=True)
    with _env(iv=iv) as env:
        if kind == P.KEEPALIVE:
            link.send_keepalive()
        elif kind == P.LINKCLOSE:
            link.teardown()
        elif kind == P.LINKIDENTIFY:
            link.identify(_h._identity_from_private(arg))
        elif kind == P.LRRTT:
            P(link, _umsgpack().packb(arg2), context=P.LRRTT).send()
        else:
            raise ValueError(f"no link packet of context {kind}")
    if len(env.sent) != 1:
        raise AssertionError("the link did not send one packet")
    return bytes(env.sent[0].raw)


def _umsgpack():
    return sys.modules["RNS.vendor.umsgpack"]


def link_packet_receive(kind, raw, link_id, derived_key, now):
    """Hands a link packet to the receiving side of a link (the responder for KEEPALIVE 0xFF,
    LINKIDENTIFY and LRRTT; the other end for LINKCLOSE) -> what the link made of it:
    KEEPALIVE: 0xFF when it answered, 0 when it took it as plain traffic; LINKCLOSE: None when
    the link closed; LINKIDENTIFY: the identified public key; LRRTT: the link's rtt after
    rtt_packet in units of 2^-20 s (an int). Otherwise the verdict."""
    _mods()
    P, L = RNS.Packet, RNS.Link
    pkt = _unpacked(raw)
    if pkt is None:
        return _unpack_failure(raw)
    pkt.receiving_interface = None
    tok = RNS.Cryptography.Token(derived_key)

    def decrypt_failure():
        try:
            tok.decrypt(pkt.data)
        except Exception:
            return _h._token_failure(tok, pkt.data)
        return None

    if kind == P.KEEPALIVE:
        link = _link(derived_key, link_id, initiator=False)
        with _env() as env:
            link.receive(pkt)
        return 0xFF if env.sent else 0
    if kind == P.LINKCLOSE:
        link = _link(derived_key, link_id, initiator=True)
        with _env():
            link.receive(pkt)
        if link.status == L.CLOSED:
            return OK
        bad = decrypt_failure()
        if bad:
            return bad
        return E_NOTFOUND if len(tok.decrypt(pkt.data)) == 16 else E_MALFORMED
    if kind == P.LINKIDENTIFY:
        link = _link(derived_key, link_id, initiator=False)
        with _env():
            link.receive(pkt)
        who = link.get_remote_identity()
        if who is not None:
            return who.get_public_key()
        bad = decrypt_failure()
        if bad:
            return bad
        pt = tok.decrypt(pkt.data)
        return E_MALFORMED if len(pt) != 128 else E_SIGNATURE
    if kind == P.LRRTT:
        link = _link(derived_key, link_id, initiator=False, status=L.HANDSHAKE)
        link.owner = types.SimpleNamespace(callbacks=types.SimpleNamespace(link_established=None))
        link.request_time = now
        with _env(now=now):
            link.rtt_packet(pkt)
        if link.status == L.ACTIVE:
            return int(link.rtt * 1048576)  # exact for the rtts the matrix sends
        bad = decrypt_failure()
        if bad:
            return bad
        try:
            _umsgpack().unpackb(tok.decrypt(pkt.data))
        except _umsgpack().InsufficientDataException:
            return E_TRUNCATED
        except Exception:
            pass
        return E_MALFORMED
    raise ValueError(f"no link packet of context {kind}")


# ---------------------------------------------------------------------------------------------
# IFAC


def _ifac_interface(netname, netkey, size, hw_mtu):
    """An Interface set up by Reticulum._add_interface (the reference's IFAC derivation) on a
    Reticulum object that was never started."""
    R = RNS.Reticulum
    Iface = _M["Interfaces.Interface"].Interface
    iface = Iface.__new__(Iface)
    iface.bitrate = 62500
    iface.HW_MTU = hw_mtu
    iface.ifac_violations = iface.protocol_violations = iface.packet_filter_hits = 0
    iface.final_init = lambda: None
    if netname is None and netkey is None:
        iface.ifac_identity = None
        iface.ifac_size = size
        return iface
    r = R.__new__(R)
    r.is_connected_to_shared_instance = False
    r.ifac_salt = R.IFAC_SALT
    r._Reticulum__default_gravity = 0
    with _env():
        r._add_interface(iface, ifac_size=size, ifac_netname=netname, ifac_netkey=netkey)
    return iface


def ifac_derive(netname, netkey, size):
    """-> (ifac_key, ifac identity public key, ifac_signature)."""
    _mods()
    iface = _ifac_interface(netname, netkey, size, 500)
    return (iface.ifac_key, iface.ifac_identity.get_public_key(), iface.ifac_signature)


def ifac_apply(netname, netkey, size, raw):
    """Transport.handle_outgoing_ifac for an interface with this IFAC configuration."""
    _mods()
    iface = _ifac_interface(netname, netkey, size, 500)
    return RNS.Transport.handle_outgoing_ifac(iface, bytes(raw))


def ifac_receive(netname, netkey, size, frame, hw_mtu):
    """Transport.preprocess_inbound on an interface with this IFAC configuration (none when
    netname and netkey are None) -> (raw packet handed on, ifac_violations,
    protocol_violations) when the frame got past the IFAC checks, else (None, ...). The frame
    stops at the packet filter either way; packets that do not unpack stop earlier and report
    protocol_violations."""
    _mods()
    T = RNS.Transport
    iface = _ifac_interface(netname, netkey, size, hw_mtu)
    passed = []

    def filt(packet):
        passed.append(bytes(packet.raw))
        return False

    saved = {k: T.__dict__.get(k, _UNSET) for k in ("ready", "packet_filter")}
    try:
        T.ready = True
        T.packet_filter = staticmethod(filt)
        with _env(transport_id=b"\x01" * 16):
            T.preprocess_inbound(bytes(frame), interface=iface)
    finally:
        for k, v in saved.items():
            if v is _UNSET:
                delattr(T, k)
            else:
                setattr(T, k, v)
    return (passed[0] if passed else None, iface.ifac_violations, iface.protocol_violations)


# ---------------------------------------------------------------------------------------------
# Framing


def hdlc_frame(data):
    _mods()
    return bytes(_M["Interfaces.util.HDLC"].HDLC.frame(bytes(data)))


def hdlc_receive(stream, hw_mtu):
    """ReceiveBuffer as LocalInterface/BackboneInterface configure it (min frame length
    HEADER_MINSIZE, max HW_MTU) fed the whole stream -> (frame, frame, ...)."""
    _mods()
    got = []
    rb = _M["Interfaces.util.HDLC"].ReceiveBuffer(
        mtu=hw_mtu, min_frame_len=RNS.Reticulum.HEADER_MINSIZE, max_frame_len=hw_mtu,
        on_frame=lambda f: got.append(bytes(f)))
    rb.feed(bytes(stream))
    return tuple(got)


class _Serial:
    def __init__(self, data):
        self._data = bytearray(data)
        self.written = bytearray()

    @property
    def is_open(self):
        return len(self._data) > 0

    @property
    def in_waiting(self):
        return len(self._data)

    def read(self, n):
        b = bytes(self._data[:n])
        del self._data[:n]
        return b

    def write(self, b):
        self.written += b
        return len(b)

    def close(self):
        pass


def _kiss_interface(serial, hw_mtu):
    K = _M["Interfaces.KISSInterface"].KISSInterface
    iface = K.__new__(K)
    iface.serial = serial
    iface.HW_MTU = hw_mtu
    iface.online = True
    iface.interface_ready = True
    iface.flow_control = False
    iface.beacon_d = None
    iface.beacon_i = None
    iface.first_tx = None
    iface.txb = iface.rxb = 0
    iface.timeout = 100
    iface.packet_queue = []
    # what 1.5.7's constructor adds and its readLoop reads once the port runs dry
    iface.detached = False
    iface.reconnecting = False
    return iface


def kiss_frame(data):
    """KISSInterface.process_outgoing -> the bytes it writes to the serial port."""
    _mods()
    serial = _Serial(b"")
    _kiss_interface(serial, 564).process_outgoing(bytes(data))
    return bytes(serial.written)


def kiss_receive(stream, hw_mtu):
    """KISSInterface.readLoop over stream -> (payload, payload, ...) it passes on."""
    _mods()
    got = []
    iface = _kiss_interface(_Serial(stream), hw_mtu)
    iface.process_incoming = lambda data: got.append(bytes(data)) if data else None
    iface.reconnect_port = lambda: None  # readLoop reconnects once the port runs dry
    iface.readLoop()
    return tuple(got)
