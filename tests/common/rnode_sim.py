#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A simulated RNode behind a pseudo-terminal, on a simulated LoRa channel.

Written for rnsc's tests from the host command set the reference speaks
(rns 1.5.4, RNS/Interfaces/RNodeInterface.py and RNodeMultiInterface.py): KISS
frames FEND type payload FEND, the firmware answering each set command by
reporting the value it now holds. It is not the firmware, only what a host sees.

  rnode_sim.py --link PATH --air PORT [--peer PORT ...] [options]

The pty's slave is symlinked at PATH. The "air" is UDP on 127.0.0.1: each
simulator binds PORT and sends what it transmits to every --peer port; a frame is
heard only by a receiver on the same frequency, bandwidth, spreading factor and
coding rate, for as long as its LoRa time-on-air (the Semtech formula, explicit
header, CRC on, low-data-rate optimisation above 16 ms symbols, the firmware's
preamble of at least 18 symbols and 24 ms; packets beyond 254 bytes go out as two
LoRa frames, as the firmware splits them). Two receptions that overlap collide and
both are lost; a frame arriving while this radio transmits is lost (half duplex);
--loss drops that fraction of receptions; --no-csma makes the radio transmit
without waiting for a clear channel, so simultaneous senders collide.

Host commands answered: DETECT, FW_VERSION, PLATFORM, MCU, FREQUENCY, BANDWIDTH,
TXPOWER, SF, CR, RADIO_STATE, RADIO_LOCK, ST_ALOCK, LT_ALOCK, STAT_RX, STAT_TX,
STAT_BAT, BLINK, RANDOM, FB_EXT, FB_READ, FB_WRITE, DISP_READ, RESET, LEAVE,
READY and DATA. With the radio on it reports, every --stats-interval seconds,
STAT_CHTM (airtime and channel load, 15 s and 1 h windows), STAT_PHYPRM, STAT_CSMA
and STAT_BAT; before each received packet STAT_RSSI and STAT_SNR; after each
transmission READY. A radio over its short- or long-term airtime limit holds its
queue. Turning the radio on with an unusable frequency or bandwidth reports
ERROR_INITRADIO, as the firmware does.

Multi-radio: --radios N makes it a multi-radio RNode as RNodeMultiInterface
(RNodeMultiInterface.py) speaks to one: the host selects a radio with
CMD_SEL_INT (0x1F <index>) before each per-radio command or data frame, the
device answers INTERFACES (0x71) with one (index, chip type) frame per radio
(--radio-types, default SX1262 for each) and precedes each per-radio report and
received packet with SEL_INT <index>. Radio i is on the air at UDP port
PORT+i and sends to every --peer port; device commands (DETECT, FW_VERSION,
PLATFORM, MCU, RESET, LEAVE ...) are the device's own.

Control: --control SOCK binds a unix datagram socket taking one command per
datagram: "unplug" (close the pty and remove PATH: the host sees the device go
away), "plug" (a new pty at PATH), "error N" (send CMD_ERROR with code N), "raw HEX" (send
these bytes to the host), "quit". --tnc BITRATE makes it a plain KISS TNC instead
(data frames on air at that bit rate, other commands logged, no reports), for the
KISS and AX.25 interfaces. --mute answers nothing, like a port that is no RNode.
Events go to stdout, one line each (READY, TX, RX, COLLISION, LOST, CMD ...).
Every byte the host writes is appended to --rx-log, so tests can compare what two
hosts sent. The process exits on "quit", SIGTERM, or after --lifetime seconds.
"""
import argparse
import math
import os
import random
import selectors
import signal
import socket
import struct
import sys
import time
import tty

FEND, FESC, TFEND, TFESC = 0xC0, 0xDB, 0xDC, 0xDD
CMD_DATA, CMD_FREQUENCY, CMD_BANDWIDTH, CMD_TXPOWER = 0x00, 0x01, 0x02, 0x03
CMD_SF, CMD_CR, CMD_RADIO_STATE, CMD_RADIO_LOCK = 0x04, 0x05, 0x06, 0x07
CMD_DETECT, CMD_LEAVE, CMD_ST_ALOCK, CMD_LT_ALOCK, CMD_READY = 0x08, 0x0A, 0x0B, 0x0C, 0x0F
CMD_STAT_RX, CMD_STAT_TX, CMD_STAT_RSSI, CMD_STAT_SNR = 0x21, 0x22, 0x23, 0x24
CMD_STAT_CHTM, CMD_STAT_PHYPRM, CMD_STAT_BAT, CMD_STAT_CSMA = 0x25, 0x26, 0x27, 0x28
CMD_STAT_TEMP, CMD_BLINK, CMD_RANDOM, CMD_FB_EXT, CMD_FB_READ = 0x29, 0x30, 0x40, 0x41, 0x42
CMD_FB_WRITE, CMD_DISP_READ, CMD_PLATFORM, CMD_MCU = 0x43, 0x66, 0x48, 0x49
CMD_FW_VERSION, CMD_RESET, CMD_ERROR = 0x50, 0x55, 0x90
CMD_SEL_INT, CMD_INTERFACES = 0x1F, 0x71
DETECT_REQ, DETECT_RESP = 0x73, 0x46
ERROR_INITRADIO, ERROR_QUEUE_FULL = 0x01, 0x04
RSSI_OFFSET = 157

AIR_MAGIC = b"RSIM"
AIR_HDR = struct.Struct("!4sIIBBIH")  # magic freq bw sf cr airtime_us length
LORA_MTU = 255
PREAMBLE_MIN_SYMBOLS = 18
PREAMBLE_TARGET_S = 0.024
QUEUE_MAX = 200
SHORT_WINDOW, LONG_WINDOW = 15.0, 3600.0


def escape(b):
    return b.replace(b"\xdb", b"\xdb\xdd").replace(b"\xc0", b"\xdb\xdc")


def kiss(cmd, payload):
    return bytes([FEND, cmd]) + escape(bytes(payload)) + bytes([FEND])


def symbol_time(sf, bw):
    return (2 ** sf) / bw


def preamble_symbols(sf, bw):
    return max(PREAMBLE_MIN_SYMBOLS, math.ceil(PREAMBLE_TARGET_S / symbol_time(sf, bw)))


def lora_airtime(nbytes, sf, bw, cr):
    """Seconds on air for one LoRa frame of nbytes (explicit header, CRC on)."""
    ts = symbol_time(sf, bw)
    de = 1 if ts > 0.016 else 0
    num = 8 * nbytes - 4 * sf + 28 + 16
    n_payload = 8 + max(math.ceil(num / (4 * (sf - 2 * de))) * cr, 0)
    return (preamble_symbols(sf, bw) + 4.25) * ts + n_payload * ts


def packet_airtime(nbytes, sf, bw, cr):
    """The firmware sends a 1-byte header and splits beyond one LoRa frame."""
    total = nbytes + 1
    if total <= LORA_MTU:
        return lora_airtime(total, sf, bw, cr)
    return lora_airtime(LORA_MTU, sf, bw, cr) + lora_airtime(total - LORA_MTU + 1, sf, bw, cr)


class Sim:
    def __init__(self, a, air_port=None, sel=None, front=None, index=0):
        self.a = a
        self.front = front  # the multi-radio device this radio belongs to
        self.index = index
        self.host_sel = 0
        self.sel = sel or selectors.DefaultSelector()
        self.rng = random.Random(a.seed)
        self.master = self.slave = None
        self.rx_log = open(a.rx_log, "ab", buffering=0) if a.rx_log else None
        # radio state as the firmware holds it
        self.freq = self.bw = 0
        self.txp, self.sf, self.cr = 0, 7, 5
        self.radio_on = False
        self.st_alock = self.lt_alock = 0
        self.stat_rx = self.stat_tx = 0
        self.queue = []
        self.tx_until = 0.0
        self.rx = []  # [end, frame, collided]
        self.busy_until = 0.0
        self.airtime = []  # (start, duration) of own transmissions
        self.heard = []  # (start, duration) of channel activity
        self.next_stats = 0.0
        self.timers = []
        self.dec = bytearray()
        self.in_frame = False
        self.esc = False
        self.radios = []
        if front is None and a.radios:
            types = [int(t, 0) for t in a.radio_types.split(",")] if a.radio_types else []
            for i in range(a.radios):
                r = Sim(a, a.air + i, self.sel, self, i)
                r.chip = types[i] if i < len(types) else 0x11
                self.radios.append(r)
        else:
            self.air = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.air.bind(("127.0.0.1", a.air if air_port is None else air_port))
            self.air.setblocking(False)
            self.sel.register(self.air, selectors.EVENT_READ, self.on_air)
        self.ctl = None
        if a.control and front is None:
            try:
                os.unlink(a.control)
            except FileNotFoundError:
                pass
            self.ctl = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.ctl.bind(a.control)
            self.sel.register(self.ctl, selectors.EVENT_READ, self.on_ctl)
        self.running = True

    def say(self, line):
        if self.front is not None:
            line = "R%d %s" % (self.index, line)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    # ---- the pty ------------------------------------------------------------------
    def plug(self):
        if self.master is not None:
            return
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        name = os.ttyname(self.slave)
        tmp = self.a.link + ".tmp"
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        os.symlink(name, tmp)
        os.replace(tmp, self.a.link)
        self.sel.register(self.master, selectors.EVENT_READ, self.on_host)
        self.radio_on = bool(self.a.tnc)
        self.say("READY " + self.a.link)

    def unplug(self):
        if self.master is None:
            return
        self.sel.unregister(self.master)
        try:
            os.unlink(self.a.link)
        except FileNotFoundError:
            pass
        os.close(self.master)
        os.close(self.slave)
        self.master = self.slave = None
        self.radio_on = False
        self.queue.clear()
        for r in self.radios:
            r.radio_on = False
            r.queue.clear()
        self.say("UNPLUGGED")

    def to_host(self, data):
        if self.front is not None:  # a radio of a multi-radio device: select, then data
            self.front.to_host(bytes([FEND, CMD_SEL_INT, self.index, FEND]) + data)
            return
        if self.master is None:
            return
        try:
            os.write(self.master, data)
        except OSError as e:
            self.say("HOSTWRITE error %s" % e)

    def report(self, cmd, payload):
        self.to_host(kiss(cmd, payload))

    def on_host(self, fd):
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            return  # nothing written yet on a fresh pty (EIO until the slave is used)
        if self.rx_log:
            self.rx_log.write(data)
        for b in data:
            if b == FEND:
                if self.in_frame and len(self.dec) > 0:
                    self.command(self.dec[0], bytes(self.dec[1:]))
                self.dec = bytearray()
                self.in_frame = True
                self.esc = False
            elif not self.in_frame:
                continue
            elif b == FESC:
                self.esc = True
            else:
                if self.esc:
                    b = FEND if b == TFEND else FESC if b == TFESC else b
                    self.esc = False
                if len(self.dec) < 1100:
                    self.dec.append(b)

    # ---- host commands ------------------------------------------------------------
    def command(self, cmd, p):
        if self.a.mute:
            return
        if self.a.tnc:  # a plain KISS TNC: data frames go on air, the rest is only logged
            if cmd & 0x0F == CMD_DATA and p:
                self.queue.append(p)
            elif cmd & 0x0F != CMD_DATA:
                self.say("CMD %02x %s" % (cmd, p.hex()))
            return
        if self.radios and self.multi_command(cmd, p):
            return
        if cmd != CMD_DATA:
            self.say("CMD %02x %s" % (cmd, p.hex()))
        if cmd == CMD_DATA:
            if not self.radio_on or not p:
                self.say("HOSTDATA dropped (radio off)")
                return
            if len(self.queue) >= QUEUE_MAX:
                self.report(CMD_ERROR, [ERROR_QUEUE_FULL])
                return
            self.queue.append(p)
        elif cmd == CMD_DETECT:
            if p[:1] == bytes([DETECT_REQ]):
                self.report(CMD_DETECT, [DETECT_RESP])
        elif cmd == CMD_FW_VERSION:
            self.report(CMD_FW_VERSION, [self.a.fw_major, self.a.fw_minor])
        elif cmd == CMD_PLATFORM:
            self.report(CMD_PLATFORM, [self.a.platform])
        elif cmd == CMD_MCU:
            self.report(CMD_MCU, [self.a.mcu])
        elif cmd in (CMD_FREQUENCY, CMD_BANDWIDTH):
            if len(p) == 4:
                v = struct.unpack("!I", p)[0]
                if v != 0:
                    if cmd == CMD_FREQUENCY:
                        self.freq = v + self.a.freq_skew
                    else:
                        self.bw = v
            v = self.freq if cmd == CMD_FREQUENCY else self.bw
            self.report(cmd, struct.pack("!I", v & 0xFFFFFFFF))
        elif cmd == CMD_TXPOWER:
            if p and p[0] != 0xFF:
                self.txp = min(p[0], self.a.max_txpower)
            self.report(cmd, [self.txp])
        elif cmd == CMD_SF:
            if p and p[0] != 0xFF:
                self.sf = max(5, min(12, p[0]))
            self.report(cmd, [self.sf])
        elif cmd == CMD_CR:
            if p and p[0] != 0xFF:
                self.cr = max(5, min(8, p[0]))
            self.report(cmd, [self.cr])
        elif cmd in (CMD_ST_ALOCK, CMD_LT_ALOCK):
            if len(p) == 2:
                v = struct.unpack("!H", p)[0]
                if cmd == CMD_ST_ALOCK:
                    self.st_alock = v
                else:
                    self.lt_alock = v
            v = self.st_alock if cmd == CMD_ST_ALOCK else self.lt_alock
            self.report(cmd, struct.pack("!H", v))
        elif cmd == CMD_RADIO_STATE:
            if p and p[0] == 0x00:
                self.radio_on = False
            elif p and p[0] == 0x01:
                if not (137000000 <= self.freq <= 3000000000) or not (7800 <= self.bw <= 1625000):
                    self.radio_on = False
                    self.report(CMD_ERROR, [ERROR_INITRADIO])
                else:
                    self.radio_on = True
                    self.next_stats = 0.0
            self.report(CMD_RADIO_STATE, [1 if self.radio_on else 0])
        elif cmd == CMD_RADIO_LOCK:
            self.report(CMD_RADIO_LOCK, [0])
        elif cmd == CMD_STAT_RX:
            self.report(cmd, struct.pack("!I", self.stat_rx))
        elif cmd == CMD_STAT_TX:
            self.report(cmd, struct.pack("!I", self.stat_tx))
        elif cmd == CMD_STAT_BAT:
            self.report(cmd, [self.a.battery_state, self.a.battery])
        elif cmd == CMD_RANDOM:
            self.report(cmd, [self.rng.randrange(256)])
        elif cmd == CMD_FB_READ:
            self.report(cmd, bytes(512))
        elif cmd == CMD_DISP_READ:
            self.report(cmd, bytes(1024))
        elif cmd == CMD_RESET:
            if p[:1] == b"\xf8":
                self.radio_on = False
                self.queue.clear()
                self.report(CMD_RESET, [0xF8])
        elif cmd == CMD_LEAVE:
            self.say("HOST LEFT")
        # BLINK, FB_EXT, FB_WRITE and READY need no answer

    def multi_command(self, cmd, p):
        """The device side of a multi-radio RNode; True when handled here."""
        if cmd == CMD_SEL_INT:
            self.host_sel = p[0] if p else 0
            return True
        if cmd == CMD_INTERFACES:
            self.say("CMD %02x %s" % (cmd, p.hex()))
            for r in self.radios:
                self.report(CMD_INTERFACES, [r.index, r.chip])
            return True
        if cmd in (CMD_DETECT, CMD_FW_VERSION, CMD_PLATFORM, CMD_MCU, CMD_LEAVE, CMD_FB_EXT,
                   CMD_FB_READ, CMD_FB_WRITE, CMD_DISP_READ, CMD_BLINK, CMD_RANDOM):
            return False
        if cmd == CMD_RESET:
            for r in self.radios:
                r.radio_on = False
                r.queue.clear()
            return False
        if self.host_sel < len(self.radios):
            self.radios[self.host_sel].command(cmd, p)
        else:
            self.say("CMD %02x for missing radio %d" % (cmd, self.host_sel))
        return True

    # ---- the channel --------------------------------------------------------------
    def window_share(self, spans, now, window):
        t0 = now - window
        used = 0.0
        for s, d in spans:
            used += max(0.0, min(s + d, now) - max(s, t0))
        return min(1.0, used / window)

    def over_lock(self, now):
        if self.st_alock and self.window_share(self.airtime, now, SHORT_WINDOW) * 10000 >= self.st_alock:
            return True
        if self.lt_alock and self.window_share(self.airtime, now, LONG_WINDOW) * 10000 >= self.lt_alock:
            return True
        return False

    def try_transmit(self, now):
        if not self.queue or not self.radio_on or now < self.tx_until:
            return
        if not self.a.no_csma and (now < self.busy_until or self.rx):
            return
        if self.over_lock(now):
            return
        p = self.queue.pop(0)
        if self.a.tnc:
            dur = len(p) * 8.0 / self.a.tnc
        else:
            dur = packet_airtime(len(p), self.sf, self.bw, self.cr)
        self.tx_until = now + dur
        self.airtime.append((now, dur))
        for r in self.rx:  # half duplex: whatever we were hearing is lost
            r[2] = True
        hdr = AIR_HDR.pack(AIR_MAGIC, self.freq, self.bw, self.sf, self.cr, int(dur * 1e6), len(p))
        for port in self.a.peer:
            try:
                self.air.sendto(hdr + p, ("127.0.0.1", port))
            except OSError:
                pass
        self.stat_tx += 1
        self.say("TX %d bytes %.1f ms" % (len(p), dur * 1000))
        self.at(self.tx_until, self.tx_done)

    def tx_done(self, now):
        if not self.a.tnc:
            self.report(CMD_READY, [0x01])

    def on_air(self, sock):
        while True:
            try:
                d, _ = sock.recvfrom(70000)
            except BlockingIOError:
                return
            if len(d) < AIR_HDR.size:
                continue
            magic, f, bw, sf, cr, us, n = AIR_HDR.unpack_from(d)
            if magic != AIR_MAGIC or len(d) != AIR_HDR.size + n:
                continue
            now = time.monotonic()
            dur = us / 1e6
            self.heard.append((now, dur))
            if not self.radio_on or (f, bw, sf, cr) != (self.freq, self.bw, self.sf, self.cr):
                continue
            self.busy_until = max(self.busy_until, now + dur)
            rec = [now + dur, d[AIR_HDR.size:], now < self.tx_until]
            for r in self.rx:
                if r[0] > now:
                    r[2] = rec[2] = True
            self.rx.append(rec)
            self.at(rec[0], lambda t, rec=rec: self.rx_done(rec))

    def rx_done(self, rec):
        self.rx.remove(rec)
        if rec[2]:
            self.say("COLLISION %d bytes" % len(rec[1]))
            return
        if self.a.loss and self.rng.random() < self.a.loss:
            self.say("LOST %d bytes" % len(rec[1]))
            return
        if not self.radio_on:
            return
        self.stat_rx += 1
        if self.a.tnc:
            self.report(CMD_DATA, rec[1])
            self.say("RX %d bytes" % len(rec[1]))
            return
        rssi = -40 - self.rng.randrange(20)
        snr = 8.0 + self.rng.randrange(8) * 0.25
        self.report(CMD_STAT_RSSI, [rssi + RSSI_OFFSET])
        self.report(CMD_STAT_SNR, [int(snr * 4) & 0xFF])
        self.report(CMD_DATA, rec[1])
        self.say("RX %d bytes" % len(rec[1]))

    def stats(self, now):
        if not self.radio_on or self.a.tnc:
            return
        ats = int(self.window_share(self.airtime, now, SHORT_WINDOW) * 10000)
        atl = int(self.window_share(self.airtime, now, LONG_WINDOW) * 10000)
        cus = int(self.window_share(self.heard + self.airtime, now, SHORT_WINDOW) * 10000)
        cul = int(self.window_share(self.heard + self.airtime, now, LONG_WINDOW) * 10000)
        noise = -110
        self.report(CMD_STAT_CHTM, struct.pack("!HHHHBBB", ats, atl, cus, cul,
                                               noise + 10 + RSSI_OFFSET, noise + RSSI_OFFSET, 0xFF))
        ts = symbol_time(self.sf, self.bw)
        pre = preamble_symbols(self.sf, self.bw)
        slot = max(1, int(ts * 1000 * 2))
        self.report(CMD_STAT_PHYPRM, struct.pack("!HHHHHH", min(65535, int(ts * 1e6)),
                                                 min(65535, int(1 / ts)), pre,
                                                 int((pre + 4.25) * ts * 1000), slot, slot * 2))
        self.report(CMD_STAT_CSMA, [0, 0, 15])
        self.report(CMD_STAT_BAT, [self.a.battery_state, self.a.battery])
        self.report(CMD_STAT_TEMP, [120 + 35])

    # ---- control and timers -------------------------------------------------------
    def on_ctl(self, sock):
        d = sock.recv(65536).decode(errors="replace").split()
        if not d:
            return
        self.say("CONTROL " + " ".join(d))
        if d[0] == "unplug":
            self.unplug()
        elif d[0] == "plug":
            self.plug()
        elif d[0] == "error" and len(d) > 1:
            self.report(CMD_ERROR, [int(d[1], 0) & 0xFF])
        elif d[0] == "raw" and len(d) > 1:
            self.to_host(bytes.fromhex(d[1]))
        elif d[0] == "quit":
            self.running = False

    def at(self, t, fn):
        self.timers.append((t, fn))

    def step(self, now):
        due = [x for x in self.timers if x[0] <= now]
        if due:
            self.timers = [x for x in self.timers if x[0] > now]
            for t, fn in sorted(due, key=lambda x: x[0]):
                fn(now)
        if self.radio_on and now >= self.next_stats:
            self.next_stats = now + self.a.stats_interval
            self.stats(now)
        self.try_transmit(now)
        self.airtime = [x for x in self.airtime if x[0] + x[1] > now - LONG_WINDOW]
        self.heard = [x for x in self.heard if x[0] + x[1] > now - LONG_WINDOW]

    def run(self):
        self.plug()
        end = time.monotonic() + self.a.lifetime
        units = self.radios or [self]
        while self.running and time.monotonic() < end:
            now = time.monotonic()
            for u in units:
                u.step(now)
            wake = [now + 0.05]
            for u in units:
                wake += [x[0] for x in u.timers]
                if u.queue:
                    wake.append(now + 0.002)
            timeout = max(0.0, min(wake) - time.monotonic())
            for key, _ in self.sel.select(timeout):
                key.data(key.fileobj)
        self.unplug()


def main():
    ap = argparse.ArgumentParser(description="simulated RNode on a simulated LoRa channel")
    ap.add_argument("--link", required=True, help="symlink to create for the pty")
    ap.add_argument("--air", type=int, required=True, help="own UDP port on 127.0.0.1")
    ap.add_argument("--peer", type=int, action="append", default=[], help="peer UDP port")
    ap.add_argument("--control", help="unix datagram socket for commands")
    ap.add_argument("--rx-log", help="append every byte from the host here")
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--no-csma", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fw-major", type=int, default=1)
    ap.add_argument("--fw-minor", type=int, default=82)
    ap.add_argument("--platform", type=lambda s: int(s, 0), default=0x80)
    ap.add_argument("--mcu", type=lambda s: int(s, 0), default=0x81)
    ap.add_argument("--battery", type=int, default=87)
    ap.add_argument("--battery-state", type=int, default=1)
    ap.add_argument("--max-txpower", type=int, default=22)
    ap.add_argument("--freq-skew", type=int, default=0, help="Hz added to set frequencies")
    ap.add_argument("--tnc", type=int, default=0, metavar="BITRATE",
                    help="be a plain KISS TNC on a channel of this bit rate (AX.25 tests)")
    ap.add_argument("--mute", action="store_true", help="answer nothing (not an RNode)")
    ap.add_argument("--radios", type=int, default=0,
                    help="a multi-radio RNode with this many radios (air ports PORT..PORT+N-1)")
    ap.add_argument("--radio-types", default="",
                    help="comma-separated chip codes per radio (0x11 SX1262, 0x01 SX1276, 0x21 SX1280)")
    ap.add_argument("--stats-interval", type=float, default=1.0)
    ap.add_argument("--lifetime", type=float, default=600.0)
    a = ap.parse_args()
    sim = Sim(a)
    signal.signal(signal.SIGTERM, lambda *_: setattr(sim, "running", False))
    try:
        sim.run()
    finally:
        if a.control:
            try:
                os.unlink(a.control)
            except FileNotFoundError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
