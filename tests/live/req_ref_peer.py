# SPDX-License-Identifier: MIT
"""A request/buffer peer on the reference's public API (RNS), for
tests/live/request_interop_test.sh; the same protocol as tests/live/req_node_peer.c (see there):

  req_ref_peer.py serve CONFIGDIR ALLOWED_HASH N M TIMEOUT [STREAM_BYTES]
  req_ref_peer.py request CONFIGDIR DEST IDFILE N M D TIMEOUT [STREAM_BYTES]

The reference requester never reports a request without a response as failed (its
RequestReceipt.request_timed_out only acts on DELIVERED receipts), so a request counts as
failed here when it is still not READY after its timeout. The reference also registers a
request as pending only after sending it, so a very fast response (rnsc answers within
microseconds on loopback) is dropped by the reference itself (a known race, ~10% here):
the client wraps Link.handle_response so that a response for a request not yet pending waits
up to 0.5 s for it to be registered; how often that happened is printed as "raced", and every
request must then conclude ("lost" must be 0). Exit status 0 only when the accounting is
exact; every wait is bounded. REQ_LOSS in the environment: the loss-tolerant mode of
tests/live/req_node_peer.c (link opened again, requests asked again, /bye at the end).
REQ_NONE / REQ_CANCEL: the ALLOW_NONE path and the cancelled resources, as there.
"""
import os
import hashlib
import sys
import threading
import time

import RNS
from RNS.Buffer import RawChannelReader, RawChannelWriter

APP, ASPECT = "rnsclt", "req"


def req_data(i):
    n = (i * 53) % 381
    return bytes((i * 7 + k * 13) & 0xFF for k in range(n))


def _sbyte(k, seed):
    if (k >> 12) & 1:
        x = (k * 2654435761) & 0xFFFFFFFF
        x ^= x >> 15
        x = (x * 2246822519) & 0xFFFFFFFF
        x ^= x >> 13
        return (x ^ seed) & 0xFF
    return ((k * 31) ^ (k >> 7) ^ seed) & 0xFF


def stream_bytes(off, n, seed):
    return bytes(_sbyte(k, seed) for k in range(off, off + n))


def stream_out(channel, total, seed, end, link):
    w = RawChannelWriter(2 if seed == 0x22 else 1, channel)
    h = hashlib.sha256()
    off = 0
    # made up front: generating it on the way would hold the GIL and starve the thread that
    # takes the proofs in, which the reference's short channel timeouts do not survive
    content = stream_bytes(0, total, seed)
    while off < total and time.time() < end and link.status != RNS.Link.CLOSED:
        chunk = content[off:off + 16384]
        n = w.write(chunk)
        if n:
            h.update(chunk[:n])
            off += n
        else:
            time.sleep(0.005)
    while time.time() < end and not channel.is_ready_to_send():
        time.sleep(0.01)
    w.close()
    return off, h.hexdigest()


class StreamIn:
    def __init__(self, stream_id, channel):
        self.r = RawChannelReader(stream_id, channel)
        self.h = hashlib.sha256()
        self.n = 0
        self.eof = False

    def poll(self):
        while not self.eof:
            d = self.r.read(65536)
            if d is None:
                return
            if d == b"":
                self.eof = True
                return
            self.h.update(d)
            self.n += len(d)


def big_bytes(n):
    """/big's response pattern (as req_node_peer.c's big_byte)."""
    return bytes((((k * 2654435761) & 0xFFFFFFFF) >> 13) & 0xFF for k in range(n))


def big_phase(link, end):
    """REQ_BIG / REQ_BIGREQ (see req_node_peer.c): responses and requests beyond the MDU."""
    st = {"big": 0, "bigbytes": 0, "bigreq": 0, "bigreqbytes": 0, "bad": 0}
    for kind, var in ((0, "REQ_BIG"), (1, "REQ_BIGREQ")):
        for tok in os.environ.get(var, "").replace(",", " ").split():
            size = int(tok)
            if kind:
                raw = bytes(b ^ 0x5A for b in big_bytes(size))
                want = hashlib.sha256(raw).digest()
                r = link.request("/bigreq", raw)
            else:
                want = big_bytes(size)
                r = link.request("/big", size)
            while r and time.time() < end and r.status not in (RNS.RequestReceipt.READY,
                                                               RNS.RequestReceipt.FAILED):
                time.sleep(0.02)
            if r and r.status == RNS.RequestReceipt.READY and r.response == want:
                st["bigreq" if kind else "big"] += 1
                st["bigreqbytes" if kind else "bigbytes"] += size
            else:
                st["bad"] += 1
                print("big request %s %d: %s" % ("/bigreq" if kind else "/big", size,
                      r.status if r else "not sent"), file=sys.stderr, flush=True)
    print("client big=%d bigbytes=%d bigreq=%d bigreqbytes=%d bigbad=%d" %
          (st["big"], st["bigbytes"], st["bigreq"], st["bigreqbytes"], st["bad"]), flush=True)
    return st["bad"] == 0


def none_phase(link, k, end):
    """REQ_NONE: k requests to /none (ALLOW_NONE); every one must fail unanswered."""
    rs = [link.request("/none", i, timeout=3) for i in range(k)]
    t = min(end, time.time() + 3.5)  # each has a 3 s timeout
    while time.time() < t and any(r and r.status != RNS.RequestReceipt.READY for r in rs):
        time.sleep(0.05)
    answered = sum(1 for r in rs if r and r.status == RNS.RequestReceipt.READY)
    failed = sum(1 for r in rs if r) - answered
    print("client none=%d none_failed=%d" % (sum(1 for r in rs if r), failed), flush=True)
    return failed == k and answered == 0


def cancel_phase(link, size, end):
    """REQ_CANCEL (see req_node_peer.c): the first resource cancelled here once it has moved,
    the second cancelled by the receiver."""
    res = {}
    icl = rcl = False
    for rnd in (0, 1):
        done = threading.Event()

        def concluded(r, rnd=rnd):
            res[rnd] = r.status
            done.set()
        r = RNS.Resource(os.urandom(size), link, callback=concluded, auto_compress=False)
        cancelled = False
        while not done.is_set() and time.time() < end and link.status != RNS.Link.CLOSED:
            if rnd == 0 and not cancelled and r.get_progress() > 0:
                cancelled = True
                print("client cancels its resource at progress %.3f" % r.get_progress(),
                      file=sys.stderr, flush=True)
                r.cancel()
            time.sleep(0.005)
        if rnd == 0:
            icl = cancelled and res.get(0) == RNS.Resource.FAILED
        else:
            rcl = res.get(1) == RNS.Resource.REJECTED
    print("client cancel icl=%d rcl=%d" % (icl, rcl), flush=True)
    return icl and rcl


def serve(configdir, allowed_hex, n, m, timeout, sbytes):
    RNS.Reticulum(configdir=configdir, loglevel=RNS.LOG_WARNING)
    ident = RNS.Identity()
    dest = RNS.Destination(ident, RNS.Destination.IN, RNS.Destination.SINGLE, APP, ASPECT)
    st = {"echo": 0, "allowed": 0, "denied": 0, "bytes": 0, "up": None,
          "closed": threading.Event(), "sin": None, "bye": None}
    loss = "REQ_LOSS" in os.environ
    lock = threading.Lock()

    def echo(path, data, request_id, link_id, remote_identity, requested_at):
        with lock:
            st["echo"] += 1
            st["bytes"] += len(data)
        return data

    def allowed(path, data, request_id, link_id, remote_identity, requested_at):
        with lock:
            st["allowed"] += 1
        return b"ok:" + data

    def denied(path, data, request_id, link_id, remote_identity, requested_at):
        with lock:
            st["denied"] += 1
        return None

    def bye(path, data, request_id, link_id, remote_identity, requested_at):
        if st["bye"] is None:
            st["bye"] = time.time()
        return True

    def big(path, data, request_id, link_id, remote_identity, requested_at):
        with lock:
            st["big"] += 1
            st["bigbytes"] += data
        return big_bytes(data)

    def bigreq(path, data, request_id, link_id, remote_identity, requested_at):
        with lock:
            st["bigreq"] += 1
            st["bigreqbytes"] += len(data)
        return hashlib.sha256(data).digest()

    st.update({"big": 0, "bigbytes": 0, "bigreq": 0, "bigreqbytes": 0})
    dest.register_request_handler("/big", response_generator=big,
                                  allow=RNS.Destination.ALLOW_ALL)
    dest.register_request_handler("/bigreq", response_generator=bigreq,
                                  allow=RNS.Destination.ALLOW_ALL)
    dest.register_request_handler("/none", response_generator=denied,
                                  allow=RNS.Destination.ALLOW_NONE)
    dest.register_request_handler("/bye", response_generator=bye,
                                  allow=RNS.Destination.ALLOW_ALL)
    dest.register_request_handler("/echo", response_generator=echo,
                                  allow=RNS.Destination.ALLOW_ALL)
    dest.register_request_handler("/allowed", response_generator=allowed,
                                  allow=RNS.Destination.ALLOW_LIST,
                                  allowed_list=[bytes.fromhex(allowed_hex)])
    dest.register_request_handler("/denied", response_generator=denied,
                                  allow=RNS.Destination.ALLOW_LIST,
                                  allowed_list=[b"\x5a" * 16])

    cancel = int(os.environ.get("REQ_CANCEL", "0"))
    cx = {"order": [], "current": {}, "status": {}, "cancelled": set()}

    def cx_started(r):  # each segment is a Resource of its own: follow the original hash
        if r.flags & 0x18:  # a request or response sent as a resource (/bigreq): not ours
            return
        if r.original_hash not in cx["order"]:
            cx["order"].append(r.original_hash)
        cx["current"][r.original_hash] = r

    def cx_concluded(r):
        cx["status"][r.original_hash] = r.status

    def on_link(link):
        if cancel:
            link.set_resource_strategy(RNS.Link.ACCEPT_ALL)
            link.set_resource_started_callback(cx_started)
            link.set_resource_concluded_callback(cx_concluded)
        if sbytes:
            st["sin"] = StreamIn(1, link.get_channel())
        st["up"] = link
        print("server link up mtu=%d" % link.mtu, flush=True)
        link.set_link_closed_callback(lambda l: st["closed"].set())

    dest.set_link_established_callback(on_link)
    print("dest " + dest.hash.hex(), flush=True)
    end = time.time() + timeout
    next_announce = 0
    streamed = None
    while time.time() < end and not st["closed"].is_set() and \
            not (st["bye"] is not None and time.time() > st["bye"] + 3):
        if st["up"] is None and time.time() >= next_announce:
            dest.announce()
            next_announce = time.time() + 2
        if cancel and len(cx["order"]) >= 2 and cx["order"][1] not in cx["cancelled"]:
            r = cx["current"].get(cx["order"][1])
            if r is not None and r.get_progress() > 0:
                cx["cancelled"].add(cx["order"][1])
                print("server cancels the incoming resource at progress %.3f" % r.get_progress(),
                      file=sys.stderr, flush=True)
                r.cancel()
        sin = st["sin"]
        if sin is not None:
            sin.poll()
            if sin.eof and streamed is None:
                streamed = stream_out(st["up"].get_channel(), sbytes, 0x22, end, st["up"])
        time.sleep(0.005 if cancel else 0.02)
    print("server echo=%d allowed=%d denied=%d bytes=%d" %
          (st["echo"], st["allowed"], st["denied"], st["bytes"]), flush=True)
    print("server big=%d bigbytes=%d bigreq=%d bigreqbytes=%d" %
          (st["big"], st["bigbytes"], st["bigreq"], st["bigreqbytes"]), flush=True)
    ok = (st["closed"].is_set() or st["bye"] is not None) and \
        (st["echo"] >= n if loss else st["echo"] == n) and st["allowed"] == m and \
        st["denied"] == 0
    if cancel:
        o = cx["order"]
        icl = len(o) >= 1 and cx["status"].get(o[0]) == RNS.Resource.FAILED and \
            o[0] not in cx["cancelled"]
        rcl = len(o) >= 2 and cx["status"].get(o[1]) == RNS.Resource.FAILED and \
            o[1] in cx["cancelled"]
        print("server cancel icl=%d rcl=%d" % (icl, rcl), flush=True)
        ok = ok and icl and rcl
    if sbytes:
        sin = st["sin"]
        tx, txsha = streamed if streamed else (0, "")
        print("server stream rx=%d sha=%s tx=%d txsha=%s" %
              (sin.n if sin else 0, sin.h.hexdigest() if sin else "", tx, txsha), flush=True)
        ok = ok and sin is not None and sin.eof and streamed is not None
    return 0 if ok else 1


def request(configdir, dest_hex, idfile, n, m, d, timeout, sbytes):
    RNS.Reticulum(configdir=configdir,
                  loglevel=int(os.environ.get("PEER_LOGLEVEL", RNS.LOG_WARNING)))
    me = RNS.Identity.from_file(idfile)
    dh = bytes.fromhex(dest_hex)
    end = time.time() + timeout
    next_req = 0
    while not RNS.Transport.has_path(dh):
        if time.time() > end:
            print("client: no path", flush=True)
            return 1
        if time.time() >= next_req:
            RNS.Transport.request_path(dh)
            next_req = time.time() + 3
        time.sleep(0.1)
    ident = RNS.Identity.recall(dh)
    dest = RNS.Destination(ident, RNS.Destination.OUT, RNS.Destination.SINGLE, APP, ASPECT)
    loss = "REQ_LOSS" in os.environ
    up = threading.Event()
    link = None
    while not up.is_set() and time.time() < end:
        link = RNS.Link(dest, established_callback=lambda l: up.set())
        while not up.is_set() and link.status != RNS.Link.CLOSED and time.time() < end:
            time.sleep(0.05)
    if not up.is_set():
        print("client: link not established", flush=True)
        return 1
    raced = [0]
    orig_handle_response = link.handle_response

    def handle_response(request_id, *args, **kw):
        # the reference's send/register race (see the top): wait for the receipt to exist
        for k in range(50):
            if any(p.request_id == request_id for p in list(link.pending_requests)):
                break
            if k == 0:
                raced[0] += 1
            time.sleep(0.01)
        return orig_handle_response(request_id, *args, **kw)

    link.handle_response = handle_response
    link.identify(me)
    time.sleep(0.2)  # the identify packet is on its way before the first request
    lock = threading.Lock()
    st = {"echo": 0, "allowed": 0, "bytes": 0, "bad": 0}
    ok_set = set()  # (kind, i) answered: a late answer to a request asked again counts once
    receipts = []
    paths = ["/echo", "/allowed", "/denied"]
    total = n + m + d

    def on_response(kind, i):
        def cb(receipt):
            data = req_data(i)
            with lock:
                if (kind, i) in ok_set and receipt.response in (data, b"ok:" + data):
                    return
                if kind in (0, 1) and receipt.response in (data, b"ok:" + data):
                    ok_set.add((kind, i))
                if kind == 0 and receipt.response == data:
                    st["echo"] += 1
                    st["bytes"] += len(data)
                elif kind == 1 and receipt.response == b"ok:" + data:
                    st["allowed"] += 1
                else:
                    st["bad"] += 1
        return cb

    def pending():
        return sum(1 for r, k, t, i in receipts if r.status != RNS.RequestReceipt.READY and
                   time.time() < t)

    retries = 0
    todo = list(range(total))
    while todo and time.time() < end:
        i = todo.pop(0)
        kind = 0 if i < n else 1 if i < n + m else 2
        while pending() >= 8 and time.time() < end:
            time.sleep(0.005)
        tmo = 3 if kind == 2 else 4 if loss else 8
        r = link.request(paths[kind], req_data(i), response_callback=on_response(kind, i),
                         timeout=tmo)
        if not r:
            print("client: request %d not sent" % i, flush=True)
            return 1
        receipts.append((r, kind, time.time() + tmo, i))
        if loss and not todo:
            # requests have no retransmission: ask again for what timed out
            while time.time() < end and pending() > 0:
                time.sleep(0.05)
            for r, k, t, j in list(receipts):
                if k != 2 and r.status != RNS.RequestReceipt.READY:
                    receipts.remove((r, k, t, j))
                    todo.append(j)
                    retries += 1
    while time.time() < end and pending() > 0:
        time.sleep(0.05)
    lost = sum(1 for r, k, t, i in receipts if k != 2 and r.status != RNS.RequestReceipt.READY)
    denied_failed = sum(1 for r, k, t, i in receipts if k == 2 and
                        r.status != RNS.RequestReceipt.READY)
    ok = st["bad"] == 0 and st["echo"] + st["allowed"] + lost == n + m and lost == 0 and \
        denied_failed == d
    k = int(os.environ.get("REQ_NONE", "0"))
    if k > 0:
        ok = none_phase(link, k, end) and ok
    ok = big_phase(link, end) and ok
    size = int(os.environ.get("REQ_CANCEL", "0"))
    if size > 0:
        ok = cancel_phase(link, size, end) and ok
    if sbytes:
        ch = link.get_channel()
        sin = StreamIn(2, ch)
        tx, txsha = stream_out(ch, sbytes, 0x11, end, link)
        while time.time() < end and not sin.eof and link.status != RNS.Link.CLOSED:
            sin.poll()
            time.sleep(0.02)
        print("client stream rx=%d sha=%s tx=%d txsha=%s" % (sin.n, sin.h.hexdigest(), tx, txsha),
              flush=True)
        ok = ok and sin.eof and tx == sbytes
        time.sleep(0.5)
    if loss:
        for k in range(5):
            if link.status == RNS.Link.CLOSED:
                break
            r = link.request("/bye", None, timeout=3)
            if not r:
                break
            t = time.time() + 3
            while time.time() < t and r.status != RNS.RequestReceipt.READY:
                time.sleep(0.05)
            if r.status == RNS.RequestReceipt.READY:
                break
    print("client echo=%d allowed=%d denied_failed=%d bytes=%d bad=%d lost=%d raced=%d "
          "retries=%d" % (st["echo"], st["allowed"], denied_failed, st["bytes"], st["bad"], lost,
                          raced[0], retries), flush=True)
    link.teardown()
    time.sleep(0.5)
    return 0 if ok else 1


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) in (6, 7) and a[0] == "serve":
        rc = serve(a[1], a[2], int(a[3]), int(a[4]), float(a[5]),
                   int(a[6]) if len(a) == 7 else 0)
    elif len(a) in (8, 9) and a[0] == "request":
        rc = request(a[1], a[2], a[3], int(a[4]), int(a[5]), int(a[6]), float(a[7]),
                     int(a[8]) if len(a) == 9 else 0)
    else:
        print(__doc__, file=sys.stderr)
        rc = 2
    sys.stdout.flush()
    import os
    os._exit(rc)
