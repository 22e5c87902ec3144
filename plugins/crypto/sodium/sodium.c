/* SPDX-License-Identifier: MIT */
/*
 * Crypto backend on libsodium (>= 1.0.16).
 *
 * libsodium has no AES-CBC (only AES-GCM, and only on some CPUs), so this
 * plugin does not claim RNSC_PRIM_AES256_CBC and leaves those slots empty;
 * the host takes that primitive from the next backend in the configured
 * order. It has no HKDF either (before 1.0.19), so HKDF is built here from
 * its HMAC-SHA256 exactly as RFC 5869 section 2 describes.
 *
 * Threading: sodium_init() is idempotent and thread-safe, and no op keeps
 * state outside its arguments, so every op may be called from any thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "err.h"
#include "crypto_abi.h"

#include "../kat.h"

#define PLUGIN_NAME "sodium"
#define HKDF_MAX_OUT (255u * crypto_auth_hmacsha256_BYTES)
#define HS_MAGIC UINT32_C(0x736f6469)

typedef struct sodium_inst {
	const rnsc_host_api *host;
	int ready;
} sodium_inst;

/* What a streaming hash keeps in the caller's rnsc_hash_state; copied in and
 * out with memcpy because the caller's storage is a byte union whose
 * alignment libsodium's state types need not share. */
struct sodium_hs {
	uint32_t magic;
	uint32_t alg;
	union {
		crypto_hash_sha256_state s256;
		crypto_hash_sha512_state s512;
	} u;
};
_Static_assert(sizeof(struct sodium_hs) <= RNSC_HASH_STATE_SIZE, "hash state does not fit");

static const uint8_t empty_input[1];

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
	__attribute__((visibility("default")));

static int sod_self_test(void *inst);

static const uint8_t *nz(const uint8_t *p)
{
	return p != NULL ? p : empty_input;
}

static int bad_buf(const void *p, size_t len)
{
	return p == NULL && len != 0;
}

static void plog(const sodium_inst *in, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void plog(const sodium_inst *in, int level, const char *fmt, ...)
{
	const rnsc_host_api *h = in != NULL ? in->host : NULL;
	char msg[256];
	va_list ap;

	if (h == NULL || h->struct_size < offsetof(rnsc_host_api, log) + sizeof(h->log) ||
	    h->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	h->log(h->host_ctx, level, PLUGIN_NAME, msg);
}

static int is_ready(const void *inst)
{
	const sodium_inst *in = inst;
	return in != NULL && in->ready;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static int sod_init(void *inst, const rnsc_host_api *host)
{
	sodium_inst *in = inst;

	if (in == NULL)
		return RNSC_ERR_INVAL;
	memset(in, 0, sizeof *in);
	in->host = host;
	/* 1 means another user in the process initialised it first: fine. */
	if (sodium_init() < 0) {
		plog(in, RNSC_LOG_ERROR, "sodium_init() failed");
		return RNSC_ERR_PLUGIN_INIT;
	}
	in->ready = 1;
	plog(in, RNSC_LOG_VERBOSE, "using libsodium %s", sodium_version_string());
	return 0;
}

static void sod_fini(void *inst)
{
	if (inst != NULL)
		memset(inst, 0, sizeof(sodium_inst));
}

/* ---- random and hashes ---------------------------------------------------------------- */

static int sod_random(void *inst, uint8_t *out, size_t len)
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (bad_buf(out, len))
		return RNSC_ERR_INVAL;
	if (len != 0)
		randombytes_buf(out, len);
	return 0;
}

static int sod_sha256(void *inst, uint8_t out[32], const uint8_t *msg, size_t len)
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	return crypto_hash_sha256(out, nz(msg), len) == 0 ? 0 : RNSC_ERR_CRYPTO;
}

static int sod_sha512(void *inst, uint8_t out[64], const uint8_t *msg, size_t len)
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	return crypto_hash_sha512(out, nz(msg), len) == 0 ? 0 : RNSC_ERR_CRYPTO;
}

static int hs_load(const rnsc_hash_state *st, struct sodium_hs *hs)
{
	if (st == NULL)
		return RNSC_ERR_INVAL;
	memcpy(hs, st->bytes, sizeof *hs);
	return hs->magic == HS_MAGIC ? 0 : RNSC_ERR_STATE;
}

/* The state holds a digest of everything hashed so far, which can be as
 * sensitive as the input (a key being hashed), so it is wiped, not just
 * forgotten. */
static void hs_wipe(rnsc_hash_state *st, struct sodium_hs *hs)
{
	sodium_memzero(hs, sizeof *hs);
	if (st != NULL)
		sodium_memzero(st->bytes, sizeof *hs);
}

static int sod_hash_init(void *inst, rnsc_hash_state *st, int alg)
{
	struct sodium_hs hs = {.magic = HS_MAGIC};
	int rc;

	if (st == NULL)
		return RNSC_ERR_INVAL;
	/* A failed init leaves a state that abort() accepts and update() refuses. */
	sodium_memzero(st->bytes, sizeof hs);
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (alg == RNSC_HASH_SHA256)
		rc = crypto_hash_sha256_init(&hs.u.s256);
	else if (alg == RNSC_HASH_SHA512)
		rc = crypto_hash_sha512_init(&hs.u.s512);
	else
		return RNSC_ERR_INVAL;
	if (rc != 0)
		return RNSC_ERR_CRYPTO;
	hs.alg = (uint32_t)alg;
	memcpy(st->bytes, &hs, sizeof hs);
	sodium_memzero(&hs, sizeof hs);
	return 0;
}

static int sod_hash_update(void *inst, rnsc_hash_state *st, const uint8_t *p, size_t len)
{
	struct sodium_hs hs;
	int rc = hs_load(st, &hs);

	(void)inst;
	if (rc == 0 && bad_buf(p, len))
		rc = RNSC_ERR_INVAL;
	if (rc == 0 && len != 0) {
		if (hs.alg == RNSC_HASH_SHA256)
			rc = crypto_hash_sha256_update(&hs.u.s256, p, len);
		else
			rc = crypto_hash_sha512_update(&hs.u.s512, p, len);
		if (rc == 0)
			memcpy(st->bytes, &hs, sizeof hs);
		else
			rc = RNSC_ERR_CRYPTO;
	}
	sodium_memzero(&hs, sizeof hs);
	return rc;
}

static int sod_hash_final(void *inst, rnsc_hash_state *st, uint8_t *out)
{
	struct sodium_hs hs;
	int rc = hs_load(st, &hs);

	(void)inst;
	if (rc != 0) {
		sodium_memzero(&hs, sizeof hs);
		return rc;
	}
	/* The state is released on every path, as the contract promises. */
	if (out == NULL)
		rc = RNSC_ERR_INVAL;
	else if (hs.alg == RNSC_HASH_SHA256)
		rc = crypto_hash_sha256_final(&hs.u.s256, out) == 0 ? 0 : RNSC_ERR_CRYPTO;
	else
		rc = crypto_hash_sha512_final(&hs.u.s512, out) == 0 ? 0 : RNSC_ERR_CRYPTO;
	hs_wipe(st, &hs);
	return rc;
}

/* The libsodium state is plain memory: a copy is an independent continuation. */
static int sod_hash_copy(void *inst, rnsc_hash_state *dst, const rnsc_hash_state *src)
{
	struct sodium_hs hs;
	int rc;

	(void)inst;
	if (dst == NULL)
		return RNSC_ERR_INVAL;
	sodium_memzero(dst->bytes, sizeof hs);
	if ((rc = hs_load(src, &hs)) == 0)
		memcpy(dst->bytes, &hs, sizeof hs);
	sodium_memzero(&hs, sizeof hs);
	return rc;
}

static void sod_hash_abort(void *inst, rnsc_hash_state *st)
{
	struct sodium_hs hs;

	(void)inst;
	if (st == NULL)
		return;
	memcpy(&hs, st->bytes, sizeof hs);
	hs_wipe(st, &hs);
}

/* ---- HMAC and HKDF -------------------------------------------------------------------- */

static int sod_hmac_sha256(void *inst, uint8_t out[32], const uint8_t *key, size_t key_len,
			   const uint8_t *msg, size_t msg_len)
{
	crypto_auth_hmacsha256_state st;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(key, key_len) || bad_buf(msg, msg_len))
		return RNSC_ERR_INVAL;
	/* The _init/_update/_final form takes keys of any length (longer than
	 * a block they are hashed first, RFC 2104); crypto_auth_hmacsha256()
	 * itself insists on 32 bytes. */
	crypto_auth_hmacsha256_init(&st, nz(key), key_len);
	crypto_auth_hmacsha256_update(&st, nz(msg), msg_len);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof st);
	return 0;
}

static int sod_hkdf_sha256(void *inst, uint8_t *out, size_t out_len, const uint8_t *ikm,
			   size_t ikm_len, const uint8_t *salt, size_t salt_len,
			   const uint8_t *info, size_t info_len)
{
	static const uint8_t zero_salt[crypto_auth_hmacsha256_BYTES];
	uint8_t prk[crypto_auth_hmacsha256_BYTES], t[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state keyed, st;
	size_t done = 0;
	uint8_t counter = 0;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (bad_buf(out, out_len) || bad_buf(ikm, ikm_len) || bad_buf(salt, salt_len) ||
	    bad_buf(info, info_len) || out_len > HKDF_MAX_OUT)
		return RNSC_ERR_INVAL;
	if (out_len == 0)
		return 0;

	/* Extract: PRK = HMAC(salt, IKM), where no salt means HashLen zeros. */
	if (salt_len == 0) {
		salt = zero_salt;
		salt_len = sizeof zero_salt;
	}
	crypto_auth_hmacsha256_init(&st, salt, salt_len);
	crypto_auth_hmacsha256_update(&st, nz(ikm), ikm_len);
	crypto_auth_hmacsha256_final(&st, prk);

	/* Expand: T(i) = HMAC(PRK, T(i-1) | info | i). PRK is keyed once and the
	 * keyed state copied per block, rather than re-deriving the pads. */
	crypto_auth_hmacsha256_init(&keyed, prk, sizeof prk);
	while (done < out_len) {
		size_t take = out_len - done < sizeof t ? out_len - done : sizeof t;
		counter++;
		st = keyed;
		if (counter > 1)
			crypto_auth_hmacsha256_update(&st, t, sizeof t);
		crypto_auth_hmacsha256_update(&st, nz(info), info_len);
		crypto_auth_hmacsha256_update(&st, &counter, 1);
		crypto_auth_hmacsha256_final(&st, t);
		memcpy(out + done, t, take);
		done += take;
	}
	sodium_memzero(prk, sizeof prk);
	sodium_memzero(t, sizeof t);
	sodium_memzero(&keyed, sizeof keyed);
	sodium_memzero(&st, sizeof st);
	return 0;
}

/* ---- X25519 and Ed25519 --------------------------------------------------------------- */

static int sod_x25519_public(void *inst, uint8_t pub[32], const uint8_t priv[32])
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (pub == NULL || priv == NULL)
		return RNSC_ERR_INVAL;
	return crypto_scalarmult_base(pub, priv) == 0 ? 0 : RNSC_ERR_CRYPTO;
}

static int sod_x25519(void *inst, uint8_t shared[32], const uint8_t priv[32],
		      const uint8_t peer_pub[32])
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (shared == NULL || priv == NULL || peer_pub == NULL)
		return RNSC_ERR_INVAL;
	/* crypto_scalarmult fails only on a small-order peer or an all-zero
	 * result; the second, constant-time test keeps the contract even if a
	 * future libsodium stops checking. */
	if (crypto_scalarmult(shared, priv, peer_pub) != 0 || sodium_is_zero(shared, 32)) {
		sodium_memzero(shared, 32);
		return RNSC_ERR_LOW_ORDER;
	}
	return 0;
}

static int sod_ed25519_public(void *inst, uint8_t pub[32], const uint8_t seed[32])
{
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	int rc;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (pub == NULL || seed == NULL)
		return RNSC_ERR_INVAL;
	rc = crypto_sign_seed_keypair(pub, sk, seed) == 0 ? 0 : RNSC_ERR_CRYPTO;
	sodium_memzero(sk, sizeof sk);
	return rc;
}

static int sod_ed25519_sign(void *inst, uint8_t sig[64], const uint8_t seed[32],
			    const uint8_t pub[32], const uint8_t *msg, size_t len)
{
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	int rc;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (sig == NULL || seed == NULL || pub == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	/* libsodium's secret key is seed || public key. Using the caller's cached
	 * public key saves a scalar multiplication per signature; the contract
	 * requires it to belong to seed (a wrong one yields a bad signature). */
	memcpy(sk, seed, 32);
	memcpy(sk + 32, pub, 32);
	rc = crypto_sign_detached(sig, NULL, nz(msg), len, sk) == 0 ? 0 : RNSC_ERR_CRYPTO;
	sodium_memzero(sk, sizeof sk);
	return rc;
}

static int sod_ed25519_verify(void *inst, const uint8_t sig[64], const uint8_t pub[32],
			      const uint8_t *msg, size_t len)
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (sig == NULL || pub == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	/* libsodium also refuses non-canonical S and small-order keys; it does not
	 * say which check failed, so every rejection is a bad signature. */
	return crypto_sign_verify_detached(sig, nz(msg), len, pub) == 0 ? 0 : RNSC_ERR_SIGNATURE;
}

/* ---- descriptor ----------------------------------------------------------------------- */

static const rnsc_crypto_ops sod_ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = sod_self_test,
	.random = sod_random,
	.sha256 = sod_sha256,
	.sha512 = sod_sha512,
	.hash_init = sod_hash_init,
	.hash_update = sod_hash_update,
	.hash_final = sod_hash_final,
	.hash_abort = sod_hash_abort,
	.hmac_sha256 = sod_hmac_sha256,
	.hkdf_sha256 = sod_hkdf_sha256,
	.aes256_cbc_encrypt = NULL,
	.aes256_cbc_decrypt = NULL,
	.x25519_public = sod_x25519_public,
	.x25519 = sod_x25519,
	.ed25519_public = sod_ed25519_public,
	.ed25519_sign = sod_ed25519_sign,
	.ed25519_verify = sod_ed25519_verify,
	.hash_copy = sod_hash_copy,
};

#define SOD_CAPS                                                                                   \
	(RNSC_PRIM_BIT(RNSC_PRIM_RANDOM) | RNSC_PRIM_BIT(RNSC_PRIM_SHA256) |                       \
	 RNSC_PRIM_BIT(RNSC_PRIM_SHA512) | RNSC_PRIM_BIT(RNSC_PRIM_HASH_STREAM) |                  \
	 RNSC_PRIM_BIT(RNSC_PRIM_HMAC_SHA256) | RNSC_PRIM_BIT(RNSC_PRIM_HKDF_SHA256) |             \
	 RNSC_PRIM_BIT(RNSC_PRIM_X25519) | RNSC_PRIM_BIT(RNSC_PRIM_ED25519))

static const rnsc_plugin_desc sod_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = PLUGIN_NAME,
	.version = "1.0.0",
	.description = "libsodium (built against " SODIUM_VERSION_STRING "); no AES-256-CBC",
	.caps = SOD_CAPS,
	.inst_size = sizeof(sodium_inst),
	.ops = &sod_ops,
	.init = sod_init,
	.fini = sod_fini,
};

static int sod_self_test(void *inst)
{
	const char *what = NULL;
	int rc;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	rc = kat_run(&sod_ops, inst, SOD_CAPS, &what);
	if (rc != 0)
		plog(inst, RNSC_LOG_ERROR, "self-test failed: %s", what != NULL ? what : "?");
	return rc;
}

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	if (out == NULL)
		return RNSC_ERR_INVAL;
	*out = NULL;
	/* The host checks our ABI; this checks the host's, so a plugin loaded by
	 * a future incompatible host refuses instead of misreading its table. */
	if (host != NULL &&
	    (host->struct_size < offsetof(rnsc_host_api, abi_minor) + sizeof(host->abi_minor) ||
	     host->abi_major != RNSC_PLUGIN_ABI_MAJOR))
		return RNSC_ERR_ABI;
	*out = &sod_desc;
	return 0;
}
