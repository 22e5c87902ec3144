/* SPDX-License-Identifier: MIT */
/*
 * The crypto kind of the plugin ABI (RNSC_PLUGIN_CRYPTO): the primitives a backend may serve
 * and its ops table, which desc->ops points at. Versioning as in plugin_abi.h: slots are only
 * appended, struct_size tells which a plugin has.
 */
#ifndef RNSC_CRYPTO_ABI_H
#define RNSC_CRYPTO_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "plugin_abi.h"

/* Primitive bits: a crypto plugin's desc->caps says which primitives it serves. */
enum rnsc_prim {
	RNSC_PRIM_RANDOM = 0,
	RNSC_PRIM_SHA256,
	RNSC_PRIM_SHA512,
	RNSC_PRIM_HASH_STREAM, /* streaming SHA-256 and SHA-512 */
	RNSC_PRIM_HMAC_SHA256,
	RNSC_PRIM_HKDF_SHA256,
	RNSC_PRIM_AES256_CBC,
	RNSC_PRIM_X25519,
	RNSC_PRIM_ED25519,
	RNSC_PRIM_RANDOMX, /* RandomX hashing machines (randomx_* slots) */
	RNSC_PRIM_COUNT
};
#define RNSC_PRIM_BIT(p) (UINT64_C(1) << (p))

enum rnsc_hash_alg { RNSC_HASH_SHA256 = 1, RNSC_HASH_SHA512 = 2 };

/* Streaming hash state lives in caller storage of this size and alignment. */
#define RNSC_HASH_STATE_SIZE 384
typedef union rnsc_hash_state {
	uint8_t bytes[RNSC_HASH_STATE_SIZE];
	uint64_t align_u64;
	void *align_ptr;
	long double align_ld;
} rnsc_hash_state;

/*
 * RandomX machine flags (the flags argument of randomx_new). The zero value asks for the
 * default: rnsc's own implementation, RandomX v1, light mode (256 MiB cache), the fastest
 * engine the machine has (JIT, hardware AES) and huge pages when the system grants them.
 */
enum rnsc_randomx_flags {
	RNSC_RANDOMX_V2 = 1u << 0,   /* RandomX v2 (else v1) */
	RNSC_RANDOMX_FULL = 1u << 1, /* full-memory mode: 2080 MiB dataset (else light) */
	RNSC_RANDOMX_INTERP =
		1u << 2, /* force the portable interpreter (else JIT when available) */
	RNSC_RANDOMX_SOFT_AES = 1u << 3, /* force software AES (else hardware AES when present) */
	RNSC_RANDOMX_NO_HUGE = 1u << 4,  /* never ask for huge pages (4 KiB pages only) */
	RNSC_RANDOMX_SECURE_JIT =
		1u << 5, /* JIT code pages kept W^X (else RWX, no syscalls per program) */
	/* Own v2 full-memory JIT: fetch dataset items ahead with one prefetchnta, as upstream
	 * does, instead of its default speculative load plus later prefetch. */
	RNSC_RANDOMX_PREFETCH_NTA = 1u << 6,
	/* Implementation select (a 4-bit field): which code computes the hashes. */
	RNSC_RANDOMX_IMPL_OWN = 0u << 8,        /* rnsc's own (v1 and v2) */
	RNSC_RANDOMX_IMPL_LIBRANDOMX = 1u << 8, /* the system's librandomx (v1 only) */
	RNSC_RANDOMX_IMPL_MASK = 15u << 8,
};

/*
 * Every function returns 0 or a negative rnsc_err. Output buffers have the
 * fixed sizes given in the comments. Lengths passed to AES-CBC are whole
 * blocks; padding (PKCS#7) is applied by the core, not by the backend.
 */
typedef struct rnsc_crypto_ops {
	size_t struct_size;
	/* Known-answer self-test the host runs right after init. */
	int (*self_test)(void *inst);
	int (*random)(void *inst, uint8_t *out, size_t len);
	int (*sha256)(void *inst, uint8_t out[32], const uint8_t *msg, size_t len);
	int (*sha512)(void *inst, uint8_t out[64], const uint8_t *msg, size_t len);
	int (*hash_init)(void *inst, rnsc_hash_state *st, int alg);
	int (*hash_update)(void *inst, rnsc_hash_state *st, const uint8_t *p, size_t len);
	/* Writes the digest and releases the state. */
	int (*hash_final)(void *inst, rnsc_hash_state *st, uint8_t *out);
	/* Releases the state without a digest. */
	void (*hash_abort)(void *inst, rnsc_hash_state *st);
	int (*hmac_sha256)(void *inst, uint8_t out[32], const uint8_t *key, size_t key_len,
			   const uint8_t *msg, size_t msg_len);
	/* RFC 5869; salt may be empty (then HashLen zero bytes), info may be empty. */
	int (*hkdf_sha256)(void *inst, uint8_t *out, size_t out_len, const uint8_t *ikm,
			   size_t ikm_len, const uint8_t *salt, size_t salt_len,
			   const uint8_t *info, size_t info_len);
	int (*aes256_cbc_encrypt)(void *inst, uint8_t *out, const uint8_t key[32],
				  const uint8_t iv[16], const uint8_t *in, size_t len);
	int (*aes256_cbc_decrypt)(void *inst, uint8_t *out, const uint8_t key[32],
				  const uint8_t iv[16], const uint8_t *in, size_t len);
	int (*x25519_public)(void *inst, uint8_t pub[32], const uint8_t priv[32]);
	/* Must return RNSC_ERR_LOW_ORDER when the shared secret is all zero. */
	int (*x25519)(void *inst, uint8_t shared[32], const uint8_t priv[32],
		      const uint8_t peer_pub[32]);
	int (*ed25519_public)(void *inst, uint8_t pub[32], const uint8_t seed[32]);
	/* pub is the public key belonging to seed (callers cache it). */
	int (*ed25519_sign)(void *inst, uint8_t sig[64], const uint8_t seed[32],
			    const uint8_t pub[32], const uint8_t *msg, size_t len);
	/* 0 when valid, RNSC_ERR_SIGNATURE when not, RNSC_ERR_BADKEY for an unusable key. */
	int (*ed25519_verify)(void *inst, const uint8_t sig[64], const uint8_t pub[32],
			      const uint8_t *msg, size_t len);
	/*
	 * RandomX (RNSC_PRIM_RANDOMX). A "machine" is everything one key needs: the cache, the
	 * dataset in full mode, and one VM. randomx_new builds it: the cache from key, then (full
	 * mode) the dataset with init_threads threads (0: one per online CPU). It can take tens of
	 * seconds in full mode. *vm is owned by the caller and released with randomx_del.
	 * Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOPRIM (implementation, version, JIT or hardware AES
	 * not available), RNSC_ERR_NOMEM (memory could not be mapped; errno says why) or
	 * RNSC_ERR_SYS (a worker thread could not be started).
	 * A machine is used by one thread at a time; different machines are independent.
	 */
	int (*randomx_new)(void *inst, uint32_t flags, const uint8_t *key, size_t key_len,
			   unsigned init_threads, void **vm);
	/* RandomX hash of in[0..len) under the machine's key. The caller's floating-point
	 * environment is preserved. Returns 0 or RNSC_ERR_INVAL. */
	int (*randomx_hash)(void *inst, void *vm, uint8_t out[32], const uint8_t *in, size_t len);
	/*
	 * One line of space-separated key=value pairs describing the machine (vm != NULL):
	 * impl, version, mode, jit, aes, pages (4k|thp|hugetlb), thp_kb (memory really on huge
	 * pages), init_threads, cache_s, dataset_s; or the implementations on offer (vm NULL).
	 * Values contain no spaces. Returns the length written (NUL excluded; truncated to cap)
	 * or a negative rnsc_err.
	 */
	int (*randomx_info)(void *inst, void *vm, char *buf, size_t cap);
	/* Releases the machine and all its memory; NULL is a no-op. */
	void (*randomx_del)(void *inst, void *vm);
	/*
	 * Streaming hash (RNSC_PRIM_HASH_STREAM, optional; appended after the RandomX slots):
	 * dst becomes an independent state that continues from src, which stays live. Both
	 * end with hash_final or hash_abort. Lets a caller hash a shared prefix once and finish
	 * it with different suffixes (a resource's hash and its proof). On failure dst is left
	 * as a failed init leaves it.
	 */
	int (*hash_copy)(void *inst, rnsc_hash_state *dst, const rnsc_hash_state *src);
} rnsc_crypto_ops;

#endif
