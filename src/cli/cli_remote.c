/* SPDX-License-Identifier: MIT */
/* The client side of remote management (rnstatus -R, rnpath -R): on a node of its own
 * (attached to the shared instance when there is one), a path to the remote instance's
 * rnstransport.remote.management destination, a link, Link.identify with the management
 * identity, one request; with rnstatus's progress lines and outcomes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_remote.h"
#include "destination.h"
#include "link.h"
#include "linkapp.h"
#include "linkapp_request.h"
#include "node.h"
#include "transport.h"

#define CLEAR "\r                                                          \r"

enum { S_PATH, S_LINKING, S_SENT, S_DONE };

typedef struct rq {
	int state, outcome;
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	uint8_t *resp;
	size_t resp_len;
	int got;
	int closed;
} rq;

static void on_response(void *ud, const rnsc_request_receipt *r)
{
	rq *q = ud;
	free(q->resp);
	q->resp = malloc(r->response_len ? r->response_len : 1);
	if (q->resp) {
		memcpy(q->resp, r->response, r->response_len);
		q->resp_len = r->response_len;
		q->got = 1;
	}
	q->state = S_DONE;
	q->outcome = CLI_REMOTE_OK;
}

static void on_failed(void *ud, const rnsc_request_receipt *r)
{
	(void)r;
	rq *q = ud;
	q->state = S_DONE;
	q->outcome = CLI_REMOTE_FAILED;
}

static void on_closed(void *ud, const uint8_t link_id[16], int reason)
{
	(void)reason;
	rq *q = ud;
	if (memcmp(link_id, q->link_id, 16) == 0 && q->state != S_DONE)
		q->closed = 1;
}

int cli_remote_request(cli_env *env, const char *config_dir, const uint8_t identity_hash[16],
		       const char *identity_path, const char *path, const uint8_t *data,
		       size_t data_len, double timeout_s, int quiet, uint8_t **out, size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	rnsc_identity me;
	int rc = rnsc_identity_load_file(env->ctx, &me, identity_path);
	if (rc) {
		printf("Could not load management identity from %s\n", identity_path);
		return CLI_REMOTE_SETUP;
	}
	static const char *const asp[] = {"remote", "management"};
	uint8_t dest[16];
	if ((rc = rnsc_destination_hash(env->ctx, dest, identity_hash, "rnstransport", asp, 2))) {
		rnsc_identity_free(&me);
		return CLI_REMOTE_SETUP;
	}
	rnsc_node_options no = {.config_dir = config_dir};
	rnsc_node *n = NULL;
	rnsc_config_error err;
	if ((rc = rnsc_node_new(env->ctx, env->host, &no, &n, &err))) {
		printf("%s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		rnsc_identity_free(&me);
		return CLI_REMOTE_SETUP;
	}
	rq q = {0};
	rnsc_linkapp *la = NULL;
	rnsc_linkreq *lr = NULL;
	rnsc_node_hooks hooks = {.ud = &q, .on_link_closed = on_closed};
	int ret = CLI_REMOTE_SETUP;
	if (rnsc_linkapp_new(env->ctx, n, NULL, &hooks, &la) ||
	    rnsc_linkreq_new(env->ctx, n, la, &lr))
		goto out;
	for (int i = 0; i < 20; i++) /* the shared instance connection / interfaces */
		rnsc_node_run_once(n, 10);
	rnsc_transport *t = rnsc_node_transport(n);
	char ph[40];
	ph[0] = '<';
	cli_hex(ph + 1, dest, 16);
	strcat(ph, ">");
	uint64_t deadline = rnsc_monotonic_ns() + (uint64_t)(timeout_s * 1e9);
	if (!rnsc_transport_has_path(t, dest)) {
		if (!quiet) {
			printf("Path to %s requested ", ph);
			fflush(stdout);
		}
		(void)rnsc_transport_request_path(t, dest, 0, 0, rnsc_node_now_ms());
		rnsc_node_flush(n);
		while (!rnsc_transport_has_path(t, dest)) {
			if (rnsc_monotonic_ns() > deadline || rnsc_node_stopping(n)) {
				if (!quiet)
					printf(CLEAR "Path request timed out\n");
				ret = CLI_REMOTE_NO_PATH;
				goto out;
			}
			rnsc_node_run_once(n, 100);
		}
	}
	if (!quiet) {
		printf(CLEAR "Establishing link with remote transport instance... ");
		fflush(stdout);
	}
	if (rnsc_transport_link_open(t, dest, q.link_id, rnsc_node_now_ms())) {
		if (!quiet)
			printf(CLEAR "Link closed unexpectedly, exiting now\n");
		ret = CLI_REMOTE_LINK;
		goto out;
	}
	rnsc_node_flush(n);
	q.state = S_LINKING;
	/* the reference waits for the link's own timeout; so does this loop (bounded) */
	uint64_t link_deadline = rnsc_monotonic_ns() + (uint64_t)((timeout_s + 30.0) * 1e9);
	while (q.state != S_DONE) {
		if (q.closed) {
			if (!quiet)
				printf(CLEAR "The link was closed by the server, exiting now\n");
			ret = CLI_REMOTE_LINK;
			goto out;
		}
		if (rnsc_monotonic_ns() > link_deadline || rnsc_node_stopping(n)) {
			if (!quiet)
				printf(CLEAR "The link timed out, exiting now\n");
			ret = CLI_REMOTE_LINK;
			goto out;
		}
		const rnsc_link *l = rnsc_transport_link_get(t, q.link_id);
		if (q.state == S_LINKING && l && rnsc_link_status(l) == RNSC_LINK_ACTIVE) {
			if (!quiet) {
				printf(CLEAR "Sending request... ");
				fflush(stdout);
			}
			rnsc_request_link *rl = NULL;
			/* rnstatus would wait forever for an answer a refusing instance never
			 * sends; rnsc gives the request the -w timeout, then fails it */
			rnsc_request_params p = {.timeout_ms = (uint64_t)(timeout_s * 1000.0),
						 .response = on_response,
						 .failed = on_failed,
						 .ud = &q};
			uint64_t now = rnsc_node_now_ms();
			if (rnsc_transport_link_identify(t, q.link_id, &me, now) ||
			    rnsc_linkreq_attach(lr, q.link_id, NULL, &rl) ||
			    rnsc_request_link_send(rl, path, data, data_len, &p, NULL, now)) {
				q.state = S_DONE;
				q.outcome = CLI_REMOTE_FAILED;
				break;
			}
			rnsc_node_flush(n);
			q.state = S_SENT;
		}
		rnsc_node_run_once(n, 50);
		(void)rnsc_linkreq_tick(lr, rnsc_node_now_ms());
	}
	ret = q.outcome;
	if (ret == CLI_REMOTE_OK) {
		*out = q.resp;
		*out_len = q.resp_len;
		q.resp = NULL;
	}
	(void)rnsc_transport_link_close(t, q.link_id, rnsc_node_now_ms());
	rnsc_node_flush(n);
out:
	free(q.resp);
	rnsc_linkapp_del(la);
	rnsc_linkreq_del(lr);
	rnsc_node_del(n);
	rnsc_identity_free(&me);
	return ret;
}
