/* SPDX-License-Identifier: MIT */
/* The plugin host's handshake, exercised with plugins linked into this test (the builtin
 * path static builds use): every rejection reason, and every upcall a plugin can make. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "cu_run.h"
#include "plugin_host.h"

/* ---- a well-behaved scenario plugin that uses every upcall in its init ---------------- */

static int upcalls_ok;
static int dummy_ops;

static int use_host(void *inst, const rnsc_host_api *h)
{
	(void)inst;
	h->log(h->host_ctx, RNSC_LOG_NOTICE, "probe", "hello from a builtin plugin");
	void *p = h->alloc(h->host_ctx, 32);
	if (!p)
		return RNSC_ERR_NOMEM;
	memset(p, 1, 32);
	h->free(h->host_ctx, p);
	uint64_t a = h->now_ns(h->host_ctx), b = h->now_ns(h->host_ctx);
	const char *v = h->config_get(h->host_ctx, "probe", "colour");
	const char *none = h->config_get(h->host_ctx, "probe", "missing");
	upcalls_ok = b >= a && v && strcmp(v, "blue") == 0 && none == NULL;
	return 0;
}

static const rnsc_plugin_desc probe_desc = {
	.struct_size = sizeof(rnsc_plugin_desc),
	.abi_major = RNSC_PLUGIN_ABI_MAJOR,
	.abi_minor = RNSC_PLUGIN_ABI_MINOR,
	.kind = RNSC_PLUGIN_SCENARIO,
	.name = "probe",
	.version = "1.0",
	.inst_size = 16,
	.ops = &dummy_ops,
	.init = use_host,
};

static int probe_entry(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = &probe_desc;
	return 0;
}

/* ---- crypto plugins that fail at each later step -------------------------------------- */

static int fail_init(void *inst, const rnsc_host_api *h)
{
	(void)inst, (void)h;
	return RNSC_ERR_IO;
}

static int fini_calls;
static void count_fini(void *inst)
{
	(void)inst;
	fini_calls++;
}

static int selftest_ok(void *inst)
{
	(void)inst;
	return 0;
}

static int fake_sha(void *inst, uint8_t out[32], const uint8_t *m, size_t n)
{
	(void)inst, (void)m, (void)n;
	memset(out, 0, 32);
	return 0;
}

/* Too small to even hold the self-test slot. */
static const rnsc_crypto_ops ops_tiny = {.struct_size = sizeof(size_t)};
/* Claims SHA-256 (in caps) but has no sha256 slot: registration must refuse it. */
static const rnsc_crypto_ops ops_noslot = {.struct_size = sizeof(rnsc_crypto_ops),
					   .self_test = selftest_ok};
static const rnsc_crypto_ops ops_sha = {
	.struct_size = sizeof(rnsc_crypto_ops), .self_test = selftest_ok, .sha256 = fake_sha};

/* A streaming hash from before the hash_copy slot (its struct ends at randomx_del). */
static int old_init(void *inst, rnsc_hash_state *st, int alg)
{
	(void)inst, (void)alg;
	st->bytes[0] = 1;
	return 0;
}
static int old_update(void *inst, rnsc_hash_state *st, const uint8_t *p, size_t len)
{
	(void)inst, (void)st, (void)p, (void)len;
	return 0;
}
static int old_final(void *inst, rnsc_hash_state *st, uint8_t *out)
{
	(void)inst, (void)st;
	memset(out, 0, 32);
	return 0;
}
static void old_abort(void *inst, rnsc_hash_state *st)
{
	(void)inst, (void)st;
}
static const rnsc_crypto_ops ops_old_stream = {
	.struct_size = offsetof(rnsc_crypto_ops, hash_copy),
	.self_test = selftest_ok,
	.hash_init = old_init,
	.hash_update = old_update,
	.hash_final = old_final,
	.hash_abort = old_abort,
};

#define CRYPTO_DESC(var, nm, opsp, capsv, initfn)                                                  \
	static const rnsc_plugin_desc var = {                                                      \
		.struct_size = sizeof(rnsc_plugin_desc),                                           \
		.abi_major = RNSC_PLUGIN_ABI_MAJOR,                                                \
		.abi_minor = RNSC_PLUGIN_ABI_MINOR,                                                \
		.kind = RNSC_PLUGIN_CRYPTO,                                                        \
		.name = nm,                                                                        \
		.version = "0",                                                                    \
		.caps = capsv,                                                                     \
		.inst_size = 8,                                                                    \
		.ops = opsp,                                                                       \
		.init = initfn,                                                                    \
		.fini = count_fini,                                                                \
	}

CRYPTO_DESC(d_init, "c_init", &ops_sha, RNSC_PRIM_BIT(RNSC_PRIM_SHA256), fail_init);
CRYPTO_DESC(d_tiny, "c_tiny", &ops_tiny, 0, NULL);
CRYPTO_DESC(d_noslot, "c_noslot", &ops_noslot, RNSC_PRIM_BIT(RNSC_PRIM_SHA256), NULL);
CRYPTO_DESC(d_good, "c_good", &ops_sha, RNSC_PRIM_BIT(RNSC_PRIM_SHA256), NULL);

static const rnsc_plugin_desc *next_desc;
static int entry_returns;
static int generic_entry(const rnsc_host_api *host, const rnsc_plugin_desc **out)
{
	(void)host;
	*out = next_desc;
	return entry_returns;
}

static const rnsc_plugin_desc d_minor = {.struct_size = sizeof(rnsc_plugin_desc),
					 .abi_major = RNSC_PLUGIN_ABI_MAJOR,
					 .abi_minor = RNSC_PLUGIN_ABI_MINOR + 1,
					 .kind = RNSC_PLUGIN_CRYPTO,
					 .name = "newer",
					 .version = "0",
					 .ops = &ops_sha};
static const rnsc_plugin_desc d_kind = {.struct_size = sizeof(rnsc_plugin_desc),
					.abi_major = RNSC_PLUGIN_ABI_MAJOR,
					.kind = 42,
					.name = "oddkind",
					.version = "0",
					.ops = &ops_sha};
static const rnsc_plugin_desc d_noname = {.struct_size = sizeof(rnsc_plugin_desc),
					  .abi_major = RNSC_PLUGIN_ABI_MAJOR,
					  .kind = RNSC_PLUGIN_CRYPTO,
					  .name = "",
					  .version = "0",
					  .ops = &ops_sha};

static int try_desc(rnsc_plugin_host *h, const rnsc_plugin_desc *d, int entry_rc)
{
	next_desc = d;
	entry_returns = entry_rc;
	return rnsc_plugin_host_load_builtin(h, generic_entry, d ? d->name : "null");
}

static void test_builtins(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_ctx_set_log(c, NULL, NULL, 0);
	rnsc_plugin_host *h;
	CU_ASSERT_EQUAL_FATAL(rnsc_plugin_host_new(c, &h), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_set_config(h, "probe", "colour", "blue"), 0);
	CU_ASSERT_EQUAL(rnsc_plugin_host_load_builtin(h, probe_entry, "probe"), 0);
	CU_ASSERT(upcalls_ok);
	const rnsc_plugin_rec *r = rnsc_plugin_host_find(h, "probe");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_STRING_EQUAL(r->file, "builtin:probe");
	CU_ASSERT_STRING_EQUAL(rnsc_plugin_kind_name(r->desc->kind), "scenario");
	CU_ASSERT_STRING_EQUAL(rnsc_plugin_kind_name(RNSC_PLUGIN_IFACE), "iface");
	CU_ASSERT_STRING_EQUAL(rnsc_plugin_kind_name(99), "unknown");

	CU_ASSERT_EQUAL(try_desc(h, &d_init, 0), RNSC_ERR_PLUGIN_INIT);
	CU_ASSERT_EQUAL(try_desc(h, &d_tiny, 0), RNSC_ERR_PLUGIN_DESC);
	int before = fini_calls;
	CU_ASSERT_EQUAL(try_desc(h, &d_noslot, 0), RNSC_ERR_PLUGIN_DESC);
	CU_ASSERT_EQUAL(fini_calls, before + 1); /* init's work is undone on rejection */
	CU_ASSERT_EQUAL(try_desc(h, &d_minor, 0), RNSC_ERR_ABI);
	CU_ASSERT_EQUAL(try_desc(h, &d_kind, 0), RNSC_ERR_PLUGIN_DESC);
	CU_ASSERT_EQUAL(try_desc(h, &d_noname, 0), RNSC_ERR_PLUGIN_DESC);
	CU_ASSERT_EQUAL(try_desc(h, NULL, 0), RNSC_ERR_PLUGIN_DESC);
	CU_ASSERT_EQUAL(try_desc(h, &d_good, RNSC_ERR_IO), RNSC_ERR_PLUGIN_INIT);
	CU_ASSERT_PTR_NULL(rnsc_crypto_backend_find(c, "c_noslot"));
	/* A good builtin crypto backend registers and serves. */
	CU_ASSERT_EQUAL(try_desc(h, &d_good, 0), 0);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_SHA256), "c_good");
	CU_ASSERT_EQUAL(try_desc(h, &d_good, 0), RNSC_ERR_DUPLICATE);
	before = fini_calls;
	rnsc_plugin_host_del(h);
	CU_ASSERT_EQUAL(fini_calls, before + 1);
	CU_ASSERT_PTR_NULL(rnsc_crypto_backend_find(c, "c_good"));
	rnsc_ctx_del(c);
}

static void test_registry_limits(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_ctx_set_log(c, NULL, NULL, 0);
	char names[RNSC_CRYPTO_MAX_BACKENDS + 1][8];
	for (int i = 0; i < RNSC_CRYPTO_MAX_BACKENDS; i++) {
		snprintf(names[i], sizeof(names[i]), "b%d", i);
		CU_ASSERT_EQUAL(rnsc_crypto_register(c, names[i], &ops_sha, NULL,
						     RNSC_PRIM_BIT(RNSC_PRIM_SHA256)),
				0);
	}
	CU_ASSERT_EQUAL(rnsc_crypto_register(c, "one-too-many", &ops_sha, NULL, 0), RNSC_ERR_RANGE);
	CU_ASSERT_EQUAL(rnsc_crypto_register(c, "b3", &ops_sha, NULL, 0), RNSC_ERR_DUPLICATE);
	CU_ASSERT_EQUAL(rnsc_crypto_register(c, NULL, &ops_sha, NULL, 0), RNSC_ERR_INVAL);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "b5 b2,b5"), 0); /* duplicates collapse */
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_SHA256), "b5");
	CU_ASSERT_EQUAL(rnsc_crypto_unregister(c, "b5"), 0);
	CU_ASSERT_STRING_EQUAL(rnsc_crypto_provider(c, RNSC_PRIM_SHA256), "b2");
	CU_ASSERT_EQUAL(rnsc_crypto_unregister(c, "b5"), RNSC_ERR_NOTFOUND);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, ""), 0);
	CU_ASSERT_PTR_NULL(rnsc_crypto_provider(c, RNSC_PRIM_SHA256));
	rnsc_ctx_del(c);
}

/* rnsc_hash_copy says so when the backend predates the slot, and refuses dead states. */
static void test_hash_copy_absent(void)
{
	rnsc_ctx *c;
	CU_ASSERT_EQUAL_FATAL(rnsc_ctx_new(&c), 0);
	rnsc_ctx_set_log(c, NULL, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_crypto_register(c, "old", &ops_old_stream, NULL,
						   RNSC_PRIM_BIT(RNSC_PRIM_HASH_STREAM)),
			      0);
	CU_ASSERT_EQUAL(rnsc_crypto_set_order(c, "old"), 0);
	rnsc_hash a, b;
	CU_ASSERT_EQUAL_FATAL(rnsc_hash_init(c, &a, RNSC_HASH_SHA256), 0);
	CU_ASSERT_EQUAL(rnsc_hash_copy(&b, &a), RNSC_ERR_NOPRIM);
	CU_ASSERT_EQUAL(rnsc_hash_final(&b, NULL), RNSC_ERR_STATE); /* b holds nothing */
	rnsc_hash_abort(&a);
	CU_ASSERT_EQUAL(rnsc_hash_copy(&b, &a), RNSC_ERR_STATE);
	CU_ASSERT_EQUAL(rnsc_hash_copy(NULL, &a), RNSC_ERR_INVAL);
	rnsc_ctx_del(c);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("plugin_builtin", NULL, NULL);
	CU_add_test(s, "builtin handshake, rejections and upcalls", test_builtins);
	CU_add_test(s, "crypto registry limits and order", test_registry_limits);
	CU_add_test(s, "hash copy from a backend without the slot", test_hash_copy_absent);
	return rnsc_cu_run();
}
