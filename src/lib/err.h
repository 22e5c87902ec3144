/* SPDX-License-Identifier: MIT */
/*
 * One error list for all of rnsc. Functions return 0 (or a length) on success
 * and a negative rnsc_err on failure. The list is an X-macro so the enum,
 * rnsc_strerror() and rnsc_err_name() can never drift apart.
 *
 * Bands (keep codes inside their band when appending):
 *   -1..-19    argument / state
 *   -20..-49   wire / parse
 *   -50..-79   crypto / auth
 *   -80..-109  plugin / ABI
 *   -110..-139 I/O and system
 *   -140..-159 interop (embedded reference)
 *   -200..     fatal
 */
#ifndef RNSC_ERR_H
#define RNSC_ERR_H

#define RNSC_ERRORS(X)                                                                  \
	X(RNSC_OK, 0, "success")                                                        \
	X(RNSC_ERR_INVAL, -1, "invalid argument")                                       \
	X(RNSC_ERR_NOMEM, -2, "out of memory")                                          \
	X(RNSC_ERR_STATE, -3, "operation not valid in the current state")               \
	X(RNSC_ERR_BUFSIZE, -4, "output buffer too small")                              \
	X(RNSC_ERR_NOKEY, -5, "object holds no key for this operation")                 \
	X(RNSC_ERR_NOTFOUND, -6, "not found")                                           \
	X(RNSC_ERR_RANGE, -7, "value out of range")                                     \
	X(RNSC_ERR_TRUNCATED, -20, "input truncated")                                   \
	X(RNSC_ERR_MALFORMED, -21, "malformed input")                                   \
	X(RNSC_ERR_TOOBIG, -22, "input exceeds the size limit")                         \
	X(RNSC_ERR_KEYLEN, -23, "wrong key length")                                     \
	X(RNSC_ERR_NAME, -24, "invalid app name or aspect (dots are not allowed)")      \
	X(RNSC_ERR_AUTH, -50, "authentication failed (HMAC mismatch)")                  \
	X(RNSC_ERR_SIGNATURE, -51, "signature verification failed")                     \
	X(RNSC_ERR_PADDING, -52, "invalid PKCS#7 padding")                              \
	X(RNSC_ERR_LOW_ORDER, -53, "X25519 result is all zero (low-order point)")       \
	X(RNSC_ERR_BADKEY, -54, "key material rejected by the backend")                 \
	X(RNSC_ERR_NOPRIM, -55, "no loaded crypto backend serves this primitive")       \
	X(RNSC_ERR_SELFTEST, -56, "crypto backend failed its known-answer self-test")   \
	X(RNSC_ERR_CRYPTO, -57, "crypto backend reported an internal failure")          \
	X(RNSC_ERR_RNG, -58, "random number generator failed")                          \
	X(RNSC_ERR_DECRYPT, -59, "decryption failed with every available key")          \
	X(RNSC_ERR_DLOPEN, -80, "plugin file could not be loaded (dlopen)")             \
	X(RNSC_ERR_NOSYM, -81, "plugin does not export rnsc_plugin_init")               \
	X(RNSC_ERR_ABI, -82, "plugin ABI version or descriptor size mismatch")          \
	X(RNSC_ERR_PLUGIN_INIT, -83, "plugin initialisation failed")                    \
	X(RNSC_ERR_PLUGIN_DESC, -84, "plugin descriptor is invalid")                    \
	X(RNSC_ERR_DUPLICATE, -85, "a plugin with this name is already loaded")         \
	X(RNSC_ERR_IO, -110, "input/output error")                                      \
	X(RNSC_ERR_NOENT, -111, "no such file or directory")                            \
	X(RNSC_ERR_PERM, -112, "permission denied")                                     \
	X(RNSC_ERR_SYS, -113, "system call failed")                                     \
	X(RNSC_ERR_PYTHON, -140, "embedded reference raised an exception")              \
	X(RNSC_ERR_NOREF, -141, "embedded reference (pinned rns) could not be imported") \
	X(RNSC_ERR_FATAL, -200, "internal error")

enum rnsc_err {
#define RNSC_X_ENUM(name, value, text) name = (value),
	RNSC_ERRORS(RNSC_X_ENUM)
#undef RNSC_X_ENUM
};

#if defined(__GNUC__)
#define RNSC_MUST_CHECK __attribute__((warn_unused_result))
#else
#define RNSC_MUST_CHECK
#endif

#if defined(RNSC_BUILDING_LIB) && defined(__GNUC__)
#define RNSC_API __attribute__((visibility("default")))
#else
#define RNSC_API
#endif

/* Human-readable text for an error code; never NULL (unknown codes get a generic text). */
RNSC_API const char *rnsc_strerror(int err);
/* Symbolic name such as "RNSC_ERR_AUTH"; never NULL. */
RNSC_API const char *rnsc_err_name(int err);
/* Parse a symbolic name back into its code; returns 1 and sets *out on success, 0 if unknown. */
RNSC_API int rnsc_err_from_name(const char *name, int *out);

#endif
