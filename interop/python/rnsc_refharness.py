# SPDX-License-Identifier: MIT
"""Glue between rnsc's C test code and the pinned Python reference (RNS).

The C side (interop/pyref.c) imports this module inside the embedded
interpreter and calls the functions below with bytes / str / int / None.

Conventions, so the C side can compare verdicts instead of parsing messages:
  * success returns bytes (or a tuple whose first item is bytes, or None for
    "valid" when there is nothing to return);
  * a rejection *by the reference* returns the rnsc error name as a str, e.g.
    "RNSC_ERR_AUTH";
  * anything else raises, and the C side turns that into RNSC_ERR_PYTHON with a
    logged traceback (a harness bug or an unexpected reference behaviour).

Every operation runs the reference's own code (RNS.Identity, RNS.Destination,
RNS.Cryptography). Where the reference only says "None" (Identity.decrypt
swallows every exception), the verdict is named afterwards by replaying the
failing step with the reference's own primitives; the accept/reject decision
itself is always the reference's.

Nothing here prints: stdout belongs to the host program, so setup() points
sys.stdout and the reference's logger at the host's log sink.
"""

import contextlib
import ctypes
import os
import sys
import types

RNS = None  # the imported reference package, set by setup()

OK = None
E_TRUNCATED = "RNSC_ERR_TRUNCATED"
E_KEYLEN = "RNSC_ERR_KEYLEN"
E_NAME = "RNSC_ERR_NAME"
E_NOENT = "RNSC_ERR_NOENT"
E_IO = "RNSC_ERR_IO"
E_AUTH = "RNSC_ERR_AUTH"
E_SIGNATURE = "RNSC_ERR_SIGNATURE"
E_PADDING = "RNSC_ERR_PADDING"
E_LOW_ORDER = "RNSC_ERR_LOW_ORDER"
E_DECRYPT = "RNSC_ERR_DECRYPT"
E_MALFORMED = "RNSC_ERR_MALFORMED"
E_CRYPTO = "RNSC_ERR_CRYPTO"

# rnsc log levels (plugin_abi.h)
_LOG_ERROR, _LOG_WARNING, _LOG_NOTICE, _LOG_INFO, _LOG_DEBUG = 1, 2, 3, 4, 6

_host_log = None
_mods = {}   # reference modules by short name
_orig = {}   # the reference's primitives as imported, immune to the ffi swap


class RnscError(ValueError):
    """Raised by the swapped-in primitives; carries the rnsc error name."""

    def __init__(self, name, what=""):
        super().__init__(f"{name} {what}".strip())
        self.name = name


def _log(level, msg):
    if _host_log is not None:
        for line in str(msg).splitlines() or [""]:
            _host_log(level, line)


class _LogWriter:
    """File-like object standing in for sys.stdout: one log line per line."""

    def __init__(self, level):
        self._level = level
        self._buf = ""

    def write(self, s):
        self._buf += s
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            _log(self._level, line)
        return len(s)

    def flush(self):
        if self._buf:
            _log(self._level, self._buf)
            self._buf = ""

    def isatty(self):
        return False


def setup(host_log):
    """Imports the reference and routes its output to the host. Returns
    (version, RNS package file, sys.prefix, crypto provider description).
    ImportError propagates: the C side reports it as RNSC_ERR_NOREF."""
    global RNS, _host_log
    _host_log = host_log
    sys.stdout = _LogWriter(_LOG_NOTICE)
    import RNS as _rns

    RNS = _rns
    # The reference's log() formats a level tag into the text and calls logcall
    # with the line only; its chatter is informational for us.
    RNS.logtimestamps = False
    RNS.loglevel = RNS.LOG_NOTICE
    RNS.logcall = lambda line: _log(_LOG_INFO, "RNS " + line)
    RNS.logdest = RNS.LOG_CALLBACK

    for short in ("Identity", "Destination", "Cryptography", "Cryptography.Token",
                  "Cryptography.AES", "Cryptography.HMAC", "Cryptography.HKDF",
                  "Cryptography.Hashes", "Cryptography.Provider"):
        _mods[short] = sys.modules["RNS." + short]
    crypto = _mods["Cryptography"]
    aes = _mods["Cryptography.AES"].AES_256_CBC
    _orig.update(
        sha256=crypto.sha256,
        sha512=crypto.sha512,
        hkdf=crypto.hkdf,
        hmac_new=_mods["Cryptography.HMAC"].new,
        hash_ctor={1: _mods["Cryptography.Hashes"].ext_sha256,
                   2: _mods["Cryptography.Hashes"].ext_sha512},
        aes_encrypt=aes.encrypt,
        aes_decrypt=aes.decrypt,
        X25519PrivateKey=crypto.X25519PrivateKey,
        X25519PublicKey=crypto.X25519PublicKey,
        Ed25519PrivateKey=crypto.Ed25519PrivateKey,
        Ed25519PublicKey=crypto.Ed25519PublicKey,
    )
    return (RNS.__version__, RNS.__file__, sys.prefix, _mods["Cryptography.Provider"].backend())


def flush_output():
    """Pushes out whatever Python still buffers for the process's stdio (nothing should be
    there: everything is routed to the host log), so a test can check fd 1 afterwards."""
    for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if f is not None:
            f.flush()


# ---------------------------------------------------------------------------------------------
# Primitives as a crypto backend (interop/ref_crypto.c). These always use the reference's
# primitives captured at setup, so the backend stays the reference even while the ffi swap
# has rnsc's crypto patched into RNS.


def prim_random(n):
    return os.urandom(n)


def prim_sha256(data):
    return _orig["sha256"](data)


def prim_sha512(data):
    return _orig["sha512"](data)


def prim_hash_new(alg):
    return _orig["hash_ctor"][alg]()


def prim_hmac(key, msg):
    return _orig["hmac_new"](key, msg).digest()


def prim_hkdf(length, ikm, salt, info):
    return _orig["hkdf"](length=length, derive_from=ikm, salt=salt, context=info)


def prim_aes_encrypt(key, iv, data):
    return _orig["aes_encrypt"](plaintext=data, key=key, iv=iv)


def prim_aes_decrypt(key, iv, data):
    return _orig["aes_decrypt"](ciphertext=data, key=key, iv=iv)


def prim_x25519_public(priv):
    return _orig["X25519PrivateKey"].from_private_bytes(priv).public_key().public_bytes()


def prim_x25519(priv, peer):
    k = _orig["X25519PrivateKey"].from_private_bytes(priv)
    try:
        return k.exchange(_orig["X25519PublicKey"].from_public_bytes(peer))
    except ValueError as e:
        return _exchange_failure(e)


def prim_ed25519_public(seed):
    return _orig["Ed25519PrivateKey"].from_private_bytes(seed).public_key().public_bytes()


def prim_ed25519_sign(seed, msg):
    return _orig["Ed25519PrivateKey"].from_private_bytes(seed).sign(msg)


def prim_ed25519_verify(pub, sig, msg):
    try:
        _orig["Ed25519PublicKey"].from_public_bytes(pub).verify(sig, msg)
        return OK
    except Exception:
        return E_SIGNATURE


def _exchange_failure(e):
    """Names an X25519 exchange failure. PyCA refuses an all-zero shared secret with
    'Error computing shared key'; the swapped-in primitives raise RnscError."""
    if isinstance(e, RnscError):
        return e.name
    if "shared key" in str(e):
        return E_LOW_ORDER
    raise e


# ---------------------------------------------------------------------------------------------
# Deterministic randomness for byte-exact comparison


class _FixedUrandom:
    """Stands in for the `os` module inside RNS.Cryptography.Token: the first 16-byte draw
    returns the given IV; any other draw means the reference changed shape, so it fails."""

    def __init__(self, iv):
        self._iv = iv

    def urandom(self, n):
        if self._iv is None or n != len(self._iv):
            raise AssertionError(f"unexpected os.urandom({n}) in Token under a fixed IV")
        iv, self._iv = self._iv, None
        return iv

    def __getattr__(self, name):
        return getattr(os, name)


@contextlib.contextmanager
def _fixed_randomness(eph_priv=None, iv=None):
    """Pins the ephemeral X25519 key Identity.encrypt generates and the IV Token draws.
    Patches whatever class RNS.Identity currently binds (the reference's, or the swap
    proxies), and restores it even when the call raises."""
    cls = _mods["Identity"].X25519PrivateKey
    tok = _mods["Cryptography.Token"]
    had_own = "generate" in cls.__dict__
    saved_gen = cls.__dict__.get("generate")
    saved_os = tok.os
    try:
        if eph_priv is not None:
            cls.generate = classmethod(lambda c: c.from_private_bytes(eph_priv))
        if iv is not None:
            tok.os = _FixedUrandom(iv)
        yield
    finally:
        if eph_priv is not None:
            if had_own:
                cls.generate = saved_gen
            else:
                del cls.generate
        tok.os = saved_os


# ---------------------------------------------------------------------------------------------
# Identity


def _identity_from_private(prv):
    ident = RNS.Identity.from_bytes(prv)
    if ident is None:
        raise RnscError(E_KEYLEN, "private key rejected by Identity.from_bytes")
    return ident


def _identity_from_public(pub):
    ident = RNS.Identity(create_keys=False)
    if not ident.load_public_key(pub):
        raise RnscError(E_KEYLEN, "public key rejected by Identity.load_public_key")
    return ident


def id_from_private(prv):
    """-> (public key 64, identity hash 16) or error name."""
    try:
        ident = _identity_from_private(prv)
    except RnscError as e:
        return e.name
    return (ident.get_public_key(), ident.hash)


def id_hash_from_public(pub):
    try:
        return _identity_from_public(pub).hash
    except RnscError as e:
        return e.name


def id_encrypt(pub, pt, ratchet_pub=None, eph_priv=None, iv=None):
    """Identity.encrypt to pub (or to ratchet_pub). eph_priv / iv pin the randomness."""
    try:
        ident = _identity_from_public(pub)
    except RnscError as e:
        return e.name
    try:
        with _fixed_randomness(eph_priv, iv):
            return ident.encrypt(pt, ratchet=ratchet_pub)
    except RnscError as e:
        return e.name
    except ValueError as e:
        if ratchet_pub is not None and len(ratchet_pub) != 32:
            return E_KEYLEN
        return _exchange_failure(e)


def _token_failure(token, data):
    """Names why RNS.Cryptography.Token(key).decrypt(data) rejects data."""
    if len(data) <= 32:
        return E_TRUNCATED  # Token.verify_hmac refuses to look at it
    if not token.verify_hmac(data):
        return E_AUTH
    try:
        token.decrypt(data)
    except ValueError:
        # HMAC good, so the key holder built it: either the ciphertext is not whole blocks
        # (rnsc refuses that before decrypting) or PKCS7.unpad refused the pad byte.
        ct = data[16:-32]
        if len(ct) == 0 or len(ct) % 16:
            return E_TRUNCATED
        return E_PADDING
    raise AssertionError("token decrypts on replay")


def _identity_failure(ident, token, ratchets, enforce):
    """Replays the step of Identity.decrypt that decided the outcome."""
    if len(token) <= 32:
        return E_TRUNCATED
    if enforce:
        return E_DECRYPT
    peer = _mods["Identity"].X25519PublicKey.from_public_bytes(token[:32])
    try:
        shared = ident.prv.exchange(peer)
    except ValueError as e:
        return _exchange_failure(e)
    key = _mods["Cryptography"].hkdf(length=RNS.Identity.DERIVED_KEY_LENGTH, derive_from=shared,
                                     salt=ident.get_salt(), context=ident.get_context())
    return _token_failure(_mods["Identity"].Token(key), token[32:])


def id_decrypt(prv, token, ratchets=None, enforce=False):
    """Identity.decrypt. ratchets: concatenated 32-byte ratchet private keys or None.
    -> (plaintext, index of the ratchet that worked or -1) or error name."""
    try:
        ident = _identity_from_private(prv)
    except RnscError as e:
        return e.name
    rlist = None
    if ratchets is not None:
        if len(ratchets) % 32:
            return E_KEYLEN
        rlist = [ratchets[i:i + 32] for i in range(0, len(ratchets), 32)]

    receiver = types.SimpleNamespace(latest_ratchet_id=None)
    pt = ident.decrypt(token, ratchets=rlist, enforce_ratchets=bool(enforce),
                       ratchet_id_receiver=receiver)
    if pt is None:
        return _identity_failure(ident, token, rlist, bool(enforce))
    used = -1
    if receiver.latest_ratchet_id is not None:
        for i, r in enumerate(rlist or []):
            rid = RNS.Identity._get_ratchet_id(RNS.Identity._ratchet_public_bytes(r))
            if rid == receiver.latest_ratchet_id:
                used = i
                break
    return (pt, used)


def id_sign(prv, msg):
    try:
        return _identity_from_private(prv).sign(msg)
    except RnscError as e:
        return e.name


def id_validate(pub, sig, msg):
    try:
        ident = _identity_from_public(pub)
    except RnscError as e:
        return e.name
    return OK if ident.validate(sig, msg) else E_SIGNATURE


def id_to_file(prv, path):
    try:
        ident = _identity_from_private(prv)
    except RnscError as e:
        return e.name
    return OK if ident.to_file(path) else E_IO


def id_from_file(path):
    """Identity.from_file -> the 64 private bytes it loaded, or error name."""
    ident = RNS.Identity.from_file(path)
    if ident is None:
        return E_NOENT if not os.path.exists(path) else E_KEYLEN
    return ident.get_private_key()


def full_hash(data):
    return RNS.Identity.full_hash(data)


def truncated_hash(data):
    return RNS.Identity.truncated_hash(data)


def ratchet_public(priv):
    return RNS.Identity._ratchet_public_bytes(priv)


def ratchet_id(pub):
    return RNS.Identity._get_ratchet_id(pub)


# ---------------------------------------------------------------------------------------------
# Destinations


def _aspects(aspects):
    return [] if aspects is None else list(aspects)


def expand_name(identity_hash, app_name, aspects):
    ident = None
    if identity_hash is not None:
        ident = types.SimpleNamespace(hexhash=identity_hash.hex(), hash=identity_hash)
    try:
        return RNS.Destination.expand_name(ident, app_name, *_aspects(aspects)).encode("utf-8")
    except ValueError:
        return E_NAME


def name_hash(app_name, aspects):
    """The name hash as Destination.__init__ computes it (the reference has no standalone
    function for it)."""
    try:
        name = RNS.Destination.expand_name(None, app_name, *_aspects(aspects))
    except ValueError:
        return E_NAME
    return RNS.Identity.full_hash(name.encode("utf-8"))[:RNS.Identity.NAME_HASH_LENGTH // 8]


def dest_hash(identity_hash, app_name, aspects):
    try:
        return RNS.Destination.hash(identity_hash, app_name, *_aspects(aspects))
    except ValueError:
        return E_NAME
    except TypeError:
        return E_KEYLEN


def dest_hash_from_name(identity_hash, full_name):
    try:
        return RNS.Destination.hash_from_name_and_identity(full_name, identity_hash)
    except ValueError:
        return E_NAME
    except TypeError:
        return E_KEYLEN



def link_id(raw):
    """The reference's link id for a raw LINKREQUEST packet (unpacked by its own Packet)."""
    pkt = RNS.Packet(None, raw)
    if not pkt.unpack():
        return E_MALFORMED
    return RNS.Link.link_id_from_lr_packet(pkt)

def _group_destination(key):
    """A GROUP destination object without Destination.__init__, which would register it
    with a running Transport; only the key handling the reference runs is needed."""
    D = RNS.Destination
    d = D.__new__(D)
    d.type = D.GROUP
    d.load_private_key(key)
    return d


def group_encrypt(key, pt, iv=None):
    try:
        d = _group_destination(key)
    except ValueError:
        return E_KEYLEN
    with _fixed_randomness(None, iv):
        token = d.encrypt(pt)
    if token is None:
        raise AssertionError("GROUP destination could not encrypt")
    return token


def group_decrypt(key, token):
    try:
        d = _group_destination(key)
    except ValueError:
        return E_KEYLEN
    pt = d.decrypt(token)  # logs and returns None on any failure
    if pt is None:
        return _token_failure(d.prv, token)
    return pt


# ---------------------------------------------------------------------------------------------
# The ffi swap: rnsc's crypto patched into the reference through ctypes (libffi).

_swap = None


_CTYPE_OF = {"p": ctypes.c_void_p, "b": ctypes.c_char_p, "n": ctypes.c_size_t}


class _SwapCrypto:
    """ctypes (libffi) bindings to interop/ffi_swap.c. The table maps each entry point to
    (address, signature letters); the first parameter is always the binding pointer.
    CFUNCTYPE foreign calls release the GIL while rnsc runs."""

    def __init__(self, binding, table):
        self.b = ctypes.c_void_p(binding)
        self.f = {}
        for name, entry in table.items():
            if name == "errnames":
                continue
            addr, sig = entry
            proto = ctypes.CFUNCTYPE(ctypes.c_int, *[_CTYPE_OF[c] for c in sig])
            self.f[name] = proto(addr)
        self.names = table["errnames"]

    def call(self, name, outlen, *args):
        """Calls entry name; with outlen > 0 an output buffer of that size is passed right
        after the binding and returned."""
        out = ctypes.create_string_buffer(outlen) if outlen else None
        rc = self.f[name](self.b, *((out,) if out is not None else ()), *args)
        if rc < 0:
            raise RnscError(self.names.get(rc, "RNSC_ERR_UNKNOWN"), f"from rnsc {name}")
        return out.raw if out is not None else None


def _sw():
    if _swap is None:
        raise RnscError(E_CRYPTO, "swap proxy used after unswap")
    return _swap


def _need_len(data, n, what):
    if not isinstance(data, (bytes, bytearray)) or len(data) != n:
        raise ValueError(f"{what} must be {n} bytes")
    return bytes(data)


def swap_sha256(data):
    data = bytes(data)
    return _sw().call("sha256", 32, data, len(data))


def swap_sha512(data):
    data = bytes(data)
    return _sw().call("sha512", 64, data, len(data))


def swap_hkdf(length=None, derive_from=None, salt=None, context=None):
    # Same argument contract as the reference's hkdf.
    if length is None or length < 1:
        raise ValueError("Invalid output key length")
    if derive_from is None or derive_from == "":
        raise ValueError("Cannot derive key from empty input material")
    ikm = bytes(derive_from)
    salt = b"" if salt is None else bytes(salt)
    info = b"" if context is None else bytes(context)
    return _sw().call("hkdf_sha256", length, length, ikm, len(ikm), salt, len(salt), info,
                      len(info))


class _SwapHMAC:
    def __init__(self, key, msg=None):
        self._key = bytes(key)
        self._msg = bytearray()
        if msg is not None:
            self.update(msg)

    def update(self, msg):
        self._msg += msg

    def digest(self):
        m = bytes(self._msg)
        return _sw().call("hmac_sha256", 32, self._key, len(self._key), m, len(m))


def _swap_hmac_new(key, msg=None, digestmod=None):
    if digestmod is not None:
        raise ValueError("the swapped HMAC serves SHA-256 only")
    return _SwapHMAC(key, msg)


def _swap_aes(name):
    def run(*args, **kw):
        names = ("plaintext" if name.endswith("encrypt") else "ciphertext", "key", "iv")
        vals = dict(zip(names, args))
        vals.update(kw)
        data, key, iv = bytes(vals[names[0]]), vals["key"], vals["iv"]
        if len(key) != 32:
            raise ValueError(f"Invalid key length {len(key) * 8} for AES_256_CBC")
        _need_len(iv, 16, "IV")
        if len(data) % 16:
            raise ValueError("data is not a whole number of AES blocks")
        if not data:
            return b""
        return _sw().call(name, len(data), bytes(key), bytes(iv), data, len(data))
    return staticmethod(run)


class SwapX25519PublicKey:
    def __init__(self, raw):
        self._raw = raw

    @classmethod
    def from_public_bytes(cls, data):
        return cls(_need_len(data, 32, "an X25519 public key"))

    def public_bytes(self):
        return self._raw


class SwapX25519PrivateKey:
    def __init__(self, raw):
        self._raw = raw

    @classmethod
    def generate(cls):
        return cls(_sw().call("random", 32, 32))

    @classmethod
    def from_private_bytes(cls, data):
        return cls(_need_len(data, 32, "an X25519 private key"))

    def private_bytes(self):
        return self._raw

    def public_key(self):
        return SwapX25519PublicKey(_sw().call("x25519_public", 32, self._raw))

    def exchange(self, peer_public_key):
        peer = peer_public_key if isinstance(peer_public_key, bytes) else peer_public_key.public_bytes()
        return _sw().call("x25519", 32, self._raw, _need_len(peer, 32, "an X25519 public key"))


class SwapEd25519PublicKey:
    def __init__(self, raw):
        self._raw = raw

    @classmethod
    def from_public_bytes(cls, data):
        return cls(_need_len(data, 32, "an Ed25519 public key"))

    def public_bytes(self):
        return self._raw

    def verify(self, signature, message):
        if len(signature) != 64:
            raise RnscError(E_SIGNATURE, "signature length")
        message = bytes(message)
        _sw().call("ed25519_verify", 0, bytes(signature), self._raw, message, len(message))


class SwapEd25519PrivateKey:
    def __init__(self, seed):
        self._seed = seed
        self._pub = _sw().call("ed25519_public", 32, seed)

    @classmethod
    def generate(cls):
        return cls(_sw().call("random", 32, 32))

    @classmethod
    def from_private_bytes(cls, data):
        return cls(_need_len(data, 32, "an Ed25519 seed"))

    def private_bytes(self):
        return self._seed

    def public_key(self):
        return SwapEd25519PublicKey(self._pub)

    def sign(self, message):
        message = bytes(message)
        return _sw().call("ed25519_sign", 64, self._seed, self._pub, message, len(message))


_undo = []  # (setter, target, name, previous value or _ABSENT)
_ABSENT = object()


def _patch_attr(target, name, value):
    prev = target.__dict__.get(name, _ABSENT) if isinstance(target, type) else \
        getattr(target, name, _ABSENT)
    _undo.append((target, name, prev))
    setattr(target, name, value)


def swap_install(binding, table):
    """Patches rnsc's primitives (C entry points at the addresses in table, bound to the C
    binding pointer) into every place RNS looks them up. Returns the number of bindings
    replaced."""
    global _swap
    if _swap is not None:
        raise RuntimeError("crypto swap already installed")
    _swap = _SwapCrypto(binding, table)
    replacements = {
        id(_orig["sha256"]): swap_sha256,
        id(_orig["sha512"]): swap_sha512,
        id(_orig["hkdf"]): swap_hkdf,
        id(_orig["X25519PrivateKey"]): SwapX25519PrivateKey,
        id(_orig["X25519PublicKey"]): SwapX25519PublicKey,
        id(_orig["Ed25519PrivateKey"]): SwapEd25519PrivateKey,
        id(_orig["Ed25519PublicKey"]): SwapEd25519PublicKey,
    }
    originals = {id(_orig[k]): _orig[k] for k in
                 ("sha256", "sha512", "hkdf", "X25519PrivateKey", "X25519PublicKey",
                  "Ed25519PrivateKey", "Ed25519PublicKey")}
    try:
        # Every module-level name in RNS.* bound to an original (Identity and Link did
        # `from RNS.Cryptography import ...`), except in the module that defines it, whose
        # own internals must stay intact for the reference backend.
        for modname, mod in list(sys.modules.items()):
            if mod is None or not (modname == "RNS" or modname.startswith("RNS.")):
                continue
            for name, value in list(vars(mod).items()):
                rep = replacements.get(id(value))
                if rep is None or originals[id(value)] is not value:
                    continue
                if getattr(value, "__module__", None) == modname:
                    continue
                _patch_attr(mod, name, rep)
        # Token looks HMAC up through its module global and AES through the class, whose
        # identity Token.generate_key compares; patch the methods, not the class.
        tok = _mods["Cryptography.Token"]
        _patch_attr(tok, "HMAC", types.SimpleNamespace(
            new=_swap_hmac_new, compare_digest=_mods["Cryptography.HMAC"].compare_digest))
        aes = _mods["Cryptography.AES"].AES_256_CBC
        _patch_attr(aes, "encrypt", _swap_aes("aes256_cbc_encrypt"))
        _patch_attr(aes, "decrypt", _swap_aes("aes256_cbc_decrypt"))
    except BaseException:
        swap_remove()
        raise
    return len(_undo)


def swap_remove():
    """Restores every binding swap_install changed; safe to call when not installed."""
    global _swap
    while _undo:
        target, name, prev = _undo.pop()
        if prev is _ABSENT:
            delattr(target, name)
        else:
            setattr(target, name, prev)
    _swap = None
