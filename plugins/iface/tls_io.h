/* SPDX-License-Identifier: MIT */
/*
 * TLS 1.3 helpers shared by the "tls" and "websocket" interface plugins (compiled into
 * each; plugins never link librnsc). Two parts:
 *
 *  - Settings: a server SSL_CTX from the section's `certificate` and `private_key`, a
 *    client SSL_CTX from `ca_file` and/or `pinned_sha256` and `server_name`. Every bad
 *    value fails open() through cfg->fail() naming the option (unreadable file, not a
 *    certificate, key not matching the certificate, expired certificate, bad pin).
 *  - A byte pipe over a non-blocking socket, TLS or plain (ssl == NULL), with the
 *    handshake driven from the loop's fd callbacks: every call returns at once with
 *    RNSC_TLSIO_WANT_READ / _WANT_WRITE when the socket would block.
 *
 * Only TLS 1.3 is offered or accepted (min = max = TLS1_3_VERSION).
 *
 * Ownership: the SSL_CTX belongs to the interface that created it (client or server);
 * a server's spawned connections borrow their parent's, which outlives them. An
 * rnsc_tlsio owns its SSL, not its fd. OpenSSL allocates with its own allocator, not
 * the host's.
 *
 * Threading: an SSL_CTX is only used from the loop its interface belongs to; nothing
 * here keeps global state beyond what OpenSSL initialises itself.
 */
#ifndef RNSC_PLUGIN_TLS_IO_H
#define RNSC_PLUGIN_TLS_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "iface_abi.h"

enum {
	RNSC_TLSIO_WANT_READ = -1,
	RNSC_TLSIO_WANT_WRITE = -2,
	RNSC_TLSIO_EOF = -3,
	RNSC_TLSIO_ERR = -4,
};

/* What a client checks the server against. */
typedef struct rnsc_tlsio_peer {
	int verify_chain; /* ca_file given: chain, validity dates and host name */
	int has_pin;      /* pinned_sha256 given: the leaf certificate's fingerprint */
	uint8_t pin[32];
	char server_name[256]; /* SNI and the name checked (default: target_host) */
} rnsc_tlsio_peer;

/* Reads certificate and private_key; *out is a new TLS 1.3 server context. Returns 0 or
 * the code cfg->fail() returned (RNSC_ERR_CONFIG_VALUE, RNSC_ERR_IO, RNSC_ERR_NOMEM). */
int rnsc_tlsio_server_ctx(const rnsc_iface_config *cfg, SSL_CTX **out);

/* Reads ca_file, pinned_sha256 and server_name (default target_host); at least one of
 * ca_file and pinned_sha256 is required. Returns 0 or cfg->fail()'s code. */
int rnsc_tlsio_client_ctx(const rnsc_iface_config *cfg, const char *target_host, SSL_CTX **out,
			  rnsc_tlsio_peer *peer);

/* Parses a SHA-256 fingerprint: 64 hex digits, colons allowed between pairs. 0 or -1. */
int rnsc_tlsio_parse_pin(const char *s, uint8_t out[32]);

typedef struct rnsc_tlsio {
	int fd;
	SSL *ssl; /* NULL: plain socket */
	int established;
	const rnsc_tlsio_peer *peer; /* clients only; borrowed */
} rnsc_tlsio;

/* A BIO method doing socket I/O with send(MSG_NOSIGNAL) (OpenSSL's own socket BIO uses
 * write(2) and so raises SIGPIPE). Owned like the SSL_CTX it goes with; NULL on OOM. */
BIO_METHOD *rnsc_tlsio_bio_method_new(void);
void rnsc_tlsio_bio_method_free(BIO_METHOD *m);

/* Binds fd to a new SSL of ctx doing its I/O through bm (ctx NULL: plain). Returns 0 or
 * RNSC_ERR_NOMEM. */
int rnsc_tlsio_start(rnsc_tlsio *c, SSL_CTX *ctx, BIO_METHOD *bm, int fd, int server,
		     const rnsc_tlsio_peer *peer);
/* Advances the handshake: 0 when established (pin checked), WANT_READ/WANT_WRITE, or
 * RNSC_TLSIO_ERR/EOF with why filled ("certificate has expired", "pin mismatch ..."). */
int rnsc_tlsio_handshake(rnsc_tlsio *c, char *why, size_t cap);
/* Reads/writes up to n bytes: >0, WANT_READ, WANT_WRITE, EOF or ERR (why filled). */
ssize_t rnsc_tlsio_read(rnsc_tlsio *c, void *buf, size_t n, char *why, size_t cap);
ssize_t rnsc_tlsio_write(rnsc_tlsio *c, const void *buf, size_t n, char *why, size_t cap);
/* Decrypted bytes OpenSSL holds beyond the socket's readiness (level-triggered loops
 * would never be woken for them). */
size_t rnsc_tlsio_pending(const rnsc_tlsio *c);
/* Sends close_notify when established (best effort, non-blocking) and frees the SSL. */
void rnsc_tlsio_free(rnsc_tlsio *c);

#endif
