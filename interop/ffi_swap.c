/* SPDX-License-Identifier: MIT */
/*
 * Plain C entry points that the reference harness calls through ctypes (libffi) while rnsc's
 * crypto is swapped into RNS (see rnsc_pyref_swap_crypto in pyref.h).
 *
 * Each entry point takes the binding as its first argument instead of reading a global, so the
 * table describes functions, the binding says which context they run on, and nothing here
 * depends on there being only one binding. The binding counts calls per primitive, which is how
 * a test proves that the reference really ran on rnsc's code.
 *
 * libffi is used twice: by ctypes inside Python, and directly here to check, before Python sees
 * the table, that the signature strings describe the functions (rnsc_ffi_binding_check).
 *
 * Threading: ctypes releases the GIL around foreign calls, so these run without it; counters
 * are atomic. A binding must stay alive while Python holds its address (pyref.c frees it only
 * after the harness has removed the patch).
 */
#include "pyref_internal.h"

#include <ffi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct rnsc_ffi_binding {
	rnsc_ctx *ctx; /* borrowed */
	atomic_ulong calls[RNSC_PRIM_COUNT];
};

struct rnsc_ffi_binding *rnsc_ffi_binding_new(rnsc_ctx *crypto_ctx)
{
	struct rnsc_ffi_binding *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->ctx = crypto_ctx;
	for (int i = 0; i < RNSC_PRIM_COUNT; i++)
		atomic_init(&b->calls[i], 0);
	return b;
}

void rnsc_ffi_binding_del(struct rnsc_ffi_binding *b)
{
	free(b);
}

unsigned long rnsc_ffi_binding_calls(const struct rnsc_ffi_binding *b, enum rnsc_prim prim)
{
	if (!b || (unsigned)prim >= RNSC_PRIM_COUNT)
		return 0;
	return atomic_load(&b->calls[prim]);
}

static rnsc_ctx *use(void *bp, enum rnsc_prim prim)
{
	struct rnsc_ffi_binding *b = bp;
	atomic_fetch_add(&b->calls[prim], 1);
	return b->ctx;
}

static int ffi_random(void *b, uint8_t *out, size_t len)
{
	return rnsc_random(use(b, RNSC_PRIM_RANDOM), out, len);
}

static int ffi_sha256(void *b, uint8_t *out, const uint8_t *msg, size_t len)
{
	return rnsc_sha256(use(b, RNSC_PRIM_SHA256), out, msg, len);
}

static int ffi_sha512(void *b, uint8_t *out, const uint8_t *msg, size_t len)
{
	return rnsc_sha512(use(b, RNSC_PRIM_SHA512), out, msg, len);
}

static int ffi_hmac_sha256(void *b, uint8_t *out, const uint8_t *key, size_t key_len,
			   const uint8_t *msg, size_t msg_len)
{
	return rnsc_hmac_sha256(use(b, RNSC_PRIM_HMAC_SHA256), out, key, key_len, msg, msg_len);
}

static int ffi_hkdf_sha256(void *b, uint8_t *out, size_t out_len, const uint8_t *ikm,
			   size_t ikm_len, const uint8_t *salt, size_t salt_len,
			   const uint8_t *info, size_t info_len)
{
	return rnsc_hkdf_sha256(use(b, RNSC_PRIM_HKDF_SHA256), out, out_len, ikm, ikm_len, salt,
				salt_len, info, info_len);
}

static int ffi_aes_enc(void *b, uint8_t *out, const uint8_t *key, const uint8_t *iv,
		       const uint8_t *in, size_t len)
{
	return rnsc_aes256_cbc_encrypt(use(b, RNSC_PRIM_AES256_CBC), out, key, iv, in, len);
}

static int ffi_aes_dec(void *b, uint8_t *out, const uint8_t *key, const uint8_t *iv,
		       const uint8_t *in, size_t len)
{
	return rnsc_aes256_cbc_decrypt(use(b, RNSC_PRIM_AES256_CBC), out, key, iv, in, len);
}

static int ffi_x25519_public(void *b, uint8_t *pub, const uint8_t *priv)
{
	return rnsc_x25519_public(use(b, RNSC_PRIM_X25519), pub, priv);
}

static int ffi_x25519(void *b, uint8_t *shared, const uint8_t *priv, const uint8_t *peer)
{
	return rnsc_x25519(use(b, RNSC_PRIM_X25519), shared, priv, peer);
}

static int ffi_ed25519_public(void *b, uint8_t *pub, const uint8_t *seed)
{
	return rnsc_ed25519_public(use(b, RNSC_PRIM_ED25519), pub, seed);
}

static int ffi_ed25519_sign(void *b, uint8_t *sig, const uint8_t *seed, const uint8_t *pub,
			    const uint8_t *msg, size_t len)
{
	return rnsc_ed25519_sign(use(b, RNSC_PRIM_ED25519), sig, seed, pub, msg, len);
}

static int ffi_ed25519_verify(void *b, const uint8_t *sig, const uint8_t *pub, const uint8_t *msg,
			      size_t len)
{
	return rnsc_ed25519_verify(use(b, RNSC_PRIM_ED25519), sig, pub, msg, len);
}

/* The table handed to Python. sig describes the parameters, one letter each, and is the only
 * description of these signatures: the harness builds its ctypes prototypes from it, and
 * rnsc_ffi_binding_check() prepares libffi call interfaces from it and calls through them.
 *   p  pointer the callee reads or writes (binding, output buffer)   -> c_void_p / ffi pointer
 *   b  input bytes                                                   -> c_char_p / ffi pointer
 *   n  size_t                                                        -> c_size_t / ffi size_t
 * Every entry returns int (0 / length or a negative rnsc_err). */
struct ffi_entry {
	const char *name;
	const char *sig;
	void (*fn)(void);
};

/* Converting between function pointer types is defined as long as the call goes through the
 * right type, which is what libffi and ctypes do with the signature above. */
#define ENTRY(name, sig, fn)                                                                       \
	{                                                                                          \
		name, sig, (void (*)(void))(fn)                                                    \
	}

static const struct ffi_entry entries[] = {
	ENTRY("random", "ppn", ffi_random),
	ENTRY("sha256", "ppbn", ffi_sha256),
	ENTRY("sha512", "ppbn", ffi_sha512),
	ENTRY("hmac_sha256", "ppbnbn", ffi_hmac_sha256),
	ENTRY("hkdf_sha256", "ppnbnbnbn", ffi_hkdf_sha256),
	ENTRY("aes256_cbc_encrypt", "ppbbbn", ffi_aes_enc),
	ENTRY("aes256_cbc_decrypt", "ppbbbn", ffi_aes_dec),
	ENTRY("x25519_public", "ppb", ffi_x25519_public),
	ENTRY("x25519", "ppbb", ffi_x25519),
	ENTRY("ed25519_public", "ppb", ffi_ed25519_public),
	ENTRY("ed25519_sign", "ppbbbn", ffi_ed25519_sign),
	ENTRY("ed25519_verify", "pbbbn", ffi_ed25519_verify),
};
#define N_ENTRIES (sizeof(entries) / sizeof(entries[0]))
#define MAX_ARGS 9

static int prep(ffi_cif *cif, ffi_type **types, const char *sig)
{
	size_t n = strlen(sig);
	if (n > MAX_ARGS)
		return RNSC_ERR_FATAL;
	for (size_t i = 0; i < n; i++) {
		switch (sig[i]) {
		case 'p':
		case 'b':
			types[i] = &ffi_type_pointer;
			break;
		case 'n':
			/* size_t has no ffi_type of its own; pick the unsigned type of its width */
			types[i] = sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32;
			break;
		default:
			return RNSC_ERR_FATAL;
		}
	}
	return ffi_prep_cif(cif, FFI_DEFAULT_ABI, (unsigned)n, &ffi_type_sint, types) == FFI_OK
		       ? 0
		       : RNSC_ERR_FATAL;
}

int rnsc_ffi_binding_check(struct rnsc_ffi_binding *b)
{
	ffi_cif cif;
	ffi_type *types[MAX_ARGS];
	for (size_t i = 0; i < N_ENTRIES; i++)
		if (prep(&cif, types, entries[i].sig))
			return RNSC_ERR_FATAL;

	/* One real call through libffi, the way ctypes will make it, against a direct call. */
	static const uint8_t msg[] = "rnsc ffi probe";
	uint8_t via_ffi[32], direct[32];
	void *bp = b;
	uint8_t *outp = via_ffi;
	const uint8_t *msgp = msg;
	size_t len = sizeof(msg) - 1;
	void *argv[] = {&bp, &outp, &msgp, &len};
	ffi_arg rc = 0;
	const struct ffi_entry *e = NULL;
	for (size_t i = 0; i < N_ENTRIES; i++)
		if (strcmp(entries[i].name, "sha256") == 0)
			e = &entries[i];
	if (!e || prep(&cif, types, e->sig))
		return RNSC_ERR_FATAL;
	ffi_call(&cif, e->fn, &rc, argv);
	int direct_rc = rnsc_sha256(b->ctx, direct, msg, len);
	for (int i = 0; i < RNSC_PRIM_COUNT; i++)
		atomic_store(&b->calls[i], 0); /* the probe is not the reference's doing */
	if ((int)rc != direct_rc)
		return (int)rc < 0 ? (int)rc : RNSC_ERR_FATAL;
	if (direct_rc == 0 && memcmp(via_ffi, direct, sizeof(direct)) != 0)
		return RNSC_ERR_FATAL;
	return direct_rc;
}

PyObject *rnsc_ffi_binding_table(void)
{
	PyObject *t = PyDict_New(), *names = PyDict_New();
	if (!t || !names)
		goto fail;
	for (size_t i = 0; i < N_ENTRIES; i++) {
		PyObject *e = Py_BuildValue("(Ks)", (unsigned long long)(uintptr_t)entries[i].fn,
					    entries[i].sig);
		int rc = e ? PyDict_SetItemString(t, entries[i].name, e) : -1;
		Py_XDECREF(e);
		if (rc < 0)
			goto fail;
	}
	/* Error codes come back as ints; the harness turns them into names it can raise. */
#define RNSC_X_NAME(sym, value, text)                                                              \
	do {                                                                                       \
		PyObject *k = PyLong_FromLong(value), *v = PyUnicode_FromString(#sym);             \
		int rc = k && v ? PyDict_SetItem(names, k, v) : -1;                                \
		Py_XDECREF(k);                                                                     \
		Py_XDECREF(v);                                                                     \
		if (rc < 0)                                                                        \
			goto fail;                                                                 \
	} while (0);
	RNSC_ERRORS(RNSC_X_NAME)
#undef RNSC_X_NAME
	if (PyDict_SetItemString(t, "errnames", names) < 0)
		goto fail;
	Py_DECREF(names);
	return t;
fail:
	Py_XDECREF(t);
	Py_XDECREF(names);
	return NULL;
}
