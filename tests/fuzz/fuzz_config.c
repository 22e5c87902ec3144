/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the configuration reader (src/runtime/cfgfile.c and cfg_*.c).
 *
 * Any bytes: the parse either fails with one of its documented codes and a message,
 * or yields a tree on which every getter of every option, the settings reader and the
 * interface walk all return documented codes. Parsing twice gives the same tree
 * shape. A third parse runs with an allocation failure injected at a point chosen
 * from the input, which must end in RNSC_ERR_NOMEM or success and never leak.
 *
 * Build (tests/fuzz/run.sh does this):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -Isrc/lib -Isrc/runtime tests/fuzz/fuzz_config.c src/runtime/cfgfile.c \
 *     src/runtime/cfg_scan.c src/runtime/cfg_parse.c src/runtime/cfg_access.c \
 *     src/runtime/cfg_interp.c src/runtime/cfg_convert.c src/runtime/cfg_settings.c \
 *     src/runtime/cfg_locate.c src/runtime/store.c src/lib/ctx.c src/lib/err.c \
 *     -lpthread -o fuzz_config
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfgfile.h"

static void fail(void)
{
	abort();
}

static int parse_code_ok(int rc)
{
	return rc == RNSC_ERR_MALFORMED || rc == RNSC_ERR_CONFIG_SYNTAX ||
	       rc == RNSC_ERR_CONFIG_DUP || rc == RNSC_ERR_TOOBIG || rc == RNSC_ERR_NOMEM;
}

static int get_code_ok(int rc)
{
	return rc == 0 || rc == RNSC_ERR_CONFIG_VALUE || rc == RNSC_ERR_CONFIG_INTERP ||
	       rc == RNSC_ERR_RANGE || rc == RNSC_ERR_NOMEM || rc == RNSC_ERR_NOTFOUND;
}

static size_t walk(const rnsc_config_section *s, unsigned depth)
{
	size_t n = 1;
	rnsc_config_error err;
	if (rnsc_config_section_depth(s) != depth)
		fail();
	for (size_t i = 0; i < rnsc_config_option_count(s); i++) {
		const char *k = rnsc_config_option_name(s, i);
		const char *v;
		const char *const *it;
		size_t cnt;
		int b;
		int64_t iv;
		double fv;
		if (!k || !rnsc_config_has(s, k) || rnsc_config_option_line(s, k) == 0)
			fail();
		int is_list = rnsc_config_is_list(s, k);
		int rc = rnsc_config_get_str(s, k, &v, &err);
		if (!get_code_ok(rc) || (rc == 0 && (is_list || !v)) || (rc && err.code != rc))
			fail();
		rc = rnsc_config_get_list(s, k, &it, &cnt, &err);
		if (!get_code_ok(rc))
			fail();
		for (size_t j = 0; rc == 0 && j < cnt; j++)
			if (!it[j] || strlen(it[j]) > (size_t)64 * 1024)
				fail();
		if (!get_code_ok(rnsc_config_get_bool(s, k, &b, &err)) ||
		    !get_code_ok(rnsc_config_get_int(s, k, &iv, &err)) ||
		    !get_code_ok(rnsc_config_get_float(s, k, &fv, &err)))
			fail();
	}
	for (size_t i = 0; i < rnsc_config_section_count(s); i++) {
		const rnsc_config_section *c = rnsc_config_section_at(s, i);
		if (rnsc_config_section_parent(c) != s ||
		    rnsc_config_section_get(s, rnsc_config_section_name(c)) != c)
			fail();
		n += walk(c, depth + 1);
	}
	return n;
}

static size_t exercise(rnsc_config *cfg)
{
	rnsc_config_error err;
	size_t n = walk(rnsc_config_root(cfg), 0);
	rnsc_config_settings st;
	if (!get_code_ok(rnsc_config_read_settings(cfg, &st, &err)))
		fail();
	for (size_t i = 0; i < rnsc_config_iface_count(cfg); i++) {
		rnsc_config_iface ifc;
		int rc = rnsc_config_iface_at(cfg, i, &ifc, &err);
		if (!get_code_ok(rc) || (rc == 0 && ifc.enabled && !ifc.type))
			fail();
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_config *cfg = NULL, *again = NULL;
	rnsc_config_error err;
	int rc = rnsc_config_parse(NULL, (const char *)data, size, "fuzz", &cfg, &err);
	if (rc) {
		if (!parse_code_ok(rc) || cfg || err.code != rc || !err.msg[0])
			fail();
	} else {
		size_t n = exercise(cfg);
		if (rnsc_config_parse(NULL, (const char *)data, size, NULL, &again, &err) != 0 ||
		    walk(rnsc_config_root(again), 0) != n)
			fail();
		rnsc_config_del(again);
		rnsc_config_del(cfg);
	}

	rnsc_ctx *ctx;
	if (rnsc_ctx_new(&ctx) != 0)
		return 0;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	rnsc_ctx_fail_alloc_after(ctx, 1 + h % 97);
	int rc2 = rnsc_config_parse(ctx, (const char *)data, size, NULL, &cfg, &err);
	if (rc2 == 0) {
		exercise(cfg);
		rnsc_config_del(cfg);
	} else if (rc2 != RNSC_ERR_NOMEM && rc2 != rc) {
		fail();
	}
	rnsc_ctx_del(ctx);
	return 0;
}
