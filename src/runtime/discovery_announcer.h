/* SPDX-License-Identifier: MIT */
/*
 * The reference's InterfaceAnnouncer (RNS/Discovery.py) on a node: every interface section
 * with `discoverable = yes` of a type the reference announces (rnsc: TCPServerInterface and
 * BackboneInterface, the types rnsc_discovery_announce_data builds) is announced on the
 * rnstransport.discovery.interface destination of the transport identity. A job runs every
 * JOB_INTERVAL (60 s; the first one 60 s after start, as the reference's thread sleeps
 * first) and announces the one due interface (now > last + announce_interval) that waited
 * longest, in config order on a tie. announce_interval is in minutes (floor 5, default 6
 * hours); the stamp value is discovery_stamp_value (default 16). The app_data of each
 * interface is built once (its stamp is the expensive part; the reference caches it by
 * the packed map's hash, which does not change while the config does not).
 *
 * Not announced, said in the log at start: discovery_encrypt (needs network_identity,
 * which rnsc refuses), location_cmd and an executable reachable_on (rnsc runs no
 * commands for discovery), the radio types (RNode, Weave, KISS) and I2P.
 *
 * RNSC_DISC_JOB_INTERVAL (seconds, environment) shortens the job interval for tests, as
 * tests/live/iface_discovery_ref_rnsd.py does for rnsd.
 *
 * Ownership: borrows the node (it must outlive the announcer). Threading: node's thread.
 */
#ifndef RNSC_DISCOVERY_ANNOUNCER_H
#define RNSC_DISCOVERY_ANNOUNCER_H

#include "node.h"

typedef struct rnsc_disc_announcer rnsc_disc_announcer;

/* *out stays NULL (and 0 is returned) when no interface is discoverable or the node is
 * attached to a shared instance (the reference announces from shared and standalone
 * instances only). 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM or identity/registration errors. */
RNSC_API int rnsc_disc_announcer_start(rnsc_ctx *ctx, rnsc_node *n, rnsc_disc_announcer **out);
RNSC_API void rnsc_disc_announcer_stop(rnsc_disc_announcer *a);

#endif
