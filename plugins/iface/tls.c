/* SPDX-License-Identifier: MIT */
/*
 * The "tls" interface plugin: TLSClientInterface and TLSServerInterface, HDLC-framed
 * Reticulum traffic (exactly as TCPClientInterface/TCPServerInterface put it on the wire,
 * src/framing/hdlc.c) inside TLS 1.3 with OpenSSL.
 *
 * The reference (rns 1.5.4) has no TLS interface: this is an rnsc extension, and both
 * ends must be rnsc. Reticulum already encrypts and authenticates its own traffic; TLS
 * adds confidentiality of the metadata (announces, path requests, IFAC-less traffic) and
 * server authentication on hostile networks, and gets through middleboxes that pass
 * only TLS.
 *
 * Options, modelled on the TCP interface's:
 *   server: listen_ip, listen_port, certificate (PEM, chain allowed), private_key (PEM)
 *   client: target_host, target_port, ca_file (PEM CAs: chain, dates and host name are
 *           verified) and/or pinned_sha256 (the server certificate's SHA-256 fingerprint,
 *           hex, colons allowed; with a pin alone the pin is the whole check, as with
 *           SSH host keys), server_name (SNI, and the name checked against the
 *           certificate with ca_file; default target_host), max_reconnect_tries,
 *           reconnect_wait (seconds, default 5, doubling per failed attempt up to 60)
 *   both:   bitrate, ifac_size (HW_MTU as the TCP interface: optimise_mtu of the
 *           bitrate), handshake_timeout (seconds, default 10)
 * Bad settings fail open() naming the option; failed handshakes (expired, untrusted or
 * wrong-host certificates, pin mismatch) are logged with the peer's address and the
 * client retries with backoff (stream.h).
 *
 * Byte counts: rx counts de-framed packet bytes, tx the HDLC-framed bytes handed to TLS
 * (record overhead excluded), as the TCP interface counts what it hands to the socket.
 *
 * Threading and ownership: see stream.h; the connection engine does the sockets, TLS,
 * reconnects and children; this file only frames.
 */
#include <stdio.h>
#include <string.h>

#include "hdlc.h"
#include "hdlc_rx.h"
#include "iface_abi.h"
#include "stream.h"

typedef struct hdlc_state {
	rnsc_hdlc_decoder dec;
	rnsc_hdlc_stats seen;
	uint8_t buf[]; /* max_frame bytes */
} hdlc_state;

static int hd_new(rnsc_stream *t)
{
	hdlc_state *s = rnsc_stream_alloc(t, sizeof(*s) + t->max_frame);
	if (!s)
		return RNSC_ERR_NOMEM;
	rnsc_hdlc_decoder_init(&s->dec, s->buf, t->max_frame);
	rnsc_hdlc_decoder_set_min(&s->dec, RNSC_HDLC_REF_MIN_FRAME);
	t->fs = s;
	return 0;
}

static void hd_free(rnsc_stream *t)
{
	rnsc_stream_free(t, t->fs);
	t->fs = NULL;
}

static void hd_up(rnsc_stream *t)
{
	rnsc_stream_set_online(t); /* HDLC needs no handshake of its own */
}

static int on_frame(void *ud, const uint8_t *frame, size_t len)
{
	return rnsc_stream_deliver(ud, frame, len);
}

static void hd_input(rnsc_stream *t, const uint8_t *p, size_t n)
{
	hdlc_state *s = t->fs;
	(void)rnsc_hdlc_decoder_feed(&s->dec, p, n, on_frame, t);
	if (t->fs == s)
		rnsc_hdlc_rx_report(t->host, &s->dec, &s->seen);
}

static int hd_encode(rnsc_stream *t, const uint8_t *frame, size_t len)
{
	size_t need = rnsc_hdlc_encoded_len(frame, len);
	uint8_t *dst = rnsc_stream_tx_reserve(t, need, 1);
	if (!dst)
		return RNSC_ERR_TOOBIG;
	int n = rnsc_hdlc_encode(dst, need, frame, len);
	if (n < 0)
		return n;
	rnsc_stream_tx_commit(t, (size_t)n);
	return 0;
}

static void hd_down(rnsc_stream *t)
{
	hdlc_state *s = t->fs;
	rnsc_hdlc_rx_reset(t->host, &s->dec); /* counts a frame the disconnect cut short */
}

static const rnsc_stream_proto tls_proto = {
	.client_type = "TLSClientInterface",
	.server_type = "TLSServerInterface",
	.label = "TLSInterface",
	.server_label = "TLSServerInterface",
	.tls_always = 1,
	.conn_new = hd_new,
	.conn_free = hd_free,
	.up = hd_up,
	.input = hd_input,
	.encode = hd_encode,
	.down = hd_down,
};

static const char *const tls_types[] = {"TLSClientInterface", "TLSServerInterface", NULL};

static int tls_open(void *inst, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		    void **handle)
{
	return rnsc_stream_open(&tls_proto, inst, cfg, host, handle);
}

RNSC_IFACE_PLUGIN("tls", "TLSClientInterface and TLSServerInterface (HDLC over TLS 1.3; rnsc only)",
		  tls_types, tls_open, rnsc_stream_send, rnsc_stream_stats, rnsc_stream_close,
		  rnsc_stream_describe)
