/* SPDX-License-Identifier: MIT */
#include "identity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "token.h"

int rnsc_full_hash(rnsc_ctx *ctx, uint8_t out[RNSC_HASHLEN], const uint8_t *p, size_t len)
{
	return rnsc_sha256(ctx, out, p, len);
}

int rnsc_truncated_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN], const uint8_t *p,
			size_t len)
{
	uint8_t full[RNSC_HASHLEN];
	int rc = rnsc_sha256(ctx, full, p, len);
	if (rc == 0)
		memcpy(out, full, RNSC_TRUNCATED_HASHLEN);
	return rc;
}

int rnsc_random_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN])
{
	uint8_t rnd[RNSC_TRUNCATED_HASHLEN];
	int rc = rnsc_random(ctx, rnd, sizeof(rnd));
	return rc ? rc : rnsc_truncated_hash(ctx, out, rnd, sizeof(rnd));
}

static int update_hash(rnsc_identity *id)
{
	uint8_t pub[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(id, pub);
	return rnsc_truncated_hash(id->ctx, id->hash, pub, sizeof(pub));
}

int rnsc_identity_generate(rnsc_ctx *ctx, rnsc_identity *id)
{
	/* A private key is 64 random bytes (X25519 key, Ed25519 seed), as the reference makes. */
	uint8_t prv[RNSC_KEYSIZE];
	int rc = rnsc_random(ctx, prv, sizeof(prv));
	if (rc == 0)
		rc = rnsc_identity_from_private(ctx, id, prv, sizeof(prv));
	else
		memset(id, 0, sizeof(*id));
	rnsc_memzero(prv, sizeof(prv));
	return rc;
}

int rnsc_identity_from_private(rnsc_ctx *ctx, rnsc_identity *id, const uint8_t *prv, size_t len)
{
	if (!ctx || !id || !prv)
		return RNSC_ERR_INVAL;
	if (len != RNSC_KEYSIZE)
		return RNSC_ERR_KEYLEN;
	memset(id, 0, sizeof(*id));
	id->ctx = ctx;
	memcpy(id->x_priv, prv, 32);
	memcpy(id->ed_seed, prv + 32, 32);
	int rc = rnsc_x25519_public(ctx, id->x_pub, id->x_priv);
	if (rc == 0)
		rc = rnsc_ed25519_public(ctx, id->ed_pub, id->ed_seed);
	if (rc == 0)
		rc = update_hash(id);
	if (rc) {
		rnsc_identity_free(id);
		return rc;
	}
	id->has_private = 1;
	return 0;
}

int rnsc_identity_from_public(rnsc_ctx *ctx, rnsc_identity *id, const uint8_t *pub, size_t len)
{
	if (!ctx || !id || !pub)
		return RNSC_ERR_INVAL;
	if (len != RNSC_KEYSIZE)
		return RNSC_ERR_KEYLEN;
	memset(id, 0, sizeof(*id));
	id->ctx = ctx;
	memcpy(id->x_pub, pub, 32);
	memcpy(id->ed_pub, pub + 32, 32);
	return update_hash(id);
}

void rnsc_identity_free(rnsc_identity *id)
{
	if (!id)
		return;
	rnsc_memzero(id->x_priv, sizeof(id->x_priv));
	rnsc_memzero(id->ed_seed, sizeof(id->ed_seed));
	id->has_private = 0;
}

int rnsc_identity_private_bytes(const rnsc_identity *id, uint8_t out[RNSC_KEYSIZE])
{
	if (!id->has_private)
		return RNSC_ERR_NOKEY;
	memcpy(out, id->x_priv, 32);
	memcpy(out + 32, id->ed_seed, 32);
	return 0;
}

void rnsc_identity_public_bytes(const rnsc_identity *id, uint8_t out[RNSC_KEYSIZE])
{
	memcpy(out, id->x_pub, 32);
	memcpy(out + 32, id->ed_pub, 32);
}

static int errno_to_rnsc(int e)
{
	switch (e) {
	case ENOENT:
		return RNSC_ERR_NOENT;
	case EACCES:
	case EPERM:
		return RNSC_ERR_PERM;
	default:
		return RNSC_ERR_IO;
	}
}

int rnsc_identity_load_file(rnsc_ctx *ctx, rnsc_identity *id, const char *path)
{
	uint8_t buf[RNSC_KEYSIZE + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno_to_rnsc(errno);
	size_t got = 0;
	while (got < sizeof(buf)) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			rnsc_memzero(buf, sizeof(buf));
			return errno_to_rnsc(e);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	int rc = got == RNSC_KEYSIZE ? rnsc_identity_from_private(ctx, id, buf, got)
				     : RNSC_ERR_KEYLEN;
	rnsc_memzero(buf, sizeof(buf));
	return rc;
}

int rnsc_identity_save_file(const rnsc_identity *id, const char *path)
{
	uint8_t prv[RNSC_KEYSIZE];
	int rc = rnsc_identity_private_bytes(id, prv);
	if (rc)
		return rc;
	char tmp[4096];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp))
		return RNSC_ERR_INVAL;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rnsc_memzero(prv, sizeof(prv));
		return errno_to_rnsc(errno);
	}
	size_t put = 0;
	while (put < sizeof(prv)) {
		ssize_t n = write(fd, prv + put, sizeof(prv) - put);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		put += (size_t)n;
	}
	rnsc_memzero(prv, sizeof(prv));
	int e = 0;
	if (put != sizeof(prv) || fsync(fd) != 0)
		e = errno ? errno : EIO;
	if (close(fd) != 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) != 0)
		e = errno;
	if (e) {
		unlink(tmp);
		return errno_to_rnsc(e);
	}
	return 0;
}

int rnsc_identity_sign(const rnsc_identity *id, uint8_t sig[RNSC_SIGLEN], const uint8_t *msg,
		       size_t len)
{
	if (!id->has_private)
		return RNSC_ERR_NOKEY;
	return rnsc_ed25519_sign(id->ctx, sig, id->ed_seed, id->ed_pub, msg, len);
}

int rnsc_identity_verify(const rnsc_identity *id, const uint8_t *sig, size_t sig_len,
			 const uint8_t *msg, size_t len)
{
	if (sig_len != RNSC_SIGLEN)
		return RNSC_ERR_SIGNATURE;
	return rnsc_ed25519_verify(id->ctx, sig, id->ed_pub, msg, len);
}

size_t rnsc_identity_token_len(size_t len)
{
	return 32 + rnsc_token_len(len);
}

/* ECDH result → 64-byte token key, salted with the identity hash (no info). */
static int derive_token(const rnsc_identity *id, rnsc_token *tok, const uint8_t shared[32])
{
	uint8_t key[RNSC_DERIVED_KEY_LEN];
	int rc = rnsc_hkdf_sha256(id->ctx, key, sizeof(key), shared, 32, id->hash,
				  RNSC_TRUNCATED_HASHLEN, NULL, 0);
	if (rc == 0)
		rc = rnsc_token_init(tok, id->ctx, key, sizeof(key));
	rnsc_memzero(key, sizeof(key));
	return rc;
}

int rnsc_identity_encrypt(const rnsc_identity *id, uint8_t *out, size_t cap, const uint8_t *pt,
			  size_t len, const uint8_t *ratchet_pub)
{
	size_t total = rnsc_identity_token_len(len);
	if (cap < total)
		return RNSC_ERR_BUFSIZE;
	uint8_t eph[32], shared[32];
	rnsc_token tok;
	int rc = rnsc_x25519_generate(id->ctx, eph, out);
	if (rc == 0)
		rc = rnsc_x25519(id->ctx, shared, eph, ratchet_pub ? ratchet_pub : id->x_pub);
	rnsc_memzero(eph, sizeof(eph));
	if (rc == 0)
		rc = derive_token(id, &tok, shared);
	rnsc_memzero(shared, sizeof(shared));
	if (rc)
		return rc;
	rc = rnsc_token_encrypt(&tok, out + 32, cap - 32, pt, len);
	rnsc_token_free(&tok);
	return rc < 0 ? rc : rc + 32;
}

static int decrypt_with(const rnsc_identity *id, const uint8_t priv[32], uint8_t *out, size_t cap,
			const uint8_t *token, size_t len)
{
	uint8_t shared[32];
	rnsc_token tok;
	int rc = rnsc_x25519(id->ctx, shared, priv, token);
	if (rc == 0)
		rc = derive_token(id, &tok, shared);
	rnsc_memzero(shared, sizeof(shared));
	if (rc)
		return rc;
	rc = rnsc_token_decrypt(&tok, out, cap, token + 32, len - 32);
	rnsc_token_free(&tok);
	return rc;
}

int rnsc_identity_decrypt(const rnsc_identity *id, uint8_t *out, size_t cap, const uint8_t *token,
			  size_t len, const uint8_t (*ratchets)[32], size_t n_ratchets,
			  int enforce_ratchets, int *used_ratchet)
{
	if (used_ratchet)
		*used_ratchet = -1;
	if (!id->has_private)
		return RNSC_ERR_NOKEY;
	if (len <= 32 + RNSC_TOKEN_OVERHEAD)
		return RNSC_ERR_TRUNCATED;
	for (size_t i = 0; ratchets && i < n_ratchets; i++) {
		int rc = decrypt_with(id, ratchets[i], out, cap, token, len);
		if (rc >= 0) {
			if (used_ratchet)
				*used_ratchet = (int)i;
			return rc;
		}
		/* A malformed token fails the same way for every key; stop early. */
		if (rc == RNSC_ERR_TRUNCATED || rc == RNSC_ERR_LOW_ORDER || rc == RNSC_ERR_BUFSIZE)
			return rc;
	}
	if (enforce_ratchets)
		return RNSC_ERR_DECRYPT;
	return decrypt_with(id, id->x_priv, out, cap, token, len);
}

int rnsc_ratchet_generate(rnsc_ctx *ctx, uint8_t priv[RNSC_RATCHETSIZE])
{
	return rnsc_random(ctx, priv, RNSC_RATCHETSIZE);
}

int rnsc_ratchet_public(rnsc_ctx *ctx, uint8_t pub[RNSC_RATCHETSIZE],
			const uint8_t priv[RNSC_RATCHETSIZE])
{
	return rnsc_x25519_public(ctx, pub, priv);
}

int rnsc_ratchet_id(rnsc_ctx *ctx, uint8_t out[RNSC_RATCHET_ID_LEN],
		    const uint8_t pub[RNSC_RATCHETSIZE])
{
	uint8_t full[RNSC_HASHLEN];
	int rc = rnsc_sha256(ctx, full, pub, RNSC_RATCHETSIZE);
	if (rc == 0)
		memcpy(out, full, RNSC_RATCHET_ID_LEN);
	return rc;
}
