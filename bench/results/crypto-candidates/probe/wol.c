/* SPDX-License-Identifier: MIT */
/* Candidate probe for issue 25 (not built by make): see ../README.md. */
#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/sha256.h>
#include <wolfssl/wolfcrypt/sha512.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <nettle/curve25519.h>
#include <nettle/eddsa.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}
static uint8_t buf[16384], out[16384], key[32], iv[16], sig[64], pub[32], sk[64], peer[32], sh[32];
#define BENCH(name, body)                                                                          \
	do {                                                                                       \
		double t0 = now();                                                                 \
		long n = 0;                                                                        \
		while (now() - t0 < 0.15) {                                                        \
			for (int i_ = 0; i_ < 16; i_++) {                                          \
				body;                                                              \
			}                                                                          \
			n += 16;                                                                   \
		}                                                                                  \
		double dt = now() - t0;                                                            \
		printf("%-8s %-18s %12.0f ops/s\n", lib, name, n / dt);                            \
	} while (0)
void b_wol(void)
{
	const char *lib;
	memset(buf, 7, sizeof buf);
	memset(key, 3, 32);
	ed25519_sha512_public_key(pub, key);
	curve25519_mul_g(peer, key);
	/* wolfssl */
	lib = "wolfssl";
	BENCH("sha256-64", wc_Sha256Hash(buf, 64, out));
	BENCH("sha256-16k", wc_Sha256Hash(buf, 16384, out));
	BENCH("sha512-64", wc_Sha512Hash(buf, 64, out));
	BENCH("hmac256-64", {
		Hmac h;
		wc_HmacInit(&h, NULL, INVALID_DEVID);
		wc_HmacSetKey(&h, WC_SHA256, key, 32);
		wc_HmacUpdate(&h, buf, 64);
		wc_HmacFinal(&h, out);
		wc_HmacFree(&h);
	});
	BENCH("aes256cbc-1k", {
		Aes a;
		wc_AesInit(&a, NULL, INVALID_DEVID);
		wc_AesSetKey(&a, key, 32, iv, AES_ENCRYPTION);
		wc_AesCbcEncrypt(&a, out, buf, 1024);
		wc_AesFree(&a);
	});
	BENCH("aes256cbc-1k-dec", {
		Aes a;
		wc_AesInit(&a, NULL, INVALID_DEVID);
		wc_AesSetKey(&a, key, 32, iv, AES_DECRYPTION);
		wc_AesCbcDecrypt(&a, out, buf, 1024);
		wc_AesFree(&a);
	});
	{
		curve25519_key k, p;
		wc_curve25519_init(&k);
		wc_curve25519_init(&p);
		uint8_t kk[32];
		memcpy(kk, key, 32);
		kk[0] &= 248;
		kk[31] &= 127;
		kk[31] |= 64;
		uint8_t pp[32];
		curve25519_mul_g(pp, key);
		int r1 = wc_curve25519_import_private_ex(kk, 32, &k, EC25519_LITTLE_ENDIAN);
		int r2 = wc_curve25519_import_public_ex(pp, 32, &p, EC25519_LITTLE_ENDIAN);
		if (r1 || r2)
			printf("wolf import %d %d\n", r1, r2);
		BENCH("x25519", {
			word32 l = 32;
			wc_curve25519_shared_secret_ex(&k, &p, sh, &l, EC25519_LITTLE_ENDIAN);
		});
		ed25519_key e;
		wc_ed25519_init(&e);
		uint8_t epub[32];
		wc_ed25519_import_private_key(key, 32, pub, 32, &e);
		BENCH("ed25519-sign", {
			word32 l = 64;
			wc_ed25519_sign_msg(buf, 64, sig, &l, &e);
		});
		BENCH("ed25519-verify", {
			int ok = 0;
			wc_ed25519_verify_msg(sig, 64, buf, 64, &ok, &e);
		});
		(void)epub;
	}
}
