/* SPDX-License-Identifier: MIT */
/*
 * The rnsc side of tests/live/dest_interop_test.sh (the reference's: tests/live/dest_ref_peer.py):
 *
 *   dest_node_peer serve CONFIGDIR KEYHEX SECONDS
 *       SINGLE rnsclt.app (PROVE_APP: proves the packets that begin with "prove", default app
 *       data "dflt-rnsc"), GROUP rnsclt.group (Token key KEYHEX, named by the identity whose
 *       64 private bytes are KEYHEX too: the reference needs an identity for GROUP), PLAIN
 *       rnsclt.plain.
 *       Prints "dest <kind> <hex>", "rx <kind> <text>" per packet; "bye" on the PLAIN
 *       destination deregisters rnsclt.app ("removed app").
 *   dest_node_peer send CONFIGDIR KEYHEX
 *       Sends "g-rnsc" to GROUP rnsclt.group and "p-rnsc" to PLAIN rnsclt.plain, prints
 *       "dest group <hex>" and "dest plain <hex>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto.h"
#include "destination.h"
#include "link.h"
#include "node.h"
#include "plugin_host.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN
static rnsc_node *node;
static rnsc_transport *T;
static uint8_t app_h[HL], grp_h[HL], pln_h[HL];
static int removed;

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void print_dest(const char *kind, const uint8_t *h)
{
	printf("dest %s ", kind);
	for (int i = 0; i < HL; i++)
		printf("%02x", h[i]);
	printf("\n");
	fflush(stdout);
}

static void on_data(void *ud, const uint8_t *dest, const uint8_t *data, size_t len, uint32_t iface)
{
	(void)ud, (void)iface;
	const char *kind = memcmp(dest, app_h, HL) == 0   ? "app"
			   : memcmp(dest, grp_h, HL) == 0 ? "group"
			   : memcmp(dest, pln_h, HL) == 0 ? "plain"
							  : "?";
	printf("rx %s %.*s\n", kind, (int)len, (const char *)data);
	fflush(stdout);
	if (strcmp(kind, "plain") == 0 && len == 3 && memcmp(data, "bye", 3) == 0 && !removed) {
		removed = rnsc_transport_dest_remove(T, app_h) == 0;
		printf("removed app\n");
		fflush(stdout);
	}
}

static int on_proof_requested(void *ud, const uint8_t *dest, const uint8_t *data, size_t len,
			      const uint8_t *ph)
{
	(void)ud, (void)dest, (void)ph;
	return len >= 5 && memcmp(data, "prove", 5) == 0;
}

int main(int argc, char **argv)
{
	int serve = argc == 5 && strcmp(argv[1], "serve") == 0;
	int send = argc == 4 && strcmp(argv[1], "send") == 0;
	uint8_t key[64];
	if ((!serve && !send) || strlen(argv[3]) != 128) {
		fprintf(stderr, "usage: dest_node_peer serve DIR KEYHEX S | send DIR KEYHEX\n");
		return 2;
	}
	for (int i = 0; i < 64; i++) {
		unsigned v;
		if (sscanf(argv[3] + 2 * i, "%2x", &v) != 1)
			return 2;
		key[i] = (uint8_t)v;
	}
	rnsc_ctx *ctx;
	rnsc_plugin_host *h;
	if (rnsc_ctx_new(&ctx) || rnsc_plugin_host_new(ctx, &h) ||
	    rnsc_plugin_host_add_default_dirs(h))
		return 1;
	rnsc_plugin_host_scan(h);
	if (rnsc_crypto_set_order(ctx, "openssl") != 0)
		return 1;
	rnsc_ctx_set_log_level(ctx, getenv("PEER_DEBUG") ? RNSC_LOG_DEBUG : RNSC_LOG_WARNING);
	rnsc_node_options no = {.config_dir = argv[2], .handle_signals = 1};
	rnsc_config_error err;
	int ret = 1, rc = rnsc_node_new(ctx, h, &no, &node, &err);
	if (rc) {
		fprintf(stderr, "dest_node_peer: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		goto out;
	}
	T = rnsc_node_transport(node);
	static const char *const a_app[] = {"app"}, *const a_grp[] = {"group"},
				 *const a_pln[] = {"plain"};
	if (send) {
		rnsc_identity gid;
		if ((rc = rnsc_identity_from_private(ctx, &gid, key, 64)))
			goto out;
		rc = rnsc_destination_hash(ctx, grp_h, gid.hash, "rnsclt", a_grp, 1);
		rnsc_identity_free(&gid);
		if (rc || (rc = rnsc_destination_hash(ctx, pln_h, NULL, "rnsclt", a_pln, 1)))
			goto out;
		print_dest("group", grp_h);
		print_dest("plain", pln_h);
		uint64_t settle = now_s() + 1;
		while (now_s() <= settle)
			rnsc_node_run_once(node, 50);
		rc = rnsc_transport_send_group(T, grp_h, key, 64, (const uint8_t *)"g-rnsc", 6,
					       rnsc_node_now_ms());
		if (rc == 0)
			rc = rnsc_transport_send_plain(T, pln_h, (const uint8_t *)"p-rnsc", 6,
						       rnsc_node_now_ms());
		rnsc_node_flush(node);
		for (int i = 0; i < 10; i++)
			rnsc_node_run_once(node, 50);
		printf("sent %s\n", rc ? rnsc_err_name(rc) : "ok");
		ret = rc ? 1 : 0;
		goto out;
	}
	rnsc_identity id, gid;
	if ((rc = rnsc_identity_generate(ctx, &id)) ||
	    (rc = rnsc_identity_from_private(ctx, &gid, key, 64)) ||
	    (rc = rnsc_transport_dest_add(T, RNSC_DEST_SINGLE, &id, "rnsclt", a_app, 1, 0,
					  app_h)) ||
	    (rc = rnsc_transport_dest_set_proof_strategy(T, app_h, RNSC_PROVE_APP)) ||
	    (rc = rnsc_transport_dest_set_default_app_data(T, app_h, (const uint8_t *)"dflt-rnsc",
							   9)) ||
	    (rc = rnsc_transport_dest_add(T, RNSC_DEST_GROUP, &gid, "rnsclt", a_grp, 1, 0,
					  grp_h)) ||
	    (rc = rnsc_transport_dest_group_key(T, grp_h, key, 64)) ||
	    (rc = rnsc_transport_dest_add(T, RNSC_DEST_PLAIN, NULL, "rnsclt", a_pln, 1, 0,
					  pln_h))) {
		fprintf(stderr, "dest_node_peer: destinations: %s\n", rnsc_strerror(rc));
		goto out;
	}
	rnsc_identity_free(&id);
	rnsc_identity_free(&gid);
	rnsc_node_hooks hooks = {.on_data = on_data, .on_proof_requested = on_proof_requested};
	rnsc_node_set_hooks(node, &hooks);
	print_dest("app", app_h);
	print_dest("group", grp_h);
	print_dest("plain", pln_h);
	uint64_t end = now_s() + (uint64_t)atoi(argv[4]);
	while (now_s() < end && !rnsc_node_stopping(node)) {
		rnsc_node_flush(node);
		rnsc_node_run_once(node, 50);
	}
	ret = 0;
out:
	fflush(stdout);
	rnsc_node_del(node);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(ctx);
	return ret;
}
