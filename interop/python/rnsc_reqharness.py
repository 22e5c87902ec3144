# SPDX-License-Identifier: MIT
"""The reference's request, response and Buffer stream-message bytes for rnsc's cross-check
(conformance/request_xcheck_test.c).

The C side imports this module into the embedded interpreter (after rnsc_refharness set the
reference up) and calls install(), which makes the functions below reachable through the
generic wire bridge (interop/ref_wire.h) as rnsc_wireharness.req_*. Conventions as
rnsc_wireharness: bytes / ints / None or a flat tuple of them; a rejection by the reference is
the rnsc error name as a str.

Everything runs the reference's own code: the request layout is Link.request's
(umsgpack.packb([time, Identity.truncated_hash(path), data])), the response layout
Link.handle_request's (umsgpack.packb([request_id, response])); they are read back with
umsgpack.unpackb and indexed as Link.handle_request / Link.__receive index them.
StreamDataMessage.pack / unpack and RawChannelWriter.write run as imported, the writer on a
stand-in channel that records the message it is asked to send (Channel.send's job) and
reports the MDU it is given. Data values cross as MessagePack (umsgpack.unpackb of the bytes
the C side sends), so any value type can be tested.
"""

import rnsc_refharness as _h

RNS = None
BUF = None  # the module RNS.Buffer (the package exports the class Buffer under that name)
E_MALFORMED = "RNSC_ERR_MALFORMED"
E_TRUNCATED = "RNSC_ERR_TRUNCATED"


def _mods():
    global RNS, BUF
    if RNS is None:
        import sys
        RNS = _h.RNS
        __import__("RNS.Buffer")
        BUF = sys.modules["RNS.Buffer"]
    return RNS


def _mp():
    _mods()
    import RNS.vendor.umsgpack as umsgpack
    return umsgpack


def req_pack(ts, path, data_mp):
    mp = _mp()
    data = None if data_mp is None else mp.unpackb(data_mp)
    ph = RNS.Identity.truncated_hash(path.encode("utf-8"))
    return mp.packb([ts, ph, data])


def req_unpack(raw):
    """(requested_at as float or None, path_hash or None, packb(data)) or a verdict."""
    mp = _mp()
    try:
        v = mp.unpackb(raw)
        at, ph, data = v[0], v[1], v[2]
    except (mp.InsufficientDataException,) as e:
        return E_TRUNCATED
    except Exception:
        return E_MALFORMED
    at = float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else None
    ph = ph if isinstance(ph, bytes) and len(ph) == 16 else None
    import struct
    return (None if at is None else struct.pack(">d", at), ph, mp.packb(data))


def resp_pack(request_id, resp_mp):
    mp = _mp()
    data = None if resp_mp is None else mp.unpackb(resp_mp)
    return mp.packb([request_id, data])


def resp_unpack(raw):
    """(request_id or None, packb(response), transfer size as Link.__receive counts it)."""
    mp = _mp()
    try:
        v = mp.unpackb(raw)
        rid, data = v[0], v[1]
    except (mp.InsufficientDataException,) as e:
        return E_TRUNCATED
    except Exception:
        return E_MALFORMED
    rid = rid if isinstance(rid, bytes) and len(rid) == 16 else None
    return (rid, mp.packb(data), len(mp.packb(data)) - 2)


def path_hash(path):
    _mods()
    return RNS.Identity.truncated_hash(path.encode("utf-8"))


def stream_pack(stream_id, data, eof, compressed):
    _mods()
    try:
        m = BUF.StreamDataMessage(stream_id, data, bool(eof), bool(compressed))
        return m.pack()
    except ValueError:
        return "RNSC_ERR_RANGE"


def stream_unpack(raw):
    """(stream_id, eof, compressed, data) or a verdict."""
    _mods()
    m = BUF.StreamDataMessage()
    try:
        m.unpack(raw)
    except Exception as e:
        if len(raw) < 2:
            return E_TRUNCATED
        return E_MALFORMED
    return (m.stream_id, int(m.eof), int(m.compressed), bytes(m.data))


class _Chan:
    def __init__(self, mdu):
        self.mdu = mdu
        self.sent = []

    def send(self, message):
        self.sent.append(message.pack())


def stream_write(mdu, data, stream_id):
    """RawChannelWriter(stream_id, channel with this MDU).write(data): (bytes taken, the
    message it sent)."""
    _mods()
    ch = _Chan(mdu)
    w = BUF.RawChannelWriter(stream_id, ch)
    n = w.write(data)
    return (n, ch.sent[0] if ch.sent else None)


class _Receipt:
    """Stands in for the PacketReceipt a single-packet request is sent under."""
    truncated_hash = bytes(16)

    def set_timeout_callback(self, cb):
        self.timeout_cb = cb


class _Link:
    """What RequestReceipt touches of its link."""
    def __init__(self):
        self.pending_requests = []


def receipt_conclude(status, event):
    """A RequestReceipt in status (RequestReceipt.SENT / DELIVERED) meets its packet receipt's
    timeout (event 0: request_timed_out) or a response over max_response_size (event 1:
    response_rejected) -> (final status, failed callbacks run, still pending 0/1)."""
    R = _mods().RequestReceipt
    link, failed = _Link(), []
    pr = _Receipt()
    r = R(link, packet_receipt=pr, failed_callback=lambda rr: failed.append(rr), timeout=1)
    r.status = status
    if event == 0:
        pr.timeout_cb(pr)
    else:
        r.response_rejected()
    return (r.status, len(failed), 1 if r in link.pending_requests else 0)


def install():
    _mods()
    import rnsc_wireharness
    rnsc_wireharness._mods()
    for name in ("req_pack", "req_unpack", "resp_pack", "resp_unpack", "path_hash",
                 "stream_pack", "stream_unpack", "stream_write", "receipt_conclude"):
        setattr(rnsc_wireharness, "req_" + name if not name.startswith("req_") else name,
                globals()[name])
    return 0
