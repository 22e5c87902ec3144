/* SPDX-License-Identifier: MIT */
/*
 * AutoInterface's pure pieces (rns 1.5.4, RNS/Interfaces/AutoInterface.py), kept apart
 * from the sockets so the discovery-packet check can be fuzzed: the multicast group
 * derived from the group id, the discovery token, the check of an incoming discovery
 * datagram, and the short-lived duplicate filter (the reference's "mif deque") that
 * drops a frame arriving over several adapters at once.
 *
 * Threading: none of its own; an auto_mif belongs to the caller (one interface's loop).
 * SHA-256 comes from libcrypto (the plugin links it; it never links librnsc).
 */
#ifndef RNSC_IFACE_AUTO_DISC_H
#define RNSC_IFACE_AUTO_DISC_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define AUTO_TOKEN_LEN 32u           /* Identity.HASHLENGTH // 8: a full SHA-256 */
#define AUTO_MIF_LEN 48u             /* MULTI_IF_DEQUE_LEN */
#define AUTO_MIF_TTL_NS 750000000ull /* MULTI_IF_DEQUE_TTL, 0.75 s */

/* The group address "ff<type><scope>:0:g1:..:g6": groups 1..6 of the address are the
 * big-endian 16-bit words at bytes 2..13 of SHA-256(group_id); group 0 of the hash
 * (bytes 0..1) is replaced by 0 as the reference does. type is '0' (permanent) or '1'
 * (temporary); scope one of '2','4','5','8','e'. */
void auto_group_address(const uint8_t *group, size_t glen, char type, char scope,
			struct in6_addr *out);

/* SHA-256(group_id || address text). addr is the textual form the peer sees for us
 * (inet_ntop's, with no %scope). Returns 0, or -1 when the text is too long. */
int auto_token(const uint8_t *group, size_t glen, const char *addr, uint8_t out[AUTO_TOKEN_LEN]);

/* A discovery datagram from src authenticates when its first 32 bytes are src's
 * token; anything after them is ignored, a shorter one never matches (as the
 * reference's slice compare). Writes src's text to addr_out (INET6_ADDRSTRLEN).
 * Returns 1 (valid), 0 (wrong or short token). */
int auto_disc_check(const uint8_t *group, size_t glen, const struct in6_addr *src,
		    const uint8_t *pkt, size_t len, char *addr_out);

typedef struct auto_mif {
	uint8_t hash[AUTO_MIF_LEN][32];
	uint64_t t[AUTO_MIF_LEN];
	unsigned head, count;
} auto_mif;

/* True when hash(frame) was recorded less than the TTL ago; otherwise records it
 * (the oldest entry falls out of a full ring) and returns false. */
int auto_mif_dup(auto_mif *m, const uint8_t *frame, size_t len, uint64_t now_ns);

#endif
