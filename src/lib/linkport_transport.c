/* SPDX-License-Identifier: MIT */
/* The link port on a link the transport engine owns (linkport.h); apart from linkport.c so
 * that users of bare links (the link fuzz target) do not pull the engine in. */
#include <string.h>

#include "linkport.h"

static int t_send(const rnsc_linkport *p, int context, const uint8_t *data, size_t len,
		  uint8_t hash[RNSC_HASHLEN], uint64_t now)
{
	return rnsc_transport_link_send_packet(p->t, p->link_id, RNSC_PKT_DATA, context, data, len,
					       hash, now);
}

static const rnsc_link *t_get(const rnsc_linkport *p)
{
	return rnsc_transport_link_get(p->t, p->link_id);
}

static int t_teardown(const rnsc_linkport *p, uint64_t now)
{
	int rc = rnsc_transport_link_close(p->t, p->link_id, now);
	return rc == RNSC_ERR_NOTFOUND ? 0 : rc;
}

static void t_set_channel(const rnsc_linkport *p, int on)
{
	(void)rnsc_transport_link_set_channel(p->t, p->link_id, on);
}

void rnsc_linkport_on_transport(rnsc_linkport *p, rnsc_transport *t,
				const uint8_t link_id[RNSC_TRUNCATED_HASHLEN])
{
	memset(p, 0, sizeof(*p));
	p->send = t_send;
	p->get = t_get;
	p->teardown = t_teardown;
	p->set_channel = t_set_channel;
	p->t = t;
	if (link_id)
		memcpy(p->link_id, link_id, RNSC_TRUNCATED_HASHLEN);
}
