/* SPDX-License-Identifier: MIT */
/*
 * A link as the layers above it see it (the reference's LinkChannelOutlet, widened for
 * requests and buffers): send a packet with a context, read the link's state, tear it down,
 * turn CHANNEL delivery on. Two adapters exist:
 *   - on a bare rnsc_link the caller owns (rnsc_linkport_on_link): frames land in the link's
 *     outbox, as every rnsc_link_send does;
 *   - on a link the transport engine owns (rnsc_linkport_on_transport): sends go through
 *     rnsc_transport_link_send_packet() (the engine drains the link at once), the link is
 *     looked up by id on every call, so a link the engine has already forgotten reads as
 *     closed (get() answers NULL) instead of leaving a dangling pointer.
 * A port is a small value: copy it freely. It borrows the link / engine, which must outlive
 * every use. Threading: the thread that owns the link.
 */
#ifndef RNSC_LINKPORT_H
#define RNSC_LINKPORT_H

#include <stddef.h>
#include <stdint.h>

#include "link.h"
#include "transport.h"

typedef struct rnsc_linkport rnsc_linkport;
struct rnsc_linkport {
	/* DATA with `context` (encrypted as the link does for it). hash (may be NULL) gets the
	 * sent packet's full hash. 0 / a packet length, or the errors of rnsc_link_send(). */
	int (*send)(const rnsc_linkport *p, int context, const uint8_t *data, size_t len,
		    uint8_t hash[RNSC_HASHLEN], uint64_t now);
	/* The link for state queries (status, MDU, RTT, remote identity); NULL once gone. */
	const rnsc_link *(*get)(const rnsc_linkport *p);
	int (*teardown)(const rnsc_linkport *p, uint64_t now);
	void (*set_channel)(const rnsc_linkport *p, int on);
	/* The adapters' storage; a custom port may use ud. */
	rnsc_link *link;
	rnsc_transport *t;
	uint8_t link_id[RNSC_TRUNCATED_HASHLEN];
	void *ud;
};

RNSC_API void rnsc_linkport_on_link(rnsc_linkport *p, rnsc_link *link);
RNSC_API void rnsc_linkport_on_transport(rnsc_linkport *p, rnsc_transport *t,
					 const uint8_t link_id[RNSC_TRUNCATED_HASHLEN]);

/* Helpers over get(): RNSC_LINK_CLOSED / 0 / 0.0 / NULL once the link is gone. The RTT is
 * 0 until measured (the reference's rtt before the handshake finishes is unusable anyway). */
RNSC_API int rnsc_linkport_status(const rnsc_linkport *p);
RNSC_API size_t rnsc_linkport_mdu(const rnsc_linkport *p);
RNSC_API double rnsc_linkport_rtt(const rnsc_linkport *p);
RNSC_API const rnsc_identity *rnsc_linkport_remote_identity(const rnsc_linkport *p);
RNSC_API const uint8_t *rnsc_linkport_id(const rnsc_linkport *p);

#endif
