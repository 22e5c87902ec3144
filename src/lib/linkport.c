/* SPDX-License-Identifier: MIT */
#include "linkport.h"

#include <string.h>

static int l_send(const rnsc_linkport *p, int context, const uint8_t *data, size_t len,
		  uint8_t hash[RNSC_HASHLEN], uint64_t now)
{
	return rnsc_link_send(p->link, context, data, len, hash, now);
}

static const rnsc_link *l_get(const rnsc_linkport *p)
{
	return p->link;
}

static int l_teardown(const rnsc_linkport *p, uint64_t now)
{
	return rnsc_link_teardown(p->link, now);
}

static void l_set_channel(const rnsc_linkport *p, int on)
{
	rnsc_link_set_channel(p->link, on);
}

void rnsc_linkport_on_link(rnsc_linkport *p, rnsc_link *link)
{
	memset(p, 0, sizeof(*p));
	p->send = l_send;
	p->get = l_get;
	p->teardown = l_teardown;
	p->set_channel = l_set_channel;
	p->link = link;
	if (link)
		memcpy(p->link_id, rnsc_link_id(link), RNSC_TRUNCATED_HASHLEN);
}

int rnsc_linkport_status(const rnsc_linkport *p)
{
	const rnsc_link *l = p && p->get ? p->get(p) : NULL;
	return l ? rnsc_link_status(l) : RNSC_LINK_CLOSED;
}

size_t rnsc_linkport_mdu(const rnsc_linkport *p)
{
	const rnsc_link *l = p && p->get ? p->get(p) : NULL;
	return l ? rnsc_link_get_mdu(l) : 0;
}

double rnsc_linkport_rtt(const rnsc_linkport *p)
{
	const rnsc_link *l = p && p->get ? p->get(p) : NULL;
	double r = l ? rnsc_link_rtt(l) : 0.0;
	return r > 0 ? r : 0.0;
}

const rnsc_identity *rnsc_linkport_remote_identity(const rnsc_linkport *p)
{
	const rnsc_link *l = p && p->get ? p->get(p) : NULL;
	return l ? rnsc_link_remote_identity(l) : NULL;
}

const uint8_t *rnsc_linkport_id(const rnsc_linkport *p)
{
	return p ? p->link_id : NULL;
}
