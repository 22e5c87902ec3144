/* SPDX-License-Identifier: MIT */
/* Candidate probe for issue 25 (not built by make): see ../README.md. */
#include <gcrypt.h>
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
void b_gcr(void)
{
	const char *lib;
	memset(buf, 7, sizeof buf);
	memset(key, 3, 32);
	gcry_check_version(NULL);
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	ed25519_sha512_public_key(pub, key);
	curve25519_mul_g(peer, key);
	/* gcrypt */
	lib = "gcrypt";
	BENCH("sha256-64", gcry_md_hash_buffer(GCRY_MD_SHA256, out, buf, 64));
	BENCH("sha256-16k", gcry_md_hash_buffer(GCRY_MD_SHA256, out, buf, 16384));
	BENCH("sha512-64", gcry_md_hash_buffer(GCRY_MD_SHA512, out, buf, 64));
	BENCH("hmac256-64", {
		gcry_mac_hd_t h;
		gcry_mac_open(&h, GCRY_MAC_HMAC_SHA256, 0, NULL);
		gcry_mac_setkey(h, key, 32);
		gcry_mac_write(h, buf, 64);
		size_t l = 32;
		gcry_mac_read(h, out, &l);
		gcry_mac_close(h);
	});
	BENCH("aes256cbc-1k", {
		gcry_cipher_hd_t h;
		gcry_cipher_open(&h, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, 0);
		gcry_cipher_setkey(h, key, 32);
		gcry_cipher_setiv(h, iv, 16);
		gcry_cipher_encrypt(h, out, 1024, buf, 1024);
		gcry_cipher_close(h);
	});
	BENCH("aes256cbc-1k-dec", {
		gcry_cipher_hd_t h;
		gcry_cipher_open(&h, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, 0);
		gcry_cipher_setkey(h, key, 32);
		gcry_cipher_setiv(h, iv, 16);
		gcry_cipher_decrypt(h, out, 1024, buf, 1024);
		gcry_cipher_close(h);
	});
	BENCH("x25519", gcry_ecc_mul_point(GCRY_ECC_CURVE25519, sh, key, peer));
	{
		gcry_sexp_t skey = NULL, data = NULL, s = NULL, pk = NULL;
		gcry_error_t e;
		e = gcry_sexp_build(&skey, NULL,
				    "(private-key(ecc(curve Ed25519)(flags eddsa)(d %b)))", 32,
				    key);
		gcry_sexp_t kp;
		e |= gcry_sexp_build(&kp, NULL, "(genkey(ecc(curve Ed25519)(flags eddsa)))");
		(void)kp;
		e |= gcry_sexp_build(&data, NULL, "(data(flags eddsa)(hash-algo sha512)(value %b))",
				     64, buf);
		if (e)
			printf("sexp err\n");
		BENCH("ed25519-sign", {
			gcry_sexp_t r;
			if (gcry_pk_sign(&r, data, skey)) {
				printf("sign fail\n");
				break;
			}
			if (s)
				gcry_sexp_release(s);
			s = r;
		});
		/* build pubkey from public q: derive via nettle pub */
		e = gcry_sexp_build(&pk, NULL,
				    "(public-key(ecc(curve Ed25519)(flags eddsa)(q %b)))", 32, pub);
		BENCH("ed25519-verify", {
			if (gcry_pk_verify(s, data, pk)) {
				printf("verify fail\n");
				break;
			}
		});
	}
}
