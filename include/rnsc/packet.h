/* SPDX-License-Identifier: MIT */
/*
 * Packets (mirrors the reference's Packet.py, rns 1.5.4): header layout, flags, contexts, the
 * packet hash, and the MTU / MDU arithmetic. Sans-I/O and allocation-free: pack writes into a
 * caller buffer, unpack fills a view whose data pointer borrows the caller's bytes.
 *
 * Wire layout:
 *   HEADER_1: flags(1) hops(1) destination(16)                 context(1) data(>= 1)
 *   HEADER_2: flags(1) hops(1) transport_id(16) destination(16) context(1) data(>= 1)
 *   flags = ifac(1 bit, 0x80) header_type(1, 0x40) context_flag(1, 0x20)
 *           transport_type(1, 0x10) destination_type(2, 0x0c) packet_type(2, 0x03)
 * The IFAC bit belongs to the interface layer (ifac.h): packets handed to and returned by this
 * module never carry it. Only BROADCAST (0) and TRANSPORT (1) fit the one-bit transport field;
 * the reference's RELAY and TUNNEL constants cannot be expressed on the wire.
 *
 * Packet hash (as the reference's get_hashable_part): SHA-256 over
 *   (flags & 0x0f) || raw[2:]            for HEADER_1
 *   (flags & 0x0f) || raw[18:]           for HEADER_2 (hops and transport id skipped)
 * so the hash survives hop increments and transport insertion. The truncated hash is its first
 * 16 bytes; a proof for the packet is addressed to that truncated hash.
 *
 * Payload encryption is not done here: rnsc_packet_encrypts() says whether the reference
 * encrypts a payload of that shape for its destination (Packet.pack's rules); the caller
 * encrypts with identity.h / token.h / the link and packs the ciphertext as data.
 *
 * Threading: no shared state; every function is reentrant.
 */
#ifndef RNSC_PACKET_H
#define RNSC_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "ctx.h"
#include "identity.h"

/* Reticulum.py */
#define RNSC_MTU 500
#define RNSC_HEADER_MINSIZE 19 /* 2 + 1 + 16 */
#define RNSC_HEADER_MAXSIZE 35 /* 2 + 1 + 2 * 16 */
#define RNSC_IFAC_MIN_SIZE 1
#define RNSC_MDU (RNSC_MTU - RNSC_HEADER_MAXSIZE - RNSC_IFAC_MIN_SIZE) /* 464 */
/* Packet.py: largest plaintext of one encrypted packet to a SINGLE destination at MTU 500,
 * floor((MDU - 48 - 32) / 16) * 16 - 1. */
#define RNSC_ENCRYPTED_MDU 383
#define RNSC_PLAIN_MDU RNSC_MDU
/* Link.py: the link MDU at the base MTU (see rnsc_link_mdu()). */
#define RNSC_LINK_MDU 431
/* Transport.PATHFINDER_M: packets with this many hops or more are invalid. */
#define RNSC_PATHFINDER_M 128

#define RNSC_PACKET_IFAC_FLAG 0x80

enum rnsc_packet_type {
	RNSC_PKT_DATA = 0x00,
	RNSC_PKT_ANNOUNCE = 0x01,
	RNSC_PKT_LINKREQUEST = 0x02,
	RNSC_PKT_PROOF = 0x03,
};

enum rnsc_header_type {
	RNSC_HEADER_1 = 0x00,
	RNSC_HEADER_2 = 0x01,
};

/* Transport.py propagation types. */
enum rnsc_transport_type {
	RNSC_TRANSPORT_BROADCAST = 0x00,
	RNSC_TRANSPORT_TRANSPORT = 0x01,
	RNSC_TRANSPORT_RELAY = 0x02,  /* defined by the reference, not encodable */
	RNSC_TRANSPORT_TUNNEL = 0x03, /* defined by the reference, not encodable */
};

#define RNSC_FLAG_UNSET 0x00
#define RNSC_FLAG_SET 0x01

/* Every context value the reference defines (Packet.py). */
#define RNSC_PACKET_CONTEXTS(X)                                                                    \
	X(NONE, 0x00)                                                                              \
	X(RESOURCE, 0x01)                                                                          \
	X(RESOURCE_ADV, 0x02)                                                                      \
	X(RESOURCE_REQ, 0x03)                                                                      \
	X(RESOURCE_HMU, 0x04)                                                                      \
	X(RESOURCE_PRF, 0x05)                                                                      \
	X(RESOURCE_ICL, 0x06)                                                                      \
	X(RESOURCE_RCL, 0x07)                                                                      \
	X(CACHE_REQUEST, 0x08)                                                                     \
	X(REQUEST, 0x09)                                                                           \
	X(RESPONSE, 0x0A)                                                                          \
	X(PATH_RESPONSE, 0x0B)                                                                     \
	X(COMMAND, 0x0C)                                                                           \
	X(COMMAND_STATUS, 0x0D)                                                                    \
	X(CHANNEL, 0x0E)                                                                           \
	X(KEEPALIVE, 0xFA)                                                                         \
	X(LINKIDENTIFY, 0xFB)                                                                      \
	X(LINKCLOSE, 0xFC)                                                                         \
	X(LINKPROOF, 0xFD)                                                                         \
	X(LRRTT, 0xFE)                                                                             \
	X(LRPROOF, 0xFF)

enum rnsc_packet_context {
#define RNSC_X_CTX(name, value) RNSC_CTX_##name = (value),
	RNSC_PACKET_CONTEXTS(RNSC_X_CTX)
#undef RNSC_X_CTX
};

/* A packet's fields. As a pack input every field is read; as an unpack output, data borrows
 * the raw bytes passed to rnsc_packet_unpack() and transport_id is zero for HEADER_1. */
typedef struct rnsc_packet {
	uint8_t header_type;    /* enum rnsc_header_type */
	uint8_t context_flag;   /* RNSC_FLAG_SET / RNSC_FLAG_UNSET */
	uint8_t transport_type; /* BROADCAST or TRANSPORT */
	uint8_t dest_type;      /* enum rnsc_dest_type (destination.h) */
	uint8_t packet_type;    /* enum rnsc_packet_type */
	uint8_t hops;
	uint8_t context; /* enum rnsc_packet_context; other values are carried as they are */
	uint8_t transport_id[RNSC_TRUNCATED_HASHLEN];
	uint8_t dest_hash[RNSC_TRUNCATED_HASHLEN];
	const uint8_t *data;
	size_t data_len;
} rnsc_packet;

/* Name of a context ("LRPROOF"), NULL for a value the reference does not define. */
RNSC_API const char *rnsc_packet_context_name(int context);
/* Names of packet types, header types, destination types and propagation types as the
 * reference spells its constants ("LINKREQUEST", "HEADER_2", "GROUP", "TUNNEL"); NULL when
 * out of range. */
RNSC_API const char *rnsc_packet_type_name(int packet_type);
RNSC_API const char *rnsc_header_type_name(int header_type);
RNSC_API const char *rnsc_dest_type_name(int dest_type);
RNSC_API const char *rnsc_transport_type_name(int transport_type);

/* Header bytes before the data for a header type: 19 or 35 (0 for an unknown type). */
RNSC_API size_t rnsc_packet_header_len(int header_type);

/* The flags byte exactly as the reference packs it. As in the reference, a packet with
 * context LRPROOF is always flagged destination type LINK (it is addressed to a link id). */
RNSC_API uint8_t rnsc_packet_flags(const rnsc_packet *p);

/* Packs p into out. mtu is the limit for the whole packet: RNSC_MTU, or the link MTU for
 * packets on a link. Nothing is written unless the whole packet fits.
 * Returns the packet length, or
 *   RNSC_ERR_INVAL      NULL arguments, a field out of its bit range (header_type, transport_type,
 *                       context_flag > 1, dest_type or packet_type > 3),
 *   RNSC_ERR_HOPS       hops >= RNSC_PATHFINDER_M (the reference would refuse to send it),
 *   RNSC_ERR_TRUNCATED  empty data (no receiver would accept the packet),
 *   RNSC_ERR_TOOBIG     longer than mtu,
 *   RNSC_ERR_BUFSIZE    longer than cap. */
RNSC_API int rnsc_packet_pack(uint8_t *out, size_t cap, const rnsc_packet *p, size_t mtu);

/* Parses raw (a packet as on the wire after IFAC removal) into p; p->data points into raw.
 * Strict: returns 0 or
 *   RNSC_ERR_INVAL            NULL arguments,
 *   RNSC_ERR_IFAC_UNEXPECTED  the IFAC bit is set (the frame was not run through ifac.h),
 *   RNSC_ERR_HOPS             hops >= RNSC_PATHFINDER_M,
 *   RNSC_ERR_TRUNCATED        shorter than the header plus one data byte.
 * Unknown context values are accepted and carried (the reference does the same). */
RNSC_API int rnsc_packet_unpack(rnsc_packet *p, const uint8_t *raw, size_t len) RNSC_MUST_CHECK;

/* The packet hash / truncated hash of a raw packet (the header type comes from its flags).
 * RNSC_ERR_TRUNCATED when raw is shorter than its header's fixed part (2 bytes for
 * HEADER_1, 18 for HEADER_2), crypto errors otherwise. */
RNSC_API int rnsc_packet_hash(rnsc_ctx *ctx, uint8_t out[RNSC_HASHLEN], const uint8_t *raw,
			      size_t len);
RNSC_API int rnsc_packet_truncated_hash(rnsc_ctx *ctx, uint8_t out[RNSC_TRUNCATED_HASHLEN],
					const uint8_t *raw, size_t len);

/* 1 when the reference encrypts the data of a HEADER_1 packet of this shape with its
 * destination's method (Identity, GROUP key or link token; PLAIN "encryption" is the
 * identity), 0 when the data goes out as given: announces, link requests, resource proofs,
 * proofs to links, RESOURCE, KEEPALIVE and CACHE_REQUEST contexts, and LRPROOF. */
RNSC_API int rnsc_packet_encrypts(int packet_type, int context, int dest_type);

/* Link MDU for a link MTU (Link.update_mdu): floor((mtu - 1 - 19 - 48) / 16) * 16 - 1;
 * 0 when mtu is too small to carry any data. */
RNSC_API size_t rnsc_link_mdu(size_t mtu);

/* The hardware MTU tier the reference picks for an interface with AUTOCONFIGURE_MTU at a given
 * bitrate in bits per second (Interface.optimise_mtu): 1024 from 62.5 kbps up to 524288 at
 * 1 Gbps and above; 0 below 62.5 kbps (no hardware MTU: the base MTU applies). */
RNSC_API size_t rnsc_hw_mtu_for_bitrate(uint64_t bitrate);

#endif
