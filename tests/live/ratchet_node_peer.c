/* SPDX-License-Identifier: MIT */
/*
 * The rnsc side of tests/live/ratchet_interop_test.sh (the reference's is tests/live/ratchet_ref_peer.py,
 * same commands, same output lines):
 *
 *   ratchet_node_peer serve CONFIGDIR IDFILE RATCHETFILE SECONDS
 *       SINGLE destination rnsclt.ratchet (PROVE_ALL) on the identity in IDFILE (created when
 *       missing: 64 private bytes, the reference's Identity.to_file), ratchets enabled from
 *       RATCHETFILE, enforced with ENFORCE=1, interval RATCHET_INTERVAL s when set. It does
 *       not announce by itself: path responses (which rotate when due) carry its ratchet.
 *       Prints "dest <hex>", then "rx <text> ratchet=<id hex|none>" per packet, and at the
 *       end (SIGTERM) "stats delivered=<n> decrypt_failed=<n>".
 *   ratchet_node_peer send CONFIGDIR DEST TEXT SECONDS [learn]
 *       With learn: requests a path and waits for a fresh announce of DEST. Without: uses
 *       only what storage holds (known_destinations, storage/ratchets). Sends TEXT, waits for
 *       the proof. Prints "sent ratchet=<id hex|none> proved=<yes|no>"; exit 0 when proved.
 *   ratchet_node_peer readfile IDFILE RATCHETFILE
 *       Reads a local ratchet file (signature checked): "file n=<n> head=<id hex>".
 *   ratchet_node_peer readremote FILE
 *       Reads a storage/ratchets/<hex> file: "remote ratchet=<id hex>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto.h"
#include "destination.h"
#include "node.h"
#include "plugin_host.h"
#include "ratchet_file.h"
#include "store.h"
#include "transport.h"

#define HL RNSC_TRUNCATED_HASHLEN

static rnsc_ctx *ctx;
static rnsc_node *node;
static rnsc_transport *T;
static uint8_t g_dest[HL];
static int g_announced, g_proved, g_rx;

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

static int unhex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

static void print_id(const char *prefix, const uint8_t pub[32])
{
	uint8_t id[RNSC_RATCHET_ID_LEN];
	char hx[2 * RNSC_RATCHET_ID_LEN + 1];
	if (rnsc_ratchet_id(ctx, id, pub)) {
		printf("%snone", prefix);
		return;
	}
	hex(hx, id, sizeof(id));
	printf("%s%s", prefix, hx);
}

static void on_data(void *ud, const uint8_t *dest, const uint8_t *data, size_t len, uint32_t iface)
{
	(void)ud, (void)iface;
	uint8_t id[RNSC_RATCHET_ID_LEN];
	char hx[2 * RNSC_RATCHET_ID_LEN + 1] = "none";
	if (rnsc_transport_dest_latest_ratchet_id(T, dest, id) == 1)
		hex(hx, id, sizeof(id));
	printf("rx %.*s ratchet=%s\n", (int)len, (const char *)data, hx);
	fflush(stdout);
	g_rx++;
}

static void on_announce(void *ud, const uint8_t *dest, unsigned hops)
{
	(void)ud, (void)hops;
	if (memcmp(dest, g_dest, HL) == 0)
		g_announced = 1;
}

static void on_receipt(void *ud, const uint8_t *ph, int proved)
{
	(void)ud, (void)ph;
	g_proved = proved ? 1 : -1;
}

static int load_identity(const char *path, rnsc_identity *id)
{
	uint8_t prv[64];
	if (rnsc_store_read_exact(path, prv, sizeof(prv)) == 0)
		return rnsc_identity_from_private(ctx, id, prv, sizeof(prv));
	int rc = rnsc_identity_generate(ctx, id);
	if (rc)
		return rc;
	memcpy(prv, id->x_priv, 32);
	memcpy(prv + 32, id->ed_seed, 32);
	rc = rnsc_store_write_atomic(path, prv, sizeof(prv), 0600);
	rnsc_memzero(prv, sizeof(prv));
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: see the header of tests/live/ratchet_node_peer.c\n");
		return 2;
	}
	rnsc_plugin_host *h;
	if (rnsc_ctx_new(&ctx) || rnsc_plugin_host_new(ctx, &h) ||
	    rnsc_plugin_host_add_default_dirs(h))
		return 1;
	rnsc_plugin_host_scan(h);
	if (rnsc_crypto_set_order(ctx, "openssl") != 0) {
		fprintf(stderr, "ratchet_node_peer: the openssl plugin did not load\n");
		return 1;
	}
	rnsc_ctx_set_log_level(ctx, getenv("PEER_DEBUG") ? RNSC_LOG_DEBUG : RNSC_LOG_WARNING);
	int ret = 1, rc;
	const char *cmd = argv[1];
	if (strcmp(cmd, "readfile") == 0 && argc == 4) {
		rnsc_identity id;
		uint8_t *buf = NULL, keys[RNSC_RATCHET_COUNT][32], pub[32];
		size_t len, n = 0;
		if ((rc = load_identity(argv[2], &id)) ||
		    (rc = rnsc_store_read_file(ctx, argv[3], RNSC_RATCHET_FILE_MAX, &buf, &len)) ||
		    (rc = rnsc_ratchet_file_decode(&id, buf, len, keys, RNSC_RATCHET_COUNT, &n))) {
			printf("file error=%s\n", rnsc_err_name(rc));
		} else {
			printf("file n=%zu", n);
			if (n && rnsc_ratchet_public(ctx, pub, keys[0]) == 0)
				print_id(" head=", pub);
			printf("\n");
			ret = 0;
		}
		rnsc_free(ctx, buf);
		goto done;
	}
	if (strcmp(cmd, "readremote") == 0 && argc == 3) {
		uint8_t *buf = NULL, pub[32];
		size_t len;
		double rcv;
		if ((rc = rnsc_store_read_file(ctx, argv[2], RNSC_RATCHET_REMOTE_FILE_MAX, &buf,
					       &len)) ||
		    (rc = rnsc_ratchet_remote_decode(buf, len, pub, &rcv))) {
			printf("remote error=%s\n", rnsc_err_name(rc));
		} else {
			print_id("remote ratchet=", pub);
			printf("\n");
			ret = 0;
		}
		rnsc_free(ctx, buf);
		goto done;
	}
	int serve = strcmp(cmd, "serve") == 0 && argc == 6;
	int send = strcmp(cmd, "send") == 0 && (argc == 6 || argc == 7);
	if (!serve && !send) {
		fprintf(stderr, "ratchet_node_peer: bad command line\n");
		goto done;
	}
	uint64_t end = now_s() + (uint64_t)atoi(argv[5]);
	rnsc_node_options no = {.config_dir = argv[2], .handle_signals = 1};
	rnsc_config_error err;
	if ((rc = rnsc_node_new(ctx, h, &no, &node, &err))) {
		fprintf(stderr, "ratchet_node_peer: %s\n",
			err.msg[0] ? err.msg : rnsc_strerror(rc));
		goto done;
	}
	T = rnsc_node_transport(node);
	rnsc_node_hooks hooks = {
		.on_data = on_data, .on_announce = on_announce, .on_receipt = on_receipt};
	rnsc_node_set_hooks(node, &hooks);
	if (serve) {
		rnsc_identity id;
		static const char *const asp[] = {"ratchet"};
		if ((rc = load_identity(argv[3], &id)) ||
		    (rc = rnsc_transport_dest_add(T, RNSC_DEST_SINGLE, &id, "rnsclt", asp, 1, 1,
						  g_dest)) ||
		    (rc = rnsc_node_dest_enable_ratchets(node, g_dest, &id, argv[4]))) {
			fprintf(stderr, "ratchet_node_peer: destination: %s\n", rnsc_strerror(rc));
			goto done;
		}
		rnsc_identity_free(&id);
		const char *iv = getenv("RATCHET_INTERVAL");
		if (iv &&
		    (rc = rnsc_transport_dest_ratchet_interval(T, g_dest, (uint64_t)atoll(iv))))
			goto done;
		if (getenv("ENFORCE") && (rc = rnsc_transport_dest_enforce_ratchets(T, g_dest)))
			goto done;
		char hx[2 * HL + 1];
		hex(hx, g_dest, HL);
		printf("dest %s\n", hx);
		fflush(stdout);
		while (now_s() < end && !rnsc_node_stopping(node)) {
			rnsc_node_flush(node);
			rnsc_node_run_once(node, 50);
		}
		const rnsc_transport_stats *st = rnsc_transport_get_stats(T);
		printf("stats delivered=%llu decrypt_failed=%llu\n",
		       (unsigned long long)st->delivered, (unsigned long long)st->decrypt_failed);
		ret = 0;
		goto done;
	}
	if (unhex(argv[3], g_dest, HL)) {
		fprintf(stderr, "ratchet_node_peer: bad destination\n");
		goto done;
	}
	int learn = argc == 7 && strcmp(argv[6], "learn") == 0;
	/* let the TCP client interface connect first */
	uint64_t settle = now_s() + 1;
	while (now_s() <= settle)
		rnsc_node_run_once(node, 50);
	uint64_t next_req = 0;
	while (learn && !g_announced) {
		if (now_s() >= end) {
			printf("sent none: no announce\n");
			goto done;
		}
		if (rnsc_node_now_ms() >= next_req) {
			(void)rnsc_transport_request_path(T, g_dest, 0, 0, rnsc_node_now_ms());
			rnsc_node_flush(node);
			next_req = rnsc_node_now_ms() + 3000;
		}
		rnsc_node_run_once(node, 50);
	}
	uint8_t pub[32];
	int has = rnsc_transport_ratchet_get(T, g_dest, pub) == 0;
	rc = rnsc_transport_send(T, g_dest, (const uint8_t *)argv[4], strlen(argv[4]), NULL,
				 rnsc_node_now_ms());
	if (rc) {
		printf("sent none: %s\n", rnsc_err_name(rc));
		goto done;
	}
	rnsc_node_flush(node);
	/* until the receipt ends (proved, or its timeout) within the command's budget */
	while (!g_proved && now_s() < end)
		rnsc_node_run_once(node, 50);
	if (has)
		print_id("sent ratchet=", pub);
	else
		printf("sent ratchet=none");
	printf(" proved=%s\n", g_proved == 1 ? "yes" : "no");
	ret = g_proved == 1 ? 0 : 1;
done:
	fflush(stdout);
	rnsc_node_del(node);
	rnsc_plugin_host_del(h);
	rnsc_ctx_del(ctx);
	return ret;
}
