/* SPDX-License-Identifier: MIT */
/*
 * What the TCP-based interface plugins (tcp, backbone and the stream engine under tls
 * and websocket) share about their sockets: the reference's MTU tiers for a bitrate and
 * the printable form of a peer or bound address. Header only, so each plugin compiles
 * its own copy (plugins never link librnsc).
 */
#ifndef RNSC_IFACE_NET_H
#define RNSC_IFACE_NET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Interface.optimise_mtu's tiers (rns 1.5.4). 0 stands for the reference's None. */
static inline size_t rnsc_iface_optimise_mtu(uint64_t bitrate)
{
	static const struct {
		uint64_t rate;
		size_t mtu;
	} tiers[] = {{1000000000u, 524288}, {750000000u, 262144}, {400000000u, 131072},
		     {200000000u, 65536},   {100000000u, 32768},  {10000000u, 16384},
		     {5000000u, 8192},      {2000000u, 4096},     {1000000u, 2048},
		     {62500u, 1024}};
	for (size_t k = 0; k < sizeof(tiers) / sizeof(tiers[0]); k++)
		if (bitrate >= tiers[k].rate)
			return tiers[k].mtu;
	return 0;
}

/* The address of sa as text in ip (cap bytes) and its port; "" and 0 for a family other
 * than IPv4 or IPv6. */
static inline void rnsc_iface_sockaddr_str(const struct sockaddr *sa, char *ip, size_t cap,
					   uint16_t *port)
{
	ip[0] = 0;
	*port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)sa;
		inet_ntop(AF_INET, &a->sin_addr, ip, (socklen_t)cap);
		*port = ntohs(a->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa;
		inet_ntop(AF_INET6, &a->sin6_addr, ip, (socklen_t)cap);
		*port = ntohs(a->sin6_port);
	}
}

#endif /* RNSC_IFACE_NET_H */
