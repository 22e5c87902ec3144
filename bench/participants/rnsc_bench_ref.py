#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reference participant of `rnsc bench`: the stock pinned RNS, driven only through
its public API in its own process, speaking the runner's line protocol.

  rnsc_bench_ref.py --role responder --scenario single --config DIR
  rnsc_bench_ref.py --role initiator --scenario single --config DIR --dest HEX

Line protocol (one line each way, words separated by spaces, values key=value):
  participant -> runner  "ready [dest=HEX]"   set-up, discovery and warm-up are done
  runner -> participant  "start seconds=S drain=D"   (the responder first)
  participant -> runner  "started"            (responder: counters zeroed; only then is the
                                               initiator started)
  participant -> runner  "done"               timed traffic and drain are over (initiator)
  runner -> participant  "collect"
  participant -> runner  "result key=value ..."
  runner -> participant  "quit"
  either side            "error reason=..."   then exit non-zero
Anything the reference logs goes to stderr; stdout carries the protocol only.

Scenarios: single (SINGLE-destination DATA packets, no link, each proved, 16 outstanding);
link (one link to bench.link, link packets of 60..420 bytes, each proved by the responder,
16 outstanding; the initiator also reports sent_bytes and the link's negotiated link_mtu).
The payload sizes and bytes come from bench/participants/bench_gen.py, the same
generators as rnsc's bench/scenario/bench_gen.h.

Resource scenarios: resource (4: one 1,048,575-byte resource at a time) and stream (5: one
67,108,800-byte resource of 64 segments at a time; 4,194,300 bytes = 4 segments with
--quick), compression off, over one link. Every resource carries the first N bytes of the
payload stream. The responder accepts all resources (Link.ACCEPT_ALL), checks the SHA-256
of each completed resource against the payload's and answers with a 16-byte ACK link packet
("RNSCBACK" + big-endian sequence, 1 for the link's first resource); the initiator starts
the next resource once its resource concluded COMPLETE and the ACK arrived. A warm-up
resource of min(N, 1,048,575) bytes and its ACK precede "ready". The initiator hands the
reference an open file for resources above one segment (the reference's own way of sending
large data), bytes otherwise.
"""
import argparse
import hashlib
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gen  # noqa: E402

# The protocol gets its own copy of stdout; fd 1 then points at stderr so that nothing the
# reference prints can interleave with protocol lines.
PROTO = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)

import RNS  # noqa: E402

APP = "bench"
SIZES = {"single": (60, 380), "link": (60, 420), "resource": None, "stream": None}
SEGMENT = 1048575  # Resource.MAX_EFFICIENT_SIZE
ACK_MAGIC = b"RNSCBACK"


def resource_size(scenario, quick):
    if scenario == "resource":
        return SEGMENT
    return (4 if quick else 64) * SEGMENT
OUTSTANDING = 16
ANNOUNCE_EVERY = 0.5


def say(line):
    PROTO.write(line + "\n")
    PROTO.flush()


def fail(reason):
    say("error reason=" + reason.replace(" ", "_"))
    sys.stderr.flush()
    os._exit(1)


def expect(word):
    line = sys.stdin.readline()
    if not line:
        fail("runner closed stdin")
    parts = line.split()
    if not parts or parts[0] != word:
        fail("expected %s, got %r" % (word, line.strip()))
    return dict(p.split("=", 1) for p in parts[1:] if "=" in p)


class Responder:
    def __init__(self, scenario):
        self.lock = threading.Lock()
        self.delivered = 0
        self.bytes = 0
        self.first = threading.Event()
        self.identity = RNS.Identity()
        self.dest = RNS.Destination(self.identity, RNS.Destination.IN, RNS.Destination.SINGLE,
                                    APP, scenario)
        self.dest.set_proof_strategy(RNS.Destination.PROVE_ALL)
        self.dest.set_packet_callback(self.on_packet)
        if scenario == "link":
            self.dest.set_link_established_callback(self.on_link)

    def on_link(self, link):
        link.set_packet_callback(self.on_packet)
        self.first.set()

    def on_packet(self, data, packet):
        with self.lock:
            self.delivered += 1
            self.bytes += len(data)
        self.first.set()

    def announce_until_traffic(self):
        while not self.first.is_set():
            self.dest.announce()
            self.first.wait(ANNOUNCE_EVERY)

    def run(self):
        threading.Thread(target=self.announce_until_traffic, daemon=True).start()
        say("ready dest=" + self.dest.hash.hex())
        expect("start")
        with self.lock:  # the warm-up was proved before the initiator said ready
            self.delivered = self.bytes = 0
        say("started")
        expect("collect")
        with self.lock:
            say("result delivered=%d bytes=%d" % (self.delivered, self.bytes))


class ResourceResponder:
    def __init__(self, scenario, quick):
        self.lock = threading.Lock()
        self.completed = self.bytes = self.corrupt = self.acks = self.seq = 0
        # the SHA-256 of the payload prefix for each length a resource may have (the
        # warm-up's and the scenario's), computed once without holding the payload
        size = resource_size(scenario, quick)
        h = hashlib.sha256()
        for chunk in bench_gen.payload_chunks(size):
            h.update(chunk)
        self.expected = {size: h.digest(),
                         SEGMENT: hashlib.sha256(bench_gen.payload_prefix(SEGMENT)).digest()}
        self.first = threading.Event()
        self.identity = RNS.Identity()
        self.dest = RNS.Destination(self.identity, RNS.Destination.IN, RNS.Destination.SINGLE,
                                    APP, scenario)
        self.dest.set_proof_strategy(RNS.Destination.PROVE_ALL)
        self.dest.set_link_established_callback(self.on_link)

    def on_link(self, link):
        link.set_resource_strategy(RNS.Link.ACCEPT_ALL)
        link.set_resource_concluded_callback(self.on_resource)
        self.first.set()

    def on_resource(self, resource):
        ok = resource.status == RNS.Resource.COMPLETE
        n = 0
        if ok:  # content check: SHA-256 of what arrived against the payload's
            data = resource.data  # an open file (the reference assembles into storage)
            h = hashlib.sha256()
            if isinstance(data, (bytes, bytearray)):
                h.update(data)
                n = len(data)
            else:
                data.seek(0)
                while True:
                    chunk = data.read(1 << 20)
                    if not chunk:
                        break
                    h.update(chunk)
                    n += len(chunk)
            ok = self.expected.get(n) == h.digest()
        with self.lock:
            if not ok:
                self.corrupt += 1
                return
            self.seq += 1
            self.completed += 1
            self.bytes += n
            # counted before it leaves: the initiator may see it, say ready and the runner
            # zero the counters before send() returns
            self.acks += 1
            ack = ACK_MAGIC + self.seq.to_bytes(8, "big")
        if not RNS.Packet(resource.link, ack).send():
            with self.lock:
                self.acks -= 1

    def announce_until_traffic(self):
        while not self.first.is_set():
            self.dest.announce()
            self.first.wait(ANNOUNCE_EVERY)

    def run(self):
        threading.Thread(target=self.announce_until_traffic, daemon=True).start()
        say("ready dest=" + self.dest.hash.hex())
        expect("start")
        with self.lock:  # the warm-up resource was ACKed before the initiator said ready
            self.completed = self.bytes = self.corrupt = self.acks = 0
        say("started")
        expect("collect")
        with self.lock:
            say("result completed=%d bytes=%d corrupt=%d acks=%d" %
                (self.completed, self.bytes, self.corrupt, self.acks))


class Initiator:
    def __init__(self, scenario, dest_hex, path_timeout):
        self.scenario = scenario
        self.dest_hash = bytes.fromhex(dest_hex)
        self.path_timeout = path_timeout
        self.lo, self.hi = SIZES[scenario]
        self.sizes = bench_gen.Sizes(self.lo, self.hi)
        self.stream = bench_gen.Payload()
        self.cv = threading.Condition()
        self.inflight = {}
        self.sent = self.proved = self.timeouts = 0
        self.bytes_proved = self.bytes_sent = 0
        self.link = None
        self.rtts = []
        self.last_proof = None

    def find_destination(self):
        deadline = time.monotonic() + self.path_timeout
        if not RNS.Transport.has_path(self.dest_hash):
            RNS.Transport.request_path(self.dest_hash)
        while time.monotonic() < deadline:
            ident = RNS.Identity.recall(self.dest_hash)
            if ident is not None and RNS.Transport.has_path(self.dest_hash):
                return RNS.Destination(ident, RNS.Destination.OUT, RNS.Destination.SINGLE, APP,
                                       self.scenario)
            time.sleep(0.05)
        fail("no path to the responder within %.0f s" % self.path_timeout)

    def on_proof(self, receipt):
        now = time.monotonic()
        with self.cv:
            entry = self.inflight.pop(receipt.hash, None)
            if entry is not None:
                sent_at, size = entry
                self.proved += 1
                self.bytes_proved += size
                if self.timing:
                    self.rtts.append(now - sent_at)
                self.last_proof = now
            self.cv.notify()

    def on_timeout(self, receipt):
        with self.cv:
            if self.inflight.pop(receipt.hash, None) is not None:
                self.timeouts += 1
            self.cv.notify()

    def open_link(self, dest):
        up = threading.Event()
        self.link = RNS.Link(dest, established_callback=lambda l: up.set(),
                             closed_callback=self.on_link_closed)
        if not up.wait(self.path_timeout):
            fail("the link was not established within %.0f s" % self.path_timeout)
        return self.link

    def on_link_closed(self, link):
        if not self.finished:
            fail("the link closed")

    def send_one(self, dest):
        size = self.sizes.next()
        data = self.stream.take(size)
        packet = RNS.Packet(dest, data)
        with self.cv:
            receipt = packet.send()
            if not receipt:
                fail("the reference refused to send a packet")
            self.inflight[receipt.hash] = (time.monotonic(), size)
            self.sent += 1
            self.bytes_sent += size
        receipt.set_delivery_callback(self.on_proof)
        receipt.set_timeout_callback(self.on_timeout)
        # a proof that came back before the callbacks were set is accounted here
        if receipt.status == RNS.PacketReceipt.DELIVERED:
            self.on_proof(receipt)
        elif receipt.status == RNS.PacketReceipt.FAILED:
            self.on_timeout(receipt)

    def pump(self, dest, until):
        while time.monotonic() < until:
            with self.cv:
                while len(self.inflight) >= OUTSTANDING and time.monotonic() < until:
                    self.cv.wait(0.05)
                if time.monotonic() >= until:
                    break
            self.send_one(dest)

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        with self.cv:
            while self.inflight and time.monotonic() < deadline:
                self.cv.wait(0.05)

    def run(self):
        self.finished = False
        dest = self.find_destination()
        if self.scenario == "link":
            dest = self.open_link(dest)
        # warm-up: the first packets stop the responder's announces and fill caches
        self.timing = False
        self.pump(dest, time.monotonic() + 0.5)
        self.drain(10)
        if self.inflight:
            fail("warm-up packets were never proved")
        self.sent = self.proved = self.timeouts = self.bytes_proved = self.bytes_sent = 0
        say("ready")
        args = expect("start")
        seconds = float(args.get("seconds", "30"))
        drain = float(args.get("drain", "30"))
        self.timing = True
        t0 = time.monotonic()
        self.pump(dest, t0 + seconds)
        self.drain(drain)
        end = time.monotonic()
        with self.cv:
            unproved = len(self.inflight)
            elapsed = end - t0
        self.finished = True
        say("done")
        expect("collect")
        rtts = sorted(self.rtts)

        def pct(p):
            if not rtts:
                return 0.0
            k = max(1, min(len(rtts), int(-(-p * len(rtts) // 100))))
            return rtts[k - 1] * 1e6

        say("result sent=%d proved=%d timeouts=%d unproved=%d bytes=%d sent_bytes=%d "
            "elapsed_s=%.6f rtt_p50_us=%.1f rtt_p99_us=%.1f link_mtu=%d" %
            (self.sent, self.proved, self.timeouts, unproved, self.bytes_proved,
             self.bytes_sent, elapsed, pct(50), pct(99),
             self.link.mtu if self.link is not None else 0))


class ResourceInitiator(Initiator):
    def __init__(self, scenario, dest_hex, path_timeout, quick, workdir):
        self.scenario = scenario
        self.dest_hash = bytes.fromhex(dest_hex)
        self.path_timeout = path_timeout
        self.size = resource_size(scenario, quick)
        self.cv = threading.Condition()
        self.link = None
        self.finished = False
        self.seq = 0
        self.cur = None  # [done, acked, failed]
        self.sent = self.completed = self.acked = self.bytes = self.bytes_sent = 0
        self.rtts = []
        self.warm = bench_gen.payload_prefix(SEGMENT)
        self.path = None
        if self.size > SEGMENT:  # written once, chunk by chunk, then sent from the file
            self.path = os.path.join(workdir, "bench-payload")
            with open(self.path, "wb") as f:
                for chunk in bench_gen.payload_chunks(self.size):
                    f.write(chunk)
        else:
            self.payload = self.warm

    def on_ack(self, data, packet):
        with self.cv:
            if self.cur is None or len(data) != 16 or data[:8] != ACK_MAGIC or \
                    int.from_bytes(data[8:], "big") != self.seq or self.cur[1]:
                fail("unexpected ACK %r (expected sequence %d)" % (data.hex(), self.seq))
            self.cur[1] = True
            self.cv.notify()

    def on_concluded(self, resource):
        with self.cv:
            if self.cur is not None:
                if resource.status == RNS.Resource.COMPLETE:
                    self.cur[0] = True
                else:
                    self.cur[2] = True
            self.cv.notify()

    def one(self, warm, deadline):
        """Sends one resource and waits for COMPLETE and its ACK; False when the deadline
        passed first."""
        with self.cv:
            self.seq += 1
            self.cur = [False, False, False]
        fh = None
        if warm:
            data, size = self.warm, len(self.warm)
        elif self.path:
            fh = data = open(self.path, "rb")
            size = self.size
        else:
            data, size = self.payload, self.size
        t0 = time.monotonic()
        RNS.Resource(data, self.link, auto_compress=False, callback=self.on_concluded)
        if not warm:
            self.sent += 1
            self.bytes_sent += size
        with self.cv:
            while not (self.cur[0] and self.cur[1]) and not self.cur[2] and \
                    time.monotonic() < deadline:
                self.cv.wait(0.05)
            done, acked, failed = self.cur
        if fh:
            fh.close()
        if failed:
            fail("a resource failed")
        if not (done and acked):
            return False
        if not warm:
            self.completed += 1
            self.acked += 1
            self.bytes += size
            self.rtts.append(time.monotonic() - t0)
        return True

    def run(self):
        dest = self.find_destination()
        self.open_link(dest)
        self.link.set_packet_callback(self.on_ack)
        if not self.one(True, time.monotonic() + self.path_timeout):
            fail("the warm-up resource was not completed and ACKed")
        say("ready")
        args = expect("start")
        seconds = float(args.get("seconds", "30"))
        drain = float(args.get("drain", "30"))
        t0 = time.monotonic()
        unfinished = 0
        while time.monotonic() < t0 + seconds:
            if not self.one(False, t0 + seconds + drain):
                unfinished = 1
                break
        end = time.monotonic()
        self.finished = True
        say("done")
        expect("collect")
        rtts = sorted(self.rtts)

        def pct(p):
            if not rtts:
                return 0.0
            k = max(1, min(len(rtts), int(-(-p * len(rtts) // 100))))
            return rtts[k - 1] * 1e6

        say("result sent=%d completed=%d acked=%d bytes=%d sent_bytes=%d resource_size=%d "
            "unfinished=%d elapsed_s=%.6f rtt_p50_us=%.1f rtt_p99_us=%.1f link_mtu=%d" %
            (self.sent, self.completed, self.acked, self.bytes, self.bytes_sent, self.size,
             unfinished, end - t0, pct(50), pct(99), self.link.mtu))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--role", choices=("responder", "initiator"), required=True)
    ap.add_argument("--scenario", choices=tuple(SIZES), required=True)
    ap.add_argument("--config", required=True, help="Reticulum config directory")
    ap.add_argument("--dest", help="responder destination hash (initiator)")
    ap.add_argument("--path-timeout", type=float, default=30.0)
    ap.add_argument("--quick", action="store_true",
                    help="quick run (stream: 4 segments instead of 64)")
    a = ap.parse_args()
    if a.role == "initiator" and not a.dest:
        ap.error("--dest is required for the initiator")
    try:
        RNS.Reticulum(configdir=a.config, loglevel=RNS.LOG_ERROR)
    except Exception as e:  # the reference raises plain exceptions for config problems
        fail("reference start failed: %s" % e)
    res = a.scenario in ("resource", "stream")
    if a.role == "responder":
        (ResourceResponder(a.scenario, a.quick) if res else Responder(a.scenario)).run()
    elif res:
        ResourceInitiator(a.scenario, a.dest, a.path_timeout, a.quick, a.config).run()
    else:
        Initiator(a.scenario, a.dest, a.path_timeout).run()
    expect("quit")
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
