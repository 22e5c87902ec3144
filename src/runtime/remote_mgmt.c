/* SPDX-License-Identifier: MIT */
#include "remote_mgmt.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "destination.h"
#include "loop.h"
#include "msgpack.h"
#include "node_rpc.h"
#include "store.h"
#include "transport.h"

static const char *WHO = "remote-mgmt";
static const char *const ASPECTS[] = {"remote", "management"};

#define MGMT_FIRST_MS 15000u                   /* Transport.start: first mgmt announce */
#define MGMT_INTERVAL_MS (2u * 60 * 60 * 1000) /* Transport.mgmt_announce_interval */

struct rnsc_remote_mgmt {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_request_handlers *hs;
	rnsc_timer *announce;
	rnsc_identity id;
	uint8_t dest[RNSC_TRUNCATED_HASHLEN];
	uint8_t *resp; /* the last answer (handler storage) */
};

/* Python truthiness of `x == True`: True, or the integer 1 (1 == True). */
static int is_true(const rnsc_mp_token *t)
{
	return (t->type == RNSC_MP_BOOL && t->boolean) || (t->type == RNSC_MP_UINT && t->u == 1) ||
	       (t->type == RNSC_MP_FLOAT64 && t->f64 == 1.0);
}

int rnsc_remote_mgmt_status_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *data, size_t len,
				   uint8_t **out, size_t *out_len)
{
	*out = NULL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, data, len);
	size_t cnt;
	if (rnsc_mp_read_array(&r, &cnt) || cnt == 0)
		return 0;
	rnsc_mp_token a0, a1 = {0};
	if (rnsc_mp_peek(&r, &a0) || rnsc_mp_skip(&r))
		return 0;
	int lstats = is_true(&a0), prof = 0;
	if (cnt >= 2 && rnsc_mp_peek(&r, &a1) == 0)
		prof = is_true(&a1);
	uint8_t *st = NULL;
	size_t sl = 0;
	int rc = rnsc_node_interface_stats(n, ctx, &st, &sl);
	if (rc)
		return rc;
	size_t cap = sl + 32;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		free(st);
		return RNSC_ERR_NOMEM;
	}
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, buf, cap);
	rnsc_mp_write_array(&w, 1 + (size_t)lstats + (size_t)prof);
	rnsc_mp_write_raw(&w, st, sl);
	if (lstats) /* Reticulum.get_link_count: the link table */
		rnsc_mp_write_uint(&w, rnsc_transport_link_table_count(rnsc_node_transport(n)));
	if (prof) /* no profiler runs in rnsc: what the reference's idle profiler reports */
		rnsc_mp_write_nil(&w);
	free(st);
	int n_out = rnsc_mp_writer_finish(&w);
	if (n_out < 0) {
		free(buf);
		return n_out;
	}
	*out = buf;
	*out_len = (size_t)n_out;
	return 1;
}

/* Copies the entries of a list of maps whose "hash" is dest (all with dest NULL). */
static int filter_list(const uint8_t *list, size_t len, const uint8_t *dest, uint8_t **out,
		       size_t *out_len)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, list, len);
	size_t cnt, keep = 0;
	if (rnsc_mp_read_array(&r, &cnt))
		return RNSC_ERR_MALFORMED;
	uint8_t *buf = malloc(len + 8);
	if (!buf)
		return RNSC_ERR_NOMEM;
	size_t body = 8; /* the header is written last, in front */
	for (size_t i = 0; i < cnt; i++) {
		size_t start = r.pos;
		int match = dest == NULL;
		rnsc_mp_reader e = r;
		size_t pairs;
		if (rnsc_mp_read_map(&e, &pairs) == 0)
			for (size_t k = 0; k < pairs && !match; k++) {
				const char *ks;
				size_t kl;
				const uint8_t *b;
				size_t bl;
				if (rnsc_mp_read_str(&e, &ks, &kl) != 0)
					break;
				if (kl == 4 && memcmp(ks, "hash", 4) == 0 &&
				    rnsc_mp_read_bin(&e, &b, &bl) == 0) {
					match = bl == RNSC_TRUNCATED_HASHLEN &&
						memcmp(b, dest, RNSC_TRUNCATED_HASHLEN) == 0;
					break;
				}
				if (rnsc_mp_skip(&e))
					break;
			}
		if (rnsc_mp_skip(&r)) {
			free(buf);
			return RNSC_ERR_MALFORMED;
		}
		if (match) {
			memcpy(buf + body, list + start, r.pos - start);
			body += r.pos - start;
			keep++;
		}
	}
	uint8_t hdr[8];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, hdr, sizeof(hdr));
	rnsc_mp_write_array(&w, keep);
	int hl = rnsc_mp_writer_finish(&w);
	if (hl < 0) {
		free(buf);
		return hl;
	}
	memmove(buf + 8 - hl, hdr, (size_t)hl);
	memmove(buf, buf + 8 - hl, body - 8 + (size_t)hl);
	*out = buf;
	*out_len = body - 8 + (size_t)hl;
	return 1;
}

int rnsc_remote_mgmt_path_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *data, size_t len,
				 uint8_t **out, size_t *out_len)
{
	*out = NULL;
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, data, len);
	size_t cnt;
	if (rnsc_mp_read_array(&r, &cnt) || cnt == 0)
		return 0;
	const char *cmd;
	size_t cl;
	if (rnsc_mp_read_str(&r, &cmd, &cl))
		return 0; /* command == "table" is False for anything else */
	int table = cl == 5 && memcmp(cmd, "table", 5) == 0;
	int rates = cl == 5 && memcmp(cmd, "rates", 5) == 0;
	if (!table && !rates)
		return 0;
	const uint8_t *dest = NULL;
	size_t dl = 0;
	int dest_any = 1;
	rnsc_mp_token mh = {.type = RNSC_MP_NIL};
	if (cnt > 1) {
		rnsc_mp_token d;
		if (rnsc_mp_peek(&r, &d))
			return 0;
		if (d.type != RNSC_MP_NIL) {
			dest_any = 0;
			if (d.type == RNSC_MP_BIN) {
				dest = d.p;
				dl = d.len;
			}
		}
		if (rnsc_mp_skip(&r))
			return 0;
	}
	if (cnt > 2 && rnsc_mp_peek(&r, &mh))
		return 0;
	/* The same documents as the RPC's path_table / rate_table calls. */
	uint8_t req[64];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	int with_hops = table && (mh.type == RNSC_MP_UINT || mh.type == RNSC_MP_INT);
	rnsc_mp_write_map(&w, with_hops ? 2 : 1);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, table ? "path_table" : "rate_table");
	if (with_hops) {
		rnsc_mp_write_cstr(&w, "max_hops");
		rnsc_mp_write_int(&w, mh.type == RNSC_MP_UINT ? (int64_t)(mh.u > INT64_MAX ? INT64_MAX : mh.u)
								: mh.i);
	}
	int rl = rnsc_mp_writer_finish(&w);
	if (rl < 0)
		return rl;
	uint8_t *list = NULL;
	size_t ll = 0;
	int rc = rnsc_node_rpc_answer(n, ctx, req, (size_t)rl, &list, &ll);
	if (rc)
		return rc;
	if (!dest_any && dl != RNSC_TRUNCATED_HASHLEN) { /* a hash that matches nothing */
		free(list);
		*out = malloc(1);
		if (!*out)
			return RNSC_ERR_NOMEM;
		**out = 0x90; /* [] */
		*out_len = 1;
		return 1;
	}
	rc = filter_list(list, ll, dest, out, out_len);
	free(list);
	return rc;
}

static int answer(rnsc_remote_mgmt *m, int status, const rnsc_request_info *req,
		  const uint8_t **response, size_t *response_len)
{
	if (!req->remote_identity)
		return 0;
	uint8_t *out = NULL;
	size_t ol = 0;
	int rc = status ? rnsc_remote_mgmt_status_answer(m->n, m->ctx, req->data, req->data_len, &out,
							 &ol)
			: rnsc_remote_mgmt_path_answer(m->n, m->ctx, req->data, req->data_len, &out, &ol);
	if (rc != 1) {
		if (rc < 0)
			rnsc_log(m->ctx, RNSC_LOG_ERROR, WHO,
				 "an error occurred while processing a remote %s request: %s",
				 status ? "status" : "path", rnsc_strerror(rc));
		free(out);
		return 0;
	}
	free(m->resp);
	m->resp = out;
	*response = out;
	*response_len = ol;
	return 1;
}

static int status_handler(void *ud, const rnsc_request_info *req, const uint8_t **response,
			  size_t *response_len)
{
	return answer(ud, 1, req, response, response_len);
}

static int path_handler(void *ud, const rnsc_request_info *req, const uint8_t **response,
			size_t *response_len)
{
	return answer(ud, 0, req, response, response_len);
}

static void announce_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_remote_mgmt *m = ud;
	if (rnsc_transport_announce(rnsc_node_transport(m->n), m->dest, NULL, 0,
				    rnsc_node_now_ms()) == 0)
		rnsc_node_flush(m->n);
}

int rnsc_remote_mgmt_start(rnsc_ctx *ctx, rnsc_node *n, rnsc_blackhole_svc *svc,
			   rnsc_remote_mgmt **out)
{
	if (!ctx || !n || !svc || !out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	const rnsc_config_settings *set = rnsc_node_settings(n);
	if (!set->enable_remote_management || rnsc_node_connected_to_shared(n))
		return 0;
	rnsc_remote_mgmt *m = calloc(1, sizeof(*m));
	if (!m)
		return RNSC_ERR_NOMEM;
	m->ctx = ctx;
	m->n = n;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.*s/storage/transport_identity", PATH_MAX - 40,
		 rnsc_node_config_dir(n));
	uint8_t prv[RNSC_KEYSIZE];
	int rc = rnsc_store_read_exact(path, prv, sizeof(prv));
	if (!rc)
		rc = rnsc_identity_from_private(ctx, &m->id, prv, sizeof(prv));
	rnsc_memzero(prv, sizeof(prv));
	if (!rc)
		rc = rnsc_request_handlers_new(ctx, &m->hs);
	const uint8_t(*allowed)[16] = set->remote_management_allowed.h;
	size_t na = set->remote_management_allowed.n;
	if (!rc)
		rc = rnsc_request_handlers_register(m->hs, "/status", status_handler, m,
						    RNSC_REQUEST_ALLOW_LIST, allowed, na, 1);
	if (!rc)
		rc = rnsc_request_handlers_register(m->hs, "/path", path_handler, m,
						    RNSC_REQUEST_ALLOW_LIST, allowed, na, 1);
	if (!rc)
		rc = rnsc_transport_dest_add(rnsc_node_transport(n), RNSC_DEST_SINGLE, &m->id,
					     "rnstransport", ASPECTS, 2, 0, m->dest);
	if (!rc)
		rc = rnsc_blackhole_svc_serve(svc, m->dest, m->hs);
	if (!rc)
		rc = rnsc_loop_timer_add(rnsc_node_loop(n), (uint64_t)MGMT_FIRST_MS * RNSC_NS_PER_MS,
					 (uint64_t)MGMT_INTERVAL_MS * RNSC_NS_PER_MS, announce_cb, m,
					 &m->announce);
	if (rc) {
		rnsc_remote_mgmt_stop(m);
		return rc;
	}
	char hx[33];
	for (int i = 0; i < 16; i++)
		snprintf(hx + 2 * i, 3, "%02x", m->dest[i]);
	rnsc_log(ctx, RNSC_LOG_NOTICE, WHO,
		 "enabled remote management on <rnstransport.remote.management:%s> (%zu allowed "
		 "identit%s)",
		 hx, na, na == 1 ? "y" : "ies");
	*out = m;
	return 0;
}

void rnsc_remote_mgmt_stop(rnsc_remote_mgmt *m)
{
	if (!m)
		return;
	if (m->announce)
		rnsc_loop_timer_cancel(rnsc_node_loop(m->n), m->announce);
	rnsc_request_handlers_del(m->hs);
	rnsc_identity_free(&m->id);
	free(m->resp);
	free(m);
}

const uint8_t *rnsc_remote_mgmt_dest(const rnsc_remote_mgmt *m)
{
	return m ? m->dest : NULL;
}
