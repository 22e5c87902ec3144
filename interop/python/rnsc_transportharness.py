# SPDX-License-Identifier: MIT
"""The reference's Transport logic for rnsc's transport cross-check
(conformance/transport_xcheck_test.c).

The C side imports this module into the embedded interpreter (after rnsc_refharness set the
reference up) and calls install(), which makes one dispatcher reachable through the generic
wire bridge (interop/ref_wire.h) as rnsc_wireharness.transport(name, *args). Same result
conventions as rnsc_wireharness: ints, bytes, None or a flat tuple of them; anything that goes
wrong raises (RNSC_ERR_PYTHON on the C side, so the test fails loudly).

What runs is the reference's own code: RNS.Transport.inbound (preprocess_inbound,
packet_filter, _inbound with its announce handling and path table replacement rules,
path_request_handler / path_request), RNS.Identity.validate_announce / remember /
_remember_ratchet, RNS.Destination (receive, announce for path responses). RNS.Reticulum() is
never started, so the state a running instance would provide is set up by hand, per session,
and swapped into the reference only for the duration of each call (_session below), then
restored, so the other harnesses see the reference exactly as before. The stand-ins:

  * Transport's tables (path_table, announce_table, packet_hashlist(_prev), reverse_table,
    link_table, destinations(_map), discovery_pr_tags(_prev), path_requests,
    inflight_path_requests, ...) and Identity.known_destinations / known_ratchets are the
    session's own fresh containers;
  * Transport.identity is a namespace carrying the transport id the test chose (only .hash is
    read on these paths), Transport.owner says "not connected to a shared instance",
    Transport.ready is True, USE_INBOUND_QUEUE is False so _inbound runs synchronously inside
    inbound() instead of on the (never started) inbound worker thread;
  * the private Reticulum flags read by transport_enabled() / should_use_implicit_proof() are
    set per session; Reticulum.get_instance() returns _Instance (no PHY stats, nothing
    blackholed, _used_destination_data does nothing);
  * `time` inside RNS.Transport, RNS.Identity and RNS.Destination is a clock pinned to the
    `now` the caller passes (milliseconds, as rnsc's engine takes it);
  * `os` inside RNS.Identity hands out scripted 16-byte blobs for os.urandom(16) (the only
    draw Identity.get_random_hash makes), so a path response's random hash is byte-comparable;
  * `threading` inside RNS.Identity runs no threads: _remember_ratchet's persist job (which
    writes to the ratchet directory of a storage path that does not exist here) is dropped;
  * Transport.cache / get_cached_packet keep announces in the session (the reference writes
    them under Reticulum.cachepath) so a transport node can answer path requests from it;
  * RNS.Packet.send records the packet (raw bytes and attached interface) instead of handing
    it to Transport.outbound: these are the frames the reference would transmit;
  * RNS.trace_exception records the exception Transport.inbound would only log, and the
    call re-raises it;
  * interfaces are _Iface objects: mode and HW_MTU as the test chose, no IFAC, online, no
    PHY stats, no gravity, no announce rate target, never ingress/egress limited; the
    callbacks the reference makes on them (protocol_violation, packet_filter_hit, ...) are
    counted.
Transport.packet_filter is wrapped to record its verdict for the duplicate-filter check.
"""

import contextlib
import sys
import types

import rnsc_refharness as _h

RNS = None
_M = {}
_S = None  # the current session


def _mods():
    global RNS
    if RNS is None:
        RNS = _h.RNS
        if RNS is None:
            raise RuntimeError("rnsc_refharness.setup() has not run")
        for short in ("Identity", "Destination", "Packet", "Transport", "Reticulum", "Link",
                      "Interfaces.Interface"):
            __import__("RNS." + short)
            _M[short] = sys.modules["RNS." + short]
    return RNS


class _Clock:
    def __init__(self, now):
        self.now = now

    def time(self):
        return self.now

    def sleep(self, secs):
        # The discovery path request sender sleeps between requests: virtual time passes
        # instead, so its timing is reproduced without waiting.
        self.now += secs

    def __getattr__(self, name):
        import time
        return getattr(time, name)


class _ScriptedOs:
    def __init__(self):
        self.blobs = []

    def urandom(self, n):
        if n != 16 or not self.blobs:
            raise AssertionError(f"unscripted os.urandom({n}) in Identity")
        return self.blobs.pop(0)

    def __getattr__(self, name):
        import os
        return getattr(os, name)


class _NoThread:
    def __init__(self, *a, **kw):
        pass

    def start(self):
        pass


class _NoThreading:
    Thread = _NoThread

    def __getattr__(self, name):
        import threading
        return getattr(threading, name)


class _Instance:
    def get_packet_rssi(self, packet_hash):
        return None

    def get_packet_snr(self, packet_hash):
        return None

    def get_packet_q(self, packet_hash):
        return None

    def is_blackholed(self, identity_hash):
        return False

    def _used_destination_data(self, destination_hash):
        return None

    def get_first_hop_timeout(self, destination_hash):
        # Reticulum.get_first_hop_timeout of an instance that is not a shared instance's
        # client: the next hop interface's latency for one MTU plus the per-hop timeout.
        return RNS.Transport.first_hop_timeout(destination_hash)


class _Iface:
    """An attached interface as far as Transport reads it."""

    def __init__(self, idx, mode, hw_mtu):
        self.idx = idx
        self.mode = mode
        self.HW_MTU = hw_mtu
        self.ifac_identity = None
        self.ifac_size = 0
        self.online = True
        self.reports_phy_stats = False
        self.gravity = None
        self.announce_rate_target = None
        self.recursive_prs = False
        self.OUT = True
        self.AUTOCONFIGURE_MTU = False
        self.FIXED_MTU = False
        self.bitrate = 62500
        self.violations = 0
        self.filter_hits = 0

    def process_outgoing(self, raw):
        # Transport.transmit's hand-off: the frame this interface would send
        _cur().sent.append((bytes(raw), self))

    def __str__(self):
        return f"rnsc-xcheck-iface-{self.idx}"

    def protocol_violation(self, what=None):
        self.violations += 1

    def ifac_violation(self, what=None):
        self.violations += 1

    def packet_filter_hit(self):
        self.filter_hits += 1

    def received_announce(self, size=0):
        pass

    def received_path_request(self, size=0):
        pass

    def should_ingress_limit(self):
        return False

    def should_ingress_limit_pr(self):
        return False

    def should_egress_limit_pr(self):
        return False

    def hold_announce(self, packet):
        raise AssertionError("announce held although ingress limiting is off")


_TABLES_DICT = ("destinations_map", "announce_table", "path_table", "reverse_table",
                "link_table", "held_announces", "tunnels", "announce_rate_table",
                "path_requests", "inflight_path_requests", "path_states",
                "blackholed_identities", "discovery_path_requests", "pending_links_map",
                "active_links_map", "pending_local_path_requests")
_TABLES_LIST = ("interfaces", "destinations", "receipts", "announce_handlers", "pending_links",
                "active_links", "control_destinations", "control_hashes",
                "mgmt_destinations", "mgmt_hashes", "local_client_interfaces")
# jobs()' timers, per session. The ones jobs() would run in threads touching storage or
# interfaces the harness does not model (cache cleaning, known destination cleaning,
# management announces, interface jobs, blackhole expiry) are never due.
_INF = float("inf")
_TIMERS = {"links_last_checked": 0.0, "receipts_last_checked": 0.0,
           "announces_last_checked": 0.0, "pending_prs_last_checked": 0.0,
           "tables_last_culled": 0.0, "interface_last_jobs": _INF, "cache_last_cleaned": _INF,
           "destinations_last_cleaned": _INF, "last_mgmt_announce": _INF,
           "blackhole_last_checked": _INF}

_TABLES_SET = ("packet_hashlist", "packet_hashlist_prev", "discovery_pr_tags",
               "discovery_pr_tags_prev")


class _Session:
    def __init__(self, transport_enabled, transport_id):
        self.transport_enabled = bool(transport_enabled)
        self.tid = bytes(transport_id)
        self.t = {n: {} for n in _TABLES_DICT}
        self.t.update({n: [] for n in _TABLES_LIST})
        self.t.update({n: set() for n in _TABLES_SET})
        self.known_destinations = {}
        self.known_ratchets = {}
        self.cache = {}
        self.ifaces = []
        self.sent = []
        self.filter_verdicts = []
        self.exceptions = []
        self.clock = _Clock(0.0)
        self.os = _ScriptedOs()
        self.pr_hash = None
        self.handlers = []
        self.handler_calls = []
        self.keep = []  # destinations (the reference keeps them in its lists too)
        self.timers = dict(_TIMERS)
        import collections
        self.pending_discovery_prs = collections.deque(maxlen=32)


_UNSET = object()


@contextlib.contextmanager
def _session(s):
    """Swaps the session's state into the reference for one call."""
    R = _mods()
    T, I, P, Ret = R.Transport, R.Identity, R.Packet, R.Reticulum
    saved = []

    def patch(target, name, value):
        saved.append((target, name, target.__dict__.get(name, _UNSET)
                      if isinstance(target, type) else getattr(target, name, _UNSET)))
        setattr(target, name, value)

    orig_filter = T.__dict__["packet_filter"].__func__

    def packet_filter(packet):
        v = orig_filter(packet)
        s.filter_verdicts.append(bool(v))
        return v

    def send(self):
        if not self.packed:
            self.pack()
        s.sent.append((bytes(self.raw), self.attached_interface))
        return None

    def cache(packet, force_cache=False, packet_type=None):
        if force_cache:
            s.cache[packet.get_hash()] = (bytes(packet.raw), packet.receiving_interface)

    def get_cached_packet(packet_hash, packet_type=None):
        if packet_hash not in s.cache:
            return None
        raw, iface = s.cache[packet_hash]
        pkt = R.Packet(None, raw)
        pkt.receiving_interface = iface
        return pkt

    try:
        for n, v in s.t.items():
            patch(T, n, v)
        patch(T, "identity", types.SimpleNamespace(hash=s.tid))
        patch(T, "owner", types.SimpleNamespace(is_connected_to_shared_instance=False))
        patch(T, "ready", True)
        patch(T, "USE_INBOUND_QUEUE", False)
        patch(T, "USE_OUTBOUND_QUEUE", False)
        patch(T, "local_hops_delta", 0)
        patch(T, "pr_destination_hash", s.pr_hash)
        patch(T, "packet_filter", staticmethod(packet_filter))
        patch(T, "cache", staticmethod(cache))
        patch(T, "get_cached_packet", staticmethod(get_cached_packet))
        patch(I, "known_destinations", s.known_destinations)
        patch(I, "known_ratchets", s.known_ratchets)
        patch(P, "send", send)
        patch(Ret, "get_instance", staticmethod(lambda: _Instance()))
        patch(Ret, "_Reticulum__transport_enabled", s.transport_enabled)
        patch(Ret, "_Reticulum__use_implicit_proof", True)
        patch(Ret, "_Reticulum__link_mtu_discovery", True)  # its default
        patch(R, "trace_exception", lambda e: s.exceptions.append(e))
        for n, v in s.timers.items():
            patch(T, n, v)
        patch(T, "pending_discovery_prs", s.pending_discovery_prs)
        patch(_M["Transport"], "time", s.clock)
        patch(_M["Identity"], "time", s.clock)
        patch(_M["Destination"], "time", s.clock)
        patch(_M["Link"], "time", s.clock)
        patch(_M["Link"], "threading", _NoThreading())  # the watchdog: see _watchdog_pass
        patch(_M["Identity"], "os", s.os)
        patch(_M["Identity"], "threading", _NoThreading())
        yield s
    finally:
        for n in s.timers:  # jobs() and expire_path() move them
            s.timers[n] = T.__dict__[n]
        while saved:
            target, name, prev = saved.pop()
            if prev is _UNSET:
                delattr(target, name)
            else:
                setattr(target, name, prev)


def _cur():
    if _S is None:
        raise RuntimeError("no transport session (call reset first)")
    return _S


# ---------------------------------------------------------------------------------------------
# Operations (reached as rnsc_wireharness.transport(name, *args))


def reset(transport_enabled, transport_id):
    """A fresh node: empty tables, the path request destination registered as
    Transport.start() does (PLAIN IN rnstransport.path.request, callback
    path_request_handler, listed in control_hashes)."""
    global _S
    R = _mods()
    _S = _Session(transport_enabled, transport_id)
    with _session(_S):
        D = R.Destination
        prd = D(None, D.IN, D.PLAIN, R.Transport.APP_NAME, "path", "request")
        prd.set_packet_callback(R.Transport.path_request_handler)
        _S.pr_hash = prd.hash
        _S.t["control_destinations"].append(prd)
        _S.t["control_hashes"].append(prd.hash)
        _S.keep.append(prd)
    return _S.pr_hash


def iface_add(mode, hw_mtu):
    s = _cur()
    f = _Iface(len(s.ifaces), mode, hw_mtu)
    s.ifaces.append(f)
    s.t["interfaces"].append(f)
    return f.idx


def dest_add(prv, app_name, aspect):
    """A local SINGLE IN destination (PROVE_NONE) of the identity prv -> its hash."""
    s = _cur()
    with _session(s):
        D = RNS.Destination
        d = D(_h._identity_from_private(prv), D.IN, D.SINGLE, app_name, aspect)
        s.keep.append(d)
    return d.hash


class _Handler:
    """An announce handler as an application registers it (aspect_filter,
    receive_path_responses, the five-argument received_announce); calls are recorded."""

    def __init__(self, idx, aspect_filter, receive_path_responses):
        self.idx = idx
        self.aspect_filter = aspect_filter
        self.receive_path_responses = receive_path_responses

    def received_announce(self, destination_hash, announced_identity, app_data,
                          announce_packet_hash, is_path_response):
        _cur().handler_calls.append((self.idx, bytes(destination_hash),
                                     None if app_data is None else bytes(app_data),
                                     bytes(announce_packet_hash), 1 if is_path_response else 0,
                                     announced_identity.get_public_key()))


class _HandlerThreading:
    """Transport hands each announce handler call to a thread; those for the session's
    handlers run before inbound() returns (in the reference's order), any other thread
    starts as it would."""

    class Thread:
        def __init__(self, target=None, daemon=None, **kw):
            self.target, self.daemon, self.kw = target, daemon, kw

        def start(self):
            d = getattr(self.target, "__defaults__", None) or ()
            if d and isinstance(d[0], _Handler):
                self.target()
            else:
                import threading
                threading.Thread(target=self.target, daemon=self.daemon, **self.kw).start()

    def __getattr__(self, name):
        import threading
        return getattr(threading, name)


def handler_add(aspect_filter, receive_path_responses):
    """Transport.register_announce_handler -> the handler's index."""
    s = _cur()
    f = None if aspect_filter is None else bytes(aspect_filter).decode()
    h = _Handler(len(s.handlers), f, bool(receive_path_responses))
    s.handlers.append(h)
    with _session(s):
        RNS.Transport.register_announce_handler(h)
    return h.idx


def handler_remove(idx):
    s = _cur()
    with _session(s):
        T = _M["Transport"]
        saved = T.gc
        T.gc = types.SimpleNamespace(collect=lambda: 0)
        try:
            RNS.Transport.deregister_announce_handler(s.handlers[idx])
        finally:
            T.gc = saved
    return 0


def handler_calls():
    """How many handler calls were made since handler_calls_clear()."""
    return len(_cur().handler_calls)


def handler_call(i):
    """The i-th of them -> (handler index, destination hash, app data | None, announce
    packet hash, is path response, announced public key)"""
    return _cur().handler_calls[i]


def handler_calls_clear():
    _cur().handler_calls = []
    return 0


def dest_remove(dest):
    """Transport.deregister_destination of a destination dest_add registered -> 1, or 0."""
    s = _cur()
    for d in s.keep:
        if isinstance(d, RNS.Destination) and d.hash == bytes(dest):
            with _session(s):
                RNS.Transport.deregister_destination(d)
            return 1
    return 0


def inbound(raw, iface, now_ms, rand16):
    """Transport.inbound(raw, interface) at time now_ms; rand16 (or None) is scripted for
    the one random hash a path response draws.
    -> (filter verdict: -1 not reached / 0 passed / 1 dropped, violations, frames sent,
        first sent raw | None, its attached interface index | -1)"""
    s = _cur()
    f = s.ifaces[iface]
    s.clock.now = now_ms / 1000.0
    s.os.blobs = [bytes(rand16)] if rand16 is not None else []
    s.sent, s.filter_verdicts, s.exceptions = [], [], []
    v0 = f.violations
    with _session(s):
        T = _M["Transport"]
        saved = T.threading
        T.threading = _HandlerThreading()
        try:
            RNS.Transport.inbound(bytes(raw), f)
        finally:
            T.threading = saved
    if s.exceptions:
        raise s.exceptions[0]
    if len(s.filter_verdicts) > 1:
        raise AssertionError("packet_filter ran more than once for one frame")
    verdict = -1 if not s.filter_verdicts else (0 if s.filter_verdicts[0] else 1)
    first, att = None, -1
    if s.sent:
        first = s.sent[0][0]
        att = s.sent[0][1].idx if isinstance(s.sent[0][1], _Iface) else -1
    return (verdict, f.violations - v0, len(s.sent), first, att)


def _ms(t):
    return int(round(t * 1000))


def path(dest):
    """The path table entry -> (timestamp ms, next hop, hops, expires ms, number of random
    blobs, receiving interface index, packet hash, random blobs concatenated) or None."""
    s = _cur()
    e = s.t["path_table"].get(bytes(dest))
    if e is None:
        return None
    return (_ms(e[0]), e[1], e[2], _ms(e[3]), len(e[4]), e[5].idx, e[6], b"".join(e[4]))


def known(dest):
    """Identity.known_destinations / known_ratchets -> (public key, app data | None,
    ratchet | None, packet hash, timestamp ms) or None."""
    s = _cur()
    e = s.known_destinations.get(bytes(dest))
    if e is None:
        return None
    return (e[2], e[3], s.known_ratchets.get(bytes(dest)), e[1], _ms(e[0]))


def hashlist_count():
    s = _cur()
    return len(s.t["packet_hashlist"]) + len(s.t["packet_hashlist_prev"])


def pr_tag_count():
    s = _cur()
    return len(s.t["discovery_pr_tags"]) + len(s.t["discovery_pr_tags_prev"])


class _SyncThread:
    """jobs() hands its sends to threads; here they run before jobs() returns."""

    def __init__(self, target=None, daemon=None, **kw):
        self.target = target

    def start(self):
        self.target()


class _SyncThreading:
    Thread = _SyncThread

    def __getattr__(self, name):
        import threading
        return getattr(threading, name)


def jobs(now_ms, rand):
    """Transport.jobs() at now_ms, its threads run synchronously (the discovery path request
    sender's sleeps advance the pinned clock); rand holds 16-byte blobs for the request
    tags it draws. Any warning or error the reference logs raises.
    -> (frames sent, then per frame: raw, attached interface index | -1)"""
    s = _cur()
    s.clock.now = now_ms / 1000.0
    b = bytes(rand)
    s.os.blobs = [b[i:i + 16] for i in range(0, len(b) - 15, 16)]
    s.sent, s.exceptions = [], []
    logged = []

    def log(msg, level=3, _override=False, pt=False):
        if level <= RNS.LOG_WARNING:
            logged.append(str(msg))

    with _session(s):
        for link in list(s.t["pending_links"]):
            _watchdog_pass(link)
        T = _M["Transport"]
        saved = (T.threading, T.gc, RNS.log)
        T.threading, T.gc, RNS.log = _SyncThreading(), types.SimpleNamespace(
            collect=lambda: 0), log
        try:
            RNS.Transport.jobs()
        finally:
            T.threading, T.gc, RNS.log = saved
    if s.exceptions:
        raise s.exceptions[0]
    if logged:
        raise AssertionError("Transport.jobs logged: " + " | ".join(logged))
    out = [len(s.sent)]
    for raw, att in s.sent:
        out.append(raw)
        out.append(att.idx if isinstance(att, _Iface) else -1)
    return tuple(out)


class _WatchdogSlept(Exception):
    pass


def _watchdog_pass(link):
    """One round of the reference's own Link watchdog (Link.__watchdog_job) at the pinned
    time: the thread would sleep until its next check, so the round ends at its sleep."""
    def sleep(secs):
        raise _WatchdogSlept()

    L = _M["Link"]
    saved = L.sleep
    L.sleep = sleep
    try:
        link._Link__watchdog_job()
    except _WatchdogSlept:
        pass
    finally:
        L.sleep = saved


def link_open(dest, app_name, aspect, now_ms):
    """RNS.Link(Destination(recalled identity, OUT, SINGLE, app_name, aspect)) at now_ms: a
    link this node opens itself (its link request is recorded, not sent). Its watchdog runs
    a round at every jobs() call. -> (link id, establishment timeout ms, frames sent)"""
    s = _cur()
    s.clock.now = now_ms / 1000.0
    s.sent, s.exceptions = [], []
    with _session(s):
        D = RNS.Destination
        ident = RNS.Identity.recall(bytes(dest))
        if ident is None:
            raise AssertionError("link_open: no identity known for the destination")
        d = D(ident, D.OUT, D.SINGLE, app_name, aspect)
        if d.hash != bytes(dest):
            raise AssertionError("link_open: destination hash differs")
        link = RNS.Link(d)
        s.keep.append(d)
        # Packet.send is recorded without Transport.outbound (the other cases compare only
        # what is sent); a link request's outbound also marks its path used (IDX_PT_TIMESTAMP
        # for paths of more than one hop), so it runs here as the real send would run it.
        s.sent = []
        if not RNS.Transport.outbound(link.packet):
            raise AssertionError("link_open: Transport.outbound sent nothing")
    if s.exceptions:
        raise s.exceptions[0]
    return (link.link_id, _ms(link.establishment_timeout), len(s.sent))


def link_counts():
    """-> (Transport.pending_links, Transport.active_links)"""
    s = _cur()
    return (len(s.t["pending_links"]), len(s.t["active_links"]))


def timer(name):
    """One of Transport's job timers (tables_last_culled, links_last_checked, ...) in ms."""
    return _ms(_cur().timers[name])


def path_state(dest):
    """Transport.path_states[dest], or -1 when there is no entry."""
    return _cur().t["path_states"].get(bytes(dest), -1)


def mark(dest, state):
    """Transport.mark_path_unknown_state / _unresponsive / _responsive -> 1 marked, 0 not."""
    s = _cur()
    with _session(s):
        T = RNS.Transport
        f = {T.STATE_UNKNOWN: T.mark_path_unknown_state,
             T.STATE_UNRESPONSIVE: T.mark_path_unresponsive,
             T.STATE_RESPONSIVE: T.mark_path_responsive}[state]
        return 1 if f(bytes(dest)) else 0


def expire(dest):
    """Transport.expire_path -> 1 or 0."""
    s = _cur()
    with _session(s):
        return 1 if RNS.Transport.expire_path(bytes(dest)) else 0


def path_request_ts(dest):
    """Transport.path_requests[dest] in ms, or -1."""
    v = _cur().t["path_requests"].get(bytes(dest))
    return -1 if v is None else _ms(v)


def table_keys(name):
    """The keys of one of the session's tables (path_table, path_states, link_table),
    concatenated in the reference's order."""
    return b"".join(bytes(k) for k in _cur().t[name])


def discovery_queued():
    return len(_cur().pending_discovery_prs)


_OPS = {f.__name__: f for f in (reset, iface_add, dest_add, inbound, path, known,
                                hashlist_count, pr_tag_count, jobs, path_state, mark, expire,
                                path_request_ts, table_keys, discovery_queued, link_open,
                                link_counts, timer, handler_add, handler_remove,
                                handler_calls, handler_call, handler_calls_clear,
                                dest_remove)}


def dispatch(name, *args):
    return _OPS[name](*args)


def install():
    """Makes dispatch reachable through the generic bridge as rnsc_wireharness.transport."""
    _mods()
    import rnsc_wireharness
    rnsc_wireharness._mods()
    rnsc_wireharness.transport = dispatch
    return 0
