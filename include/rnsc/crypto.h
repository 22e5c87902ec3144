/* SPDX-License-Identifier: MIT */
/*
 * Crypto dispatch. Backends (ops tables from crypto plugins, or the embedded
 * reference) are registered in a context; each primitive is served by the
 * first backend in the configured order that implements it.
 *
 * Ownership: the context borrows `ops` and `inst` of every registered backend;
 * they must outlive the registration (the plugin host keeps them alive until
 * it unloads the plugin, after unregistering it).
 *
 * Every function returns 0 (or a length) or a negative rnsc_err. Functions
 * that check authenticity are warn_unused_result.
 */
#ifndef RNSC_CRYPTO_H
#define RNSC_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "crypto_abi.h"

#define RNSC_CRYPTO_MAX_BACKENDS 16

typedef struct rnsc_crypto_backend {
	const char *name;
	const rnsc_crypto_ops *ops;
	void *inst;
	uint64_t prims; /* RNSC_PRIM_BIT()s this backend serves */
} rnsc_crypto_backend;

/* Registers a backend; prims says which primitives it serves (slots must be present).
 * RNSC_ERR_DUPLICATE if the name is taken, RNSC_ERR_RANGE when the table is full,
 * RNSC_ERR_PLUGIN_DESC if a claimed primitive has a missing slot. New backends are
 * appended to the current order. */
RNSC_API int rnsc_crypto_register(rnsc_ctx *ctx, const char *name, const rnsc_crypto_ops *ops,
				  void *inst, uint64_t prims);
/* Removes a backend by name; RNSC_ERR_NOTFOUND when unknown. */
RNSC_API int rnsc_crypto_unregister(rnsc_ctx *ctx, const char *name);
/* Sets the order from a comma/space separated list of names ("sodium, openssl").
 * Backends not listed are not used. An item "prim=backend" ("ed25519=sodium") pins one
 * primitive to a backend ahead of the order (the backend must implement it; it need not
 * be listed). RNSC_ERR_NOTFOUND names an unknown backend or primitive, RNSC_ERR_INVAL a
 * pinned backend that lacks the primitive (both logged); the order is unchanged then. */
RNSC_API int rnsc_crypto_set_order(rnsc_ctx *ctx, const char *list);
/* Name of the backend serving prim under the current order, NULL when none. */
RNSC_API const char *rnsc_crypto_provider(rnsc_ctx *ctx, enum rnsc_prim prim);
/* Registered backend by index (0..n-1), NULL past the end. */
RNSC_API const rnsc_crypto_backend *rnsc_crypto_backend_at(rnsc_ctx *ctx, size_t i);
RNSC_API const rnsc_crypto_backend *rnsc_crypto_backend_find(rnsc_ctx *ctx, const char *name);
/* Short name of a primitive, e.g. "x25519". */
RNSC_API const char *rnsc_prim_name(enum rnsc_prim prim);

/* Deterministic randomness for tests: when set, rnsc_random() draws from fn instead of the
 * CSPRNG backend. NULL restores the backend. */
typedef int (*rnsc_rng_fn)(void *ud, uint8_t *out, size_t len);
RNSC_API void rnsc_crypto_set_rng(rnsc_ctx *ctx, rnsc_rng_fn fn, void *ud);

RNSC_API int rnsc_random(rnsc_ctx *ctx, uint8_t *out, size_t len);
RNSC_API int rnsc_sha256(rnsc_ctx *ctx, uint8_t out[32], const uint8_t *msg, size_t len);
RNSC_API int rnsc_sha512(rnsc_ctx *ctx, uint8_t out[64], const uint8_t *msg, size_t len);

/* Streaming hash. Caller storage; always end with rnsc_hash_final or rnsc_hash_abort. */
typedef struct rnsc_hash {
	const rnsc_crypto_backend *be;
	int alg;
	rnsc_hash_state st;
} rnsc_hash;
RNSC_API int rnsc_hash_init(rnsc_ctx *ctx, rnsc_hash *h, int alg);
RNSC_API int rnsc_hash_update(rnsc_hash *h, const uint8_t *p, size_t len);
/* out must hold 32 (SHA-256) or 64 (SHA-512) bytes. */
RNSC_API int rnsc_hash_final(rnsc_hash *h, uint8_t *out);
RNSC_API void rnsc_hash_abort(rnsc_hash *h);
/* dst continues independently from src's state (src stays live); both must be ended.
 * RNSC_ERR_NOPRIM when src's backend predates the hash_copy slot: hash the prefix again. */
RNSC_API int rnsc_hash_copy(rnsc_hash *dst, const rnsc_hash *src);

RNSC_API int rnsc_hmac_sha256(rnsc_ctx *ctx, uint8_t out[32], const uint8_t *key, size_t key_len,
			      const uint8_t *msg, size_t msg_len);
RNSC_API int rnsc_hkdf_sha256(rnsc_ctx *ctx, uint8_t *out, size_t out_len, const uint8_t *ikm,
			      size_t ikm_len, const uint8_t *salt, size_t salt_len,
			      const uint8_t *info, size_t info_len);
/* Raw CBC on whole blocks (len % 16 == 0, else RNSC_ERR_INVAL). */
RNSC_API int rnsc_aes256_cbc_encrypt(rnsc_ctx *ctx, uint8_t *out, const uint8_t key[32],
				     const uint8_t iv[16], const uint8_t *in, size_t len);
RNSC_API int rnsc_aes256_cbc_decrypt(rnsc_ctx *ctx, uint8_t *out, const uint8_t key[32],
				     const uint8_t iv[16], const uint8_t *in, size_t len);
/* X25519: a private key is 32 random bytes (clamped at use, stored unclamped). */
RNSC_API int rnsc_x25519_generate(rnsc_ctx *ctx, uint8_t priv[32], uint8_t pub[32]);
RNSC_API int rnsc_x25519_public(rnsc_ctx *ctx, uint8_t pub[32], const uint8_t priv[32]);
/* RNSC_ERR_LOW_ORDER when the result is all zero. */
RNSC_API int rnsc_x25519(rnsc_ctx *ctx, uint8_t shared[32], const uint8_t priv[32],
			 const uint8_t peer_pub[32]) RNSC_MUST_CHECK;
/* Ed25519: a private key is its 32-byte seed. */
RNSC_API int rnsc_ed25519_generate(rnsc_ctx *ctx, uint8_t seed[32], uint8_t pub[32]);
RNSC_API int rnsc_ed25519_public(rnsc_ctx *ctx, uint8_t pub[32], const uint8_t seed[32]);
RNSC_API int rnsc_ed25519_sign(rnsc_ctx *ctx, uint8_t sig[64], const uint8_t seed[32],
			       const uint8_t pub[32], const uint8_t *msg, size_t len);
/* RNSC_ERR_SIGNATURE also when the key or R is a small-order point, whatever the backend. */
RNSC_API int rnsc_ed25519_verify(rnsc_ctx *ctx, const uint8_t sig[64], const uint8_t pub[32],
				 const uint8_t *msg, size_t len) RNSC_MUST_CHECK;
/* True for the encodings of the eight small-order points (sign bit ignored). */
RNSC_API bool rnsc_ed25519_small_order(const uint8_t enc[32]);

/*
 * RandomX machines (served by the backend of RNSC_PRIM_RANDOMX, e.g. the randomx plugin).
 * rnsc_randomx_new builds the cache for key and, with RNSC_RANDOMX_FULL, the 2080 MiB dataset
 * using init_threads threads (0: all online CPUs); flags are enum rnsc_randomx_flags. The
 * backend serving at creation time keeps serving this machine even if the order changes; it
 * must stay loaded until rnsc_randomx_del. *out is owned by the caller.
 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOPRIM (no backend, or the implementation/version/engine
 * asked for is not available), RNSC_ERR_NOMEM (errno holds the system's reason when a large
 * mapping failed), RNSC_ERR_SYS. A machine is used by one thread at a time.
 */
typedef struct rnsc_randomx rnsc_randomx;
RNSC_API int rnsc_randomx_new(rnsc_ctx *ctx, rnsc_randomx **out, uint32_t flags, const uint8_t *key,
			      size_t key_len, unsigned init_threads);
/* out receives the 32-byte RandomX hash of in[0..len). */
RNSC_API int rnsc_randomx_hash(rnsc_randomx *rx, uint8_t out[32], const uint8_t *in, size_t len);
/* The machine's description (space-separated key=value pairs: impl, version, mode, jit, aes,
 * pages, thp_kb, init_threads, cache_s, dataset_s). Returns the length or a negative code. */
RNSC_API int rnsc_randomx_info(rnsc_randomx *rx, char *buf, size_t cap);
/* What the serving backend offers (impls=..., jit=..., aes=...), without building anything. */
RNSC_API int rnsc_randomx_backend_info(rnsc_ctx *ctx, char *buf, size_t cap);
/* Frees the machine and all its memory; NULL is a no-op. */
RNSC_API void rnsc_randomx_del(rnsc_randomx *rx);

/* PKCS#7 for 16-byte blocks. pad: writes len + (16 - len % 16) bytes to out, returns that
 * length. unpad: returns the unpadded length or RNSC_ERR_PADDING (strict: 1..16, all pad
 * bytes equal). */
RNSC_API size_t rnsc_pkcs7_padded_len(size_t len);
RNSC_API int rnsc_pkcs7_pad(uint8_t *out, size_t out_cap, const uint8_t *in, size_t len);
RNSC_API int rnsc_pkcs7_unpad_len(const uint8_t *in, size_t len) RNSC_MUST_CHECK;

#endif
