/* SPDX-License-Identifier: MIT */
/* rnsc path -r (announce rates) and -j (JSON of -t and -r), as rnpath prints them: the
 * table comes from the shared instance's RPC when attached, from this node otherwise, or
 * from a remote instance's "/path" request with -R. */
#include <math.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_remote.h"
#include "cmd_path_rates.h"
#include "msgpack.h"
#include "node_rpc.h"
#include "rpc.h"
#include "status_json.h"

typedef struct entry {
	const uint8_t *p; /* the encoded map */
	size_t len;
	uint8_t hash[16];
	char iface[128];
	double hops, last, first, blocked_until;
	int64_t violations;
	size_t n_ts;
} entry;

static void read_entry(entry *e)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, e->p, e->len);
	size_t m;
	if (rnsc_mp_read_map(&r, &m))
		return;
	for (size_t j = 0; j < m; j++) {
		const char *k;
		size_t kl;
		rnsc_mp_token t;
		if (rnsc_mp_read_str(&r, &k, &kl) || rnsc_mp_peek(&r, &t))
			return;
		double d = t.type == RNSC_MP_FLOAT64 ? t.f64
			   : t.type == RNSC_MP_UINT  ? (double)t.u
			   : t.type == RNSC_MP_INT   ? (double)t.i
						     : 0;
		if (kl == 4 && !memcmp(k, "hash", 4) && t.type == RNSC_MP_BIN && t.len == 16)
			memcpy(e->hash, t.p, 16);
		else if (kl == 9 && !memcmp(k, "interface", 9) && t.type == RNSC_MP_STR)
			snprintf(e->iface, sizeof(e->iface), "%.*s", (int)t.len, (const char *)t.p);
		else if (kl == 4 && !memcmp(k, "hops", 4))
			e->hops = d;
		else if (kl == 4 && !memcmp(k, "last", 4))
			e->last = d;
		else if (kl == 13 && !memcmp(k, "blocked_until", 13))
			e->blocked_until = d;
		else if (kl == 15 && !memcmp(k, "rate_violations", 15))
			e->violations = (int64_t)d;
		else if (kl == 10 && !memcmp(k, "timestamps", 10) && t.type == RNSC_MP_ARRAY) {
			rnsc_mp_reader a = r;
			size_t n;
			if (rnsc_mp_read_array(&a, &n) == 0) {
				e->n_ts = n;
				rnsc_mp_token f;
				if (n && rnsc_mp_peek(&a, &f) == 0)
					e->first = f.type == RNSC_MP_FLOAT64 ? f.f64
						   : f.type == RNSC_MP_UINT  ? (double)f.u
									     : 0;
			}
		}
		if (rnsc_mp_skip(&r))
			return;
	}
}

static int by_iface_hops(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->iface, y->iface);
	return c ? c : (x->hops > y->hops) - (x->hops < y->hops);
}

static int by_last(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	return (x->last > y->last) - (x->last < y->last);
}

/* rnpath's pretty_date: the age of a timestamp. */
static void pretty_date(char *out, size_t cap, long ts)
{
	long diff = (long)time(NULL) - ts;
	if (diff < 0) {
		snprintf(out, cap, "%s", "");
		return;
	}
	long days = diff / 86400, secs = diff % 86400;
	if (days == 0) {
		if (secs < 60)
			snprintf(out, cap, "%ld seconds", secs);
		else if (secs < 70)
			snprintf(out, cap, "1 minute");
		else if (secs < 7200)
			snprintf(out, cap, "%ld minutes", secs / 60);
		else
			snprintf(out, cap, "%ld hours", secs / 3600);
	} else if (days == 1)
		snprintf(out, cap, "1 day");
	else if (days < 7)
		snprintf(out, cap, "%ld days", days);
	else if (days < 31)
		snprintf(out, cap, "%ld weeks", days / 7);
	else if (days < 365)
		snprintf(out, cap, "%ld months", days / 30);
	else
		snprintf(out, cap, "%ld years", days / 365);
}

/* Python's str(round(x, 3)) after rnpath's int() of whole numbers. */
static void rate_str(char *out, size_t cap, double v)
{
	double r = round(v * 1000.0) / 1000.0;
	if (r == floor(r)) {
		snprintf(out, cap, "%.0f", r);
		return;
	}
	rnsc_py_float_repr(out, cap, r);
}

static int print_doc(const uint8_t *doc, size_t len, int rates, int json, int sort,
		     const uint8_t *only)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, doc, len);
	size_t n;
	if (rnsc_mp_read_array(&r, &n)) {
		printf("Could not get the %s table\n", rates ? "rate" : "path");
		return 1;
	}
	entry *v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return 3;
	for (size_t i = 0; i < n; i++) {
		size_t start = r.pos;
		if (rnsc_mp_skip(&r)) {
			free(v);
			printf("Could not get the %s table\n", rates ? "rate" : "path");
			return 1;
		}
		v[i].p = doc + start;
		v[i].len = r.pos - start;
		snprintf(v[i].iface, sizeof(v[i].iface), "None");
		read_entry(&v[i]);
	}
	if (rates)
		qsort(v, n, sizeof(*v), by_last);
	else if (sort)
		qsort(v, n, sizeof(*v), by_iface_hops);
	int ret = 0;
	if (json) { /* the whole (sorted) list, as rnpath dumps it */
		size_t cap = len + 16;
		uint8_t *buf = malloc(cap);
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, buf, cap);
		rnsc_mp_write_array(&w, n);
		for (size_t i = 0; i < n; i++)
			rnsc_mp_write_raw(&w, v[i].p, v[i].len);
		int bl = buf ? rnsc_mp_writer_finish(&w) : RNSC_ERR_NOMEM;
		char *js = NULL;
		size_t jl = 0;
		if (bl < 0 || rnsc_status_json_from_mp(buf, (size_t)bl, &js, &jl)) {
			printf("Could not render the table\n");
			ret = 1;
		} else {
			fwrite(js, 1, jl, stdout);
			if (jl && js[jl - 1] != '\n')
				putchar('\n');
		}
		free(js);
		free(buf);
	} else if (rates) {
		if (n == 0)
			printf("No information available\n");
		size_t shown = 0;
		for (size_t i = 0; i < n; i++) {
			entry *e = &v[i];
			if (only && memcmp(only, e->hash, 16) != 0)
				continue;
			shown++;
			char hx[33], last[40], span_s[40], rs[40], rv[80] = "", bl[96] = "";
			cli_hex(hx, e->hash, 16);
			pretty_date(last, sizeof(last), (long)e->last);
			double span = fmax((double)time(NULL) - e->first, 3600.0);
			pretty_date(span_s, sizeof(span_s), (long)e->first);
			rate_str(rs, sizeof(rs), (double)e->n_ts / (span / 3600.0));
			if (e->violations > 0)
				snprintf(rv, sizeof(rv), ", %lld active rate violation%s",
					 (long long)e->violations, e->violations == 1 ? "" : "s");
			double now = (double)time(NULL);
			if (e->blocked_until > now) {
				char a[40];
				pretty_date(a, sizeof(a),
					    (long)(now - ((double)(long)e->blocked_until - now)));
				snprintf(bl, sizeof(bl), ", new announces allowed in %s", a);
			}
			printf("<%s> last heard %s ago, %s announces/hour in the last %s%s%s\n", hx,
			       last, rs, span_s, rv, bl);
		}
		if (only && n && !shown) {
			printf("No information available\n");
		}
	}
	free(v);
	return ret;
}

int path_rates_or_json(rnsc_node *n, rnsc_ctx *ctx, int rates, int json, const uint8_t *only,
		       long max_hops)
{
	uint8_t req[64];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_map(&w, rates ? 1 : 2);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, rates ? "rate_table" : "path_table");
	if (!rates) {
		rnsc_mp_write_cstr(&w, "max_hops");
		if (max_hops >= 0)
			rnsc_mp_write_int(&w, max_hops);
		else
			rnsc_mp_write_nil(&w);
	}
	int rl = rnsc_mp_writer_finish(&w);
	if (rl < 0)
		return 3;
	uint8_t *doc = NULL;
	size_t len = 0;
	int rc;
	if (rnsc_node_connected_to_shared(n)) {
		struct sockaddr_storage addr;
		unsigned alen;
		uint8_t key[64];
		size_t klen;
		rc = rnsc_rpc_endpoint(ctx, rnsc_node_settings(n), rnsc_node_config_dir(n), &addr,
				       &alen, key, &klen);
		if (rc == 0)
			rc = rnsc_rpc_call(ctx, &addr, alen, key, klen, req, (size_t)rl, &doc, &len,
					   10000);
		memset(key, 0, sizeof(key));
	} else {
		rc = rnsc_node_rpc_answer(n, ctx, req, (size_t)rl, &doc, &len);
	}
	if (rc) {
		fprintf(stderr, "rnsc path: the shared instance did not answer: %s\n",
			rnsc_strerror(rc));
		free(doc);
		return 1;
	}
	int ret = print_doc(doc, len, rates, json, 1, only);
	free(doc);
	return ret;
}

int path_remote_rates_or_json(const char *dir, const char *remote, const char *mgmt_id,
			      double timeout, int rates, int json, const uint8_t *only,
			      long max_hops)
{
	uint8_t ih[16];
	if (!mgmt_id) {
		printf("Remote management requires an identity file. Use -i to specify the path to "
		       "a management identity.\n");
		return 20;
	}
	if (strlen(remote) != 32 || cli_unhex(ih, sizeof(ih), remote) != 16) {
		printf(strlen(remote) != 32
			       ? "Destination length is invalid, must be 32 hexadecimal "
				 "characters (16 bytes).\n"
			       : "Invalid destination entered. Check your input.\n");
		return 20;
	}
	uint8_t req[64];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_array(&w, rates ? 2 : 3);
	rnsc_mp_write_cstr(&w, rates ? "rates" : "table");
	if (only)
		rnsc_mp_write_bin(&w, only, 16);
	else
		rnsc_mp_write_nil(&w);
	if (!rates) {
		if (max_hops >= 0)
			rnsc_mp_write_int(&w, max_hops);
		else
			rnsc_mp_write_nil(&w);
	}
	int rl = rnsc_mp_writer_finish(&w);
	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	rnsc_ctx_set_log_level(env.ctx, RNSC_LOG_WARNING);
	uint8_t *doc = NULL;
	size_t len = 0;
	rc = cli_remote_request(&env, dir, ih, mgmt_id, "/path", req, (size_t)rl, timeout, json,
				&doc, &len);
	int ret;
	if (rc == CLI_REMOTE_NO_PATH)
		ret = 12;
	else if (rc == CLI_REMOTE_LINK)
		ret = 10;
	else if (rc == CLI_REMOTE_SETUP)
		ret = 20;
	else if (rc != CLI_REMOTE_OK || len == 0 || doc[0] == 0x90 || doc[0] == 0xc0) {
		if (!json)
			printf("\r                                                          \r"
			       "The remote request failed. Likely authentication failure.\n");
		ret = 10;
	} else {
		if (!json)
			printf("\r                                                          \r");
		ret = print_doc(doc, len, rates, json, 0, only);
	}
	free(doc);
	cli_env_close(&env);
	return ret;
}
