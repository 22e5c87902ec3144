/* SPDX-License-Identifier: MIT */
#include "plugin_host.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "iface_abi.h"

#define MAX_DIRS 16

typedef struct cfg_entry {
	struct cfg_entry *next;
	char *plugin, *key, *value;
} cfg_entry;

struct rnsc_plugin_host {
	rnsc_ctx *ctx;
	rnsc_host_api api;
	char *dirs[MAX_DIRS];
	size_t n_dirs;
	rnsc_plugin_rec *recs;
	size_t n_recs, cap_recs;
	cfg_entry *cfg;
};

const char *rnsc_plugin_kind_name(uint32_t kind)
{
	switch (kind) {
	case RNSC_PLUGIN_IFACE:
		return "iface";
	case RNSC_PLUGIN_CRYPTO:
		return "crypto";
	case RNSC_PLUGIN_SCENARIO:
		return "scenario";
	}
	return "unknown";
}

/* ---- upcalls ----------------------------------------------------------------------- */

static void api_log(void *hc, int level, const char *plugin, const char *msg)
{
	rnsc_plugin_host *h = hc;
	rnsc_log(h->ctx, level, plugin ? plugin : "plugin", "%s", msg);
}

static void *api_alloc(void *hc, size_t n)
{
	return rnsc_alloc(((rnsc_plugin_host *)hc)->ctx, n);
}

static void api_free(void *hc, void *p)
{
	rnsc_free(((rnsc_plugin_host *)hc)->ctx, p);
}

static uint64_t api_now_ns(void *hc)
{
	(void)hc;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *api_config_get(void *hc, const char *plugin, const char *key)
{
	rnsc_plugin_host *h = hc;
	for (cfg_entry *e = h->cfg; e; e = e->next)
		if (strcmp(e->plugin, plugin) == 0 && strcmp(e->key, key) == 0)
			return e->value;
	return NULL;
}

/* ---- host object ------------------------------------------------------------------- */

int rnsc_plugin_host_new(rnsc_ctx *ctx, rnsc_plugin_host **out)
{
	rnsc_plugin_host *h = rnsc_calloc(ctx, 1, sizeof(*h));
	if (!h)
		return RNSC_ERR_NOMEM;
	h->ctx = ctx;
	h->api = (rnsc_host_api){
		.struct_size = sizeof(rnsc_host_api),
		.abi_major = RNSC_PLUGIN_ABI_MAJOR,
		.abi_minor = RNSC_PLUGIN_ABI_MINOR,
		.host_ctx = h,
		.log = api_log,
		.alloc = api_alloc,
		.free = api_free,
		.now_ns = api_now_ns,
		.config_get = api_config_get,
	};
	*out = h;
	return 0;
}

static void rec_release(rnsc_plugin_host *h, rnsc_plugin_rec *r)
{
	if (r->status == 0 && r->desc) {
		if (r->desc->kind == RNSC_PLUGIN_CRYPTO)
			(void)rnsc_crypto_unregister(h->ctx, r->desc->name);
		if (r->desc->fini)
			r->desc->fini(r->inst);
	}
	if (r->inst && r->desc)
		rnsc_free_secret(h->ctx, r->inst, r->desc->inst_size);
	else
		rnsc_free(h->ctx, r->inst);
	r->inst = NULL;
	if (r->handle)
		dlclose(r->handle);
	r->handle = NULL;
	rnsc_free(h->ctx, r->file);
	r->file = NULL;
}

void rnsc_plugin_host_del(rnsc_plugin_host *h)
{
	if (!h)
		return;
	/* Unload in reverse order so later plugins never outlive ones loaded before them. */
	for (size_t i = h->n_recs; i-- > 0;)
		rec_release(h, &h->recs[i]);
	rnsc_free(h->ctx, h->recs);
	for (size_t i = 0; i < h->n_dirs; i++)
		rnsc_free(h->ctx, h->dirs[i]);
	for (cfg_entry *e = h->cfg, *n; e; e = n) {
		n = e->next;
		rnsc_free(h->ctx, e->plugin);
		rnsc_free(h->ctx, e->key);
		rnsc_free(h->ctx, e->value);
		rnsc_free(h->ctx, e);
	}
	rnsc_free(h->ctx, h);
}

static char *dup_str(rnsc_ctx *ctx, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = rnsc_alloc(ctx, n);
	if (d)
		memcpy(d, s, n);
	return d;
}

int rnsc_plugin_host_set_config(rnsc_plugin_host *h, const char *plugin, const char *key,
				const char *value)
{
	cfg_entry *e = rnsc_calloc(h->ctx, 1, sizeof(*e));
	if (!e)
		return RNSC_ERR_NOMEM;
	e->plugin = dup_str(h->ctx, plugin);
	e->key = dup_str(h->ctx, key);
	e->value = dup_str(h->ctx, value);
	if (!e->plugin || !e->key || !e->value) {
		rnsc_free(h->ctx, e->plugin);
		rnsc_free(h->ctx, e->key);
		rnsc_free(h->ctx, e->value);
		rnsc_free(h->ctx, e);
		return RNSC_ERR_NOMEM;
	}
	e->next = h->cfg;
	h->cfg = e;
	return 0;
}

int rnsc_plugin_host_add_dir(rnsc_plugin_host *h, const char *dir)
{
	if (!dir || !*dir)
		return RNSC_ERR_INVAL;
	for (size_t i = 0; i < h->n_dirs; i++)
		if (strcmp(h->dirs[i], dir) == 0)
			return 0;
	if (h->n_dirs >= MAX_DIRS)
		return RNSC_ERR_RANGE;
	char *d = dup_str(h->ctx, dir);
	if (!d)
		return RNSC_ERR_NOMEM;
	h->dirs[h->n_dirs++] = d;
	return 0;
}

#ifdef RNSC_BUILDDIR
/* 1 when this process's executable lies inside RNSC_BUILDDIR (libtool runs the build tree's
 * programs from .libs/ there), so the build tree's plugins belong to it. */
static int running_from_build_tree(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	char dir[4096];
	if (!realpath(RNSC_BUILDDIR, dir)) /* the build tree is gone */
		return 0;
	size_t bl = strlen(dir);
	return strncmp(exe, dir, bl) == 0 && exe[bl] == '/';
}
#endif

int rnsc_plugin_host_add_default_dirs(rnsc_plugin_host *h)
{
	const char *env = getenv("RNSC_PLUGIN_PATH");
	int rc = 0;
	if (env && *env) {
		char *copy = dup_str(h->ctx, env);
		if (!copy)
			return RNSC_ERR_NOMEM;
		char *save = NULL;
		for (char *tok = strtok_r(copy, ":", &save); tok && rc == 0;
		     tok = strtok_r(NULL, ":", &save))
			rc = rnsc_plugin_host_add_dir(h, tok);
		rnsc_free(h->ctx, copy);
	}
#ifdef RNSC_BUILDDIR
	static const char *const build_dirs[] = {"plugins/crypto/.libs", "plugins/iface/.libs",
						 "plugins/scenario/.libs"};
	char path[4096];
	/* Only a program run from the build tree loads the build tree's plugins: an installed
	 * rnsc must never pick up whatever a later build left there. */
	int in_tree = running_from_build_tree();
	for (size_t i = 0; in_tree && rc == 0 && i < sizeof(build_dirs) / sizeof(build_dirs[0]);
	     i++) {
		snprintf(path, sizeof(path), "%s/%s", RNSC_BUILDDIR, build_dirs[i]);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rc = rnsc_plugin_host_add_dir(h, path);
	}
#endif
#ifdef RNSC_PLUGINDIR
	if (rc == 0)
		rc = rnsc_plugin_host_add_dir(h, RNSC_PLUGINDIR);
#endif
	return rc;
}

static rnsc_plugin_rec *new_rec(rnsc_plugin_host *h, const char *file)
{
	if (h->n_recs == h->cap_recs) {
		size_t cap = h->cap_recs ? h->cap_recs * 2 : 8;
		rnsc_plugin_rec *n = rnsc_calloc(h->ctx, cap, sizeof(*n));
		if (!n)
			return NULL;
		if (h->n_recs)
			memcpy(n, h->recs, h->n_recs * sizeof(*n));
		rnsc_free(h->ctx, h->recs);
		h->recs = n;
		h->cap_recs = cap;
	}
	rnsc_plugin_rec *r = &h->recs[h->n_recs];
	memset(r, 0, sizeof(*r));
	r->file = dup_str(h->ctx, file);
	if (!r->file)
		return NULL;
	h->n_recs++;
	return r;
}

__attribute__((format(printf, 4, 5))) static int fail(rnsc_plugin_host *h, rnsc_plugin_rec *r,
						      int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	r->status = code;
	rnsc_log(h->ctx, code == RNSC_ERR_DUPLICATE ? RNSC_LOG_VERBOSE : RNSC_LOG_ERROR, "plugins",
		 "%s: %s (%s)", r->file, r->error, rnsc_err_name(code));
	if (r->inst) {
		rnsc_free(h->ctx, r->inst);
		r->inst = NULL;
	}
	if (r->handle) {
		dlclose(r->handle);
		r->handle = NULL;
	}
	r->desc = NULL;
	return code;
}

const rnsc_plugin_rec *rnsc_plugin_host_find(const rnsc_plugin_host *h, const char *name)
{
	for (size_t i = 0; i < h->n_recs; i++)
		if (h->recs[i].status == 0 && h->recs[i].desc &&
		    strcmp(h->recs[i].desc->name, name) == 0)
			return &h->recs[i];
	return NULL;
}

/* Everything after the entry point is shared by files and builtins. */
static int handshake(rnsc_plugin_host *h, rnsc_plugin_rec *r, rnsc_plugin_init_fn init)
{
	const rnsc_plugin_desc *d = NULL;
	int rc = init(&h->api, &d);
	if (rc != 0)
		return fail(h, r, RNSC_ERR_PLUGIN_INIT, "rnsc_plugin_init returned %d (%s)", rc,
			    rnsc_err_name(rc));
	if (!d)
		return fail(h, r, RNSC_ERR_PLUGIN_DESC, "rnsc_plugin_init returned no descriptor");
	if (d->struct_size < sizeof(rnsc_plugin_desc) || d->abi_major != RNSC_PLUGIN_ABI_MAJOR ||
	    d->abi_minor > RNSC_PLUGIN_ABI_MINOR)
		return fail(
			h, r, RNSC_ERR_ABI,
			"plugin ABI %u.%u (descriptor %zu bytes) is not compatible with host ABI "
			"%u.%u (descriptor %zu bytes)",
			d->abi_major, d->abi_minor, d->struct_size, RNSC_PLUGIN_ABI_MAJOR,
			RNSC_PLUGIN_ABI_MINOR, sizeof(rnsc_plugin_desc));
	if (!d->name || !*d->name || !d->version || !d->ops ||
	    (d->kind != RNSC_PLUGIN_IFACE && d->kind != RNSC_PLUGIN_CRYPTO &&
	     d->kind != RNSC_PLUGIN_SCENARIO))
		return fail(h, r, RNSC_ERR_PLUGIN_DESC,
			    "descriptor lacks a name, version, ops table or valid kind");
	if (rnsc_plugin_host_find(h, d->name))
		return fail(h, r, RNSC_ERR_DUPLICATE, "plugin '%s' is already loaded from %s",
			    d->name, rnsc_plugin_host_find(h, d->name)->file);
	r->desc = d;
	r->inst = rnsc_calloc(h->ctx, 1, d->inst_size ? d->inst_size : 1);
	if (!r->inst)
		return fail(h, r, RNSC_ERR_NOMEM, "cannot allocate %zu bytes of instance state",
			    d->inst_size);
	if (d->init && (rc = d->init(r->inst, &h->api)) != 0)
		return fail(h, r, RNSC_ERR_PLUGIN_INIT, "instance init of '%s' failed: %s", d->name,
			    rnsc_strerror(rc));
	if (d->kind == RNSC_PLUGIN_CRYPTO) {
		const rnsc_crypto_ops *ops = d->ops;
		if (ops->struct_size < offsetof(rnsc_crypto_ops, random) ||
		    !RNSC_OPS_HAS(ops, rnsc_crypto_ops, self_test)) {
			if (d->fini)
				d->fini(r->inst);
			return fail(h, r, RNSC_ERR_PLUGIN_DESC,
				    "crypto plugin '%s' has no self-test in its ops table",
				    d->name);
		}
		if ((rc = ops->self_test(r->inst)) != 0) {
			if (d->fini)
				d->fini(r->inst);
			return fail(h, r, RNSC_ERR_SELFTEST,
				    "known-answer self-test of '%s' failed: %s", d->name,
				    rnsc_strerror(rc));
		}
		rc = rnsc_crypto_register(h->ctx, d->name, ops, r->inst, d->caps);
		if (rc) {
			if (d->fini)
				d->fini(r->inst);
			return fail(h, r, rc, "cannot register crypto backend '%s': %s", d->name,
				    rnsc_strerror(rc));
		}
	}
	if (d->kind == RNSC_PLUGIN_IFACE) {
		/* Reject a table the runtime could not drive rather than crash later. */
		const rnsc_iface_ops *ops = d->ops;
		if (!RNSC_OPS_HAS(ops, rnsc_iface_ops, types) || !ops->types[0] ||
		    !RNSC_OPS_HAS(ops, rnsc_iface_ops, open) ||
		    !RNSC_OPS_HAS(ops, rnsc_iface_ops, send) ||
		    !RNSC_OPS_HAS(ops, rnsc_iface_ops, stats) ||
		    !RNSC_OPS_HAS(ops, rnsc_iface_ops, close)) {
			if (d->fini)
				d->fini(r->inst);
			return fail(h, r, RNSC_ERR_PLUGIN_DESC,
				    "interface plugin '%s' lacks types, open, send, stats or close",
				    d->name);
		}
	}
	r->status = 0;
	rnsc_log(h->ctx, RNSC_LOG_VERBOSE, "plugins", "loaded %s %s (%s) from %s", d->name,
		 d->version, rnsc_plugin_kind_name(d->kind), r->file);
	return 0;
}

int rnsc_plugin_host_load_file(rnsc_plugin_host *h, const char *path)
{
	rnsc_plugin_rec *r = new_rec(h, path);
	if (!r)
		return RNSC_ERR_NOMEM;
	dlerror();
	r->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!r->handle) {
		const char *e = dlerror();
		return fail(h, r, RNSC_ERR_DLOPEN, "dlopen failed: %s", e ? e : "unknown error");
	}
	dlerror();
	void *sym = dlsym(r->handle, RNSC_PLUGIN_INIT_SYMBOL);
	if (!sym) {
		const char *e = dlerror();
		return fail(h, r, RNSC_ERR_NOSYM, "no symbol %s: %s", RNSC_PLUGIN_INIT_SYMBOL,
			    e ? e : "symbol is NULL");
	}
	rnsc_plugin_init_fn init;
	memcpy(&init, &sym, sizeof(init)); /* object→function pointer without a cast warning */
	return handshake(h, r, init);
}

int rnsc_plugin_host_load_builtin(rnsc_plugin_host *h, rnsc_plugin_init_fn init, const char *label)
{
	char name[256];
	snprintf(name, sizeof(name), "builtin:%s", label);
	rnsc_plugin_rec *r = new_rec(h, name);
	if (!r)
		return RNSC_ERR_NOMEM;
	return handshake(h, r, init);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_dir(rnsc_plugin_host *h, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char *names[256];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < sizeof(names) / sizeof(names[0])) {
		size_t len = strlen(e->d_name);
		if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0)
			if ((names[n] = dup_str(h->ctx, e->d_name)))
				n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	char path[4096];
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		(void)rnsc_plugin_host_load_file(h, path);
		rnsc_free(h->ctx, names[i]);
	}
	return 0;
}

int rnsc_plugin_host_scan(rnsc_plugin_host *h)
{
	for (size_t i = 0; i < h->n_dirs; i++)
		scan_dir(h, h->dirs[i]);
	int active = 0;
	for (size_t i = 0; i < h->n_recs; i++)
		active += h->recs[i].status == 0;
	return active;
}

size_t rnsc_plugin_host_count(const rnsc_plugin_host *h)
{
	return h->n_recs;
}

const rnsc_plugin_rec *rnsc_plugin_host_at(const rnsc_plugin_host *h, size_t i)
{
	return i < h->n_recs ? &h->recs[i] : NULL;
}

const rnsc_plugin_rec *rnsc_plugin_host_find_iface(const rnsc_plugin_host *h, const char *type)
{
	if (!h || !type)
		return NULL;
	for (size_t i = 0; i < h->n_recs; i++) {
		const rnsc_plugin_rec *r = &h->recs[i];
		if (r->status != 0 || !r->desc || r->desc->kind != RNSC_PLUGIN_IFACE)
			continue;
		const rnsc_iface_ops *ops = r->desc->ops;
		for (const char *const *t = ops->types; *t; t++)
			if (strcmp(*t, type) == 0)
				return r;
	}
	return NULL;
}
