/* SPDX-License-Identifier: MIT */
#include "node_store.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "identity.h"
#include "known_file.h"
#include "msgpack.h"
#include "packet.h"
#include "path_file.h"
#include "store.h"
#include "tunnel_file.h"

static const char *WHO = "node";

static int import_one(void *ud, const rnsc_transport_known *k)
{
	return rnsc_transport_known_import(ud, k);
}

int node_store_load_known(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/known_destinations", storage);
	rnsc_store_cleanup_temps(path);
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = rnsc_store_read_file(ctx, path, RNSC_KNOWN_FILE_MAX, &buf, &len);
	if (rc == RNSC_ERR_NOENT) {
		rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO, "no known destinations file yet (%s)", path);
		return 0;
	}
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "cannot read %s (%s); starting without known "
			 "destinations",
			 path, rnsc_strerror(rc));
		return rc;
	}
	size_t skipped = 0;
	rc = rnsc_known_file_parse(buf, len, NULL, NULL, &skipped);
	if (rc >= 0)
		rc = rnsc_known_file_parse(buf, len, import_one, t, &skipped);
	rnsc_free(ctx, buf);
	if (rc < 0) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "%s is corrupt (%s); starting without known "
			 "destinations, the file will be rewritten",
			 path, rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO, "loaded %d known destination%s from %s (%zu skipped)",
		 rc, rc == 1 ? "" : "s", path, skipped);
	return rc;
}

static void write_all(rnsc_mp_writer *w, const rnsc_transport *t, size_t n)
{
	rnsc_known_file_begin(w, n);
	size_t cur = 0;
	rnsc_transport_known k;
	while (rnsc_transport_known_next(t, &cur, &k))
		rnsc_known_file_entry(w, &k);
}

int node_store_save_known(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/known_destinations", storage);
	size_t n = rnsc_transport_known_count(t);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0); /* sizing pass */
	write_all(&w, t, n);
	int rc = rnsc_mp_writer_finish(&w);
	if (rc < 0)
		goto fail;
	size_t need = w.len;
	uint8_t *buf = rnsc_alloc(ctx, need ? need : 1);
	if (!buf) {
		rc = RNSC_ERR_NOMEM;
		goto fail;
	}
	rnsc_mp_writer_init(&w, buf, need);
	write_all(&w, t, n);
	rc = rnsc_mp_writer_finish(&w);
	if (rc >= 0)
		rc = rnsc_store_write_atomic(path, buf, w.len, 0644);
	rnsc_free(ctx, buf);
	if (rc < 0)
		goto fail;
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "saved %zu known destinations to %s", n, path);
	return 0;
fail:
	rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot save known destinations to %s: %s", path,
		 rnsc_strerror(rc));
	return rc;
}

/* ---- path table ------------------------------------------------------------------------- */

static void hex(char *out, const uint8_t *p, size_t len)
{
	static const char dg[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = dg[p[i] >> 4];
		out[2 * i + 1] = dg[p[i] & 15];
	}
	out[2 * len] = '\0';
}

typedef struct load_ctx {
	rnsc_ctx *ctx;
	rnsc_transport *t;
	const char *storage;
	const node_store_ifaces *ifs;
	int restored;
	int missing;
} load_ctx;

static int restore_one(void *ud, const rnsc_path_record *rec)
{
	load_ctx *lc = ud;
	uint32_t id = lc->ifs->find(lc->ifs->ud, rec->iface_hash);
	char hx[2 * RNSC_HASHLEN + 1], path[PATH_MAX];
	hex(hx, rec->path.packet_hash, RNSC_HASHLEN);
	if (!id) {
		lc->missing++;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cache/announces/%s", lc->storage, hx);
	uint8_t *buf = NULL;
	size_t len = 0;
	const uint8_t *raw;
	size_t raw_len;
	int rc = rnsc_store_read_file(lc->ctx, path, 64u << 10, &buf, &len);
	if (rc == 0)
		rc = rnsc_path_cache_parse(buf, len, &raw, &raw_len);
	if (rc == 0) {
		rnsc_transport_path p = rec->path;
		p.iface = id;
		rc = rnsc_transport_path_import(lc->t, rec->dest_hash, &p, rec->blobs, rec->n_blobs,
						raw, raw_len);
	}
	rnsc_free(lc->ctx, buf);
	if (rc) {
		lc->missing++;
		rnsc_log(lc->ctx, RNSC_LOG_DEBUG, WHO,
			 "path entry with announce %s not restored: %s", hx, rnsc_strerror(rc));
		return 0;
	}
	lc->restored++;
	return 0;
}

int node_store_load_paths(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			  const node_store_ifaces *ifs)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/destination_table", storage);
	rnsc_store_cleanup_temps(path);
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = rnsc_store_read_file(ctx, path, RNSC_PATH_FILE_MAX, &buf, &len);
	if (rc == RNSC_ERR_NOENT)
		return 0;
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "cannot read %s (%s); starting with an empty path "
			 "table",
			 path, rnsc_strerror(rc));
		return rc;
	}
	load_ctx lc = {.ctx = ctx, .t = t, .storage = storage, .ifs = ifs};
	size_t skipped = 0;
	rc = rnsc_path_file_parse(buf, len, restore_one, &lc, &skipped);
	rnsc_free(ctx, buf);
	if (rc < 0) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "%s is corrupt (%s); starting with an empty path "
			 "table, the file will be rewritten",
			 path, rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO,
		 "loaded %d path table entr%s from %s (%zu not "
		 "restorable)",
		 lc.restored, lc.restored == 1 ? "y" : "ies", path, skipped + (size_t)lc.missing);
	return lc.restored;
}

/* Only entries whose interface can be named are written, as the reference skips paths
 * through interfaces that are gone. */
static size_t write_paths(rnsc_ctx *ctx, rnsc_mp_writer *w, rnsc_transport *t,
			  const node_store_ifaces *ifs, size_t n, const char *cachedir)
{
	size_t cur = 0, done = 0;
	rnsc_path_record rec;
	memset(&rec, 0, sizeof(rec));
	char desc[512];
	rnsc_path_file_begin(w, n);
	while (done < n && rnsc_transport_path_next(t, &cur, rec.dest_hash, &rec.path)) {
		const uint8_t *raw;
		size_t raw_len;
		if (ifs->describe(ifs->ud, rec.path.iface, desc, sizeof(desc)) < 0 ||
		    rnsc_transport_path_detail(t, rec.dest_hash, rec.blobs, &rec.n_blobs, &raw,
					       &raw_len) ||
		    rnsc_full_hash(ctx, rec.iface_hash, (const uint8_t *)desc, strlen(desc)))
			continue;
		rnsc_path_file_entry(w, &rec);
		done++;
		if (!cachedir)
			continue;
		char hx[2 * RNSC_HASHLEN + 1], fp[PATH_MAX];
		hex(hx, rec.path.packet_hash, RNSC_HASHLEN);
		snprintf(fp, sizeof(fp), "%s/%s", cachedir, hx);
		struct stat st;
		if (stat(fp, &st) == 0)
			continue; /* same packet hash, same announce: written before */
		uint8_t cbuf[RNSC_MTU + 600];
		rnsc_mp_writer cw;
		rnsc_mp_writer_init(&cw, cbuf, sizeof(cbuf));
		rnsc_path_cache_write(&cw, raw, raw_len, desc);
		if (rnsc_mp_writer_finish(&cw) >= 0)
			rnsc_store_write_atomic(fp, cbuf, cw.len, 0644);
	}
	return done;
}

int node_store_save_paths(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			  const node_store_ifaces *ifs)
{
	char path[PATH_MAX], cachedir[PATH_MAX];
	snprintf(path, sizeof(path), "%s/destination_table", storage);
	snprintf(cachedir, sizeof(cachedir), "%s/cache/announces", storage);
	int rc = rnsc_store_mkdirs(cachedir);
	if (rc)
		goto fail;
	/* First pass counts the entries that can be written (and writes the cache files). */
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	size_t n = write_paths(ctx, &w, t, ifs, rnsc_transport_path_count(t), cachedir);
	rnsc_mp_writer_init(&w, NULL, 0);
	write_paths(ctx, &w, t, ifs, n, NULL);
	if ((rc = rnsc_mp_writer_finish(&w)) < 0)
		goto fail;
	size_t need = w.len;
	uint8_t *buf = rnsc_alloc(ctx, need ? need : 1);
	if (!buf) {
		rc = RNSC_ERR_NOMEM;
		goto fail;
	}
	rnsc_mp_writer_init(&w, buf, need);
	write_paths(ctx, &w, t, ifs, n, NULL);
	rc = rnsc_mp_writer_finish(&w);
	if (rc >= 0)
		rc = rnsc_store_write_atomic(path, buf, w.len, 0644);
	rnsc_free(ctx, buf);
	if (rc < 0)
		goto fail;
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "saved %zu path table entries to %s", n, path);
	return 0;
fail:
	rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot save the path table to %s: %s", path,
		 rnsc_strerror(rc));
	return rc;
}

/* ---- tunnels ----------------------------------------------------------------------------- */

typedef struct tload {
	rnsc_ctx *ctx;
	rnsc_transport *t;
	const char *storage;
	uint8_t cur[RNSC_HASHLEN]; /* the tunnel imported last */
	int have_cur;
	int tunnels, paths, missing;
} tload;

static int tunnel_one(void *ud, const rnsc_tunnel_record *tn, const rnsc_path_record *rec)
{
	tload *l = ud;
	if (!rec)
		return 0; /* the tunnel goes in with its first path that can be restored */
	char hx[2 * RNSC_HASHLEN + 1], path[PATH_MAX];
	hex(hx, rec->path.packet_hash, RNSC_HASHLEN);
	snprintf(path, sizeof(path), "%s/cache/announces/%s", l->storage, hx);
	uint8_t *buf = NULL;
	size_t len = 0;
	const uint8_t *raw;
	size_t raw_len;
	int rc = rnsc_store_read_file(l->ctx, path, 64u << 10, &buf, &len);
	if (rc == 0)
		rc = rnsc_path_cache_parse(buf, len, &raw, &raw_len);
	if (rc == 0 && !(l->have_cur && memcmp(l->cur, tn->id, RNSC_HASHLEN) == 0)) {
		rc = rnsc_transport_tunnel_import(l->t, tn->id, tn->expires);
		if (rc == 0) {
			memcpy(l->cur, tn->id, RNSC_HASHLEN);
			l->have_cur = 1;
			l->tunnels++;
		}
	}
	if (rc == 0)
		rc = rnsc_transport_tunnel_path_import(l->t, tn->id, rec->dest_hash, &rec->path,
						       rec->blobs, rec->n_blobs, raw, raw_len);
	rnsc_free(l->ctx, buf);
	if (rc == RNSC_ERR_NOMEM)
		return rc;
	if (rc)
		l->missing++;
	else
		l->paths++;
	return 0;
}

int node_store_load_tunnels(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/tunnels", storage);
	rnsc_store_cleanup_temps(path);
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = rnsc_store_read_file(ctx, path, RNSC_TUNNEL_FILE_MAX, &buf, &len);
	if (rc == RNSC_ERR_NOENT)
		return 0;
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read %s (%s); starting without tunnels",
			 path, rnsc_strerror(rc));
		return rc;
	}
	tload l = {.ctx = ctx, .t = t, .storage = storage};
	size_t skipped = 0;
	rc = rnsc_tunnel_file_parse(buf, len, tunnel_one, &l, &skipped);
	rnsc_free(ctx, buf);
	if (rc < 0) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "could not load the tunnel table from %s (%s); "
			 "the file will be rewritten",
			 path, rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO,
		 "loaded %d tunnel%s with %d path%s from %s (%zu "
		 "skipped, %d without a cached announce)",
		 l.tunnels, l.tunnels == 1 ? "" : "s", l.paths, l.paths == 1 ? "" : "s", path,
		 skipped, l.missing);
	return l.tunnels;
}

/* One pass over the tunnel table; cachedir (may be NULL) gets the missing announces. */
static void write_tunnels(rnsc_ctx *ctx, rnsc_mp_writer *w, rnsc_transport *t,
			  const node_store_ifaces *ifs, const char *cachedir)
{
	size_t cur = 0;
	rnsc_tunnel_record tr;
	rnsc_transport_tunnel info;
	rnsc_tunnel_file_begin(w, rnsc_transport_tunnel_count(t));
	while (rnsc_transport_tunnel_next(t, &cur, tr.id, &info)) {
		char desc[512];
		uint8_t ih[RNSC_HASHLEN];
		int has_ih = info.has_iface &&
			     ifs->describe(ifs->ud, info.iface, desc, sizeof(desc)) == 0 &&
			     rnsc_full_hash(ctx, ih, (const uint8_t *)desc, strlen(desc)) == 0;
		tr.expires = info.expires;
		rnsc_tunnel_file_tunnel(w, &tr, has_ih ? ih : NULL, info.n_paths);
		size_t pc = 0, k = 0;
		rnsc_path_record rec;
		memset(&rec, 0, sizeof(rec));
		uint8_t blobs[RNSC_MAX_RANDOM_BLOBS][10];
		const uint8_t *raw;
		size_t raw_len;
		while (k < info.n_paths &&
		       rnsc_transport_tunnel_path_next(t, tr.id, &pc, rec.dest_hash, &rec.path,
						       blobs, &raw, &raw_len)) {
			size_t nb = rec.path.n_random_blobs, keep = nb;
			if (keep > NODE_STORE_PERSIST_RANDOM_BLOBS)
				keep = NODE_STORE_PERSIST_RANDOM_BLOBS; /* the newest, as [-32:] */
			memcpy(rec.blobs, blobs[nb - keep], keep * 10);
			rec.n_blobs = keep;
			rec.has_iface_hash = has_ih;
			rec.nil_iface_ok = 1;
			memcpy(rec.iface_hash, ih, sizeof(ih));
			rnsc_path_file_entry(w, &rec);
			k++;
			char hx[2 * RNSC_HASHLEN + 1], fp[PATH_MAX];
			struct stat st;
			if (!cachedir)
				continue;
			hex(hx, rec.path.packet_hash, RNSC_HASHLEN);
			snprintf(fp, sizeof(fp), "%s/%s", cachedir, hx);
			if (stat(fp, &st) == 0)
				continue;
			uint8_t cbuf[RNSC_MTU + 600];
			rnsc_mp_writer cw;
			rnsc_mp_writer_init(&cw, cbuf, sizeof(cbuf));
			rnsc_path_cache_write(&cw, raw, raw_len, has_ih ? desc : NULL);
			if (rnsc_mp_writer_finish(&cw) >= 0)
				rnsc_store_write_atomic(fp, cbuf, cw.len, 0644);
		}
		for (; k < info.n_paths; k++) /* cannot happen: keep the array length honest */
			rnsc_mp_write_nil(w);
		rnsc_tunnel_file_tunnel_end(w, &tr);
	}
}

int node_store_save_tunnels(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			    const node_store_ifaces *ifs)
{
	char path[PATH_MAX], cachedir[PATH_MAX];
	snprintf(path, sizeof(path), "%s/tunnels", storage);
	snprintf(cachedir, sizeof(cachedir), "%s/cache/announces", storage);
	int rc = rnsc_store_mkdirs(cachedir);
	if (rc)
		goto fail;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	write_tunnels(ctx, &w, t, ifs, cachedir);
	if ((rc = rnsc_mp_writer_finish(&w)) < 0)
		goto fail;
	size_t need = w.len;
	uint8_t *buf = rnsc_alloc(ctx, need ? need : 1);
	if (!buf) {
		rc = RNSC_ERR_NOMEM;
		goto fail;
	}
	rnsc_mp_writer_init(&w, buf, need);
	write_tunnels(ctx, &w, t, ifs, NULL);
	rc = rnsc_mp_writer_finish(&w);
	if (rc >= 0)
		rc = rnsc_store_write_atomic(path, buf, w.len, 0644);
	rnsc_free(ctx, buf);
	if (rc < 0)
		goto fail;
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "saved %zu tunnel table entries to %s",
		 rnsc_transport_tunnel_count(t), path);
	return 0;
fail:
	rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot save the tunnel table to %s: %s", path,
		 rnsc_strerror(rc));
	return rc;
}

/* ---- packet hashlist ---------------------------------------------------------------------- */

int node_store_load_hashlist(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/packet_hashlist.raw", storage);
	rnsc_store_cleanup_temps(path);
	uint8_t *buf = NULL;
	size_t len = 0;
	/* Twice the engine's largest hashlist generation is more than it ever writes. */
	int rc = rnsc_store_read_file(ctx, path, (size_t)RNSC_HASHLIST_MAXSIZE * RNSC_HASHLEN, &buf,
				      &len);
	if (rc == RNSC_ERR_NOENT)
		return 0;
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "cannot read %s (%s); starting with an empty "
			 "packet hashlist",
			 path, rnsc_strerror(rc));
		return rc;
	}
	size_t n = len / RNSC_HASHLEN;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = rnsc_transport_hashlist_add(t, buf + i * RNSC_HASHLEN);
	rnsc_free(ctx, buf);
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "loading %s: %s", path, rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO, "loaded %zu packet hashes from %s%s", n, path,
		 len % RNSC_HASHLEN ? " (a partial last hash ignored)" : "");
	return n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
}

int node_store_save_hashlist(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/packet_hashlist.raw", storage);
	size_t n = 0, cur = 0;
	uint8_t h[RNSC_HASHLEN];
	while (rnsc_transport_hashlist_next(t, &cur, h))
		n++;
	uint8_t *buf = rnsc_alloc(ctx, n ? n * RNSC_HASHLEN : 1);
	int rc = RNSC_ERR_NOMEM;
	if (buf) {
		size_t k = 0;
		cur = 0;
		while (k < n && rnsc_transport_hashlist_next(t, &cur, buf + k * RNSC_HASHLEN))
			k++;
		rc = rnsc_store_write_atomic(path, buf, k * RNSC_HASHLEN, 0644);
		rnsc_free(ctx, buf);
	}
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot save the packet hashlist to %s: %s",
			 path, rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "saved %zu packet hashes to %s", n, path);
	return 0;
}

/* ---- blackholed identities ------------------------------------------------------------- */

#define BLACKHOLE_FILE_MAX (16u * 1024 * 1024)

typedef struct bh_load {
	rnsc_transport *t;
	const uint8_t *source;
	double now_s;
	int added;
} bh_load;

static int bh_import(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	bh_load *l = ud;
	if (e->until > 0 && !(l->now_s < e->until))
		return 0; /* expired while we were away */
	rnsc_blackhole_entry c = *e;
	c.has_source = 1; /* the file names the source, whatever the entries say */
	memcpy(c.source, l->source, 16);
	int rc = rnsc_transport_blackhole_add(l->t, id, &c);
	if (rc == 1)
		l->added++;
	return rc < 0 ? rc : 0;
}

static int bh_load_file(rnsc_ctx *ctx, rnsc_transport *t, const char *path,
			const uint8_t source[16], double now_s)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = rnsc_store_read_file(ctx, path, BLACKHOLE_FILE_MAX, &buf, &len);
	if (rc == 0) {
		bh_load l = {.t = t, .source = source, .now_s = now_s};
		rc = rnsc_blackhole_list_parse(buf, len, bh_import, &l);
		rnsc_free(ctx, buf);
		if (rc >= 0)
			return l.added;
	}
	if (rc != RNSC_ERR_NOENT)
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "could not load blackholed identities from %s: %s", path,
			 rnsc_strerror(rc));
	return rc;
}

static int unhex16(uint8_t out[16], const char *s)
{
	if (strlen(s) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned v;
		char two[3] = {s[2 * i], s[2 * i + 1], 0};
		char *end;
		v = (unsigned)strtoul(two, &end, 16);
		if (*end || !two[0] || !two[1] || two[0] == '-' || two[0] == '+' || two[0] == ' ')
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int node_store_load_blackhole(rnsc_ctx *ctx, rnsc_transport *t, const char *storage,
			      const uint8_t (*sources)[16], size_t n_sources, uint64_t now_ms)
{
	char dir[PATH_MAX], path[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/blackhole", storage);
	int rc = rnsc_store_mkdirs(dir);
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot create %s: %s", dir, rnsc_strerror(rc));
		return rc;
	}
	double now_s = (double)now_ms / 1000.0;
	snprintf(path, sizeof(path), "%s/blackhole/local", storage);
	rnsc_store_cleanup_temps(path);
	int total = 0;
	rc = bh_load_file(ctx, t, path, rnsc_transport_id(t), now_s);
	if (rc > 0)
		total += rc;
	/* then the configured sources' lists: a local entry wins over a source's */
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		uint8_t src[16];
		if (unhex16(src, de->d_name))
			continue; /* "local", ".", temp files */
		size_t i = 0;
		while (i < n_sources && memcmp(sources[i], src, 16) != 0)
			i++;
		if (i == n_sources) {
			rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO,
				 "skipping disabled blackhole source <%s>", de->d_name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/blackhole/%.32s", storage, de->d_name);
		rc = bh_load_file(ctx, t, path, src, now_s);
		if (rc > 0)
			total += rc;
	}
	if (d)
		closedir(d);
	rnsc_transport_blackhole_purge_paths(t);
	if (total)
		rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO, "loaded %d blackholed identit%s from %s",
			 total, total == 1 ? "y" : "ies", dir);
	return total;
}

static int bh_write(rnsc_ctx *ctx, const char *path, const uint8_t *data, size_t len)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	int rc = rnsc_store_mkdirs(dir);
	if (rc == 0)
		rc = rnsc_store_write_atomic(path, data, len, 0644);
	if (rc)
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "error while persisting blackhole list to %s: %s", path,
			 rnsc_strerror(rc));
	return rc;
}

int node_store_save_blackhole(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/blackhole/local", storage);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	int n = rnsc_blackhole_list_write(&w, t, rnsc_transport_id(t));
	if (n < 0)
		return n;
	uint8_t *buf = rnsc_alloc(ctx, (size_t)n ? (size_t)n : 1);
	if (!buf)
		return RNSC_ERR_NOMEM;
	rnsc_mp_writer_init(&w, buf, (size_t)n);
	int m = rnsc_blackhole_list_write(&w, t, rnsc_transport_id(t));
	int rc = m == n ? bh_write(ctx, path, buf, (size_t)n) : RNSC_ERR_STATE;
	rnsc_free(ctx, buf);
	return rc;
}

int node_store_save_blackhole_source(rnsc_ctx *ctx, const char *storage, const uint8_t source[16],
				     const uint8_t *list, size_t len)
{
	char path[PATH_MAX];
	int k = snprintf(path, sizeof(path), "%s/blackhole/", storage);
	for (int i = 0; i < 16 && k > 0 && (size_t)k + 3 < sizeof(path); i++)
		k += snprintf(path + k, sizeof(path) - (size_t)k, "%02x", source[i]);
	return bh_write(ctx, path, list, len);
}

int node_store_cadence_due(node_store_cadence *c, const rnsc_transport *t, uint64_t now_ms)
{
	const rnsc_transport_stats *st = rnsc_transport_get_stats(t);
	/* announces_valid moves whenever remember() may have changed a known destination */
	uint64_t sig[3] = {st->paths_added + st->announces_valid, rnsc_transport_path_count(t),
			   rnsc_transport_known_count(t)};
	if (!c->init) { /* the tables as loaded are on disk already */
		memcpy(c->sig, sig, sizeof(sig));
		c->saved_ms = c->full_ms = now_ms;
		c->init = 1;
		return NODE_STORE_NOTHING;
	}
	if (now_ms - c->full_ms >= NODE_STORE_FULL_MS) {
		memcpy(c->sig, sig, sizeof(sig));
		c->saved_ms = c->full_ms = now_ms;
		return NODE_STORE_ALL;
	}
	if (memcmp(c->sig, sig, sizeof(sig)) == 0 || now_ms - c->saved_ms < NODE_STORE_GAP_MS)
		return NODE_STORE_NOTHING;
	memcpy(c->sig, sig, sizeof(sig));
	c->saved_ms = now_ms;
	return NODE_STORE_TABLES;
}

/* ---- hygiene ------------------------------------------------------------------------------ */

typedef struct clean_ud {
	rnsc_ctx *ctx;
	const char *storage;
} clean_ud;

static void drop_ratchet(void *ud, const uint8_t dest[16])
{
	clean_ud *c = ud;
	char hx[2 * RNSC_TRUNCATED_HASHLEN + 1], path[PATH_MAX];
	hex(hx, dest, RNSC_TRUNCATED_HASHLEN);
	snprintf(path, sizeof(path), "%s/ratchets/%s", c->storage, hx);
	if (unlink(path) && errno != ENOENT)
		rnsc_log(c->ctx, RNSC_LOG_WARNING, WHO,
			 "could not clean stale ratchets for <%s>: %s", hx, strerror(errno));
}

int node_store_clean_known(rnsc_ctx *ctx, rnsc_transport *t, const char *storage, uint64_t now_ms)
{
	size_t before = rnsc_transport_known_count(t);
	clean_ud c = {.ctx = ctx, .storage = storage};
	int n = rnsc_transport_known_clean(t, now_ms, drop_ratchet, &c);
	if (n < 0)
		return n;
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "cleaned known destinations: total %zu, removed %d",
		 before, n);
	int rc = node_store_save_known(ctx, t, storage);
	return rc < 0 ? rc : n;
}

static int cmp_hash(const void *a, const void *b)
{
	return memcmp(a, b, RNSC_HASHLEN);
}

/* bytes.fromhex of a cache file name; only a 32-byte result can name an announce. */
static int unhex32(uint8_t out[RNSC_HASHLEN], const char *s)
{
	if (strlen(s) != 2 * RNSC_HASHLEN)
		return -1;
	for (size_t i = 0; i < 2 * RNSC_HASHLEN; i++) {
		char ch = s[i];
		int v = ch >= '0' && ch <= '9'   ? ch - '0'
			: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
						 : -1;
		if (v < 0)
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return 0;
}

int node_store_clean_cache(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/cache/announces", storage);
	size_t n = rnsc_transport_path_count(t), k = 0, cur = 0, tc = 0;
	uint8_t tid[RNSC_HASHLEN];
	rnsc_transport_tunnel info;
	while (rnsc_transport_tunnel_next(t, &tc, tid, &info))
		n += info.n_paths;
	uint8_t(*active)[RNSC_HASHLEN] = rnsc_alloc(ctx, (n ? n : 1) * RNSC_HASHLEN);
	if (!active)
		return RNSC_ERR_NOMEM;
	rnsc_transport_path p;
	while (k < n && rnsc_transport_path_next(t, &cur, NULL, &p))
		memcpy(active[k++], p.packet_hash, RNSC_HASHLEN);
	tc = 0; /* and the tunnel paths' (Transport.clean_announce_cache keeps both) */
	while (k < n && rnsc_transport_tunnel_next(t, &tc, tid, NULL)) {
		size_t pc = 0;
		while (k < n &&
		       rnsc_transport_tunnel_path_next(t, tid, &pc, NULL, &p, NULL, NULL, NULL))
			memcpy(active[k++], p.packet_hash, RNSC_HASHLEN);
	}
	qsort(active, k, RNSC_HASHLEN, cmp_hash);
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		rnsc_free(ctx, active);
		if (e == ENOENT)
			return 0;
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot clean the announce cache %s: %s", dir,
			 strerror(e));
		return rnsc_store_errno(e);
	}
	int removed = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char fp[PATH_MAX];
		struct stat st;
		if (snprintf(fp, sizeof(fp), "%s/%s", dir, de->d_name) >= (int)sizeof(fp) ||
		    stat(fp, &st) || !S_ISREG(st.st_mode))
			continue; /* os.path.isfile: directories and the like stay */
		uint8_t h[RNSC_HASHLEN];
		if (unhex32(h, de->d_name) == 0 && bsearch(h, active, k, RNSC_HASHLEN, cmp_hash))
			continue;
		if (unlink(fp) == 0)
			removed++;
	}
	closedir(d);
	rnsc_free(ctx, active);
	if (removed)
		rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "removed %d cached announce%s", removed,
			 removed == 1 ? "" : "s");
	return removed;
}

int node_store_hygiene_due(node_store_hygiene *h, uint64_t now_ms)
{
	if (!h->init) {
		h->known_ms = now_ms + NODE_STORE_CLEAN_KNOWN_MS;
		h->cache_ms = now_ms + NODE_STORE_CLEAN_CACHE_DEFER_MS + NODE_STORE_CLEAN_CACHE_MS;
		h->init = 1;
		return 0;
	}
	int due = 0;
	if (now_ms >= h->known_ms) {
		h->known_ms = now_ms + NODE_STORE_CLEAN_KNOWN_MS;
		due |= NODE_STORE_CLEAN_KNOWN;
	}
	if (now_ms >= h->cache_ms) {
		h->cache_ms = now_ms + NODE_STORE_CLEAN_CACHE_MS;
		due |= NODE_STORE_CLEAN_CACHE;
	}
	return due;
}
