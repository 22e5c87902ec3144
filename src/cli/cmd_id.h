/* SPDX-License-Identifier: MIT */
/* rnsc id (the reference's rnid): the pieces shared by cmd_id.c (options, identity
 * resolution, terminal output, network operations) and cmd_id_crypt.c (rsg signatures,
 * file encryption, text encodings). Everything here runs on the CLI's one thread; the
 * id_args strings point into argv. */
#ifndef RNSC_CLI_CMD_ID_H
#define RNSC_CLI_CMD_ID_H

#include <stddef.h>
#include <stdint.h>

#include "identity.h"

/* rnid's exit codes (RNS/Utilities/rnid.py), which rnsc id keeps. */
enum {
	RID_OK = 0,
	RID_NO_SIG_FILE = 1,
	RID_NO_IDENTITY = 2,
	RID_NO_PUBKEY = 3,
	RID_NO_PRVKEY = 4,
	RID_NO_KEYS = 5,
	RID_NO_FILE = 6,
	RID_INVALID_FILE = 7,
	RID_INVALID_IDENTITY = 8,
	RID_INVALID_ASPECTS = 9,
	RID_INVALID_SIGNATURE = 10,
	RID_FILE_EXISTS = 11,
	RID_DECRYPT_FAILED = 12,
	RID_INVALID_ARGS = 250,
	RID_SEQUENCE_ERROR = 251,
	RID_READ_ERROR = 252,
	RID_WRITE_ERROR = 253,
	RID_UNKNOWN_ERROR = 254,
	RID_CONTINUE = -1, /* not an exit code: the operation finished, go on to the next */
};

/* Text encodings of -B/-b/-U/-F (bin = none selected). */
enum id_fmt { FMT_BIN = 0, FMT_BASE32, FMT_BASE64, FMT_BASE256, FMT_HEX };

#define ID_MAX_LIST 64 /* files per -s/-V/-e/-d */

typedef struct id_list {
	int given;
	size_t n;
	const char *v[ID_MAX_LIST];
} id_list;

typedef struct id_args {
	const char *config, *identity, *generate, *import_pub, *import_prv;
	const char *announce, *hash, *sign_message, *embed_meta, *meta_spec;
	const char *write, *read;
	id_list decrypt, encrypt, validate, sign;
	int export_pub, export_prv, verbose, quiet, raw, force, in_stdin, out_stdout;
	int request, no_cache, print_identity, print_private, meta;
	int sign_message_given, sign_message_empty; /* -S without text: NO_MESSAGE */
	int embed_meta_given;
	double timeout;
	enum id_fmt fmt;
	int b32, b64, b256, hexf;
} id_args;

/* The working identity: a parsed key, or (with_str) only the hex text given to -i, which
 * rnid uses as a required signer or for -H. */
typedef struct id_work {
	int have;
	rnsc_identity id;
} id_work;

/* "<hex>" of 16 bytes: out holds 35. */
void id_pretty(char *out, const uint8_t h[RNSC_TRUNCATED_HASHLEN]);

/* Encodings (Python's base64 module and RNS.b256rep). Encoders return a malloc'ed
 * NUL-terminated string (NULL: out of memory). Decoders return the byte count or -1. */
char *id_enc(enum id_fmt fmt, const uint8_t *p, size_t len);
long id_b32_decode(uint8_t *out, size_t cap, const char *s);
long id_b64_decode(uint8_t *out, size_t cap, const char *s);

/* validate_rsg over an .rsg/.rsm file's bytes against a content hash (and an optional
 * required signer hash): 1 valid, 2 not valid but the signer's key was read (*signer set),
 * 0 not an rsg. For the fuzz target (tests/fuzz/fuzz_rsg.c). */
int id_rsg_check(rnsc_ctx *ctx, const uint8_t *rsg, size_t len, const uint8_t hash[32],
		 const uint8_t *req_hash, uint8_t signer[RNSC_TRUNCATED_HASHLEN]);

/* Operations of cmd_id_crypt.c; each returns an exit code or RID_CONTINUE. */
int id_op_sign(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id);
int id_op_sign_message(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id);
int id_op_validate(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id);
int id_op_encrypt(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id);
int id_op_decrypt(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id);

/* cmd_id_meta.c: -E's metadata file (checked against spec_path when not NULL) as msgpack
 * key/value pairs for the rsg "meta" map, without rnid's own signer and pubkey. On success
 * *kv (malloc'ed, caller frees; NULL when empty) holds *n_pairs pairs; on failure returns
 * -1 with the reason in why. */
int id_meta_load(const char *path, const char *spec_path, uint8_t **kv, size_t *kv_len,
		 size_t *n_pairs, char *why, size_t why_cap);
/* The same over texts in memory (spec NULL: none), for the fuzz target. */
int id_meta_parse(const char *text, size_t len, const char *spec, size_t spec_len, uint8_t **kv,
		  size_t *kv_len, size_t *n_pairs, char *why, size_t why_cap);

#endif
