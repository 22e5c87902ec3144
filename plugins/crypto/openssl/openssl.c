/* SPDX-License-Identifier: MIT */
/*
 * Crypto backend on OpenSSL 3 libcrypto, through the EVP interfaces only.
 *
 * Each instance owns a private OSSL_LIB_CTX, so its algorithms, DRBG and
 * provider state are not shared with other libcrypto users in the process
 * (the embedded reference's Python also loads libcrypto) and two instances
 * are independent, as DESIGN.md asks of all state. The private context reads
 * no openssl.cnf; the default provider is loaded as the fallback on first use.
 * Algorithms are fetched once at init: implicit fetches on every call are the
 * main cost OpenSSL 3 adds over 1.1.
 *
 * Threading: after init, every op may be called from any thread at once. Each
 * call makes its own EVP context; the fetched algorithm objects are read-only.
 *
 * Error queue: every failure path clears libcrypto's thread-local error queue,
 * so an expected failure here (a forged signature, a low-order point) is not
 * later mistaken by another libcrypto user on the same thread for its own.
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "err.h"
#include "crypto_abi.h"

#include "../kat.h"

#define PLUGIN_NAME "openssl"
#define HKDF_MAX_OUT (255u * 32u)
#define HS_MAGIC UINT32_C(0x6f73736c)

/* Importing a raw Ed25519/X25519 private key makes OpenSSL derive its public key (a full
 * scalar multiplication), and importing an Ed25519 public key decodes a point. A node
 * signs with and talks to the same few keys over and over, so the last few imported key
 * objects are kept (reference-counted) and reused. Private key bytes in the cache are
 * cleansed on eviction and at fini. */
#define KEY_CACHE_SLOTS 8
enum { KC_X25519_PRIV, KC_ED25519_PRIV, KC_ED25519_PUB, KC_KINDS };

struct key_slot {
	uint8_t key[32];
	EVP_PKEY *pk;
};

typedef struct ossl_inst {
	const rnsc_host_api *host;
	pthread_mutex_t kc_lock;
	int kc_ready;
	struct key_slot kc[KC_KINDS][KEY_CACHE_SLOTS];
	unsigned kc_next[KC_KINDS];
	OSSL_LIB_CTX *libctx;
	EVP_MD *sha256;
	EVP_MD *sha512;
	EVP_MAC *hmac;
	EVP_KDF *hkdf;
	EVP_CIPHER *aes256_cbc;
	/* One finished digest context kept for the next streaming hash: allocating and
	 * freeing an EVP_MD_CTX per packet hash cost ~40% of hashing a 300-byte packet.
	 * Taken and returned with atomic exchanges, so concurrent hashes from several
	 * threads stay safe (the loser allocates a context of its own). */
	_Atomic(EVP_MD_CTX *) spare;
	/* HMAC-SHA256 the same way: a context with its digest set once at init, duplicated
	 * per call, and one finished context kept for the next call. Setting the digest by
	 * name on every call fetched it again (a locked name lookup): 0.79M HMACs of 64 bytes
	 * per second that way, 1.05M from the duplicate, 1.8M reusing a context. The kept
	 * context holds the previous key's padded-key hash state until its next use. */
	EVP_MAC_CTX *hmac_tpl;
	_Atomic(EVP_MAC_CTX *) mac_spare;
} ossl_inst;

/* What a streaming hash keeps in the caller's rnsc_hash_state. It is copied
 * in and out with memcpy: the caller's storage is a byte union, and this
 * avoids relying on its alignment or on type punning. */
struct ossl_hs {
	uint32_t magic;
	uint32_t md_len;
	EVP_MD_CTX *ctx;
};
_Static_assert(sizeof(struct ossl_hs) <= RNSC_HASH_STATE_SIZE, "hash state does not fit");

/* Zero-length inputs may arrive as NULL; several EVP calls reject NULL even
 * with a zero length, so they get this instead. */
static const uint8_t empty_input[1];

int rnsc_plugin_init(const rnsc_host_api *host, const rnsc_plugin_desc **out)
	__attribute__((visibility("default")));

static int ossl_self_test(void *inst);

static const void *nz(const void *p)
{
	return p != NULL ? p : empty_input;
}

static int bad_buf(const void *p, size_t len)
{
	return p == NULL && len != 0;
}

static void plog(const ossl_inst *in, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void plog(const ossl_inst *in, int level, const char *fmt, ...)
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

/* For failures that should not happen (allocation, provider errors): log the
 * reason at debug level before clearing the queue, then report `code`. */
static int fail(const ossl_inst *in, int code, const char *what)
{
	unsigned long e = ERR_peek_last_error();

	if (e != 0) {
		char reason[160];
		ERR_error_string_n(e, reason, sizeof reason);
		plog(in, RNSC_LOG_DEBUG, "%s: %s", what, reason);
	}
	ERR_clear_error();
	return code;
}

/* Expected failures (bad signature, low-order point): no log, just a clean queue. */
static int quiet_fail(int code)
{
	ERR_clear_error();
	return code;
}

static ossl_inst *ready(void *inst)
{
	ossl_inst *in = inst;
	return in != NULL && in->libctx != NULL ? in : NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static void ossl_fini(void *inst)
{
	ossl_inst *in = inst;

	if (in == NULL)
		return;
	if (in->kc_ready) {
		for (int k = 0; k < KC_KINDS; k++)
			for (int i = 0; i < KEY_CACHE_SLOTS; i++) {
				EVP_PKEY_free(in->kc[k][i].pk);
				OPENSSL_cleanse(in->kc[k][i].key, 32);
			}
		pthread_mutex_destroy(&in->kc_lock);
	}
	EVP_MD_CTX_free(atomic_exchange(&in->spare, NULL));
	EVP_MAC_CTX_free(atomic_exchange(&in->mac_spare, NULL));
	EVP_MAC_CTX_free(in->hmac_tpl);
	EVP_MD_free(in->sha256);
	EVP_MD_free(in->sha512);
	EVP_MAC_free(in->hmac);
	EVP_KDF_free(in->hkdf);
	EVP_CIPHER_free(in->aes256_cbc);
	OSSL_LIB_CTX_free(in->libctx);
	memset(in, 0, sizeof *in);
}

static int ossl_init(void *inst, const rnsc_host_api *host)
{
	ossl_inst *in = inst;

	if (in == NULL)
		return RNSC_ERR_INVAL;
	memset(in, 0, sizeof *in);
	in->host = host;
	if (pthread_mutex_init(&in->kc_lock, NULL) != 0)
		return RNSC_ERR_SYS;
	in->kc_ready = 1;
	in->libctx = OSSL_LIB_CTX_new();
	if (in->libctx == NULL)
		return fail(in, RNSC_ERR_NOMEM, "OSSL_LIB_CTX_new");
	in->sha256 = EVP_MD_fetch(in->libctx, "SHA2-256", NULL);
	in->sha512 = EVP_MD_fetch(in->libctx, "SHA2-512", NULL);
	in->hmac = EVP_MAC_fetch(in->libctx, "HMAC", NULL);
	in->hkdf = EVP_KDF_fetch(in->libctx, "HKDF", NULL);
	in->aes256_cbc = EVP_CIPHER_fetch(in->libctx, "AES-256-CBC", NULL);
	if (in->hmac != NULL) {
		OSSL_PARAM params[] = {
			OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA2-256", 0),
			OSSL_PARAM_construct_end(),
		};
		in->hmac_tpl = EVP_MAC_CTX_new(in->hmac);
		if (in->hmac_tpl != NULL && EVP_MAC_CTX_set_params(in->hmac_tpl, params) != 1) {
			EVP_MAC_CTX_free(in->hmac_tpl);
			in->hmac_tpl = NULL;
		}
	}
	if (in->sha256 == NULL || in->sha512 == NULL || in->hmac == NULL || in->hkdf == NULL ||
	    in->aes256_cbc == NULL || in->hmac_tpl == NULL) {
		plog(in, RNSC_LOG_ERROR,
		     "cannot fetch SHA-256/SHA-512/HMAC/HKDF/AES-256-CBC from the default provider (%s)",
		     OpenSSL_version(OPENSSL_VERSION));
		fail(in, 0, "fetch");
		ossl_fini(in);
		return RNSC_ERR_PLUGIN_INIT;
	}
	plog(in, RNSC_LOG_VERBOSE, "using %s", OpenSSL_version(OPENSSL_VERSION));
	return 0;
}

/* ---- random and hashes ---------------------------------------------------------------- */

static int ossl_random(void *inst, uint8_t *out, size_t len)
{
	ossl_inst *in = ready(inst);

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (bad_buf(out, len))
		return RNSC_ERR_INVAL;
	if (len == 0)
		return 0;
	if (RAND_bytes_ex(in->libctx, out, len, 0) != 1) {
		OPENSSL_cleanse(out, len);
		return fail(in, RNSC_ERR_RNG, "RAND_bytes_ex");
	}
	return 0;
}

static int digest(ossl_inst *in, const EVP_MD *md, uint8_t *out, const uint8_t *msg, size_t len)
{
	if (in == NULL)
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	if (EVP_Digest(nz(msg), len, out, NULL, md, NULL) != 1)
		return fail(in, RNSC_ERR_CRYPTO, "EVP_Digest");
	return 0;
}

static int ossl_sha256(void *inst, uint8_t out[32], const uint8_t *msg, size_t len)
{
	ossl_inst *in = ready(inst);
	return digest(in, in != NULL ? in->sha256 : NULL, out, msg, len);
}

static int ossl_sha512(void *inst, uint8_t out[64], const uint8_t *msg, size_t len)
{
	ossl_inst *in = ready(inst);
	return digest(in, in != NULL ? in->sha512 : NULL, out, msg, len);
}

static void hs_clear(rnsc_hash_state *st)
{
	memset(st->bytes, 0, sizeof(struct ossl_hs));
}

/* The finished context kept in spare, else a new one. */
static EVP_MD_CTX *take_md_ctx(ossl_inst *in)
{
	EVP_MD_CTX *c = atomic_exchange(&in->spare, NULL);
	return c != NULL ? c : EVP_MD_CTX_new();
}

static int ossl_hash_init(void *inst, rnsc_hash_state *st, int alg)
{
	ossl_inst *in = ready(inst);
	struct ossl_hs hs = {.magic = HS_MAGIC};
	const EVP_MD *md;

	if (st == NULL)
		return RNSC_ERR_INVAL;
	/* A failed init leaves a state that abort() accepts and update() refuses. */
	hs_clear(st);
	if (in == NULL)
		return RNSC_ERR_STATE;
	if (alg == RNSC_HASH_SHA256)
		md = in->sha256;
	else if (alg == RNSC_HASH_SHA512)
		md = in->sha512;
	else
		return RNSC_ERR_INVAL;
	hs.md_len = alg == RNSC_HASH_SHA256 ? 32 : 64;
	hs.ctx = take_md_ctx(in);
	if (hs.ctx == NULL)
		return fail(in, RNSC_ERR_NOMEM, "EVP_MD_CTX_new");
	if (EVP_DigestInit_ex2(hs.ctx, md, NULL) != 1) {
		EVP_MD_CTX_free(hs.ctx);
		return fail(in, RNSC_ERR_CRYPTO, "EVP_DigestInit_ex2");
	}
	memcpy(st->bytes, &hs, sizeof hs);
	return 0;
}

static int hs_load(const rnsc_hash_state *st, struct ossl_hs *hs)
{
	if (st == NULL)
		return RNSC_ERR_INVAL;
	memcpy(hs, st->bytes, sizeof *hs);
	return hs->magic == HS_MAGIC && hs->ctx != NULL ? 0 : RNSC_ERR_STATE;
}

static int ossl_hash_update(void *inst, rnsc_hash_state *st, const uint8_t *p, size_t len)
{
	struct ossl_hs hs;
	int rc = hs_load(st, &hs);

	if (rc != 0)
		return rc;
	if (bad_buf(p, len))
		return RNSC_ERR_INVAL;
	if (len != 0 && EVP_DigestUpdate(hs.ctx, p, len) != 1)
		return fail(inst, RNSC_ERR_CRYPTO, "EVP_DigestUpdate");
	return 0;
}

static int ossl_hash_final(void *inst, rnsc_hash_state *st, uint8_t *out)
{
	struct ossl_hs hs;
	int rc = hs_load(st, &hs);

	if (rc != 0)
		return rc;
	/* The state is released on every path, as the contract promises. */
	if (out == NULL)
		rc = RNSC_ERR_INVAL;
	else if (EVP_DigestFinal_ex(hs.ctx, out, NULL) != 1)
		rc = fail(inst, RNSC_ERR_CRYPTO, "EVP_DigestFinal_ex");
	ossl_inst *in = ready(inst);
	EVP_MD_CTX *none = NULL;
	/* A finished context is reusable (EVP_DigestInit_ex2 starts it over). */
	if (rc != 0 || in == NULL || !atomic_compare_exchange_strong(&in->spare, &none, hs.ctx))
		EVP_MD_CTX_free(hs.ctx);
	hs_clear(st);
	return rc;
}

static int ossl_hash_copy(void *inst, rnsc_hash_state *dst, const rnsc_hash_state *src)
{
	ossl_inst *in = ready(inst);
	struct ossl_hs hs, ns;
	int rc;

	if (dst == NULL)
		return RNSC_ERR_INVAL;
	hs_clear(dst);
	if (in == NULL)
		return RNSC_ERR_STATE;
	if ((rc = hs_load(src, &hs)) != 0)
		return rc;
	ns = hs;
	ns.ctx = take_md_ctx(in);
	if (ns.ctx == NULL)
		return fail(in, RNSC_ERR_NOMEM, "EVP_MD_CTX_new");
	if (EVP_MD_CTX_copy_ex(ns.ctx, hs.ctx) != 1) {
		EVP_MD_CTX_free(ns.ctx);
		return fail(in, RNSC_ERR_CRYPTO, "EVP_MD_CTX_copy_ex");
	}
	memcpy(dst->bytes, &ns, sizeof ns);
	return 0;
}

static void ossl_hash_abort(void *inst, rnsc_hash_state *st)
{
	struct ossl_hs hs;

	(void)inst;
	if (hs_load(st, &hs) == 0)
		EVP_MD_CTX_free(hs.ctx);
	if (st != NULL)
		hs_clear(st);
}

/* ---- HMAC and HKDF -------------------------------------------------------------------- */

static int ossl_hmac_sha256(void *inst, uint8_t out[32], const uint8_t *key, size_t key_len,
			    const uint8_t *msg, size_t msg_len)
{
	ossl_inst *in = ready(inst);
	EVP_MAC_CTX *c;
	size_t n = 0;
	int rc = 0;

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (out == NULL || bad_buf(key, key_len) || bad_buf(msg, msg_len))
		return RNSC_ERR_INVAL;
	c = atomic_exchange(&in->mac_spare, NULL);
	if (c == NULL)
		c = EVP_MAC_CTX_dup(in->hmac_tpl);
	if (c == NULL)
		return fail(in, RNSC_ERR_NOMEM, "EVP_MAC_CTX_dup");
	/* A NULL key would mean "reuse the previous key" to EVP_MAC_init; an
	 * empty key must instead be the all-zero block (RFC 2104). */
	if (EVP_MAC_init(c, nz(key), key_len, NULL) != 1 ||
	    (msg_len != 0 && EVP_MAC_update(c, msg, msg_len) != 1) ||
	    EVP_MAC_final(c, out, &n, 32) != 1 || n != 32) {
		OPENSSL_cleanse(out, 32);
		rc = fail(in, RNSC_ERR_CRYPTO, "HMAC-SHA256");
	}
	EVP_MAC_CTX *none = NULL;
	/* a finished context starts over at the next EVP_MAC_init; a failed one is not kept */
	if (rc != 0 || !atomic_compare_exchange_strong(&in->mac_spare, &none, c))
		EVP_MAC_CTX_free(c);
	return rc;
}

/* OpenSSL 3.0's HKDF refuses info longer than 32 KiB (HKDF_MAXINFO); RFC 5869
 * sets no such limit and the other backends have none, so longer info takes
 * this path: extract through the EVP_KDF, expand by hand with EVP_MAC. */
#define EVP_HKDF_INFO_MAX (32u * 1024u)

static int hkdf_expand_long_info(ossl_inst *in, uint8_t *out, size_t out_len, const uint8_t prk[32],
				 const uint8_t *info, size_t info_len)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA2-256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *c = EVP_MAC_CTX_new(in->hmac);
	uint8_t t[32];
	size_t done = 0, n;
	uint8_t counter = 0;
	int rc = 0;

	if (c == NULL)
		return fail(in, RNSC_ERR_NOMEM, "EVP_MAC_CTX_new");
	while (done < out_len) {
		size_t take = out_len - done < sizeof t ? out_len - done : sizeof t;
		counter++;
		if (EVP_MAC_init(c, prk, 32, params) != 1 ||
		    (counter > 1 && EVP_MAC_update(c, t, sizeof t) != 1) ||
		    EVP_MAC_update(c, info, info_len) != 1 || EVP_MAC_update(c, &counter, 1) != 1 ||
		    EVP_MAC_final(c, t, &n, sizeof t) != 1 || n != sizeof t) {
			rc = fail(in, RNSC_ERR_CRYPTO, "HKDF-SHA256 expand");
			break;
		}
		memcpy(out + done, t, take);
		done += take;
	}
	OPENSSL_cleanse(t, sizeof t);
	EVP_MAC_CTX_free(c);
	return rc;
}

static int ossl_hkdf_sha256(void *inst, uint8_t *out, size_t out_len, const uint8_t *ikm,
			    size_t ikm_len, const uint8_t *salt, size_t salt_len,
			    const uint8_t *info, size_t info_len)
{
	ossl_inst *in = ready(inst);
	OSSL_PARAM params[6], *p = params;
	int extract_only = EVP_KDF_HKDF_MODE_EXTRACT_ONLY;
	uint8_t prk[32];
	EVP_KDF_CTX *c;
	int rc = 0, long_info;

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (bad_buf(out, out_len) || bad_buf(ikm, ikm_len) || bad_buf(salt, salt_len) ||
	    bad_buf(info, info_len) || out_len > HKDF_MAX_OUT)
		return RNSC_ERR_INVAL;
	if (out_len == 0)
		return 0;
	long_info = info_len > EVP_HKDF_INFO_MAX;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA2-256", 0);
	if (long_info)
		*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &extract_only);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)nz(ikm), ikm_len);
	/* Omitting the salt makes OpenSSL key HMAC with an empty key, which HMAC
	 * pads to the same all-zero block RFC 5869 specifies for "no salt". */
	if (salt_len != 0)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt,
							 salt_len);
	if (info_len != 0 && !long_info)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info,
							 info_len);
	*p = OSSL_PARAM_construct_end();

	c = EVP_KDF_CTX_new(in->hkdf);
	if (c == NULL)
		return fail(in, RNSC_ERR_NOMEM, "EVP_KDF_CTX_new");
	if (!long_info) {
		if (EVP_KDF_derive(c, out, out_len, params) != 1)
			rc = fail(in, RNSC_ERR_CRYPTO, "HKDF-SHA256");
	} else if (EVP_KDF_derive(c, prk, sizeof prk, params) != 1) {
		rc = fail(in, RNSC_ERR_CRYPTO, "HKDF-SHA256 extract");
	} else {
		rc = hkdf_expand_long_info(in, out, out_len, prk, info, info_len);
	}
	if (rc != 0)
		OPENSSL_cleanse(out, out_len);
	OPENSSL_cleanse(prk, sizeof prk);
	/* Frees the context's copies of IKM and PRK with a cleanse. */
	EVP_KDF_CTX_free(c);
	return rc;
}

/* ---- AES-256-CBC ---------------------------------------------------------------------- */

static int aes_cbc(void *inst, int enc, uint8_t *out, const uint8_t key[32], const uint8_t iv[16],
		   const uint8_t *src, size_t len)
{
	/* EVP lengths are int: feed whole blocks in pieces below INT_MAX. */
	const size_t chunk_max = (size_t)INT_MAX & ~(size_t)15;
	ossl_inst *in = ready(inst);
	EVP_CIPHER_CTX *c;
	size_t off = 0;
	int n = 0, rc = 0;

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (key == NULL || iv == NULL || bad_buf(out, len) || bad_buf(src, len) || len % 16 != 0)
		return RNSC_ERR_INVAL;
	if (len == 0)
		return 0;
	c = EVP_CIPHER_CTX_new();
	if (c == NULL)
		return fail(in, RNSC_ERR_NOMEM, "EVP_CIPHER_CTX_new");
	/* Padding is the core's job (PKCS#7 in crypto.h); the backend is raw CBC. */
	if (EVP_CipherInit_ex2(c, in->aes256_cbc, key, iv, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(c, 0) != 1) {
		rc = RNSC_ERR_CRYPTO;
		goto out;
	}
	while (off < len) {
		size_t step = len - off < chunk_max ? len - off : chunk_max;
		if (EVP_CipherUpdate(c, out + off, &n, src + off, (int)step) != 1 ||
		    (size_t)n != step) {
			rc = RNSC_ERR_CRYPTO;
			goto out;
		}
		off += step;
	}
	if (EVP_CipherFinal_ex(c, out + off, &n) != 1 || n != 0)
		rc = RNSC_ERR_CRYPTO;
out:
	if (rc != 0) {
		OPENSSL_cleanse(out, len);
		rc = fail(in, rc, enc ? "AES-256-CBC encrypt" : "AES-256-CBC decrypt");
	}
	EVP_CIPHER_CTX_free(c); /* cleanses the key schedule */
	return rc;
}

static int ossl_aes256_cbc_encrypt(void *inst, uint8_t *out, const uint8_t key[32],
				   const uint8_t iv[16], const uint8_t *in, size_t len)
{
	return aes_cbc(inst, 1, out, key, iv, in, len);
}

static int ossl_aes256_cbc_decrypt(void *inst, uint8_t *out, const uint8_t key[32],
				   const uint8_t iv[16], const uint8_t *in, size_t len)
{
	return aes_cbc(inst, 0, out, key, iv, in, len);
}

/* ---- X25519 and Ed25519 --------------------------------------------------------------- */

static EVP_PKEY *import_key(ossl_inst *in, int kind, const uint8_t k[32])
{
	switch (kind) {
	case KC_X25519_PRIV:
		return EVP_PKEY_new_raw_private_key_ex(in->libctx, "X25519", NULL, k, 32);
	case KC_ED25519_PRIV:
		return EVP_PKEY_new_raw_private_key_ex(in->libctx, "ED25519", NULL, k, 32);
	default:
		return EVP_PKEY_new_raw_public_key_ex(in->libctx, "ED25519", NULL, k, 32);
	}
}

/* A key object for k, from the cache or freshly imported (then cached). The caller owns
 * one reference and releases it with EVP_PKEY_free (which cleanses private keys). */
static EVP_PKEY *cached_key(ossl_inst *in, int kind, const uint8_t k[32])
{
	EVP_PKEY *pk = NULL;
	pthread_mutex_lock(&in->kc_lock);
	for (int i = 0; i < KEY_CACHE_SLOTS && !pk; i++) {
		struct key_slot *s = &in->kc[kind][i];
		if (s->pk && CRYPTO_memcmp(s->key, k, 32) == 0 && EVP_PKEY_up_ref(s->pk) == 1)
			pk = s->pk;
	}
	pthread_mutex_unlock(&in->kc_lock);
	if (pk)
		return pk;
	pk = import_key(in, kind, k);
	if (!pk || EVP_PKEY_up_ref(pk) != 1)
		return pk; /* NULL, or usable but not cached */
	pthread_mutex_lock(&in->kc_lock);
	struct key_slot *s = &in->kc[kind][in->kc_next[kind]++ % KEY_CACHE_SLOTS];
	EVP_PKEY_free(s->pk);
	memcpy(s->key, k, 32);
	s->pk = pk;
	pthread_mutex_unlock(&in->kc_lock);
	return pk;
}

static EVP_PKEY *raw_private(ossl_inst *in, const char *alg, const uint8_t k[32])
{
	return cached_key(in, strcmp(alg, "X25519") == 0 ? KC_X25519_PRIV : KC_ED25519_PRIV, k);
}

static int public_of(ossl_inst *in, const char *alg, uint8_t pub[32], const uint8_t priv[32])
{
	EVP_PKEY *pk;
	size_t n = 32;
	int rc = 0;

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (pub == NULL || priv == NULL)
		return RNSC_ERR_INVAL;
	pk = raw_private(in, alg, priv);
	if (pk == NULL)
		return fail(in, RNSC_ERR_BADKEY, alg);
	if (EVP_PKEY_get_raw_public_key(pk, pub, &n) != 1 || n != 32)
		rc = fail(in, RNSC_ERR_CRYPTO, alg);
	EVP_PKEY_free(pk);
	return rc;
}

static int ossl_x25519_public(void *inst, uint8_t pub[32], const uint8_t priv[32])
{
	return public_of(ready(inst), "X25519", pub, priv);
}

static int ossl_x25519(void *inst, uint8_t shared[32], const uint8_t priv[32],
		       const uint8_t peer_pub[32])
{
	static const uint8_t zero[32];
	ossl_inst *in = ready(inst);
	EVP_PKEY *pk = NULL, *peer = NULL;
	EVP_PKEY_CTX *c = NULL;
	size_t n = 32;
	int rc = 0;

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (shared == NULL || priv == NULL || peer_pub == NULL)
		return RNSC_ERR_INVAL;
	pk = raw_private(in, "X25519", priv);
	peer = EVP_PKEY_new_raw_public_key_ex(in->libctx, "X25519", NULL, peer_pub, 32);
	if (pk == NULL || peer == NULL) {
		rc = fail(in, RNSC_ERR_BADKEY, "X25519 key import");
		goto out;
	}
	c = EVP_PKEY_CTX_new_from_pkey(in->libctx, pk, NULL);
	/* Peer validation is off so that the only failing step is the derive
	 * itself, which OpenSSL fails exactly when the result is all zero. */
	if (c == NULL || EVP_PKEY_derive_init(c) != 1 ||
	    EVP_PKEY_derive_set_peer_ex(c, peer, 0) != 1) {
		rc = fail(in, RNSC_ERR_CRYPTO, "X25519 derive setup");
		goto out;
	}
	if (EVP_PKEY_derive(c, shared, &n) != 1 || n != 32) {
		rc = quiet_fail(RNSC_ERR_LOW_ORDER);
		goto out;
	}
	/* Checked here too, in constant time, so the contract holds whatever
	 * the provider does with low-order input. */
	if (CRYPTO_memcmp(shared, zero, 32) == 0)
		rc = RNSC_ERR_LOW_ORDER;
out:
	if (rc != 0)
		OPENSSL_cleanse(shared, 32);
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(peer);
	EVP_PKEY_free(pk);
	return rc;
}

static int ossl_ed25519_public(void *inst, uint8_t pub[32], const uint8_t seed[32])
{
	return public_of(ready(inst), "ED25519", pub, seed);
}

static int ossl_ed25519_sign(void *inst, uint8_t sig[64], const uint8_t seed[32],
			     const uint8_t pub[32], const uint8_t *msg, size_t len)
{
	ossl_inst *in = ready(inst);
	EVP_MD_CTX *m = NULL;
	EVP_PKEY *pk;
	size_t n = 64;
	int rc = 0;

	/* OpenSSL derives the public key itself when it imports the seed, so the
	 * caller's cached copy is not needed here. */
	(void)pub;
	if (in == NULL)
		return RNSC_ERR_STATE;
	if (sig == NULL || seed == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	pk = raw_private(in, "ED25519", seed);
	if (pk == NULL)
		return fail(in, RNSC_ERR_BADKEY, "Ed25519 key import");
	m = EVP_MD_CTX_new();
	if (m == NULL || EVP_DigestSignInit_ex(m, NULL, NULL, in->libctx, NULL, pk, NULL) != 1 ||
	    EVP_DigestSign(m, sig, &n, nz(msg), len) != 1 || n != 64) {
		OPENSSL_cleanse(sig, 64);
		rc = fail(in, RNSC_ERR_CRYPTO, "Ed25519 sign");
	}
	EVP_MD_CTX_free(m);
	EVP_PKEY_free(pk);
	return rc;
}

static int ossl_ed25519_verify(void *inst, const uint8_t sig[64], const uint8_t pub[32],
			       const uint8_t *msg, size_t len)
{
	ossl_inst *in = ready(inst);
	EVP_MD_CTX *m;
	EVP_PKEY *pk;
	int rc, v;

	if (in == NULL)
		return RNSC_ERR_STATE;
	if (sig == NULL || pub == NULL || bad_buf(msg, len))
		return RNSC_ERR_INVAL;
	pk = cached_key(in, KC_ED25519_PUB, pub);
	if (pk == NULL)
		return quiet_fail(RNSC_ERR_BADKEY);
	m = EVP_MD_CTX_new();
	if (m == NULL || EVP_DigestVerifyInit_ex(m, NULL, NULL, in->libctx, NULL, pk, NULL) != 1) {
		rc = fail(in, RNSC_ERR_CRYPTO, "Ed25519 verify setup");
	} else {
		/* 1 valid, 0 invalid (including an undecodable point), <0 an
		 * internal error: all but 1 reject. */
		v = EVP_DigestVerify(m, sig, 64, nz(msg), len);
		if (v == 1)
			rc = 0;
		else if (v == 0)
			rc = quiet_fail(RNSC_ERR_SIGNATURE);
		else
			rc = fail(in, RNSC_ERR_CRYPTO, "Ed25519 verify");
	}
	EVP_MD_CTX_free(m);
	EVP_PKEY_free(pk);
	return rc;
}

/* ---- descriptor ----------------------------------------------------------------------- */

static const rnsc_crypto_ops ossl_ops = {
	.struct_size = sizeof(rnsc_crypto_ops),
	.self_test = ossl_self_test,
	.random = ossl_random,
	.sha256 = ossl_sha256,
	.sha512 = ossl_sha512,
	.hash_init = ossl_hash_init,
	.hash_update = ossl_hash_update,
	.hash_final = ossl_hash_final,
	.hash_abort = ossl_hash_abort,
	.hmac_sha256 = ossl_hmac_sha256,
	.hkdf_sha256 = ossl_hkdf_sha256,
	.aes256_cbc_encrypt = ossl_aes256_cbc_encrypt,
	.aes256_cbc_decrypt = ossl_aes256_cbc_decrypt,
	.x25519_public = ossl_x25519_public,
	.x25519 = ossl_x25519,
	.ed25519_public = ossl_ed25519_public,
	.ed25519_sign = ossl_ed25519_sign,
	.ed25519_verify = ossl_ed25519_verify,
	.hash_copy = ossl_hash_copy,
};

#define OSSL_CAPS                                                                                  \
	(RNSC_PRIM_BIT(RNSC_PRIM_RANDOM) | RNSC_PRIM_BIT(RNSC_PRIM_SHA256) |                       \
	 RNSC_PRIM_BIT(RNSC_PRIM_SHA512) | RNSC_PRIM_BIT(RNSC_PRIM_HASH_STREAM) |                  \
	 RNSC_PRIM_BIT(RNSC_PRIM_HMAC_SHA256) | RNSC_PRIM_BIT(RNSC_PRIM_HKDF_SHA256) |             \
	 RNSC_PRIM_BIT(RNSC_PRIM_AES256_CBC) | RNSC_PRIM_BIT(RNSC_PRIM_X25519) |                   \
	 RNSC_PRIM_BIT(RNSC_PRIM_ED25519))

static const rnsc_plugin_desc ossl_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_CRYPTO,
	.name = PLUGIN_NAME,
	.version = "1.0.0",
	.description = "OpenSSL 3 libcrypto via EVP (built against " OPENSSL_VERSION_TEXT ")",
	.caps = OSSL_CAPS,
	.inst_size = sizeof(ossl_inst),
	.ops = &ossl_ops,
	.init = ossl_init,
	.fini = ossl_fini,
};

static int ossl_self_test(void *inst)
{
	const char *what = NULL;
	int rc;

	if (ready(inst) == NULL)
		return RNSC_ERR_STATE;
	rc = kat_run(&ossl_ops, inst, OSSL_CAPS, &what);
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
	*out = &ossl_desc;
	return 0;
}
