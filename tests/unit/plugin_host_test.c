/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "cu_run.h"
#include "plugin_host.h"

static char crypto_dir[4096], broken_dir[4096];
/* What the build put in crypto_dir: openssl and sodium always, randomx when libsodium is there
 * (it is built with it). Counted from the folder so the assertions follow the build. */
static int n_crypto_so, have_randomx_so;

static void count_crypto_plugins(void)
{
	DIR *d = opendir(crypto_dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) {
			n_crypto_so++;
			have_randomx_so |= strcmp(e->d_name, "randomx.so") == 0;
		}
	}
	if (d)
		closedir(d);
}

static rnsc_ctx *quiet_ctx(void)
{
	rnsc_ctx *c = NULL;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_ctx_set_log(c, NULL, NULL, 0);
	return c;
}

static int load(rnsc_plugin_host *h, const char *dir, const char *file)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return rnsc_plugin_host_load_file(h, path);
}

static void test_good_plugins(void)
{
	rnsc_ctx *c = quiet_ctx();
	rnsc_plugin_host *h;
	CU_ASSERT_EQUAL_FATAL(rnsc_plugin_host_new(c, &h), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_dir(h, crypto_dir), 0);
	/* openssl and sodium at least; every plugin in the folder loads. */
	CU_ASSERT(n_crypto_so >= 2);
	CU_ASSERT_EQUAL(rnsc_plugin_host_scan(h), n_crypto_so);
	const rnsc_plugin_rec *o = rnsc_plugin_host_find(h, "openssl");
	const rnsc_plugin_rec *s = rnsc_plugin_host_find(h, "sodium");
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(o->desc->kind, RNSC_PLUGIN_CRYPTO);
	CU_ASSERT_STRING_EQUAL(rnsc_plugin_kind_name(o->desc->kind), "crypto");
	/* Default order is load order (file names sorted): the first loaded plugin that has
	 * Ed25519 serves it (nettle when its plugin is built, else openssl). */
	const char *first = NULL;
	for (size_t i = 0; i < rnsc_plugin_host_count(h) && !first; i++) {
		const rnsc_plugin_rec *rec = rnsc_plugin_host_at(h, i);
		if (rec->status == 0 && rec->desc &&
		    (rec->desc->caps & RNSC_PRIM_BIT(RNSC_PRIM_ED25519)))
			first = rec->desc->name;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(first);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_ED25519), first);
	CU_ASSERT(strcmp(first, "openssl") == 0 || strcmp(first, "nettle") == 0);
	/* The randomx plugin serves RandomX and nothing else, so it never displaces openssl. */
	const rnsc_plugin_rec *x = rnsc_plugin_host_find(h, "randomx");
	CU_ASSERT_EQUAL(x != NULL, have_randomx_so);
	if (x) {
		CU_ASSERT_EQUAL(x->desc->caps, RNSC_PRIM_BIT(RNSC_PRIM_RANDOMX));
		CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_RANDOMX), "randomx");
		for (int p = 0; p < RNSC_PRIM_RANDOMX; p++) {
			const char *who = rnsc_crypto_provider(c, p);
			CU_ASSERT(who == NULL || strcmp(who, "randomx") != 0);
		}
	} else {
		CU_ASSERT_PTR_NULL(rnsc_crypto_provider(c, RNSC_PRIM_RANDOMX));
	}
	/* sodium first: it serves what it has, AES-CBC falls through to openssl. */
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "sodium, openssl"), 0);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_ED25519), "sodium");
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_AES256_CBC), "openssl");
	uint8_t key[32] = {1}, iv[16] = {2}, blk[16] = {3}, out[16];
	CU_ASSERT_EQUAL(rnsc_aes256_cbc_encrypt(c, out, key, iv, blk, 16), 0);
	/* sodium alone: AES-CBC has no provider → a clear error, not a silent fallback. */
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "sodium"), 0);
	CU_ASSERT_PTR_NULL(rnsc_crypto_provider(c, RNSC_PRIM_AES256_CBC));
	CU_ASSERT_EQUAL(rnsc_aes256_cbc_encrypt(c, out, key, iv, blk, 16), RNSC_ERR_NOPRIM);
	/* Unknown names leave the order as it was. */
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "nosuch, openssl"), RNSC_ERR_NOTFOUND);
	CU_ASSERT_PTR_NULL(rnsc_crypto_provider(c, RNSC_PRIM_AES256_CBC));
	/* Pins: one primitive from a backend ahead of the order (the default with both). */
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "x25519=sodium, ed25519=sodium, openssl"), 0);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_ED25519), "sodium");
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_X25519), "sodium");
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_SHA256), "openssl");
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_AES256_CBC), "openssl");
	uint8_t seed[32] = {7}, pub[32], sig[64];
	CU_ASSERT_EQUAL(rnsc_ed25519_public(c, pub, seed), 0);
	CU_ASSERT_EQUAL(rnsc_ed25519_sign(c, sig, seed, pub, blk, 16), 0);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "openssl"), 0); /* openssl checks sodium's */
	CU_ASSERT_EQUAL(rnsc_ed25519_verify(c, sig, pub, blk, 16), 0);
	/* A bad pin (unknown primitive, unloaded backend, backend without it) changes nothing. */
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "sodium, frob=openssl"), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "sodium, ed25519=nosuch"), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "aes256-cbc=sodium, openssl"), RNSC_ERR_INVAL);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_ED25519), "openssl");
	/* Loading the same plugin again is rejected as a duplicate. */
	CU_ASSERT_EQUAL(load(h, crypto_dir, "openssl.so"), RNSC_ERR_DUPLICATE);
	CU_ASSERT_EQUAL(rnsc_plugin_host_count(h), (size_t)n_crypto_so + 1);
	CU_ASSERT_EQUAL(rnsc_plugin_host_at(h, (size_t)n_crypto_so)->status, RNSC_ERR_DUPLICATE);
	CU_ASSERT_PTR_NULL(rnsc_plugin_host_at(h, (size_t)n_crypto_so + 1));
	rnsc_plugin_host_del(h);
	/* Unloading unregisters the backends. */
	CU_ASSERT_PTR_NULL(rnsc_crypto_backend_find(c, "openssl"));
	rnsc_ctx_del(c);
}

static void expect_broken(const char *file, int code)
{
	rnsc_ctx *c = quiet_ctx();
	rnsc_plugin_host *h;
	CU_ASSERT_EQUAL_FATAL(rnsc_plugin_host_new(c, &h), 0);
	int rc = load(h, broken_dir, file);
	if (rc != code)
		fprintf(stderr, "\n%s: got %s, want %s\n", file, rnsc_err_name(rc),
			rnsc_err_name(code));
	CU_ASSERT_EQUAL(rc, code);
	const rnsc_plugin_rec *r = rnsc_plugin_host_at(h, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->status, code);
	CU_ASSERT(strstr(r->file, file) != NULL);
	CU_ASSERT(r->error[0] != '\0');
	/* The host carries on: a good plugin still loads afterwards. */
	CU_ASSERT_EQUAL(load(h, crypto_dir, "openssl.so"), 0);
	CU_ASSERT_PTR_NOT_NULL(rnsc_crypto_backend_find(c, "openssl"));
	CU_ASSERT_PTR_NULL(rnsc_crypto_backend_find(c, "broken"));
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(c);
}

static void test_broken_nosym(void)
{
	expect_broken("broken_nosym.so", RNSC_ERR_NOSYM);
}
static void test_broken_abi(void)
{
	expect_broken("broken_abi.so", RNSC_ERR_ABI);
}
static void test_broken_size(void)
{
	expect_broken("broken_size.so", RNSC_ERR_ABI);
}
static void test_broken_init(void)
{
	expect_broken("broken_init.so", RNSC_ERR_PLUGIN_INIT);
}
static void test_broken_selftest(void)
{
	expect_broken("broken_selftest.so", RNSC_ERR_SELFTEST);
}
static void test_broken_nullops(void)
{
	expect_broken("broken_nullops.so", RNSC_ERR_PLUGIN_DESC);
}

static void test_not_a_library(void)
{
	char path[] = "/tmp/rnsc-garbage-XXXXXX.so";
	int fd = mkstemps(path, 3);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(write(fd, "this is not an ELF file\n", 24) == 24);
	close(fd);
	rnsc_ctx *c = quiet_ctx();
	rnsc_plugin_host *h;
	CU_ASSERT_EQUAL_FATAL(rnsc_plugin_host_new(c, &h), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_load_file(h, path), RNSC_ERR_DLOPEN);
	CU_ASSERT(strstr(rnsc_plugin_host_at(h, 0)->error, "dlopen") != NULL);
	CU_ASSERT_EQUAL(rnsc_plugin_host_load_file(h, "/nonexistent/x.so"), RNSC_ERR_DLOPEN);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(c);
	unlink(path);
}

static void test_scan_mixed_dir(void)
{
	/* A folder of broken plugins never takes the host down; nothing from it is active. */
	rnsc_ctx *c = quiet_ctx();
	rnsc_plugin_host *h;
	CU_ASSERT_EQUAL_FATAL(rnsc_plugin_host_new(c, &h), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_dir(h, broken_dir), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_dir(h, broken_dir), 0); /* deduplicated */
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_dir(h, "/nonexistent"), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_dir(h, crypto_dir), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_scan(h), n_crypto_so);
	size_t bad = 0;
	for (size_t i = 0; i < rnsc_plugin_host_count(h); i++)
		bad += rnsc_plugin_host_at(h, i)->status != 0;
	CU_ASSERT_EQUAL(bad, 6);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(c);
}

static void test_config_and_env_dirs(void)
{
	rnsc_ctx *c = quiet_ctx();
	rnsc_plugin_host *h;
	CU_ASSERT_EQUAL_FATAL(rnsc_plugin_host_new(c, &h), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_set_config(h, "openssl", "k", "v"), 0);
	char env[8192];
	snprintf(env, sizeof(env), "%s:/nonexistent", crypto_dir);
	setenv("RNSC_PLUGIN_PATH", env, 1);
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_default_dirs(h), 0);
	CU_ASSERT(rnsc_plugin_host_scan(h) >= 2);
	CU_ASSERT_PTR_NOT_NULL(rnsc_plugin_host_find(h, "sodium"));
	CU_ASSERT_EQUAL(rnsc_plugin_host_add_dir(h, ""), RNSC_ERR_INVAL);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(c);
}

int main(void)
{
	const char *b = getenv("RNSC_BUILDDIR");
	if (!b || !*b)
		b = RNSC_BUILDDIR;
	snprintf(crypto_dir, sizeof(crypto_dir), "%s/plugins/crypto/.libs", b);
	snprintf(broken_dir, sizeof(broken_dir), "%s/tests/plugins/.libs", b);
	count_crypto_plugins();
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("plugin_host", NULL, NULL);
	CU_add_test(s, "good plugins, order and fallback", test_good_plugins);
	CU_add_test(s, "missing entry point", test_broken_nosym);
	CU_add_test(s, "wrong ABI major", test_broken_abi);
	CU_add_test(s, "descriptor too small", test_broken_size);
	CU_add_test(s, "failing init", test_broken_init);
	CU_add_test(s, "failing self-test", test_broken_selftest);
	CU_add_test(s, "NULL ops table", test_broken_nullops);
	CU_add_test(s, "not a shared object", test_not_a_library);
	CU_add_test(s, "scan a folder of broken plugins", test_scan_mixed_dir);
	CU_add_test(s, "config and RNSC_PLUGIN_PATH", test_config_and_env_dirs);
	return rnsc_cu_run();
}
