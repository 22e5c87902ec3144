/* SPDX-License-Identifier: MIT */
/*
 * The shared instance's RPC server (the reference's Reticulum.rpc_loop) and the
 * interface_stats document it serves, which is also what GET /status and `rnsc status
 * --json` render (node_status.h): one builder, so the three never drift apart.
 *
 * Served calls (msgpack maps, as the reference's tools send them): get interface_stats,
 * path_table (max_hops), rate_table, next_hop_if_name, next_hop, first_hop_timeout,
 * lowest_interface_bitrate, medium_path_timeout, link_count, active_link_count,
 * packet_rssi / packet_snr / packet_q (None: rnsc keeps no radio stats),
 * profiling_results (None), blackholed_identities (the table as Transport's dict),
 * is_blackholed (bool); drop path, all_via, announce_queues; destination_data
 * used/retain/unretain and identity_data retain (True, nothing to keep);
 * blackhole_identity (with until, reason) / unblackhole_identity (True done, None already /
 * not listed, False for a bad hash; a change rewrites storage/blackhole/local). Anything
 * else is answered, as by the reference, by closing the connection.
 *
 * Bounds: 16 connections at a time (more are closed at once and counted), 64 KiB per
 * request, 10 s per connection; a connection that fails authentication is closed and
 * counted. Threading: the node's loop thread.
 */
#ifndef RNSC_NODE_RPC_H
#define RNSC_NODE_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

typedef struct rnsc_node_rpc rnsc_node_rpc;

typedef struct rnsc_node_rpc_stats {
	uint64_t served;  /* requests answered */
	uint64_t refused; /* authentication failures */
	uint64_t dropped; /* protocol errors, oversized or unknown requests, timeouts, over
			      the connection limit */
} rnsc_node_rpc_stats;

/* Listens on the instance control socket. Returns 0, RNSC_ERR_IO (address in use),
 * RNSC_ERR_NOENT (no transport identity file for the key), RNSC_ERR_NOMEM, RNSC_ERR_SYS. */
int rnsc_node_rpc_start(rnsc_node *n, rnsc_ctx *ctx, rnsc_node_rpc **out);
void rnsc_node_rpc_stop(rnsc_node_rpc *r);
void rnsc_node_rpc_stats_get(const rnsc_node_rpc *r, rnsc_node_rpc_stats *out);

/* The interface_stats document (Reticulum.get_interface_stats plus rnsc's extra keys, all
 * prefixed rnsc_) as msgpack in *out (malloc'd, caller frees). Returns 0 or
 * RNSC_ERR_NOMEM. */
RNSC_API int rnsc_node_interface_stats(rnsc_node *n, rnsc_ctx *ctx, uint8_t **out, size_t *len);

/* Answers one request (msgpack) into *out (malloc'd). Returns 0, RNSC_ERR_MALFORMED (not a
 * map of the reference's calls), RNSC_ERR_NOTFOUND (a call rnsc does not serve) or
 * RNSC_ERR_NOMEM. Exposed for the fuzz target. */
RNSC_API int rnsc_node_rpc_answer(rnsc_node *n, rnsc_ctx *ctx, const uint8_t *req, size_t len,
				  uint8_t **out, size_t *out_len);

#endif
