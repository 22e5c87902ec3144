/* SPDX-License-Identifier: MIT */
#include "node_ratchets.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ratchet_file.h"
#include "store.h"

static const char *WHO = "ratchets";

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

static int unhex16(const char *s, uint8_t out[16])
{
	if (strlen(s) != 32)
		return -1;
	for (size_t i = 0; i < 16; i++) {
		unsigned v;
		char b[3] = {s[2 * i], s[2 * i + 1], 0};
		if (!strchr("0123456789abcdefABCDEF", b[0]) ||
		    !strchr("0123456789abcdefABCDEF", b[1]) || sscanf(b, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int node_ratchets_persist(rnsc_ctx *ctx, const char *storage, const uint8_t dest[16],
			  const uint8_t pub[32], uint64_t received_ms)
{
	char dir[PATH_MAX], path[PATH_MAX + 40], hx[33];
	snprintf(dir, sizeof(dir), "%s/ratchets", storage);
	hex(hx, dest, 16);
	snprintf(path, sizeof(path), "%s/%s", dir, hx);
	uint8_t buf[RNSC_RATCHET_REMOTE_FILE_MAX];
	int n = rnsc_ratchet_remote_encode(pub, (double)received_ms / 1000.0, buf, sizeof(buf));
	int rc = n < 0 ? n : rnsc_store_mkdirs(dir);
	if (rc == 0)
		rc = rnsc_store_write_atomic(path, buf, (size_t)n, 0666);
	if (rc)
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "could not persist the ratchet for <%s> to %s: %s", hx, path,
			 rnsc_strerror(rc));
	return rc;
}

int node_ratchets_load(rnsc_ctx *ctx, rnsc_transport *t, const char *storage, int clean,
		       uint64_t now_ms)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/ratchets", storage);
	DIR *d = opendir(dir);
	if (!d)
		return 0; /* no ratchets remembered yet */
	int count = 0, removed = 0, imported = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		uint8_t dest[16];
		if (unhex16(e->d_name, dest))
			continue; /* temporaries of an interrupted write: the store cleans them */
		count++;
		char path[PATH_MAX + 40];
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue; /* cannot be the file we mean */
		rnsc_store_cleanup_temps(path);
		uint8_t *buf = NULL;
		size_t len = 0;
		uint8_t pub[32];
		double received = 0;
		int rc = rnsc_store_read_file(ctx, path, RNSC_RATCHET_REMOTE_FILE_MAX, &buf, &len);
		int corrupt = 0, expired = 0;
		if (rc == 0) {
			rc = rnsc_ratchet_remote_decode(buf, len, pub, &received);
			corrupt = rc != 0;
		} else if (rc == RNSC_ERR_TOOBIG) {
			corrupt = 1;
		}
		rnsc_free(ctx, buf);
		if (corrupt)
			rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "corrupted ratchet data in %s (%s)%s",
				 path, rnsc_strerror(rc), clean ? ", removing the file" : "");
		else if (rc)
			rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read %s: %s", path,
				 rnsc_strerror(rc));
		uint64_t rms = received > 0 ? (uint64_t)(received * 1000.0) : 0;
		if (rc == 0 && !(now_ms < rms + RNSC_RATCHET_EXPIRY_S * 1000))
			expired = 1;
		int unknown = rnsc_transport_recall(t, dest, NULL, NULL, NULL) != 0;
		if (clean && (corrupt || expired || unknown)) {
			if (unlink(path) == 0)
				removed++;
			continue;
		}
		if (rc == 0 && !expired &&
		    rnsc_transport_ratchet_import(t, dest, pub, rms, now_ms) == 0)
			imported++;
	}
	closedir(d);
	rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "processed %d ratchets, loaded %d, removed %d", count,
		 imported, removed);
	return imported;
}

struct node_ratchet_files {
	struct node_ratchet_files *next;
	uint8_t dest[16];
	rnsc_identity id;
	char path[];
};

void node_ratchet_files_free(rnsc_ctx *ctx, node_ratchet_files *f)
{
	while (f) {
		node_ratchet_files *nx = f->next;
		rnsc_identity_free(&f->id);
		rnsc_free_secret(ctx, f, sizeof(*f) + strlen(f->path) + 1);
		f = nx;
	}
}

static int write_file(rnsc_ctx *ctx, const rnsc_identity *id, const char *path,
		      const uint8_t (*ratchets)[32], size_t n)
{
	int len = rnsc_ratchet_file_encode(id, ratchets, n, NULL, 0);
	if (len < 0)
		return len;
	uint8_t *buf = rnsc_alloc(ctx, (size_t)len);
	if (!buf)
		return RNSC_ERR_NOMEM;
	int rc = rnsc_ratchet_file_encode(id, ratchets, n, buf, (size_t)len);
	if (rc >= 0)
		rc = rnsc_store_write_atomic(path, buf, (size_t)len, 0600);
	rnsc_free_secret(ctx, buf, (size_t)len);
	return rc < 0 ? rc : 0;
}

int node_ratchet_files_enable(rnsc_ctx *ctx, node_ratchet_files **head, rnsc_transport *t,
			      const uint8_t dest[16], const rnsc_identity *id, const char *path)
{
	if (!head || !t || !dest || !id || !path || !*path)
		return RNSC_ERR_INVAL;
	rnsc_store_cleanup_temps(path);
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = rnsc_store_read_file(ctx, path, RNSC_RATCHET_FILE_MAX, &buf, &len);
	uint8_t(*list)[32] = NULL;
	size_t n = 0;
	if (rc == 0) {
		rc = rnsc_ratchet_file_decode(id, buf, len, NULL, 0, &n);
		if (rc == 0 && n && !(list = rnsc_alloc(ctx, n * sizeof(*list))))
			rc = RNSC_ERR_NOMEM;
		if (rc == 0 && n)
			rc = rnsc_ratchet_file_decode(id, buf, len, list, n, &n);
		rnsc_free(ctx, buf);
		if (rc) {
			rnsc_log(
				ctx, RNSC_LOG_CRITICAL, WHO,
				"the ratchet file %s could not be loaded (%s); remove it to have a "
				"new one created, then announce the destination",
				path, rnsc_strerror(rc));
			goto out;
		}
	} else if (rc == RNSC_ERR_NOENT) {
		rnsc_log(ctx, RNSC_LOG_DEBUG, WHO, "no ratchet file yet, initialising %s", path);
		if ((rc = write_file(ctx, id, path, NULL, 0))) {
			rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot write %s: %s", path,
				 rnsc_strerror(rc));
			goto out;
		}
	} else {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read %s: %s", path, rnsc_strerror(rc));
		goto out;
	}
	if ((rc = rnsc_transport_dest_ratchets_enable(t, dest, (const uint8_t(*)[32])list, n)))
		goto out;
	node_ratchet_files *f = NULL;
	for (node_ratchet_files *it = *head; it; it = it->next)
		if (memcmp(it->dest, dest, 16) == 0)
			f = it;
	if (!f) {
		size_t pl = strlen(path) + 1;
		if (!(f = rnsc_calloc(ctx, 1, sizeof(*f) + pl))) {
			rc = RNSC_ERR_NOMEM;
			goto out;
		}
		memcpy(f->dest, dest, 16);
		memcpy(f->path, path, pl);
		f->id = *id;
		f->id.ctx = ctx;
		f->next = *head;
		*head = f;
	}
out:
	if (list)
		rnsc_free_secret(ctx, list, n * sizeof(*list));
	return rc;
}

void node_ratchet_files_rotated(rnsc_ctx *ctx, node_ratchet_files *f, const uint8_t dest[16],
				const uint8_t (*ratchets)[32], size_t n)
{
	for (; f; f = f->next) {
		if (memcmp(f->dest, dest, 16) != 0)
			continue;
		int rc = write_file(ctx, &f->id, f->path, ratchets, n);
		if (rc)
			rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
				 "could not write the ratchet file %s: %s", f->path,
				 rnsc_strerror(rc));
		return;
	}
}
