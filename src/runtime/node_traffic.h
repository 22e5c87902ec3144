/* SPDX-License-Identifier: MIT */
/*
 * Traffic rates as the reference's Transport.count_traffic_loop measures them: once a
 * second, for every interface that is neither spawned by another nor the shared
 * instance's listener, the growth of its byte counters (all traffic, announces, path
 * requests) since the previous sample, in bits per second; the sums of those rates and
 * of the growth (Transport.traffic_rxb & co., which keep what removed interfaces carried),
 * the summed announce and path request frequencies, and the packet rates (rx_pps,
 * tx_pps). interface_stats serves these as rxs/txs/arxs/..., rxb/txb/... and rxpps/txpps.
 *
 * Threading and ownership: a sampler belongs to its node's loop thread; it keeps no
 * pointer to an interface beyond the host's list (an entry whose interface is gone is
 * dropped at the next sample). rnsc_node_traffic_del frees it and its timer.
 */
#ifndef RNSC_NODE_TRAFFIC_H
#define RNSC_NODE_TRAFFIC_H

#include <stdint.h>

#include "node.h"

typedef struct rnsc_node_traffic rnsc_node_traffic;

typedef struct rnsc_traffic_rates {
	double rxs, txs, arxs, atxs, prxs, ptxs; /* bits per second */
} rnsc_traffic_rates;

typedef struct rnsc_traffic_totals {
	uint64_t rxb, txb, arxb, atxb, prxb, ptxb;
	rnsc_traffic_rates speed;
	double arxf, atxf, prxf, ptxf; /* announce and path request frequencies, summed */
	int64_t rxpps, txpps;
} rnsc_traffic_totals;

/* Starts sampling every second on the node's loop. Returns 0 or RNSC_ERR_NOMEM. */
int rnsc_node_traffic_new(rnsc_node *n, rnsc_node_traffic **out);
void rnsc_node_traffic_del(rnsc_node_traffic *t);
/* Takes one sample now (the timer does this every second). */
void rnsc_node_traffic_sample(rnsc_node_traffic *t);
/* The interface's current rates; all 0 until it has been sampled twice, and always for
 * interfaces the reference does not measure. t may be NULL. */
void rnsc_node_traffic_iface(const rnsc_node_traffic *t, const rnsc_iface *f,
			     rnsc_traffic_rates *out);
/* The node-wide figures (zeros when t is NULL). */
void rnsc_node_traffic_totals(const rnsc_node_traffic *t, rnsc_traffic_totals *out);

#endif
