/* SPDX-License-Identifier: MIT */
/*
 * A connection engine for stream interfaces over TCP, optionally inside TLS 1.3
 * (tls_io.h): client connect with timeout and reconnect, server accept spawning one
 * child interface per connection, a bounded transmit queue, stats and drop counting,
 * the way plugins/iface/tcp.c does it for plain TCP. The framing on top is pluggable
 * (rnsc_stream_proto): HDLC for the "tls" plugin, RFC 6455 for the "websocket" plugin.
 * Compiled into each plugin that uses it; plugins never link librnsc.
 *
 * Life of a connection: TCP connect (clients) or accept (children) -> TLS handshake
 * when TLS is on -> proto->up() -> the framer's own handshake, if any -> the framer
 * calls rnsc_stream_set_online(). A connection that is not online within
 * handshake_timeout (default 10 s) is dropped. A client whose connection fails or is lost
 * waits reconnect_wait (default 5 s, as the reference's TCP client), doubling after every
 * failed attempt up to 60 s, so a server with a bad certificate is not hammered; a
 * successful connection resets the wait.
 *
 * Threading and ownership: as for every interface plugin (iface_abi.h), each
 * rnsc_stream belongs to one loop and is only touched from it. The engine owns the
 * socket, the SSL and the buffers; the framer owns t->fs (allocated in conn_new, freed in
 * conn_free). Frames handed to deliver/tx are borrowed for the call.
 */
#ifndef RNSC_PLUGIN_STREAM_H
#define RNSC_PLUGIN_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "iface_abi.h"
#include "iface_plugin.h"
#include "tls_io.h"

enum { RNSC_STREAM_CLIENT = 1, RNSC_STREAM_SERVER = 2, RNSC_STREAM_CHILD = 3 };

typedef struct rnsc_stream rnsc_stream;

typedef rnsc_iface_inst rnsc_stream_inst;

typedef struct rnsc_stream_proto {
	const char *client_type, *server_type;
	const char *label;        /* describe() prefix of clients and children */
	const char *server_label; /* and of servers */
	int tls_always;           /* 1: TLS is mandatory; 0: the section's "tls" option decides */
	/* Reads the framer's options into t->pcfg (clients and servers; children share their
	 * parent's). Returns 0 or cfg->fail()'s code. Optional. */
	int (*configure)(rnsc_stream *t, const rnsc_iface_config *cfg);
	void (*release)(rnsc_stream *t); /* frees t->pcfg; optional */
	/* Per-connection framer state in t->fs (t->max_frame is known). 0 or RNSC_ERR_NOMEM. */
	int (*conn_new)(rnsc_stream *t);
	void (*conn_free)(rnsc_stream *t);
	/* The byte pipe is ready (TLS established). */
	void (*up)(rnsc_stream *t);
	/* Plaintext bytes arrived. May call rnsc_stream_lost/close_after_flush. */
	void (*input)(rnsc_stream *t, const uint8_t *p, size_t n);
	/* Frames one outbound packet into the tx queue (rnsc_stream_tx_*). 0 or a code. */
	int (*encode)(rnsc_stream *t, const uint8_t *frame, size_t len);
	/* The connection is gone: count a partial frame, reset for the next connection. */
	void (*down)(rnsc_stream *t);
	/* Optional: the interface is being closed while online; writes a last message (a
	 * WebSocket close frame) into buf and returns its length (0: none). It is sent with one
	 * non-blocking write, and only when nothing else is queued. */
	size_t (*bye)(rnsc_stream *t, uint8_t *buf, size_t cap);
} rnsc_stream_proto;

struct rnsc_stream {
	const rnsc_stream_proto *proto;
	rnsc_stream_inst *inst;
	int kind;
	const rnsc_iface_host_api *host;
	char name[160];
	char addr[256]; /* target (client), bind address (server), peer (child) */
	uint16_t port, local_port;
	int fd;
	rnsc_iface_watch *w;
	unsigned interest;
	int connecting; /* TCP connect in progress */
	int piped;      /* TLS established (or plain), proto->up() called */
	int online;
	int closing; /* drop the connection once the tx queue is flushed */
	rnsc_iface_timer *timer;
	uint64_t reconnect_wait_ns, backoff_ns, handshake_timeout_ns;
	int64_t max_tries, attempts;
	int reconnecting, never_connected, given_up;
	/* TLS: ctx owned by clients and servers, borrowed by children */
	SSL_CTX *ssl_ctx;
	BIO_METHOD *bio_method;
	rnsc_tlsio_peer peer;
	rnsc_tlsio io;
	/* framing */
	size_t hw_mtu, ifac_size, max_frame;
	uint64_t bitrate;
	void *pcfg; /* framer options (parent's for children) */
	void *fs;   /* framer per-connection state */
	/* tx queue: bytes [tx_off, tx_len) pending */
	uint8_t *tx;
	size_t tx_off, tx_len, tx_cap;
	uint64_t rxb, txb, rxp, txp;
	uint32_t reconnects;
	rnsc_stream *parent, *child_head, *sib_next, *sib_prev;
	uint32_t n_children;
};

/* The ops an interface plugin built on the engine exposes; open takes the proto. */
int rnsc_stream_open(const rnsc_stream_proto *proto, void *inst, const rnsc_iface_config *cfg,
		     const rnsc_iface_host_api *host, void **handle);
int rnsc_stream_send(void *handle, const uint8_t *frame, size_t len);
int rnsc_stream_stats(void *handle, rnsc_iface_stats *out);
void rnsc_stream_close(void *handle);
int rnsc_stream_describe(void *handle, char *buf, size_t cap);

/* For framers. */
void *rnsc_stream_alloc(rnsc_stream *t, size_t n); /* zeroed, host allocator */
void rnsc_stream_free(rnsc_stream *t, void *p);
__attribute__((format(printf, 3, 4))) void rnsc_stream_log(rnsc_stream *t, int level,
							   const char *fmt, ...);
void rnsc_stream_drop(rnsc_stream *t, unsigned reason, uint64_t n);
/* Hands a de-framed packet up and counts it. Returns 0, or RNSC_ERR_STATE when the
 * connection went away meanwhile (the framer must stop parsing). */
int rnsc_stream_deliver(rnsc_stream *t, const uint8_t *frame, size_t len);
/* Room for n more bytes at the end of the tx queue (NULL: queue full, counted as a
 * TXQUEUE drop when count_drop). rnsc_stream_tx_commit() appends them and writes. */
uint8_t *rnsc_stream_tx_reserve(rnsc_stream *t, size_t n, int count_drop);
void rnsc_stream_tx_commit(rnsc_stream *t, size_t n);
int rnsc_stream_tx(rnsc_stream *t, const void *p, size_t n);
/* The framer's handshake is done: traffic may flow. */
void rnsc_stream_set_online(rnsc_stream *t);
/* Closes the connection now (client: reconnects; child: removed). */
void rnsc_stream_lost(rnsc_stream *t, const char *why);
/* Closes it once the queued bytes (e.g. a close frame) are written, within 2 s. */
void rnsc_stream_close_after_flush(rnsc_stream *t, const char *why);
int rnsc_stream_connected(const rnsc_stream *t); /* the socket is still there */

#endif
