/* SPDX-License-Identifier: MIT */
/*
 * The "udp" interface plugin: UDPInterface as the reference (rns 1.5.4,
 * RNS/Interfaces/UDPInterface.py plus the interface set-up in Reticulum.py) behaves on
 * the wire:
 *
 *  - One Reticulum packet per datagram, no framing at all.
 *  - Options: listen_ip/listen_port (receive), forward_ip/forward_port (send); "port"
 *    fills whichever of listen_port/forward_port is missing; "device" (a kernel
 *    interface name) fills a missing listen_ip and forward_ip with that interface's
 *    IPv4 broadcast address, computed from its first IPv4 address and netmask as the
 *    reference's netinfo does (so "lo" gives 127.255.255.255). IPv4 only, as the
 *    reference (its UDPServer is AF_INET).
 *  - The receive socket is bound without SO_REUSEADDR (socketserver's default), so a
 *    port in use is an error. Datagrams go out of one unbound socket with SO_BROADCAST
 *    (the reference opens a fresh one per packet; the source port is not part of the
 *    protocol).
 *  - HW_MTU 1064 and a 10 Mbit/s bitrate guess; "bitrate" (>= 5) replaces the guess but
 *    never the MTU (UDPInterface does not autoconfigure it).
 *  - Receive limits: the reference's Transport drops packets longer than
 *    HW_MTU + ifac_size and ones too short to parse; rnsc drops them here, counted as
 *    RNSC_IFACE_DROP_OVERSIZE (read with MSG_TRUNC, so the true size is known) and
 *    RNSC_IFACE_DROP_RUNT (0 .. HEADER_MINSIZE bytes).
 *
 * Differences, on purpose: a section that configures neither a complete receive side
 * nor a complete send side, or half of one (listen_ip without a port, ...), fails to
 * open naming the missing option, where the reference builds an interface that
 * silently does nothing; "port" alone may leave one side unused. forward_ip is
 * resolved once at open. A forward-only interface is online here; the reference leaves
 * it offline, so its Transport broadcasts nothing there and only uses it along paths
 * already known through it.
 *
 * Threading and ownership: iface_abi.h. One udp_if per section; it owns both sockets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iface_abi.h"
#include "iface_plugin.h"

#define UDP_HW_MTU 1064u            /* UDPInterface.HW_MTU */
#define UDP_BITRATE_GUESS 10000000u /* UDPInterface.BITRATE_GUESS */
#define UDP_DEFAULT_IFAC_SIZE 16u   /* UDPInterface.DEFAULT_IFAC_SIZE */
#define RET_HEADER_MINSIZE 19u      /* Reticulum.HEADER_MINSIZE */
#define RET_MINIMUM_BITRATE 5       /* Reticulum.MINIMUM_BITRATE */
#define RX_BURST 64 /* datagrams per wake-up, so one sender cannot starve the loop */

typedef rnsc_iface_inst udp_inst;

typedef struct udp_if {
	udp_inst *inst;
	const rnsc_iface_host_api *host;
	char name[160];
	/* receive side */
	int receives;
	char bind_ip[64];
	uint16_t bind_port; /* the bound port (the kernel's pick for 0) */
	int rx_fd;
	rnsc_iface_watch *w;
	uint8_t *rxbuf;
	size_t max_frame;
	/* send side */
	int forwards;
	char fwd_ip[64];
	uint16_t fwd_port;
	struct sockaddr_in fwd;
	int tx_fd;
	/* stats */
	uint64_t rxb, txb, rxp, txp;
	uint64_t bitrate;
	size_t ifac_size;
} udp_if;

static void *xalloc(udp_inst *inst, size_t n)
{
	void *p = inst->api->alloc(inst->api->host_ctx, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static void xfree(udp_inst *inst, void *p)
{
	if (p)
		inst->api->free(inst->api->host_ctx, p);
}

__attribute__((format(printf, 3, 4))) static void ulog(udp_if *u, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	u->host->log(u->host->hctx, level, msg);
}

/* ---- receive --------------------------------------------------------------------------- */

static void rx_cb(void *ud, int fd, unsigned events)
{
	udp_if *u = ud;
	(void)events;
	for (int k = 0; k < RX_BURST && u->rx_fd >= 0; k++) {
		/* MSG_TRUNC: the return value is the datagram's real length even when it did
		 * not fit, so an oversized datagram is recognised rather than cut short. */
		ssize_t n = recv(fd, u->rxbuf, u->max_frame, MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ulog(u, RNSC_LOG_WARNING, "Receive error on %s: %s", u->name,
				     strerror(errno));
			return;
		}
		size_t len = (size_t)n;
		if (len <= RET_HEADER_MINSIZE) {
			u->host->drop(u->host->hctx, RNSC_IFACE_DROP_RUNT, 1);
			continue;
		}
		if (len > u->max_frame) {
			u->host->drop(u->host->hctx, RNSC_IFACE_DROP_OVERSIZE, 1);
			continue;
		}
		u->rxb += len;
		u->rxp++;
		u->host->deliver(u->host->hctx, u->rxbuf, len);
	}
}

/* ---- config ---------------------------------------------------------------------------- */

static int cfg_port(const rnsc_iface_config *cfg, const char *key, int64_t *v, int *set)
{
	int rc = cfg->get_int(cfg->cctx, key, v);
	if (rc == RNSC_ERR_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (*v < 0 || *v > 65535)
		return cfg->fail(cfg->cctx, key, RNSC_ERR_CONFIG_VALUE,
				 "a UDP port must be between 0 and 65535");
	*set = 1;
	return 0;
}

/* UDPInterface.get_broadcast_for_if: the broadcast address of the first IPv4 address of
 * the kernel interface, derived from address and netmask. */
static int device_broadcast(const char *dev, char *out, size_t cap, char *why, size_t whycap)
{
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) != 0) {
		snprintf(why, whycap, "cannot list kernel interfaces: %s", strerror(errno));
		return -1;
	}
	int found_dev = 0, rc = -1;
	for (struct ifaddrs *e = ifa; e; e = e->ifa_next) {
		if (strcmp(e->ifa_name, dev) != 0)
			continue;
		found_dev = 1;
		if (!e->ifa_addr || e->ifa_addr->sa_family != AF_INET || !e->ifa_netmask)
			continue;
		const struct sockaddr_in *a = (const void *)e->ifa_addr;
		const struct sockaddr_in *m = (const void *)e->ifa_netmask;
		struct in_addr b = {.s_addr = a->sin_addr.s_addr | ~m->sin_addr.s_addr};
		inet_ntop(AF_INET, &b, out, (socklen_t)cap);
		rc = 0;
		break;
	}
	freeifaddrs(ifa);
	if (rc != 0)
		snprintf(why, whycap,
			 found_dev ? "kernel interface \"%s\" has no IPv4 address"
				   : "no kernel interface named \"%s\"",
			 dev);
	return rc;
}

static int resolve4(const char *host, uint16_t port, struct sockaddr_in *out, char *why,
		    size_t whycap)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
	char portstr[8];
	snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
	int g = getaddrinfo(host, portstr, &hints, &ai);
	if (g != 0 || !ai) {
		snprintf(why, whycap, "cannot resolve \"%s\" to an IPv4 address: %s", host,
			 g ? gai_strerror(g) : "no address");
		if (ai)
			freeaddrinfo(ai);
		return -1;
	}
	memcpy(out, ai->ai_addr, sizeof(*out));
	freeaddrinfo(ai);
	return 0;
}

static int open_rx(udp_if *u, const rnsc_iface_config *cfg, const char *ip_key,
		   const char *port_key)
{
	char msg[384];
	struct sockaddr_in sa;
	if (resolve4(u->bind_ip, u->bind_port, &sa, msg, sizeof(msg)) != 0)
		return cfg->fail(cfg->cctx, ip_key, RNSC_ERR_CONFIG_VALUE, msg);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		snprintf(msg, sizeof(msg), "cannot listen on %s port %u: %s", u->bind_ip,
			 (unsigned)u->bind_port, strerror(e));
		return cfg->fail(cfg->cctx, e == EADDRINUSE ? port_key : ip_key,
				 e == EADDRNOTAVAIL || e == EADDRINUSE ? RNSC_ERR_IO : RNSC_ERR_SYS,
				 msg);
	}
	struct sockaddr_in bound;
	socklen_t bl = sizeof(bound);
	if (getsockname(fd, (struct sockaddr *)&bound, &bl) == 0)
		u->bind_port = ntohs(bound.sin_port);
	u->rx_fd = fd;
	int rc = u->host->watch_add(u->host->hctx, fd, RNSC_IFACE_EV_READ, rx_cb, u, &u->w);
	if (rc)
		return cfg->fail(cfg->cctx, NULL, rc, "cannot watch the UDP socket");
	return 0;
}

static int open_tx(udp_if *u, const rnsc_iface_config *cfg, const char *ip_key)
{
	char msg[384];
	if (resolve4(u->fwd_ip, u->fwd_port, &u->fwd, msg, sizeof(msg)) != 0)
		return cfg->fail(cfg->cctx, ip_key, RNSC_ERR_CONFIG_VALUE, msg);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "socket() failed: %s", strerror(errno));
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	int one = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) != 0) {
		snprintf(msg, sizeof(msg), "cannot enable SO_BROADCAST: %s", strerror(errno));
		close(fd);
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_SYS, msg);
	}
	u->tx_fd = fd;
	return 0;
}

static void free_if(udp_if *u)
{
	if (u->w)
		u->host->watch_remove(u->host->hctx, u->w);
	if (u->rx_fd >= 0)
		close(u->rx_fd);
	if (u->tx_fd >= 0)
		close(u->tx_fd);
	xfree(u->inst, u->rxbuf);
	xfree(u->inst, u);
}

static int get_opt_str(const rnsc_iface_config *cfg, const char *key, const char **out)
{
	int rc = cfg->get_str(cfg->cctx, key, out);
	if (rc == RNSC_ERR_NOTFOUND) {
		*out = NULL;
		return 0;
	}
	return rc;
}

static int udp_configure(udp_if *u, const rnsc_iface_config *cfg)
{
	const char *device, *lip, *fip;
	int64_t port = 0, lport = 0, fport = 0, v;
	int port_set = 0, lport_set = 0, fport_set = 0, rc;
	const char *lport_key = "listen_port", *fport_key = "forward_port";
	const char *lip_key = "listen_ip", *fip_key = "forward_ip";
	char bcast[64], msg[384];

	if ((rc = get_opt_str(cfg, "device", &device)) ||
	    (rc = get_opt_str(cfg, "listen_ip", &lip)) ||
	    (rc = get_opt_str(cfg, "forward_ip", &fip)))
		return rc;
	if ((rc = cfg_port(cfg, "port", &port, &port_set)) ||
	    (rc = cfg_port(cfg, "listen_port", &lport, &lport_set)) ||
	    (rc = cfg_port(cfg, "forward_port", &fport, &fport_set)))
		return rc;
	if (port_set && !lport_set) {
		lport = port;
		lport_set = 1;
		lport_key = "port";
	}
	if (port_set && !fport_set) {
		fport = port;
		fport_set = 1;
		fport_key = "port";
	}
	if (device && (!lip || !fip)) {
		if (device_broadcast(device, bcast, sizeof(bcast), msg, sizeof(msg)) != 0)
			return cfg->fail(cfg->cctx, "device", RNSC_ERR_NOENT,
					 msg); /* absent, not misconfigured */
		if (!lip) {
			lip = bcast;
			lip_key = "device";
		}
		if (!fip) {
			fip = bcast;
			fip_key = "device";
		}
	}
	if (!lip && !lport_set && !fip && !fport_set)
		return cfg->fail(cfg->cctx, "port", RNSC_ERR_CONFIG_VALUE,
				 "no UDP port configured (set port, or listen_ip/listen_port "
				 "and forward_ip/forward_port)");
	/* Half a direction is a mistake the reference would silently accept. A port that
	 * came from "port" alone may stay unused, as one side may be all that is wanted. */
	if (lip && !lport_set)
		return cfg->fail(cfg->cctx, "listen_port", RNSC_ERR_CONFIG_VALUE,
				 "a listen address is set but no listen_port (or port)");
	if (lport_set && !lip && strcmp(lport_key, "port") != 0)
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE,
				 "a listen port is set but no listen_ip (or device)");
	if (fip && !fport_set)
		return cfg->fail(cfg->cctx, "forward_port", RNSC_ERR_CONFIG_VALUE,
				 "a forward address is set but no forward_port (or port)");
	if (fport_set && !fip && strcmp(fport_key, "port") != 0)
		return cfg->fail(cfg->cctx, "forward_ip", RNSC_ERR_CONFIG_VALUE,
				 "a forward port is set but no forward_ip (or device)");
	if (!lip && !fip)
		return cfg->fail(cfg->cctx, "listen_ip", RNSC_ERR_CONFIG_VALUE,
				 "no address configured (set listen_ip, forward_ip or device)");
	if (!fip)
		fport_set = 0;
	if (fport_set && fport == 0)
		return cfg->fail(cfg->cctx, fport_key, RNSC_ERR_CONFIG_VALUE,
				 "datagrams cannot be sent to port 0");
	if ((lip && strlen(lip) >= sizeof(u->bind_ip)) || (fip && strlen(fip) >= sizeof(u->fwd_ip)))
		return cfg->fail(cfg->cctx,
				 lip && strlen(lip) >= sizeof(u->bind_ip) ? lip_key : fip_key,
				 RNSC_ERR_CONFIG_VALUE, "address too long");

	/* Reticulum.py: bitrate counts when >= MINIMUM_BITRATE; ifac_size is in bits. */
	u->bitrate = UDP_BITRATE_GUESS;
	if ((rc = cfg->get_int(cfg->cctx, "bitrate", &v)) == 0) {
		if (v >= RET_MINIMUM_BITRATE)
			u->bitrate = (uint64_t)v;
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}
	u->ifac_size = UDP_DEFAULT_IFAC_SIZE;
	if ((rc = cfg->get_int(cfg->cctx, "ifac_size", &v)) == 0) {
		if (v > 8 * 512)
			return cfg->fail(cfg->cctx, "ifac_size", RNSC_ERR_CONFIG_VALUE,
					 "IFAC size beyond 4096 bits");
		if (v >= 8)
			u->ifac_size = (size_t)(v / 8);
	} else if (rc != RNSC_ERR_NOTFOUND) {
		return rc;
	}

	if (lip) {
		u->receives = 1;
		snprintf(u->bind_ip, sizeof(u->bind_ip), "%s", lip);
		u->bind_port = (uint16_t)lport;
		u->max_frame = UDP_HW_MTU + u->ifac_size;
		u->rxbuf = xalloc(u->inst, u->max_frame);
		if (!u->rxbuf)
			return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
		if ((rc = open_rx(u, cfg, lip_key, lport_key)))
			return rc;
	}
	if (fip) {
		u->forwards = 1;
		snprintf(u->fwd_ip, sizeof(u->fwd_ip), "%s", fip);
		u->fwd_port = (uint16_t)fport;
		if ((rc = open_tx(u, cfg, fip_key)))
			return rc;
	}
	return 0;
}

/* ---- ops ------------------------------------------------------------------------------- */

static const char *const udp_types[] = {"UDPInterface", NULL};

static int udp_open(void *instp, const rnsc_iface_config *cfg, const rnsc_iface_host_api *host,
		    void **handle)
{
	udp_inst *inst = instp;
	if (strcmp(cfg->type, "UDPInterface") != 0)
		return cfg->fail(cfg->cctx, "type", RNSC_ERR_NOTFOUND, "not a UDP interface type");
	udp_if *u = xalloc(inst, sizeof(*u));
	if (!u)
		return cfg->fail(cfg->cctx, NULL, RNSC_ERR_NOMEM, "out of memory");
	u->inst = inst;
	u->host = host;
	u->rx_fd = u->tx_fd = -1;
	snprintf(u->name, sizeof(u->name), "%s", cfg->name);
	int rc = udp_configure(u, cfg);
	if (rc) {
		free_if(u);
		return rc;
	}
	host->set_online(host->hctx, 1);
	*handle = u;
	return 0;
}

static int udp_send(void *handle, const uint8_t *frame, size_t len)
{
	udp_if *u = handle;
	if (!u->forwards) {
		u->host->drop(u->host->hctx, RNSC_IFACE_DROP_OFFLINE, 1);
		return RNSC_ERR_STATE;
	}
	for (;;) {
		ssize_t n = sendto(u->tx_fd, frame, len, MSG_NOSIGNAL, (struct sockaddr *)&u->fwd,
				   sizeof(u->fwd));
		if (n >= 0) {
			u->txb += (uint64_t)n;
			u->txp++;
			return 0;
		}
		if (errno == EINTR)
			continue;
		break;
	}
	/* No queue on a datagram interface: whatever the kernel refuses (a full socket
	 * buffer, a datagram beyond 64 KiB, no route) is lost, logged as the reference does. */
	int e = errno;
	u->host->drop(u->host->hctx, RNSC_IFACE_DROP_TXQUEUE, 1);
	if (e != EAGAIN && e != EWOULDBLOCK && e != ENOBUFS)
		ulog(u, RNSC_LOG_ERROR, "Could not transmit on UDPInterface[%s]: %s", u->name,
		     strerror(e));
	return e == EMSGSIZE ? RNSC_ERR_TOOBIG : RNSC_ERR_IO;
}

static int udp_stats(void *handle, rnsc_iface_stats *out)
{
	udp_if *u = handle;
	out->rx_bytes = u->rxb;
	out->tx_bytes = u->txb;
	out->rx_packets = u->rxp;
	out->tx_packets = u->txp;
	out->online = 1;
	out->bitrate = u->bitrate;
	out->hw_mtu = UDP_HW_MTU;
	out->children = 0;
	out->local_port = u->receives ? u->bind_port : 0;
	out->remote_port = u->forwards ? u->fwd_port : 0;
	out->reconnects = 0;
	return 0;
}

static void udp_close(void *handle)
{
	udp_if *u = handle;
	free_if(u);
}

static int udp_describe(void *handle, char *buf, size_t cap)
{
	udp_if *u = handle;
	/* The reference prints the bind address; a forward-only interface has none. */
	return snprintf(buf, cap, "UDPInterface[%s/%s:%u]", u->name,
			u->receives ? u->bind_ip : u->fwd_ip,
			(unsigned)(u->receives ? u->bind_port : u->fwd_port));
}

RNSC_IFACE_PLUGIN("udp", "UDPInterface (one packet per datagram, unicast or broadcast)", udp_types,
		  udp_open, udp_send, udp_stats, udp_close, udp_describe)
