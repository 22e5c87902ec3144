/* SPDX-License-Identifier: MIT */
#include "node_store.h"

#include <limits.h>
#include <stdio.h>

#include <string.h>
#include <sys/stat.h>

#include "identity.h"
#include "known_file.h"
#include "packet.h"
#include "path_file.h"
#include "store.h"

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
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read %s (%s); starting without known "
			 "destinations", path, rnsc_strerror(rc));
		return rc;
	}
	size_t skipped = 0;
	rc = rnsc_known_file_parse(buf, len, NULL, NULL, &skipped);
	if (rc >= 0)
		rc = rnsc_known_file_parse(buf, len, import_one, t, &skipped);
	rnsc_free(ctx, buf);
	if (rc < 0) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "%s is corrupt (%s); starting without known "
			 "destinations, the file will be rewritten", path, rnsc_strerror(rc));
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
		rnsc_log(lc->ctx, RNSC_LOG_DEBUG, WHO, "path entry with announce %s not restored: %s",
			 hx, rnsc_strerror(rc));
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
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read %s (%s); starting with an empty path "
			 "table", path, rnsc_strerror(rc));
		return rc;
	}
	load_ctx lc = {.ctx = ctx, .t = t, .storage = storage, .ifs = ifs};
	size_t skipped = 0;
	rc = rnsc_path_file_parse(buf, len, restore_one, &lc, &skipped);
	rnsc_free(ctx, buf);
	if (rc < 0) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "%s is corrupt (%s); starting with an empty path "
			 "table, the file will be rewritten", path, rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_VERBOSE, WHO, "loaded %d path table entr%s from %s (%zu not "
		 "restorable)", lc.restored, lc.restored == 1 ? "y" : "ies", path,
		 skipped + (size_t)lc.missing);
	return lc.restored;
}

/* Only entries whose interface can be named are written, as the reference skips paths
 * through interfaces that are gone. */
static size_t write_paths(rnsc_ctx *ctx, rnsc_mp_writer *w, rnsc_transport *t,
			  const node_store_ifaces *ifs, size_t n, const char *cachedir)
{
	size_t cur = 0, done = 0;
	rnsc_path_record rec;
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

/* ---- packet hashlist ---------------------------------------------------------------------- */

int node_store_load_hashlist(rnsc_ctx *ctx, rnsc_transport *t, const char *storage)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/packet_hashlist.raw", storage);
	rnsc_store_cleanup_temps(path);
	uint8_t *buf = NULL;
	size_t len = 0;
	/* Twice the engine's largest hashlist generation is more than it ever writes. */
	int rc = rnsc_store_read_file(ctx, path, (size_t)RNSC_HASHLIST_MAXSIZE * RNSC_HASHLEN,
				      &buf, &len);
	if (rc == RNSC_ERR_NOENT)
		return 0;
	if (rc) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read %s (%s); starting with an empty "
			 "packet hashlist", path, rnsc_strerror(rc));
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
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot save the packet hashlist to %s: %s", path,
			 rnsc_strerror(rc));
		return rc;
	}
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "saved %zu packet hashes to %s", n, path);
	return 0;
}
