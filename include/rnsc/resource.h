/* SPDX-License-Identifier: MIT */
/*
 * Resources (Resource.py, rns 1.5.4): bulk transfers over a link, sans-I/O. One rnsc_resource
 * is one transfer in one direction, all its segments included: a sender (created by
 * rnsc_resource_send) or a receiver (rnsc_resource_accept). Time comes in as `now`
 * (milliseconds, one monotonic-enough scale per resource); randomness (random hashes, token
 * IVs through the link's encrypt) from the context's crypto backend; packets leave through
 * the owner's send callback. The owner feeds every resource packet of the link to
 * rnsc_resource_packet() and calls rnsc_resource_tick() no later than
 * rnsc_resource_next_deadline().
 *
 * What goes over the link (byte-identical to the reference):
 *   segment plaintext P = [3-byte size + packed metadata, first segment only] + data chunk
 *   payload = 4 random bytes + (bz2(P) if that is smaller and auto-compress is on, else P),
 *   encrypted whole with the link's token, cut into parts of sdu = link MTU - 36 bytes,
 *   sent as DATA/RESOURCE packets in the clear. hash = SHA-256(P + random_hash), map hash of
 *   a part = SHA-256(part + random_hash)[:4], proof = SHA-256(P + hash) sent back as
 *   PROOF/RESOURCE_PRF (hash + proof). RESOURCE_ADV / REQ / HMU / ICL / RCL are encrypted by
 *   the link (the send callback's business).
 *   A resource larger than MAX_EFFICIENT_SIZE (metadata included) goes in segments of at most
 *   MAX_EFFICIENT_SIZE plaintext bytes, each its own advertisement, hash and proof, the next
 *   advertised once the previous is proved; the receiver appends segment after segment to its
 *   sink, in order.
 *
 * Memory bound (per resource, whatever the total size): one segment at a time.
 *   sender:   the encrypted segment (<= MAX_EFFICIENT_SIZE + bz2 worst case + 64 bytes, about
 *             1.01 MiB) + its map hashes, the next one's once prepared, plus transiently the
 *             plaintext and the bz2 output while a segment is prepared: about 4.1 MiB peak.
 *   receiver: the advertised transfer size t (<= 3 * MAX_EFFICIENT_SIZE, checked, normally
 *             about 1 MiB) for the parts, plus transiently the decrypted copy; a compressed
 *             segment is decompressed twice in 64 KiB chunks (once to check its hash, once
 *             to hand it on), never whole, up to RNSC_RESOURCE_MAX_DECOMPRESSED bytes as the
 *             reference allows; the first segment's metadata (< 16 MiB) is held until it
 *             is delivered: at most 2 * t + 64 KiB beyond the metadata.
 *   Data streams from the owner's read callback and to its write callback, so a 1 GiB file
 *   never lives in memory.
 *
 * Deliberate differences from the reference:
 *   - a compressed segment costs two decompressions (the reference decompresses it once into
 *     memory): the price of never holding up to 64 MiB of output.
 *   - the sender prepares the next segment one loop pass after the last part
 *     of the previous one went out, while the receiver assembles that one (the reference
 *     starts it in a thread as the previous one is advertised): the same bytes, no threads.
 *   - the proof-timeout "cache request" the reference sends (Transport.cache_request) is not
 *     sent: rnsc keeps no packet cache; the retry count and timings are the reference's.
 *
 * Ownership: the resource borrows ctx, the link callbacks and the application callbacks (all
 * must outlive it) and owns everything else. Callbacks run inside the call that caused them;
 * they must not delete the resource (delete it after the call returns, e.g. once
 * rnsc_resource_status() is final).
 * Threading: one thread at a time per resource (the link's thread).
 */
#ifndef RNSC_RESOURCE_H
#define RNSC_RESOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "resource_adv.h"
#include "token.h"

/* Resource.py constants (times in milliseconds, rates in bytes per second). */
#define RNSC_RESOURCE_WINDOW 4u
#define RNSC_RESOURCE_WINDOW_MIN 2u
#define RNSC_RESOURCE_WINDOW_MAX_SLOW 10u
#define RNSC_RESOURCE_WINDOW_MAX_VERY_SLOW 4u
#define RNSC_RESOURCE_WINDOW_MAX_FAST 75u
#define RNSC_RESOURCE_FAST_RATE_THRESHOLD                                                          \
	(RNSC_RESOURCE_WINDOW_MAX_SLOW - RNSC_RESOURCE_WINDOW - 2u)
#define RNSC_RESOURCE_VERY_SLOW_RATE_THRESHOLD 2u
#define RNSC_RESOURCE_RATE_FAST (50.0 * 1000.0 / 8.0)
#define RNSC_RESOURCE_RATE_VERY_SLOW (2.0 * 1000.0 / 8.0)
#define RNSC_RESOURCE_WINDOW_FLEXIBILITY 4u
#define RNSC_RESOURCE_METADATA_MAX_SIZE (16u * 1024u * 1024u - 1u)
#define RNSC_RESOURCE_AUTO_COMPRESS_MAX_SIZE (64ull * 1024u * 1024u)
#define RNSC_RESOURCE_PART_TIMEOUT_FACTOR 4u
#define RNSC_RESOURCE_PART_TIMEOUT_FACTOR_AFTER_RTT 2u
#define RNSC_RESOURCE_PROOF_TIMEOUT_FACTOR 3u
#define RNSC_RESOURCE_HMU_WAIT_FACTOR 3.5
#define RNSC_RESOURCE_MAX_RETRIES 16u
#define RNSC_RESOURCE_MAX_ADV_RETRIES 4u
#define RNSC_RESOURCE_SENDER_GRACE_TIME_MS 10000u
#define RNSC_RESOURCE_PROCESSING_GRACE_MS 1000u
/* A response's first advertisement is sent once more, without spending a retry, when no part
 * request came within this much (plus 3 link RTTs): the reference registers a request as
 * pending only after its packet went out, and drops a response advertisement that beats it
 * (interop/REFERENCE-QUIRKS.md); its own re-advertisement would come only after timeout + 1 s. */
#define RNSC_RESOURCE_RESPONSE_READV_MS 100u
#define RNSC_RESOURCE_RETRY_GRACE_TIME_MS 250u
#define RNSC_RESOURCE_PER_RETRY_DELAY_MS 500u
#define RNSC_RESOURCE_WATCHDOG_MAX_SLEEP_MS 1000u
/* Resource.RESPONSE_MAX_GRACE_TIME (for the request manager's response timeouts) */
#define RNSC_RESOURCE_RESPONSE_MAX_GRACE_TIME_MS 10000u
#define RNSC_RESOURCE_HASHMAP_IS_NOT_EXHAUSTED 0x00
#define RNSC_RESOURCE_HASHMAP_IS_EXHAUSTED 0xFF
/* Largest decompressed segment a receiver accepts: Resource.AUTO_COMPRESS_MAX_SIZE, the
 * reference's max_decompressed_size (decompression streams: see above). */
#define RNSC_RESOURCE_MAX_DECOMPRESSED (64u * 1024u * 1024u)
/* Reticulum.HEADER_MAXSIZE + IFAC_MIN_SIZE: a part carries link MTU - this many bytes. */
#define RNSC_RESOURCE_SDU_OVERHEAD 36u

/* Resource.NONE ... REJECTED */
enum rnsc_resource_status {
	RNSC_RESOURCE_NONE = 0x00,
	RNSC_RESOURCE_QUEUED = 0x01,
	RNSC_RESOURCE_ADVERTISED = 0x02,
	RNSC_RESOURCE_TRANSFERRING = 0x03,
	RNSC_RESOURCE_AWAITING_PROOF = 0x04,
	RNSC_RESOURCE_ASSEMBLING = 0x05,
	RNSC_RESOURCE_COMPLETE = 0x06,
	RNSC_RESOURCE_FAILED = 0x07,
	RNSC_RESOURCE_CORRUPT = 0x08,
	RNSC_RESOURCE_REJECTED = 0x09,
};

typedef struct rnsc_resource rnsc_resource;

/* The link a resource runs on, as the owner provides it. */
typedef struct rnsc_resource_link {
	void *ud;
	/* Sends a packet on the link (DATA with a RESOURCE_* context, or PROOF/RESOURCE_PRF),
	 * encrypting what the link encrypts. Returns the packet's length on the wire (>= 0) or
	 * a negative error (the resource then fails, as the reference cancels when a send
	 * raises). */
	int (*send)(void *ud, int packet_type, int context, const uint8_t *data, size_t len);
	/* Link.encrypt / Link.decrypt (rnsc_link_encrypt / rnsc_link_decrypt). */
	int (*encrypt)(void *ud, uint8_t *out, size_t cap, const uint8_t *pt, size_t len);
	int (*decrypt)(void *ud, uint8_t *out, size_t cap, const uint8_t *ct, size_t len);
	/* rnsc_link_encrypt_begin (optional): with it, a sender of several segments prepares
	 * the next one in slices between the loop's passes while the current one transfers,
	 * instead of all at once after its last part. */
	int (*encrypt_begin)(void *ud, rnsc_token_enc *e, uint8_t out[16]);
	/* Link.teardown (optional): a receiver whose decompressed segment exceeds the limit
	 * rejects it and tears the link down, as the reference does. */
	void (*teardown)(void *ud);
	size_t mtu;                  /* the link's MTU; sdu = mtu - 36 */
	double rtt;                  /* the link's RTT in seconds (> 0) */
	uint64_t establishment_cost; /* bytes of the link handshake (for the initial rate) */
	/* Link.last_resource_window / last_resource_eifr from the previous incoming resource
	 * on this link (0: none); the owner keeps them (rnsc_resource_window / _eifr). A window
	 * above RNSC_RESOURCE_WINDOW_MAX_FAST is taken as that. */
	unsigned last_window;
	double last_eifr;
} rnsc_resource_link;

/* Application callbacks. Any may be NULL except read (sender) and write (receiver). */
typedef struct rnsc_resource_callbacks {
	/* Sender: fills buf with len bytes of the data at offset off (metadata excluded).
	 * Returns len, or a negative error (fails the resource). */
	int (*read)(void *ud, uint64_t off, uint8_t *buf, size_t len);
	/* Receiver: appends len bytes of received data (metadata stripped), segment by segment,
	 * only after the segment's hash checked. Returns 0 or a negative error. */
	int (*write)(void *ud, const uint8_t *p, size_t len);
	/* Receiver: the packed metadata (MessagePack as the sender packed it), once. */
	void (*metadata)(void *ud, rnsc_resource *r, const uint8_t *p, size_t len);
	void (*progress)(void *ud, rnsc_resource *r);
	/* The transfer ended: COMPLETE (all segments), FAILED, CORRUPT or REJECTED. */
	void (*concluded)(void *ud, rnsc_resource *r);
} rnsc_resource_callbacks;

typedef struct rnsc_resource_params {
	uint64_t size;           /* data bytes served by read() */
	const uint8_t *metadata; /* packed MessagePack (umsgpack.packb(metadata)), or NULL */
	size_t metadata_len;     /* <= METADATA_MAX_SIZE */
	/* auto_compress: 0 off, else on for data up to auto_compress_limit bytes (0: 64 MiB). */
	int auto_compress;
	uint64_t auto_compress_limit;
	const uint8_t *request_id; /* NULL: none */
	size_t request_id_len;     /* 1..32 */
	int is_response;
	/* advertisement timeout in ms; 0: link rtt * 6 (Link.traffic_timeout_factor) */
	uint64_t timeout_ms;
	/* Prepare the first segment but do not advertise it: state QUEUED until
	 * rnsc_resource_advertise() (the reference queues a resource while its link has another
	 * outgoing one: Link.ready_for_new_resource). */
	int queued;
} rnsc_resource_params;

/* Sender: prepares the first segment and sends its advertisement (state ADVERTISED).
 * Returns 0 (caller owns *out), RNSC_ERR_INVAL, RNSC_ERR_TOOBIG (metadata), RNSC_ERR_NOMEM,
 * the errors of read(), of encrypt() and of send(). */
RNSC_API int rnsc_resource_send(rnsc_ctx *ctx, rnsc_resource **out, const rnsc_resource_link *link,
				const rnsc_resource_callbacks *cb, void *cb_ud,
				const rnsc_resource_params *p, uint64_t now);

/* Advertises a QUEUED resource (see rnsc_resource_params.queued). Returns 0,
 * RNSC_ERR_STATE (not QUEUED), the errors of send(). */
RNSC_API int rnsc_resource_advertise(rnsc_resource *r, uint64_t now);

/* Receiver: Resource.accept for an advertisement (adv_plain is the decrypted RESOURCE_ADV
 * data): registers the hashmap and sends the first part request (state TRANSFERRING).
 * request_id (may be NULL) is stored as Resource.request_id.
 * Returns 0 (caller owns *out), RNSC_ERR_INVAL, the errors of rnsc_resource_adv_unpack(),
 * RNSC_ERR_MALFORMED (an empty hashmap), RNSC_ERR_NOMEM, the errors of send(). */
RNSC_API int rnsc_resource_accept(rnsc_ctx *ctx, rnsc_resource **out,
				  const rnsc_resource_link *link, const rnsc_resource_callbacks *cb,
				  void *cb_ud, const uint8_t *adv_plain, size_t len, uint64_t now);
/* Receiver between segments: whether adv (segment i of a split resource) continues r (same
 * original hash, next index), and takes it if so. Returns 1 taken, 0 not r's, negative
 * errors as accept. */
RNSC_API int rnsc_resource_accept_segment(rnsc_resource *r, const rnsc_resource_adv *adv,
					  uint64_t now);
/* Resource.reject: the RESOURCE_RCL packet for an advertisement that is not accepted.
 * Returns 0, the errors of unpack and of send. */
RNSC_API int rnsc_resource_reject(const rnsc_resource_link *link, const uint8_t *adv_plain,
				  size_t len);

/* Frees everything; NULL is fine. Nothing is sent (cancel first for an orderly end). */
RNSC_API void rnsc_resource_del(rnsc_resource *r);

/* One resource packet of the link (DATA contexts RESOURCE (part, as received),
 * RESOURCE_REQ / HMU / ICL / RCL (decrypted), PROOF context RESOURCE_PRF (as received)).
 * packet_hash identifies a request (duplicates are ignored). Returns 0 when the packet was
 * r's and handled, RNSC_ERR_NOTFOUND when it names another resource (or is not for this
 * direction), RNSC_ERR_MALFORMED when it is too short to name one. A part goes to every
 * incoming resource of a link, as in the reference. */
RNSC_API int rnsc_resource_packet(rnsc_resource *r, int packet_type, int context,
				  const uint8_t *data, size_t len, const uint8_t packet_hash[32],
				  uint64_t now);

/* The watchdog: timeouts, retries and cancellation at now; and deferred work. */
RNSC_API void rnsc_resource_tick(rnsc_resource *r, uint64_t now);
/* When tick next has something to do; UINT64_MAX when the resource is done. */
RNSC_API uint64_t rnsc_resource_next_deadline(const rnsc_resource *r);
/* 1 while tick has deferred work (preparing the next segment, whole or a slice at a time)
 * that should run on the owner's next loop pass, after the packets just sent have left and
 * those just arrived are handled, rather than at a millisecond deadline. */
RNSC_API int rnsc_resource_work_deferred(const rnsc_resource *r);

/* Resource.cancel: ICL (sender) or RCL (receiver) while the link is up, state FAILED,
 * concluded callback. No-op once concluded. */
RNSC_API void rnsc_resource_cancel(rnsc_resource *r, uint64_t now);
/* The link went down: FAILED without sending anything (no-op once concluded). */
RNSC_API void rnsc_resource_link_closed(rnsc_resource *r);

/* State. */
RNSC_API int rnsc_resource_status(const rnsc_resource *r);
/* 1 once the transfer concluded (COMPLETE with every segment, FAILED, CORRUPT, REJECTED). */
RNSC_API int rnsc_resource_done(const rnsc_resource *r);
RNSC_API int rnsc_resource_is_initiator(const rnsc_resource *r);
RNSC_API const uint8_t *rnsc_resource_hash(const rnsc_resource *r);          /* segment */
RNSC_API const uint8_t *rnsc_resource_original_hash(const rnsc_resource *r); /* first segment */
/* Resource.get_progress (0..1), get_segment_progress, sizes (total_size: data and metadata
 * of all segments; transfer size: this segment's encrypted size), parts, segments. */
RNSC_API double rnsc_resource_progress(const rnsc_resource *r);
RNSC_API double rnsc_resource_segment_progress(const rnsc_resource *r);
RNSC_API uint64_t rnsc_resource_total_size(const rnsc_resource *r);
RNSC_API uint64_t rnsc_resource_transfer_size(const rnsc_resource *r);
RNSC_API size_t rnsc_resource_parts(const rnsc_resource *r);
RNSC_API unsigned rnsc_resource_segment_index(const rnsc_resource *r);
RNSC_API unsigned rnsc_resource_segments(const rnsc_resource *r);
RNSC_API int rnsc_resource_flags(const rnsc_resource *r);
RNSC_API int rnsc_resource_compressed(const rnsc_resource *r);
/* Request id (NULL when none) and its length. */
RNSC_API const uint8_t *rnsc_resource_request_id(const rnsc_resource *r, size_t *len);
/* Receiver: the window and expected in-flight rate to carry to the link's next resource. */
RNSC_API unsigned rnsc_resource_window(const rnsc_resource *r);
RNSC_API double rnsc_resource_eifr(const rnsc_resource *r);
/* Counters for tests: part requests sent (receiver) / parts sent incl. resends (sender),
 * retries taken, advertisements sent. */
typedef struct rnsc_resource_stats {
	uint64_t requests, parts, resent_parts, retries, advertisements, hmus, bytes;
	uint64_t early_advertisements; /* of advertisements: RNSC_RESOURCE_RESPONSE_READV_MS */
} rnsc_resource_stats;
RNSC_API void rnsc_resource_stats_get(const rnsc_resource *r, rnsc_resource_stats *out);

RNSC_API const char *rnsc_resource_status_name(int status);

#endif
