# SPDX-License-Identifier: MIT
"""Timing loops for the reference's crypto, run inside rnsc's embedded interpreter.

Each benchmark prepares its inputs once (as a Python program using RNS would keep
its key objects) and then times only the operation itself.
"""
import os
import time

import RNS
from RNS.Cryptography import X25519PrivateKey, Ed25519PrivateKey
from RNS.Cryptography.AES import AES_256_CBC


def _prepare(op, size):
    data = os.urandom(size)
    key32 = os.urandom(32)
    if op == "random":
        return lambda: os.urandom(size)
    if op == "sha256":
        return lambda: RNS.Cryptography.sha256(data)
    if op == "sha512":
        return lambda: RNS.Cryptography.sha512(data)
    if op == "hmac_sha256":
        return lambda: RNS.Cryptography.HMAC.new(key32, data).digest()
    if op == "hkdf_sha256":
        return lambda: RNS.Cryptography.hkdf(length=size, derive_from=key32, salt=data[:16], context=None)
    if op == "aes256_cbc_encrypt":
        iv = os.urandom(16)
        return lambda: AES_256_CBC.encrypt(data, key32, iv)
    if op == "aes256_cbc_decrypt":
        iv = os.urandom(16)
        ct = AES_256_CBC.encrypt(data, key32, iv)
        return lambda: AES_256_CBC.decrypt(ct, key32, iv)
    if op == "x25519_public":
        keys = [os.urandom(32) for _ in range(64)]
        state = [0]

        def fresh_public():
            state[0] = (state[0] + 1) % len(keys)
            return X25519PrivateKey.from_private_bytes(keys[state[0]]).public_key().public_bytes()
        return fresh_public
    if op == "x25519":
        prv = X25519PrivateKey.generate()
        peer = X25519PrivateKey.generate().public_key()
        return lambda: prv.exchange(peer)
    if op == "ed25519_sign":
        sk = Ed25519PrivateKey.generate()
        return lambda: sk.sign(data)
    if op == "ed25519_verify":
        sk = Ed25519PrivateKey.generate()
        pk = sk.public_key()
        sig = sk.sign(data)
        return lambda: pk.verify(sig, data)
    if op == "identity_encrypt":
        ident = RNS.Identity()
        return lambda: ident.encrypt(data)
    if op == "identity_decrypt":
        ident = RNS.Identity()
        token = ident.encrypt(data)
        return lambda: ident.decrypt(token)
    return None


def bench(op, size, seconds):
    """Returns operations per second, or None for an unknown op."""
    fn = _prepare(op, size)
    if fn is None:
        return None
    fn()  # warm-up: first calls build caches in the crypto library
    count = 0
    batch = 16
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(batch):
            fn()
        count += batch
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)
        if now - start < seconds / 20:
            batch *= 2
