/* SPDX-License-Identifier: MIT */
/*
 * Crypto backend on GNU Nettle/Hogweed (>= 3.4), the third library family
 * beside OpenSSL and libsodium. Why Nettle and not wolfCrypt, libgcrypt,
 * libdecaf or Botan: plugins/crypto/nettle/README.md has the measurement.
 *
 * Nettle serves every primitive the ABI asks for except randomness: it has
 * generators (Yarrow, a fixed-seed Knuth LFG) but no operating-system source,
 * so random() reads getrandom(2) directly, as libsodium does on Linux.
 * Every Nettle context is plain memory with no allocation behind it, so the
 * streaming hash state is copied in and out of the caller's storage and a
 * copy of it is an independent continuation.
 *
 * Threading: Nettle keeps no global state and no op keeps state outside its
 * arguments, so every op may be called from any thread.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/aes.h>
#include <nettle/cbc.h>
#include <nettle/curve25519.h>
#include <nettle/eddsa.h>
#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>
#include <nettle/version.h>

#include "err.h"
#include "crypto_abi.h"

#include "../kat.h"

#define PLUGIN_NAME "nettle"
#define HKDF_MAX_OUT (255u * SHA256_DIGEST_SIZE)
#define HS_MAGIC UINT32_C(0x6e65746c)
#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct nettle_inst {
	const rnsc_host_api *host;
	int ready;
} nettle_inst;

/* What a streaming hash keeps in the caller's rnsc_hash_state (memcpy in and
 * out: the caller's byte union need not share Nettle's alignment). */
struct nettle_hs {
	uint32_t magic;
	uint32_t alg;
	union {
		struct sha256_ctx s256;
		struct sha512_ctx s512;
	} u;
};
_Static_assert(sizeof(struct nettle_hs) <= RNSC_HASH_STATE_SIZE, "hash state does not fit");

static const uint8_t empty_input[1];

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
	__attribute__((visibility("default")));

static int net_self_test(void *inst);

static const uint8_t *nz(const uint8_t *p)
{
	return p != NULL ? p : empty_input;
}

static int bad_buf(const void *p, size_t len)
{
	return p == NULL && len != 0;
}

/* Nettle has no wipe helper; the volatile store keeps the compiler from
 * dropping a clear of memory that is about to die. */
static void wipe(void *p, size_t len)
{
	volatile uint8_t *v = p;
	while (len--)
		*v++ = 0;
}

/* Constant time: a secret result must not leak through how early it differs. */
static int all_zero(const uint8_t *p, size_t len)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < len; i++)
		acc |= p[i];
	return acc == 0;
}

static void plog(const nettle_inst *in, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void plog(const nettle_inst *in, int level, const char *fmt, ...)
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
	const nettle_inst *in = inst;
	return in != NULL && in->ready;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static int net_init(void *inst, const rnsc_host_api *host)
{
	nettle_inst *in = inst;

	if (in == NULL)
		return RNSC_ERR_INVAL;
	memset(in, 0, sizeof *in);
	in->host = host;
	in->ready = 1;
	plog(in, RNSC_LOG_VERBOSE, "using nettle %d.%d", nettle_version_major(),
	     nettle_version_minor());
	return 0;
}

static void net_fini(void *inst)
{
	if (inst != NULL)
		memset(inst, 0, sizeof(nettle_inst));
}

/* ---- random and hashes ---------------------------------------------------------------- */

static int net_random(void *inst, uint8_t *out, size_t len)
{
	size_t done = 0;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (bad_buf(out, len))
		return RNSC_ERR_INVAL;
	/* getrandom() returns short counts above 256 bytes and on signals. */
	while (done < len) {
		ssize_t n = getrandom(out + done, len - done, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			plog(inst, RNSC_LOG_ERROR, "getrandom: %s", strerror(errno));
			wipe(out, len);
			return RNSC_ERR_SYS;
		}
		done += (size_t)n;
	}
	return 0;
}

static int net_sha256(void *inst, uint8_t out[32], const uint8_t *msg, size_t len)
{
	struct sha256_ctx c;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	sha256_init(&c);
	sha256_update(&c, len, nz(msg));
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
	return 0;
}

static int net_sha512(void *inst, uint8_t out[64], const uint8_t *msg, size_t len)
{
	struct sha512_ctx c;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	sha512_init(&c);
	sha512_update(&c, len, nz(msg));
	sha512_digest(&c, SHA512_DIGEST_SIZE, out);
	return 0;
}

static int hs_load(const rnsc_hash_state *st, struct nettle_hs *hs)
{
	if (st == NULL)
		return RNSC_ERR_INVAL;
	memcpy(hs, st->bytes, sizeof *hs);
	return hs->magic == HS_MAGIC ? 0 : RNSC_ERR_STATE;
}

/* The state holds a digest of everything hashed so far, which can be as
 * sensitive as the input, so it is wiped rather than forgotten. */
static void hs_wipe(rnsc_hash_state *st, struct nettle_hs *hs)
{
	wipe(hs, sizeof *hs);
	if (st != NULL)
		wipe(st->bytes, sizeof *hs);
}

static int net_hash_init(void *inst, rnsc_hash_state *st, int alg)
{
	struct nettle_hs hs = {.magic = HS_MAGIC};

	if (st == NULL)
		return RNSC_ERR_INVAL;
	/* A failed init leaves a state that abort() accepts and update() refuses. */
	wipe(st->bytes, sizeof hs);
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (alg == RNSC_HASH_SHA256)
		sha256_init(&hs.u.s256);
	else if (alg == RNSC_HASH_SHA512)
		sha512_init(&hs.u.s512);
	else
		return RNSC_ERR_INVAL;
	hs.alg = (uint32_t)alg;
	memcpy(st->bytes, &hs, sizeof hs);
	wipe(&hs, sizeof hs);
	return 0;
}

static int net_hash_update(void *inst, rnsc_hash_state *st, const uint8_t *p, size_t len)
{
	struct nettle_hs hs;
	int rc = hs_load(st, &hs);

	(void)inst;
	if (rc == 0 && bad_buf(p, len))
		rc = RNSC_ERR_INVAL;
	if (rc == 0 && len != 0) {
		if (hs.alg == RNSC_HASH_SHA256)
			sha256_update(&hs.u.s256, len, p);
		else
			sha512_update(&hs.u.s512, len, p);
		memcpy(st->bytes, &hs, sizeof hs);
	}
	wipe(&hs, sizeof hs);
	return rc;
}

static int net_hash_final(void *inst, rnsc_hash_state *st, uint8_t *out)
{
	struct nettle_hs hs;
	int rc = hs_load(st, &hs);

	(void)inst;
	if (rc != 0) {
		wipe(&hs, sizeof hs);
		return rc;
	}
	/* The state is released on every path, as the contract promises. */
	if (out == NULL)
		rc = RNSC_ERR_INVAL;
	else if (hs.alg == RNSC_HASH_SHA256)
		sha256_digest(&hs.u.s256, SHA256_DIGEST_SIZE, out);
	else
		sha512_digest(&hs.u.s512, SHA512_DIGEST_SIZE, out);
	hs_wipe(st, &hs);
	return rc;
}

static int net_hash_copy(void *inst, rnsc_hash_state *dst, const rnsc_hash_state *src)
{
	struct nettle_hs hs;
	int rc;

	(void)inst;
	if (dst == NULL)
		return RNSC_ERR_INVAL;
	wipe(dst->bytes, sizeof hs);
	if ((rc = hs_load(src, &hs)) == 0)
		memcpy(dst->bytes, &hs, sizeof hs);
	wipe(&hs, sizeof hs);
	return rc;
}

static void net_hash_abort(void *inst, rnsc_hash_state *st)
{
	struct nettle_hs hs;

	(void)inst;
	if (st == NULL)
		return;
	memcpy(&hs, st->bytes, sizeof hs);
	hs_wipe(st, &hs);
}

/* ---- HMAC and HKDF -------------------------------------------------------------------- */

static int net_hmac_sha256(void *inst, uint8_t out[32], const uint8_t *key, size_t key_len,
			   const uint8_t *msg, size_t msg_len)
{
	struct hmac_sha256_ctx c;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(key, key_len) || bad_buf(msg, msg_len))
		return RNSC_ERR_INVAL;
	/* Keys longer than a block are hashed first (RFC 2104), inside set_key. */
	hmac_sha256_set_key(&c, key_len, nz(key));
	hmac_sha256_update(&c, msg_len, nz(msg));
	hmac_sha256_digest(&c, SHA256_DIGEST_SIZE, out);
	wipe(&c, sizeof c);
	return 0;
}

static int net_hkdf_sha256(void *inst, uint8_t *out, size_t out_len, const uint8_t *ikm,
			   size_t ikm_len, const uint8_t *salt, size_t salt_len,
			   const uint8_t *info, size_t info_len)
{
	static const uint8_t zero_salt[SHA256_DIGEST_SIZE];
	uint8_t prk[SHA256_DIGEST_SIZE];
	struct hmac_sha256_ctx c;

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
	hmac_sha256_set_key(&c, salt_len, salt);
	hkdf_extract(&c, (nettle_hash_update_func *)hmac_sha256_update,
		     (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, ikm_len,
		     nz(ikm), prk);
	/* Expand: Nettle's digest re-keys the context, so T(i) chains on one key schedule. */
	hmac_sha256_set_key(&c, sizeof prk, prk);
	hkdf_expand(&c, (nettle_hash_update_func *)hmac_sha256_update,
		    (nettle_hash_digest_func *)hmac_sha256_digest, SHA256_DIGEST_SIZE, info_len,
		    nz(info), out_len, out);
	wipe(prk, sizeof prk);
	wipe(&c, sizeof c);
	return 0;
}

/* ---- AES-256-CBC ---------------------------------------------------------------------- */

static int aes_cbc(void *inst, int enc, uint8_t *out, const uint8_t key[32], const uint8_t iv[16],
		   const uint8_t *src, size_t len)
{
	struct aes256_ctx c;
	uint8_t v[AES_BLOCK_SIZE];

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (key == NULL || iv == NULL || bad_buf(out, len) || bad_buf(src, len) ||
	    len % AES_BLOCK_SIZE != 0)
		return RNSC_ERR_INVAL;
	if (len == 0)
		return 0;
	/* cbc_* advance the IV in place; the caller's stays as given. Both
	 * accept out == src. Padding is the core's job (PKCS#7 in crypto.h). */
	memcpy(v, iv, sizeof v);
	if (enc) {
		aes256_set_encrypt_key(&c, key);
		cbc_encrypt(&c, (nettle_cipher_func *)aes256_encrypt, AES_BLOCK_SIZE, v, len, out,
			    src);
	} else {
		aes256_set_decrypt_key(&c, key);
		cbc_decrypt(&c, (nettle_cipher_func *)aes256_decrypt, AES_BLOCK_SIZE, v, len, out,
			    src);
	}
	wipe(&c, sizeof c);
	wipe(v, sizeof v);
	return 0;
}

static int net_aes256_cbc_encrypt(void *inst, uint8_t *out, const uint8_t key[32],
				  const uint8_t iv[16], const uint8_t *in, size_t len)
{
	return aes_cbc(inst, 1, out, key, iv, in, len);
}

static int net_aes256_cbc_decrypt(void *inst, uint8_t *out, const uint8_t key[32],
				  const uint8_t iv[16], const uint8_t *in, size_t len)
{
	return aes_cbc(inst, 0, out, key, iv, in, len);
}

/* ---- X25519 and Ed25519 --------------------------------------------------------------- */

static int net_x25519_public(void *inst, uint8_t pub[32], const uint8_t priv[32])
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (pub == NULL || priv == NULL)
		return RNSC_ERR_INVAL;
	/* Nettle clamps the scalar itself (RFC 7748 section 5). */
	curve25519_mul_g(pub, priv);
	return 0;
}

static int net_x25519(void *inst, uint8_t shared[32], const uint8_t priv[32],
		      const uint8_t peer_pub[32])
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (shared == NULL || priv == NULL || peer_pub == NULL)
		return RNSC_ERR_INVAL;
	/* Nettle does not refuse small-order points; an all-zero result is
	 * what such a peer produces, and the contract names it. */
	curve25519_mul(shared, priv, peer_pub);
	if (all_zero(shared, 32)) {
		wipe(shared, 32);
		return RNSC_ERR_LOW_ORDER;
	}
	return 0;
}

static int net_ed25519_public(void *inst, uint8_t pub[32], const uint8_t seed[32])
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (pub == NULL || seed == NULL)
		return RNSC_ERR_INVAL;
	ed25519_sha512_public_key(pub, seed);
	return 0;
}

static int net_ed25519_sign(void *inst, uint8_t sig[64], const uint8_t seed[32],
			    const uint8_t pub[32], const uint8_t *msg, size_t len)
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (sig == NULL || seed == NULL || pub == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	/* Nettle takes the public key beside the seed, which saves a scalar
	 * multiplication per signature; the contract requires it to belong to
	 * seed (a wrong one yields a bad signature). */
	ed25519_sha512_sign(pub, seed, len, nz(msg), sig);
	return 0;
}

static int net_ed25519_verify(void *inst, const uint8_t sig[64], const uint8_t pub[32],
			      const uint8_t *msg, size_t len)
{
	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	if (sig == NULL || pub == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	/* 1 valid; 0 for a bad signature and for an undecodable key alike. */
	return ed25519_sha512_verify(pub, len, nz(msg), sig) == 1 ? 0 : RNSC_ERR_SIGNATURE;
}

/* ---- descriptor ----------------------------------------------------------------------- */

static const rnsc_crypto_ops net_ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = net_self_test,
	.random = net_random,
	.sha256 = net_sha256,
	.sha512 = net_sha512,
	.hash_init = net_hash_init,
	.hash_update = net_hash_update,
	.hash_final = net_hash_final,
	.hash_abort = net_hash_abort,
	.hmac_sha256 = net_hmac_sha256,
	.hkdf_sha256 = net_hkdf_sha256,
	.aes256_cbc_encrypt = net_aes256_cbc_encrypt,
	.aes256_cbc_decrypt = net_aes256_cbc_decrypt,
	.x25519_public = net_x25519_public,
	.x25519 = net_x25519,
	.ed25519_public = net_ed25519_public,
	.ed25519_sign = net_ed25519_sign,
	.ed25519_verify = net_ed25519_verify,
	.hash_copy = net_hash_copy,
};

#define NET_CAPS                                                                                   \
	(RNSC_PRIM_BIT(RNSC_PRIM_RANDOM) | RNSC_PRIM_BIT(RNSC_PRIM_SHA256) |                       \
	 RNSC_PRIM_BIT(RNSC_PRIM_SHA512) | RNSC_PRIM_BIT(RNSC_PRIM_HASH_STREAM) |                  \
	 RNSC_PRIM_BIT(RNSC_PRIM_HMAC_SHA256) | RNSC_PRIM_BIT(RNSC_PRIM_HKDF_SHA256) |             \
	 RNSC_PRIM_BIT(RNSC_PRIM_AES256_CBC) | RNSC_PRIM_BIT(RNSC_PRIM_X25519) |                   \
	 RNSC_PRIM_BIT(RNSC_PRIM_ED25519))

static const rnsc_plugin_desc net_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = PLUGIN_NAME,
	.version = "1.0.0",
	.description = "GNU Nettle/Hogweed (built against " STR(NETTLE_VERSION_MAJOR) "." STR(
		NETTLE_VERSION_MINOR) "); randomness from getrandom(2)",
	.caps = NET_CAPS,
	.inst_size = sizeof(nettle_inst),
	.ops = &net_ops,
	.init = net_init,
	.fini = net_fini,
};

static int net_self_test(void *inst)
{
	const char *what = NULL;
	int rc;

	if (!is_ready(inst))
		return RNSC_ERR_STATE;
	rc = kat_run(&net_ops, inst, NET_CAPS, &what);
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
	*out = &net_desc;
	return 0;
}
