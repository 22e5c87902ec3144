# SPDX-License-Identifier: MIT
"""
Differential check of rnsc's configuration reader against the reference's
ConfigObj (RNS/vendor/configobj.py), used while developing src/runtime/cfgfile.c (and cfg_*.c).
It is not run by `make check` (that uses the frozen cases of config_cases.txt).

  .venv/bin/python tests/data/config_diff.py ./tests/xcheck/config_test [CASES] [SEED]

Generates CASES random configuration files (default 3000) from an alphabet full
of the characters ConfigObj's regular expressions care about, parses each with
ConfigObj and with `config_test --dump`, and prints every disagreement.
"""
import os
import random
import subprocess
import sys
import tempfile

from RNS.vendor import configobj

ERRNAME = {
    "DuplicateError": "RNSC_ERR_CONFIG_DUP",
    "NestingError": "RNSC_ERR_CONFIG_SYNTAX",
    "ParseError": "RNSC_ERR_CONFIG_SYNTAX",
}


def esc(s):
    b = s.encode("utf-8")
    if not b:
        return "%"
    return "".join(chr(c) if 0x20 < c < 0x7F and c not in (0x25, 0x2F) else "%%%02X" % c for c in b)


def dump_section(sec, path, out):
    for k in sec.scalars:
        try:
            v = sec[k]
        except (configobj.InterpolationError, TypeError, AttributeError, RecursionError):
            # An AttributeError inside ConfigObj's _fetch (a scalar named DEFAULT) leaves
            # interpolation switched off for the whole file. Reticulum aborts on the first
            # such error, so later reads never happen there; restore it so each value is
            # judged on its own, as rnsc does.
            sec.main.interpolation = True
            out.append("I %s %s" % (path, esc(k)))
            continue
        if isinstance(v, list):
            out.append("L %s %s %d%s" % (path, esc(k), len(v), "".join(" " + esc(x) for x in v)))
        else:
            out.append("V %s %s %s" % (path, esc(k), esc(v)))
    for k in sec.sections:
        p = ("" if path == "/" else path) + "/" + esc(k)
        out.append("S " + p)
        dump_section(sec[k], p, out)


def reference_dump(data):
    """The canonical dump of what ConfigObj (as Reticulum calls it) makes of data."""
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines = lines[:-1]
    for i, l in enumerate(lines):
        try:
            (l[3:] if i == 0 and l.startswith(b"\xef\xbb\xbf") else l).decode("utf-8")
        except UnicodeDecodeError:
            return ["E RNSC_ERR_MALFORMED %d" % (i + 1)]
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(data)
        name = f.name
    try:
        try:
            c = configobj.ConfigObj(name)
        except configobj.ConfigObjError as e:
            first = e.errors[0]
            return ["E %s %d" % (ERRNAME[type(first).__name__], first.line_number)]
    finally:
        os.unlink(name)
    out = []
    dump_section(c, "/", out)
    return out


PIECES = [
    "[", "]", "[[", "]]", "[[[", "]]]", '"', "'", '"""', "'''", ",", ", ", " ,", "#", " # c",
    "=", " = ", "  ", "\t", "\r", "\x0b", "\x1c", "\u00a0", "\u3000", "\u0085", "a", "b", "key",
    "val", "x y", "%(a)s", "%(b)s", "%(DEFAULT)s", "%(", ")s", "DEFAULT", "1", "yes", "\u00e9",
    "\u0663", "\\", ";", "$",
]


def rand_line(r):
    kind = r.random()
    if kind < 0.25:
        d = r.choice([1, 1, 2, 2, 3, 4])
        name = "".join(r.choice(PIECES[:20] + ["sec", "a", "b", " "]) for _ in range(r.randint(0, 3))) or "s"
        if r.random() < 0.6:
            name = r.choice(["a", "b", "sec", "DEFAULT", "x y", '"q"', "'q'", " s ", "a#b"])
        close = d if r.random() < 0.85 else r.choice([1, 2, 3])
        return "%s%s%s%s%s" % (" " * r.randint(0, 3), "[" * d, name, "]" * close,
                                r.choice(["", "", " # c", "#", " x"]))
    if kind < 0.75:
        key = r.choice(["a", "b", "c", "key", "DEFAULT", '"q k"', "'q'", "x y", "", '"', "a'"])
        val = "".join(r.choice(PIECES) for _ in range(r.randint(0, 6)))
        if r.random() < 0.3:
            val = ", ".join(r.choice(["a", '"b, c"', "'d'", "", " ", "%(a)s", "e # f"]) for _ in range(r.randint(1, 4)))
            if r.random() < 0.3:
                val += ","
        sep = r.choice([" = ", "=", " =", "= ", " \t= "])
        return "%s%s%s%s" % (" " * r.randint(0, 2), key, sep, val)
    if kind < 0.85:
        return r.choice(["", "# comment", "   # c", "   ", "'''", '"""', "x'''", 'y""" # c'])
    return "".join(r.choice(PIECES) for _ in range(r.randint(1, 8)))


def rand_value(r):
    if r.random() < 0.4:
        items = [r.choice(["a", '"b, c"', "'d'", "", " ", "%(a)s", "e # f", '"', "'", '""', "x'y",
                           '"p" q', " \t", "#", "%(b)s"]) for _ in range(r.randint(1, 4))]
        v = r.choice([", ", ",", " ,", " , "]).join(items)
        return v + r.choice(["", "", ",", ", ", " # c", "#", "  "])
    return "".join(r.choice(PIECES) for _ in range(r.randint(0, 6)))


def valid_block(r, depth_names):
    """A few well-formed lines: sections at legal depths and simple options."""
    out = []
    for _ in range(r.randint(1, 4)):
        if r.random() < 0.3:
            d = r.randint(1, min(len(depth_names) + 1, 3))
            del depth_names[d - 1:]
            name = r.choice(["a", "b", "c", "DEFAULT", "sec", "x y"]) + str(r.randint(0, 3))
            depth_names.append(name)
            out.append("  " * (d - 1) + "[" * d + name + "]" * d)
        else:
            k = r.choice(["a", "b", "c", "k", "DEFAULT"])
            v = r.choice(["1", "yes", "x y", "%(a)s", "%(b)s!", "a, b", "'q'", "%(c)s"])
            out.append("%s = %s" % (k, v))
    return out


def rand_config(r):
    mode = r.random()
    if mode < 0.45:
        lines = ["[s]", rand_line(r)]
    elif mode < 0.6:
        lines = ["[s]", "%s%s%s" % (r.choice(["a", '"k k"', "'k'", " x", "a b"]),
                                    r.choice([" = ", "=", " =\t"]), rand_value(r))]
    elif mode < 0.85:
        names = []
        lines = []
        for _ in range(r.randint(1, 4)):
            lines += valid_block(r, names)
            if r.random() < 0.4:
                lines.append(rand_line(r))
    else:
        lines = [rand_line(r) for _ in range(r.randint(1, 12))]
    text = "\n".join(lines)
    if r.random() < 0.8:
        text += "\n"
    data = text.encode("utf-8")
    if r.random() < 0.05:
        data = b"\xef\xbb\xbf" + data
    if r.random() < 0.03:
        i = r.randrange(len(data) + 1)
        data = data[:i] + bytes([r.choice([0x80, 0xC3, 0xED, 0xFF])]) + data[i:]
    return data


def main():
    exe = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    r = random.Random(seed)
    d = tempfile.mkdtemp()
    cases = []
    for i in range(n):
        data = rand_config(r)
        if b"\x00" in data:
            continue
        p = os.path.join(d, "c%05d" % i)
        with open(p, "wb") as f:
            f.write(data)
        cases.append((p, data))
    out = subprocess.run([exe, "--dump"] + [p for p, _ in cases], capture_output=True, check=True).stdout
    got = {}
    cur = None
    for line in out.decode("utf-8").split("\n"):
        if line.startswith("=== "):
            cur = line[4:]
            got[cur] = []
        elif line:
            got[cur].append(line)
    bad = 0
    for p, data in cases:
        want = reference_dump(data)
        if got.get(p) != want:
            bad += 1
            if bad <= 10:
                print("MISMATCH", p, repr(data))
                print("  reference:", want)
                print("  rnsc     :", got.get(p))
    print("%d cases, %d mismatches" % (len(cases), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
