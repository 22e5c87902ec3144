/* SPDX-License-Identifier: MIT */
/* rnsc path: the path-table and blackhole parts of the reference's rnpath. With a shared instance
 * running (an rnsc daemon or a reference rnsd) it attaches to it as rnpath does: -t lists
 * the instance's table over the RPC, HASH is looked up and requested through it. Without
 * one it runs its own node: -t lists that node's table (the persisted one when
 * enable_transport is set, plus what arrives while it runs). */
#include <getopt.h>
#include <math.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "msgpack.h"
#include "node.h"
#include "rpc.h"
#include "blackhole_svc.h"
#include "cli_remote.h"
#include "cmd_path_rates.h"
#include "status_json.h"

#define PATH_REQUEST_TIMEOUT_S 15.0 /* Transport.PATH_REQUEST_TIMEOUT */
#define IFACE_WAIT_MS 5000u

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc path [--config DIR] [-t [-m HOPS]] [-r] [-j] [-d | -x | -D] [-w SECONDS]\n"
		"                 [-b | -B [--duration HOURS] [--reason TEXT] | -U]\n"
		"                 [-p TRANSPORT_ID [FILTER]] [-R HASH -i PATH [-W SECONDS]]\n"
		"                 [--version] [-h] [DESTINATION_HASH]\n\n"
		"Reticulum path utility (the table, lookup and blackhole parts of rnpath),\n"
		"attached to the running shared instance (rnsc daemon or rnsd: -t then lists the\n"
		"instance's table over its RPC), or else running its own node.\n\n"
		"  DESTINATION_HASH          show the path to it; request one if none is known and\n"
		"                            wait up to -w seconds for the answer\n"
		"  -t, --table               list the known paths (with DESTINATION_HASH: only it)\n"
		"  -m, --max HOPS            with -t, only paths of at most HOPS hops\n"
		"  -r, --rates               show announce rate info (with DESTINATION_HASH: only\n"
		"                            its entry)\n"
		"  -j, --json                with -t or -r, output in JSON format\n"
		"  -d, --drop                remove the path to DESTINATION_HASH\n"
		"  -x, --drop-via            remove every path via the transport instance\n"
		"                            DESTINATION_HASH\n"
		"  -D, --drop-announces      drop all queued announces\n"
		"  -b, --blackholed          list blackholed identities (with DESTINATION_HASH: only\n"
		"                            lines containing it)\n"
		"  -B, --blackhole           blackhole the identity DESTINATION_HASH: its announces\n"
		"                            are dropped and its paths removed\n"
		"  -U, --unblackhole         lift the blackhole for the identity DESTINATION_HASH\n"
		"      --duration HOURS      with -B, how long the blackhole is enforced (default:\n"
		"                            indefinitely)\n"
		"      --reason TEXT         with -B, the reason kept with the entry\n"
		"  -p, --blackholed-list     fetch the blackhole list that the transport instance\n"
		"                            DESTINATION_HASH (its identity hash) publishes\n"
		"                            (publish_blackhole); FILTER keeps matching lines\n"
		"  -w SECONDS                how long to wait for a path or for interfaces to come\n"
		"                            up before listing (default %.0f)\n"
		"  -R HASH                   with -t: the table of the remote transport instance\n"
		"                            HASH (its enable_remote_management must allow -i)\n"
		"  -i PATH                   identity used for remote management\n"
		"  -W SECONDS                timeout before giving up on remote queries (default\n"
		"                            15)\n"
		"      --config DIR          configuration folder (default: the reference's search)\n"
		"      --version             print the version and exit\n"
		"  -h, --help                show this help\n\n"
		"Exit status (as rnpath): 0 found / listed, 1 no path (or a bad hash), 2 usage,\n"
		"3 the node could not start; -b/-B/-U/-p: 20 for no data or a bad hash, -p: 12\n"
		"no path, 10 link or request failed; -R: 12 no path, 10 link or request failed\n"
		"(also refused), 20 bad remote arguments.\n"
		"Blackholes act on the shared instance when one runs (as rnpath), else on this\n"
		"configuration's node (storage/blackhole/local).\n",
		PATH_REQUEST_TIMEOUT_S);
}

static void pretty(char *out, const uint8_t *h)
{
	out[0] = '<';
	cli_hex(out + 1, h, RNSC_TRUNCATED_HASHLEN);
	strcat(out, ">");
}

static void iface_str(rnsc_node *n, uint32_t id, char *buf, size_t cap)
{
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	const char *name = rnsc_node_iface_name(n, id);
	rnsc_iface *f = name ? rnsc_iface_host_find(ih, name) : NULL;
	if (!f || rnsc_iface_describe(f, buf, cap) <= 0)
		snprintf(buf, cap, "%s", name ? name : "None");
}

typedef struct row {
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	rnsc_transport_path p;
	char iface[256];
} row;

static int row_cmp(const void *a, const void *b)
{
	const row *x = a, *y = b;
	int c = strcmp(x->iface, y->iface);
	return c ? c : (x->p.hops > y->p.hops) - (x->p.hops < y->p.hops);
}

static void run_for(rnsc_node *n, uint64_t ms, const uint8_t *dest)
{
	uint64_t end = rnsc_monotonic_ns() + ms * RNSC_NS_PER_MS;
	while (rnsc_monotonic_ns() < end && !rnsc_node_stopping(n)) {
		if (dest && rnsc_transport_has_path(rnsc_node_transport(n), dest))
			return;
		rnsc_node_run_once(n, 50);
	}
}

static int ifaces_ready(rnsc_node *n)
{
	rnsc_iface_host *ih = rnsc_node_ifaces(n);
	for (size_t i = 0; i < rnsc_iface_host_count(ih); i++) {
		rnsc_iface *f = rnsc_iface_host_at(ih, i);
		if (!rnsc_iface_parent(f) && !rnsc_iface_online(f))
			return 0;
	}
	return 1;
}

static void print_row(const row *r)
{
	char d[40], v[40], ts[32];
	pretty(d, r->dest);
	pretty(v, r->p.next_hop);
	time_t e = (time_t)(r->p.expires / 1000);
	struct tm tm;
	localtime_r(&e, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	/* rnpath's spacing: "1 hop  away", "2 hops away" */
	printf("%s is %u hop%s away via %s on %s expires %s\n", d, r->p.hops,
	       r->p.hops == 1 ? " " : "s", v, r->iface, ts);
}

static int print_table(rnsc_node *n, const uint8_t *only, long max_hops)
{
	rnsc_transport *t = rnsc_node_transport(n);
	size_t cnt = rnsc_transport_path_count(t), k = 0, cur = 0;
	row *rows = calloc(cnt ? cnt : 1, sizeof(*rows));
	if (!rows)
		return CLI_SETUP;
	while (k < cnt && rnsc_transport_path_next(t, &cur, rows[k].dest, &rows[k].p)) {
		if ((only && memcmp(only, rows[k].dest, RNSC_TRUNCATED_HASHLEN) != 0) ||
		    (max_hops >= 0 && rows[k].p.hops > (unsigned long)max_hops))
			continue;
		iface_str(n, rows[k].p.iface, rows[k].iface, sizeof(rows[k].iface));
		k++;
	}
	qsort(rows, k, sizeof(*rows), row_cmp);
	for (size_t i = 0; i < k; i++)
		print_row(&rows[i]);
	free(rows);
	if (only && k == 0) {
		printf("No path known\n");
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* Attached to a shared instance the table is the instance's: Reticulum.get_path_table over
 * the RPC, as rnpath does (a list of {hash, timestamp, via, hops, expires, interface}). */
static int render_table(const uint8_t *resp, size_t resp_len, const uint8_t *only, int sort);

static int print_shared_table(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *only, long max_hops)
{
	struct sockaddr_storage addr;
	unsigned alen;
	uint8_t key[64], req[64];
	size_t klen;
	int rc = rnsc_rpc_endpoint(ctx, rnsc_node_settings(n), rnsc_node_config_dir(n), &addr,
				   &alen, key, &klen);
	if (rc) {
		fprintf(stderr, "rnsc path: no RPC key for the shared instance: %s\n",
			rnsc_strerror(rc));
		return CLI_FAIL;
	}
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_map(&w, 2);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, "path_table");
	rnsc_mp_write_cstr(&w, "max_hops");
	if (max_hops >= 0)
		rnsc_mp_write_int(&w, max_hops);
	else
		rnsc_mp_write_nil(&w);
	int rl = rnsc_mp_writer_finish(&w);
	uint8_t *resp = NULL;
	size_t resp_len = 0;
	rc = rl < 0 ? rl
		    : rnsc_rpc_call(ctx, &addr, alen, key, klen, req, (size_t)rl, &resp, &resp_len,
				    10000);
	memset(key, 0, sizeof(key));
	if (rc) {
		fprintf(stderr, "rnsc path: the shared instance did not answer: %s\n",
			rnsc_strerror(rc));
		return CLI_FAIL;
	}
	rc = render_table(resp, resp_len, only, 1);
	free(resp);
	return rc;
}

/* A path table answer (the RPC's or a remote instance's /path): rows as rnpath -t prints
 * them, sorted by interface and hops as rnpath sorts its own table (sort), or in the
 * order received as it prints a remote one. */
static int render_table(const uint8_t *resp, size_t resp_len, const uint8_t *only, int sort)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, resp, resp_len);
	size_t cnt = 0, k = 0;
	row *rows = NULL;
	int ret = CLI_OK;
	if (rnsc_mp_read_array(&r, &cnt) || !(rows = calloc(cnt ? cnt : 1, sizeof(*rows)))) {
		ret = CLI_FAIL;
		goto out;
	}
	for (size_t i = 0; i < cnt; i++) {
		size_t m;
		if (rnsc_mp_read_map(&r, &m)) {
			ret = CLI_FAIL;
			goto out;
		}
		row *e = &rows[k];
		memset(e, 0, sizeof(*e));
		snprintf(e->iface, sizeof(e->iface), "None");
		for (size_t j = 0; j < m; j++) {
			const char *key_s;
			size_t kl;
			rnsc_mp_token t;
			if (rnsc_mp_read_str(&r, &key_s, &kl) || rnsc_mp_next(&r, &t)) {
				ret = CLI_FAIL;
				goto out;
			}
			if (t.type == RNSC_MP_ARRAY || t.type == RNSC_MP_MAP) {
				ret = CLI_FAIL;
				goto out;
			}
			double d = t.type == RNSC_MP_FLOAT64 ? t.f64
				   : t.type == RNSC_MP_UINT  ? (double)t.u
							     : 0;
			if (kl == 4 && !memcmp(key_s, "hash", 4) && t.type == RNSC_MP_BIN &&
			    t.len == 16)
				memcpy(e->dest, t.p, 16);
			else if (kl == 3 && !memcmp(key_s, "via", 3) && t.type == RNSC_MP_BIN &&
				 t.len == 16)
				memcpy(e->p.next_hop, t.p, 16);
			else if (kl == 4 && !memcmp(key_s, "hops", 4))
				e->p.hops = (unsigned)d;
			else if (kl == 7 && !memcmp(key_s, "expires", 7))
				e->p.expires = (uint64_t)(d * 1000.0);
			else if (kl == 9 && !memcmp(key_s, "interface", 9) && t.type == RNSC_MP_STR)
				snprintf(e->iface, sizeof(e->iface), "%.*s", (int)t.len,
					 (const char *)t.p);
		}
		if (only && memcmp(only, e->dest, RNSC_TRUNCATED_HASHLEN) != 0)
			continue;
		k++;
	}
	if (sort)
		qsort(rows, k, sizeof(*rows), row_cmp);
	for (size_t i = 0; i < k; i++)
		print_row(&rows[i]);
	if (only && k == 0) {
		printf("No path known\n");
		ret = CLI_FAIL;
	}
out:
	free(rows);
	return ret;
}

/* -R HASH -i IDENTITY -W S with -t: the /path request of rnpath -R (["table", hash,
 * max_hops]) to a transport instance's remote management destination. */
static int remote_table(const char *dir, const char *remote, const char *mgmt_id, double timeout,
			const uint8_t *only, long max_hops)
{
	uint8_t ih[16];
	if (!mgmt_id) {
		printf("Remote management requires an identity file. Use -i to specify the path to "
		       "a management identity.\n");
		return 20;
	}
	if (strlen(remote) != 32) {
		printf("Destination length is invalid, must be 32 hexadecimal characters (16 "
		       "bytes).\n");
		return 20;
	}
	if (cli_unhex(ih, sizeof(ih), remote) != 16) {
		printf("Invalid destination entered. Check your input.\n");
		return 20;
	}
	uint8_t req[64];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_array(&w, 3);
	rnsc_mp_write_cstr(&w, "table");
	if (only)
		rnsc_mp_write_bin(&w, only, RNSC_TRUNCATED_HASHLEN);
	else
		rnsc_mp_write_nil(&w);
	if (max_hops >= 0)
		rnsc_mp_write_int(&w, max_hops);
	else
		rnsc_mp_write_nil(&w);
	int rl = rnsc_mp_writer_finish(&w);
	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	rnsc_ctx_set_log_level(env.ctx, RNSC_LOG_WARNING);
	uint8_t *resp = NULL;
	size_t len = 0;
	rc = cli_remote_request(&env, dir, ih, mgmt_id, "/path", req, (size_t)rl, timeout, 0, &resp,
				&len);
	int ret;
	if (rc == CLI_REMOTE_NO_PATH)
		ret = 12;
	else if (rc == CLI_REMOTE_LINK)
		ret = 10;
	else if (rc == CLI_REMOTE_SETUP)
		ret = 20;
	else if (rc != CLI_REMOTE_OK || len == 0 || resp[0] == 0x90 || resp[0] == 0xc0) {
		/* rnpath: no answer, or an empty (falsy) one */
		printf("\r                                                          \r"
		       "The remote request failed. Likely authentication failure.\n");
		ret = 10;
	} else {
		printf("\r                                                          \r");
		ret = render_table(resp, len, only, 0);
	}
	free(resp);
	cli_env_close(&env);
	return ret;
}

/* One call to the shared instance with an optional destination hash; the answer's msgpack
 * in *resp (malloc'd). */
static int shared_call(rnsc_node *n, rnsc_ctx *ctx, const char *kind, const char *what,
		       const uint8_t *dest, uint8_t **resp, size_t *rlen)
{
	struct sockaddr_storage addr;
	unsigned alen;
	uint8_t key[64], req[96];
	size_t klen;
	int rc = rnsc_rpc_endpoint(ctx, rnsc_node_settings(n), rnsc_node_config_dir(n), &addr,
				   &alen, key, &klen);
	if (rc)
		return rc;
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_map(&w, dest ? 2 : 1);
	rnsc_mp_write_cstr(&w, kind);
	rnsc_mp_write_cstr(&w, what);
	if (dest) {
		rnsc_mp_write_cstr(&w, "destination_hash");
		rnsc_mp_write_bin(&w, dest, RNSC_TRUNCATED_HASHLEN);
	}
	int rl = rnsc_mp_writer_finish(&w);
	rc = rl < 0 ? rl
		    : rnsc_rpc_call(ctx, &addr, alen, key, klen, req, (size_t)rl, resp, rlen,
				    10000);
	memset(key, 0, sizeof(key));
	return rc;
}

/* rnpath -d / -x / -D: on the shared instance when attached, else on this node. */
static int drop_cmd(rnsc_node *n, rnsc_ctx *ctx, int which, const uint8_t *dest)
{
	char ph[40];
	if (dest)
		pretty(ph, dest);
	if (which == 'D')
		printf("Dropping announce queues on all interfaces...\n"); /* rnsc keeps none */
	int64_t result = 0;
	if (rnsc_node_connected_to_shared(n)) {
		uint8_t *resp = NULL;
		size_t rl = 0;
		const char *what = which == 'd'   ? "path"
				   : which == 'x' ? "all_via"
						  : "announce_queues";
		int rc = shared_call(n, ctx, "drop", what, which == 'D' ? NULL : dest, &resp, &rl);
		if (rc) {
			fprintf(stderr, "rnsc path: the shared instance did not answer: %s\n",
				rnsc_strerror(rc));
			return CLI_FAIL;
		}
		rnsc_mp_reader r;
		rnsc_mp_reader_init(&r, resp, rl);
		rnsc_mp_token t;
		if (rnsc_mp_next(&r, &t) == 0)
			result = t.type == RNSC_MP_BOOL   ? t.boolean
				 : t.type == RNSC_MP_UINT ? (int64_t)t.u
							  : 0;
		free(resp);
	} else {
		rnsc_transport *tr = rnsc_node_transport(n);
		if (which == 'd') {
			result = rnsc_transport_expire_path(tr, dest) == 0;
		} else if (which == 'x') {
			size_t cur = 0;
			uint8_t h[RNSC_TRUNCATED_HASHLEN];
			rnsc_transport_path p;
			while (rnsc_transport_path_next(tr, &cur, h, &p))
				if (memcmp(p.next_hop, dest, RNSC_TRUNCATED_HASHLEN) == 0 &&
				    p.timestamp)
					result++; /* expiring only sets the timestamp: the table holds */
			cur = 0;
			while (rnsc_transport_path_next(tr, &cur, h, &p))
				if (memcmp(p.next_hop, dest, RNSC_TRUNCATED_HASHLEN) == 0)
					(void)rnsc_transport_expire_path(tr, h);
		}
	}
	if (which == 'D')
		return CLI_OK;
	if (which == 'd') {
		if (result) {
			printf("Dropped path to %s\n", ph);
			return CLI_OK;
		}
		printf("Unable to drop path to %s. Does it exist?\n", ph);
		return CLI_FAIL;
	}
	if (result) {
		printf("Dropped all paths via %s\n", ph);
		return CLI_OK;
	}
	printf("Unable to drop paths via %s. Does the transport instance exist?\n", ph);
	return CLI_FAIL;
}

/* ---- blackholed identities (rnpath -b / -B / -U) ---------------------------------------- */

#define BH_EXIT 20 /* rnpath's exit(20) */

/* A request to the shared instance, the answer in *resp (malloc'd). */
static int rpc_raw(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *req, size_t len, uint8_t **resp,
		   size_t *rlen)
{
	struct sockaddr_storage addr;
	unsigned alen;
	uint8_t key[64];
	size_t klen;
	int rc = rnsc_rpc_endpoint(ctx, rnsc_node_settings(n), rnsc_node_config_dir(n), &addr,
				   &alen, key, &klen);
	if (rc == 0)
		rc = rnsc_rpc_call(ctx, &addr, alen, key, klen, req, len, resp, rlen, 10000);
	memset(key, 0, sizeof(key));
	return rc;
}

typedef struct bh_print {
	const uint8_t *self; /* this node's transport id: no " by ..." */
	const char *filter;  /* substring filter, or NULL */
	double now;
	int printed;
} bh_print;

/* rnpath's line: "<id> blackholed for 1h and 2s (reason) by <source>" */
static int bh_line(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	bh_print *b = ud;
	char ph[40], ps[40], until[128], reason[300] = "", by[64] = "", filt[600];
	pretty(ph, id);
	if (e->until > 0) {
		char pt[100];
		cli_prettytime(pt, sizeof(pt), e->until - b->now > 0 ? e->until - b->now : 0);
		snprintf(until, sizeof(until), "for %s", pt);
	} else {
		snprintf(until, sizeof(until), "indefinitely");
	}
	if (e->reason && e->reason_len) {
		/* trunc(): 64 code points, the last replaced by an ellipsis */
		size_t cps = 0, cut = e->reason_len;
		for (size_t i = 0; i < e->reason_len; i++)
			if (((unsigned char)e->reason[i] & 0xc0) != 0x80 && ++cps == 64)
				cut = i;
		size_t total = 0;
		for (size_t i = 0; i < e->reason_len; i++)
			total += ((unsigned char)e->reason[i] & 0xc0) != 0x80;
		if (total <= 64)
			snprintf(reason, sizeof(reason), " (%.*s)", (int)e->reason_len, e->reason);
		else
			snprintf(reason, sizeof(reason), " (%.*s\u2026)", (int)cut, e->reason);
	}
	if (e->has_source && (!b->self || memcmp(e->source, b->self, 16) != 0)) {
		pretty(ps, e->source);
		snprintf(by, sizeof(by), " by %s", ps);
	}
	snprintf(filt, sizeof(filt), "%s %s %s %s", ph, until, reason, by);
	if (b->filter && !strstr(filt, b->filter))
		return 0;
	printf("%s blackholed %s%s%s\n", ph, until, reason, by);
	b->printed++;
	return 0;
}

static int bh_list(rnsc_node *n, rnsc_ctx *ctx, const char *filter)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;
	if (rnsc_node_connected_to_shared(n)) {
		static const uint8_t req[] = "\x81\xa3get\xb5"
					     "blackholed_identities";
		rc = rpc_raw(n, ctx, req, sizeof(req) - 1, &buf, &len);
		if (rc) {
			printf("Could not get blackholed identities from RNS instance: %s\n",
			       rnsc_strerror(rc));
			return BH_EXIT;
		}
	} else {
		rnsc_transport *t = rnsc_node_transport(n);
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, NULL, 0);
		rc = rnsc_blackhole_list_write(&w, t, NULL);
		buf = rc > 0 ? malloc((size_t)rc) : NULL;
		if (!buf)
			return CLI_SETUP;
		len = (size_t)rc;
		rnsc_mp_writer_init(&w, buf, len);
		(void)rnsc_blackhole_list_write(&w, t, NULL);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	bh_print b = {.self = rnsc_transport_id(rnsc_node_transport(n)),
		      .filter = filter,
		      .now = (double)ts.tv_sec + ts.tv_nsec / 1e9};
	rc = rnsc_blackhole_list_parse(buf, len, NULL, NULL);
	if (rc == 0) {
		printf("No blackholed identity data available\n");
		free(buf);
		return BH_EXIT;
	}
	if (rc > 0)
		rc = rnsc_blackhole_list_parse(buf, len, bh_line, &b);
	free(buf);
	if (rc < 0) {
		printf("Error while displaying collected blackhole data: %s\n", rnsc_strerror(rc));
		return BH_EXIT;
	}
	return CLI_OK;
}

typedef struct remote_list {
	int done, status;
	uint8_t *v;
	size_t len;
} remote_list;

static void remote_done(void *ud, int status, const uint8_t *v, size_t len)
{
	remote_list *r = ud;
	r->done = 1;
	r->status = status;
	if (status == RNSC_BH_FETCH_OK && (r->v = malloc(len ? len : 1)) != NULL) {
		memcpy(r->v, v, len);
		r->len = len;
	}
}

/* rnpath -p: the /list of rnstransport.info.blackhole on the transport instance hexhash. */
static int bh_remote(rnsc_node *n, rnsc_ctx *ctx, const char *hexhash, const char *filter,
		     double wait_s)
{
	uint8_t id[16];
	if (!hexhash || strlen(hexhash) != 32) {
		printf("Hash length is invalid, must be 32 hexadecimal characters (16 bytes).\n");
		return BH_EXIT;
	}
	if (cli_unhex(id, sizeof(id), hexhash) != 16) {
		printf("Invalid hash entered. Check your input.\n");
		return BH_EXIT;
	}
	rnsc_blackhole_svc *svc = NULL;
	int rc = rnsc_blackhole_svc_start(ctx, n, 0, &svc);
	if (rc) {
		fprintf(stderr, "rnsc path: %s\n", rnsc_strerror(rc));
		return CLI_SETUP;
	}
	double mpt = rnsc_node_medium_path_timeout_s(n);
	uint64_t tmo = (uint64_t)((wait_s > mpt ? wait_s : mpt) * 1000.0);
	remote_list r = {0};
	if ((rc = rnsc_blackhole_svc_fetch(svc, id, tmo, remote_done, &r))) {
		rnsc_blackhole_svc_stop(svc);
		fprintf(stderr, "rnsc path: %s\n", rnsc_strerror(rc));
		return CLI_SETUP;
	}
	/* bounded: the path wait, the link (30 s) and the request's own timeout */
	uint64_t end = rnsc_monotonic_ns() + (tmo + 120000) * RNSC_NS_PER_MS;
	while (!r.done && !rnsc_node_stopping(n) && rnsc_monotonic_ns() < end)
		rnsc_node_run_once(n, 100);
	/* let the link close go out */
	uint64_t t1 = rnsc_monotonic_ns() + 300 * RNSC_NS_PER_MS;
	while (rnsc_monotonic_ns() < t1)
		rnsc_node_run_once(n, 50);
	rnsc_blackhole_svc_stop(svc);
	int ret = CLI_OK;
	if (!r.done || r.status == RNSC_BH_FETCH_NO_PATH) {
		printf("Path request timed out\n");
		ret = 12;
	} else if (r.status == RNSC_BH_FETCH_LINK_FAILED) {
		printf("The link timed out, exiting now\n");
		ret = 10;
	} else if (r.status != RNSC_BH_FETCH_OK || !r.v || r.len < 1 ||
		   !((r.v[0] & 0xf0) == 0x80 || r.v[0] == 0xde || r.v[0] == 0xdf)) {
		printf("The remote request failed.\n");
		ret = 10;
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		bh_print b = {.self = rnsc_transport_id(rnsc_node_transport(n)),
			      .filter = filter,
			      .now = (double)ts.tv_sec + ts.tv_nsec / 1e9};
		int k = rnsc_blackhole_list_parse(r.v, r.len, NULL, NULL);
		if (k == 0) {
			printf("No blackholed identity data available\n");
			ret = BH_EXIT;
		} else if (k < 0 || rnsc_blackhole_list_parse(r.v, r.len, bh_line, &b) < 0) {
			printf("Error while displaying collected blackhole data: %s\n",
			       rnsc_strerror(k < 0 ? k : RNSC_ERR_MALFORMED));
			ret = BH_EXIT;
		}
	}
	free(r.v);
	return ret;
}

/* rnpath -B / -U: on the shared instance over the RPC, else on this node. */
static int bh_change(rnsc_node *n, rnsc_ctx *ctx, int add, const char *hexhash, double hours,
		     const char *reason)
{
	const char *verb = add ? "blackhole" : "unblackhole";
	uint8_t id[16];
	if (!hexhash || strlen(hexhash) != 32) {
		printf("Could not %s identity: Hash length is invalid, must be 32 hexadecimal "
		       "characters (16 bytes).\n",
		       verb);
		return BH_EXIT;
	}
	if (cli_unhex(id, sizeof(id), hexhash) != 16) {
		printf("Could not %s identity: Invalid hash entered. Check your input.\n", verb);
		return BH_EXIT;
	}
	double until = 0;
	if (add && hours != 0) { /* rnpath: time.time() + duration, whatever its sign */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		until = (double)ts.tv_sec + ts.tv_nsec / 1e9 + hours * 3600.0;
		if (until <= 0)
			until = 1e-9; /* already expired, not forever */
	}
	int result; /* 1 True, 0 None, -1 False */
	if (rnsc_node_connected_to_shared(n)) {
		size_t rlen = reason ? strlen(reason) : 0;
		uint8_t *req = malloc(96 + rlen), *resp = NULL;
		if (!req)
			return CLI_SETUP;
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, req, 96 + rlen);
		rnsc_mp_write_map(&w, add ? 3 : 1);
		rnsc_mp_write_cstr(&w, add ? "blackhole_identity" : "unblackhole_identity");
		rnsc_mp_write_bin(&w, id, sizeof(id));
		if (add) {
			rnsc_mp_write_cstr(&w, "until");
			if (until > 0)
				rnsc_mp_write_double(&w, until);
			else
				rnsc_mp_write_nil(&w);
			rnsc_mp_write_cstr(&w, "reason");
			if (reason)
				rnsc_mp_write_cstr(&w, reason);
			else
				rnsc_mp_write_nil(&w);
		}
		int l = rnsc_mp_writer_finish(&w);
		size_t rl = 0;
		int rc = l < 0 ? l : rpc_raw(n, ctx, req, (size_t)l, &resp, &rl);
		free(req);
		if (rc) {
			printf("Could not %s identity: %s\n", verb, rnsc_strerror(rc));
			return BH_EXIT;
		}
		result = rl && resp[0] == 0xc3 ? 1 : rl && resp[0] == 0xc0 ? 0 : -1;
		free(resp);
	} else {
		int rc = add ? rnsc_node_blackhole(n, id, until, 0, reason,
						   reason ? strlen(reason) : 0)
			     : rnsc_node_unblackhole(n, id);
		result = rc == 1 ? 1 : rc == 0 ? 0 : -1;
	}
	if (add)
		printf(result > 0    ? "Blackholed identity %s\n"
		       : result == 0 ? "Identity %s already blackholed\n"
				     : "Could not blackhole identity %s\n",
		       hexhash);
	else
		printf(result > 0    ? "Lifted blackhole for identity %s\n"
		       : result == 0 ? "Identity %s not blackholed\n"
				     : "Could not unblackhole identity %s\n",
		       hexhash);
	return CLI_OK; /* rnpath exits 0 whatever the answer */
}

int cmd_path(int argc, char **argv)
{
	static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
					     {"table", no_argument, NULL, 't'},
					     {"drop", no_argument, NULL, 'd'},
					     {"drop-via", no_argument, NULL, 'x'},
					     {"drop-announces", no_argument, NULL, 'D'},
					     {"max", required_argument, NULL, 'm'},
					     {"version", no_argument, NULL, 'V'},
					     {"blackholed", no_argument, NULL, 'b'},
					     {"blackhole", no_argument, NULL, 'B'},
					     {"unblackhole", no_argument, NULL, 'U'},
					     {"duration", required_argument, NULL, 1001},
					     {"reason", required_argument, NULL, 1002},
					     {"blackholed-list", no_argument, NULL, 'p'},
					     {"rates", no_argument, NULL, 'r'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {0, 0, 0, 0}};
	int rates = 0, json = 0;
	const char *remote = NULL, *mgmt_id = NULL;
	double remote_timeout = PATH_REQUEST_TIMEOUT_S;
	int bh = 0; /* 'b', 'B' or 'U' */
	double bh_hours = 0;
	const char *bh_reason = NULL;
	int bh_remote_list = 0;
	const char *dir = NULL;
	int table = 0, c;
	long max_hops = -1;
	double wait = PATH_REQUEST_TIMEOUT_S;
	char *end;
	optind = 1;
	int drop = 0;
	while ((c = getopt_long(argc, argv, "trjm:w:hdxDbBUpR:i:W:", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 'B':
		case 'U': /* rnpath: listing wins over -B, -B over -U */
			if (c == 'b' || (c == 'B' && bh != 'b') || !bh)
				bh = c;
			break;
		case 1001:
			bh_hours = strtod(optarg, &end);
			if (*end || end == optarg || !(bh_hours > -1e9 && bh_hours < 1e9)) {
				fprintf(stderr, "rnsc path: invalid duration '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 1002:
			bh_reason = optarg;
			break;
		case 'p':
			bh_remote_list = 1;
			break;
		case 'c':
			dir = optarg;
			break;
		case 't':
			table = 1;
			break;
		case 'r':
			rates = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'd':
		case 'x':
		case 'D':
			drop = c;
			break;
		case 'm':
			max_hops = strtol(optarg, &end, 10);
			if (*end || end == optarg || max_hops < 0) {
				fprintf(stderr, "rnsc path: invalid hop count '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 'w':
			wait = strtod(optarg, &end);
			if (*end || end == optarg || !(wait >= 0 && wait < 1e6)) {
				fprintf(stderr, "rnsc path: invalid timeout '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 'R':
			remote = optarg;
			break;
		case 'i':
			mgmt_id = optarg;
			break;
		case 'W':
			remote_timeout = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(remote_timeout >= 0 && remote_timeout < 1e6)) {
				fprintf(stderr, "rnsc path: invalid timeout '%s'\n", optarg);
				return CLI_USAGE;
			}
			break;
		case 'V':
			printf("rnsc path %s\n", PACKAGE_VERSION);
			return CLI_OK;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (argc - optind > (bh_remote_list ? 2 : 1)) {
		fprintf(stderr, "rnsc path: unexpected argument '%s'\n", argv[optind + 1]);
		return CLI_USAGE;
	}
	const char *hexhash = optind < argc ? argv[optind] : NULL;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	if (bh_remote_list && bh != 'b' && !hexhash) {
		printf("\n");
		usage(stdout);
		printf("\n");
		return CLI_OK;
	}
	if (bh_remote_list && bh != 'b')
		bh = 'p'; /* rnpath: -b first, then the remote list, then -B / -U */
	if (bh && (bh == 'b' || hexhash)) {
		cli_env benv;
		int brc = cli_env_open(&benv, NULL, 0);
		if (brc)
			return brc;
		rnsc_ctx_set_log_level(benv.ctx, RNSC_LOG_WARNING);
		rnsc_node_options bno = {.config_dir = dir, .handle_signals = 1};
		rnsc_node *bn = NULL;
		rnsc_config_error berr;
		if ((brc = rnsc_node_new(benv.ctx, benv.host, &bno, &bn, &berr))) {
			fprintf(stderr, "rnsc path: %s\n",
				berr.msg[0] ? berr.msg : rnsc_strerror(brc));
			brc = CLI_SETUP;
		} else if (bh == 'b') {
			brc = bh_list(bn, benv.ctx, hexhash);
		} else if (bh == 'p') {
			brc = bh_remote(bn, benv.ctx, hexhash,
					optind + 1 < argc ? argv[optind + 1] : NULL, wait);
		} else {
			brc = bh_change(bn, benv.ctx, bh == 'B', hexhash, bh_hours, bh_reason);
		}
		rnsc_node_del(bn);
		cli_env_close(&benv);
		return brc;
	}
	if (hexhash) {
		if (strlen(hexhash) != 2 * RNSC_TRUNCATED_HASHLEN) {
			printf("Destination length is invalid, must be %d hexadecimal characters (%d "
			       "bytes).\n",
			       2 * RNSC_TRUNCATED_HASHLEN, RNSC_TRUNCATED_HASHLEN);
			return CLI_FAIL;
		}
		if (cli_unhex(dest, sizeof(dest), hexhash) != RNSC_TRUNCATED_HASHLEN) {
			printf("Invalid destination entered. Check your input.\n");
			return CLI_FAIL;
		}
	} else if (drop == 'd' || drop == 'x') {
		printf("Destination length is invalid, must be %d hexadecimal characters (%d "
		       "bytes).\n",
		       2 * RNSC_TRUNCATED_HASHLEN, RNSC_TRUNCATED_HASHLEN);
		return CLI_FAIL;
	} else if (!table && !drop && !rates) {
		printf("\n");
		usage(stdout);
		printf("\n");
		return CLI_OK;
	}
	if (remote && !table && !rates) {
		printf("rnsc path -R supports the path table (-t) and rates (-r) only\n");
		return 20;
	}
	if (remote && (rates || json))
		return path_remote_rates_or_json(dir, remote, mgmt_id, remote_timeout,
						 rates && !table, json, hexhash ? dest : NULL,
						 max_hops);
	if (remote)
		return remote_table(dir, remote, mgmt_id, remote_timeout, hexhash ? dest : NULL,
				    max_hops);
	cli_env env;
	int rc = cli_env_open(&env, NULL, 0);
	if (rc)
		return rc;
	rnsc_ctx_set_log_level(env.ctx, RNSC_LOG_WARNING);
	rnsc_node_options no = {.config_dir = dir, .handle_signals = 1};
	rnsc_node *n = NULL;
	rnsc_config_error err;
	int ret = CLI_OK;
	if ((rc = rnsc_node_new(env.ctx, env.host, &no, &n, &err))) {
		fprintf(stderr, "rnsc path: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		ret = CLI_SETUP;
		goto out;
	}
	if (drop) {
		ret = drop_cmd(n, env.ctx, drop, hexhash ? dest : NULL);
		goto out;
	}
	uint64_t wait_ms = (uint64_t)(wait * 1000.0);
	uint64_t up = wait_ms < IFACE_WAIT_MS ? wait_ms : IFACE_WAIT_MS;
	uint64_t t0 = rnsc_monotonic_ns();
	while (!ifaces_ready(n) && rnsc_monotonic_ns() - t0 < up * RNSC_NS_PER_MS &&
	       !rnsc_node_stopping(n))
		rnsc_node_run_once(n, 50);
	if ((table && json) || (rates && !table)) {
		ret = path_rates_or_json(n, env.ctx, !table, json, hexhash ? dest : NULL, max_hops);
		goto out;
	}
	if (table && rnsc_node_connected_to_shared(n)) {
		ret = print_shared_table(n, env.ctx, hexhash ? dest : NULL, max_hops);
		goto out;
	}
	if (table) {
		ret = print_table(n, hexhash ? dest : NULL, max_hops);
		goto out;
	}
	rnsc_transport *t = rnsc_node_transport(n);
	char ph[40];
	pretty(ph, dest);
	if (!rnsc_transport_has_path(t, dest)) {
		if ((rc = rnsc_transport_request_path(t, dest, 0, 0, rnsc_node_now_ms()))) {
			fprintf(stderr, "rnsc path: path request failed: %s\n", rnsc_strerror(rc));
			ret = CLI_FAIL;
			goto out;
		}
		rnsc_node_flush(n);
		printf("Path to %s requested  \n", ph);
		fflush(stdout);
		run_for(n, wait_ms, dest);
	}
	rnsc_transport_path p;
	if (rnsc_transport_path_get(t, dest, &p) == 0) {
		char nh[40], ifs[256];
		pretty(nh, p.next_hop);
		iface_str(n, p.iface, ifs, sizeof(ifs));
		printf("Path found, destination %s is %u hop%s away via %s on %s\n", ph, p.hops,
		       p.hops == 1 ? "" : "s", nh, ifs);
	} else {
		printf("Path not found\n");
		ret = CLI_FAIL;
	}
out:
	rnsc_node_del(n);
	cli_env_close(&env);
	return ret;
}
