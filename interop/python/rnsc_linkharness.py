# SPDX-License-Identifier: MIT
"""Live reference links for rnsc's link cross-check (conformance/link_xcheck_test.c).

The C side imports this module into the embedded interpreter (after rnsc_refharness set the
reference up) and calls install(), which makes one dispatcher reachable through the generic
wire bridge (interop/ref_wire.h) as rnsc_wireharness.link(name, *args). Results follow
rnsc_wireharness: ints, bytes, None or a flat tuple of them; anything unexpected raises
(RNSC_ERR_PYTHON on the C side, so the test fails loudly).

One reference link at a time (a session): either an initiator built by RNS.Link(destination)
exactly as an application builds it, or a responder made by RNS.Destination.receive() of the
link request rnsc sent (Destination.incoming_link_request -> Link.validate_request). Packets
then go in through the same entry points Transport uses: Link.validate_proof for an LRPROOF
addressed to a pending link, Link.receive for everything else. Each call returns the frames
the reference transmitted during it.

RNS.Reticulum() is never started; for the duration of each call (_env) and only then:
  * Transport.outbound records the packed frame instead of sending it (Packet.send still runs
    its own bookkeeping: closed-link check, last_outbound, tx counters);
  * Transport.register_link / activate_link / register_destination do nothing,
    Transport.hops_to answers the session's hop count, next_hop_interface_hw_mtu its HW MTU;
  * Link.start_watchdog starts nothing; watchdog(now) runs exactly one iteration of the
    reference's own watchdog loop (its `sleep` raises after recording the nap it asked for);
  * `time` inside RNS.Link and RNS.Packet is a clock pinned to the `now` the caller passes
    (milliseconds, as rnsc's link takes it);
  * `threading` inside RNS.Link and RNS.Packet runs thread targets synchronously (callbacks,
    receipt timeouts, happen inside the call that caused them, as in rnsc);
  * Transport.outbound's receipts are kept per session; proofs coming in are matched against
    them as Transport does, and receipts_check(now) is Transport's receipt timeout job;
  * pin() fixes the ephemeral X25519 / Ed25519 keys and one Token IV of the next call, so
    frames can be compared byte for byte;
  * Reticulum.get_instance() returns a stand-in: no PHY stats, nothing blackholed, the
    default first-hop timeout; link MTU discovery is on (the default).
All packets arrive on one stand-in interface, so Link's attached-interface check passes.
"""

import contextlib
import sys
import types

import rnsc_refharness as _h

RNS = None
_M = {}
_S = None


def _mods():
    global RNS
    if RNS is None:
        RNS = _h.RNS
        if RNS is None:
            raise RuntimeError("rnsc_refharness.setup() has not run")
        for short in ("Identity", "Destination", "Packet", "Transport", "Link", "Reticulum",
                      "Channel"):
            __import__("RNS." + short)
            _M[short] = sys.modules["RNS." + short]
    return RNS


class _Clock:
    def __init__(self):
        self.now = 0.0

    def time(self):
        return self.now

    def __getattr__(self, name):
        import time
        return getattr(time, name)


class _SyncThread:
    def __init__(self, target=None, args=(), kwargs=None, daemon=None, **kw):
        self._t, self._a, self._k = target, args, kwargs or {}
        self.daemon = daemon

    def start(self):
        if self._t is not None:
            self._t(*self._a, **self._k)


class _SyncThreading:
    Thread = _SyncThread

    def __getattr__(self, name):
        import threading
        return getattr(threading, name)


class _Nap(Exception):
    pass


class _Instance:
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


class _Iface:
    HW_MTU = None
    AUTOCONFIGURE_MTU = False
    FIXED_MTU = False
    bitrate = None

    def __str__(self):
        return "rnsc-link-xcheck-iface"


_IFACE = _Iface()
_UNSET = object()
_PIN = None  # (x25519 private, ed25519 seed, token IV) for the next call only


class _Session:
    def __init__(self):
        self.clock = _Clock()
        self.sent = []
        self.naps = []
        self.dest = None
        self.link = None
        self.hops = RNS.Transport.PATHFINDER_M
        self.hw_mtu = None
        self.received = []    # (context, plaintext) delivered to the application
        self.established = 0
        self.closed = 0
        self.identified = None
        self.receipts = []    # PacketReceipts of what the reference sent
        self.channel = None
        self.msg_classes = {}
        self.ch_rx = []       # (msgtype, payload) the channel handler got


@contextlib.contextmanager
def _env(s, now_ms):
    global _PIN
    pin, _PIN = _PIN, None
    T, L, R = RNS.Transport, RNS.Link, RNS.Reticulum
    s.clock.now = now_ms / 1000.0
    s.sent = []
    saved = []

    def patch(target, name, value):
        saved.append((target, name, target.__dict__.get(name, _UNSET)
                      if isinstance(target, type) else getattr(target, name, _UNSET)))
        setattr(target, name, value)

    def outbound(packet):
        # Transport.outbound's bookkeeping for a sent packet, receipts included (only DATA,
        # never for link-control or resource contexts)
        s.sent.append(bytes(packet.raw))
        packet.sent = True
        packet.sent_at = s.clock.now
        P = RNS.Packet
        if (packet.create_receipt and packet.packet_type == P.DATA and
                not (P.KEEPALIVE <= packet.context <= P.LRPROOF) and
                not (P.RESOURCE <= packet.context <= P.RESOURCE_RCL)):
            packet.receipt = RNS.PacketReceipt(packet)
            s.receipts.append(packet.receipt)
        return True

    def nap(t):
        s.naps.append(t)
        raise _Nap()

    try:
        patch(T, "outbound", staticmethod(outbound))
        patch(T, "register_link", staticmethod(lambda link: None))
        patch(T, "activate_link", staticmethod(lambda link: None))
        patch(T, "register_destination", staticmethod(lambda d: None))
        patch(T, "hops_to", staticmethod(lambda h: s.hops))
        patch(T, "next_hop_interface_hw_mtu", staticmethod(lambda h: s.hw_mtu))
        patch(L, "start_watchdog", lambda self: None)
        patch(R, "get_instance", staticmethod(lambda: _Instance()))
        patch(R, "_Reticulum__link_mtu_discovery", True)
        patch(_M["Link"], "time", s.clock)
        patch(_M["Packet"], "time", s.clock)
        patch(_M["Link"], "threading", _SyncThreading())
        patch(_M["Packet"], "threading", _SyncThreading())
        patch(_M["Link"], "sleep", nap)
        x_priv, ed_seed, iv = pin if pin else (None, None, None)
        LM = _M["Link"]
        if x_priv is not None:
            patch(LM.X25519PrivateKey, "generate",
                  classmethod(lambda c: c.from_private_bytes(bytes(x_priv))))
        if ed_seed is not None:
            patch(LM.Ed25519PrivateKey, "generate",
                  classmethod(lambda c: c.from_private_bytes(bytes(ed_seed))))
        with _h._fixed_randomness(None, bytes(iv) if iv is not None else None):
            yield s
    finally:
        while saved:
            target, name, prev = saved.pop()
            if prev is _UNSET:
                delattr(target, name)
            else:
                setattr(target, name, prev)


def _cur():
    if _S is None:
        raise RuntimeError("no link session")
    return _S


def _sent(s):
    if len(s.sent) > 8:
        raise AssertionError("more than 8 frames sent in one call")
    return (len(s.sent), *s.sent, *([None] * (8 - len(s.sent))))


def _on_packet(s):
    def cb(message, packet):
        s.received.append((packet.context, bytes(message)))
    return cb


def _on_link(s, link):
    s.link = link
    link.set_packet_callback(_on_packet(s))
    link.set_link_closed_callback(lambda l: _closed(s))
    link.set_remote_identified_callback(lambda l, ident: _identified(s, ident))


def _closed(s):
    s.closed += 1


def _identified(s, ident):
    s.identified = ident.get_public_key()


def _established(s):
    def cb(link):
        s.established += 1
        if s.link is not link:
            _on_link(s, link)
    return cb


def _unpacked(raw):
    pkt = RNS.Packet(None, bytes(raw))
    if not pkt.unpack():
        raise AssertionError("the reference could not unpack a frame rnsc sent")
    pkt.receiving_interface = _IFACE
    return pkt


# ---------------------------------------------------------------------------------------------
# Operations (reached as rnsc_wireharness.link(name, *args)); frames come back as
# (count, frame0 .. frame7).


def responder(dest_prv, app_name, aspect, proof_strategy):
    """A SINGLE IN destination of identity dest_prv accepting links -> its hash."""
    global _S
    _mods()
    _S = s = _Session()
    D = RNS.Destination
    with _env(s, 0):
        s.dest = D(_h._identity_from_private(dest_prv), D.IN, D.SINGLE, app_name, aspect)
        s.dest.set_link_established_callback(_established(s))
        s.dest.set_proof_strategy(proof_strategy)
    return s.dest.hash


def request(raw, now_ms):
    """Destination.receive of a LINKREQUEST -> frames (the LRPROOF)."""
    s = _cur()
    pkt = _unpacked(raw)
    pkt.destination = s.dest
    with _env(s, now_ms):
        s.dest.receive(pkt)
        if s.dest.links:
            _on_link(s, s.dest.links[-1])
    return _sent(s)


def initiator(dest_hash, dest_pub, app_name, aspect, hops, hw_mtu, now_ms):
    """RNS.Link(destination) to the SINGLE OUT destination with public key dest_pub, hops away
    over an interface of HW MTU hw_mtu (0: none) -> frames (the LINKREQUEST)."""
    global _S
    _mods()
    _S = s = _Session()
    s.hops = hops
    s.hw_mtu = hw_mtu or None
    D = RNS.Destination
    with _env(s, now_ms):
        s.dest = D(_h._identity_from_public(dest_pub), D.OUT, D.SINGLE, app_name, aspect)
        if s.dest.hash != bytes(dest_hash):
            raise AssertionError("destination hashes differ")
        link = RNS.Link(s.dest, established_callback=_established(s))
        _on_link(s, link)
    return _sent(s)


def receive(raw, now_ms):
    """A frame addressed to the link, through the entry point Transport would use: LRPROOF to
    Link.validate_proof, other proofs to the outstanding receipts (PacketReceipt.
    validate_proof_packet), everything else to Link.receive."""
    s = _cur()
    pkt = _unpacked(raw)
    P = RNS.Packet
    with _env(s, now_ms):
        if pkt.packet_type == P.PROOF and pkt.context == P.LRPROOF:
            s.link.validate_proof(pkt)
        elif pkt.packet_type == P.PROOF and pkt.context != P.RESOURCE_PRF:
            pkt.link = s.link
            for r in list(s.receipts):
                if r.status == RNS.PacketReceipt.SENT and r.validate_proof_packet(pkt):
                    break
            s.receipts = [r for r in s.receipts if r.status == RNS.PacketReceipt.SENT]
        else:
            pkt.link = s.link
            s.link.receive(pkt)
    return _sent(s)


def receipts_check(now_ms):
    """Transport's receipt job at now_ms: PacketReceipt.check_timeout on every outstanding
    receipt (a channel resends from its timeout callback) -> frames."""
    s = _cur()
    with _env(s, now_ms):
        for r in list(s.receipts):
            r.check_timeout()
        s.receipts = [r for r in s.receipts if r.status == RNS.PacketReceipt.SENT]
    return _sent(s)


def _msg_class(s, msgtype):
    if msgtype not in s.msg_classes:
        base = _M["Channel"].MessageBase

        class _Msg(base):
            MSGTYPE = msgtype

            def __init__(self, data=b""):
                self.data = data

            def pack(self):
                return self.data

            def unpack(self, raw):
                self.data = bytes(raw)

        s.msg_classes[msgtype] = _Msg
    return s.msg_classes[msgtype]


def channel_open(msgtype):
    """Link.get_channel() with one message type registered and a handler recording what it
    gets -> (window, window_max, window_min, mdu)."""
    s = _cur()
    with _env(s, int(s.clock.now * 1000)):
        ch = s.link.get_channel()
        ch.register_message_type(_msg_class(s, msgtype))
        if s.channel is None:
            ch.add_message_handler(lambda m: s.ch_rx.append((m.MSGTYPE, m.data)) and False)
        s.channel = ch
    return (ch.window, ch.window_max, ch.window_min, ch.mdu)


def channel_send(msgtype, data, now_ms):
    """Channel.send -> frames, or the verdict for ChannelException."""
    s = _cur()
    CE = _M["Channel"].CEType
    with _env(s, now_ms):
        try:
            s.channel.send(_msg_class(s, msgtype)(bytes(data)))
        except _M["Channel"].ChannelException as e:
            return "RNSC_ERR_TOOBIG" if e.type == CE.ME_TOO_BIG else "RNSC_ERR_STATE"
    return _sent(s)


def channel_state():
    """-> (window, window_max, window_min, next sequence, next rx sequence, outstanding,
    held, messages received)."""
    ch = _cur().channel
    return (ch.window, ch.window_max, ch.window_min, ch._next_sequence, ch._next_rx_sequence,
            len(ch._tx_ring), len(ch._rx_ring), len(_cur().ch_rx))


def channel_message(i):
    """-> (msgtype, payload) of the i-th message the channel delivered."""
    return _cur().ch_rx[i]


def send(context, data, now_ms):
    """RNS.Packet(link, data, context=context).send()."""
    s = _cur()
    with _env(s, now_ms):
        RNS.Packet(s.link, bytes(data), context=context).send()
    return _sent(s)


def identify(prv, now_ms):
    s = _cur()
    with _env(s, now_ms):
        s.link.identify(_h._identity_from_private(prv))
    return _sent(s)


def teardown(now_ms):
    s = _cur()
    with _env(s, now_ms):
        s.link.teardown()
    return _sent(s)


def watchdog(now_ms):
    """One iteration of the link's own watchdog at now_ms -> (nap asked for in ms | -1,
    frames...)."""
    s = _cur()
    s.naps = []
    with _env(s, now_ms):
        try:
            s.link._Link__watchdog_job()
        except _Nap:
            pass
    nap = int(round(s.naps[0] * 1000)) if s.naps else -1
    return (nap, *_sent(s))


def state():
    """-> (status, teardown reason | 0, mtu, rtt in microseconds | -1, derived key | None,
    link id, keepalive ms, established count, closed count, remote public key | None,
    identified public key | None, messages received)."""
    s = _cur()
    L = s.link
    rtt = -1 if L.rtt is None else int(round(L.rtt * 1e6))
    remote = L.get_remote_identity()
    return (L.status, getattr(L, "teardown_reason", 0) or 0, L.mtu, rtt,
            getattr(L, "derived_key", None), L.link_id, int(round(L.keepalive * 1000)),
            s.established, s.closed, remote.get_public_key() if remote else None,
            s.identified, len(s.received))


def pin(x_priv, ed_seed, iv):
    """Pins the ephemeral keys Link generates and the IV of one Token encryption for the next
    call (any may be None), so its frames can be compared byte for byte with rnsc's."""
    global _PIN
    _PIN = (x_priv, ed_seed, iv)
    return 0


def message(i):
    """The i-th message the application got -> (context, plaintext)."""
    return _cur().received[i]


_OPS = {f.__name__: f for f in (responder, request, initiator, receive, send, identify,
                                teardown, watchdog, state, message, receipts_check, pin,
                                channel_open, channel_send, channel_state, channel_message)}


def dispatch(name, *args):
    return _OPS[name](*args)


def install():
    """Makes dispatch reachable through the generic bridge as rnsc_wireharness.link."""
    _mods()
    import rnsc_wireharness
    rnsc_wireharness._mods()
    rnsc_wireharness.link = dispatch
    return 0
