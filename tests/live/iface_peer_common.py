# SPDX-License-Identifier: MIT
"""Shared by the tests/live/iface_*_peer.py scripts that run the pinned reference's own
interface classes: the test frames, line output, the stubs that let an interface class
run without RNS.Reticulum, the echoing owner and the wait for stdin to close.

RNS is imported only inside stub_reference(), so peers that never touch the reference
(the pipe peer's echo and bridge modes) can import this module too.
"""
import sys
import threading

HDLC_MARKS = (0x7E, 0x7D, 0x5E)  # bytes that need HDLC escaping, and a lookalike

_out_lock = threading.Lock()


def frames(lengths, marks=HDLC_MARKS):
    """Frame i for every i: the generator the C tests use (tu_make_frame)."""
    out = []
    for i, n in enumerate(lengths):
        b = bytearray(((i * 31 + j * 7) & 0xFF) for j in range(n))
        b[1:1 + len(marks)] = bytes(marks)
        out.append(bytes(b))
    return out


def say(line):
    """One line on stdout, whole, whichever thread says it; the C test reads lines."""
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class _Instance:
    """Stands in for Reticulum.get_instance(): Interface.__init__ asks it for defaults."""

    def __getattr__(self, name):
        if name.startswith("_default_"):
            return lambda: None
        raise AttributeError(name)


def stub_reference(quiet_panic=True, on_spawned=None):
    """Reference log lines to stderr (stdout stays clean for the C test), a stand-in
    Reticulum instance, interface errors that do not panic unless quiet_panic is False,
    and, with on_spawned, the Transport hooks a server calls for spawned interfaces.
    Returns the RNS module."""
    import RNS

    RNS.logdest = RNS.LOG_CALLBACK
    RNS.logcall = lambda s: print(s, file=sys.stderr, flush=True)
    RNS.loglevel = RNS.LOG_DEBUG
    RNS.Reticulum.get_instance = staticmethod(lambda: _Instance())
    if quiet_panic:
        RNS.Reticulum.panic_on_interface_error = False
    if on_spawned:
        RNS.Transport.add_interface = staticmethod(on_spawned)
        RNS.Transport.remove_interface = staticmethod(lambda iface: None)
        RNS.Transport.synthesize_tunnel = staticmethod(lambda iface: None)
    return RNS


class EchoOwner:
    """The owner the interfaces report to (RNS.Transport in the reference): echoes every
    frame (framed by the reference) and, once as many frames as expected have arrived,
    says "RESULT ok <n>" or "RESULT fail <why>". ordered=False compares as multisets
    (datagrams carry no order guarantee)."""

    def __init__(self, expected, ordered=True):
        self.expected = expected
        self.ordered = ordered
        self.received = []
        self.lock = threading.Lock()

    def inbound(self, data, iface):
        iface.process_outgoing(data)
        with self.lock:
            self.received.append(bytes(data))
            if len(self.received) == len(self.expected):
                say(self._verdict())

    def _verdict(self):
        got, want = self.received, self.expected
        if self.ordered:
            if got == want:
                return "RESULT ok %d" % len(got)
            bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
            return "RESULT fail frames %s differ" % bad
        if sorted(got) == sorted(want):
            return "RESULT ok %d" % len(got)
        bad = [i for i, f in enumerate(want) if f not in got]
        return "RESULT fail frames %s missing" % bad


def wait_stdin(timeout=60):
    """Returns when stdin closes (the C test is done with the peer) or after timeout s."""
    done = threading.Event()

    def run():
        sys.stdin.read()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    done.wait(timeout)
