/* SPDX-License-Identifier: MIT */
/*
 * The embedded reference: CPython initialised in-process (no subprocess) on
 * the project's venv, importing the pinned `rns` package.
 *
 * Threading: the interpreter is process-wide. Every function here takes the
 * GIL itself and releases it before returning, so callers never touch the GIL.
 * A rnsc_pyref handle is used by one thread at a time; different handles may be
 * used from different threads (the GIL serialises them).
 * Errors: every Python exception becomes a negative rnsc_err and its traceback
 * is logged through the context.
 *
 * Lifetime: the first rnsc_pyref_open() starts the interpreter; later opens
 * join it (a reference count). The interpreter is never finalised, not even
 * when the count drops to zero: extension modules the reference depends on
 * (PyCA cryptography, built with PyO3) cannot be initialised twice in one
 * process, so a finalise/re-initialise cycle would break the next open. The
 * memory stays reachable, so leak checkers do not report it.
 *
 * Verdicts: the reference's rejections are mapped to the rnsc codes a
 * conforming rnsc function returns for the same input (RNSC_ERR_AUTH,
 * RNSC_ERR_PADDING, ...), so a test can compare codes. RNSC_ERR_PYTHON means
 * the harness itself failed (traceback logged), never a verdict.
 */
#ifndef RNSC_PYREF_H
#define RNSC_PYREF_H

#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "ctx.h"

typedef struct rnsc_pyref rnsc_pyref;

/* Starts (or joins) the embedded interpreter and imports RNS. The venv is $RNSC_VENV or the
 * build's default. RNSC_ERR_NOREF (with a logged message saying how to install it, e.g.
 * `make venv`) when the pinned reference cannot be imported. Caller owns *out. */
int rnsc_pyref_open(rnsc_ctx *ctx, rnsc_pyref **out);
void rnsc_pyref_close(rnsc_pyref *ref);
/* The imported reference's version string, e.g. "1.5.4". Owned by ref. */
const char *rnsc_pyref_version(const rnsc_pyref *ref);
/* The venv holding the pinned reference ($RNSC_VENV, else the build's default for
 * rnsc_pyref_ref_version()), or NULL. */
const char *rnsc_pyref_venv_dir(void);
/* The reference release asked for ($RNSC_REF_VERSION, e.g. "1.5.7"), or NULL: then any release
 * that interop/requirements*.txt pins is accepted (requirements.txt holds the baseline,
 * requirements-X.Y.Z.txt each further release; interop/REFERENCE-VERSIONS.md). */
const char *rnsc_pyref_ref_version(void);
/* The tree holding interop/python and bench/participants ($RNSC_SRCDIR, else the source tree
 * rnsc was built from, else the installed copy), or NULL. */
const char *rnsc_pyref_src_dir(void);
/* The context ref logs through (the one given to open). */
rnsc_ctx *rnsc_pyref_ctx(const rnsc_pyref *ref);
/* Flushes the interpreter's stdio buffers. The reference's output (RNS.log, stray prints) is
 * routed to the context's log sink, so nothing should come out; call this before checking, or
 * before fork()/exit() paths that skip Python's own flushing. */
int rnsc_pyref_flush(rnsc_pyref *ref);

/* The reference as a crypto backend: register with
 *   rnsc_crypto_register(ctx, "reference", rnsc_pyref_crypto_ops(), ref, rnsc_pyref_crypto_prims())
 * Every primitive runs the reference's RNS.Cryptography code as imported, so the backend stays
 * the reference even while rnsc_pyref_swap_crypto() is in effect. */
const rnsc_crypto_ops *rnsc_pyref_crypto_ops(void);
uint64_t rnsc_pyref_crypto_prims(void);

/* ---- the reference's Identity (RNS.Identity) ------------------------------------------------
 * All return 0 / a length, a verdict code, or RNSC_ERR_PYTHON / RNSC_ERR_BUFSIZE. */

/* Identity.from_bytes(prv): public key and identity hash. RNSC_ERR_KEYLEN when rejected. */
int rnsc_pyref_identity_public(rnsc_pyref *ref, uint8_t pub[64], uint8_t hash[16],
			       const uint8_t *prv, size_t prv_len);
/* Identity.load_public_key(pub) then .hash. RNSC_ERR_KEYLEN when rejected. */
int rnsc_pyref_identity_hash(rnsc_pyref *ref, uint8_t hash[16], const uint8_t *pub, size_t pub_len);
/* Identity.encrypt(pt, ratchet=ratchet_pub) for the identity with public key pub. When eph_priv
 * (32 bytes) / iv (16 bytes) are not NULL, the reference's ephemeral key generation and Token's
 * IV draw are pinned to them for this call, which makes the token byte-comparable.
 * Returns the token length; RNSC_ERR_KEYLEN (bad pub or ratchet length), RNSC_ERR_LOW_ORDER. */
int rnsc_pyref_identity_encrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *pub,
				size_t pub_len, const uint8_t *pt, size_t len,
				const uint8_t *ratchet_pub, size_t ratchet_len,
				const uint8_t *eph_priv, const uint8_t *iv);
/* Identity.decrypt(token, ratchets=[...], enforce_ratchets=...) for the identity with private
 * key prv. *used_ratchet (may be NULL) gets the index of the ratchet that worked or -1.
 * Returns the plaintext length or the verdict: RNSC_ERR_TRUNCATED, RNSC_ERR_AUTH,
 * RNSC_ERR_PADDING, RNSC_ERR_LOW_ORDER, RNSC_ERR_DECRYPT (enforced ratchets all failed),
 * RNSC_ERR_KEYLEN (prv rejected). The reference only says "None" on failure; the code is
 * named by replaying the deciding step with the reference's own primitives. */
int rnsc_pyref_identity_decrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *prv,
				size_t prv_len, const uint8_t *token, size_t len,
				const uint8_t (*ratchets)[32], size_t n_ratchets,
				int enforce_ratchets, int *used_ratchet);
/* Identity.sign; returns 64. */
int rnsc_pyref_identity_sign(rnsc_pyref *ref, uint8_t sig[64], const uint8_t *prv, size_t prv_len,
			     const uint8_t *msg, size_t len);
/* Identity.validate: 0 when valid, RNSC_ERR_SIGNATURE when not. */
int rnsc_pyref_identity_validate(rnsc_pyref *ref, const uint8_t *pub, size_t pub_len,
				 const uint8_t *sig, size_t sig_len, const uint8_t *msg,
				 size_t len);
/* Identity.to_file / Identity.from_file (the 64 private bytes). from_file:
 * RNSC_ERR_NOENT when missing, RNSC_ERR_KEYLEN when the reference rejects the content. */
int rnsc_pyref_identity_to_file(rnsc_pyref *ref, const uint8_t prv[64], const char *path);
int rnsc_pyref_identity_from_file(rnsc_pyref *ref, uint8_t prv[64], const char *path);
/* Identity.full_hash / truncated_hash / _ratchet_public_bytes / _get_ratchet_id. */
int rnsc_pyref_full_hash(rnsc_pyref *ref, uint8_t out[32], const uint8_t *p, size_t len);
int rnsc_pyref_truncated_hash(rnsc_pyref *ref, uint8_t out[16], const uint8_t *p, size_t len);
int rnsc_pyref_ratchet_public(rnsc_pyref *ref, uint8_t pub[32], const uint8_t priv[32]);
int rnsc_pyref_ratchet_id(rnsc_pyref *ref, uint8_t out[10], const uint8_t pub[32]);

/* ---- the reference's Destination ------------------------------------------------------------
 * Names are UTF-8. identity_hash is 16 bytes or NULL. RNSC_ERR_NAME when the reference refuses
 * the name (a dot inside app_name or an aspect). */
int rnsc_pyref_expand_name(rnsc_pyref *ref, char *out, size_t cap, const uint8_t *identity_hash,
			   const char *app_name, const char *const *aspects, size_t n_aspects);
int rnsc_pyref_name_hash(rnsc_pyref *ref, uint8_t out[10], const char *app_name,
			 const char *const *aspects, size_t n_aspects);
int rnsc_pyref_destination_hash(rnsc_pyref *ref, uint8_t out[16], const uint8_t *identity_hash,
				const char *app_name, const char *const *aspects, size_t n_aspects);
int rnsc_pyref_destination_hash_from_name(rnsc_pyref *ref, uint8_t out[16],
					  const uint8_t *identity_hash, const char *full_name);
/* A GROUP destination's Token (Destination.load_private_key / encrypt / decrypt). iv NULL means
 * the reference draws it. encrypt returns the token length, RNSC_ERR_KEYLEN for a key the
 * reference refuses (note: it accepts 32-byte AES-128 keys, rnsc does not); decrypt returns the
 * plaintext length or RNSC_ERR_TRUNCATED / RNSC_ERR_AUTH / RNSC_ERR_PADDING / RNSC_ERR_KEYLEN. */
/* The reference's link id (LINK destination hash) of a raw LINKREQUEST packet. */
int rnsc_pyref_link_id(rnsc_pyref *ref, uint8_t out[16], const uint8_t *raw, size_t len);

int rnsc_pyref_group_encrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *key,
			     size_t key_len, const uint8_t *iv, const uint8_t *pt, size_t len);
int rnsc_pyref_group_decrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *key,
			     size_t key_len, const uint8_t *token, size_t len);

/* ---- rnsc's crypto inside the reference (libffi through ctypes) -------------------------------
 * rnsc_pyref_swap_crypto() hands Python the addresses of plain C entry points (ffi_swap.c)
 * bound to crypto_ctx; the harness wraps them with ctypes and patches them into RNS in place of
 * RNS.Cryptography's sha256/sha512/hkdf, Token's HMAC and AES-256-CBC, and the X25519/Ed25519
 * key classes, so the reference's own Identity code runs on rnsc's crypto until
 * rnsc_pyref_unswap_crypto() (or rnsc_pyref_close()) restores the originals.
 * The patch is process-wide (RNS is one module set): RNSC_ERR_STATE when any handle already
 * has a swap installed. crypto_ctx is borrowed and must outlive the swap. */
int rnsc_pyref_swap_crypto(rnsc_pyref *ref, rnsc_ctx *crypto_ctx);
int rnsc_pyref_unswap_crypto(rnsc_pyref *ref);
/* How often the reference called into rnsc for prim since the swap was installed (0 when no
 * swap is active), to show that the swapped primitives were really used. */
unsigned long rnsc_pyref_swap_calls(const rnsc_pyref *ref, enum rnsc_prim prim);

#endif
