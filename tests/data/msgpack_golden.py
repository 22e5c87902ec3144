# SPDX-License-Identifier: MIT
# Generates tests/data/msgpack_golden.txt from the reference's vendored umsgpack.
# Run with the interpreter of the venv holding the pinned rns:
#   /tmp/v/bin/python tests/data/msgpack_golden.py > tests/data/msgpack_golden.txt
# Every byte in the output comes from umsgpack.packb() (encode vectors) or is
# checked against umsgpack.unpackb() (decode and error vectors).
import math
import struct
import sys

import RNS
from RNS.vendor import umsgpack


def rle(b):
    """Hex with runs of 8+ equal bytes written as HH*N, segments joined by '+'."""
    if not b:
        return "-"
    segs, lit, i = [], "", 0
    while i < len(b):
        j = i
        while j < len(b) and b[j] == b[i]:
            j += 1
        if j - i >= 8:
            if lit:
                segs.append(lit)
                lit = ""
            segs.append("%02x*%d" % (b[i], j - i))
        else:
            lit += b[i:j].hex()
        i = j
    if lit:
        segs.append(lit)
    return "+".join(segs)


def tokens(v, single=False):
    if v is None:
        yield "nil"
    elif isinstance(v, bool):
        yield "bool %d" % int(v)
    elif isinstance(v, int):
        yield "int %d" % v
    elif isinstance(v, float):
        if single:
            yield "f32 " + struct.pack(">f", v).hex()
        else:
            yield "f64 " + struct.pack(">d", v).hex()
    elif isinstance(v, str):
        yield "str " + rle(v.encode("utf-8"))
    elif isinstance(v, (bytes, bytearray)):
        yield "bin " + rle(bytes(v))
    elif isinstance(v, (list, tuple)):
        yield "array %d" % len(v)
        for e in v:
            yield from tokens(e, single)
    elif isinstance(v, dict):
        yield "map %d" % len(v)
        for k, e in v.items():
            yield from tokens(k, single)
            yield from tokens(e, single)
    elif isinstance(v, umsgpack.Ext):
        yield "ext %d %s" % (v.type, rle(v.data))
    else:
        raise TypeError(type(v))


def token_lines(v, single=False):
    """Consecutive identical tokens collapse into 'tok xN'."""
    out, prev, n = [], None, 0
    for t in tokens(v, single):
        if t == prev:
            n += 1
            continue
        if prev is not None:
            out.append(prev if n == 1 else "%s x%d" % (prev, n))
        prev, n = t, 1
    if prev is not None:
        out.append(prev if n == 1 else "%s x%d" % (prev, n))
    return out


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a.items(), b.items()))
    return a == b and type(a) == type(b)


def stanza(name, direction, toks, data, result=None, ref=None):
    print("Name = " + name)
    print("Dir = " + direction)
    if ref:
        print("Ref = " + ref)
    for t in toks:
        print("Token = " + t)
    print("Hex = " + rle(data))
    if result:
        print("Result = " + result)
    print()


def enc(name, v, single=False):
    opts = {"force_float_precision": "single"} if single else {}
    data = umsgpack.packb(v, **opts)
    back = umsgpack.unpackb(data)
    if single:
        assert isinstance(back, float)
        v = struct.unpack(">f", struct.pack(">f", v))[0]
    assert same(v, back) or isinstance(v, tuple), (name, v, back)
    stanza(name, "both", token_lines(v, single), data)


def dec(name, hexdata, single=False):
    """Input umsgpack never emits but decodes; the tokens are what it returns."""
    data = bytes.fromhex(hexdata)
    v = umsgpack.unpackb(data)
    stanza(name, "decode", token_lines(v, single), data)


def err(name, hexdata, result):
    data = bytes.fromhex(hexdata)
    try:
        v = umsgpack.unpackb(data)
    except Exception as e:  # the reference rejects it; record which way
        stanza(name, "error", [], data, result, ref="umsgpack raises " + type(e).__name__)
        return
    raise AssertionError("umsgpack accepted %s: %r" % (name, v))


print("# SPDX-License-Identifier: MIT")
print("# MessagePack golden vectors produced by the reference: rns %s, vendored umsgpack %s"
      % (RNS.__version__ if hasattr(RNS, "__version__") else "?", umsgpack.__version__))
print("# Python %s" % sys.version.split()[0])
print("# Command: /tmp/v/bin/python tests/data/msgpack_golden.py > tests/data/msgpack_golden.txt")
print("# Format: stanzas separated by blank lines. Hex and str/bin/ext payloads are hex,")
print("# with runs written HH*N and segments joined by '+', '-' for empty. 'Token = T xN'")
print("# repeats a token N times. Dir: both = packb(value) gave Hex and unpackb(Hex) gives")
print("# the tokens; decode = non-canonical input umsgpack decodes to the tokens;")
print("# error = umsgpack.unpackb(Hex) raises (Ref names the exception); Result is the")
print("# rnsc error expected.")
print()

enc("nil", None)
enc("false", False)
enc("true", True)
for v in [0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]:
    enc("uint_%d" % v, v)
for v in [-1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63]:
    enc("int_m%d" % -v, v)
for n, v in [("0", 0.0), ("m0", -0.0), ("1.5", 1.5), ("m2.25", -2.25), ("1e300", 1e300),
             ("0.1", 0.1), ("denorm", 5e-324), ("inf", float("inf")), ("minf", float("-inf")),
             ("nan", float("nan")), ("time", 1700000000.123456)]:
    enc("f64_" + n, v)
for n, v in [("1.5", 1.5), ("m2.25", -2.25), ("0.1", 0.1), ("inf", float("inf")), ("nan", float("nan"))]:
    enc("f32_" + n, v, single=True)
for n in [0, 1, 31, 32, 255, 256, 65535, 65536]:
    enc("str_%d" % n, "a" * n)
enc("str_utf8", "h\u00e9llo \u20ac \U0001d11e")
enc("str_nul", "a\x00b")
enc("str_max_cp", "\U0010ffff")
for n in [0, 1, 31, 32, 255, 256, 65535, 65536]:
    enc("bin_%d" % n, bytes([0x5a]) * n)
enc("bin_allbytes", bytes(range(256)))
enc("array_0", [])
enc("array_3", [1, 2, 3])
enc("array_15", [None] * 15)
enc("array_16", [None] * 16)
enc("array_65535", [None] * 65535)
enc("array_65536", [None] * 65536)
enc("map_0", {})
enc("map_1", {"a": 1})
enc("map_15", {i: i for i in range(15)})
enc("map_16", {i: -i for i in range(16)})
enc("map_300", {i: None for i in range(300)})
enc("nested", [1, [2, [3, {}]], {"a": [True, None]}, b"\x01\x02", -1.5])
enc("nested_map", {"k": b"\x01", "n": {"x": -1.5, "y": [None, False]}, 7: "seven"})
enc("map_tuple_key", {(1, 2): 3})
enc("map_bytes_key", {b"\x00\xff": "v"})
v = []
for _ in range(31):
    v = [v]
enc("depth_32", v)
enc("rns_like_adv", {"t": 123456, "d": 7890, "n": 3, "h": bytes(range(32)), "r": bytes(4),
                     "o": bytes(32), "i": 1, "l": 1, "q": None, "f": 0x01, "m": bytes([0xaa]) * 10})
enc("rns_like_req", [1700000000.5, bytes([0x11]) * 16, None])
enc("ext_1", umsgpack.Ext(1, b"\x01"))
enc("ext_2", umsgpack.Ext(2, b"\x01\x02"))
enc("ext_4", umsgpack.Ext(-2, b"\x01\x02\x03\x04"))
enc("ext_8", umsgpack.Ext(127, bytes(8)))
enc("ext_16", umsgpack.Ext(-128, bytes(range(16))))
enc("ext_0", umsgpack.Ext(5, b""))
enc("ext_3", umsgpack.Ext(5, b"abc"))
enc("ext_256", umsgpack.Ext(5, bytes([0x33]) * 256))
enc("ext_65536", umsgpack.Ext(5, bytes([0x44]) * 65536))

dec("dec_int8_pos", "d005")
dec("dec_int64_m1", "d3ffffffffffffffff")
dec("dec_int64_max", "d37fffffffffffffff")
dec("dec_uint8_small", "cc05")
dec("dec_uint64_small", "cf0000000000000001")
dec("dec_str8_short", "d903616263")
dec("dec_str16_short", "da0001" + "61")
dec("dec_bin16_short", "c50001ff")
dec("dec_array16_short", "dc000101")
dec("dec_map32_short", "df000000010102")
dec("dec_trailing", "01ff")
dec("dec_f32", "ca3fc00000", single=True)

err("err_empty", "", "RNSC_ERR_TRUNCATED")
err("err_reserved", "c1", "RNSC_ERR_MALFORMED")
err("err_reserved_nested", "9201c1", "RNSC_ERR_MALFORMED")
err("err_utf8_bad_cont", "a2c328", "RNSC_ERR_MALFORMED")
err("err_utf8_overlong", "a2c080", "RNSC_ERR_MALFORMED")
err("err_utf8_overlong3", "a3e08080", "RNSC_ERR_MALFORMED")
err("err_utf8_surrogate", "a3eda080", "RNSC_ERR_MALFORMED")
err("err_utf8_too_high", "a4f4908080", "RNSC_ERR_MALFORMED")
err("err_utf8_f5", "a4f5808080", "RNSC_ERR_MALFORMED")
err("err_utf8_cut", "a2e282", "RNSC_ERR_MALFORMED")
err("err_utf8_lone_cont", "a180", "RNSC_ERR_MALFORMED")
err("err_str8_cut", "d90561", "RNSC_ERR_TRUNCATED")
err("err_bin32_huge", "c6ffffffff00", "RNSC_ERR_TRUNCATED")
err("err_array32_huge", "ddffffffff", "RNSC_ERR_TRUNCATED")
err("err_map16_short", "de0002010203", "RNSC_ERR_TRUNCATED")
err("err_array_short", "930102", "RNSC_ERR_TRUNCATED")
err("err_uint64_cut", "cf00000000", "RNSC_ERR_TRUNCATED")
err("err_f64_cut", "cb3ff8", "RNSC_ERR_TRUNCATED")
err("err_ext_no_type", "d4", "RNSC_ERR_TRUNCATED")
err("err_ext8_cut", "c70305aa", "RNSC_ERR_TRUNCATED")
