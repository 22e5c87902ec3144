/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for AutoInterface's discovery-packet check and duplicate filter
 * (plugins/iface/auto_disc.c).
 *
 * Input: byte 0 = group id length g (mod 64), then g bytes of group id, 16 bytes of
 * source address, then the datagram. Checked beyond "no crash, no UB":
 *   - the datagram authenticates only if its first 32 bytes are the source's token;
 *   - the true token (with any tail) always authenticates, one flipped bit never does;
 *   - the derived group address is a multicast address of the requested type/scope;
 *   - the duplicate filter reports a frame seen a moment ago, and not after the TTL.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auto_disc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t g = data[0] % 64;
	if (size < 1 + g + 16)
		return 0;
	const uint8_t *group = data + 1;
	struct in6_addr src;
	memcpy(&src, data + 1 + g, 16);
	const uint8_t *pkt = data + 1 + g + 16;
	size_t len = size - 1 - g - 16;

	char text[INET6_ADDRSTRLEN];
	uint8_t tok[AUTO_TOKEN_LEN];
	int ok = auto_disc_check(group, g, &src, pkt, len, text);
	if (auto_token(group, g, text, tok) != 0)
		abort();
	int want = len >= AUTO_TOKEN_LEN && memcmp(pkt, tok, AUTO_TOKEN_LEN) == 0;
	if (ok != want)
		abort();

	uint8_t good[AUTO_TOKEN_LEN + 8];
	memcpy(good, tok, AUTO_TOKEN_LEN);
	memset(good + AUTO_TOKEN_LEN, 0xA5, 8);
	if (!auto_disc_check(group, g, &src, good, sizeof(good), text))
		abort();
	good[len % AUTO_TOKEN_LEN] ^= 0x01;
	if (auto_disc_check(group, g, &src, good, sizeof(good), text))
		abort();
	if (auto_disc_check(group, g, &src, tok, AUTO_TOKEN_LEN - 1, text))
		abort();

	static const char scopes[] = {'2', '4', '5', '8', 'e'};
	char scope = scopes[len % 5], type = (len & 8) ? '0' : '1';
	struct in6_addr m;
	auto_group_address(group, g, type, scope, &m);
	if (m.s6_addr[0] != 0xff || (m.s6_addr[1] >> 4) != (type == '0' ? 0 : 1) || m.s6_addr[2] ||
	    m.s6_addr[3])
		abort();

	auto_mif mif;
	memset(&mif, 0, sizeof(mif));
	uint64_t t = (uint64_t)len * 1000000000ull;
	(void)auto_mif_dup(&mif, pkt, len, t);
	if (!auto_mif_dup(&mif, pkt, len, t + 1))
		abort();
	if (auto_mif_dup(&mif, pkt, len, t + AUTO_MIF_TTL_NS + 1))
		abort();
	return 0;
}
