# SPDX-License-Identifier: MIT
"""
Generates tests/data/config_cases.txt, the expected values tests/xcheck/config_test.c
checks rnsc's configuration reader against. Every expectation comes from the
pinned reference itself; nothing here decides an answer:

  - "case" blocks: ConfigObj from RNS/vendor/configobj.py, called as Reticulum.py
    calls it (ConfigObj(path), default options), dumps the parsed tree or the
    first parse error. Inputs are hand-written corner cases plus the reference's
    own default configuration and `rnsd --exampleconfig` text, with every comment
    line replaced by a placeholder (the structure, keys and values are kept; the
    reference's prose is not copied). The script checks that the placeholders do
    not change what ConfigObj parses.
  - "conv" lines: Python's int() and float() and ConfigObj's as_bool().
  - "settings" blocks: the reference's Reticulum.__init__ run for real on the
    configuration in a scratch folder, with only the networking stubbed out
    (local interface, Transport.start, known destinations, ratchet cleanup), and
    its resulting attributes read back.
  - "ifaces" blocks: Reticulum._synthesize_interface on each [[subsection]] of a
    configuration whose interface types do not exist, read back from its log
    ("Skipping disabled interface" or "Could not locate external interface
    module"), or an abort.

Run with the venv holding the pinned rns, from the top of the tree:
  .venv/bin/python tests/data/config_cases.py > tests/data/config_cases.txt
"""
import atexit
import importlib.metadata
import math
import os
import re
import sys
import tempfile

import RNS
from RNS.vendor import configobj

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from config_diff import reference_dump  # noqa: E402

OUT = []


def emit(line):
    OUT.append(line)


def esc_in(line):
    """An input line: readable, with %, control, non-ASCII and trailing blanks escaped."""
    b = line
    body = b.rstrip(b" ")
    tail = len(b) - len(body)
    s = "".join(chr(c) if 0x20 <= c < 0x7F and c != 0x25 else "%%%02X" % c for c in body)
    return s + "%20" * tail


def esc_tok(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    if not b:
        return "%"
    return "".join(chr(c) if 0x20 < c < 0x7F and c not in (0x25, 0x2F) else "%%%02X" % c for c in b)


def emit_input(data):
    lines = data.split(b"\n")
    noeol = not data.endswith(b"\n")
    if not noeol:
        lines = lines[:-1]
    for l in lines:
        emit("in " + esc_in(l))
    if noeol and data:
        emit("noeol")


def placeholder_comments(text):
    """Replaces the text of every full-line comment, keeping its indentation."""
    out = []
    for line in text.split("\n"):
        s = line.lstrip()
        if s.startswith("#"):
            line = line[: len(line) - len(s)] + "# (comment)"
        out.append(line)
    return "\n".join(out)


def reference_text(module, name):
    src = open(module.__file__, encoding="utf-8").read()
    m = re.search(name + r" = '''(.*?)'''", src, re.S)
    return m.group(1)


# ---- grammar cases ------------------------------------------------------------------------

CASES = [
    ("empty", b""),
    ("only-comments", b"# a\n   # b\n\n"),
    ("basic", b"[reticulum]\nenable_transport = False\nshare_instance = Yes\n[logging]\nloglevel = 4\n"),
    ("nesting", b"[a]\nx = 1\n  [[b]]\n  y = 2\n    [[[c]]]\n    z = 3\n  [[d]]\n[e]\nw = 4\n"),
    ("indent-is-ignored", b"[a]\n        [[b]]\nk = v\n[c]\n"),
    ("top-level-options", b"k = v\nj = w\n[a]\n"),
    ("quoted-keys-values", b"[s]\n\"a key\" = \"a value\"\n'k2' = 'v2'\nk3 = \"it's\"\nk4 = 'say \"hi\"'\n"),
    ("quoted-section-names", b"[\"a b\"]\n['c d']\n[ e ]\n"),
    ("lists", b"[s]\na = 1, 2, 3\nb = x,\nc = ,\nd = \"p, q\", r\ne = 'x' , \"y\" ,\nf = a,b,c\n"),
    ("empty-values", b"[s]\na =\nb = \"\"\nc = ''\nd = \"\", x\n"),
    ("comments-in-values", b"[s]\na = x # c\nb = \"x # y\" # c\nc = a#b\nd = 1, 2 # c\ne = #\n"),
    ("multiline", b"[s]\na = '''one\n  two\n# not a comment\nthree''' # c\nb = \"\"\"x\"\"\"\nc = '''\n'''\nd = 1\n"),
    ("multiline-unterminated", b"[s]\na = '''one\ntwo\n"),
    ("multiline-junk-after", b"[s]\na = '''x''' y\n"),
    ("multiline-close-junk", b"[s]\na = '''x\ny''' z\n"),
    ("dup-key", b"[s]\na = 1\nb = 2\na = 3\n"),
    ("dup-section", b"[s]\n[[x]]\n[[y]]\n[[x]]\n"),
    ("dup-top-section", b"[s]\n[t]\n[s]\n"),
    ("dup-key-vs-section", b"[s]\nx = 1\n[[x]]\n"),
    ("dup-section-vs-key", b"[s]\n[[x]]\n[s2]\n[[x]]\nk = 1\n"),
    ("dup-after-multiline", b"[s]\na = 1\na = '''x\ny'''\n"),
    ("dup-same-name-elsewhere-ok", b"[a]\nk = 1\n[[x]]\nk = 2\n[b]\n[[x]]\nk = 3\n"),
    ("depth-mismatch", b"[a]\n[[b]\n"),
    ("too-nested-top", b"[[a]]\n"),
    ("too-nested", b"[a]\n[[[b]]]\n"),
    ("invalid-line", b"[a]\njust some words\n"),
    ("bad-value", b"[a]\nk = \"x\" y\n"),
    ("bad-list", b"[a]\nk = a, , b\n"),
    ("bad-quote", b"[a]\nk = \"abc\n"),
    ("leading-blank-equals", b"[a]\n  = v\n"),
    ("no-key", b"[a]\n= v\n"),
    ("section-odd-names", b"[]]\n[[ ]]\n"),
    ("section-hash-name", b"[a # b]\n[c] # comment\n"),
    ("section-then-junk", b"[a] b = c\n"),
    ("crlf", b"[a]\r\nk = v\r\nj = 1, 2\r\n"),
    ("cr-runs", b"[a]\r\r\nk = v\r\r\r\n"),
    ("no-final-newline", b"[a]\nk = v"),
    ("bom", b"\xef\xbb\xbf[a]\nk = v\n"),
    ("unicode-blanks", "[a]\nk\u00a0=\u3000v\u2003\nj = \u0085w\x0b\n\u3000[[b]]\u2028\n".encode()),
    ("unicode-text", "[\u00e9t\u00e9]\ncl\u00e9 = val\u00e8ur, \u2603\n".encode()),
    ("bad-utf8", b"[a]\nk = v\nj = \xc3\x28\n"),
    ("bad-utf8-surrogate", b"[a]\nk = \xed\xa0\x80\n"),
    ("interp-basic", b"[a]\nhost = example.org\nurl = http://%(host)s:%(port)s/\nport = 80\n"),
    ("interp-parent", b"top = T\n[a]\nk = %(top)s\n[[b]]\nj = %(k)s-%(top)s\n"),
    ("interp-default", b"[a]\nk = %(d)s\n[[DEFAULT]]\nd = from-default\n"),
    ("interp-default-parent", b"[DEFAULT]\nd = D\n[a]\n[[b]]\nk = %(d)s\n"),
    ("interp-missing", b"[a]\nk = %(nope)s\nok = 100%\n"),
    ("interp-loop", b"[a]\nx = %(y)s\ny = %(x)s\nz = %(z)s\n"),
    ("interp-list-ref", b"[a]\nl = 1, 2\nk = %(l)s\nm = %(k)s, %(l)s\n"),
    ("interp-in-list", b"[a]\nh = H\nl = %(h)s, x%(h)sx, y\n"),
    ("interp-nested", b"[a]\na = A\nb = %(a)s%(a)s\nc = [%(b)s]\n"),
    ("interp-not-a-ref", b"[a]\nk = %(x) s %x %()s %(a\n"),
    ("interp-empty-name", b"[a]\nk = %()s\n\"\" = E\n"),
    ("interp-scalar-default", b"DEFAULT = x\n[a]\nk = %(nope)s\nj = 1\n"),
    ("interface-shapes", b"[interfaces]\n  [[TCP Server]]\n    type = TCPServerInterface\n    enabled = yes\n    listen_ip = 0.0.0.0\n    listen_port = 4242\n  [[Off]]\n    type = UDPInterface\n    interface_enabled = False\n"),
]


def grammar_cases():
    default = reference_text(sys.modules["RNS.Reticulum"], "__default_rns_config__")
    import RNS.Utilities.rnsd as rnsd
    example = reference_text(rnsd, "__example_rns_config__")
    cases = list(CASES)
    for name, text in (("reference-default", default), ("reference-example", example)):
        ph = placeholder_comments(text).encode("utf-8")
        assert reference_dump(ph) == reference_dump(text.encode("utf-8")), name
        cases.append((name, ph))
    for name, data in cases:
        emit("case " + name)
        emit_input(data)
        for line in reference_dump(data):
            emit("out " + line)
        emit("end")


# ---- conversions ----------------------------------------------------------------------------

CONV = [
    "yes", "YES", "No", "on", "OFF", "1", "0", "true", "False", "TrUe", "y", "2", "", " yes",
    "enabled", "\uff59\uff45\uff53", "0", "-0", "+5", " 12 ", "1_000", "1__000", "_1", "1_", "0x10",
    "1.0", "\u0663", "\u0663\u0664", "12\u3000", "\u3000-7", "007", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "99999999999999999999", " ", "+", "-", "1e3", "\x1c5", "5\x1c", "\t5\n", "- 5", "+-5",
    "1.5", " 2.5 ", "1E-3", ".5", "5.", "1_0.5", "1_.5", "1._5", "1e1_0", "inf", "-Infinity",
    "nan", "NaN", "+inf", "in", "1e", "e1", ".", "0x1p3", "1e400", "-1e400", "1e-400",
    "\u0663.\u0665", "1.2.3", "1 2", "infinity ", "-nan", "1e+5", "1e-", "\u00bd", "\u2155",
    "\u00b2", "1\u00a0", "4.9e-324", "0.1", "123456789012345678901234567890",
]


def conv_cases():
    c = configobj.ConfigObj()
    for s in CONV:
        c["k"] = s
        try:
            b = "1" if c.as_bool("k") else "0"
        except ValueError:
            b = "E"
        try:
            v = int(s)
            i = str(v) if -(2**63) <= v < 2**63 else "R"
        except ValueError:
            i = "E"
        try:
            v = float(s)
            f = "nan" if math.isnan(v) else v.hex()
        except ValueError:
            f = "E"
        emit("conv %s %s %s %s" % (esc_tok(s), b, i, f))


# ---- the reference's own startup ---------------------------------------------------------

class Abort(Exception):
    pass


def stub_reference():
    R = RNS.Reticulum
    R._Reticulum__start_local_interface = lambda self: None
    RNS.Transport.start = lambda *a, **k: None
    RNS.Identity.load_known_destinations = lambda *a, **k: None
    RNS.Identity._clean_ratchets = lambda *a, **k: None
    atexit.register = lambda *a, **k: None

    def panic():
        raise Abort("panic")

    RNS.panic = panic
    ident = RNS.Identity()
    RNS.Transport.internal_identity = staticmethod(lambda: ident)
    return RNS.Identity.full_hash(ident.get_private_key())


LOG = []


def start_reference(text):
    R = RNS.Reticulum
    d = tempfile.mkdtemp()
    with open(d + "/config", "w", encoding="utf-8") as f:
        f.write(text)
    R._Reticulum__instance = None
    if hasattr(R, "_force_shared_instance_bitrate"):
        del R._force_shared_instance_bitrate
    RNS.Transport.remote_management_allowed = []
    RNS.loglevel = RNS.LOG_NOTICE
    RNS.logtimestamps = True
    LOG.clear()
    r = R(configdir=d, logdest=lambda m: LOG.append(m))
    return r


def canon(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v.hex()
    if isinstance(v, (bytes, bytearray)):
        return v.hex() or "%"
    if isinstance(v, list):
        return ",".join(h.hex() for h in v) or "-"
    return esc_tok(v)


SETTINGS = [
    ("defaults", "", None),
    ("reference-default", None, None),
    ("common", "[reticulum]\nenable_transport = Yes\nshare_instance = No\nshared_instance_port = 4000\n"
     "instance_control_port = 4001\ninstance_name = other\npanic_on_interface_error = on\n"
     "use_implicit_proof = false\n[logging]\nloglevel = 7\nlogtimestamps = no\n", None),
    ("tcp-instance", "[reticulum]\nshared_instance_type = TCP\ninstance_name = x\n", None),
    ("unix-instance", "[reticulum]\nshared_instance_type = Unix\n", None),
    ("odd-instance-type", "[reticulum]\nshared_instance_type = pipe\n", None),
    ("loglevel-clamp-high", "[logging]\nloglevel = 12\n", None),
    ("loglevel-clamp-low", "[logging]\nloglevel = -3\n", None),
    ("rpc-key", "[reticulum]\nrpc_key = 00ff AA10\n", None),
    ("rpc-key-bad", "[reticulum]\nrpc_key = xyz\n", None),
    ("rpc-key-empty", "[reticulum]\nrpc_key =\n", None),
    ("numbers", "[reticulum]\ndefault_gravity = -2\nrequired_discovery_value = 0\n"
     "blackhole_update_interval = 1.5\nautoconnect_discovered_interfaces = 3\n"
     "autoconnect_interface_mode = AP\nautoconnect_interface_gravity = 5\n"
     "autoconnect_announces_to_internal = no\ndefault_ar_target = 0\ndefault_ar_penalty = -1\n"
     "default_ar_grace = 0\nic_max_held_announces = 10\nic_burst_hold = 1.5\n"
     "ic_burst_freq_new = -1\nic_burst_freq = 2\nic_pr_burst_freq_new = 3\nic_pr_burst_freq = 4\n"
     "ec_pr_freq = 0\negress_control = no\nic_new_time = 7e3\nic_burst_penalty = 9\n"
     "ic_held_release_interval = 1\nqlen_in_data = 0\nqlen_in_announce = 64\nqlen_in_pr = -1\n"
     "qlen_in_il = 5\nforce_shared_instance_bitrate = 1000\n", None),
    ("numbers-2", "[reticulum]\nrequired_discovery_value = 12\nblackhole_update_interval = 30\n"
     "autoconnect_interface_mode = bogus\nautoconnect_announces_to_internal = yes\n"
     "default_ar_target = 100\negress_control = 1\nautoconnect_discovered_interfaces = -1\n", None),
    ("bools", "[reticulum]\nstatic_transport_identity = yes\nlocal_hops_delta = true\n"
     "link_mtu_discovery = off\nenable_remote_management = 1\nrespond_to_probes = ON\n"
     "discover_interfaces = yes\npublish_blackhole = True\n", None),
    ("hashes", "[reticulum]\nremote_management_allowed = 00112233445566778899aabbccddeeff, "
     "00112233445566778899AABBCCDDEEFF, ffeeddccbbaa99887766554433221100\n"
     "blackhole_sources = 521c87a83afb8f29e4455e77930b973b\ninterface_discovery_sources = ,\n", None),
    ("interp", "[reticulum]\nport = 4100\nshared_instance_port = %(port)s\n"
     "instance_control_port = 4101\n", None),
    ("unknown-options-ignored", "[reticulum]\nno_such_option = whatever\n[logging]\nnope = 1\n", None),
    ("bad-bool", "[reticulum]\nshare_instance = maybe\n", "share_instance"),
    ("bad-int", "[reticulum]\nshared_instance_port = abc\n", "shared_instance_port"),
    ("bad-loglevel", "[logging]\nloglevel = 4.5\n", "loglevel"),
    ("bad-float", "[reticulum]\nic_burst_hold = fast\n", "ic_burst_hold"),
    ("bad-list-for-int", "[reticulum]\nshared_instance_port = 1, 2\n", "shared_instance_port"),
    ("bad-hash-length", "[reticulum]\nblackhole_sources = 521c87a8\n", "blackhole_sources"),
    ("bad-hash-hex", "[reticulum]\nremote_management_allowed = 00112233445566778899aabbccddeeXX\n",
     "remote_management_allowed"),
    ("bad-interp-unused-option", "[reticulum]\nsomething = %(missing)s\n", "something"),
    ("first-error-wins", "[reticulum]\nshare_instance = maybe\nshared_instance_port = abc\n",
     "share_instance"),
    ("logging-before-reticulum", "[reticulum]\nshare_instance = maybe\n[logging]\nloglevel = x\n",
     "loglevel"),
]


def reference_settings(r):
    R = RNS.Reticulum
    P = lambda n: getattr(R, "_Reticulum__" + n)  # noqa: E731
    rpc = r.rpc_key
    return [
        ("loglevel", RNS.loglevel),
        ("logtimestamps", RNS.logtimestamps),
        ("enable_transport", R.transport_enabled()),
        ("share_instance", r.share_instance),
        ("shared_instance_port", r.local_interface_port),
        ("instance_control_port", r.local_control_port),
        ("shared_instance_type", r.shared_instance_type),
        ("shared_instance_unix", r.use_af_unix),
        ("local_socket_path", r.local_socket_path),
        ("rpc_key", None if rpc == DERIVED_KEY else rpc),
        ("static_transport_identity", R.static_transport_identity()),
        ("local_hops_delta", R.local_hops_delta()),
        ("link_mtu_discovery", R.link_mtu_discovery()),
        ("enable_remote_management", R.remote_management_enabled()),
        ("remote_management_allowed", list(RNS.Transport.remote_management_allowed)),
        ("respond_to_probes", R.probe_destination_enabled()),
        ("force_shared_instance_bitrate", getattr(R, "_force_shared_instance_bitrate", None)),
        ("panic_on_interface_error", R.panic_on_interface_error),
        ("use_implicit_proof", R.should_use_implicit_proof()),
        ("default_gravity", P("default_gravity")),
        ("discover_interfaces", P("discover_interfaces")),
        ("required_discovery_value", R.required_discovery_value()),
        ("publish_blackhole", R.publish_blackhole_enabled()),
        ("blackhole_sources", list(R.blackhole_sources())),
        ("blackhole_update_interval", float(R.blackhole_update_interval())),
        ("interface_discovery_sources", list(R.interface_discovery_sources())),
        ("autoconnect_discovered_interfaces", int(P("autoconnect_discovered_interfaces"))),
        ("autoconnect_interface_mode", R.autoconnect_interface_mode()),
        ("autoconnect_interface_gravity", R.autoconnect_interface_gravity()),
        ("autoconnect_announces_to_internal", R.autoconnect_announces_to_internal()),
        ("default_ar_target", P("default_ar_target")),
        ("default_ar_penalty", P("default_ar_penalty")),
        ("default_ar_grace", P("default_ar_grace")),
        ("ic_max_held_announces", P("ic_max_held_announces")),
        ("ic_burst_hold", P("ic_burst_hold")),
        ("ic_burst_freq_new", P("ic_burst_freq_new")),
        ("ic_burst_freq", P("ic_burst_freq")),
        ("ic_pr_burst_freq_new", P("ic_pr_burst_freq_new")),
        ("ic_pr_burst_freq", P("ic_pr_burst_freq")),
        ("ec_pr_freq", P("ec_pr_freq")),
        ("egress_control", P("egress_control")),
        ("ic_new_time", P("ic_new_time")),
        ("ic_burst_penalty", P("ic_burst_penalty")),
        ("ic_held_release_interval", P("ic_held_release_interval")),
        ("qlen_in_data", R.default_data_queue_length()),
        ("qlen_in_announce", R.default_announce_queue_length()),
        ("qlen_in_pr", R.default_pr_queue_length()),
        ("qlen_in_il", R.default_il_queue_length()),
    ]


FLOAT_FIELDS = {"blackhole_update_interval", "ic_burst_hold", "ic_burst_freq_new", "ic_burst_freq",
                "ic_pr_burst_freq_new", "ic_pr_burst_freq", "ec_pr_freq", "ic_new_time",
                "ic_burst_penalty", "ic_held_release_interval"}


def settings_cases():
    default = reference_text(sys.modules["RNS.Reticulum"], "__default_rns_config__")
    for name, text, bad in SETTINGS:
        if text is None:
            text = placeholder_comments(default)
        emit("settings " + name)
        emit_input(text.encode("utf-8"))
        try:
            r = start_reference(text)
        except (ValueError, TypeError, AttributeError, configobj.ConfigObjError) as e:
            assert bad, (name, e)
            emit("set-error " + bad)
        else:
            assert not bad, name
            for k, v in reference_settings(r):
                if k in FLOAT_FIELDS and isinstance(v, int) and not isinstance(v, bool):
                    v = float(v)
                emit("set %s %s" % (k, canon(v)))
        emit("end")


IFACES = [
    ("enabled-forms", "[interfaces]\n  [[A]]\n    type = NoSuchA\n    enabled = yes\n"
     "  [[B]]\n    type = NoSuchB\n    enabled = no\n  [[C]]\n    type = NoSuchC\n"
     "  [[D]]\n    type = NoSuchD\n    interface_enabled = True\n"
     "  [[E]]\n    type = NoSuchE\n    interface_enabled = no\n    enabled = yes\n"
     "  [[F]]\n    type = NoSuchF\n    interface_enabled = yes\n    enabled = garbage\n"
     "  [[G]]\n    enabled = no\n"),
    ("bad-enabled", "[interfaces]\n  [[A]]\n    type = NoSuchA\n    enabled = perhaps\n"),
    ("bad-interface-enabled", "[interfaces]\n  [[A]]\n    type = NoSuchA\n"
     "    interface_enabled = 2\n    enabled = yes\n"),
    ("enabled-without-type", "[interfaces]\n  [[A]]\n    enabled = yes\n"),
]


def iface_cases():
    for name, text in IFACES:
        emit("ifaces " + name)
        emit_input(text.encode("utf-8"))
        r = start_reference("[logging]\nloglevel = 7\n" + text)
        RNS.loglevel = RNS.LOG_DEBUG
        for iname in r.config["interfaces"].sections:
            c = r.config["interfaces"][iname]
            LOG.clear()
            try:
                r._synthesize_interface(c, iname)
            except (Abort, ValueError, KeyError) as e:
                emit("iface-error " + esc_tok(iname))
                continue
            text_log = "\n".join(LOG)
            if "Skipping disabled interface" in text_log:
                en = "0"
            elif "Could not locate external interface module" in text_log:
                en = "1"
            else:
                raise AssertionError(text_log)
            emit("iface %s %s %s" % (esc_tok(iname), en, esc_tok(c["type"]) if "type" in c else "-"))
        emit("end")


def main():
    global DERIVED_KEY
    version = importlib.metadata.version("rns")
    DERIVED_KEY = stub_reference()
    emit("# SPDX-License-Identifier: MIT")
    emit("# Expected values for tests/xcheck/config_test.c, generated by tests/data/config_cases.py")
    emit("# from rns %s (Reticulum.py and its vendored ConfigObj) on Python %s." %
         (version, sys.version.split()[0]))
    emit("# Do not edit: regenerate. Format: see tests/xcheck/config_test.c (load_cases).")
    grammar_cases()
    conv_cases()
    settings_cases()
    iface_cases()
    sys.stdout.write("\n".join(OUT) + "\n")


if __name__ == "__main__":
    main()
