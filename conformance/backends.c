/* SPDX-License-Identifier: MIT */
#include "backends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_host.h"
#include "pyref.h"

static struct {
	int ready;
	rnsc_ctx *ctx;
	rnsc_plugin_host *host;
	rnsc_pyref *ref;
	char vectors[4096];
} S;

int conf_setup(void)
{
	if (S.ready)
		return 0;
	int rc = rnsc_ctx_new(&S.ctx);
	if (rc)
		return rc;
	rnsc_ctx_set_log_level(S.ctx, RNSC_LOG_WARNING);
	if ((rc = rnsc_plugin_host_new(S.ctx, &S.host)) ||
	    (rc = rnsc_plugin_host_add_default_dirs(S.host)))
		goto fail;
	rnsc_plugin_host_scan(S.host);
	if (!rnsc_crypto_backend_find(S.ctx, "openssl")) {
		fprintf(stderr, "conformance: the openssl crypto plugin did not load (searched "
				"$RNSC_PLUGIN_PATH and the build tree); build it with 'make'\n");
		rc = RNSC_ERR_NOTFOUND;
		goto fail;
	}
	if ((rc = rnsc_pyref_open(S.ctx, &S.ref)) != 0) {
		fprintf(stderr,
			"conformance: FAILED: the embedded reference (pinned rns) cannot be "
			"imported: %s.\nInstall it with 'make venv' (creates $RNSC_VENV and "
			"pip-installs interop/requirements.txt).\n",
			rnsc_strerror(rc));
		goto fail;
	}
	if ((rc = rnsc_crypto_register(S.ctx, "reference", rnsc_pyref_crypto_ops(), S.ref,
				       rnsc_pyref_crypto_prims())) != 0)
		goto fail;
	/* The reference is a backend under test, never the default provider. */
	char order[512] = "";
	for (size_t i = 0; i < conf_backend_count(); i++) {
		const rnsc_crypto_backend *be = conf_backend(i);
		if (strcmp(be->name, "reference") == 0)
			continue;
		if (order[0])
			strncat(order, ",", sizeof(order) - strlen(order) - 1);
		strncat(order, be->name, sizeof(order) - strlen(order) - 1);
	}
	if ((rc = rnsc_crypto_set_order(S.ctx, order)) != 0)
		goto fail;
	const char *src = getenv("RNSC_SRCDIR");
	snprintf(S.vectors, sizeof(S.vectors), "%s/conformance/vectors",
		 src && *src ? src : RNSC_SRCDIR);
	S.ready = 1;
	return 0;
fail:
	conf_teardown();
	return rc ? rc : RNSC_ERR_FATAL;
}

void conf_teardown(void)
{
	if (S.ctx && S.ref)
		(void)rnsc_crypto_unregister(S.ctx, "reference");
	rnsc_pyref_close(S.ref);
	rnsc_plugin_host_del(S.host);
	rnsc_ctx_del(S.ctx);
	memset(&S, 0, sizeof(S));
}

rnsc_ctx *conf_ctx(void)
{
	return S.ctx;
}

struct rnsc_pyref *conf_ref(void)
{
	return S.ref;
}

size_t conf_backend_count(void)
{
	size_t n = 0;
	while (S.ctx && rnsc_crypto_backend_at(S.ctx, n))
		n++;
	return n;
}

/* openssl first, then the rest in load (file name) order: the suites that run on
 * conf_backend(0) alone keep running on the default provider however the other
 * plugins are named (nettle sorts before openssl). */
const rnsc_crypto_backend *conf_backend(size_t i)
{
	const rnsc_crypto_backend *lead = S.ctx ? rnsc_crypto_backend_find(S.ctx, "openssl") : NULL;
	if (!S.ctx)
		return NULL;
	if (!lead)
		return rnsc_crypto_backend_at(S.ctx, i);
	if (i == 0)
		return lead;
	for (size_t k = 0, seen = 0;; k++) {
		const rnsc_crypto_backend *be = rnsc_crypto_backend_at(S.ctx, k);
		if (!be)
			return NULL;
		if (be != lead && ++seen == i)
			return be;
	}
}

rnsc_ctx *conf_ctx_for(const char *name)
{
	rnsc_ctx *c;
	if (!S.ready || rnsc_ctx_new(&c) != 0)
		return NULL;
	rnsc_ctx_set_log_level(c, RNSC_LOG_WARNING);
	const rnsc_crypto_backend *first = rnsc_crypto_backend_find(S.ctx, name);
	if (!first || rnsc_crypto_register(c, first->name, first->ops, first->inst, first->prims)) {
		rnsc_ctx_del(c);
		return NULL;
	}
	/* The fallbacks for primitives the named backend lacks are the plugins, never the
	 * reference (so a cross-check always has rnsc crypto on the rnsc side). */
	for (size_t i = 0; i < conf_backend_count(); i++) {
		const rnsc_crypto_backend *be = conf_backend(i);
		if (be == first || strcmp(be->name, "reference") == 0)
			continue;
		(void)rnsc_crypto_register(c, be->name, be->ops, be->inst, be->prims);
	}
	return c;
}

const char *conf_vectors_dir(void)
{
	return S.vectors;
}
