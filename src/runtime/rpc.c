/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "rpc.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "msgpack.h"
#include "err.h"
#include "store.h"

static int ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static void wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;
	while (n--)
		*v++ = 0;
}

/* ---- MD5 (RFC 1321) and HMAC-MD5 (RFC 2104) ---------------------------------------------- */

static uint32_t rol(uint32_t x, unsigned c)
{
	return (x << c) | (x >> (32 - c));
}

static void md5_block(uint32_t h[4], const uint8_t *b)
{
	static const uint32_t K[64] = {
		0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
		0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
		0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
		0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
		0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
		0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
		0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
		0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
		0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
		0xeb86d391};
	static const uint8_t S[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
				      5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
				      4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
				      6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
	uint32_t m[16];
	for (int i = 0; i < 16; i++)
		m[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
		       (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
	uint32_t a = h[0], bb = h[1], c = h[2], d = h[3];
	for (unsigned i = 0; i < 64; i++) {
		uint32_t f;
		unsigned g;
		if (i < 16) {
			f = (bb & c) | (~bb & d);
			g = i;
		} else if (i < 32) {
			f = (d & bb) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = bb ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (bb | ~d);
			g = (7 * i) % 16;
		}
		uint32_t tmp = d;
		d = c;
		c = bb;
		bb = bb + rol(a + f + K[i] + m[g], S[i]);
		a = tmp;
	}
	h[0] += a;
	h[1] += bb;
	h[2] += c;
	h[3] += d;
}

/* MD5 over the concatenation of two pieces (the HMAC's inner and outer hashes). */
static void md5_2(uint8_t out[16], const uint8_t *p1, size_t l1, const uint8_t *p2, size_t l2)
{
	uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	uint8_t blk[64];
	size_t fill = 0;
	uint64_t total = (uint64_t)l1 + l2;
	const uint8_t *ps[2] = {p1, p2};
	size_t ls[2] = {l1, l2};
	for (int k = 0; k < 2; k++) {
		const uint8_t *p = ps[k];
		size_t l = ls[k];
		while (l) {
			size_t take = 64 - fill < l ? 64 - fill : l;
			memcpy(blk + fill, p, take);
			fill += take;
			p += take;
			l -= take;
			if (fill == 64) {
				md5_block(h, blk);
				fill = 0;
			}
		}
	}
	blk[fill++] = 0x80;
	if (fill > 56) {
		memset(blk + fill, 0, 64 - fill);
		md5_block(h, blk);
		fill = 0;
	}
	memset(blk + fill, 0, 56 - fill);
	uint64_t bits = total * 8;
	for (int i = 0; i < 8; i++)
		blk[56 + i] = (uint8_t)(bits >> (8 * i));
	md5_block(h, blk);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(h[i] >> (8 * j));
}

void rnsc_md5(uint8_t out[16], const uint8_t *p, size_t len)
{
	md5_2(out, p, len, NULL, 0);
}

void rnsc_hmac_md5(uint8_t out[16], const uint8_t *key, size_t key_len, const uint8_t *msg,
		   size_t len)
{
	uint8_t k[64] = {0}, pad[64], inner[16];
	if (key_len > 64)
		rnsc_md5(k, key, key_len);
	else if (key_len)
		memcpy(k, key, key_len);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	md5_2(inner, pad, 64, msg, len);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	md5_2(out, pad, 64, inner, 16);
}

/* ---- framing ------------------------------------------------------------------------------ */

int rnsc_rpc_frame_header(const uint8_t *p, size_t len, size_t max, size_t *hdr, size_t *body)
{
	if (len < 4)
		return 0;
	int32_t n = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
			      (uint32_t)p[3]);
	if (n >= 0) {
		if ((size_t)n > max)
			return RNSC_ERR_TOOBIG;
		*hdr = 4;
		*body = (size_t)n;
		return 1;
	}
	if (n != -1)
		return RNSC_ERR_MALFORMED;
	if (len < 12)
		return 0;
	uint64_t big = 0;
	for (int i = 0; i < 8; i++)
		big = big << 8 | p[4 + i];
	if (big > max)
		return RNSC_ERR_TOOBIG;
	*hdr = 12;
	*body = (size_t)big;
	return 1;
}

/* ---- the connection state machine --------------------------------------------------------- */

static const char CHALLENGE[] = "#CHALLENGE#";
static const char WELCOME[] = "#WELCOME#";
static const char FAILURE[] = "#FAILURE#";
static const char SHA_TAG[] = "{sha256}";
#define CH_LEN (sizeof(CHALLENGE) - 1)
#define TAG_LEN (sizeof(SHA_TAG) - 1)

/* Handshake steps. Server: 0 wait digest, 1 wait peer challenge, 2 wait welcome, 3 wait
 * request. Client: 0 wait challenge, 1 wait welcome, 2 wait digest, 3 ready/wait response. */

static int fail(rnsc_rpc_conn *c, int err)
{
	c->state = RNSC_RPC_FAILED;
	c->err = err;
	return c->state;
}

static int queue(rnsc_rpc_conn *c, const uint8_t *p, size_t len)
{
	size_t need = 4 + len;
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + need > c->out_cap) {
		size_t pend = c->out_len - c->out_off;
		size_t cap = pend + need;
		if (cap < 256)
			cap = 256;
		uint8_t *n = rnsc_alloc(c->ctx, cap);
		if (!n)
			return RNSC_ERR_NOMEM;
		if (pend)
			memcpy(n, c->out + c->out_off, pend);
		rnsc_free(c->ctx, c->out);
		c->out = n;
		c->out_cap = cap;
		c->out_off = 0;
		c->out_len = pend;
	}
	uint8_t *o = c->out + c->out_len;
	o[0] = (uint8_t)(len >> 24);
	o[1] = (uint8_t)(len >> 16);
	o[2] = (uint8_t)(len >> 8);
	o[3] = (uint8_t)len;
	if (len)
		memcpy(o + 4, p, len);
	c->out_len += need;
	return 0;
}

static int queue_challenge(rnsc_rpc_conn *c)
{
	uint8_t m[CH_LEN + RNSC_RPC_CHALLENGE_LEN];
	int rc = rnsc_random(c->ctx, c->challenge, RNSC_RPC_CHALLENGE_LEN);
	if (rc)
		return rc;
	c->challenge_len = RNSC_RPC_CHALLENGE_LEN;
	c->sha256 = 0;
	memcpy(m, CHALLENGE, CH_LEN);
	memcpy(m + CH_LEN, c->challenge, RNSC_RPC_CHALLENGE_LEN);
	return queue(c, m, sizeof(m));
}

/* The peer's answer to our challenge: legacy HMAC-MD5, or "{sha256}" + HMAC-SHA256. */
static int check_digest(rnsc_rpc_conn *c, const uint8_t *p, size_t len)
{
	uint8_t want[32];
	if (len == 16) {
		rnsc_hmac_md5(want, c->key, c->key_len, c->challenge, c->challenge_len);
		return ct_equal(want, p, 16) ? 0 : RNSC_ERR_AUTH;
	}
	if (len == TAG_LEN + 32 && memcmp(p, SHA_TAG, TAG_LEN) == 0) {
		int rc = rnsc_hmac_sha256(c->ctx, want, c->key, c->key_len, c->challenge,
					  c->challenge_len);
		if (rc)
			return rc;
		return ct_equal(want, p + TAG_LEN, 32) ? 0 : RNSC_ERR_AUTH;
	}
	return RNSC_ERR_AUTH;
}

/* Our answer to the peer's challenge (message = what follows "#CHALLENGE#"). */
static int answer(rnsc_rpc_conn *c, const uint8_t *p, size_t len)
{
	if (len < CH_LEN || memcmp(p, CHALLENGE, CH_LEN) != 0)
		return RNSC_ERR_MALFORMED;
	p += CH_LEN;
	len -= CH_LEN;
	if (len < RNSC_RPC_CHALLENGE_LEN)
		return RNSC_ERR_MALFORMED;
	/* Python >= 3.12 tags its challenges ("{sha256}" + 40 bytes); a plain 20-byte one is
	 * the legacy form even when its first random byte happens to be '{'. */
	if (len > RNSC_RPC_CHALLENGE_LEN && p[0] == '{') {
		if (len <= TAG_LEN || memcmp(p, SHA_TAG, TAG_LEN) != 0)
			return RNSC_ERR_MALFORMED; /* a digest other than sha256: not offered */
		uint8_t r[TAG_LEN + 32];
		memcpy(r, SHA_TAG, TAG_LEN);
		int rc = rnsc_hmac_sha256(c->ctx, r + TAG_LEN, c->key, c->key_len, p, len);
		if (rc)
			return rc;
		return queue(c, r, sizeof(r));
	}
	uint8_t d[16];
	rnsc_hmac_md5(d, c->key, c->key_len, p, len);
	return queue(c, d, sizeof(d));
}

int rnsc_rpc_conn_init(rnsc_rpc_conn *c, rnsc_ctx *ctx, int server, const uint8_t *key,
		       size_t key_len, size_t max_msg)
{
	if (!c || !ctx || (!key && key_len) || key_len > sizeof(c->key))
		return RNSC_ERR_INVAL;
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->server = server;
	if (key_len)
		memcpy(c->key, key, key_len);
	c->key_len = key_len;
	c->max_msg = max_msg;
	c->state = RNSC_RPC_HANDSHAKE;
	if (server) {
		int rc = queue_challenge(c);
		if (rc) {
			rnsc_rpc_conn_free(c);
			return rc;
		}
	}
	return 0;
}

void rnsc_rpc_conn_free(rnsc_rpc_conn *c)
{
	if (!c || !c->ctx)
		return;
	rnsc_free(c->ctx, c->in);
	rnsc_free(c->ctx, c->out);
	rnsc_free(c->ctx, c->msg);
	wipe(c, sizeof(*c)); /* the key */
}

/* One complete message m (len bytes) arrived. Returns 0 or an error. */
static int on_message(rnsc_rpc_conn *c, const uint8_t *m, size_t len)
{
	int rc;
	if (c->server) {
		switch (c->step) {
		case 0: /* digest of our challenge */
			rc = check_digest(c, m, len);
			if (rc) {
				(void)queue(c, (const uint8_t *)FAILURE, sizeof(FAILURE) - 1);
				return rc;
			}
			c->step = 1;
			return queue(c, (const uint8_t *)WELCOME, sizeof(WELCOME) - 1);
		case 1: /* the client's challenge */
			if ((rc = answer(c, m, len)))
				return rc;
			c->step = 2;
			return 0;
		case 2: /* welcome or failure */
			if (len != sizeof(WELCOME) - 1 || memcmp(m, WELCOME, len) != 0)
				return RNSC_ERR_AUTH;
			c->step = 3;
			c->state = RNSC_RPC_READY;
			return 0;
		default:
			break;
		}
	} else {
		switch (c->step) {
		case 0:
			if ((rc = answer(c, m, len)))
				return rc;
			c->step = 1;
			return 0;
		case 1:
			if (len != sizeof(WELCOME) - 1 || memcmp(m, WELCOME, len) != 0)
				return RNSC_ERR_AUTH;
			c->step = 2;
			return queue_challenge(c);
		case 2:
			rc = check_digest(c, m, len);
			if (rc) {
				(void)queue(c, (const uint8_t *)FAILURE, sizeof(FAILURE) - 1);
				return rc;
			}
			c->step = 3;
			c->state = RNSC_RPC_READY;
			return queue(c, (const uint8_t *)WELCOME, sizeof(WELCOME) - 1);
		default:
			break;
		}
	}
	/* step 3: the request (server) or the response (client) */
	if (c->msg)
		return RNSC_ERR_STATE; /* one per connection */
	c->msg = rnsc_alloc(c->ctx, len ? len : 1);
	if (!c->msg)
		return RNSC_ERR_NOMEM;
	if (len)
		memcpy(c->msg, m, len);
	c->msg_len = len;
	c->state = RNSC_RPC_DONE;
	return 0;
}

int rnsc_rpc_conn_feed(rnsc_rpc_conn *c, const uint8_t *p, size_t len)
{
	if (c->state == RNSC_RPC_FAILED)
		return c->state; /* the first reason stays */
	if (c->state == RNSC_RPC_DONE)
		return len ? fail(c, RNSC_ERR_STATE) : c->state;
	if (c->in_len + len > c->in_cap) {
		size_t max = (c->step == 3 ? c->max_msg : RNSC_RPC_HANDSHAKE_MAX) + 12;
		if (c->in_len + len > max + 4096) /* beyond one message plus slack: hostile */
			return fail(c, RNSC_ERR_TOOBIG);
		size_t cap = c->in_cap ? c->in_cap : 512;
		while (cap < c->in_len + len)
			cap *= 2;
		uint8_t *n = rnsc_alloc(c->ctx, cap);
		if (!n)
			return fail(c, RNSC_ERR_NOMEM);
		if (c->in_len)
			memcpy(n, c->in, c->in_len);
		rnsc_free(c->ctx, c->in);
		c->in = n;
		c->in_cap = cap;
	}
	if (len)
		memcpy(c->in + c->in_len, p, len);
	c->in_len += len;
	size_t off = 0;
	while (c->state == RNSC_RPC_HANDSHAKE || c->state == RNSC_RPC_READY) {
		size_t hdr, body;
		size_t max = c->step == 3 ? c->max_msg : RNSC_RPC_HANDSHAKE_MAX;
		int r = rnsc_rpc_frame_header(c->in + off, c->in_len - off, max, &hdr, &body);
		if (r < 0)
			return fail(c, r);
		if (r == 0 || c->in_len - off - hdr < body)
			break;
		int rc = on_message(c, c->in + off + hdr, body);
		off += hdr + body;
		if (rc)
			return fail(c, rc);
		if (c->state == RNSC_RPC_DONE)
			break;
	}
	if (off) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
	if (c->state == RNSC_RPC_DONE && c->in_len)
		return fail(c, RNSC_ERR_MALFORMED); /* bytes after the one message */
	return c->state;
}

int rnsc_rpc_conn_send(rnsc_rpc_conn *c, const uint8_t *p, size_t len)
{
	if (!c || (!p && len))
		return RNSC_ERR_INVAL;
	if (c->server ? c->state != RNSC_RPC_DONE : c->state != RNSC_RPC_READY)
		return RNSC_ERR_STATE;
	if (len > INT32_MAX)
		return RNSC_ERR_TOOBIG;
	return queue(c, p, len);
}

size_t rnsc_rpc_conn_pending(const rnsc_rpc_conn *c, const uint8_t **p)
{
	*p = c->out ? c->out + c->out_off : NULL;
	return c->out_len - c->out_off;
}

void rnsc_rpc_conn_consume(rnsc_rpc_conn *c, size_t n)
{
	size_t pend = c->out_len - c->out_off;
	c->out_off += n > pend ? pend : n;
}

/* ---- endpoint and blocking client ----------------------------------------------------- */

int rnsc_rpc_endpoint(rnsc_ctx *ctx, const rnsc_config_settings *set, const char *dir,
		      struct sockaddr_storage *addr, unsigned *addr_len, uint8_t key[64],
		      size_t *key_len)
{
	if (!ctx || !set || !dir || !addr || !addr_len || !key || !key_len)
		return RNSC_ERR_INVAL;
	memset(addr, 0, sizeof(*addr));
	if (set->shared_instance_unix && set->local_socket_path) {
		struct sockaddr_un *un = (struct sockaddr_un *)addr;
		int l = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "rns/%s/rpc",
				 set->local_socket_path);
		if (l < 0 || (size_t)l >= sizeof(un->sun_path) - 1)
			return RNSC_ERR_RANGE;
		un->sun_family = AF_UNIX;
		*addr_len = (unsigned)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)l);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)addr;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)set->instance_control_port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*addr_len = sizeof(*in);
	}
	if (set->rpc_key && set->rpc_key_len && set->rpc_key_len <= 64) {
		memcpy(key, set->rpc_key, set->rpc_key_len);
		*key_len = set->rpc_key_len;
		return 0;
	}
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/storage/transport_identity", dir) >= (int)sizeof(path))
		return RNSC_ERR_RANGE;
	uint8_t prv[64];
	int rc = rnsc_store_read_exact(path, prv, sizeof(prv));
	if (rc)
		return rc;
	rc = rnsc_sha256(ctx, key, prv, sizeof(prv)); /* Identity.full_hash(get_private_key()) */
	wipe(prv, sizeof(prv));
	if (rc)
		return rc;
	*key_len = 32;
	return 0;
}

static int64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rnsc_rpc_call(rnsc_ctx *ctx, const struct sockaddr_storage *addr, unsigned addr_len,
		  const uint8_t *key, size_t key_len, const uint8_t *req, size_t req_len,
		  uint8_t **resp, size_t *resp_len, int timeout_ms)
{
	if (!ctx || !addr || !resp || !resp_len || (!req && req_len))
		return RNSC_ERR_INVAL;
	*resp = NULL;
	*resp_len = 0;
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return RNSC_ERR_IO;
	if (connect(fd, (const struct sockaddr *)addr, addr_len) != 0 && errno != EINPROGRESS) {
		close(fd);
		return RNSC_ERR_IO;
	}
	rnsc_rpc_conn c;
	int rc = rnsc_rpc_conn_init(&c, ctx, 0, key, key_len, RNSC_RPC_RESPONSE_MAX);
	if (rc) {
		close(fd);
		return rc;
	}
	int64_t end = ms_now() + timeout_ms;
	int sent_req = 0;
	rc = RNSC_ERR_IO;
	for (;;) {
		if (c.state == RNSC_RPC_READY && !sent_req) {
			if ((rc = rnsc_rpc_conn_send(&c, req, req_len)))
				break;
			sent_req = 1;
		}
		const uint8_t *op;
		size_t pend = rnsc_rpc_conn_pending(&c, &op);
		int64_t left = end - ms_now();
		if (left <= 0) {
			rc = RNSC_ERR_IO;
			break;
		}
		struct pollfd pfd = {.fd = fd, .events = POLLIN | (pend ? POLLOUT : 0)};
		int pr = poll(&pfd, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			rc = RNSC_ERR_IO;
			break;
		}
		if (pfd.revents & POLLOUT) {
			ssize_t w = send(fd, op, pend, MSG_NOSIGNAL);
			if (w > 0)
				rnsc_rpc_conn_consume(&c, (size_t)w);
			else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				rc = RNSC_ERR_IO;
				break;
			}
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			uint8_t buf[16384];
			ssize_t r = recv(fd, buf, sizeof(buf), 0);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				/* closed during the handshake: the server refused our key */
				rc = c.step < 3 ? RNSC_ERR_AUTH : RNSC_ERR_IO;
				if (r < 0 && c.step == 0)
					rc = RNSC_ERR_IO;
				break;
			}
			int st = rnsc_rpc_conn_feed(&c, buf, (size_t)r);
			if (st == RNSC_RPC_FAILED) {
				rc = c.err;
				break;
			}
			if (st == RNSC_RPC_DONE) {
				*resp = malloc(c.msg_len ? c.msg_len : 1);
				if (!*resp) {
					rc = RNSC_ERR_NOMEM;
					break;
				}
				memcpy(*resp, c.msg, c.msg_len);
				*resp_len = c.msg_len;
				rc = 0;
				break;
			}
		}
	}
	/* a refusal we noticed still tells the server (best effort) */
	const uint8_t *op;
	size_t pend = rnsc_rpc_conn_pending(&c, &op);
	if (pend)
		(void)send(fd, op, pend, MSG_NOSIGNAL | MSG_DONTWAIT);
	rnsc_rpc_conn_free(&c);
	close(fd);
	return rc;
}

/* ---- requests ------------------------------------------------------------------------- */

static int streq(const char *s, size_t len, const char *lit)
{
	return s && strlen(lit) == len && memcmp(s, lit, len) == 0;
}

int rnsc_rpc_request_parse(rnsc_rpc_request *q, const uint8_t *p, size_t len)
{
	memset(q, 0, sizeof(*q));
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n;
	if (rnsc_mp_read_map(&r, &n))
		return RNSC_ERR_MALFORMED;
	for (size_t i = 0; i < n; i++) {
		const char *k;
		size_t kl;
		if (rnsc_mp_read_str(&r, &k, &kl))
			return RNSC_ERR_MALFORMED;
		rnsc_mp_token t;
		if (rnsc_mp_peek(&r, &t))
			return RNSC_ERR_MALFORMED;
		if (streq(k, kl, "get") || streq(k, kl, "drop") ||
		    streq(k, kl, "destination_data") || streq(k, kl, "identity_data")) {
			const char *v;
			size_t vl;
			if (rnsc_mp_read_str(&r, &v, &vl))
				return RNSC_ERR_MALFORMED;
			if (k[0] == 'g') {
				q->get = v;
				q->get_len = vl;
			} else if (k[0] == 'd' && kl == 4) {
				q->drop = v;
				q->drop_len = vl;
			} else if (k[0] == 'd') {
				q->dest_data = v;
				q->dest_data_len = vl;
			} else {
				q->ident_data = v;
				q->ident_data_len = vl;
			}
			continue;
		}
		if ((streq(k, kl, "manage") || streq(k, kl, "name")) && t.type == RNSC_MP_STR) {
			int m = k[0] == 'm';
			if (rnsc_mp_read_str(&r, m ? &q->manage : &q->name,
					     m ? &q->manage_len : &q->name_len))
				return RNSC_ERR_MALFORMED;
			continue;
		}
		if (streq(k, kl, "max_hops") && t.type != RNSC_MP_NIL) {
			if (rnsc_mp_read_int(&r, &q->max_hops))
				return RNSC_ERR_MALFORMED;
			q->has_max_hops = 1;
			continue;
		}
		if ((streq(k, kl, "destination_hash") || streq(k, kl, "packet_hash") ||
		     streq(k, kl, "identity_hash")) &&
		    t.type == RNSC_MP_BIN) {
			if (rnsc_mp_read_bin(&r, &q->dest, &q->dest_len))
				return RNSC_ERR_MALFORMED;
			continue;
		}
		if (streq(k, kl, "blackhole_identity") || streq(k, kl, "unblackhole_identity")) {
			if (k[0] == 'b')
				q->has_blackhole = 1;
			else
				q->has_unblackhole = 1;
			if (t.type == RNSC_MP_BIN) {
				if (rnsc_mp_read_bin(&r, &q->bh_id, &q->bh_id_len))
					return RNSC_ERR_MALFORMED;
				continue;
			}
		}
		if (streq(k, kl, "until") && t.type != RNSC_MP_NIL) {
			/* time.time() + duration: a float; an int from other callers */
			if (t.type == RNSC_MP_FLOAT64 || t.type == RNSC_MP_FLOAT32)
				q->until = t.type == RNSC_MP_FLOAT64 ? t.f64 : t.f32;
			else if (t.type == RNSC_MP_UINT)
				q->until = (double)t.u, q->until_int = 1;
			else if (t.type == RNSC_MP_INT)
				q->until = 1e-9, q->until_int = 1; /* before the epoch: expired */
			else
				return RNSC_ERR_MALFORMED;
			if (!(q->until >= 0))
				return RNSC_ERR_MALFORMED;
		}
		if (streq(k, kl, "reason") && t.type == RNSC_MP_STR) {
			if (rnsc_mp_read_str(&r, &q->reason, &q->reason_len))
				return RNSC_ERR_MALFORMED;
			continue;
		}
		if (rnsc_mp_skip(&r))
			return RNSC_ERR_MALFORMED;
	}
	return 0;
}
