/* SPDX-License-Identifier: MIT */
/*
 * A running node's status as text: JSON (the document `GET /status` serves, and what a
 * status tool prints with --json) and the Prometheus text exposition format (`GET
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

RNSC_API int rnsc_node_status_json(rnsc_node *n, char **out, size_t *len);
RNSC_API int rnsc_node_status_metrics(rnsc_node *n, char **out, size_t *len);

#endif
