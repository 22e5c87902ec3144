/* SPDX-License-Identifier: MIT */
/*
 * Proof-of-work stamps as LXMF's LXStamper computes them (LXMF 1.1.1 / 1.2.1, the same
 * code): rns interface discovery (Discovery.py) stamps its announce data with them.
 *
 * The workblock for some material is the concatenation of `rounds` HKDF-SHA256 outputs of
 * 256 bytes each, round n using salt SHA-256(material || msgpack(n)) and no context. A
 * stamp is 32 bytes; its value is the number of leading zero bits of
 * SHA-256(workblock || stamp). A stamp is valid for cost c when that hash, read as a
 * big-endian integer, is <= 2^(256-c) (so value >= c, or the hash equals 2^(256-c)).
 *
 * Sans-I/O: randomness for generation comes from the context's crypto backend.
 */
#ifndef RNSC_STAMPER_H
#define RNSC_STAMPER_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"

#define RNSC_STAMP_SIZE 32
#define RNSC_STAMP_WORKBLOCK_ROUND 256
/* Discovery.py InterfaceAnnouncer.WORKBLOCK_EXPAND_ROUNDS. */
#define RNSC_STAMP_DISCOVERY_ROUNDS 20
/* Rounds above this are refused (the workblock is rounds * 256 bytes of caller memory). */
#define RNSC_STAMP_MAX_ROUNDS 4096

/* Fills out (rounds * RNSC_STAMP_WORKBLOCK_ROUND bytes, caller storage). material must not
 * be empty (HKDF refuses it, as the reference does). Returns 0, RNSC_ERR_INVAL (rounds 0 or
 * above RNSC_STAMP_MAX_ROUNDS, empty material), RNSC_ERR_BUFSIZE, crypto errors. */
RNSC_API int rnsc_stamp_workblock(rnsc_ctx *ctx, uint8_t *out, size_t cap, const uint8_t *material,
				  size_t material_len, unsigned rounds);

/* The stamp's value (0..256), or a negative crypto error. */
RNSC_API int rnsc_stamp_value(rnsc_ctx *ctx, const uint8_t *workblock, size_t wb_len,
			      const uint8_t stamp[RNSC_STAMP_SIZE]);

/* 1 valid, 0 not, negative crypto error. cost above 256 is never valid (the reference
 * raises on the negative shift and drops the announce). */
RNSC_API int rnsc_stamp_valid(rnsc_ctx *ctx, const uint8_t stamp[RNSC_STAMP_SIZE], int cost,
			      const uint8_t *workblock, size_t wb_len);

/* Draws random stamps until one is valid for cost (LXStamper.generate_stamp); writes it to
 * out and returns its value. max_tries 0 means no limit. Returns the value (>= 0),
 * RNSC_ERR_RANGE after max_tries, RNSC_ERR_INVAL (cost outside 0..256), crypto errors. */
RNSC_API int rnsc_stamp_generate(rnsc_ctx *ctx, uint8_t out[RNSC_STAMP_SIZE],
				 const uint8_t *workblock, size_t wb_len, int cost,
				 uint64_t max_tries);

#endif
