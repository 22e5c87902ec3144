/* SPDX-License-Identifier: MIT */
/* TLS 1.3 settings and a non-blocking byte pipe; see tls_io.h. */
#include "tls_io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static void ossl_reason(char *buf, size_t cap)
{
	unsigned long e = ERR_peek_last_error();
	if (!e) {
		snprintf(buf, cap, "unknown OpenSSL error");
		return;
	}
	const char *r = ERR_reason_error_string(e);
	if (r)
		snprintf(buf, cap, "%s", r);
	else
		ERR_error_string_n(e, buf, cap);
	ERR_clear_error();
}

static SSL_CTX *new_ctx(int server)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!ctx)
		return NULL;
	/* TLS 1.3 only: no downgrade, no renegotiation, forward secrecy for every suite. */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* The tx queue moves and grows between retries of a partial write. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	/* Reticulum does its own session security; resumption buys little and adds state. */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	return ctx;
}

static int fail_file(const rnsc_iface_config *cfg, const char *key, const char *path,
		     const char *what)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s \"%s\": %s", what, path, strerror(errno));
	return cfg->fail(cfg->cctx, key, RNSC_ERR_IO, msg);
}

int rnsc_tlsio_server_ctx(const rnsc_iface_config *cfg, SSL_CTX **out)
{
	const char *cert = NULL, *key = NULL;
	char msg[640], why[256];
	int rc;
	if ((rc = cfg->get_str(cfg->cctx, "certificate", &cert)) == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "certificate", RNSC_ERR_CONFIG_VALUE,
				 "a TLS server needs a certificate (PEM file)");
	if (rc)
		return rc;
	if ((rc = cfg->get_str(cfg->cctx, "private_key", &key)) == RNSC_ERR_NOTFOUND)
		return cfg->fail(cfg->cctx, "private_key", RNSC_ERR_CONFIG_VALUE,
				 "a TLS server needs a private key (PEM file)");
	if (rc)
		return rc;

	/* Read the files ourselves first so "cannot read" and "not PEM" stay apart. */
	FILE *f = fopen(cert, "r");
	if (!f)
		return fail_file(cfg, "certificate", cert, "cannot read");
	X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!x) {
		ERR_clear_error();
		snprintf(msg, sizeof(msg), "\"%s\" holds no PEM certificate", cert);
		return cfg->fail(cfg->cctx, "certificate", RNSC_ERR_CONFIG_VALUE, msg);
	}
	int expired = X509_cmp_current_time(X509_get0_notAfter(x)) < 0;
	int not_yet = X509_cmp_current_time(X509_get0_notBefore(x)) > 0;
	X509_free(x);
	if (expired || not_yet) {
		snprintf(msg, sizeof(msg), "the certificate in \"%s\" %s", cert,
			 expired ? "has expired" : "is not valid yet");
		return cfg->fail(cfg->cctx, "certificate", RNSC_ERR_CONFIG_VALUE, msg);
	}
	f = fopen(key, "r");
	if (!f)
		return fail_file(cfg, "private_key", key, "cannot read");
	EVP_PKEY *pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pk) {
		ERR_clear_error();
		snprintf(msg, sizeof(msg), "\"%s\" holds no unencrypted PEM private key", key);
		return cfg->fail(cfg->cctx, "private_key", RNSC_ERR_CONFIG_VALUE, msg);
	}
	SSL_CTX *ctx = new_ctx(1);
	if (!ctx) {
		EVP_PKEY_free(pk);
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "cannot create a TLS context");
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		ossl_reason(why, sizeof(why));
		EVP_PKEY_free(pk);
		SSL_CTX_free(ctx);
		snprintf(msg, sizeof(msg), "cannot use \"%s\": %s", cert, why);
		return cfg->fail(cfg->cctx, "certificate", RNSC_ERR_CONFIG_VALUE, msg);
	}
	int ok = SSL_CTX_use_PrivateKey(ctx, pk) == 1 && SSL_CTX_check_private_key(ctx) == 1;
	EVP_PKEY_free(pk);
	if (!ok) {
		ERR_clear_error();
		SSL_CTX_free(ctx);
		snprintf(msg, sizeof(msg),
			 "the key in \"%s\" does not match the certificate \"%s\"", key, cert);
		return cfg->fail(cfg->cctx, "private_key", RNSC_ERR_CONFIG_VALUE, msg);
	}
	*out = ctx;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rnsc_tlsio_parse_pin(const char *s, uint8_t out[32])
{
	size_t n = 0;
	while (*s == ' ')
		s++;
	while (*s && *s != ' ') {
		if (*s == ':') {
			if (n == 0 || s[1] == ':' || s[1] == 0)
				return -1;
			s++;
			continue;
		}
		int hi = hexval(s[0]), lo = s[1] ? hexval(s[1]) : -1;
		if (hi < 0 || lo < 0 || n >= 32)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	while (*s == ' ')
		s++;
	return n == 32 && *s == 0 ? 0 : -1;
}

int rnsc_tlsio_client_ctx(const rnsc_iface_config *cfg, const char *target_host, SSL_CTX **out,
			  rnsc_tlsio_peer *peer)
{
	const char *ca = NULL, *pin = NULL, *sn = NULL;
	char msg[640], why[256];
	int rc;
	memset(peer, 0, sizeof(*peer));
	if ((rc = cfg->get_str(cfg->cctx, "ca_file", &ca)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg->get_str(cfg->cctx, "pinned_sha256", &pin)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if ((rc = cfg->get_str(cfg->cctx, "server_name", &sn)) && rc != RNSC_ERR_NOTFOUND)
		return rc;
	if (!ca && !pin)
		return cfg->fail(
			cfg->cctx, "ca_file", RNSC_ERR_CONFIG_VALUE,
			"a TLS client needs ca_file (PEM CA certificates) or pinned_sha256 "
			"(the server certificate's SHA-256 fingerprint) to trust the server");
	if (pin && rnsc_tlsio_parse_pin(pin, peer->pin) != 0)
		return cfg->fail(cfg->cctx, "pinned_sha256", RNSC_ERR_CONFIG_VALUE,
				 "must be 64 hex digits (colons allowed between byte pairs)");
	peer->has_pin = pin != NULL;
	if (!sn)
		sn = target_host;
	if (strlen(sn) >= sizeof(peer->server_name) || !*sn)
		return cfg->fail(cfg->cctx, "server_name", RNSC_ERR_CONFIG_VALUE,
				 "server name empty or too long");
	snprintf(peer->server_name, sizeof(peer->server_name), "%s", sn);

	SSL_CTX *ctx = new_ctx(0);
	if (!ctx)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "cannot create a TLS context");
	if (ca) {
		FILE *f = fopen(ca, "r");
		if (!f) {
			SSL_CTX_free(ctx);
			return fail_file(cfg, "ca_file", ca, "cannot read");
		}
		fclose(f);
		if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
			ossl_reason(why, sizeof(why));
			SSL_CTX_free(ctx);
			snprintf(msg, sizeof(msg), "cannot load CA certificates from \"%s\": %s",
				 ca, why);
			return cfg->fail(cfg->cctx, "ca_file", RNSC_ERR_CONFIG_VALUE, msg);
		}
		peer->verify_chain = 1;
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	} else {
		/* Pin only: the fingerprint is the trust anchor (checked after the handshake,
		 * before any byte of Reticulum traffic), as with SSH host keys. */
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	}
	*out = ctx;
	return 0;
}

/*
 * OpenSSL's socket BIO writes with write(2), which raises SIGPIPE on a connection the peer
 * reset, and the daemon does not ignore SIGPIPE. This BIO does the same I/O with
 * send(MSG_NOSIGNAL). The method belongs to the interface owning the SSL_CTX (no global:
 * the plugin may be unloaded).
 */
static int nsp_write(BIO *b, const char *buf, int len)
{
	int fd = (int)(intptr_t)BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t r = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return (int)r;
}

static int nsp_read(BIO *b, char *buf, int len)
{
	int fd = (int)(intptr_t)BIO_get_data(b);
	BIO_clear_retry_flags(b);
	ssize_t r = recv(fd, buf, (size_t)len, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(b);
	return (int)r;
}

static long nsp_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH || cmd == BIO_CTRL_DUP ? 1 : 0;
}

static int nsp_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

BIO_METHOD *rnsc_tlsio_bio_method_new(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK, "rnsc socket");
	if (m && BIO_meth_set_write(m, nsp_write) && BIO_meth_set_read(m, nsp_read) &&
	    BIO_meth_set_ctrl(m, nsp_ctrl) && BIO_meth_set_create(m, nsp_create))
		return m;
	BIO_meth_free(m);
	return NULL;
}

void rnsc_tlsio_bio_method_free(BIO_METHOD *m)
{
	BIO_meth_free(m);
}

int rnsc_tlsio_start(rnsc_tlsio *c, SSL_CTX *ctx, BIO_METHOD *bm, int fd, int server,
		     const rnsc_tlsio_peer *peer)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->peer = server ? NULL : peer;
	if (!ctx) {
		c->established = 1;
		return 0;
	}
	c->ssl = SSL_new(ctx);
	BIO *bio = bm ? BIO_new(bm) : NULL;
	if (!c->ssl || !bio) {
		BIO_free(bio);
		goto fail;
	}
	BIO_set_data(bio, (void *)(intptr_t)fd);
	SSL_set_bio(c->ssl, bio, bio); /* the SSL owns the BIO from here */
	if (server) {
		SSL_set_accept_state(c->ssl);
		return 0;
	}
	SSL_set_connect_state(c->ssl);
	if (peer) {
		unsigned char ip[16];
		int is_ip = inet_pton(AF_INET, peer->server_name, ip) == 1 ||
			    inet_pton(AF_INET6, peer->server_name, ip) == 1;
		/* SNI carries host names only (RFC 6066 section 3). */
		if (!is_ip && SSL_set_tlsext_host_name(c->ssl, peer->server_name) != 1)
			goto fail;
		if (peer->verify_chain) {
			X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
			int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, peer->server_name)
				       : X509_VERIFY_PARAM_set1_host(vp, peer->server_name, 0);
			if (ok != 1)
				goto fail;
		}
	}
	return 0;
fail:
	ERR_clear_error();
	SSL_free(c->ssl);
	c->ssl = NULL;
	return RNSC_ERR_NOMEM;
}

/* Maps an SSL_get_error() outcome; fills why for failures. */
static int map_err(rnsc_tlsio *c, int ret, char *why, size_t cap)
{
	int e = SSL_get_error(c->ssl, ret);
	switch (e) {
	case SSL_ERROR_WANT_READ:
		return RNSC_TLSIO_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return RNSC_TLSIO_WANT_WRITE;
	case SSL_ERROR_ZERO_RETURN:
		snprintf(why, cap, "TLS close_notify");
		return RNSC_TLSIO_EOF;
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_error()) {
			ossl_reason(why, cap);
			return RNSC_TLSIO_ERR;
		}
		if (errno == 0 || ret == 0) {
			snprintf(why, cap, "end of stream");
			return RNSC_TLSIO_EOF;
		}
		snprintf(why, cap, "%s", strerror(errno));
		return RNSC_TLSIO_ERR;
	default:
		break;
	}
	long vr = SSL_get_verify_result(c->ssl);
	if (!c->established && vr != X509_V_OK) {
		const char *what = X509_verify_cert_error_string(vr);
		if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH)
			snprintf(why, cap, "certificate verify failed: %s (expected \"%s\")", what,
				 c->peer ? c->peer->server_name : "?");
		else
			snprintf(why, cap, "certificate verify failed: %s", what);
		ERR_clear_error();
	} else {
		ossl_reason(why, cap);
	}
	return RNSC_TLSIO_ERR;
}

static void hex_colon(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 4 <= cap; i++)
		o += (size_t)snprintf(out + o, cap - o, i ? ":%02X" : "%02X", p[i]);
}

int rnsc_tlsio_handshake(rnsc_tlsio *c, char *why, size_t cap)
{
	if (c->established)
		return 0;
	errno = 0;
	ERR_clear_error();
	int r = SSL_do_handshake(c->ssl);
	if (r != 1)
		return map_err(c, r, why, cap);
	if (c->peer && c->peer->has_pin) {
		X509 *x = SSL_get0_peer_certificate(c->ssl);
		uint8_t md[EVP_MAX_MD_SIZE];
		unsigned mdlen = 0;
		if (!x || X509_digest(x, EVP_sha256(), md, &mdlen) != 1 || mdlen != 32) {
			snprintf(why, cap,
				 "pinned certificate check failed: no server certificate");
			return RNSC_TLSIO_ERR;
		}
		if (CRYPTO_memcmp(md, c->peer->pin, 32) != 0) {
			char got[100];
			hex_colon(md, 32, got, sizeof(got));
			snprintf(why, cap,
				 "pinned certificate mismatch: the server presented SHA-256 %s",
				 got);
			return RNSC_TLSIO_ERR;
		}
	}
	c->established = 1;
	return 0;
}

ssize_t rnsc_tlsio_read(rnsc_tlsio *c, void *buf, size_t n, char *why, size_t cap)
{
	if (!c->ssl) {
		for (;;) {
			ssize_t r = recv(c->fd, buf, n, 0);
			if (r > 0)
				return r;
			if (r == 0) {
				snprintf(why, cap, "end of stream");
				return RNSC_TLSIO_EOF;
			}
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return RNSC_TLSIO_WANT_READ;
			snprintf(why, cap, "%s", strerror(errno));
			return RNSC_TLSIO_ERR;
		}
	}
	size_t got = 0;
	errno = 0;
	ERR_clear_error();
	int r = SSL_read_ex(c->ssl, buf, n, &got);
	if (r == 1)
		return (ssize_t)got;
	return map_err(c, r, why, cap);
}

ssize_t rnsc_tlsio_write(rnsc_tlsio *c, const void *buf, size_t n, char *why, size_t cap)
{
	if (!c->ssl) {
		for (;;) {
			ssize_t r = send(c->fd, buf, n, MSG_NOSIGNAL);
			if (r > 0)
				return r;
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return RNSC_TLSIO_WANT_WRITE;
			snprintf(why, cap, "%s", r < 0 ? strerror(errno) : "write returned 0");
			return RNSC_TLSIO_ERR;
		}
	}
	size_t put = 0;
	errno = 0;
	ERR_clear_error();
	int r = SSL_write_ex(c->ssl, buf, n, &put);
	if (r == 1)
		return (ssize_t)put;
	return map_err(c, r, why, cap);
}

size_t rnsc_tlsio_pending(const rnsc_tlsio *c)
{
	return c->ssl ? (size_t)SSL_pending(c->ssl) : 0;
}

void rnsc_tlsio_free(rnsc_tlsio *c)
{
	if (c->ssl) {
		if (c->established && SSL_is_init_finished(c->ssl))
			(void)SSL_shutdown(c->ssl); /* one non-blocking attempt at close_notify */
		ERR_clear_error();
		SSL_free(c->ssl);
		c->ssl = NULL;
	}
	c->established = 0;
}
