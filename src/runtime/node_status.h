/* SPDX-License-Identifier: MIT */
/*
 * A running node's status as text: JSON (the document `GET /status` serves, and what
 * `rnsc status --json` prints) and the Prometheus text exposition format (`GET
 * /metrics`): per interface its state, bytes and packets each way, bitrate, MTU and drops
 * by reason; the transport engine's counters; path table and known-destination sizes.
 *
 * Ownership: *out is allocated with malloc and belongs to the caller (free()).
 * Threading: call on the node's thread (it reads the engine and the interface host).
 * Errors: 0, RNSC_ERR_INVAL or RNSC_ERR_NOMEM.
 */
#ifndef RNSC_NODE_STATUS_H
#define RNSC_NODE_STATUS_H

#include <stddef.h>

#include "node.h"
#include "status_json.h"

/* The JSON is the interface_stats document of the shared-instance RPC (node_rpc.h)
 * rendered as rnstatus -j renders it (bytes as hex, Python's float repr), one line. */
RNSC_API int rnsc_node_status_json(rnsc_node *n, char **out, size_t *len);

RNSC_API int rnsc_node_status_metrics(rnsc_node *n, char **out, size_t *len);

#endif
