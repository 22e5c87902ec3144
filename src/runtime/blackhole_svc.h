/* SPDX-License-Identifier: MIT */
/*
 * Blackhole lists over links, on a node: publishing (the reference's
 * rnstransport.info.blackhole destination on the transport identity with its "/list" request
 * handler, answering Transport.blackholed_identities, when publish_blackhole is set),
 * fetching a remote transport instance's list (rnpath -p), and the BlackholeUpdater for
 * blackhole_sources (every blackhole_update_interval, first after 20 s, jobs every 60 s:
 * entries not yet listed are added with the source they carry, the list is kept in
 * storage/blackhole/<source hex>).
 *
 * The service installs a linkapp (linkapp.h) + request wiring (linkapp_request.h) as the
 * node's hooks: use it on a node that has no other link application (rnsc daemon, rnsc
 * path). Ownership: borrows the node (it must outlive the service). Threading: the node's
 * thread.
 */
#ifndef RNSC_BLACKHOLE_SVC_H
#define RNSC_BLACKHOLE_SVC_H

#include <stddef.h>
#include <stdint.h>

#include "node.h"

#define RNSC_BLACKHOLE_UPDATER_INITIAL_WAIT_MS 20000u /* BlackholeUpdater.INITIAL_WAIT */
#define RNSC_BLACKHOLE_UPDATER_JOB_MS 60000u          /* BlackholeUpdater.JOB_INTERVAL */

typedef struct rnsc_blackhole_svc rnsc_blackhole_svc;

/* serve: publish and run the updater as the node's settings say (not on a node attached
 * to a shared instance, as the reference); 0: fetching only. 0, RNSC_ERR_INVAL,
 * RNSC_ERR_NOMEM, or errors registering the destination / loading the identity. */
RNSC_API int rnsc_blackhole_svc_start(rnsc_ctx *ctx, rnsc_node *n, int serve,
				      rnsc_blackhole_svc **out);
RNSC_API void rnsc_blackhole_svc_stop(rnsc_blackhole_svc *s);
/* The published destination hash, or NULL when not publishing. */
RNSC_API const uint8_t *rnsc_blackhole_svc_published(const rnsc_blackhole_svc *s);

/* Serves requests with handlers (borrowed: they must outlive the service) on links to
 * dest, another local destination of the node (remote management, remote_mgmt.h), since
 * the service owns the node's link hooks. At most 4. 0, RNSC_ERR_INVAL, RNSC_ERR_BUFSIZE. */
struct rnsc_request_handlers;
RNSC_API int rnsc_blackhole_svc_serve(rnsc_blackhole_svc *s, const uint8_t dest[16],
				      struct rnsc_request_handlers *hs);

/* Status of a fetch (done callback). */
enum {
	RNSC_BH_FETCH_OK = 0,
	RNSC_BH_FETCH_NO_PATH,
	RNSC_BH_FETCH_LINK_FAILED,
	RNSC_BH_FETCH_REQUEST_FAILED
};
/* Fetches the /list of the transport instance with identity_hash: a path request when no
 * path is known (given up after timeout_ms), a link, the request. done is called once with
 * the status and, for RNSC_BH_FETCH_OK, the answer's msgpack value (valid during the call;
 * it may be something else than a map). 0 started, RNSC_ERR_NOMEM, RNSC_ERR_BUFSIZE (too
 * many at once), RNSC_ERR_INVAL. */
typedef void (*rnsc_blackhole_fetch_cb)(void *ud, int status, const uint8_t *value, size_t len);
RNSC_API int rnsc_blackhole_svc_fetch(rnsc_blackhole_svc *s, const uint8_t identity_hash[16],
				      uint64_t timeout_ms, rnsc_blackhole_fetch_cb done, void *ud);

#endif
