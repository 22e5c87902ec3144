/* SPDX-License-Identifier: MIT */
/* Candidate probe for issue 25 (not built by make): see ../README.md. */
#include <sodium.h>
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
void b_sod(void)
{
	const char *lib;
	memset(buf, 7, sizeof buf);
	memset(key, 3, 32);
	sodium_init();
	/* sodium baseline */
	lib = "sodium";
	BENCH("sha256-64", crypto_hash_sha256(out, buf, 64));
	BENCH("sha256-16k", crypto_hash_sha256(out, buf, 16384));
	BENCH("sha512-64", crypto_hash_sha512(out, buf, 64));
	BENCH("hmac256-64", {
		crypto_auth_hmacsha256_state s;
		crypto_auth_hmacsha256_init(&s, key, 32);
		crypto_auth_hmacsha256_update(&s, buf, 64);
		crypto_auth_hmacsha256_final(&s, out);
	});
	crypto_scalarmult_base(peer, key);
	BENCH("x25519", crypto_scalarmult(sh, key, peer));
	crypto_sign_seed_keypair(pub, sk, key);
	BENCH("ed25519-sign", crypto_sign_detached(sig, NULL, buf, 64, sk));
	BENCH("ed25519-verify", crypto_sign_verify_detached(sig, buf, 64, pub));
}
