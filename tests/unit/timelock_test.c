/* SPDX-License-Identifier: MIT */
/*
 * Timelock core (src/lib/timelock.c): the step input layout, the header codec and its specific
 * errors, seal/open round trips on tiny light-mode chains, tampering (header, IV, ciphertext,
 * tag: specific errors, no plaintext), wrong versions, truncation, checkpoints and resuming, and
 * a pinned v1 file whose chain is recomputed by librandomx (an independent implementation) when
 * it is built. Uses the build tree's openssl and randomx plugins.
 *
 * Light mode only: one 256 MiB cache per RandomX key, about a second each; three keys in all
 * (two with RNSC_TEST_QUICK=1, which skips the librandomx recomputation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "cu_run.h"
#include "plugin_host.h"
#include "timelock.h"

static rnsc_ctx *C;
static rnsc_plugin_host *H;
static int quick;

/* Fixture: one v2 file with a 3-step chain, its machine and its finished chain. */
static rnsc_randomx *RX;
static rnsc_timelock_header FH;
static uint8_t FHDR[RNSC_TL_HEADER_LEN];
static uint8_t *FILEB;
static size_t FILELEN;
static rnsc_timelock_chain FCH;
static const char PAYLOAD[] = "the quick brown fox jumps over the lazy dog, 57 bytes long";

static int counter_rng(void *ud, uint8_t *out, size_t len)
{
	uint8_t *c = ud;
	for (size_t i = 0; i < len; i++)
		out[i] = (*c)++;
	return 0;
}

static int fixture_up(void)
{
	const size_t plen = sizeof(PAYLOAD) - 1;
	if (rnsc_timelock_header_new(C, &FH, RNSC_TL_ALGO_V2, RNSC_TL_MODE_LIGHT, 3, 1, 34000,
				     plen) ||
	    rnsc_timelock_header_encode(C, FHDR, &FH))
		return -1;
	if (rnsc_randomx_new(C, &RX, rnsc_timelock_randomx_flags(&FH), FH.rx_key, 32, 0))
		return -1;
	if (rnsc_timelock_chain_init(C, &FCH, FHDR, &FH) ||
	    rnsc_timelock_chain_run(&FCH, RX, 0, 0, NULL, NULL) || FCH.pos != 3)
		return -1;
	FILELEN = (size_t)rnsc_timelock_file_len(&FH);
	FILEB = malloc(FILELEN);
	int n = FILEB ? rnsc_timelock_seal(C, FILEB, FILELEN, FHDR, &FCH, (const uint8_t *)PAYLOAD,
					   plen)
		      : -1;
	return n == (int)FILELEN ? 0 : -1;
}

static int fixture_down(void)
{
	rnsc_randomx_del(RX);
	free(FILEB);
	return 0;
}

static void test_step_input_layout(void)
{
	uint8_t prev[32], ctx32[32], in[RNSC_TL_STEP_INPUT_LEN];
	for (int i = 0; i < 32; i++)
		prev[i] = (uint8_t)i, ctx32[i] = (uint8_t)(0xa0 + i);
	rnsc_timelock_step_input(in, prev, 0x01020304u, ctx32);
	CU_ASSERT(memcmp(in, prev, 32) == 0);
	/* The counter is little-endian. */
	CU_ASSERT(in[32] == 0x04 && in[33] == 0x03 && in[34] == 0x02 && in[35] == 0x01);
	CU_ASSERT(memcmp(in + 36, ctx32, 32) == 0);
	/* In place: the previous result may be the output buffer's own first 32 bytes. */
	memcpy(in, prev, 32);
	rnsc_timelock_step_input(in, in, 7, ctx32);
	CU_ASSERT(memcmp(in, prev, 32) == 0 && in[32] == 7 && in[33] == 0);
}

static void test_header_roundtrip(void)
{
	rnsc_timelock_header h;
	CU_ASSERT_EQUAL(rnsc_timelock_header_decode(C, &h, FHDR, sizeof(FHDR), NULL), 0);
	CU_ASSERT(memcmp(&h, &FH, sizeof(h)) == 0);
	CU_ASSERT(memcmp(FHDR, RNSC_TL_MAGIC, 8) == 0);
	CU_ASSERT_EQUAL(FHDR[8], RNSC_TL_VERSION);
	CU_ASSERT_EQUAL(FHDR[9], RNSC_TL_ALGO_V2);
	CU_ASSERT_EQUAL(FHDR[16], 3); /* steps, little-endian */
	CU_ASSERT_EQUAL(rnsc_timelock_randomx_flags(&h), RNSC_RANDOMX_V2);
	CU_ASSERT_EQUAL(rnsc_timelock_file_len(&h), RNSC_TL_HEADER_LEN + 16 + 64 + 32);
	CU_ASSERT_EQUAL(rnsc_timelock_ct_len(0), 16);
	CU_ASSERT_EQUAL(rnsc_timelock_ct_len(16), 32);
	/* Two headers for the same parameters differ: key and seed are random per file. */
	rnsc_timelock_header h2;
	CU_ASSERT_EQUAL(rnsc_timelock_header_new(C, &h2, 2, 0, 3, 1, 0, 57), 0);
	CU_ASSERT(memcmp(h2.rx_key, FH.rx_key, 32) != 0 && memcmp(h2.seed, FH.seed, 32) != 0);
	/* Parameters out of range are refused when the header is made. */
	CU_ASSERT_EQUAL(rnsc_timelock_header_new(C, &h2, 3, 0, 3, 1, 0, 1), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_timelock_header_new(C, &h2, 1, 2, 3, 1, 0, 1), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_timelock_header_new(C, &h2, 1, 0, 0, 1, 0, 1), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_timelock_header_new(C, &h2, 1, 0, RNSC_TL_MAX_STEPS + 1, 1, 0, 1),
			RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_timelock_header_new(C, &h2, 1, 0, 3, 0, 0, 1), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(
		rnsc_timelock_header_new(C, &h2, 1, 0, 3, 1, 0, (size_t)RNSC_TL_MAX_PAYLOAD + 1),
		RNSC_ERR_RANGE);
}

/* Re-computes the header check after an edit, to reach the checks behind it. */
static void fix_check(uint8_t *hdr)
{
	uint8_t d[32];
	CU_ASSERT_EQUAL_FATAL(rnsc_sha256(C, d, hdr, 104), 0);
	memcpy(hdr + 104, d, 16);
}

static int decode_err(const uint8_t *b, size_t len, const char **why)
{
	rnsc_timelock_header h;
	return rnsc_timelock_header_decode(C, &h, b, len, why);
}

static void test_header_errors(void)
{
	uint8_t b[RNSC_TL_HEADER_LEN];
	const char *why = NULL;
	CU_ASSERT_EQUAL(decode_err(FHDR, 0, &why), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(decode_err(FHDR, 8, &why), RNSC_ERR_TRUNCATED);
	CU_ASSERT_EQUAL(decode_err(FHDR, RNSC_TL_HEADER_LEN - 1, &why), RNSC_ERR_TRUNCATED);
	CU_ASSERT(why && strstr(why, "inside the header"));
	CU_ASSERT_EQUAL(decode_err((const uint8_t *)"hello", 5, &why), RNSC_ERR_MALFORMED);
	CU_ASSERT(why && strstr(why, "magic"));
	memcpy(b, FHDR, sizeof(b));
	b[0] ^= 1;
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_MALFORMED);
	CU_ASSERT(why && strstr(why, "magic"));
	/* A newer format version is named as such, whatever else it changed. */
	memcpy(b, FHDR, sizeof(b));
	b[8] = 2;
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_VERSION);
	b[8] = 0;
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_VERSION);
	/* Every other header byte is covered by the check. */
	for (size_t i = 9; i < RNSC_TL_HEADER_LEN; i++) {
		memcpy(b, FHDR, sizeof(b));
		b[i] ^= 0x40;
		why = NULL;
		CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_MALFORMED);
		CU_ASSERT(why && strstr(why, "header check"));
	}
	/* Past the check: reserved bytes and ranges. */
	memcpy(b, FHDR, sizeof(b));
	b[11] = 1;
	fix_check(b);
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_MALFORMED);
	CU_ASSERT(why && strstr(why, "reserved"));
	memcpy(b, FHDR, sizeof(b));
	b[9] = 3;
	fix_check(b);
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_RANGE);
	memcpy(b, FHDR, sizeof(b));
	memset(b + 16, 0, 8);
	fix_check(b);
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_RANGE);
	memcpy(b, FHDR, sizeof(b));
	b[24] = 17; /* ciphertext not whole blocks */
	fix_check(b);
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_RANGE);
	memcpy(b, FHDR, sizeof(b));
	memset(b + 24, 0xff, 8); /* absurd length: refused before anyone allocates it */
	b[24] = 0xf0;
	fix_check(b);
	CU_ASSERT_EQUAL(decode_err(b, sizeof(b), &why), RNSC_ERR_RANGE);
}

static int try_open(const uint8_t *file, size_t len, const rnsc_timelock_chain *c, uint8_t *out,
		    size_t cap)
{
	memset(out, 0xee, cap);
	return rnsc_timelock_open(C, out, cap, file, len, c);
}

static void test_roundtrip(void)
{
	uint8_t out[128];
	int n = try_open(FILEB, FILELEN, &FCH, out, sizeof(out));
	CU_ASSERT_EQUAL(n, (int)sizeof(PAYLOAD) - 1);
	CU_ASSERT(n > 0 && memcmp(out, PAYLOAD, (size_t)n) == 0);
	/* A fresh chain from the file's own header reaches the same end. */
	rnsc_timelock_chain c;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &c, FILEB, &FH), 0);
	CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&c, RX, 0, 0, NULL, NULL), 0);
	CU_ASSERT(c.pos == 3 && memcmp(c.x, FCH.x, 32) == 0);
	/* Payload sizes around the block size, the empty one included. */
	static const size_t sizes[] = {0, 1, 15, 16, 17, 1000};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t pt[1000], hdr[RNSC_TL_HEADER_LEN], f[1200], back[1024];
		for (size_t k = 0; k < sizes[i]; k++)
			pt[k] = (uint8_t)(k * 7 + i);
		rnsc_timelock_header h = FH;
		h.ct_len = rnsc_timelock_ct_len(sizes[i]);
		CU_ASSERT_EQUAL_FATAL(rnsc_timelock_header_encode(C, hdr, &h), 0);
		rnsc_timelock_chain ch;
		CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &ch, hdr, &h), 0);
		CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&ch, RX, 0, 0, NULL, NULL), 0);
		int fl = rnsc_timelock_seal(C, f, sizeof(f), hdr, &ch, pt, sizes[i]);
		CU_ASSERT_EQUAL(fl, (int)rnsc_timelock_file_len(&h));
		CU_ASSERT_EQUAL(try_open(f, (size_t)fl, &ch, back, sizeof(back)), (int)sizes[i]);
		CU_ASSERT(memcmp(back, pt, sizes[i]) == 0);
		/* Same key and seed, different header (length): a different chain. */
		CU_ASSERT(sizes[i] == sizeof(PAYLOAD) - 1 || memcmp(ch.x, FCH.x, 32) != 0);
	}
}

static void test_seal_errors(void)
{
	uint8_t f[512];
	rnsc_timelock_chain c = FCH;
	c.pos = 2;
	CU_ASSERT_EQUAL(rnsc_timelock_seal(C, f, sizeof(f), FHDR, &c, (const uint8_t *)PAYLOAD,
					   sizeof(PAYLOAD) - 1),
			RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(
		rnsc_timelock_seal(C, f, sizeof(f), FHDR, &FCH, (const uint8_t *)PAYLOAD, 3),
		RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_timelock_seal(C, f, 100, FHDR, &FCH, (const uint8_t *)PAYLOAD,
					   sizeof(PAYLOAD) - 1),
			RNSC_ERR_BUFSIZE);
}

static void test_tamper(void)
{
	uint8_t *b = malloc(FILELEN), out[128];
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	/* IV, every ciphertext byte, every tag byte: authentication fails, nothing decrypted. */
	for (size_t i = RNSC_TL_HEADER_LEN; i < FILELEN; i++) {
		memcpy(b, FILEB, FILELEN);
		b[i] ^= 0x01;
		CU_ASSERT_EQUAL(try_open(b, FILELEN, &FCH, out, sizeof(out)), RNSC_ERR_AUTH);
		int wiped = 1;
		for (size_t k = 0; k < sizeof(out); k++)
			wiped &= out[k] == 0xee;
		CU_ASSERT(wiped);
	}
	/* Header bytes: the specific early errors. */
	memcpy(b, FILEB, FILELEN);
	b[3] ^= 0x20;
	CU_ASSERT_EQUAL(try_open(b, FILELEN, &FCH, out, sizeof(out)), RNSC_ERR_MALFORMED);
	memcpy(b, FILEB, FILELEN);
	b[8] = 9;
	CU_ASSERT_EQUAL(try_open(b, FILELEN, &FCH, out, sizeof(out)), RNSC_ERR_VERSION);
	memcpy(b, FILEB, FILELEN);
	b[50] ^= 0x80;
	CU_ASSERT_EQUAL(try_open(b, FILELEN, &FCH, out, sizeof(out)), RNSC_ERR_MALFORMED);
	/* An edit that also fixes the (unkeyed) check is still caught: the tag covers the header
	 * and the keys are salted with it. Here the informational rate field changes. */
	memcpy(b, FILEB, FILELEN);
	b[32] ^= 0x01;
	fix_check(b);
	CU_ASSERT_EQUAL(try_open(b, FILELEN, &FCH, out, sizeof(out)), RNSC_ERR_AUTH);
	/* The wrong chain end. */
	rnsc_timelock_chain c = FCH;
	c.x[0] ^= 1;
	CU_ASSERT_EQUAL(try_open(FILEB, FILELEN, &c, out, sizeof(out)), RNSC_ERR_AUTH);
	/* An unfinished chain is a caller error, not an authentication failure. */
	c = FCH;
	c.pos = 1;
	CU_ASSERT_EQUAL(try_open(FILEB, FILELEN, &c, out, sizeof(out)), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(try_open(FILEB, FILELEN, &FCH, out, 16), RNSC_ERR_BUFSIZE);
	free(b);
}

static void test_truncated_and_trailing(void)
{
	uint8_t out[128];
	static const size_t cuts[] = {0, 7, 100, RNSC_TL_HEADER_LEN, RNSC_TL_HEADER_LEN + 16, 1};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		size_t len = cuts[i] == 1 ? FILELEN - 1 : cuts[i];
		CU_ASSERT_EQUAL(try_open(FILEB, len, &FCH, out, sizeof(out)), RNSC_ERR_TRUNCATED);
	}
	uint8_t *b = malloc(FILELEN + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	memcpy(b, FILEB, FILELEN);
	b[FILELEN] = 0;
	CU_ASSERT_EQUAL(try_open(b, FILELEN + 1, &FCH, out, sizeof(out)), RNSC_ERR_MALFORMED);
	free(b);
}

static int stop_at_2(void *ud, uint64_t pos, uint64_t steps)
{
	(void)steps;
	(*(int *)ud)++;
	return pos == 2;
}

static void test_resume_from_checkpoint(void)
{
	/* Run one step, checkpoint, "restart", resume: the same end as an uninterrupted chain. */
	rnsc_timelock_chain a;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &a, FHDR, &FH), 0);
	CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&a, RX, 1, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(a.pos, 1);
	uint8_t ck[RNSC_TL_CKPT_LEN];
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_encode(C, ck, &a), 0);
	rnsc_timelock_chain b;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &b, FHDR, &FH), 0);
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_decode(C, &b, ck, sizeof(ck)), 0);
	CU_ASSERT_EQUAL(b.pos, 1);
	/* The progress callback can stop the chain (as Ctrl-C does). */
	int calls = 0;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&b, RX, 0, 1, stop_at_2, &calls), 0);
	CU_ASSERT(b.pos == 2 && calls == 1);
	CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&b, RX, 0, 0, NULL, NULL), 0);
	CU_ASSERT(b.pos == 3 && memcmp(b.x, FCH.x, 32) == 0);
	uint8_t out[128];
	CU_ASSERT_EQUAL(try_open(FILEB, FILELEN, &b, out, sizeof(out)), (int)sizeof(PAYLOAD) - 1);
	/* A finished chain runs no further. */
	CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&b, RX, 0, 0, NULL, NULL), 0);
	CU_ASSERT_EQUAL(b.pos, 3);

	/* Checkpoint errors leave the chain as it was. */
	rnsc_timelock_chain c;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &c, FHDR, &FH), 0);
	uint8_t bad[RNSC_TL_CKPT_LEN + 1];
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_decode(C, &c, ck, sizeof(ck) - 1),
			RNSC_ERR_TRUNCATED);
	memcpy(bad, ck, sizeof(ck));
	bad[sizeof(ck)] = 0;
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_decode(C, &c, bad, sizeof(ck) + 1),
			RNSC_ERR_MALFORMED);
	for (size_t i = 0; i < sizeof(ck); i++) {
		memcpy(bad, ck, sizeof(ck));
		bad[i] ^= 0x10;
		CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_decode(C, &c, bad, sizeof(ck)),
				RNSC_ERR_MALFORMED);
	}
	CU_ASSERT_EQUAL(c.pos, 0);
	CU_ASSERT(memcmp(c.x, FH.seed, 32) == 0);
	/* A checkpoint of another file (another header) is recognised as such. */
	rnsc_timelock_header h2 = FH;
	uint8_t hdr2[RNSC_TL_HEADER_LEN];
	h2.steps = 4;
	CU_ASSERT_EQUAL(rnsc_timelock_header_encode(C, hdr2, &h2), 0);
	rnsc_timelock_chain other;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &other, hdr2, &h2), 0);
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_decode(C, &other, ck, sizeof(ck)),
			RNSC_ERR_NOTFOUND);
	/* A position past the end (with a valid check) is refused. */
	rnsc_timelock_chain far = a;
	far.pos = 4;
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_encode(C, bad, &far), 0);
	CU_ASSERT_EQUAL(rnsc_timelock_checkpoint_decode(C, &c, bad, sizeof(ck)), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(c.pos, 0);
}

/*
 * A pinned v1 file: counter randomness fixes the key, seed and IV, so the whole file is fixed.
 * Its SHA-256 freezes the format (any change to the layout, the context, the chain input or
 * the key derivation changes it); the chain end is recomputed with librandomx when built.
 */
static void test_pinned_v1_file(void)
{
	uint8_t counter = 0;
	rnsc_crypto_set_rng(C, counter_rng, &counter);
	rnsc_timelock_header h;
	uint8_t hdr[RNSC_TL_HEADER_LEN], f[256], digest[32];
	int rc = rnsc_timelock_header_new(C, &h, RNSC_TL_ALGO_V1, RNSC_TL_MODE_LIGHT, 2, 1, 0, 4);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_timelock_header_encode(C, hdr, &h), 0);
	rnsc_randomx *own = NULL, *lib = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_randomx_new(C, &own, RNSC_RANDOMX_IMPL_OWN, h.rx_key, 32, 0), 0);
	rnsc_timelock_chain c;
	CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &c, hdr, &h), 0);
	CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&c, own, 0, 0, NULL, NULL), 0);
	int n = rnsc_timelock_seal(C, f, sizeof(f), hdr, &c, (const uint8_t *)"rnsc", 4);
	rnsc_crypto_set_rng(C, NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(n, RNSC_TL_HEADER_LEN + 16 + 16 + 32);
	CU_ASSERT_EQUAL(rnsc_sha256(C, digest, f, (size_t)n), 0);
	static const uint8_t want[32] = {
		0xbe, 0xae, 0x44, 0x62, 0x53, 0xf0, 0xc2, 0x91, 0x09, 0xf2, 0xd4,
		0x7b, 0x89, 0x67, 0x4e, 0xfd, 0x40, 0xec, 0x31, 0xaf, 0x13, 0x97,
		0x60, 0xad, 0x1e, 0x31, 0x31, 0xa9, 0x05, 0x69, 0x15, 0xbd,
	};
	if (memcmp(digest, want, 32) != 0) {
		fprintf(stderr, "\n  pinned file digest: ");
		for (int i = 0; i < 32; i++)
			fprintf(stderr, "0x%02x,%s", digest[i], i % 12 == 11 ? "\n" : " ");
		CU_FAIL("pinned v1 file changed");
	}
	if (!quick &&
	    rnsc_randomx_new(C, &lib, RNSC_RANDOMX_IMPL_LIBRANDOMX, h.rx_key, 32, 0) == 0) {
		rnsc_timelock_chain l;
		CU_ASSERT_EQUAL(rnsc_timelock_chain_init(C, &l, hdr, &h), 0);
		CU_ASSERT_EQUAL(rnsc_timelock_chain_run(&l, lib, 0, 0, NULL, NULL), 0);
		CU_ASSERT(memcmp(l.x, c.x, 32) == 0);
		uint8_t out[16];
		CU_ASSERT_EQUAL(rnsc_timelock_open(C, out, sizeof(out), f, (size_t)n, &l), 4);
		CU_ASSERT(memcmp(out, "rnsc", 4) == 0);
		rnsc_randomx_del(lib);
	} else {
		printf("(librandomx recomputation skipped) ");
	}
	rnsc_randomx_del(own);
}

int main(void)
{
	const char *q = getenv("RNSC_TEST_QUICK");
	quick = q && *q && strcmp(q, "0") != 0;
	const char *b = getenv("RNSC_BUILDDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/plugins/crypto/.libs", b && *b ? b : RNSC_BUILDDIR);
	if (rnsc_ctx_new(&C) || rnsc_plugin_host_new(C, &H))
		return 1;
	rnsc_ctx_set_log(C, NULL, NULL, 0);
	if (rnsc_plugin_host_add_dir(H, dir) || rnsc_plugin_host_scan(H) < 2 ||
	    !rnsc_crypto_provider(C, RNSC_PRIM_RANDOMX) ||
	    !rnsc_crypto_provider(C, RNSC_PRIM_AES256_CBC)) {
		fprintf(stderr,
			"timelock_test: the openssl and randomx plugins must be built in %s\n",
			dir);
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("timelock", fixture_up, fixture_down);
	CU_add_test(s, "step input layout", test_step_input_layout);
	CU_add_test(s, "header round trip and ranges", test_header_roundtrip);
	CU_add_test(s, "header errors: truncated, magic, version, check, ranges",
		    test_header_errors);
	CU_add_test(s, "seal/open round trip", test_roundtrip);
	CU_add_test(s, "seal errors", test_seal_errors);
	CU_add_test(s, "tamper: header, IV, ciphertext, tag, chain end", test_tamper);
	CU_add_test(s, "truncated and trailing bytes", test_truncated_and_trailing);
	CU_add_test(s, "resume from a checkpoint", test_resume_from_checkpoint);
	CU_add_test(s, "pinned v1 file (and librandomx agrees)", test_pinned_v1_file);
	int rc = rnsc_cu_run();
	rnsc_plugin_host_del(H);
	rnsc_ctx_del(C);
	return rc;
}
