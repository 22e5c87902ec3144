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

Request/response (3): request. Both configs set link_mtu_discovery = No (the runner writes
it from the scenario plugin), so every link runs at the base 500-byte MTU. The responder
registers a handler for /bench/query (Destination.register_request_handler, ALLOW_ALL,
auto_compress off: the bytes are incompressible); a request's data is bytes of 32..128 whose
first two bytes (big-endian) name the response size N, 1024..4096, and the response is the
first N bytes of the payload stream: packed, it exceeds the link MDU, so the reference sends
it as a resource. The initiator opens 4 links and keeps one request in flight on each with
Link.request, issuing a link's next request only after the previous one's response (or
failure) callback ran; request sizes from Sizes(32, 128), response sizes from
Sizes(1024, 4096), the request's other bytes from the payload stream. It checks each
response's content and counts responses whose progress callback saw RequestReceipt.RECEIVING
(the response resource arriving) as delivered by resource, and responses slower than 200 ms
(slow=: the reference's request race and advertise-before-register recover through retries
that take that long, NOTES-reference.md), and among them those whose response advertisement
itself came 200 ms or more after the request (late_adv=: the first advertisement was missed,
as the request race does, and its retry was taken). 0.5 s of warm-up requests, all answered, precede
"ready".
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
SIZES = {"single": (60, 380), "link": (60, 420), "resource": None, "stream": None,
         "request": (32, 128)}
REQ_LINKS = 4
REQ_PATH = "/bench/query"
RESP_LO, RESP_HI = 1024, 4096
SLOW_S = 0.2
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
        self.completed = self.bytes = self.corrupt = self.failed = self.acks = self.seq = 0
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
        if resource.status != RNS.Resource.COMPLETE:
            with self.lock:  # concluded without completing: failed, not corrupt
                self.failed += 1
            return
        n = 0
        # content check: SHA-256 of what arrived against the payload's
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
            self.completed = self.bytes = self.corrupt = self.failed = self.acks = 0
        say("started")
        expect("collect")
        with self.lock:
            say("result completed=%d bytes=%d corrupt=%d failed=%d acks=%d" %
                (self.completed, self.bytes, self.corrupt, self.failed, self.acks))


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


class RequestResponder:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = self.served = self.bad = self.req_bytes = self.bytes = 0
        self.resp = bench_gen.payload_prefix(RESP_HI)
        self.first = threading.Event()
        self.identity = RNS.Identity()
        self.dest = RNS.Destination(self.identity, RNS.Destination.IN, RNS.Destination.SINGLE,
                                    APP, "request")
        self.dest.set_proof_strategy(RNS.Destination.PROVE_ALL)
        self.dest.set_link_established_callback(lambda link: self.first.set())
        self.dest.register_request_handler(REQ_PATH, response_generator=self.handle,
                                           allow=RNS.Destination.ALLOW_ALL, auto_compress=False)

    def handle(self, path, data, request_id, link_id, remote_identity, requested_at):
        with self.lock:
            self.requests += 1
            if not isinstance(data, bytes):
                self.bad += 1
                return None
            self.req_bytes += len(data)
            want = int.from_bytes(data[:2], "big") if len(data) >= 2 else 0
            if not (SIZES["request"][0] <= len(data) <= SIZES["request"][1]) or \
                    not (RESP_LO <= want <= RESP_HI):
                self.bad += 1
                return None
            self.served += 1
            self.bytes += want
        return self.resp[:want]

    def announce_until_traffic(self):
        while not self.first.is_set():
            self.dest.announce()
            self.first.wait(ANNOUNCE_EVERY)

    def run(self):
        threading.Thread(target=self.announce_until_traffic, daemon=True).start()
        say("ready dest=" + self.dest.hash.hex())
        expect("start")
        with self.lock:  # the warm-up was answered before the initiator said ready
            self.requests = self.served = self.bad = self.req_bytes = self.bytes = 0
        say("started")
        expect("collect")
        with self.lock:
            say("result requests=%d served=%d bad=%d req_bytes=%d bytes=%d" %
                (self.requests, self.served, self.bad, self.req_bytes, self.bytes))


class RequestInitiator(Initiator):
    def __init__(self, dest_hex, path_timeout):
        self.scenario = "request"
        self.dest_hash = bytes.fromhex(dest_hex)
        self.path_timeout = path_timeout
        self.sizes = bench_gen.Sizes(*SIZES["request"])
        self.rsizes = bench_gen.Sizes(RESP_LO, RESP_HI)
        self.stream = bench_gen.Payload()
        self.expected = bench_gen.payload_prefix(RESP_HI)
        self.cv = threading.Condition()
        self.links = []
        self.busy = [False] * REQ_LINKS
        self.via = [False] * REQ_LINKS
        self.want = [0] * REQ_LINKS
        self.t0 = [0.0] * REQ_LINKS
        self.t_adv = [0.0] * REQ_LINKS
        self.finished = False
        self.timing = False
        self.rtts = []
        self.zero()

    def zero(self):
        self.sent = self.delivered = self.failed = self.corrupt = self.via_resource = 0
        self.bytes = self.sent_bytes = self.slow = self.late_adv = 0

    def open_links(self, dest):
        ups = [threading.Event() for _ in range(REQ_LINKS)]
        for ev in ups:
            self.links.append(RNS.Link(dest, established_callback=lambda l, ev=ev: ev.set(),
                                       closed_callback=self.on_link_closed))
        deadline = time.monotonic() + self.path_timeout
        for ev in ups:
            if not ev.wait(max(0.0, deadline - time.monotonic())):
                fail("the links were not established within %.0f s" % self.path_timeout)

    def on_progress(self, i, receipt):
        if receipt.status == RNS.RequestReceipt.RECEIVING:
            with self.cv:
                if not self.via[i]:
                    self.via[i] = True
                    self.t_adv[i] = time.monotonic()

    def on_response(self, i, receipt):
        now = time.monotonic()
        data = receipt.response
        with self.cv:
            if not self.busy[i]:
                fail("a response for a link without a request in flight")
            want = self.want[i]
            n = len(data) if isinstance(data, bytes) else 0
            if n != want or data != self.expected[:want]:
                self.corrupt += 1
            self.delivered += 1
            self.via_resource += 1 if self.via[i] else 0
            self.bytes += n
            rtt = now - self.t0[i]
            if self.timing:
                self.rtts.append(rtt)
            if rtt >= SLOW_S:
                self.slow += 1
            if self.via[i] and self.t_adv[i] - self.t0[i] >= SLOW_S:
                self.late_adv += 1
            self.busy[i] = False
            self.cv.notify()

    def on_failed(self, i, receipt):
        with self.cv:
            self.failed += 1
            self.busy[i] = False
            self.cv.notify()

    def send_request(self, i):
        size = self.sizes.next()
        want = self.rsizes.next()
        data = want.to_bytes(2, "big") + self.stream.take(size - 2)
        with self.cv:
            self.busy[i], self.via[i], self.want[i] = True, False, want
            self.t0[i] = time.monotonic()
            self.sent += 1
            self.sent_bytes += size
        receipt = self.links[i].request(
            REQ_PATH, data,
            response_callback=lambda r, i=i: self.on_response(i, r),
            failed_callback=lambda r, i=i: self.on_failed(i, r),
            progress_callback=lambda r, i=i: self.on_progress(i, r))
        if receipt is False:
            fail("the reference refused to send a request")

    def pump_requests(self, until):
        """Gives every idle link its next request until the deadline: one in flight per
        link, the next only after the previous one's response or failure callback."""
        while True:
            with self.cv:
                while all(self.busy) and time.monotonic() < until:
                    self.cv.wait(0.05)
                if time.monotonic() >= until:
                    return
                idle = [i for i in range(REQ_LINKS) if not self.busy[i]]
            for i in idle:
                self.send_request(i)

    def drain_requests(self, seconds):
        deadline = time.monotonic() + seconds
        with self.cv:
            while any(self.busy) and time.monotonic() < deadline:
                self.cv.wait(0.05)

    def run(self):
        dest = self.find_destination()
        self.open_links(dest)
        self.pump_requests(time.monotonic() + 0.5)
        self.drain_requests(30)
        with self.cv:
            if any(self.busy) or self.failed or self.corrupt or \
                    self.via_resource != self.delivered:
                fail("warm-up requests were not all answered by resources")
            self.zero()
        say("ready")
        args = expect("start")
        seconds = float(args.get("seconds", "30"))
        drain = float(args.get("drain", "30"))
        self.timing = True
        t0 = time.monotonic()
        self.pump_requests(t0 + seconds)
        self.drain_requests(drain)
        end = time.monotonic()
        with self.cv:
            unanswered = sum(self.busy)
        self.finished = True
        say("done")
        expect("collect")
        rtts = sorted(self.rtts)

        def pct(p):
            if not rtts:
                return 0.0
            k = max(1, min(len(rtts), int(-(-p * len(rtts) // 100))))
            return rtts[k - 1] * 1e6

        say("result sent=%d delivered=%d failed=%d unanswered=%d corrupt=%d via_resource=%d "
            "bytes=%d sent_bytes=%d links=%d slow=%d late_adv=%d elapsed_s=%.6f rtt_p50_us=%.1f "
            "rtt_p99_us=%.1f link_mtu=%d" %
            (self.sent, self.delivered, self.failed, unanswered, self.corrupt,
             self.via_resource, self.bytes, self.sent_bytes, len(self.links), self.slow, self.late_adv,
             end - t0, pct(50), pct(99), self.links[0].mtu))


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
    if a.scenario == "request":
        if a.role == "responder":
            RequestResponder().run()
        else:
            RequestInitiator(a.dest, a.path_timeout).run()
    elif a.role == "responder":
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
