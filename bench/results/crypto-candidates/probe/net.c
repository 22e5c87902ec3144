/* SPDX-License-Identifier: MIT */
/* Candidate probe for issue 25 (not built by make): see ../README.md. */
#include <nettle/sha2.h>
#include <nettle/hmac.h>
#include <nettle/aes.h>
#include <nettle/cbc.h>
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
void b_net(void)
{
	const char *lib;
	memset(buf, 7, sizeof buf);
	memset(key, 3, 32);
	/* nettle */
	lib = "nettle";
	BENCH("sha256-64", {
		struct sha256_ctx c;
		sha256_init(&c);
		sha256_update(&c, 64, buf);
		sha256_digest(&c, 32, out);
	});
	BENCH("sha256-16k", {
		struct sha256_ctx c;
		sha256_init(&c);
		sha256_update(&c, 16384, buf);
		sha256_digest(&c, 32, out);
	});
	BENCH("sha512-64", {
		struct sha512_ctx c;
		sha512_init(&c);
		sha512_update(&c, 64, buf);
		sha512_digest(&c, 64, out);
	});
	BENCH("hmac256-64", {
		struct hmac_sha256_ctx c;
		hmac_sha256_set_key(&c, 32, key);
		hmac_sha256_update(&c, 64, buf);
		hmac_sha256_digest(&c, 32, out);
	});
	BENCH("aes256cbc-1k", {
		struct aes256_ctx c;
		uint8_t v[16];
		memcpy(v, iv, 16);
		aes256_set_encrypt_key(&c, key);
		cbc_encrypt(&c, (nettle_cipher_func *)aes256_encrypt, 16, v, 1024, out, buf);
	});
	BENCH("aes256cbc-1k-dec", {
		struct aes256_ctx c;
		uint8_t v[16];
		memcpy(v, iv, 16);
		aes256_set_decrypt_key(&c, key);
		cbc_decrypt(&c, (nettle_cipher_func *)aes256_decrypt, 16, v, 1024, out, buf);
	});
	curve25519_mul_g(peer, key);
	BENCH("x25519", curve25519_mul(sh, key, peer));
	ed25519_sha512_public_key(pub, key);
	BENCH("ed25519-sign", ed25519_sha512_sign(pub, key, 64, buf, sig));
	BENCH("ed25519-verify", ed25519_sha512_verify(pub, 64, buf, sig));
}
