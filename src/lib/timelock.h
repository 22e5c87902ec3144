/* SPDX-License-Identifier: MIT */
/*
 * Time-lock files: a payload encrypted under keys that only the end of a long, strictly
 * sequential RandomX hash chain yields. Nobody, the sealer included, can reach the end faster
 * than by computing every step in order: each step's input is the previous step's output, so
 * the work cannot be split across cores or pipelined. Sealing runs the same chain once (a hash
 * chain has no trapdoor), so `seal --seconds S` takes about S seconds on the sealing machine.
 *
 * The chain (format version 1):
 *
 *   x_0     = seed                                          (32 random bytes, in the header)
 *   x_{i+1} = RandomX_K( x_i || LE32(i) || C )              for i = 0 .. steps - 1
 *             \__ 68 bytes: 32-byte previous result, 4-byte little-endian step counter,
 *                 32-byte per-file context C __/
 *   K       = the header's RandomX key (32 random bytes: one cache/dataset per file)
 *   C       = SHA-256("rnsc-timelock-v1 context" || header[0..104))
 *   RandomX version 1 or 2 as the header says; light and full-memory mode give the same hashes.
 *
 * Keys from the chain end (HKDF-SHA256, RFC 5869):
 *   okm     = HKDF(ikm = x_steps, salt = SHA-256(header[0..120)), info = "rnsc-timelock-v1 keys",
 *                  64 bytes);  mac_key = okm[0..32), enc_key = okm[32..64)
 *
 * File layout (all integers little-endian):
 *   offset size
 *     0      8  magic "RNSCTLCK"
 *     8      1  format version (1)
 *     9      1  algorithm: 1 = RandomX v1, 2 = RandomX v2
 *    10      1  mode the sealer used: 0 = light, 1 = full-memory (a hint for the opener)
 *    11      1  reserved, 0
 *    12      4  checkpoint interval in steps (how often `open` saves its progress), >= 1
 *    16      8  steps, 1 .. 2^32 - 1 (the step counter is 32 bits)
 *    24      8  ciphertext length: a multiple of 16, 16 .. RNSC_TL_MAX_PAYLOAD + 16
 *    32      4  sealer's measured rate in milli-hashes per second (informational; 0 unknown)
 *    36      4  reserved, 0
 *    40     32  RandomX key K
 *    72     32  seed x_0
 *   104     16  header check: SHA-256(bytes 0..104)[0..16)
 *   120     16  IV
 *   136      n  AES-256-CBC(enc_key, IV, PKCS#7(payload))
 *   136+n   32  tag: HMAC-SHA256(mac_key, bytes 0 .. 136+n)
 *
 * The header check is not authentication (anyone can recompute it): it rejects a corrupted or
 * edited header at once instead of after hours of hashing. Authentication is the tag, keyed
 * from the chain end and covering the header too: a change anywhere makes `open` fail with
 * RNSC_ERR_AUTH once the chain is done, and nothing is written.
 *
 * Checkpoint (96 bytes), so an interrupted `open` resumes:
 *     0   8  magic "RNSCTLCP"   8  32  SHA-256(header[0..120))   40  8  position i
 *    48  32  x_i                80  16  SHA-256(bytes 0..80)[0..16)
 *
 * Sans-I/O: everything here works on caller buffers; the CLI (cmd_timelock.c) reads and writes
 * files. Randomness and SHA/HMAC/HKDF/AES come from the context's crypto backends, RandomX from
 * an rnsc_randomx machine the caller builds (rnsc_timelock_randomx_flags says which).
 * Ownership: every buffer is the caller's; nothing here allocates beyond a temporary copy that
 * is wiped and freed before returning. Functions return 0 (or a length) or a negative rnsc_err.
 */
#ifndef RNSC_TIMELOCK_H
#define RNSC_TIMELOCK_H

#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "ctx.h"

#define RNSC_TL_MAGIC "RNSCTLCK"
#define RNSC_TL_CKPT_MAGIC "RNSCTLCP"
#define RNSC_TL_VERSION 1
#define RNSC_TL_HEADER_LEN 120
#define RNSC_TL_IV_LEN 16
#define RNSC_TL_TAG_LEN 32
#define RNSC_TL_STEP_INPUT_LEN 68
#define RNSC_TL_CKPT_LEN 96
#define RNSC_TL_MAX_STEPS UINT64_C(0xffffffff)
/* Payloads are held in memory whole: 1 GiB keeps a corrupted length from asking for more. */
#define RNSC_TL_MAX_PAYLOAD ((uint64_t)1 << 30)

enum rnsc_tl_algo { RNSC_TL_ALGO_V1 = 1, RNSC_TL_ALGO_V2 = 2 };
enum rnsc_tl_mode { RNSC_TL_MODE_LIGHT = 0, RNSC_TL_MODE_FULL = 1 };

typedef struct rnsc_timelock_header {
	uint8_t version; /* RNSC_TL_VERSION */
	uint8_t algo;    /* enum rnsc_tl_algo */
	uint8_t mode;    /* enum rnsc_tl_mode */
	uint32_t checkpoint_interval;
	uint64_t steps;
	uint64_t ct_len;
	uint32_t rate_mhs;
	uint8_t rx_key[32];
	uint8_t seed[32];
} rnsc_timelock_header;

/* Chain state: the position reached and the value there. Caller storage. */
typedef struct rnsc_timelock_chain {
	uint8_t context[32];     /* C */
	uint8_t header_hash[32]; /* SHA-256 of the whole header: binds checkpoints to one file */
	uint8_t x[32];           /* x_pos */
	uint64_t pos;
	uint64_t steps;
} rnsc_timelock_chain;

/* Fills h for a new file: fresh random RandomX key and seed (context randomness), the given
 * parameters, and the ciphertext length for payload_len bytes. RNSC_ERR_RANGE for steps outside
 * 1..RNSC_TL_MAX_STEPS, interval 0, an unknown algo/mode or a payload over RNSC_TL_MAX_PAYLOAD. */
RNSC_API int rnsc_timelock_header_new(rnsc_ctx *ctx, rnsc_timelock_header *h, int algo, int mode,
				      uint64_t steps, uint32_t interval, uint32_t rate_mhs,
				      size_t payload_len);
/* Serialises h (with its header check) into out[RNSC_TL_HEADER_LEN]. RNSC_ERR_RANGE when h is
 * not a valid header. */
RNSC_API int rnsc_timelock_header_encode(rnsc_ctx *ctx, uint8_t out[RNSC_TL_HEADER_LEN],
					 const rnsc_timelock_header *h);
/*
 * Parses the first RNSC_TL_HEADER_LEN bytes of buf. Returns 0, RNSC_ERR_TRUNCATED (shorter than
 * a header), RNSC_ERR_MALFORMED (not a timelock file: magic; or a corrupted header: check,
 * reserved bytes), RNSC_ERR_VERSION (a format version this build does not know) or
 * RNSC_ERR_RANGE (a field out of range). *why (optional) receives a static English reason.
 */
RNSC_API int rnsc_timelock_header_decode(rnsc_ctx *ctx, rnsc_timelock_header *h, const uint8_t *buf,
					 size_t len, const char **why) RNSC_MUST_CHECK;
/* Total file length for a header. */
RNSC_API uint64_t rnsc_timelock_file_len(const rnsc_timelock_header *h);
/* Ciphertext length for a payload of len bytes (PKCS#7 always adds 1..16 bytes). */
RNSC_API uint64_t rnsc_timelock_ct_len(uint64_t payload_len);
/* RNSC_RANDOMX_* flags (version) a file's chain needs; the caller adds mode, impl, pages. */
RNSC_API uint32_t rnsc_timelock_randomx_flags(const rnsc_timelock_header *h);

/* The 68-byte step input: prev || LE32(i) || context. */
RNSC_API void rnsc_timelock_step_input(uint8_t in[RNSC_TL_STEP_INPUT_LEN], const uint8_t prev[32],
				       uint32_t i, const uint8_t context[32]);
/* Starts a chain for an encoded header (x = seed, pos = 0). */
RNSC_API int rnsc_timelock_chain_init(rnsc_ctx *ctx, rnsc_timelock_chain *c,
				      const uint8_t header[RNSC_TL_HEADER_LEN],
				      const rnsc_timelock_header *h);

/* Progress callback: called every `every` steps and at the end; return non-zero to stop. */
typedef int (*rnsc_timelock_progress_fn)(void *ud, uint64_t pos, uint64_t steps);
/*
 * Advances the chain by at most max_steps (0: to the end) with the machine rx, which must have
 * the header's RandomX key and version. Returns 0 when it stopped (c->pos says where: the end,
 * the limit, or where progress asked to stop), or the machine's error.
 */
RNSC_API int rnsc_timelock_chain_run(rnsc_timelock_chain *c, rnsc_randomx *rx, uint64_t max_steps,
				     uint64_t every, rnsc_timelock_progress_fn progress, void *ud);

/*
 * Seals: writes header || IV || ciphertext || tag into out (rnsc_timelock_file_len bytes) for a
 * finished chain c over header (which must describe len payload bytes). Returns the file length,
 * RNSC_ERR_STATE (chain not finished), RNSC_ERR_INVAL (header/payload mismatch),
 * RNSC_ERR_BUFSIZE or a crypto error.
 */
RNSC_API int rnsc_timelock_seal(rnsc_ctx *ctx, uint8_t *out, size_t cap,
				const uint8_t header[RNSC_TL_HEADER_LEN],
				const rnsc_timelock_chain *c, const uint8_t *payload, size_t len);
/*
 * Opens a whole file with its finished chain: verifies the tag (constant time) before anything
 * is decrypted, then decrypts into out. Returns the payload length, RNSC_ERR_STATE (chain not
 * finished), RNSC_ERR_TRUNCATED / RNSC_ERR_MALFORMED (length does not match the header),
 * RNSC_ERR_AUTH (wrong chain end, or the file was changed), RNSC_ERR_PADDING, RNSC_ERR_BUFSIZE
 * (cap below ct_len) or a crypto error. On any failure out holds no plaintext: it is left
 * untouched when authentication fails (nothing is decrypted), wiped after a later failure.
 */
RNSC_API int rnsc_timelock_open(rnsc_ctx *ctx, uint8_t *out, size_t cap, const uint8_t *file,
				size_t len, const rnsc_timelock_chain *c) RNSC_MUST_CHECK;

/* Serialises the chain's position into out[RNSC_TL_CKPT_LEN]. */
RNSC_API int rnsc_timelock_checkpoint_encode(rnsc_ctx *ctx, uint8_t out[RNSC_TL_CKPT_LEN],
					     const rnsc_timelock_chain *c);
/*
 * Restores a position into c (already initialised for the file). Returns 0, RNSC_ERR_TRUNCATED,
 * RNSC_ERR_MALFORMED (bad magic or check: a corrupted checkpoint), RNSC_ERR_NOTFOUND (the
 * checkpoint belongs to another file) or RNSC_ERR_RANGE (position past the end). c is unchanged
 * on failure.
 */
RNSC_API int rnsc_timelock_checkpoint_decode(rnsc_ctx *ctx, rnsc_timelock_chain *c,
					     const uint8_t *buf, size_t len) RNSC_MUST_CHECK;

#endif
