/* SPDX-License-Identifier: MIT */
/*
 * The receive-side bookkeeping every HDLC-framed interface plugin shares (tcp, backbone,
 * pipe, serial, tls): turning the decoder's counters into host drop reports, and
 * counting a frame a disconnect cuts short. Header only, so each plugin compiles its own
 * copy (plugins never link librnsc). Borrows host and decoder; owns nothing.
 */
#ifndef RNSC_IFACE_HDLC_RX_H
#define RNSC_IFACE_HDLC_RX_H

#include "hdlc.h"
#include "iface_abi.h"

/* True while the decoder is inside a non-empty frame (RNSC_HDLC state 1 = in a frame). */
static inline int rnsc_hdlc_rx_partial(const rnsc_hdlc_decoder *dec)
{
	return dec->state == 1 && (dec->len > 0 || dec->esc);
}

/* The connection is gone: a frame it cut short is one PARTIAL drop; the decoder starts
 * over for the next connection. */
static inline void rnsc_hdlc_rx_reset(const rnsc_iface_host_api *host, rnsc_hdlc_decoder *dec)
{
	if (rnsc_hdlc_rx_partial(dec))
		host->drop(host->hctx, RNSC_IFACE_DROP_PARTIAL, 1);
	rnsc_hdlc_decoder_reset(dec);
}

/* Reports the runts, oversize frames and garbage bytes the decoder counted since *seen,
 * then remembers its counters in *seen. */
static inline void rnsc_hdlc_rx_report(const rnsc_iface_host_api *host,
				       const rnsc_hdlc_decoder *dec, rnsc_hdlc_stats *seen)
{
	const rnsc_hdlc_stats *s = &dec->stats;
	if (s->drop_runt != seen->drop_runt)
		host->drop(host->hctx, RNSC_IFACE_DROP_RUNT, s->drop_runt - seen->drop_runt);
	if (s->drop_oversize != seen->drop_oversize)
		host->drop(host->hctx, RNSC_IFACE_DROP_OVERSIZE,
			   s->drop_oversize - seen->drop_oversize);
	if (s->garbage != seen->garbage)
		host->drop(host->hctx, RNSC_IFACE_DROP_GARBAGE, s->garbage - seen->garbage);
	*seen = *s;
}

#endif /* RNSC_IFACE_HDLC_RX_H */
