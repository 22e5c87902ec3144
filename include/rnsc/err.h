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

#define RNSC_ERRORS(X)                                                                             \
	X(RNSC_OK, 0, "success")                                                                   \
	X(RNSC_ERR_INVAL, -1, "invalid argument")                                                  \
	X(RNSC_ERR_NOMEM, -2, "out of memory")                                                     \
	X(RNSC_ERR_STATE, -3, "operation not valid in the current state")                          \
	X(RNSC_ERR_BUFSIZE, -4, "output buffer too small")                                         \
	X(RNSC_ERR_NOKEY, -5, "object holds no key for this operation")                            \
	X(RNSC_ERR_NOTFOUND, -6, "not found")                                                      \
	X(RNSC_ERR_RANGE, -7, "value out of range")                                                \
	X(RNSC_ERR_TRUNCATED, -20, "input truncated")                                              \
	X(RNSC_ERR_MALFORMED, -21, "malformed input")                                              \
	X(RNSC_ERR_TOOBIG, -22, "input exceeds the size limit")                                    \
	X(RNSC_ERR_KEYLEN, -23, "wrong key length")                                                \
	X(RNSC_ERR_NAME, -24, "invalid app name or aspect (dots are not allowed)")                 \
	X(RNSC_ERR_HOPS, -25, "hop count at or beyond the path limit (128)")                       \
	X(RNSC_ERR_DEST_MISMATCH, -26, "destination hash does not match name and identity")        \
	X(RNSC_ERR_IFAC, -27, "interface access code does not match")                              \
	X(RNSC_ERR_IFAC_MISSING, -28, "IFAC flag missing on an IFAC-enabled interface")            \
	X(RNSC_ERR_IFAC_UNEXPECTED, -29, "IFAC flag set on an interface without IFAC")             \
	X(RNSC_ERR_NOTAG, -30, "path request without a tag")                                       \
	X(RNSC_ERR_LINK_MODE, -31, "link mode not enabled")                                        \
	X(RNSC_ERR_PROOF_HASH, -32, "proof names a different packet")                              \
	X(RNSC_ERR_VERSION, -40, "unsupported format version")                                     \
	X(RNSC_ERR_CONFIG_SYNTAX, -45, "configuration file syntax error")                          \
	X(RNSC_ERR_CONFIG_DUP, -46, "duplicate section or option in configuration")                \
	X(RNSC_ERR_CONFIG_VALUE, -47, "configuration value has the wrong type or form")            \
	X(RNSC_ERR_CONFIG_INTERP, -48, "configuration value interpolation failed")                 \
	X(RNSC_ERR_AUTH, -50, "authentication failed (HMAC mismatch)")                             \
	X(RNSC_ERR_SIGNATURE, -51, "signature verification failed")                                \
	X(RNSC_ERR_PADDING, -52, "invalid PKCS#7 padding")                                         \
	X(RNSC_ERR_LOW_ORDER, -53, "X25519 result is all zero (low-order point)")                  \
	X(RNSC_ERR_BADKEY, -54, "key material rejected by the backend")                            \
	X(RNSC_ERR_NOPRIM, -55, "no loaded crypto backend serves this primitive")                  \
	X(RNSC_ERR_SELFTEST, -56, "crypto backend failed its known-answer self-test")              \
	X(RNSC_ERR_CRYPTO, -57, "crypto backend reported an internal failure")                     \
	X(RNSC_ERR_RNG, -58, "random number generator failed")                                     \
	X(RNSC_ERR_DECRYPT, -59, "decryption failed with every available key")                     \
	X(RNSC_ERR_DLOPEN, -80, "plugin file could not be loaded (dlopen)")                        \
	X(RNSC_ERR_NOSYM, -81, "plugin does not export rnsc_plugin_init")                          \
	X(RNSC_ERR_ABI, -82, "plugin ABI version or descriptor size mismatch")                     \
	X(RNSC_ERR_PLUGIN_INIT, -83, "plugin initialisation failed")                               \
	X(RNSC_ERR_PLUGIN_DESC, -84, "plugin descriptor is invalid")                               \
	X(RNSC_ERR_DUPLICATE, -85, "a plugin with this name is already loaded")                    \
	X(RNSC_ERR_IO, -110, "input/output error")                                                 \
	X(RNSC_ERR_NOENT, -111, "no such file or directory")                                       \
	X(RNSC_ERR_PERM, -112, "permission denied")                                                \
	X(RNSC_ERR_SYS, -113, "system call failed")                                                \
	X(RNSC_ERR_NOSPC, -130, "no space left on device")                                         \
	X(RNSC_ERR_PYTHON, -140, "embedded reference raised an exception")                         \
	X(RNSC_ERR_NOREF, -141, "embedded reference (pinned rns) could not be imported")           \
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

#include "export.h"

/* Human-readable text for an error code; never NULL (unknown codes get a generic text). */
RNSC_API const char *rnsc_strerror(int err);
/* Symbolic name such as "RNSC_ERR_AUTH"; never NULL. */
RNSC_API const char *rnsc_err_name(int err);
/* Parse a symbolic name back into its code; returns 1 and sets *out on success, 0 if unknown. */
RNSC_API int rnsc_err_from_name(const char *name, int *out);

#endif
