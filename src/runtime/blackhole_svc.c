/* SPDX-License-Identifier: MIT */
#include "blackhole_svc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "destination.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "loop.h"
#include "msgpack.h"
#include "node_store.h"
#include "request.h"
#include "store.h"
#include "transport.h"

static const char *WHO = "blackhole";
static const char *const ASPECTS[] = {"info", "blackhole"};

#define MAX_FETCHES 8
#define POLL_MS 250u
#define MGMT_FIRST_MS 15000u                   /* Transport.start: first mgmt announce */
#define MGMT_INTERVAL_MS (2u * 60 * 60 * 1000) /* Transport.mgmt_announce_interval */
#define LINK_TIMEOUT_MS 30000u
#define UPDATER_TIMEOUT_MS 25000u /* BlackholeUpdater.SOURCE_TIMEOUT */

enum { F_FREE, F_PATH, F_LINKING, F_REQUESTED, F_CLOSING };

typedef struct fetch {
	struct rnsc_blackhole_svc *s;
	int state;
	uint8_t identity[16], dest[16], link_id[16];
	uint64_t deadline; /* ms, node clock */
	rnsc_blackhole_fetch_cb done;
	void *ud;
} fetch;

struct rnsc_blackhole_svc {
	rnsc_ctx *ctx;
	rnsc_node *n;
	rnsc_linkapp *la;
	rnsc_linkreq *lr;
	rnsc_request_handlers *hs;
	rnsc_timer *poll, *announce, *updater;
	int publishing;
	rnsc_identity id;
	uint8_t dest[16];
	uint8_t *resp; /* the last /list answer (handler storage) */
	fetch f[MAX_FETCHES];
	struct {
		uint8_t dest[16];
		rnsc_request_handlers *hs;
	} extra[4]; /* rnsc_blackhole_svc_serve */
	size_t n_extra;
	uint64_t *last_update; /* per configured source, ms */
	char storage[PATH_MAX];
};

/* Reports the outcome; a fetch that has a link closes it on the next poll (not here: this
 * may run inside the link's own request callbacks). */
static void finish(fetch *f, int status, const uint8_t *v, size_t len)
{
	int had_link = f->state == F_LINKING || f->state == F_REQUESTED;
	f->state = had_link ? F_CLOSING : F_FREE;
	rnsc_blackhole_fetch_cb done = f->done;
	f->done = NULL;
	if (done)
		done(f->ud, status, v, len);
}

static fetch *by_link(rnsc_blackhole_svc *s, const uint8_t id[16])
{
	for (int i = 0; i < MAX_FETCHES; i++)
		if ((s->f[i].state == F_LINKING || s->f[i].state == F_REQUESTED ||
		     s->f[i].state == F_CLOSING) &&
		    memcmp(s->f[i].link_id, id, 16) == 0)
			return &s->f[i];
	return NULL;
}

static void close_link(fetch *f)
{
	rnsc_blackhole_svc *s = f->s;
	uint8_t id[16];
	memcpy(id, f->link_id, 16);
	(void)rnsc_transport_link_close(rnsc_node_transport(s->n), id, rnsc_node_now_ms());
	rnsc_node_flush(s->n);
	if (f->state == F_CLOSING) { /* no closed hook ran synchronously */
		f->state = F_FREE;
		rnsc_linkreq_detach(s->lr, id);
	}
}

static void open_link(fetch *f, uint64_t now)
{
	rnsc_blackhole_svc *s = f->s;
	if (rnsc_transport_link_open(rnsc_node_transport(s->n), f->dest, f->link_id, now)) {
		finish(f, RNSC_BH_FETCH_LINK_FAILED, NULL, 0); /* F_PATH: nothing to close */
		return;
	}
	f->state = F_LINKING;
	f->deadline = now + LINK_TIMEOUT_MS;
	rnsc_node_flush(s->n);
}

/* ---- the request side ------------------------------------------------------------------- */

static void on_response(void *ud, const rnsc_request_receipt *r)
{
	fetch *f = ud;
	if (f->state == F_REQUESTED)
		finish(f, RNSC_BH_FETCH_OK, r->response, r->response_len);
}

static void on_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	fetch *f = ud;
	if (f->state == F_REQUESTED)
		finish(f, RNSC_BH_FETCH_REQUEST_FAILED, NULL, 0);
}

static int list_handler(void *ud, const rnsc_request_info *req, const uint8_t **response,
			size_t *response_len)
{
	(void)req;
	rnsc_blackhole_svc *s = ud;
	rnsc_transport *t = rnsc_node_transport(s->n);
	rnsc_mp_writer w;
	rnsc_mp_writer_init(&w, NULL, 0);
	int n = rnsc_blackhole_list_write(&w, t, NULL);
	if (n < 0)
		return n;
	uint8_t *buf = realloc(s->resp, (size_t)n);
	if (!buf)
		return RNSC_ERR_NOMEM;
	s->resp = buf;
	rnsc_mp_writer_init(&w, buf, (size_t)n);
	if (rnsc_blackhole_list_write(&w, t, NULL) != n)
		return RNSC_ERR_STATE;
	*response = buf;
	*response_len = (size_t)n;
	return 1;
}

/* ---- node hooks --------------------------------------------------------------------------- */

static void on_est(void *ud, const uint8_t link_id[16], const uint8_t dest[16], int initiator)
{
	rnsc_blackhole_svc *s = ud;
	if (!initiator) {
		for (size_t i = 0; i < s->n_extra; i++)
			if (memcmp(dest, s->extra[i].dest, 16) == 0 &&
			    rnsc_linkreq_attach(s->lr, link_id, s->extra[i].hs, NULL) != 0)
				rnsc_log(s->ctx, RNSC_LOG_ERROR, WHO,
					 "cannot set up requests on a link");
		if (s->publishing && memcmp(dest, s->dest, 16) == 0 &&
		    rnsc_linkreq_attach(s->lr, link_id, s->hs, NULL) != 0)
			rnsc_log(s->ctx, RNSC_LOG_ERROR, WHO, "cannot set up requests on a link");
		return;
	}
	fetch *f = by_link(s, link_id);
	if (!f || f->state != F_LINKING)
		return;
	rnsc_request_link *rl = NULL;
	rnsc_request_params p = {.response = on_response, .failed = on_failed, .ud = f};
	uint64_t now = rnsc_node_now_ms();
	f->state = F_REQUESTED;
	if (rnsc_linkreq_attach(s->lr, link_id, NULL, &rl) ||
	    rnsc_request_link_send(rl, "/list", NULL, 0, &p, NULL, now)) {
		finish(f, RNSC_BH_FETCH_REQUEST_FAILED, NULL, 0);
		return;
	}
	rnsc_node_flush(s->n);
}

static void on_closed(void *ud, const uint8_t link_id[16], int reason)
{
	(void)reason;
	rnsc_blackhole_svc *s = ud;
	fetch *f = by_link(s, link_id);
	if (f && f->state != F_CLOSING) {
		int st = f->state == F_LINKING ? RNSC_BH_FETCH_LINK_FAILED
					       : RNSC_BH_FETCH_REQUEST_FAILED;
		f->state = F_PATH; /* the link is gone: nothing to close */
		finish(f, st, NULL, 0);
	}
	if (f)
		f->state = F_FREE;
	rnsc_linkreq_detach(s->lr, link_id);
}

/* ---- timers ----------------------------------------------------------------------------- */

static void poll_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_blackhole_svc *s = ud;
	uint64_t now = rnsc_node_now_ms();
	(void)rnsc_linkreq_tick(s->lr, now);
	rnsc_transport *t = rnsc_node_transport(s->n);
	for (int i = 0; i < MAX_FETCHES; i++) {
		fetch *f = &s->f[i];
		if (f->state == F_PATH) {
			if (rnsc_transport_has_path(t, f->dest))
				open_link(f, now);
			else if (now > f->deadline)
				finish(f, RNSC_BH_FETCH_NO_PATH, NULL, 0);
		} else if (f->state == F_LINKING && now > f->deadline) {
			finish(f, RNSC_BH_FETCH_LINK_FAILED, NULL, 0);
		}
		if (f->state == F_CLOSING)
			close_link(f);
	}
}

static void announce_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_blackhole_svc *s = ud;
	if (rnsc_transport_announce(rnsc_node_transport(s->n), s->dest, NULL, 0,
				    rnsc_node_now_ms()) == 0)
		rnsc_node_flush(s->n);
}

typedef struct upd_ctx {
	rnsc_blackhole_svc *s;
	uint8_t source[16];
} upd_ctx;

static int upd_add(void *ud, const uint8_t id[16], const rnsc_blackhole_entry *e)
{
	upd_ctx *u = ud;
	rnsc_blackhole_entry c = *e;
	if (!c.has_source) { /* a list without sources: name the publisher */
		c.has_source = 1;
		memcpy(c.source, u->source, 16);
	}
	int rc = rnsc_transport_blackhole_add(rnsc_node_transport(u->s->n), id, &c);
	return rc < 0 ? rc : 0;
}

static void updater_done(void *ud, int status, const uint8_t *v, size_t len)
{
	upd_ctx *u = ud;
	rnsc_blackhole_svc *s = u->s;
	char hx[33];
	for (int i = 0; i < 16; i++)
		snprintf(hx + 2 * i, 3, "%02x", u->source[i]);
	if (status == RNSC_BH_FETCH_OK) {
		rnsc_mp_reader r;
		rnsc_mp_token tk;
		rnsc_mp_reader_init(&r, v, len);
		int added = 0;
		if (rnsc_mp_peek(&r, &tk) == 0 && tk.type == RNSC_MP_MAP) {
			/* count what is new: rnsc_blackhole_list_parse passes each entry once */
			size_t before = rnsc_transport_blackhole_count(rnsc_node_transport(s->n));
			int rc = rnsc_blackhole_list_parse(v, len, upd_add, u);
			added = (int)(rnsc_transport_blackhole_count(rnsc_node_transport(s->n)) -
				      before);
			if (rc < 0)
				rnsc_log(s->ctx, RNSC_LOG_WARNING, WHO,
					 "malformed blackhole list from <%s>: %s", hx,
					 rnsc_strerror(rc));
		}
		if (added > 0) {
			rnsc_log(s->ctx, RNSC_LOG_DEBUG, WHO,
				 "added %d blackholed identit%s from <%s>", added,
				 added == 1 ? "y" : "ies", hx);
			(void)node_store_save_blackhole_source(s->ctx, s->storage, u->source, v,
							       len);
		}
		rnsc_log(s->ctx, RNSC_LOG_DEBUG, WHO, "blackhole list update from <%s> completed",
			 hx);
	} else {
		rnsc_log(s->ctx, RNSC_LOG_VERBOSE, WHO,
			 "no blackhole list update from <%s> (%s), retrying later", hx,
			 status == RNSC_BH_FETCH_NO_PATH ? "no path" : "link or request failed");
	}
	free(u);
}

static void updater_cb(rnsc_loop *loop, rnsc_timer *tm, void *ud)
{
	(void)loop;
	(void)tm;
	rnsc_blackhole_svc *s = ud;
	const rnsc_config_settings *set = rnsc_node_settings(s->n);
	uint64_t now = rnsc_node_now_ms();
	uint64_t interval = (uint64_t)(set->blackhole_update_interval * 1000.0);
	for (size_t i = 0; i < set->blackhole_sources.n; i++) {
		if (s->last_update[i] && now <= s->last_update[i] + interval)
			continue;
		upd_ctx *u = malloc(sizeof(*u));
		if (!u)
			return;
		u->s = s;
		memcpy(u->source, set->blackhole_sources.h[i], 16);
		if (rnsc_blackhole_svc_fetch(s, u->source, UPDATER_TIMEOUT_MS, updater_done, u)) {
			free(u);
			continue;
		}
		s->last_update[i] = now; /* attempted: as the reference, once per interval */
	}
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static int load_identity(rnsc_blackhole_svc *s)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/transport_identity", s->storage);
	uint8_t prv[RNSC_KEYSIZE];
	int rc = rnsc_store_read_exact(path, prv, sizeof(prv));
	if (rc == 0)
		rc = rnsc_identity_from_private(s->ctx, &s->id, prv, sizeof(prv));
	memset(prv, 0, sizeof(prv));
	return rc;
}

int rnsc_blackhole_svc_start(rnsc_ctx *ctx, rnsc_node *n, int serve, rnsc_blackhole_svc **out)
{
	if (!ctx || !n || !out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	rnsc_blackhole_svc *s = calloc(1, sizeof(*s));
	if (!s)
		return RNSC_ERR_NOMEM;
	s->ctx = ctx;
	s->n = n;
	for (int i = 0; i < MAX_FETCHES; i++)
		s->f[i].s = s;
	snprintf(s->storage, sizeof(s->storage), "%.*s/storage", PATH_MAX - 16,
		 rnsc_node_config_dir(n));
	const rnsc_config_settings *set = rnsc_node_settings(n);
	rnsc_loop *loop = rnsc_node_loop(n);
	rnsc_node_hooks hooks = {
		.ud = s, .on_link_established = on_est, .on_link_closed = on_closed};
	int rc = rnsc_linkapp_new(ctx, n, NULL, &hooks, &s->la);
	if (!rc)
		rc = rnsc_linkreq_new(ctx, n, s->la, &s->lr);
	if (!rc)
		rc = rnsc_request_handlers_new(ctx, &s->hs);
	if (!rc)
		rc = rnsc_request_handlers_register(s->hs, "/list", list_handler, s,
						    RNSC_REQUEST_ALLOW_ALL, NULL, 0, 1);
	if (!rc)
		rc = rnsc_loop_timer_add(loop, POLL_MS * RNSC_NS_PER_MS, POLL_MS * RNSC_NS_PER_MS,
					 poll_cb, s, &s->poll);
	int local = !rnsc_node_connected_to_shared(n);
	if (!rc && serve && local && set->publish_blackhole) {
		rc = load_identity(s);
		if (!rc)
			rc = rnsc_transport_dest_add(rnsc_node_transport(n), RNSC_DEST_SINGLE,
						     &s->id, "rnstransport", ASPECTS, 2, 0,
						     s->dest);
		if (!rc)
			rc = rnsc_loop_timer_add(loop, (uint64_t)MGMT_FIRST_MS * RNSC_NS_PER_MS,
						 (uint64_t)MGMT_INTERVAL_MS * RNSC_NS_PER_MS,
						 announce_cb, s, &s->announce);
		if (!rc) {
			s->publishing = 1;
			char hx[33];
			for (int i = 0; i < 16; i++)
				snprintf(hx + 2 * i, 3, "%02x", s->id.hash[i]);
			rnsc_log(ctx, RNSC_LOG_NOTICE, WHO,
				 "enabled blackhole list publishing for transport identity <%s>",
				 hx);
		}
	}
	if (!rc && serve && local && set->blackhole_sources.n) {
		s->last_update = calloc(set->blackhole_sources.n, sizeof(uint64_t));
		rc = s->last_update ? 0 : RNSC_ERR_NOMEM;
		if (!rc)
			rc = rnsc_loop_timer_add(
				loop,
				(uint64_t)RNSC_BLACKHOLE_UPDATER_INITIAL_WAIT_MS * RNSC_NS_PER_MS,
				(uint64_t)RNSC_BLACKHOLE_UPDATER_JOB_MS * RNSC_NS_PER_MS,
				updater_cb, s, &s->updater);
		if (!rc)
			rnsc_log(ctx, RNSC_LOG_DEBUG, WHO,
				 "starting blackhole updater with %zu source%s",
				 set->blackhole_sources.n,
				 set->blackhole_sources.n == 1 ? "" : "s");
	}
	if (rc) {
		rnsc_blackhole_svc_stop(s);
		return rc;
	}
	*out = s;
	return 0;
}

void rnsc_blackhole_svc_stop(rnsc_blackhole_svc *s)
{
	if (!s)
		return;
	rnsc_loop *loop = rnsc_node_loop(s->n);
	for (int i = 0; i < MAX_FETCHES; i++) {
		fetch *f = &s->f[i];
		if (f->state == F_FREE)
			continue;
		if (f->done != updater_done)
			f->done = NULL; /* the caller is going away too */
		finish(f, RNSC_BH_FETCH_REQUEST_FAILED, NULL, 0);
		if (f->state == F_CLOSING)
			close_link(f);
	}
	if (s->poll)
		rnsc_loop_timer_cancel(loop, s->poll);
	if (s->announce)
		rnsc_loop_timer_cancel(loop, s->announce);
	if (s->updater)
		rnsc_loop_timer_cancel(loop, s->updater);
	rnsc_linkapp_del(s->la);
	rnsc_linkreq_del(s->lr);
	rnsc_request_handlers_del(s->hs);
	rnsc_identity_free(&s->id);
	free(s->resp);
	free(s->last_update);
	free(s);
}

int rnsc_blackhole_svc_serve(rnsc_blackhole_svc *s, const uint8_t dest[16],
			     rnsc_request_handlers *hs)
{
	if (!s || !dest || !hs)
		return RNSC_ERR_INVAL;
	if (s->n_extra >= sizeof(s->extra) / sizeof(s->extra[0]))
		return RNSC_ERR_BUFSIZE;
	memcpy(s->extra[s->n_extra].dest, dest, 16);
	s->extra[s->n_extra++].hs = hs;
	return 0;
}

const uint8_t *rnsc_blackhole_svc_published(const rnsc_blackhole_svc *s)
{
	return s && s->publishing ? s->dest : NULL;
}

int rnsc_blackhole_svc_fetch(rnsc_blackhole_svc *s, const uint8_t identity_hash[16],
			     uint64_t timeout_ms, rnsc_blackhole_fetch_cb done, void *ud)
{
	if (!s || !identity_hash)
		return RNSC_ERR_INVAL;
	fetch *f = NULL;
	for (int i = 0; i < MAX_FETCHES && !f; i++)
		if (s->f[i].state == F_FREE)
			f = &s->f[i];
	if (!f)
		return RNSC_ERR_BUFSIZE;
	memcpy(f->identity, identity_hash, 16);
	int rc = rnsc_destination_hash(s->ctx, f->dest, identity_hash, "rnstransport", ASPECTS, 2);
	if (rc)
		return rc;
	f->done = done;
	f->ud = ud;
	uint64_t now = rnsc_node_now_ms();
	rnsc_transport *t = rnsc_node_transport(s->n);
	f->state = F_PATH;
	f->deadline = now + timeout_ms;
	if (rnsc_transport_has_path(t, f->dest)) {
		open_link(f, now);
		return 0;
	}
	rc = rnsc_transport_request_path(t, f->dest, 0, 0, now);
	if (rc) {
		f->state = F_FREE;
		return rc;
	}
	rnsc_node_flush(s->n);
	return 0;
}
