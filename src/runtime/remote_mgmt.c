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

int rnsc_remote_mgmt_status_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *data, size_t len,
				   uint8_t **out, size_t *out_len)
{
	*out = NULL;
	int lstats, prof;
	if (rnsc_remote_mgmt_parse_status(data, len, &lstats, &prof) != 1)
		return 0;
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

int rnsc_remote_mgmt_path_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *data, size_t len,
				 uint8_t **out, size_t *out_len)
{
	*out = NULL;
	rnsc_remote_mgmt_path_req q;
	if (rnsc_remote_mgmt_parse_path(data, len, &q) != 1)
		return 0;
	int table = q.table, dest_any = q.dest_any, with_hops = q.with_hops;
	const uint8_t *dest = q.dest;
	size_t dl = q.dest_len;
	/* The same documents as the RPC's path_table / rate_table calls. */
	uint8_t req[64];
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, req, sizeof(req));
	rnsc_mp_write_map(&w, with_hops ? 2 : 1);
	rnsc_mp_write_cstr(&w, "get");
	rnsc_mp_write_cstr(&w, table ? "path_table" : "rate_table");
	if (with_hops) {
		rnsc_mp_write_cstr(&w, "max_hops");
		rnsc_mp_write_int(&w, q.max_hops);
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
	rc = rnsc_remote_mgmt_filter(list, ll, dest, out, out_len);
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
	int rc = status ? rnsc_remote_mgmt_status_answer(m->n, m->ctx, req->data, req->data_len,
							 &out, &ol)
			: rnsc_remote_mgmt_path_answer(m->n, m->ctx, req->data, req->data_len, &out,
						       &ol);
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
		rc = rnsc_loop_timer_add(
			rnsc_node_loop(n), (uint64_t)MGMT_FIRST_MS * RNSC_NS_PER_MS,
			(uint64_t)MGMT_INTERVAL_MS * RNSC_NS_PER_MS, announce_cb, m, &m->announce);
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
