/* SPDX-License-Identifier: MIT */
/*
 * The shared instance's RPC channel, as the reference's tools speak it (rns 1.5.4,
 * Reticulum.rpc_loop / get_rpc_client): Python's multiprocessing.connection over the
 * instance control socket ("\0rns/<instance_name>/rpc", or TCP 127.0.0.1:
 * instance_control_port), authenticated with an HMAC challenge in both directions, then
 * one request and one response per connection, each a msgpack document (the reference
 * packs calls with its vendored umsgpack, not pickle: see msgpack.h).
 *
 * Wire (CPython 3.11 multiprocessing/connection.py):
 *   - message: a 4-byte big-endian signed length, then the bytes; length -1 announces an
 *     8-byte unsigned length (messages over 2 GiB), which rnsc refuses beyond its bound;
 *   - server (Listener.accept): sends "#CHALLENGE#" + 20 random bytes, expects
 *     HMAC-MD5(key, those 20 bytes), answers "#WELCOME#" or "#FAILURE#"; then the client
 *     challenges the server the same way. Python >= 3.12 sends "#CHALLENGE#{sha256}" + 40
 *     random bytes and expects "{sha256}" + HMAC-SHA256(key, "{sha256}" + bytes); both
 *     forms are understood here, and rnsc challenges with the legacy form every Python
 *     version answers.
 *   - key: [reticulum] rpc_key, else SHA-256 of the transport identity's 64-byte private
 *     key (the storage/transport_identity file: the reference's Transport._identity).
 *
 * rnsc_rpc_conn is the sans-I/O state machine of one connection (either side): bytes in
 * through feed(), bytes out through an internal buffer the caller drains; the request
 * (server) or response (client) comes out whole once authenticated. Bounded: handshake
 * messages of at most 256 bytes (as Python), request/response bodies of at most max_msg.
 *
 * Ownership: a connection owns its buffers (context allocator) until rnsc_rpc_conn_free().
 * Threading: plain caller-owned values.
 */
#ifndef RNSC_RPC_H
#define RNSC_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "cfgfile.h"
#include "ctx.h"

#define RNSC_RPC_CHALLENGE_LEN 20         /* MESSAGE_LENGTH */
#define RNSC_RPC_HANDSHAKE_MAX 256        /* recv_bytes(256) during the handshake */
#define RNSC_RPC_REQUEST_MAX 65536u       /* rnsc's bound on one request */
#define RNSC_RPC_RESPONSE_MAX (64u << 20) /* and on one response a client accepts */

/* HMAC-MD5 (RFC 2104 over RFC 1321), what multiprocessing.connection authenticates with. */
RNSC_API void rnsc_md5(uint8_t out[16], const uint8_t *p, size_t len);
RNSC_API void rnsc_hmac_md5(uint8_t out[16], const uint8_t *key, size_t key_len, const uint8_t *msg,
			    size_t len);

/*
 * One message header at p (len bytes available). Returns 1 with *hdr (4 or 12) and *body
 * set when the header is complete, 0 when more bytes are needed, RNSC_ERR_TOOBIG when the
 * body would exceed max, RNSC_ERR_MALFORMED for a negative length other than -1.
 */
RNSC_API int rnsc_rpc_frame_header(const uint8_t *p, size_t len, size_t max, size_t *hdr,
				   size_t *body);

enum rnsc_rpc_state {
	RNSC_RPC_HANDSHAKE = 0,
	RNSC_RPC_READY = 1,  /* authenticated: server waits for / has the request; client
				may send */
	RNSC_RPC_DONE = 2,   /* the request (server) or response (client) is complete */
	RNSC_RPC_FAILED = 3, /* refused or protocol error: close the connection */
};

typedef struct rnsc_rpc_conn {
	rnsc_ctx *ctx;
	int server;
	int state; /* enum rnsc_rpc_state */
	int step;  /* handshake progress */
	int err;   /* why FAILED: RNSC_ERR_AUTH, _MALFORMED, _TOOBIG, _NOMEM */
	uint8_t key[64];
	size_t key_len;
	uint8_t challenge[64]; /* what we asked the peer to sign */
	size_t challenge_len;
	int sha256; /* the challenge we sent uses the {sha256} form */
	size_t max_msg;
	uint8_t *in;
	size_t in_len, in_cap;
	uint8_t *out;
	size_t out_off, out_len, out_cap;
	uint8_t *msg; /* the request (server) / response (client) once DONE */
	size_t msg_len;
} rnsc_rpc_conn;

/* Starts a connection. A server queues its challenge at once (draw 20 random bytes from
 * the context). key is copied (at most 64 bytes). max_msg bounds the request (server) or
 * response (client). Returns 0, RNSC_ERR_INVAL, RNSC_ERR_NOMEM or crypto errors. */
RNSC_API int rnsc_rpc_conn_init(rnsc_rpc_conn *c, rnsc_ctx *ctx, int server, const uint8_t *key,
				size_t key_len, size_t max_msg);
RNSC_API void rnsc_rpc_conn_free(rnsc_rpc_conn *c);
/* Feeds received bytes. Returns the new state (enum rnsc_rpc_state); FAILED sets c->err. */
RNSC_API int rnsc_rpc_conn_feed(rnsc_rpc_conn *c, const uint8_t *p, size_t len);
/* Queues one message (the request on a READY client, the response on a DONE server).
 * Returns 0, RNSC_ERR_STATE, RNSC_ERR_TOOBIG or RNSC_ERR_NOMEM. */
RNSC_API int rnsc_rpc_conn_send(rnsc_rpc_conn *c, const uint8_t *p, size_t len);
/* Bytes waiting to be written: *p valid until the next call on c. consume() drops n of
 * them once written. */
RNSC_API size_t rnsc_rpc_conn_pending(const rnsc_rpc_conn *c, const uint8_t **p);
RNSC_API void rnsc_rpc_conn_consume(rnsc_rpc_conn *c, size_t n);

/* Where the RPC listens and with which key, from the settings and the config folder (the
 * transport identity file under <dir>/storage). addr receives a sockaddr; *addr_len its
 * length. Returns 0, RNSC_ERR_NOENT (no identity file yet), or store errors. */
struct sockaddr_storage;
RNSC_API int rnsc_rpc_endpoint(rnsc_ctx *ctx, const rnsc_config_settings *set, const char *dir,
			       struct sockaddr_storage *addr, unsigned *addr_len, uint8_t key[64],
			       size_t *key_len);

/*
 * A blocking client call (rnsc status, rnsc path): connects, authenticates, sends req,
 * returns the response in *resp (malloc'd, caller frees). timeout_ms bounds the whole
 * call. Returns 0, RNSC_ERR_IO (cannot connect: no shared instance), RNSC_ERR_AUTH (key
 * refused either way), RNSC_ERR_IO also for the timeout, RNSC_ERR_MALFORMED, RNSC_ERR_TOOBIG,
 * RNSC_ERR_NOMEM.
 */
RNSC_API int rnsc_rpc_call(rnsc_ctx *ctx, const struct sockaddr_storage *addr, unsigned addr_len,
			   const uint8_t *key, size_t key_len, const uint8_t *req, size_t req_len,
			   uint8_t **resp, size_t *resp_len, int timeout_ms);

/*
 * One call as the reference's tools send it: a msgpack map such as {"get":
 * "path_table", "max_hops": None}, {"drop": "path", "destination_hash": b"..."},
 * {"destination_data": "used", "destination_hash": ...}. Strings and bytes point into the
 * request (not NUL-terminated); absent fields are NULL / 0. Unknown keys are skipped.
 * Returns 0 or RNSC_ERR_MALFORMED (not a map with str keys, or a known key with a value of
 * the wrong type).
 */
typedef struct rnsc_rpc_request {
	const char *get, *drop, *dest_data, *ident_data;
	size_t get_len, drop_len, dest_data_len, ident_data_len;
	int has_blackhole, has_unblackhole;
	/* blackhole_identity / unblackhole_identity: the identity hash (any length as sent);
	 * until (UNIX seconds, 0: None; until_int when sent as an int) and reason (NULL: None) */
	const uint8_t *bh_id;
	size_t bh_id_len;
	double until;
	int until_int;
	const char *reason;
	size_t reason_len;
	int has_max_hops;
	int64_t max_hops;
	const uint8_t *dest; /* destination_hash, packet_hash or identity_hash */
	size_t dest_len;
	/* rns 1.5.7's interface management: "manage" (attach_interface, ...) and its "name" */
	const char *manage, *name;
	size_t manage_len, name_len;
} rnsc_rpc_request;
RNSC_API int rnsc_rpc_request_parse(rnsc_rpc_request *q, const uint8_t *p, size_t len);

#endif
