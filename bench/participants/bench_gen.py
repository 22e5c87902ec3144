# SPDX-License-Identifier: MIT
"""Deterministic generators of the benchmark scenarios, mirrored in C by
bench/scenario/bench_gen.h (tests/unit/bench_gen_test.c checks both against the same golden
values).

Sizes: xorshift64 (shifts 13, 7, 17) from seed 6840346605343539201; each draw advances the
state, then size = lo + state mod (hi - lo + 1).
Payload: an incompressible byte stream, xorshift64 from seed 0x9E3779B97F4A7C15; each step
advances the state and appends its 8 bytes little-endian.
"""

MASK = (1 << 64) - 1
SIZE_SEED = 6840346605343539201
PAYLOAD_SEED = 0x9E3779B97F4A7C15


def xorshift64(x):
    x ^= (x << 13) & MASK
    x ^= x >> 7
    x ^= (x << 17) & MASK
    return x


class Sizes:
    def __init__(self, lo, hi, seed=SIZE_SEED):
        if not 0 < lo <= hi:
            raise ValueError("bad size range")
        self.lo, self.span, self.state = lo, hi - lo + 1, seed

    def next(self):
        self.state = xorshift64(self.state)
        return self.lo + self.state % self.span


class Payload:
    def __init__(self, seed=PAYLOAD_SEED):
        self.state = seed
        self.buf = b""

    def take(self, n):
        while len(self.buf) < n:
            chunk = bytearray()
            for _ in range(64):
                self.state = xorshift64(self.state)
                chunk += self.state.to_bytes(8, "little")
            self.buf += bytes(chunk)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


def payload_chunks(n, chunk=1 << 20, seed=PAYLOAD_SEED):
    """The first n bytes of the payload stream as successive bytes objects of chunk bytes
    (a multiple of 8; the last may be shorter), so that 64 MiB never sit in memory at once
    and Payload.take's per-call cost is avoided."""
    import array
    import sys
    if chunk % 8:
        raise ValueError("chunk must be a multiple of 8")
    x = seed
    left = n
    while left > 0:
        take = min(chunk, left)
        words = array.array("Q")
        app = words.append
        for _ in range((take + 7) // 8):
            x ^= (x << 13) & MASK
            x ^= x >> 7
            x ^= (x << 17) & MASK
            app(x)
        if sys.byteorder != "little":
            words.byteswap()
        yield words.tobytes()[:take]
        left -= take


def payload_prefix(n):
    """The first n bytes of the payload stream in one bytes object."""
    return b"".join(payload_chunks(n))
