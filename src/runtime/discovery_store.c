/* SPDX-License-Identifier: MIT */
#include "discovery_store.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "destination.h"
#include "discovery.h"
#include "err.h"
#include "identity.h"
#include "store.h"

#define THRESHOLD_UNKNOWN (24.0 * 60 * 60)
#define THRESHOLD_STALE (3 * 24.0 * 60 * 60)
#define THRESHOLD_REMOVE (7 * 24.0 * 60 * 60)
#define REC_MAX (256 * 1024)

static int in_list(const rnsc_hash_list *l, const uint8_t h[16])
{
	for (size_t i = 0; l && i < l->n; i++)
		if (!memcmp(l->h[i], h, 16))
			return 1;
	return 0;
}

int rnsc_discovery_rec_get(const uint8_t *p, size_t len, const char *key, rnsc_mp_token *v)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n;
	if (rnsc_mp_read_map(&r, &n) < 0)
		return 0;
	size_t kl = strlen(key);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		rnsc_mp_token k;
		if (rnsc_mp_next(&r, &k) < 0)
			return 0;
		int match = k.type == RNSC_MP_STR && k.len == kl && !memcmp(k.p, key, kl);
		if (match && rnsc_mp_peek(&r, v) < 0)
			return 0;
		if (rnsc_mp_skip(&r) < 0)
			return 0;
		found |= match; /* a later duplicate wins, as in a dict */
	}
	return found;
}

static double num(const rnsc_mp_token *t, int *ok)
{
	*ok = 1;
	switch (t->type) {
	case RNSC_MP_FLOAT64:
		return t->f64;
	case RNSC_MP_FLOAT32:
		return t->f32;
	case RNSC_MP_UINT:
		return (double)t->u;
	case RNSC_MP_INT:
		return (double)t->i;
	default:
		*ok = 0;
		return 0;
	}
}

int rnsc_discovery_store_announce(rnsc_ctx *ctx, const char *storage, const rnsc_transport *t,
				  const uint8_t dest[16], const uint8_t *app, size_t len,
				  unsigned hops, int required_value, const rnsc_hash_list *sources,
				  double now)
{
	rnsc_identity id;
	if (rnsc_transport_recall(t, dest, &id, NULL, NULL) < 0)
		return 0;
	uint8_t want[16];
	if (rnsc_destination_hash_from_name(ctx, want, id.hash, RNSC_DISC_FULL_NAME) < 0 ||
	    memcmp(want, dest, 16))
		return 0;
	if (sources && sources->n && !in_list(sources, id.hash))
		return 1 + RNSC_DISC_MALFORMED;
	rnsc_disc_info *in = malloc(sizeof *in);
	if (!in)
		return RNSC_ERR_NOMEM;
	int rc = rnsc_discovery_parse(ctx, in, app, len, required_value);
	if (rc != RNSC_DISC_OK) {
		free(in);
		return rc < 0 ? rc : 1 + rc;
	}
	char dir[PATH_MAX], path[PATH_MAX];
	snprintf(dir, sizeof dir, "%.*s/discovery/interfaces", PATH_MAX - 64, storage);
	int n = snprintf(path, sizeof path, "%s/", dir);
	for (int i = 0; i < 32 && n + 3 < (int)sizeof path; i++)
		n += snprintf(path + n, sizeof path - (size_t)n, "%02x", in->discovery_hash[i]);
	if ((rc = rnsc_store_mkdirs(dir)) < 0) {
		free(in);
		return rc;
	}
	double discovered = now;
	int64_t heard = 0;
	uint8_t *old = NULL;
	size_t ol = 0;
	if (rnsc_store_read_file(NULL, path, REC_MAX, &old, &ol) == 0) {
		/* An unreadable old record is re-created with a count of one, as the reference
		 * does (its fallback values, then heard_count + 1). */
		rnsc_mp_token v;
		int ok = 0;
		double d = 0;
		if (rnsc_discovery_rec_get(old, ol, "discovered", &v))
			d = num(&v, &ok);
		discovered = ok ? d : now;
		if (rnsc_discovery_rec_get(old, ol, "heard_count", &v) &&
		    (v.type == RNSC_MP_UINT || v.type == RNSC_MP_INT))
			heard = (v.type == RNSC_MP_UINT ? (int64_t)v.u : v.i) + 1;
		else
			heard = 1;
		free(old);
	}
	uint8_t *rec = malloc(REC_MAX);
	if (!rec) {
		free(in);
		return RNSC_ERR_NOMEM;
	}
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, rec, REC_MAX);
	rc = rnsc_discovery_record(&w, in, id.hash, hops, now, discovered, now, heard);
	if (rc > 0)
		rc = rnsc_store_write_atomic(path, rec, (size_t)rc, 0644);
	free(rec);
	free(in);
	return rc < 0 ? rc : 1;
}

typedef struct entry {
	uint8_t *p;
	size_t len;
	int code;
	double value, last_heard;
} entry;

static int cmp_desc(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->code != y->code)
		return x->code < y->code ? 1 : -1;
	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	if (x->last_heard != y->last_heard)
		return x->last_heard < y->last_heard ? 1 : -1;
	return 0;
}

static int hex16(const rnsc_mp_token *t, uint8_t out[16])
{
	if (t->type != RNSC_MP_STR || t->len != 32)
		return 0;
	for (int i = 0; i < 16; i++) {
		unsigned v;
		char b[3] = {(char)t->p[2 * i], (char)t->p[2 * i + 1], 0};
		if (sscanf(b, "%2x", &v) != 1)
			return 0;
		out[i] = (uint8_t)v;
	}
	return 1;
}

static const char *const STORED[] = {"BackboneInterface", "TCPServerInterface", "I2PInterface",
				     "RNodeInterface",    "WeaveInterface",     "KISSInterface"};

/* Rebuilds one record as listed: the name sanitized, status and status_code appended.
 * Returns the entry's length, 0 to skip the file, -1 to delete it. */
static int relist(const uint8_t *p, size_t len, double now, const rnsc_hash_list *sources, entry *e)
{
	rnsc_mp_token v;
	int ok;
	if (!rnsc_discovery_rec_get(p, len, "last_heard", &v))
		return 0;
	double lh = num(&v, &ok);
	if (!ok)
		return 0;
	double delta = now - lh;
	if (delta > THRESHOLD_REMOVE)
		return -1;
	uint8_t tid[16], nid[16];
	if (!rnsc_discovery_rec_get(p, len, "transport_id", &v) ||
	    (v.type == RNSC_MP_STR && v.len == 0) || v.type == RNSC_MP_NIL)
		return -1;
	int tid_ok = hex16(&v, tid);
	if (!rnsc_discovery_rec_get(p, len, "network_id", &v) ||
	    (v.type == RNSC_MP_STR && v.len == 0) || v.type == RNSC_MP_NIL)
		return -1;
	int nid_ok = hex16(&v, nid);
	if (sources && sources->n && (!nid_ok || !in_list(sources, nid)))
		return -1;
	(void)tid_ok;
	if (!rnsc_discovery_rec_get(p, len, "type", &v) || v.type != RNSC_MP_STR)
		return -1;
	int stored = 0;
	for (size_t i = 0; i < sizeof STORED / sizeof *STORED; i++)
		stored |= strlen(STORED[i]) == v.len && !memcmp(STORED[i], v.p, v.len);
	if (!stored)
		return -1;
	if (rnsc_discovery_rec_get(p, len, "reachable_on", &v)) {
		if (v.type != RNSC_MP_STR)
			return 0;
		if (!rnsc_discovery_is_ip((const char *)v.p, v.len) &&
		    !rnsc_discovery_is_hostname((const char *)v.p, v.len))
			return -1;
	}
	if (!rnsc_discovery_rec_get(p, len, "value", &v))
		return 0;
	e->value = num(&v, &ok);
	if (!ok || !rnsc_discovery_rec_get(p, len, "transport", &v))
		return 0;
	const char *status = delta > THRESHOLD_STALE     ? "stale"
			     : delta > THRESHOLD_UNKNOWN ? "unknown"
							 : "available";
	e->code = delta > THRESHOLD_STALE ? 0 : delta > THRESHOLD_UNKNOWN ? 100 : 1000;
	e->last_heard = lh;

	size_t cap = len + 2 * RNSC_DISC_NAME_MAX + 64;
	e->p = malloc(cap);
	if (!e->p)
		return 0;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n;
	if (rnsc_mp_read_map(&r, &n) < 0)
		goto skip;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, e->p, cap);
	int has_status = 0, has_code = 0;
	/* First pass: count the keys the reference's dict ends up with. */
	{
		rnsc_mp_reader r2 = r;
		for (size_t i = 0; i < n; i++) {
			rnsc_mp_token k;
			if (rnsc_mp_next(&r2, &k) < 0 || rnsc_mp_skip(&r2) < 0)
				goto skip;
			if (k.type == RNSC_MP_STR && k.len == 6 && !memcmp(k.p, "status", 6))
				has_status = 1;
			if (k.type == RNSC_MP_STR && k.len == 11 && !memcmp(k.p, "status_code", 11))
				has_code = 1;
		}
	}
	rnsc_mp_write_map(&w, n + !has_status + !has_code);
	for (size_t i = 0; i < n; i++) {
		size_t k0 = r.pos;
		rnsc_mp_token k;
		if (rnsc_mp_next(&r, &k) < 0)
			goto skip;
		size_t v0 = r.pos;
		if (rnsc_mp_skip(&r) < 0)
			goto skip;
		int is = k.type == RNSC_MP_STR;
		rnsc_mp_write_raw(&w, p + k0, v0 - k0);
		if (is && k.len == 4 && !memcmp(k.p, "name", 4)) {
			rnsc_mp_token nv;
			rnsc_mp_peek(&(rnsc_mp_reader){p, len, v0}, &nv);
			if (nv.type != RNSC_MP_STR)
				goto skip;
			char nm[RNSC_DISC_NAME_MAX];
			size_t l = rnsc_discovery_sanitize_name(nm, sizeof nm, (const char *)nv.p,
								nv.len);
			if (l)
				rnsc_mp_write_str(&w, nm, l);
			else
				rnsc_mp_write_nil(&w);
		} else if (is && k.len == 6 && !memcmp(k.p, "status", 6)) {
			rnsc_mp_write_cstr(&w, status);
		} else if (is && k.len == 11 && !memcmp(k.p, "status_code", 11)) {
			rnsc_mp_write_uint(&w, (uint64_t)e->code);
		} else {
			rnsc_mp_write_raw(&w, p + v0, r.pos - v0);
		}
	}
	if (!has_status) {
		rnsc_mp_write_cstr(&w, "status");
		rnsc_mp_write_cstr(&w, status);
	}
	if (!has_code) {
		rnsc_mp_write_cstr(&w, "status_code");
		rnsc_mp_write_uint(&w, (uint64_t)e->code);
	}
	int wl = rnsc_mp_writer_finish(&w);
	if (wl <= 0)
		goto skip;
	e->len = (size_t)wl;
	return wl;
skip:
	free(e->p);
	e->p = NULL;
	return 0;
}

int rnsc_discovery_store_list(rnsc_ctx *ctx, const char *storage, double now,
			      const rnsc_hash_list *sources, uint8_t **out, size_t *out_len,
			      size_t *count)
{
	(void)ctx;
	*out = NULL;
	*out_len = 0;
	*count = 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%.*s/discovery/interfaces", PATH_MAX - 64, storage);
	entry *es = NULL;
	size_t ne = 0, ce = 0, total = 0;
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char path[PATH_MAX];
			snprintf(path, sizeof path, "%.*s/%s", PATH_MAX - 300, dir, de->d_name);
			uint8_t *p = NULL;
			size_t l = 0;
			if (rnsc_store_read_file(NULL, path, REC_MAX, &p, &l) < 0)
				continue;
			entry e = {0};
			int r = relist(p, l, now, sources, &e);
			free(p);
			if (r < 0) {
				remove(path);
				continue;
			}
			if (r == 0)
				continue;
			if (ne == ce) {
				size_t nc = ce ? 2 * ce : 8;
				entry *g = realloc(es, nc * sizeof *g);
				if (!g) {
					free(e.p);
					break;
				}
				es = g;
				ce = nc;
			}
			es[ne++] = e;
			total += e.len;
		}
		closedir(d);
	}
	if (ne) /* qsort with a NULL base is undefined even for 0 elements */
		qsort(es, ne, sizeof *es, cmp_desc);
	uint8_t *buf = malloc(total + 16);
	int rc = buf ? 0 : RNSC_ERR_NOMEM;
	if (buf) {
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, buf, total + 16);
		rnsc_mp_write_array(&w, ne);
		for (size_t i = 0; i < ne; i++)
			rnsc_mp_write_raw(&w, es[i].p, es[i].len);
		int wl = rnsc_mp_writer_finish(&w);
		if (wl < 0) {
			free(buf);
			rc = wl;
		} else {
			*out = buf;
			*out_len = (size_t)wl;
			*count = ne;
		}
	}
	for (size_t i = 0; i < ne; i++)
		free(es[i].p);
	free(es);
	return rc;
}
