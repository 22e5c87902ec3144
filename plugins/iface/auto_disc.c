/* SPDX-License-Identifier: MIT */
/* AutoInterface's pure discovery helpers; see auto_disc.h. */
#include "auto_disc.h"

#include <arpa/inet.h>
#include <openssl/sha.h>
#include <string.h>

void auto_group_address(const uint8_t *group, size_t glen, char type, char scope,
			struct in6_addr *out)
{
	uint8_t h[32];
	SHA256(group, glen, h);
	memset(out, 0, sizeof(*out));
	out->s6_addr[0] = 0xff;
	out->s6_addr[1] = (uint8_t)(((type == '0' ? 0 : 1) << 4) |
				    (scope >= 'a' ? scope - 'a' + 10 : scope - '0'));
	/* bytes 2..3 stay zero: the reference writes a literal "0" there */
	memcpy(out->s6_addr + 4, h + 2, 12);
}

int auto_token(const uint8_t *group, size_t glen, const char *addr, uint8_t out[AUTO_TOKEN_LEN])
{
	size_t alen = strlen(addr);
	uint8_t buf[512 + INET6_ADDRSTRLEN];
	if (glen > 512 || alen >= INET6_ADDRSTRLEN)
		return -1;
	memcpy(buf, group, glen);
	memcpy(buf + glen, addr, alen);
	SHA256(buf, glen + alen, out);
	return 0;
}

int auto_disc_check(const uint8_t *group, size_t glen, const struct in6_addr *src,
		    const uint8_t *pkt, size_t len, char *addr_out)
{
	uint8_t want[AUTO_TOKEN_LEN];
	if (!inet_ntop(AF_INET6, src, addr_out, INET6_ADDRSTRLEN))
		return 0;
	if (len < AUTO_TOKEN_LEN || auto_token(group, glen, addr_out, want) != 0)
		return 0;
	return memcmp(pkt, want, AUTO_TOKEN_LEN) == 0;
}

int auto_mif_dup(auto_mif *m, const uint8_t *frame, size_t len, uint64_t now_ns)
{
	uint8_t h[32];
	SHA256(frame, len, h);
	for (unsigned k = 0; k < m->count; k++)
		if (memcmp(m->hash[k], h, 32) == 0 && now_ns < m->t[k] + AUTO_MIF_TTL_NS)
			return 1;
	memcpy(m->hash[m->head], h, 32);
	m->t[m->head] = now_ns;
	m->head = (m->head + 1) % AUTO_MIF_LEN;
	if (m->count < AUTO_MIF_LEN)
		m->count++;
	return 0;
}
